//===- QuantLinearDesc.h - Quantized linear mode rules ----------*- C++ -*-===//
//-*-===//
//
// What QuantLinearStep checks of a desc and its weights before building
// anything, and which modes are int8. Internal to the runtime.
//
//===----------------------------------------------------------------------===//

#ifndef LMOPT_LIB_RUNTIME_CPU_QUANTLINEARDESC_H
#define LMOPT_LIB_RUNTIME_CPU_QUANTLINEARDESC_H

#include "lmopt/Runtime/CPU/QuantLinearStep.h"

#include <cstdint>
#include <string>

namespace lmopt::runtime {

/// True for the int8 modes (dynamic per token, dynamic per tensor, static).
bool isInt8(QuantLinearMode mode);

/// An InvalidArgument status, its message after `prefix`, when `d` with
/// `rows` rows and weights `w` is not a step QuantLinearStep can build
/// (unknown mode or activation, sizes, missing pointers, options the mode
/// does not take).
Status validateQuantLinearDesc(const QuantLinearStepDesc &d, int64_t rows,
                               const QuantLinearWeights &w,
                               const std::string &prefix);

} // namespace lmopt::runtime

#endif // LMOPT_LIB_RUNTIME_CPU_QUANTLINEARDESC_H

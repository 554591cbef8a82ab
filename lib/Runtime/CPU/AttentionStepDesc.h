//===- AttentionStepDesc.h - Checking an attention step's desc --*- C++ -*-===//
//
// What AttentionStep::create checks of an AttentionStepDesc before it
// prepares anything (sizes, views, scale, mask and score bias), and the
// view arithmetic the step shares with those checks. Private to the CPU
// runtime.
//
//===----------------------------------------------------------------------===//

#ifndef LMOPT_RUNTIME_CPU_ATTENTIONSTEPDESC_H
#define LMOPT_RUNTIME_CPU_ATTENTIONSTEPDESC_H

#include "lmopt/Runtime/CPU/AttentionStep.h"

#include <cstdint>
#include <string>

namespace lmopt::runtime {

/// "none", "additive" or "bool".
const char *attentionMaskName(AttentionMask mask);

/// Elements between a view's row r and row r + 1.
inline int64_t rowStride(const AttentionOperandView &view, int64_t width) {
  return view.rowStride ? view.rowStride : width;
}

/// Elements from the start of a view's buffer to the end of its last row.
inline int64_t viewSpan(const AttentionOperandView &view, int64_t rows,
                        int64_t width) {
  return view.offset + (rows - 1) * rowStride(view, width) + width;
}

/// Checks sizes, views, the scale and the mask; fills the mask's element
/// strides over [B, H, Sq, Sk] (0 where it broadcasts).
Status validateAttentionDesc(const AttentionStepDesc &desc,
                             const std::string &prefix, int64_t maskStrides[4]);

/// Checks the score bias dims ([1|B, 1|H, 1|Sq, Sk], or none without a
/// bias); fills its element strides over [B, H, Sq] (0 where it
/// broadcasts; keys are dense) and its element count.
Status validateAttentionBias(const AttentionStepDesc &desc,
                             const std::string &prefix, int64_t biasStrides[3],
                             size_t &biasElements);

} // namespace lmopt::runtime

#endif // LMOPT_RUNTIME_CPU_ATTENTIONSTEPDESC_H

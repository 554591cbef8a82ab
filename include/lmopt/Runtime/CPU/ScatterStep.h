//===- ScatterStep.h - ONNX ScatterND with checked indices ------*- C++ -*-===//
//
// `lmopt.scatter_nd` at run time: the output is the data with slices of the
// updates written over it (or combined with it: sum, product, maximum,
// minimum) at index tuples that may come from user input. Every dim and
// every index is checked before the first byte is written, so a bad index
// fails the step naming the tuple's position and value, never writing
// outside the output.
//
//===----------------------------------------------------------------------===//

#ifndef LMOPT_RUNTIME_CPU_SCATTERSTEP_H
#define LMOPT_RUNTIME_CPU_SCATTERSTEP_H

#include "lmopt/Format/Npy.h"
#include "lmopt/Format/Status.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace lmopt::runtime {

/// How an update combines with the element it lands on (the values of the
/// plan's `reduction` attribute).
enum class ScatterReduction : int64_t {
  None = 0,
  Add = 1,
  Mul = 2,
  Max = 3,
  Min = 4
};

struct ScatterNDStepDesc {
  std::string name;
  /// Data and output dims; the output is data with updates scattered in.
  std::vector<int64_t> dataDims;
  /// Any dtype without a reduction (bytes are copied); f32, f64, i32 or i64
  /// with one.
  DType dtype = DType::F32;
  /// `[..., k]`: index tuples of length k into data's leading k dims.
  std::vector<int64_t> indicesDims;
  /// Indices are int64 (else int32); negative ones count from the end.
  bool indices64 = true;
  /// indices.dims[:-1] + data.dims[k:].
  std::vector<int64_t> updatesDims;
  ScatterReduction reduction = ScatterReduction::None;
};

class ScatterNDStep {
public:
  /// Refuses a reduction over a dtype it has no arithmetic for.
  static Status create(const ScatterNDStepDesc &desc,
                       std::unique_ptr<ScatterNDStep> &out);

  /// Checks the dims and every index, then writes data into output (unless
  /// they are the same buffer) and the updates over it, tuple by tuple in
  /// row-major order (a later duplicate overwrites an earlier one without a
  /// reduction).
  Status run(const void *data, const void *indices, const void *updates,
             void *output) const;

  const ScatterNDStepDesc &desc() const { return desc_; }

private:
  ScatterNDStep() = default;
  ScatterNDStepDesc desc_;
};

} // namespace lmopt::runtime

#endif // LMOPT_RUNTIME_CPU_SCATTERSTEP_H

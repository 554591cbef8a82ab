//===- GatherStep.h - ONNX Gather with checked indices ----------*- C++ -*-===//
//
// `lmopt.gather` at run time (embedding lookups, selecting a token): indices
// come from user input, so every index is checked against the gathered axis
// before any byte is read; an index out of range is an error naming the step,
// the position and the value, never a read outside the data. A row-quantized
// table (int8 rows with one f32 scale each, lmopt-quantize's
// quantize-embeddings) is dequantized as its rows are gathered.
// `lmopt.gather_elements` (ONNX GatherElements: RoBERTa's position-dependent
// token types) is checked the same way.
//
//===----------------------------------------------------------------------===//

#ifndef LMOPT_RUNTIME_CPU_GATHERSTEP_H
#define LMOPT_RUNTIME_CPU_GATHERSTEP_H

#include "lmopt/Format/Status.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace lmopt::runtime {

/// What both gathers read: the step's name, data and indices.
struct GatherOperands {
  std::string name;
  /// The data's dims and bytes per element (any dtype: bytes are copied).
  std::vector<int64_t> dataDims;
  int64_t elementSize = 4;
  /// In [0, rank(data)).
  int64_t axis = 0;
  std::vector<int64_t> indicesDims;
  /// Indices are int64 (else int32). Negative indices count from the end,
  /// as in ONNX.
  bool indices64 = true;
};

struct GatherStepDesc : GatherOperands {
  /// A row-quantized table (docs/bundle-format.md, "gather"): int8 data
  /// gathered along axis 0, each row dequantized to f32 with its scale
  /// (`q * scale[row]`); the scales are passed to run().
  bool rowScales = false;
  /// rowScales: use the AVX-512 loop when the CPU has it (tests turn it
  /// off to check the portable loop).
  bool allowAvx512 = true;
};

class GatherStep {
public:
  static Status create(const GatherStepDesc &desc,
                       std::unique_ptr<GatherStep> &out);

  /// output dims: data[:axis] + indices + data[axis+1:]. `scales` (f32,
  /// one per row of data) only with rowScales.
  Status run(const void *data, const void *indices, void *output,
             const float *scales = nullptr) const;

  const GatherStepDesc &desc() const { return desc_; }

private:
  GatherStep() = default;
  GatherStepDesc desc_;
};

/// ONNX GatherElements: output[i...] = data[i...] with coordinate `axis`
/// replaced by indices[i...]. Indices have data's rank and, off the axis,
/// dims no larger than data's (checked on each run, with the run's dims);
/// the output has the indices' dims.
using GatherElementsStepDesc = GatherOperands;

class GatherElementsStep {
public:
  static Status create(const GatherElementsStepDesc &desc,
                       std::unique_ptr<GatherElementsStep> &out);

  /// Checks the dims and every index before writing the output; an index
  /// outside [-size, size) of data's axis fails the run, naming the step,
  /// the index's position and its value.
  Status run(const void *data, const void *indices, void *output) const;

  const GatherElementsStepDesc &desc() const { return desc_; }

private:
  GatherElementsStep() = default;
  GatherElementsStepDesc desc_;
};

} // namespace lmopt::runtime

#endif // LMOPT_RUNTIME_CPU_GATHERSTEP_H

//===- PruneScores.h - How lmopt-prune ranks units --------------*- C++ -*-===//
//
// The importance of FFN neurons and attention heads by each criterion
// (docs/compression.md, "Importance"): `magnitude` from the weights alone,
// `wanda` and `activation` from the calibration statistics on the linears
// (PruneImportance.h); and the encoder layers that lmopt-prune drops and
// lmopt-expose-intermediates reads. Private to the Transforms library.
//
//===----------------------------------------------------------------------===//

#ifndef LMOPT_LIB_DIALECT_LMOPT_TRANSFORMS_PRUNESCORES_H
#define LMOPT_LIB_DIALECT_LMOPT_TRANSFORMS_PRUNESCORES_H

#include "LinearWeights.h"
#include "lmopt/Dialect/Lmopt/IR/LmoptOps.h"

#include "llvm/ADT/SmallVector.h"

#include <optional>
#include <string>
#include <vector>

namespace mlir::lmopt::prune {

using Matrix = WeightMatrix;

/// A post-norm encoder layer: `output` is what it makes of `input`.
struct EncoderLayer {
  Value input, output;
};

/// The post-norm encoder layer around `attention` (attention on
/// projections of `x`, an output linear added to `x` by a skip_layer_norm,
/// a two-linear FFN added to that by a second one), or why not.
FailureOr<EncoderLayer> matchEncoderLayer(AttentionOp attention,
                                          std::string &why);

enum class Criterion { Magnitude, Wanda, Activation, Gradient };

/// The criterion named `name`, or nothing.
std::optional<Criterion> parseCriterion(llvm::StringRef name);

/// The FFN's `width` neuron scores: `up` (weight `w1`) makes them, `down`
/// (weight `w2`) reads them. Fails after an error on a linear that lacks
/// the statistics the criterion reads.
FailureOr<SmallVector<double>> scoreNeurons(Criterion criterion, LinearOp up,
                                            LinearOp down, const Matrix &w1,
                                            const Matrix &w2, int64_t width);

/// The attention's `numHeads` head scores: `qkv` (weight `wqkv`, three
/// parts of `hidden` columns) feeds it, `out` (weight `wo`) reads it.
FailureOr<SmallVector<double>>
scoreHeads(Criterion criterion, LinearOp qkv, LinearOp out, const Matrix &wqkv,
           const Matrix &wo, int64_t numHeads, int64_t hidden);

} // namespace mlir::lmopt::prune

#endif // LMOPT_LIB_DIALECT_LMOPT_TRANSFORMS_PRUNESCORES_H

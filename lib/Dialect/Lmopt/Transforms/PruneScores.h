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
#include "lmopt/Support/FusionReport.h"

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

/// The statistic `key` of `linear`'s input (PruneImportance.h), `size`
/// entries, or an error naming the linear and what measures it.
FailureOr<ArrayRef<float>> readInputStats(LinearOp linear, StringRef key,
                                          int64_t size, Criterion criterion);

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

/// The fusion report kind of `sparsity=N:M`.
inline constexpr llvm::StringLiteral kSparseKind = "sparse_linears";

/// `text` as N:M into `n` and `m`, or why it is not a pattern the bundle
/// stores (0 < N < M, M 4, 8 or 16, N positions in a byte).
std::optional<std::string> parseSparsity(StringRef text, unsigned &n,
                                         unsigned &m);

/// Gives each of `linears` that has a constant f32 rank-2 weight read by
/// it alone, with whole groups of `m` input features, at most `n` nonzero
/// weights per group (the `n` most important by `criterion`, magnitude or
/// wanda), in the [N, K] layout when `transpose` (else in its own); the
/// others are near misses. The new constants carry kSparsityAttr, the old
/// ones go to `replaced`. Fails after an error for another criterion or
/// missing wanda statistics.
LogicalResult sparsifyLinears(ArrayRef<LinearOp> linears, unsigned n,
                              unsigned m, Criterion criterion, bool transpose,
                              FusionReport &report,
                              SmallVectorImpl<Operation *> &replaced);

} // namespace mlir::lmopt::prune

#endif // LMOPT_LIB_DIALECT_LMOPT_TRANSFORMS_PRUNESCORES_H

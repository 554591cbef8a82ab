//===- PruneImportance.h - Activation statistics for lmopt-prune -*- C++
//-*-===//
//
// The calibration statistics that lmopt-prune's `wanda`, `activation` and
// `gradient` criteria read (docs/compression.md, "Importance"). A calibration
// run (lmopt-compile --calibration) measures each linear's input over every
// token of every sample and attaches them to the linear as one dictionary
// attribute; lit tests write it by hand:
//
//   lmopt.linear ... {lmopt.activation_stats = {
//       l2 = array<f32: ...>,        // per input feature k: sqrt(sum_t x_tk^2)
//       abs_mean = array<f32: ...>,  // per input feature k: mean_t |x_tk|
//       head_l2_mean = array<f32: ...>,   // an attention's output only: per
//                                         // head h, mean_t ||x_t,h||_2
//       grad_feature = array<f32: ...>,   // per input feature k: sum over
//                                         // samples of |dL/dm_k|, m_k a
//                                         // mask (1) on feature k
//       grad_head = array<f32: ...>}}     // an attention's output only: per
//                                         // head h, sum over samples of
//                                         // |dL/dm_h|, m_h a mask on head h
//
// The `gradient` criterion's statistics (Michel et al.'s head importance,
// and the same for FFN neurons) come from a run of the model's backward
// pass on labelled calibration samples: dL/dm_k = sum_t x_tk dL/dx_tk.
//
// `layers=N` reads each encoder layer's block importance (ShortGPT's Block
// Influence), 1 - mean over calibration tokens of the cosine between the
// layer's input and output hidden states, from its attention:
//
//   lmopt.attention ... {lmopt.block_importance = 0.25 : f64}
//
//===----------------------------------------------------------------------===//

#ifndef LMOPT_DIALECT_LMOPT_TRANSFORMS_PRUNEIMPORTANCE_H
#define LMOPT_DIALECT_LMOPT_TRANSFORMS_PRUNEIMPORTANCE_H

#include "llvm/ADT/StringRef.h"

namespace mlir::lmopt {

inline constexpr llvm::StringLiteral kActivationStatsAttr =
    "lmopt.activation_stats";
inline constexpr llvm::StringLiteral kStatsL2 = "l2";
inline constexpr llvm::StringLiteral kStatsAbsMean = "abs_mean";
inline constexpr llvm::StringLiteral kStatsHeadL2Mean = "head_l2_mean";
inline constexpr llvm::StringLiteral kStatsGradFeature = "grad_feature";
inline constexpr llvm::StringLiteral kStatsGradHead = "grad_head";
inline constexpr llvm::StringLiteral kBlockImportanceAttr =
    "lmopt.block_importance";
/// On a weight constant `sparsity=N:M` made ("2:4"): a training step keeps
/// its zeros (TrainingEntries.h).
inline constexpr llvm::StringLiteral kSparsityAttr = "lmopt.sparsity";

} // namespace mlir::lmopt

#endif // LMOPT_DIALECT_LMOPT_TRANSFORMS_PRUNEIMPORTANCE_H

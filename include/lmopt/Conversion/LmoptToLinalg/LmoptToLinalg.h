//===- LmoptToLinalg.h - lmopt to linalg patterns ---------------*- C++ -*-===//

#ifndef LMOPT_CONVERSION_LMOPTTOLINALG_LMOPTTOLINALG_H
#define LMOPT_CONVERSION_LMOPTTOLINALG_LMOPTTOLINALG_H

namespace mlir {
class RewritePatternSet;
} // namespace mlir

namespace mlir::lmopt {

/// Unary elementwise ops, cast, gelu, broadcasting binary ops and where, each
/// to one `linalg.generic`.
void populateLmoptElementwiseToLinalgPatterns(RewritePatternSet &patterns);

/// Reductions, softmax/log_softmax and the normalizations (layer, skip layer
/// and RMS norm) to `linalg.generic` reductions and elementwise generics.
void populateLmoptReductionToLinalgPatterns(RewritePatternSet &patterns);

/// Split, slice, concat, transpose, expand, reshape/squeeze/unsqueeze,
/// identity and constant to tensor views, `tensor.insert_slice`,
/// `linalg.transpose`, broadcasting generics and `arith.constant`.
void populateLmoptDataMovementToLinalgPatterns(RewritePatternSet &patterns);

/// Mod (numpy broadcasting), range, cumsum and gather_elements, each to one
/// `linalg.generic`.
void populateLmoptIndexingToLinalgPatterns(RewritePatternSet &patterns);

/// All of the above.
void populateLmoptToLinalgPatterns(RewritePatternSet &patterns);

} // namespace mlir::lmopt

#endif // LMOPT_CONVERSION_LMOPTTOLINALG_LMOPTTOLINALG_H

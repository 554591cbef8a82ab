//===- LmoptToLinalg.h - lmopt to linalg patterns ---------------*- C++ -*-===//

#ifndef LMOPT_CONVERSION_LMOPTTOLINALG_LMOPTTOLINALG_H
#define LMOPT_CONVERSION_LMOPTTOLINALG_LMOPTTOLINALG_H

namespace mlir {
class Operation;
class RewritePatternSet;
class Type;
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

/// Dequantize and quantize (per tensor, per axis, block-wise),
/// dynamic_quantize_linear, matmul_integer (i32 accumulation) and casts from
/// unsigned integers, on the signless storage integers.
void populateLmoptQuantizationToLinalgPatterns(RewritePatternSet &patterns);

/// The signless integer a quantized type is stored in (widths up to 8 in a
/// byte) or an unsigned/signed integer's bits; other types unchanged.
Type getStorageElementType(Type type);

/// Cancels `unrealized_conversion_cast` pairs storage -> quantized/unsigned
/// -> storage under `root` and erases casts left unused.
void foldStorageCasts(Operation *root);

/// All of the above.
void populateLmoptToLinalgPatterns(RewritePatternSet &patterns);

} // namespace mlir::lmopt

#endif // LMOPT_CONVERSION_LMOPTTOLINALG_LMOPTTOLINALG_H

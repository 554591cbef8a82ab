//===- MatMulCheck.h - Checking linear and matmul steps ---------*- C++ -*-===//
//
// What every device checks of a linear step (act(input x W + bias) +
// residual) and a matmul step (numpy.matmul), and numpy.matmul's dims and
// batch offsets, which the CPU's MatMulStep and the GPU's cuBLASLt batches
// both follow. A device adds the dtypes it runs (a DTypeRule) and words the
// dims' failures its own way.
//
//===----------------------------------------------------------------------===//

#ifndef LMOPT_RUNTIME_MATMULCHECK_H
#define LMOPT_RUNTIME_MATMULCHECK_H

#include "lmopt/Runtime/StepCheck.h"

#include <cstdint>
#include <vector>

namespace lmopt::runtime {

/// A linear step's attributes and sizes.
struct LinearShape {
  bool transpose = false, hasBias = false, hasResidual = false;
  /// The input is a stored [K, M], read transposed.
  bool transposeInput = false;
  /// 0 none, 1 relu, 2 gelu, 3 gelu_tanh (LinearActivation).
  int64_t activation = 0;
  /// Input features, output features, and the input's leading dims'
  /// product.
  int64_t k = 0, n = 0, rows = 0;
  /// The bias and residual operands' numbers, or -1.
  int64_t bias = -1, residual = -1;
  /// The output's dtype (with the bias's and residual's): the input's, or
  /// f32 for f16/bf16 inputs (a product accumulated and written in f32).
  DType outputDType = DType::F32;
};
/// Attributes, counts, dtypes (the input's by `inputDType`, the weight the
/// input's, the output, bias and residual the input's or, for an f16/bf16
/// input, f32) and dims of a linear step.
Status checkLinearStep(const StepCheck &c, DTypeRule inputDType,
                       LinearShape &out);

/// Attributes, counts and dtypes (lhs by `lhsDType`, rhs and output the
/// lhs's) of a matmul step; its dims are inferMatMulDims'.
Status checkMatMulStep(const StepCheck &c, DTypeRule lhsDType);

/// numpy.matmul of [..., M, K] and [..., K, N], a rank-1 operand promoted
/// and its dim dropped from the result.
struct MatMulDims {
  int64_t m = 0, k = 0, n = 0;
  /// The rhs's K (equal to `k` once inferred).
  int64_t rhsK = 0;
  /// The operands' batch dims, and their broadcast.
  std::vector<int64_t> lhsBatch, rhsBatch, batch;
  std::vector<int64_t> outputDims;
};
enum class MatMulDimsError { None, KMismatch, BatchBroadcast };
/// Both operands have rank 1 or more. On KMismatch, `out` holds M, K, N
/// and the rhs's K.
MatMulDimsError inferMatMulDims(const std::vector<int64_t> &lhs,
                                const std::vector<int64_t> &rhs,
                                MatMulDims &out);
/// The product of the broadcast batch dims.
int64_t matmulBatchCount(const MatMulDims &dims);
/// Per batch, in the broadcast batch's row-major order, the element offsets
/// of its lhs and rhs matrices (0 along a broadcast dim).
void matmulBatchOffsets(const MatMulDims &dims, std::vector<int64_t> &lhs,
                        std::vector<int64_t> &rhs);

} // namespace lmopt::runtime

#endif // LMOPT_RUNTIME_MATMULCHECK_H

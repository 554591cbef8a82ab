//===- OpEvaluators.h - per-family op evaluators ----------------*- C++ -*-===//
//
// Each op family registers one evaluation function per op into the one
// TypeID-keyed table; helpers shared by the families live here.
//
//===----------------------------------------------------------------------===//

#ifndef LMOPT_LIB_REFERENCE_OPEVALUATORS_H
#define LMOPT_LIB_REFERENCE_OPEVALUATORS_H

#include "lmopt/Dialect/Lmopt/IR/LmoptDialect.h"
#include "lmopt/Reference/Tensor.h"

#include "mlir/IR/Operation.h"
#include "mlir/Support/TypeID.h"
#include "llvm/ADT/DenseMap.h"

#include <functional>

namespace mlir::lmopt::reference {

using EvalResult = FailureOr<SmallVector<Tensor>>;
using EvaluateFn = std::function<EvalResult(Operation *, ArrayRef<Tensor>)>;

/// The one table of evaluators, keyed by op TypeID.
class EvaluatorTable {
public:
  static const EvaluatorTable &get();
  const EvaluateFn *lookup(TypeID id) const;

  /// Registers `fn(OpTy, ArrayRef<Tensor>) -> EvalResult` for `OpTy`.
  template <typename OpTy, typename Fn> void add(Fn fn) {
    entries[TypeID::get<OpTy>()] = [fn](Operation *op,
                                        ArrayRef<Tensor> operands) {
      return fn(llvm::cast<OpTy>(op), operands);
    };
  }

private:
  EvaluatorTable();
  llvm::DenseMap<TypeID, EvaluateFn> entries;
};

// Family registrations; each file lists what it evaluates.
void registerElementwiseEvaluators(EvaluatorTable &table);
void registerShapeEvaluators(EvaluatorTable &table);
void registerIndexingEvaluators(EvaluatorTable &table);
void registerMatMulEvaluators(EvaluatorTable &table);
void registerNormalizationEvaluators(EvaluatorTable &table);
void registerAttentionEvaluators(EvaluatorTable &table);
void registerQuantizationEvaluators(EvaluatorTable &table);

/// One result.
inline EvalResult single(Tensor tensor) {
  SmallVector<Tensor> results;
  results.push_back(std::move(tensor));
  return results;
}

/// Element type of result `index` of `op`.
Type getResultElementType(Operation *op, unsigned index = 0);

/// Maps `axis` in [-rank, rank) to [0, rank), or reports it at `op`.
FailureOr<int64_t> normalizeAxis(Operation *op, int64_t axis, int64_t rank,
                                 StringRef what = "axis");

/// The values of an integer tensor (shape, indices, axes operands).
SmallVector<int64_t> getIntValues(const Tensor &tensor);

/// The most elements a value may have; shapes read from values (Expand,
/// ConstantOfShape, Range) are checked against it instead of allocating.
inline constexpr int64_t kMaxElements = int64_t(1) << 32;

/// Fails with a diagnostic at `op` when `shape` has more than kMaxElements
/// elements.
LogicalResult checkElementCount(Operation *op, ArrayRef<int64_t> shape);

/// Numpy broadcast of `lhs` and `rhs`, or a diagnostic at `op`.
FailureOr<SmallVector<int64_t>>
broadcastOrError(Operation *op, ArrayRef<int64_t> lhs, ArrayRef<int64_t> rhs);

/// `x` broadcast to `shape` as a tensor of that shape, or a diagnostic.
FailureOr<Tensor> broadcastTo(Operation *op, const Tensor &x,
                              ArrayRef<int64_t> shape, StringRef what);

/// Calls `fn(index)` for every multi-index of `shape` in row-major order.
template <typename Fn> void forEachIndex(ArrayRef<int64_t> shape, Fn fn) {
  int64_t count = getNumElements(shape);
  SmallVector<int64_t> index(shape.size(), 0);
  for (int64_t n = 0; n < count; ++n) {
    fn(ArrayRef<int64_t>(index));
    for (int64_t d = static_cast<int64_t>(shape.size()) - 1; d >= 0; --d) {
      if (++index[d] < shape[d])
        break;
      index[d] = 0;
    }
  }
}

/// Linear index of `index` under `strides`.
inline int64_t linearize(ArrayRef<int64_t> index, ArrayRef<int64_t> strides) {
  int64_t linear = 0;
  for (auto [i, stride] : llvm::zip(index, strides))
    linear += i * stride;
  return linear;
}

/// Numpy matmul (rank-1 promotion, batch broadcast) of float or integer
/// tensors, summed in double or int64, as a tensor of `resultType`.
FailureOr<Tensor> numpyMatMul(Operation *op, Tensor lhs, Tensor rhs,
                              Type resultType);

/// The epilogue activation of `lmopt.linear` (and `lmopt.gelu`) on one value.
double applyActivation(Activation activation, double x);

/// `input` (of a `quant` element type) dequantized to f32 with its type's
/// scales and zero points.
FailureOr<Tensor> dequantizeToF32(Operation *op, const Tensor &input);

/// The result of ONNX DynamicQuantizeLinear on a list of values.
struct DynamicQuantization {
  std::vector<int64_t> values;
  float scale = 0.0f;
  int64_t zeroPoint = 0;
};
DynamicQuantization dynamicQuantizeLinear(ArrayRef<double> values);

} // namespace mlir::lmopt::reference

#endif // LMOPT_LIB_REFERENCE_OPEVALUATORS_H

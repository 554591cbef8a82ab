//===- MatMulCheck.cpp - Checking linear and matmul steps -----------------===//

#include "lmopt/Runtime/MatMulCheck.h"

#include <algorithm>
#include <cassert>

using namespace lmopt::runtime;

Status lmopt::runtime::checkLinearStep(const StepCheck &c, DTypeRule inputDType,
                                       LinearShape &out) {
  if (Status st = c.expectAttrs(
          {"transpose_weight", "activation", "has_bias", "has_residual",
           "transpose_input"});
      !st)
    return st;
  if (Status st = c.getFlags({{"transpose_weight", &out.transpose},
                              {"transpose_input", &out.transposeInput},
                              {"has_bias", &out.hasBias},
                              {"has_residual", &out.hasResidual}});
      !st)
    return st;
  if (Status st = c.step.getInt("activation", 0, out.activation); !st)
    return c.withSource(st);
  if (out.activation < 0 || out.activation > 3)
    return c.error("attribute 'activation' is " +
                   std::to_string(out.activation) +
                   "; expected 0 (none), 1 (relu), 2 (gelu) or 3 (gelu_tanh)");
  std::string roles = std::string("input, weight") +
                      (out.hasBias ? ", bias" : "") +
                      (out.hasResidual ? ", residual" : "");
  if (Status st = c.expectCounts(2 + out.hasBias + out.hasResidual, roles, 1);
      !st)
    return st;

  const PlanTensor &input = c.operand(0), &weight = c.operand(1);
  const PlanTensor &output = c.result(0);
  const DType dtype = input.dtype;
  if (Status st = inputDType(c, "input", input); !st)
    return st;
  if (Status st = c.expectDType("weight", weight, dtype); !st)
    return st;
  // A half-precision product may be written in f32 (mixed precision).
  const bool wide =
      (dtype == DType::F16 || dtype == DType::BF16) && output.dtype == DType::F32;
  out.outputDType = wide ? DType::F32 : dtype;
  if (Status st = c.expectDType("output", output, out.outputDType); !st)
    return st;
  if (input.dims.empty())
    return c.error("input " + describe(input) + " is a scalar; expected " +
                   "[..., K]");
  if (out.transposeInput && input.dims.size() != 2)
    return c.error("input " + describe(input) +
                   " is not rank 2; transpose_input reads a [K, M] input");
  if (Status st = c.expectRank("weight", weight, 2); !st)
    return st;
  const bool transpose = out.transpose;
  // The input as the product reads it: [rows..., K], or the transpose of a
  // stored [K, M].
  std::vector<int64_t> inputDims = input.dims;
  if (out.transposeInput)
    std::swap(inputDims[0], inputDims[1]);
  out.k = inputDims.back();
  int64_t weightK = weight.dims[transpose ? 1 : 0];
  out.n = weight.dims[transpose ? 0 : 1];
  if (weightK != out.k)
    return c.error("input " + describe(input) + " has " +
                   std::to_string(out.k) + " features but weight " +
                   describe(weight) +
                   (transpose ? " ([N, K], transposed)" : " ([K, N])") +
                   " has K = " + std::to_string(weightK));
  std::vector<int64_t> outDims = inputDims;
  outDims.back() = out.n;
  if (Status st = c.expectDims("output", output, outDims,
                               "the input's leading dims, then N");
      !st)
    return st;

  int64_t next = 2;
  if (out.hasBias) {
    const PlanTensor &bias = c.operand(size_t(next));
    if (Status st = c.expectDType("bias", bias, out.outputDType); !st)
      return st;
    if (Status st = c.expectDims("bias", bias, {out.n}, "[N]"); !st)
      return st;
    out.bias = next++;
  }
  if (out.hasResidual) {
    const PlanTensor &residual = c.operand(size_t(next));
    if (Status st = c.expectDType("residual", residual, out.outputDType);
        !st)
      return st;
    if (Status st =
            c.expectDims("residual", residual, outDims, "the output's dims");
        !st)
      return st;
    out.residual = next++;
  }
  out.rows = 1;
  for (size_t i = 0; i + 1 < inputDims.size(); ++i)
    out.rows *= inputDims[i];
  return Status::ok();
}

Status lmopt::runtime::checkMatMulStep(const StepCheck &c, DTypeRule lhsDType) {
  if (Status st = c.expectAttrs({}); !st)
    return st;
  if (Status st = c.expectCounts(2, "lhs, rhs", 1); !st)
    return st;
  const PlanTensor &lhs = c.operand(0);
  if (Status st = lhsDType(c, "lhs", lhs); !st)
    return st;
  if (Status st = c.expectDType("rhs", c.operand(1), lhs.dtype); !st)
    return st;
  return c.expectDType("output", c.result(0), lhs.dtype);
}

MatMulDimsError lmopt::runtime::inferMatMulDims(const std::vector<int64_t> &l,
                                                const std::vector<int64_t> &r,
                                                MatMulDims &out) {
  assert(!l.empty() && !r.empty() && "matmul operands have rank 1 or more");
  std::vector<int64_t> lhs = l, rhs = r;
  bool dropM = lhs.size() == 1, dropN = rhs.size() == 1;
  if (dropM)
    lhs.insert(lhs.begin(), 1);
  if (dropN)
    rhs.push_back(1);
  out.m = lhs[lhs.size() - 2];
  out.k = lhs.back();
  out.rhsK = rhs[rhs.size() - 2];
  out.n = rhs.back();
  if (out.k != out.rhsK)
    return MatMulDimsError::KMismatch;
  out.lhsBatch.assign(lhs.begin(), lhs.end() - 2);
  out.rhsBatch.assign(rhs.begin(), rhs.end() - 2);
  const std::vector<int64_t> &lhsBatch = out.lhsBatch, &rhsBatch = out.rhsBatch;
  size_t rank = std::max(lhsBatch.size(), rhsBatch.size());
  out.batch.assign(rank, 1);
  for (size_t i = 0; i < rank; ++i) {
    int64_t a = i < lhsBatch.size() ? lhsBatch[lhsBatch.size() - 1 - i] : 1;
    int64_t b = i < rhsBatch.size() ? rhsBatch[rhsBatch.size() - 1 - i] : 1;
    if (a != b && a != 1 && b != 1)
      return MatMulDimsError::BatchBroadcast;
    out.batch[rank - 1 - i] = a == 1 ? b : a;
  }
  out.outputDims = out.batch;
  if (!dropM)
    out.outputDims.push_back(out.m);
  if (!dropN)
    out.outputDims.push_back(out.n);
  return MatMulDimsError::None;
}

int64_t lmopt::runtime::matmulBatchCount(const MatMulDims &dims) {
  int64_t count = 1;
  for (int64_t dim : dims.batch)
    count *= dim;
  return count;
}

/// Element strides of `dims`' batch axes within the broadcast batch
/// `shape` (aligned on the right); a broadcast axis gets 0.
static std::vector<int64_t> broadcastStrides(const std::vector<int64_t> &dims,
                                             const std::vector<int64_t> &shape,
                                             int64_t matrixElements) {
  std::vector<int64_t> strides(shape.size(), 0);
  int64_t stride = matrixElements;
  for (size_t i = 0; i < dims.size(); ++i) {
    size_t from = dims.size() - 1 - i, to = shape.size() - 1 - i;
    strides[to] = dims[from] == 1 && shape[to] != 1 ? 0 : stride;
    stride *= dims[from];
  }
  return strides;
}

void lmopt::runtime::matmulBatchOffsets(const MatMulDims &dims,
                                        std::vector<int64_t> &lhsOffsets,
                                        std::vector<int64_t> &rhsOffsets) {
  const std::vector<int64_t> &batch = dims.batch;
  const size_t rank = batch.size();
  std::vector<int64_t> lhsStrides =
      broadcastStrides(dims.lhsBatch, batch, dims.m * dims.k);
  std::vector<int64_t> rhsStrides =
      broadcastStrides(dims.rhsBatch, batch, dims.k * dims.n);
  const int64_t count = matmulBatchCount(dims);
  std::vector<int64_t> index(rank, 0);
  for (int64_t b = 0; b < count; ++b) {
    int64_t lhsOffset = 0, rhsOffset = 0;
    for (size_t i = 0; i < rank; ++i) {
      lhsOffset += index[i] * lhsStrides[i];
      rhsOffset += index[i] * rhsStrides[i];
    }
    lhsOffsets.push_back(lhsOffset);
    rhsOffsets.push_back(rhsOffset);
    for (size_t i = rank; i-- > 0;) {
      if (++index[i] < batch[i])
        break;
      index[i] = 0;
    }
  }
}

//===- MatMulStep.cpp - lmopt.matmul between activations -----------------===//

#include "lmopt/Runtime/CPU/MatMulStep.h"

#include <oneapi/dnnl/dnnl.h>

#include <atomic>
#include <omp.h>

using namespace lmopt::runtime;

static Status descError(const MatMulStepDesc &desc, const std::string &what) {
  return Status::error(StatusCode::InvalidArgument,
                       "matmul step '" + desc.name + "': " + what +
                           " (lhs " + formatDims(desc.lhsDims) + ", rhs " +
                           formatDims(desc.rhsDims) + ")");
}

/// Row-major element strides of `dims`, right-aligned into `rank` dims; a
/// broadcast (size-1 or missing) dim gets stride 0.
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

Status MatMulStep::create(const CpuContext &context, const MatMulStepDesc &desc,
                          std::unique_ptr<MatMulStep> &out) {
  if (desc.lhsDims.empty() || desc.rhsDims.empty())
    return descError(desc, "operands must have rank 1 or more");
  for (const auto *dims : {&desc.lhsDims, &desc.rhsDims})
    for (int64_t dim : *dims)
      if (dim < 0)
        return descError(desc, "negative dim");
  // Promote rank-1 operands as numpy does.
  std::vector<int64_t> lhs = desc.lhsDims, rhs = desc.rhsDims;
  bool dropM = lhs.size() == 1, dropN = rhs.size() == 1;
  if (dropM)
    lhs.insert(lhs.begin(), 1);
  if (dropN)
    rhs.push_back(1);
  int64_t m = lhs[lhs.size() - 2], k = lhs.back();
  int64_t rk = rhs[rhs.size() - 2], n = rhs.back();
  if (k != rk)
    return descError(desc, "lhs has K = " + std::to_string(k) +
                               " but rhs has K = " + std::to_string(rk));
  std::vector<int64_t> lhsBatch(lhs.begin(), lhs.end() - 2);
  std::vector<int64_t> rhsBatch(rhs.begin(), rhs.end() - 2);
  size_t rank = std::max(lhsBatch.size(), rhsBatch.size());
  std::vector<int64_t> batch(rank, 1);
  for (size_t i = 0; i < rank; ++i) {
    int64_t a = i < lhsBatch.size() ? lhsBatch[lhsBatch.size() - 1 - i] : 1;
    int64_t b = i < rhsBatch.size() ? rhsBatch[rhsBatch.size() - 1 - i] : 1;
    if (a != b && a != 1 && b != 1)
      return descError(desc, "batch dims do not broadcast");
    batch[rank - 1 - i] = a == 1 ? b : a;
  }

  auto step = std::unique_ptr<MatMulStep>(new MatMulStep(context));
  step->desc_ = desc;
  step->m_ = m;
  step->k_ = k;
  step->n_ = n;
  step->outputDims_ = batch;
  if (!dropM)
    step->outputDims_.push_back(m);
  if (!dropN)
    step->outputDims_.push_back(n);
  std::vector<int64_t> lhsStrides = broadcastStrides(lhsBatch, batch, m * k);
  std::vector<int64_t> rhsStrides = broadcastStrides(rhsBatch, batch, k * n);
  int64_t count = 1;
  for (int64_t dim : batch)
    count *= dim;
  std::vector<int64_t> index(rank, 0);
  for (int64_t b = 0; b < count; ++b) {
    int64_t lhsOffset = 0, rhsOffset = 0;
    for (size_t i = 0; i < rank; ++i) {
      lhsOffset += index[i] * lhsStrides[i];
      rhsOffset += index[i] * rhsStrides[i];
    }
    step->lhsOffsets_.push_back(lhsOffset);
    step->rhsOffsets_.push_back(rhsOffset);
    for (size_t i = rank; i-- > 0;) {
      if (++index[i] < batch[i])
        break;
      index[i] = 0;
    }
  }
  out = std::move(step);
  return Status::ok();
}

Status MatMulStep::run(const float *lhs, const float *rhs,
                       float *output) const {
  int64_t count = int64_t(lhsOffsets_.size());
  if (count == 0 || m_ == 0 || n_ == 0)
    return Status::ok();
  if (k_ == 0) {
    std::fill(output, output + count * m_ * n_, 0.0f);
    return Status::ok();
  }
  if (!lhs || !rhs || !output)
    return Status::error(StatusCode::InvalidArgument,
                         "matmul step '" + desc_.name + "': null buffer");
  int team = context_.threads() > 0 ? context_.threads() : omp_get_max_threads();
  std::atomic<int> failure{int(dnnl_success)};
  // One batch: dnnl_sgemm spreads it over the team itself. Several: one
  // single-threaded GEMM per batch on each thread.
  if (count == 1) {
    int saved = omp_get_max_threads();
    omp_set_num_threads(team);
    dnnl_status_t st = dnnl_sgemm('N', 'N', m_, n_, k_, 1.0f, lhs, k_, rhs, n_,
                                  0.0f, output, n_);
    omp_set_num_threads(saved);
    failure = int(st);
  } else {
#pragma omp parallel for num_threads(team) schedule(static)
    for (int64_t b = 0; b < count; ++b) {
      dnnl_status_t st =
          dnnl_sgemm('N', 'N', m_, n_, k_, 1.0f, lhs + lhsOffsets_[b], k_,
                     rhs + rhsOffsets_[b], n_, 0.0f, output + b * m_ * n_, n_);
      if (st != dnnl_success)
        failure = int(st);
    }
  }
  if (failure != int(dnnl_success))
    return Status::error(StatusCode::InvalidArgument,
                         "matmul step '" + desc_.name +
                             "': dnnl_sgemm failed with status " +
                             std::to_string(failure.load()));
  return Status::ok();
}

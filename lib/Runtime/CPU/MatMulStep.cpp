//===- MatMulStep.cpp - lmopt.matmul between activations -----------------===//

#include "lmopt/Runtime/CPU/MatMulStep.h"

#include "OmpRegionSync.h"
#include "lmopt/Runtime/MatMulCheck.h"

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

Status MatMulStep::create(const CpuContext &context, const MatMulStepDesc &desc,
                          std::unique_ptr<MatMulStep> &out) {
  if (desc.lhsDims.empty() || desc.rhsDims.empty())
    return descError(desc, "operands must have rank 1 or more");
  for (const auto *dims : {&desc.lhsDims, &desc.rhsDims})
    for (int64_t dim : *dims)
      if (dim < 0)
        return descError(desc, "negative dim");
  MatMulDims dims;
  switch (inferMatMulDims(desc.lhsDims, desc.rhsDims, dims)) {
  case MatMulDimsError::KMismatch:
    return descError(desc, "lhs has K = " + std::to_string(dims.k) +
                               " but rhs has K = " + std::to_string(dims.rhsK));
  case MatMulDimsError::BatchBroadcast:
    return descError(desc, "batch dims do not broadcast");
  case MatMulDimsError::None:
    break;
  }

  auto step = std::unique_ptr<MatMulStep>(new MatMulStep(context));
  step->desc_ = desc;
  step->m_ = dims.m;
  step->k_ = dims.k;
  step->n_ = dims.n;
  step->outputDims_ = dims.outputDims;
  matmulBatchOffsets(dims, step->lhsOffsets_, step->rhsOffsets_);
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
    OmpRegionSync ompSync;
    ompSync.fork();
#pragma omp parallel num_threads(team)
    {
      ompSync.enter();
#pragma omp for schedule(static) nowait
      for (int64_t b = 0; b < count; ++b) {
        dnnl_status_t st = dnnl_sgemm(
            'N', 'N', m_, n_, k_, 1.0f, lhs + lhsOffsets_[b], k_,
            rhs + rhsOffsets_[b], n_, 0.0f, output + b * m_ * n_, n_);
        if (st != dnnl_success)
          failure = int(st);
      }
      ompSync.leave();
    }
    ompSync.join();
  }
  if (failure != int(dnnl_success))
    return Status::error(StatusCode::InvalidArgument,
                         "matmul step '" + desc_.name +
                             "': dnnl_sgemm failed with status " +
                             std::to_string(failure.load()));
  return Status::ok();
}

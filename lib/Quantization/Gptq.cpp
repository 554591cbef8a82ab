//===- Gptq.cpp - GPTQ error-compensating weight quantization -------------===//
//
// The sweep uses the factor R of H = R R^T (R upper triangular, the
// Cholesky factor of H with its index order reversed) instead of GPTQ's
// Cholesky factor U of H^-1 (U^T U = H^-1, so U = R^-1): GPTQ's update
// w'_j = w_j - sum_{i<j} U_ij (w'_i - q_i) / U_ii unrolls to
// w'_j = w_j + sum_{i<j} (w_i - q_i) R_ij / R_jj, which needs no inverse.
// That saves two of the three O(K^3) steps; the result is the same up to
// rounding (scripts/make_gptq_tests.py computes the original formulation for
// the tests). Only the final w'_j agree term by term: a block's parameters,
// chosen at its first column from GPTQ's current weights of the whole
// block, need those weights recovered (blockWeights).
//
//===----------------------------------------------------------------------===//

#include "lmopt/Quantization/Gptq.h"

#include <algorithm>
#include <cmath>
#include <cstring>

using namespace mlir::lmopt::quantization;

// The loops below carry nearly all of the time; clones for wide vectors,
// picked at load time, keep the library runnable on any x86-64.
#if defined(__GNUC__) && defined(__x86_64__) && !defined(__clang__)
#define LMOPT_VECTOR_CLONES                                                    \
  __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define LMOPT_VECTOR_CLONES
#endif

/// y[0:n] += a * x[0:n].
LMOPT_VECTOR_CLONES static void axpy(float *y, const float *x, float a,
                                     int64_t n) {
  for (int64_t i = 0; i < n; ++i)
    y[i] += a * x[i];
}

/// h[0:n] += acc[0:n], widening.
LMOPT_VECTOR_CLONES static void accumulate(double *h, const float *acc,
                                           int64_t n) {
  for (int64_t i = 0; i < n; ++i)
    h[i] += double(acc[i]);
}

/// The dot products of rows a[0..count) (count <= 4) with b, over n
/// elements, with eight independent lanes per row so that they vectorize.
LMOPT_VECTOR_CLONES static void dots(const double *const *a, int count,
                                     const double *b, int64_t n, double *out) {
  double lanes[4][8] = {};
  int64_t full = n / 8 * 8;
  for (int64_t k = 0; k < full; k += 8)
    for (int r = 0; r < 4; ++r) {
      if (r >= count)
        break;
      for (int l = 0; l < 8; ++l)
        lanes[r][l] += a[r][k + l] * b[k + l];
    }
  for (int r = 0; r < count; ++r) {
    double sum = 0.0;
    for (int l = 0; l < 8; ++l)
      sum += lanes[r][l];
    for (int64_t k = full; k < n; ++k)
      sum += a[r][k] * b[k];
    out[r] = sum;
  }
}

void Hessian::add(const float *x, int64_t count) {
  // Products of a chunk of rows are summed in f32 (vectorized), the chunks
  // in double.
  constexpr int64_t kChunk = 64;
  std::vector<float> acc(k);
  for (int64_t t0 = 0; t0 < count; t0 += kChunk) {
    int64_t t1 = std::min(count, t0 + kChunk);
    for (int64_t i = 0; i < k; ++i) {
      std::fill(acc.begin() + i, acc.end(), 0.0f);
      bool any = false;
      for (int64_t t = t0; t < t1; ++t) {
        const float *row = x + t * k;
        if (row[i] == 0.0f)
          continue;
        axpy(acc.data() + i, row + i, row[i], k - i);
        any = true;
      }
      if (any)
        accumulate(h.data() + rowStart(i), acc.data() + i, k - i);
    }
  }
  numRows += count;
}

void Hessian::add(const Hessian &other) {
  for (size_t i = 0; i < h.size(); ++i)
    h[i] += other.h[i];
  numRows += other.numRows;
}

/// Four doubles; plain SSE pairs where AVX is missing.
typedef double Double4 __attribute__((vector_size(32), aligned(8)));

/// out[r][0:16] = sum_k a[r][k] * bt[k][0:16] for four rows a[r] (stride
/// `lda`) and the 16 columns at bt (stride `ldb`), over `depth` k; written
/// with vector types so that the 16 accumulators stay in registers.
LMOPT_VECTOR_CLONES static void
tile4x16(const double *__restrict a, int64_t lda, const double *__restrict bt,
         int64_t ldb, int64_t depth, double (*__restrict out)[16]) {
  Double4 acc[4][4] = {};
  for (int64_t k = 0; k < depth; ++k) {
    const double *b = bt + k * ldb;
    Double4 b0, b1, b2, b3;
    std::memcpy(&b0, b, 32);
    std::memcpy(&b1, b + 4, 32);
    std::memcpy(&b2, b + 8, 32);
    std::memcpy(&b3, b + 12, 32);
    for (int r = 0; r < 4; ++r) {
      double x = a[r * lda + k];
      acc[r][0] += x * b0;
      acc[r][1] += x * b1;
      acc[r][2] += x * b2;
      acc[r][3] += x * b3;
    }
  }
  for (int r = 0; r < 4; ++r)
    std::memcpy(out[r], acc[r], sizeof(acc[r]));
}

/// In-place Cholesky factor L (lower, row-major n x n) of `a`; false when a
/// pivot is not positive. Blocked by panels of 64 columns: each panel is
/// factored on its own (left-looking, short dot products), then the
/// trailing matrix takes its rank-64 update as 4 x 16 tiles against the
/// transposed panel, which stays in cache.
static bool choleskyLower(std::vector<double> &a, int64_t n) {
  constexpr int64_t kPanel = 64;
  std::vector<double> panel;
  for (int64_t p0 = 0; p0 < n; p0 += kPanel) {
    int64_t p1 = std::min(n, p0 + kPanel);
    // The panel: columns [p0, p1) of rows [p0, n), earlier panels applied.
    for (int64_t j = p0; j < p1; ++j) {
      const double *rowJ = &a[j * n + p0];
      for (int64_t i0 = j; i0 < n; i0 += 4) {
        int count = int(std::min<int64_t>(4, n - i0));
        const double *rows[4];
        for (int r = 0; r < count; ++r)
          rows[r] = &a[(i0 + r) * n + p0];
        double sums[4];
        dots(rows, count, rowJ, j - p0, sums);
        for (int r = 0; r < count; ++r) {
          int64_t i = i0 + r;
          double s = a[i * n + j] - sums[r];
          if (i == j) {
            if (!(s > 0.0) || !std::isfinite(s))
              return false;
            a[i * n + i] = std::sqrt(s);
          } else {
            a[i * n + j] = s / a[j * n + j];
          }
        }
      }
    }
    if (p1 == n)
      break;
    // Trailing update: a[i][j] -= sum_k L[i][k] L[j][k], p1 <= j <= i.
    int64_t width = p1 - p0, rest = n - p1;
    int64_t padded = (rest + 15) / 16 * 16;
    panel.assign(width * padded, 0.0);
    for (int64_t j = 0; j < rest; ++j)
      for (int64_t k = 0; k < width; ++k)
        panel[k * padded + j] = a[(p1 + j) * n + p0 + k];
    std::vector<double> rowsCopy(4 * width);
    for (int64_t i0 = p1; i0 < n; i0 += 4) {
      int count = int(std::min<int64_t>(4, n - i0));
      // Four rows of the panel, zero-padded past the matrix.
      std::fill(rowsCopy.begin(), rowsCopy.end(), 0.0);
      for (int r = 0; r < count; ++r)
        std::copy_n(&a[(i0 + r) * n + p0], width, &rowsCopy[r * width]);
      int64_t lastJ = i0 + count - 1;
      for (int64_t j0 = p1; j0 <= lastJ; j0 += 16) {
        double acc[4][16];
        tile4x16(rowsCopy.data(), width, &panel[j0 - p1], padded, width, acc);
        for (int r = 0; r < count; ++r) {
          int64_t i = i0 + r;
          for (int64_t c = 0; c < 16 && j0 + c <= i; ++c)
            a[i * n + j0 + c] -= acc[r][c];
        }
      }
    }
  }
  return true;
}

/// S = R_ij / R_jj (upper, j > i; float) for H + lambda I = R R^T, or an
/// empty vector when the factorization fails.
static std::vector<float> factorUpper(const Hessian &h, double lambda) {
  int64_t k = h.size();
  // L of J (H + lambda I) J, J the reversal: R = J L J.
  std::vector<double> a(k * k);
  for (int64_t i = 0; i < k; ++i)
    for (int64_t j = 0; j <= i; ++j)
      a[i * k + j] = h.at(k - 1 - i, k - 1 - j) + (i == j ? lambda : 0.0);
  if (!choleskyLower(a, k))
    return {};
  auto r = [&](int64_t i, int64_t j) { // i <= j
    return a[(k - 1 - i) * k + (k - 1 - j)];
  };
  std::vector<float> s(k * k, 0.0f);
  for (int64_t i = 0; i < k; ++i)
    for (int64_t j = i + 1; j < k; ++j)
      s[i * k + j] = float(r(i, j) / r(j, j));
  return s;
}

/// The weights of the block [j, j + count) of one row as GPTQ has them when
/// it reaches column j: each the least-squares compensation of the errors
/// made so far. `updated` holds w_c + sum_{i<j} (w_i - q_i) S_ic, which is
/// that only for c = j; the rest of the block follows by a forward solve
/// with S's diagonal block: y_c = p_c - sum_{j<=i<c} y_i S_ic.
static void blockWeights(const float *w, const float *updated, const float *s,
                         int64_t k, int64_t j, int64_t count, float *out) {
  std::vector<float> y(updated + j, updated + j + count);
  for (int64_t c = 0; c < count; ++c)
    y[c] -= w[j + c];
  for (int64_t i = 0; i + 1 < count; ++i)
    if (y[i] != 0.0f)
      axpy(y.data() + i + 1, s + (j + i) * k + j + i + 1, -y[i], count - i - 1);
  for (int64_t c = 0; c < count; ++c)
    out[c] = w[j + c] + y[c];
}

bool mlir::lmopt::quantization::gptqQuantize(const Hessian &h, const float *w,
                                             int64_t rows, RoundingGrid &grid,
                                             const GptqOptions &options,
                                             GptqStats &stats) {
  int64_t k = h.size();
  double meanDiag = 0.0;
  for (int64_t i = 0; i < k; ++i)
    meanDiag += h.at(i, i);
  meanDiag /= double(std::max<int64_t>(k, 1));
  stats.lambda = meanDiag > 0.0 ? options.percentDamp * meanDiag : 1.0;
  std::vector<float> s;
  for (stats.attempts = 1; stats.attempts <= 6; ++stats.attempts) {
    s = factorUpper(h, stats.lambda);
    if (!s.empty())
      break;
    stats.lambda *= 10.0;
  }
  if (s.empty())
    return false;

  int64_t batch = std::max(options.lazyBatch, options.blockSize);
  batch -= batch % options.blockSize;
  std::vector<float> updated(w, w + rows * k);
  std::vector<float> deltas(rows * batch);
  std::vector<float> blockValues(options.blockSize);
  for (int64_t i1 = 0; i1 < k; i1 += batch) {
    int64_t i2 = std::min(k, i1 + batch);
    // The batch's columns, each row on its own: quantize, then move the
    // error onto the batch's later columns.
    for (int64_t n = 0; n < rows; ++n) {
      float *row = &updated[n * k];
      float *delta = &deltas[n * batch];
      for (int64_t j = i1; j < i2; ++j) {
        if (j % options.blockSize == 0) {
          blockWeights(w + n * k, row, s.data(), k, j, options.blockSize,
                       blockValues.data());
          grid.chooseBlock(n, j, blockValues.data(), options.blockSize);
        }
        float d = w[n * k + j] - grid.quantize(n, j, row[j]);
        delta[j - i1] = d;
        if (d != 0.0f)
          axpy(row + j + 1, &s[j * k + j + 1], d, i2 - j - 1);
      }
    }
    // Lazy update of the columns after the batch.
    if (i2 == k)
      continue;
    for (int64_t n = 0; n < rows; ++n) {
      float *row = &updated[n * k];
      for (int64_t j = i1; j < i2; ++j)
        if (float d = deltas[n * batch + j - i1]; d != 0.0f)
          axpy(row + i2, &s[j * k + i2], d, k - i2);
    }
  }
  return true;
}

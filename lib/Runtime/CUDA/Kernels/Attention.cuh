//===- Attention.cuh - Fused attention kernels ------------------*- CUDA -*-===//
//
// softmax(scale * Q K^T + mask) V with the CPU step's rules
// (lib/Runtime/CPU/AttentionStep.cpp), in one pass over the keys with an
// online softmax (a running maximum and sum per query row, the accumulator
// rescaled when the maximum grows): no score matrix in device memory.
//
// Per key: a key past the causal limit (i + Sk - Sq, the query rows aligned
// to the end of the keys) or where a bool mask is 0 is hidden and scores
// -FLT_MAX (so a row with every key hidden averages the values uniformly);
// an additive mask is added to the scaled score. A row is "shown" when some
// key is kept with a finite additive mask; with zero_masked_rows a row
// nothing is shown to is zeros; a row whose maximum is not finite is NaN.
//
// Two kernels:
//  - prefill: a block of 128 threads per (query tile of 64 rows, head,
//    batch). Q, then each 64-key tile of K and V, is staged (converted to
//    f32) in shared memory; a thread computes 4 rows x 8 keys of the scores
//    (keys cl, cl+8, ... so that 8 lanes read 8 distinct bank groups), the
//    8 lanes of a row group reduce the row maximum by shuffles, the
//    probabilities go through shared memory to P V, where the thread owns
//    4 rows x D/8 output columns. Arithmetic on CUDA cores, f32.
//  - decode (few query rows, long keys): a block of 4 warps per (query row,
//    key split); lanes own D/32 columns, a warp takes 4 keys at a time
//    (coalesced row loads, butterfly reduction of the dot products); the 4
//    warps' states merge in shared memory; with several splits each block
//    writes a partial (max, sum, shown, accumulator) and a combine kernel
//    merges them.
//
//===----------------------------------------------------------------------===//

#ifndef LMOPT_LIB_RUNTIME_CUDA_KERNELS_ATTENTION_CUH
#define LMOPT_LIB_RUNTIME_CUDA_KERNELS_ATTENTION_CUH

#include "Common.cuh"
#include "KernelParams.cuh"

#include <cfloat>

namespace lmopt_kernels {

__device__ __forceinline__ bool isFiniteF(float x) { return fabsf(x) <= FLT_MAX; }

/// Key j's score for query row i as the CPU step computes it; `shown` says
/// whether it counts for zero_masked_rows.
__device__ __forceinline__ float maskedScore(const AttentionParams &p,
                                             float score, int b, int h, int i,
                                             int j, int end, bool &shown) {
  bool keep = j < end;
  shown = keep;
  if (p.maskKind != kMaskNone) {
    long long at = b * p.maskStride[0] + h * p.maskStride[1] +
                   i * p.maskStride[2] + j * p.maskStride[3];
    if (p.maskKind == kMaskAdditive) {
      float m = __ldg(static_cast<const float *>(p.mask) + at);
      score += m;
      shown = keep && m != -INFINITY;
    } else {
      keep = keep && __ldg(static_cast<const unsigned char *>(p.mask) + at);
      shown = keep;
    }
  }
  return keep ? score : -FLT_MAX;
}

/// The output value of a finished row: zeros for a row nothing was shown
/// to (zero_masked_rows), NaN for a non-finite maximum, else acc / sum.
__device__ __forceinline__ float finishValue(const AttentionParams &p,
                                             float max, float sum, bool shown,
                                             float acc) {
  if (p.zeroMaskedRows && !shown)
    return 0.0f;
  if (!isFiniteF(max))
    return __int_as_float(0x7fc00000);
  return acc / sum;
}

template <int E> __device__ __forceinline__ float lane4(const float4 &v) {
  return E == 0 ? v.x : E == 1 ? v.y : E == 2 ? v.z : v.w;
}

//===----------------------------------------------------------------------===//
// Prefill
//===----------------------------------------------------------------------===//

/// Copies rows [row0, row0 + count) of one head (`rows` elements apart,
/// `limit` real rows, D real columns) into `dst` as f32, zero-padded to
/// `Rows` x DP with `stride` floats per row.
template <typename T, int DP, int Rows>
__device__ __forceinline__ void stageTile(float *dst, int stride,
                                          const T *__restrict__ src,
                                          long long rowStride, int row0,
                                          int limit, int D) {
  constexpr int kCount = Rows * DP;
  static_assert(kCount % kAttentionThreads == 0, "tile not a thread multiple");
#pragma unroll 8
  for (int it = 0; it < kCount / kAttentionThreads; ++it) {
    int idx = it * kAttentionThreads + int(threadIdx.x);
    int r = idx / DP, d = idx % DP;
    float x = 0.0f;
    if (row0 + r < limit && d < D)
      x = toF32(src[(long long)(row0 + r) * rowStride + d]);
    dst[r * stride + d] = x;
  }
}

template <typename T, int DP>
__device__ __forceinline__ void attentionPrefill(const AttentionParams &p) {
  constexpr int BQ = kAttentionQueryTile, BK = kAttentionKeyTile;
  constexpr int QS = DP + kAttentionPad, KS = DP + kAttentionPad,
                PS = BK + kAttentionPad;
  constexpr int CC = DP / 32; // float4 output chunks per thread and row
  static_assert(kAttentionThreads == 128 && BQ == 64 && BK == 64,
                "the thread layout assumes 128 threads on 64 x 64 tiles");
  extern __shared__ float4 sharedTiles[];
  float *Qs = reinterpret_cast<float *>(sharedTiles);
  float *Ks = Qs + BQ * QS;
  float *Vs = Ks + BK * KS;
  float *Ps = Vs + BK * KS;

  const int t = threadIdx.x, rg = t >> 3, cl = t & 7;
  const int q0 = blockIdx.x * BQ, h = blockIdx.y, b = blockIdx.z;
  const int D = p.headDim, sq = p.queryLength, sk = p.keyLength;
  const T *q = static_cast<const T *>(p.q) +
               (long long)b * sq * p.qRowStride + (long long)h * D;
  const T *kp = static_cast<const T *>(p.k) + b * p.kBatchStride +
                h * p.kHeadStride;
  const T *vp = static_cast<const T *>(p.v) + b * p.vBatchStride +
                h * p.vHeadStride;

  stageTile<T, DP, BQ>(Qs, QS, q, p.qRowStride, q0, sq, D);

  float m[4], l[4], acc[4][CC * 4];
  bool shown[4];
#pragma unroll
  for (int a = 0; a < 4; ++a) {
    m[a] = -INFINITY;
    l[a] = 0.0f;
    shown[a] = false;
#pragma unroll
    for (int c = 0; c < CC * 4; ++c)
      acc[a][c] = 0.0f;
  }
  // Keys from tileEnd on are hidden from every row of the tile (causal).
  const int lastRow = min(q0 + BQ, sq) - 1;
  const int tileEnd =
      p.causal ? max(0, min(sk, lastRow + sk - sq + 1)) : sk;

  for (int k0 = 0; k0 < sk; k0 += BK) {
    if (k0 >= tileEnd) {
      // A hidden key scores -FLT_MAX: it weighs exactly 0 in a row whose
      // maximum is far above that, so the remaining tiles matter only to
      // rows that have seen no such score yet (every key hidden so far).
      bool needed = false;
#pragma unroll
      for (int a = 0; a < 4; ++a)
        needed |= q0 + rg * 4 + a < sq && !(m[a] > -1e37f);
      if (!__syncthreads_or(needed))
        break;
    }
    __syncthreads(); // the previous tile's readers are done
    stageTile<T, DP, BK>(Ks, KS, kp, p.kRowStride, k0, sk, D);
    stageTile<T, DP, BK>(Vs, KS, vp, p.vRowStride, k0, sk, D);
    __syncthreads();

    float s[4][8];
#pragma unroll
    for (int a = 0; a < 4; ++a)
#pragma unroll
      for (int jj = 0; jj < 8; ++jj)
        s[a][jj] = 0.0f;
#pragma unroll 4
    for (int d = 0; d < DP; d += 4) {
      float4 qa[4];
#pragma unroll
      for (int a = 0; a < 4; ++a)
        qa[a] = *reinterpret_cast<const float4 *>(&Qs[(rg * 4 + a) * QS + d]);
#pragma unroll
      for (int jj = 0; jj < 8; ++jj) {
        float4 kv =
            *reinterpret_cast<const float4 *>(&Ks[(cl + 8 * jj) * KS + d]);
#pragma unroll
        for (int a = 0; a < 4; ++a) {
          s[a][jj] = fmaf(qa[a].x, kv.x, s[a][jj]);
          s[a][jj] = fmaf(qa[a].y, kv.y, s[a][jj]);
          s[a][jj] = fmaf(qa[a].z, kv.z, s[a][jj]);
          s[a][jj] = fmaf(qa[a].w, kv.w, s[a][jj]);
        }
      }
    }

#pragma unroll
    for (int a = 0; a < 4; ++a) {
      const int i = q0 + rg * 4 + a;
      const int end = p.causal ? i + sk - sq + 1 : sk;
      float tileMax = -INFINITY;
#pragma unroll
      for (int jj = 0; jj < 8; ++jj) {
        const int j = k0 + cl + 8 * jj;
        float x = -INFINITY; // a key past Sk, or a row past Sq: no effect
        if (j < sk && i < sq) {
          bool keyShown;
          x = maskedScore(p, s[a][jj] * p.scale, b, h, i, j, end, keyShown);
          shown[a] |= keyShown;
        }
        s[a][jj] = x;
        tileMax = fmaxf(tileMax, x);
      }
      tileMax = fmaxf(tileMax, __shfl_xor_sync(0xffffffffu, tileMax, 1));
      tileMax = fmaxf(tileMax, __shfl_xor_sync(0xffffffffu, tileMax, 2));
      tileMax = fmaxf(tileMax, __shfl_xor_sync(0xffffffffu, tileMax, 4));
      const float mNew = fmaxf(m[a], tileMax);
      // Until the maximum is finite nothing accumulates: -inf scores weigh
      // 0 against any finite maximum, and a non-finite final maximum makes
      // the row NaN anyway.
      const bool finite = isFiniteF(mNew);
      const float alpha = finite ? expf(m[a] - mNew) : 1.0f;
      float rowSum = 0.0f;
#pragma unroll
      for (int jj = 0; jj < 8; ++jj) {
        float pj = finite ? expf(s[a][jj] - mNew) : 0.0f;
        rowSum += pj;
        Ps[(rg * 4 + a) * PS + cl + 8 * jj] = pj;
      }
      l[a] = l[a] * alpha + rowSum;
      m[a] = mNew;
#pragma unroll
      for (int c = 0; c < CC * 4; ++c)
        acc[a][c] *= alpha;
    }
    __syncthreads();

#pragma unroll 2
    for (int kk = 0; kk < BK; kk += 4) {
      float4 pa[4];
#pragma unroll
      for (int a = 0; a < 4; ++a)
        pa[a] = *reinterpret_cast<const float4 *>(&Ps[(rg * 4 + a) * PS + kk]);
#pragma unroll
      for (int cc = 0; cc < CC; ++cc) {
        const int col = (cl + 8 * cc) * 4;
        float4 v0 = *reinterpret_cast<const float4 *>(&Vs[(kk + 0) * KS + col]);
        float4 v1 = *reinterpret_cast<const float4 *>(&Vs[(kk + 1) * KS + col]);
        float4 v2 = *reinterpret_cast<const float4 *>(&Vs[(kk + 2) * KS + col]);
        float4 v3 = *reinterpret_cast<const float4 *>(&Vs[(kk + 3) * KS + col]);
#pragma unroll
        for (int a = 0; a < 4; ++a) {
          float *o = &acc[a][cc * 4];
          o[0] = fmaf(pa[a].x, v0.x, o[0]);
          o[1] = fmaf(pa[a].x, v0.y, o[1]);
          o[2] = fmaf(pa[a].x, v0.z, o[2]);
          o[3] = fmaf(pa[a].x, v0.w, o[3]);
          o[0] = fmaf(pa[a].y, v1.x, o[0]);
          o[1] = fmaf(pa[a].y, v1.y, o[1]);
          o[2] = fmaf(pa[a].y, v1.z, o[2]);
          o[3] = fmaf(pa[a].y, v1.w, o[3]);
          o[0] = fmaf(pa[a].z, v2.x, o[0]);
          o[1] = fmaf(pa[a].z, v2.y, o[1]);
          o[2] = fmaf(pa[a].z, v2.z, o[2]);
          o[3] = fmaf(pa[a].z, v2.w, o[3]);
          o[0] = fmaf(pa[a].w, v3.x, o[0]);
          o[1] = fmaf(pa[a].w, v3.y, o[1]);
          o[2] = fmaf(pa[a].w, v3.z, o[2]);
          o[3] = fmaf(pa[a].w, v3.w, o[3]);
        }
      }
    }
  }

#pragma unroll
  for (int a = 0; a < 4; ++a) {
    float sum = l[a];
    sum += __shfl_xor_sync(0xffffffffu, sum, 1);
    sum += __shfl_xor_sync(0xffffffffu, sum, 2);
    sum += __shfl_xor_sync(0xffffffffu, sum, 4);
    // Lanes of one row group hold the same row: OR their shown flags.
    unsigned groupShown = __ballot_sync(0xffffffffu, shown[a]);
    bool rowShown = (groupShown >> (threadIdx.x & 24)) & 0xffu;
    const int i = q0 + rg * 4 + a;
    if (i >= sq)
      continue;
    T *o = static_cast<T *>(p.out) + ((long long)(b * sq + i) * p.heads + h) * D;
#pragma unroll
    for (int cc = 0; cc < CC; ++cc)
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        int d = (cl + 8 * cc) * 4 + e;
        if (d < D)
          o[d] = fromF32<T>(finishValue(p, m[a], sum, rowShown,
                                        acc[a][cc * 4 + e]));
      }
  }
}

//===----------------------------------------------------------------------===//
// Decode
//===----------------------------------------------------------------------===//

/// One block per (query row, key split); rows are numbered as the output's
/// ((b * Sq + i) * H + h).
template <typename T, int DP>
__device__ __forceinline__ void attentionDecode(const AttentionParams &p) {
  constexpr int C = DP / 32, KW = kDecodeKeysPerWarpStep;
  constexpr int Warps = kDecodeThreads / 32;
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const int row = blockIdx.x, split = blockIdx.y;
  const int H = p.heads, D = p.headDim, sq = p.queryLength, sk = p.keyLength;
  const int h = row % H, bi = row / H, i = bi % sq, b = bi / sq;
  const int j0 = split * p.keysPerSplit;
  const int j1 = min(sk, j0 + p.keysPerSplit);

  const T *q = static_cast<const T *>(p.q) +
               (long long)(b * sq + i) * p.qRowStride + (long long)h * D;
  const T *kp = static_cast<const T *>(p.k) + b * p.kBatchStride +
                h * p.kHeadStride;
  const T *vp = static_cast<const T *>(p.v) + b * p.vBatchStride +
                h * p.vHeadStride;
  float qv[C];
#pragma unroll
  for (int c = 0; c < C; ++c) {
    int d = lane + 32 * c;
    qv[c] = d < D ? toF32(q[d]) : 0.0f;
  }
  const int end = p.causal ? i + sk - sq + 1 : sk;
  float m = -INFINITY, l = 0.0f, acc[C];
  bool shown = false;
#pragma unroll
  for (int c = 0; c < C; ++c)
    acc[c] = 0.0f;

  for (int jb = j0 + warp * KW; jb < j1; jb += Warps * KW) {
    float kx[KW][C], vx[KW][C];
#pragma unroll
    for (int e = 0; e < KW; ++e)
#pragma unroll
      for (int c = 0; c < C; ++c) {
        int j = jb + e, d = lane + 32 * c;
        bool ok = j < j1 && d < D;
        kx[e][c] = ok ? toF32(kp[(long long)j * p.kRowStride + d]) : 0.0f;
        vx[e][c] = ok ? toF32(vp[(long long)j * p.vRowStride + d]) : 0.0f;
      }
    float s[KW];
#pragma unroll
    for (int e = 0; e < KW; ++e) {
      s[e] = 0.0f;
#pragma unroll
      for (int c = 0; c < C; ++c)
        s[e] = fmaf(qv[c], kx[e][c], s[e]);
    }
#pragma unroll
    for (int off = 16; off > 0; off >>= 1)
#pragma unroll
      for (int e = 0; e < KW; ++e)
        s[e] += __shfl_xor_sync(0xffffffffu, s[e], off);
    float tileMax = -INFINITY;
#pragma unroll
    for (int e = 0; e < KW; ++e) {
      int j = jb + e;
      float x = -INFINITY;
      if (j < j1) {
        bool keyShown;
        x = maskedScore(p, s[e] * p.scale, b, h, i, j, end, keyShown);
        shown |= keyShown;
      }
      s[e] = x;
      tileMax = fmaxf(tileMax, x);
    }
    const float mNew = fmaxf(m, tileMax);
    const bool finite = isFiniteF(mNew);
    const float alpha = finite ? expf(m - mNew) : 1.0f;
    l *= alpha;
#pragma unroll
    for (int c = 0; c < C; ++c)
      acc[c] *= alpha;
#pragma unroll
    for (int e = 0; e < KW; ++e) {
      float pe = finite ? expf(s[e] - mNew) : 0.0f;
      l += pe;
#pragma unroll
      for (int c = 0; c < C; ++c)
        acc[c] = fmaf(pe, vx[e][c], acc[c]);
    }
    m = mNew;
  }

  __shared__ float warpMax[Warps], warpSum[Warps];
  __shared__ int warpShown[Warps];
  __shared__ float warpAcc[Warps][DP];
  if (lane == 0) {
    warpMax[warp] = m;
    warpSum[warp] = l;
    warpShown[warp] = shown;
  }
#pragma unroll
  for (int c = 0; c < C; ++c)
    warpAcc[warp][lane + 32 * c] = acc[c];
  __syncthreads();
  const int t = threadIdx.x;
  if (t >= DP)
    return;
  float max = -INFINITY;
  bool anyShown = false;
#pragma unroll
  for (int w = 0; w < Warps; ++w) {
    max = fmaxf(max, warpMax[w]);
    anyShown |= warpShown[w] != 0;
  }
  float sum = 0.0f, value = 0.0f;
  if (isFiniteF(max)) {
#pragma unroll
    for (int w = 0; w < Warps; ++w) {
      float f = expf(warpMax[w] - max);
      sum = fmaf(f, warpSum[w], sum);
      value = fmaf(f, warpAcc[w][t], value);
    }
  }
  if (p.splits == 1) {
    if (t < D)
      static_cast<T *>(p.out)[(long long)row * D + t] =
          fromF32<T>(finishValue(p, max, sum, anyShown, value));
    return;
  }
  float *part =
      p.partial + ((long long)row * p.splits + split) *
                      (kDecodePartialHeader + DP);
  if (t == 0) {
    part[0] = max;
    part[1] = sum;
    part[2] = anyShown ? 1.0f : 0.0f;
  }
  part[kDecodePartialHeader + t] = value;
}

/// Merges the decode kernel's splits of one row per block.
template <typename T, int DP>
__device__ __forceinline__ void attentionCombine(const AttentionParams &p) {
  const int row = blockIdx.x, t = threadIdx.x;
  if (t >= DP)
    return;
  constexpr int Stride = kDecodePartialHeader + DP;
  const float *part = p.partial + (long long)row * p.splits * Stride;
  float max = -INFINITY;
  bool anyShown = false;
  for (int s = 0; s < p.splits; ++s) {
    max = fmaxf(max, part[s * Stride]);
    anyShown |= part[s * Stride + 2] != 0.0f;
  }
  float sum = 0.0f, value = 0.0f;
  if (isFiniteF(max))
    for (int s = 0; s < p.splits; ++s) {
      float f = expf(part[s * Stride] - max);
      sum = fmaf(f, part[s * Stride + 1], sum);
      value = fmaf(f, part[s * Stride + kDecodePartialHeader + t], value);
    }
  if (t < p.headDim)
    static_cast<T *>(p.out)[(long long)row * p.headDim + t] =
        fromF32<T>(finishValue(p, max, sum, anyShown, value));
}

} // namespace lmopt_kernels

#endif // LMOPT_LIB_RUNTIME_CUDA_KERNELS_ATTENTION_CUH

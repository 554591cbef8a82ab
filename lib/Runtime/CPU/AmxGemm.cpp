//===- AmxGemm.cpp - bf16 products on AMX tiles ---------------------------===//
//
// See AmxGemm.h for the layout and the blocking. Every function that
// touches the tile registers carries the AMX target attribute, so the rest
// of the runtime is compiled for the baseline ISA and this code runs only
// after amxBf16Usable().
//
//===----------------------------------------------------------------------===//

#include "AmxGemm.h"

#include <omp.h>
#include <oneapi/dnnl/dnnl.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <vector>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define LMOPT_AMX 1
#include <cpuid.h>
#include <immintrin.h>
#include <sys/syscall.h>
#include <unistd.h>
#define LMOPT_AMX_TARGET                                                       \
  __attribute__((target("amx-tile,amx-bf16,avx512f,avx512bw")))
#endif

using namespace lmopt::runtime;
using namespace lmopt::runtime::quant;

namespace {
constexpr int64_t kBlock = 32;     // rows and columns of one product block
constexpr int64_t kPanelCols = 16; // columns of one packed panel (one tile)
constexpr int64_t kStepK = 32;     // K values of one tile step

int64_t roundUp(int64_t x, int64_t m) { return (x + m - 1) / m * m; }
} // namespace

void AmxBf16Weight::Free::operator()(uint16_t *p) const { std::free(p); }

bool quant::amxBf16Usable() {
#ifdef LMOPT_AMX
  static const bool usable = [] {
    unsigned eax, ebx, ecx, edx;
    if (!__get_cpuid_count(7, 0, &eax, &ebx, &ecx, &edx))
      return false;
    bool amxBf16 = edx & (1u << 22), amxTile = edx & (1u << 24);
    if (!amxBf16 || !amxTile)
      return false;
    unsigned isa = unsigned(dnnl_get_effective_cpu_isa());
    unsigned amx = unsigned(dnnl_cpu_isa_avx512_core_amx);
    if ((isa & amx) != amx)
      return false;
    // Linux hands out the tile data state on request (ARCH_REQ_XCOMP_PERM,
    // XFEATURE_XTILEDATA); oneDNN asks the same for its AMX kernels.
    constexpr long kReqXcompPerm = 0x1023, kXtileData = 18;
    return syscall(SYS_arch_prctl, kReqXcompPerm, kXtileData) == 0;
  }();
  return usable;
#else
  return false;
#endif
}

bool quant::packAmxBf16(const uint16_t *weight, bool transposed, int64_t k,
                        int64_t n, AmxBf16Weight &out) {
  out.k = k;
  out.n = n;
  out.kPadded = roundUp(k, kStepK);
  out.nPadded = roundUp(n, kBlock);
  void *p = nullptr;
  if (posix_memalign(&p, 64, std::max<size_t>(64, out.bytes())) != 0 || !p)
    return false;
  out.data.reset(static_cast<uint16_t *>(p));
  uint16_t *dst = out.data.get();
  const int64_t pairs = out.kPadded / 2;
  for (int64_t panel = 0; panel < out.nPadded / kPanelCols; ++panel)
    for (int64_t i = 0; i < pairs; ++i) {
      uint16_t *row = dst + (panel * pairs + i) * kPanelCols * 2;
      for (int64_t c = 0; c < kPanelCols; ++c)
        for (int64_t e = 0; e < 2; ++e) {
          int64_t kk = 2 * i + e, col = panel * kPanelCols + c;
          row[c * 2 + e] =
              kk < k && col < n
                  ? weight[transposed ? col * k + kk : kk * n + col]
                  : uint16_t(0);
        }
    }
  return true;
}

size_t quant::amxBf16ScratchBytes(int64_t rows, const AmxBf16Weight &w) {
  return w.k == w.kPadded ? 0 : size_t(rows * w.kPadded) * 2;
}

#ifdef LMOPT_AMX
namespace {

/// The 64-byte tile configuration (palette 1).
struct alignas(64) TileConfig {
  uint8_t palette = 1;
  uint8_t startRow = 0;
  uint8_t reserved[14] = {};
  uint16_t bytesPerRow[16] = {};
  uint8_t rows[16] = {};
};

/// Tiles 0-3 accumulate the block (0: rows 0-15 x columns 0-15, 1: rows
/// 0-15 x 16-31, 2: rows 16-31 x 0-15, 3: rows 16-31 x 16-31), 4 and 5 hold
/// the input's two 16-row halves, 6 and 7 the weight's two 16-column panels.
/// `rows` (1..32) is the block's row count.
TileConfig tileConfig(int64_t rows) {
  TileConfig cfg;
  uint8_t top = uint8_t(std::min<int64_t>(rows, 16));
  uint8_t bottom = uint8_t(rows - top);
  auto set = [&](int tile, uint8_t r) {
    cfg.rows[tile] = r;
    cfg.bytesPerRow[tile] = r ? 64 : 0;
  };
  set(0, top);
  set(1, top);
  set(2, bottom);
  set(3, bottom);
  set(4, top);
  set(5, bottom);
  set(6, 16);
  set(7, 16);
  return cfg;
}

struct Shape {
  const uint16_t *a; // input rows, lda apart (bf16)
  int64_t lda;
  const uint16_t *b; // packed weight
  int64_t kPadded, n;
  int64_t kSlice;
};

/// One thread's work: row blocks [m0, m1) x column blocks [c0, c1), rows
/// below `rows`.
LMOPT_AMX_TARGET void runRange(const Shape &s, int64_t rows, int64_t m0,
                               int64_t m1, int64_t c0, int64_t c1,
                               int64_t chunk, const Epilogue &e, float *out,
                               bool avx512, float *partial) {
  alignas(64) float block[kBlock * kBlock];
  const int64_t panelStride = s.kPadded / 2 * kPanelCols * 2;
  const size_t blockStride = size_t(s.lda) * 2;
  int64_t configured = -1;
  for (int64_t cb = c0; cb < c1; cb += chunk) {
    const int64_t cEnd = std::min(c1, cb + chunk);
    for (int64_t mb = m0; mb < m1; ++mb) {
      const int64_t r0 = mb * kBlock;
      const int64_t blockRows = std::min(kBlock, rows - r0);
      if (blockRows != configured) {
        TileConfig cfg = tileConfig(blockRows);
        _tile_loadconfig(&cfg);
        configured = blockRows;
      }
      const bool twoHalves = blockRows > 16;
      const uint16_t *a0 = s.a + r0 * s.lda;
      const uint16_t *a1 = a0 + 16 * s.lda;
      for (int64_t k0 = 0; k0 < s.kPadded; k0 += s.kSlice) {
        const int64_t k1 = std::min(s.kPadded, k0 + s.kSlice);
        const bool first = k0 == 0, last = k1 == s.kPadded;
        for (int64_t c = cb; c < cEnd; ++c) {
          const uint16_t *b0 = s.b + 2 * c * panelStride;
          const uint16_t *b1 = b0 + panelStride;
          float *sum = partial + (c - cb) * kBlock * kBlock;
          if (first) {
            _tile_zero(0);
            _tile_zero(1);
            if (twoHalves) {
              _tile_zero(2);
              _tile_zero(3);
            }
          } else {
            _tile_loadd(0, sum, kBlock * 4);
            _tile_loadd(1, sum + 16, kBlock * 4);
            if (twoHalves) {
              _tile_loadd(2, sum + 16 * kBlock, kBlock * 4);
              _tile_loadd(3, sum + 16 * kBlock + 16, kBlock * 4);
            }
          }
          // The second half's branch is the same for the whole block, so
          // it costs nothing next to the 16-cycle tile products.
          for (int64_t k = k0; k < k1; k += kStepK) {
            _tile_loadd(4, a0 + k, blockStride);
            _tile_loadd(6, b0 + k * kPanelCols, 64);
            _tile_dpbf16ps(0, 4, 6);
            _tile_loadd(7, b1 + k * kPanelCols, 64);
            _tile_dpbf16ps(1, 4, 7);
            if (twoHalves) {
              _tile_loadd(5, a1 + k, blockStride);
              _tile_dpbf16ps(2, 5, 6);
              _tile_dpbf16ps(3, 5, 7);
            }
          }
          float *to = last ? block : sum;
          _tile_stored(0, to, kBlock * 4);
          _tile_stored(1, to + 16, kBlock * 4);
          if (twoHalves) {
            _tile_stored(2, to + 16 * kBlock, kBlock * 4);
            _tile_stored(3, to + 16 * kBlock + 16, kBlock * 4);
          }
          if (!last)
            continue;
          const int64_t col = c * kBlock;
          Epilogue be = e;
          if (e.bias)
            be.bias = e.bias + col;
          if (e.residual)
            be.residual = e.residual + r0 * s.n + col;
          applyEpilogueBlock(block, kBlock, blockRows,
                             std::min(kBlock, s.n - col), be,
                             out + r0 * s.n + col, s.n, avx512);
        }
      }
    }
  }
  _tile_release();
}

} // namespace
#endif // LMOPT_AMX

void quant::gemmAmxBf16(const uint16_t *input, int64_t rows,
                        const AmxBf16Weight &w, const Epilogue &e, float *out,
                        int threads, void *scratch) {
#ifdef LMOPT_AMX
  Shape s;
  s.a = input;
  s.lda = w.k;
  if (w.k != w.kPadded) {
    // Tiles read 32 K values per row: copy the rows with K padded by zeros.
    uint16_t *padded = static_cast<uint16_t *>(scratch);
    for (int64_t r = 0; r < rows; ++r) {
      std::memcpy(padded + r * w.kPadded, input + r * w.k, size_t(w.k) * 2);
      std::memset(padded + r * w.kPadded + w.k, 0, size_t(w.kPadded - w.k) * 2);
    }
    s.a = padded;
    s.lda = w.kPadded;
  }
  s.b = w.data.get();
  s.kPadded = w.kPadded;
  s.n = w.n;
  s.kSlice = std::min(w.kPadded, w.kPadded <= 1024 ? int64_t(256) : 512);
  // Column blocks per chunk: about 768 KiB of packed weight.
  const int64_t chunk =
      std::max<int64_t>(1, (768 * 1024) / (w.kPadded * kBlock * 2));
  const int64_t rowBlocks = (rows + kBlock - 1) / kBlock;
  const int64_t colBlocks = w.nPadded / kBlock;
  int team = threads > 0 ? threads : omp_get_max_threads();
  team =
      int(std::max<int64_t>(1, std::min<int64_t>(team, rowBlocks * colBlocks)));
  const bool avx512 = useAvx512();
#pragma omp parallel num_threads(team)
  {
    const int64_t t = omp_get_thread_num(), nt = omp_get_num_threads();
    std::vector<float> partial(size_t(chunk * kBlock * kBlock));
    if (colBlocks >= nt)
      runRange(s, rows, 0, rowBlocks, colBlocks * t / nt,
               colBlocks * (t + 1) / nt, chunk, e, out, avx512, partial.data());
    else
      runRange(s, rows, rowBlocks * t / nt, rowBlocks * (t + 1) / nt, 0,
               colBlocks, chunk, e, out, avx512, partial.data());
  }
#else
  (void)input;
  (void)rows;
  (void)w;
  (void)e;
  (void)out;
  (void)threads;
  (void)scratch;
#endif
}

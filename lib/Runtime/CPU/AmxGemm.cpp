//===- AmxGemm.cpp - bf16 and int8 products on AMX tiles ------------------===//
//
// See AmxGemm.h for the layout and the blocking. Every function that
// touches the tile registers carries the AMX target attribute, so the rest
// of the runtime is compiled for the baseline ISA and this code runs only
// after amxBf16Usable().
//
//===----------------------------------------------------------------------===//

#include "AmxGemm.h"
#include "OmpRegionSync.h"

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
  __attribute__((target("amx-tile,amx-bf16,amx-int8,avx512f,avx512bw")))
#endif

using namespace lmopt::runtime;
using namespace lmopt::runtime::quant;

// GCC 12 reports its own AVX-512 conversion intrinsics' undefined-source
// operand as maybe uninitialized (QuantKernels.cpp does the same).
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

namespace {
constexpr int64_t kBlock = 32;     // rows and columns of one product block
constexpr int64_t kPanelCols = 16; // columns of one packed panel (one tile)
// How many K steps (tiles of 1 KiB) ahead the weight panels are prefetched.
// Prefetches past the packed buffer's end are dropped by the CPU (they
// never fault).
constexpr int64_t kPrefetchSteps = 8;
// Inputs of at most this many 32-row blocks run column block by column
// block (runColumns): BERT-base at batch 1 (128 rows), whose weights come
// from memory once per run, went from 24.8 to 22.5 ms in bf16 and 17.8 to
// 17.5 ms in int8 dynamic.
constexpr int64_t kColumnOrderRowBlocks = 4;
// Inputs of at least this many 32-row blocks per thread are split between
// the threads by rows (each thread all the columns of its rows), fewer by
// columns: a thread then reads the rows that the step before it wrote on
// the same core (its row ranges are split the same way) and both threads
// stream the same weight chunk through the shared L3. BERT-base batch 8
// (32 row blocks), old and new binaries alternating, 4-5 rounds of
// `lmopt-run --bench 10`: int8 static 78.0 -> 74.8 ms, int8 dynamic 81.2
// -> 79.5, bf16 116.0 -> 114.6 (the output projections 10% faster). At 8
// blocks a thread the split is even within one block in 16.
constexpr int64_t kRowSplitBlocksPerThread = 8;
constexpr int64_t kStepBytes = 64; // bytes of K per input tile row

int64_t roundUp(int64_t x, int64_t m) { return (x + m - 1) / m * m; }
} // namespace

void AmxWeight::Free::operator()(void *p) const { std::free(p); }

/// CPUID.(7, 0):EDX bit `feature` (22: AMX-BF16, 24: AMX-TILE, 25:
/// AMX-INT8), AMX-TILE, oneDNN's cap and the tile permission.
static bool amxUsable(unsigned feature) {
#ifdef LMOPT_AMX
  static const bool tiles = [] {
    unsigned eax, ebx, ecx, edx;
    if (!__get_cpuid_count(7, 0, &eax, &ebx, &ecx, &edx) || !(edx & (1u << 24)))
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
  unsigned eax, ebx, ecx, edx;
  return tiles && __get_cpuid_count(7, 0, &eax, &ebx, &ecx, &edx) &&
         (edx & (1u << feature));
#else
  (void)feature;
  return false;
#endif
}

bool quant::amxBf16Usable() { return amxUsable(22); }
bool quant::amxInt8Usable() { return amxUsable(25); }

/// Sets `out`'s sizes for a [K, N] weight of `elementBytes`.
static void layout(int64_t elementBytes, int64_t k, int64_t n, AmxWeight &out) {
  out.elementBytes = elementBytes;
  out.k = k;
  out.n = n;
  out.kPadded = roundUp(k, kStepBytes / elementBytes);
  out.nPadded = roundUp(n, kBlock);
}

/// layout(), and a buffer `out` owns.
static bool allocate(int64_t elementBytes, int64_t k, int64_t n,
                     AmxWeight &out) {
  layout(elementBytes, k, n, out);
  void *p = nullptr;
  if (posix_memalign(&p, 64, std::max<size_t>(64, out.bytes())) != 0 || !p)
    return false;
  out.owned.reset(static_cast<uint8_t *>(p));
  out.data = out.owned.get();
  return true;
}

/// Writes panels [p0, p1) of `out` from `weight` of `Element` (2 or 1
/// bytes) as AmxGemm.h describes. Each panel row takes `group` consecutive
/// K values of 16 columns; the loops follow the stored order (columns
/// within a K row, or K within a column of a transposed weight).
template <typename Element>
static void fillPanels(const Element *weight, bool transposed,
                       const AmxWeight &out, int64_t p0, int64_t p1) {
  constexpr int64_t group = 4 / sizeof(Element); // K values per 4 bytes
  const int64_t k = out.k, n = out.n, groups = out.kPadded / group;
  Element *dst = reinterpret_cast<Element *>(out.data);
  for (int64_t panel = p0; panel < p1; ++panel) {
    Element *base = dst + panel * groups * kPanelCols * group;
    const int64_t col0 = panel * kPanelCols;
    const int64_t cols = std::max<int64_t>(0, std::min(kPanelCols, n - col0));
    if (cols < kPanelCols || k % group)
      std::memset(base, 0,
                  size_t(groups * kPanelCols * group) * sizeof(Element));
    if (transposed) {
      for (int64_t c = 0; c < cols; ++c) {
        const Element *src = weight + (col0 + c) * k;
        for (int64_t kk = 0; kk < k; ++kk)
          base[(kk / group * kPanelCols + c) * group + kk % group] = src[kk];
      }
    } else {
      for (int64_t kk = 0; kk < k; ++kk) {
        const Element *src = weight + kk * n + col0;
        Element *row = base + kk / group * kPanelCols * group + kk % group;
        for (int64_t c = 0; c < cols; ++c)
          row[c * group] = src[c];
      }
    }
    // Rows of K past the end (k rounded up to the tile step) stay zero.
    const int64_t kRows = (k + group - 1) / group;
    if (kRows < groups)
      std::memset(base + kRows * kPanelCols * group, 0,
                  size_t((groups - kRows) * kPanelCols * group) *
                      sizeof(Element));
  }
}

bool quant::packAmxBf16(const uint16_t *weight, bool transposed, int64_t k,
                        int64_t n, AmxWeight &out) {
  if (!allocate(2, k, n, out))
    return false;
  fillPanels(weight, transposed, out, 0, out.nPadded / kPanelCols);
  return true;
}

bool quant::packAmxInt8(const int8_t *weight, bool transposed, int64_t k,
                        int64_t n, AmxWeight &out) {
  if (!allocate(1, k, n, out))
    return false;
  fillPanels(weight, transposed, out, 0, out.nPadded / kPanelCols);
  return true;
}

void quant::layoutAmxBf16(int64_t k, int64_t n, AmxWeight &out) {
  layout(2, k, n, out);
}

#ifdef LMOPT_AMX
/// Transposes 16 x 16 32-bit words in registers: v[r] lane c becomes the
/// word that was v[c] lane r (unpack 32 and 64-bit, then two rounds of
/// 128-bit lane shuffles).
LMOPT_AMX_TARGET static inline void transposeWords(__m512i v[16]) {
  __m512i t[16];
  for (int c = 0; c < 16; c += 2) {
    t[c] = _mm512_unpacklo_epi32(v[c], v[c + 1]);
    t[c + 1] = _mm512_unpackhi_epi32(v[c], v[c + 1]);
  }
  for (int c = 0; c < 16; c += 4) {
    v[c] = _mm512_unpacklo_epi64(t[c], t[c + 2]);
    v[c + 1] = _mm512_unpackhi_epi64(t[c], t[c + 2]);
    v[c + 2] = _mm512_unpacklo_epi64(t[c + 1], t[c + 3]);
    v[c + 3] = _mm512_unpackhi_epi64(t[c + 1], t[c + 3]);
  }
  for (int c = 0; c < 4; ++c) {
    t[c] = _mm512_shuffle_i32x4(v[c], v[c + 4], 0x88);
    t[c + 4] = _mm512_shuffle_i32x4(v[c], v[c + 4], 0xdd);
    t[c + 8] = _mm512_shuffle_i32x4(v[c + 8], v[c + 12], 0x88);
    t[c + 12] = _mm512_shuffle_i32x4(v[c + 8], v[c + 12], 0xdd);
  }
  for (int c = 0; c < 8; ++c) {
    v[c] = _mm512_shuffle_i32x4(t[c], t[c + 8], 0x88);
    v[c + 8] = _mm512_shuffle_i32x4(t[c], t[c + 8], 0xdd);
  }
}

/// fillPanels for bf16 with AVX-512 where the panel is whole (16 columns)
/// and K is even: [K, N] interleaves two K rows' 16 values per tile row;
/// [N, K] transposes 16 x 16 blocks of K pairs (32-bit words) of 16
/// columns. The rest goes to fillPanels.
LMOPT_AMX_TARGET static void fillPanelsBf16(const uint16_t *weight,
                                            bool transposed,
                                            const AmxWeight &out, int64_t p0,
                                            int64_t p1) {
  const int64_t k = out.k, n = out.n, pairs = out.kPadded / 2;
  uint16_t *dst = reinterpret_cast<uint16_t *>(out.data);
  for (int64_t panel = p0; panel < p1; ++panel) {
    const int64_t col0 = panel * kPanelCols;
    if (col0 + kPanelCols > n || k % 2) {
      fillPanels(weight, transposed, out, panel, panel + 1);
      continue;
    }
    uint16_t *base = dst + panel * pairs * kPanelCols * 2;
    const int64_t kPairs = k / 2;
    if (!transposed) {
      for (int64_t i = 0; i < kPairs; ++i)
        _mm512_storeu_si512(
            base + i * 32,
            interleave16(_mm256_loadu_si256(reinterpret_cast<const __m256i *>(
                             weight + 2 * i * n + col0)),
                         _mm256_loadu_si256(reinterpret_cast<const __m256i *>(
                             weight + (2 * i + 1) * n + col0))));
    } else {
      // Column c's K pairs are 32-bit words of its stored row; tile row i
      // holds word i of the 16 columns. Blocks of 16 words are transposed
      // in registers; a last partial block goes word by word.
      const uint32_t *rows = reinterpret_cast<const uint32_t *>(weight);
      uint32_t *to = reinterpret_cast<uint32_t *>(base);
      const int64_t rowWords = k / 2;
      int64_t i0 = 0;
      for (; i0 + 16 <= kPairs; i0 += 16) {
        __m512i v[16];
        for (int c = 0; c < 16; ++c)
          v[c] = _mm512_loadu_si512(rows + (col0 + c) * rowWords + i0);
        transposeWords(v);
        // v[w] now holds word i0 + w of the 16 columns, in column order.
        for (int w = 0; w < 16; ++w)
          _mm512_storeu_si512(to + (i0 + w) * 16, v[w]);
      }
      for (int64_t i = i0; i < kPairs; ++i)
        for (int64_t c = 0; c < 16; ++c)
          to[i * 16 + c] = rows[(col0 + c) * rowWords + i];
    }
    if (kPairs < pairs)
      std::memset(base + kPairs * 32, 0,
                  size_t(pairs - kPairs) * 32 * sizeof(uint16_t));
  }
}
#endif

#ifdef LMOPT_AMX
/// transposeBf16 on rows [r0, r1) of the output: blocks of 32 input rows
/// x 16 input columns, each pair of input rows interleaved into 32-bit
/// words and the 16 x 16 words transposed, give 16 output rows' 32
/// consecutive values; the edges go value by value.
LMOPT_AMX_TARGET static void transposeRows(const uint16_t *in, int64_t rows,
                                           int64_t cols, uint16_t *out,
                                           int64_t r0, int64_t r1) {
  // Output row r is input column r.
  int64_t c0 = r0;
  for (; c0 + 16 <= r1; c0 += 16) {
    int64_t k0 = 0;
    for (; k0 + 32 <= rows; k0 += 32) {
      __m512i v[16];
      for (int p = 0; p < 16; ++p)
        v[p] =
            interleave16(_mm256_loadu_si256(reinterpret_cast<const __m256i *>(
                             in + (k0 + 2 * p) * cols + c0)),
                         _mm256_loadu_si256(reinterpret_cast<const __m256i *>(
                             in + (k0 + 2 * p + 1) * cols + c0)));
      transposeWords(v);
      for (int j = 0; j < 16; ++j)
        _mm512_storeu_si512(out + (c0 + j) * rows + k0, v[j]);
    }
    for (int64_t j = c0; j < c0 + 16; ++j)
      for (int64_t k = k0; k < rows; ++k)
        out[j * rows + k] = in[k * cols + j];
  }
  for (int64_t j = c0; j < r1; ++j)
    for (int64_t k = 0; k < rows; ++k)
      out[j * rows + k] = in[k * cols + j];
}
#endif

void quant::transposeBf16(const uint16_t *in, int64_t rows, int64_t cols,
                          uint16_t *out, int threads) {
  // Threads take ranges of output rows in multiples of 16.
  const int64_t groups = (cols + 15) / 16;
  int team = threads > 0 ? threads : omp_get_max_threads();
  team = int(std::max<int64_t>(1, std::min<int64_t>(team, groups)));
  OmpRegionSync ompSync;
  ompSync.fork();
#pragma omp parallel num_threads(team)
  {
    ompSync.enter();
    const int64_t t = omp_get_thread_num(), nt = omp_get_num_threads();
    const int64_t r0 = std::min(cols, groups * t / nt * 16);
    const int64_t r1 = std::min(cols, groups * (t + 1) / nt * 16);
#ifdef LMOPT_AMX
    transposeRows(in, rows, cols, out, r0, r1);
#else
    for (int64_t j = r0; j < r1; ++j)
      for (int64_t k = 0; k < rows; ++k)
        out[j * rows + k] = in[k * cols + j];
#endif
    ompSync.leave();
  }
  ompSync.join();
}

void quant::repackAmxBf16(const uint16_t *weight, bool transposed,
                          AmxWeight &out, int threads) {
  const int64_t panels = out.nPadded / kPanelCols;
  int team = threads > 0 ? threads : omp_get_max_threads();
  team = int(std::max<int64_t>(1, std::min<int64_t>(team, panels)));
  OmpRegionSync ompSync;
  ompSync.fork();
#pragma omp parallel num_threads(team)
  {
    ompSync.enter();
    const int64_t t = omp_get_thread_num(), nt = omp_get_num_threads();
#ifdef LMOPT_AMX
    fillPanelsBf16(weight, transposed, out, panels * t / nt,
                   panels * (t + 1) / nt);
#else
    fillPanels(weight, transposed, out, panels * t / nt, panels * (t + 1) / nt);
#endif
    ompSync.leave();
  }
  ompSync.join();
}

size_t quant::amxScratchBytes(int64_t rows, const AmxWeight &w) {
  return w.k == w.kPadded ? 0 : size_t(rows * w.kPadded * w.elementBytes);
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

/// The tile product of one kind: bf16 x bf16, s8 x s8 or u8 x s8.
enum class Kind { BF16, S8, U8 };

struct Shape {
  const uint8_t *a; // input rows, lda bytes apart
  int64_t lda;
  const uint8_t *b; // packed weight
  int64_t kBytes;   // bytes of K per row (padded)
  int64_t n;
  int64_t sliceBytes;
  /// int8: the weight's scales (one, or one per column), and what to
  /// subtract from each column's i32 sums first (null: nothing).
  const float *weightScales = nullptr;
  bool perChannel = false;
  const int32_t *columnOffsets = nullptr;
};

/// The block's last step: int8 sums scaled to f32, then the epilogue into
/// the output (rows r0.., columns col..).
template <Kind kind>
LMOPT_AMX_TARGET void finishBlock(const Shape &s, float *block, int64_t r0,
                                  int64_t blockRows, int64_t col,
                                  const Epilogue &e, float *out, bool avx512) {
  if constexpr (kind != Kind::BF16) {
    // i32 sums less the column offsets (exact), to f32, times the
    // weight's scales (N of them: the columns past N, whose sums are zero,
    // read none).
    const int32_t *bits = reinterpret_cast<const int32_t *>(block);
    for (int64_t j = 0; j < 2; ++j) {
      const int64_t from = col + j * 16;
      const int64_t valid =
          std::max<int64_t>(0, std::min<int64_t>(16, s.n - from));
      const __mmask16 lanes = __mmask16((1u << valid) - 1);
      const __m512 scale =
          s.perChannel ? _mm512_maskz_loadu_ps(lanes, s.weightScales + from)
                       : _mm512_set1_ps(s.weightScales[0]);
      const __m512i offset =
          s.columnOffsets
              ? _mm512_maskz_loadu_epi32(lanes, s.columnOffsets + from)
              : _mm512_setzero_si512();
      for (int64_t r = 0; r < blockRows; ++r) {
        const int64_t at = r * kBlock + j * 16;
        _mm512_store_ps(
            block + at,
            _mm512_mul_ps(_mm512_cvtepi32_ps(_mm512_sub_epi32(
                              _mm512_load_si512(bits + at), offset)),
                          scale));
      }
    }
  }
  Epilogue be = e;
  if (e.bias)
    be.bias = e.bias + col;
  if (e.columnShift)
    be.columnShift = e.columnShift + col;
  if (e.rowScales)
    be.rowScales = e.rowScales + r0;
  if (e.rowSums)
    be.rowSums = e.rowSums + r0;
  if (e.residual)
    be.residual = e.residual + r0 * s.n + col;
  if (e.bf16Out)
    be.bf16Out = e.bf16Out + r0 * s.n + col;
  if (e.q8Out)
    be.q8Out = e.q8Out + r0 * s.n + col;
  applyEpilogueBlock(block, kBlock, blockRows, std::min(kBlock, s.n - col), be,
                     out ? out + r0 * s.n + col : nullptr, s.n, avx512);
}

/// A 32-row block of the input: its first row and row count (the last
/// block may be shorter), whether it fills a second 16-row tile, and the
/// two halves' first rows.
struct RowBlock {
  int64_t r0, rows;
  bool twoHalves;
  const uint8_t *a0, *a1;
};

/// Row block `mb`, the tiles configured for its row count unless
/// `configured` already says they are.
LMOPT_AMX_TARGET inline RowBlock rowBlock(const Shape &s, int64_t rows,
                                          int64_t mb, int64_t &configured) {
  RowBlock rb;
  rb.r0 = mb * kBlock;
  rb.rows = std::min(kBlock, rows - rb.r0);
  if (rb.rows != configured) {
    configureAmxTiles(rb.rows);
    configured = rb.rows;
  }
  rb.twoHalves = rb.rows > 16;
  rb.a0 = s.a + rb.r0 * s.lda;
  rb.a1 = rb.a0 + 16 * s.lda;
  return rb;
}

/// Stores the accumulator tiles 0-3 as a 32 x 32 f32 block (rows
/// kBlock floats apart); tiles 2-3 only with `twoHalves`.
LMOPT_AMX_TARGET inline void storeTiles(float *to, bool twoHalves) {
  _tile_stored(0, to, kBlock * 4);
  _tile_stored(1, to + 16, kBlock * 4);
  if (twoHalves) {
    _tile_stored(2, to + 16 * kBlock, kBlock * 4);
    _tile_stored(3, to + 16 * kBlock + 16, kBlock * 4);
  }
}

/// Loads the accumulator tiles 0-3 from a block storeTiles wrote.
LMOPT_AMX_TARGET inline void loadTiles(const float *from, bool twoHalves) {
  _tile_loadd(0, from, kBlock * 4);
  _tile_loadd(1, from + 16, kBlock * 4);
  if (twoHalves) {
    _tile_loadd(2, from + 16 * kBlock, kBlock * 4);
    _tile_loadd(3, from + 16 * kBlock + 16, kBlock * 4);
  }
}

/// Tiles 0-3 += tiles 4-5 (input halves) x tiles 6-7 (weight panels); the
/// second half's products only with `twoHalves`.
template <Kind kind> LMOPT_AMX_TARGET inline void tileProducts(bool twoHalves) {
  if constexpr (kind == Kind::BF16) {
    _tile_dpbf16ps(0, 4, 6);
    _tile_dpbf16ps(1, 4, 7);
    if (twoHalves) {
      _tile_dpbf16ps(2, 5, 6);
      _tile_dpbf16ps(3, 5, 7);
    }
  } else if constexpr (kind == Kind::S8) {
    _tile_dpbssd(0, 4, 6);
    _tile_dpbssd(1, 4, 7);
    if (twoHalves) {
      _tile_dpbssd(2, 5, 6);
      _tile_dpbssd(3, 5, 7);
    }
  } else {
    _tile_dpbusd(0, 4, 6);
    _tile_dpbusd(1, 4, 7);
    if (twoHalves) {
      _tile_dpbusd(2, 5, 6);
      _tile_dpbusd(3, 5, 7);
    }
  }
}

/// Zeroes the accumulator tiles 0-3 (2-3 only with `twoHalves`).
LMOPT_AMX_TARGET inline void zeroTiles(bool twoHalves) {
  _tile_zero(0);
  _tile_zero(1);
  if (twoHalves) {
    _tile_zero(2);
    _tile_zero(3);
  }
}

/// Whether runRange (inputs of more than kColumnOrderRowBlocks row blocks)
/// loads the weight tiles of `kind` with TILELOADDT1 (no L1 allocation),
/// keeps a whole-K input block in L1 and defers the epilogues to the end of
/// each row block's pass over a chunk: bf16 only. On BERT-base's K = 768
/// products the tile loop went from 1.36 to 1.73 TFLOP/s on one thread with the
/// three together (the weight panels, streamed through L1, evicted the 48 KiB
/// input block; the epilogue right after each block evicted it too), and batch
/// 8 bf16 from 121 to 116 ms; int8, whose input block is half as large, ran
/// 3-5% slower that way, and so did short inputs (runColumns) streaming theirs.
template <Kind kind> constexpr bool kStreamWeights = kind == Kind::BF16;

/// One step of 64 K bytes at byte `k`: the row block's input tiles, the two
/// weight panels' tiles (with `stream`, past L1), and their products into
/// tiles 0-3.
template <Kind kind, bool stream = false>
LMOPT_AMX_TARGET inline void tileStep(const Shape &s, const RowBlock &rb,
                                      const uint8_t *b0, const uint8_t *b1,
                                      int64_t k) {
  _tile_loadd(4, rb.a0 + k, s.lda);
  if constexpr (stream) {
    _tile_stream_loadd(6, b0 + k * kPanelCols, 64);
    _tile_stream_loadd(7, b1 + k * kPanelCols, 64);
  } else {
    _tile_loadd(6, b0 + k * kPanelCols, 64);
    _tile_loadd(7, b1 + k * kPanelCols, 64);
  }
  if (rb.twoHalves)
    _tile_loadd(5, rb.a1 + k, s.lda);
  tileProducts<kind>(rb.twoHalves);
}

/// One thread's work for a few row blocks [m0, m1) (a short input, whose
/// weight is read from memory once): column block by column block, every
/// row block over the whole K, so the panels of a column block serve every
/// row block while they are in cache and the next block's panels are
/// prefetched a little per step meanwhile.
template <Kind kind>
LMOPT_AMX_TARGET void runColumns(const Shape &s, int64_t rows, int64_t m0,
                                 int64_t m1, int64_t c0, int64_t c1,
                                 const Epilogue &e, float *out, bool avx512) {
  alignas(64) float block[kBlock * kBlock];
  const int64_t panelBytes = s.kBytes / 4 * 64;
  const int64_t steps = (m1 - m0) * (s.kBytes / kStepBytes);
  // Lines of the next column block's two panels per step.
  const int64_t perStep = (2 * panelBytes / 64 + steps - 1) / steps;
  int64_t configured = -1;
  for (int64_t c = c0; c < c1; ++c) {
    const uint8_t *b0 = s.b + 2 * c * panelBytes;
    const uint8_t *b1 = b0 + panelBytes;
    // The next column block's panels, to L2 (to L1 they evict the input
    // rows; two blocks ahead, or no prefetch, was slower).
    const char *next = reinterpret_cast<const char *>(b1 + panelBytes);
    const char *nextEnd = c + 1 < c1 ? next + 2 * panelBytes : next;
    for (int64_t mb = m0; mb < m1; ++mb) {
      const RowBlock rb = rowBlock(s, rows, mb, configured);
      zeroTiles(rb.twoHalves);
      for (int64_t k = 0; k < s.kBytes; k += kStepBytes) {
        for (int64_t i = 0; i < perStep && next < nextEnd; ++i, next += 64)
          _mm_prefetch(next, _MM_HINT_T1);
        tileStep<kind>(s, rb, b0, b1, k);
      }
      storeTiles(block, rb.twoHalves);
      finishBlock<kind>(s, block, rb.r0, rb.rows, c * kBlock, e, out, avx512);
    }
  }
  _tile_release();
}

/// One thread's work: row blocks [m0, m1) x column blocks [c0, c1), rows
/// below `rows`.
template <Kind kind>
LMOPT_AMX_TARGET void runRange(const Shape &s, int64_t rows, int64_t m0,
                               int64_t m1, int64_t c0, int64_t c1,
                               int64_t chunk, const Epilogue &e, float *out,
                               bool avx512, float *partial) {
  alignas(64) float block[kBlock * kBlock];
  // A panel is kBytes / 4 rows of 64 bytes.
  const int64_t panelBytes = s.kBytes / 4 * 64;
  int64_t configured = -1;
  for (int64_t cb = c0; cb < c1; cb += chunk) {
    const int64_t cEnd = std::min(c1, cb + chunk);
    for (int64_t mb = m0; mb < m1; ++mb) {
      const RowBlock rb = rowBlock(s, rows, mb, configured);
      for (int64_t k0 = 0; k0 < s.kBytes; k0 += s.sliceBytes) {
        const int64_t k1 = std::min(s.kBytes, k0 + s.sliceBytes);
        const bool first = k0 == 0, last = k1 == s.kBytes;
        for (int64_t c = cb; c < cEnd; ++c) {
          const uint8_t *b0 = s.b + 2 * c * panelBytes;
          const uint8_t *b1 = b0 + panelBytes;
          // i32 sums (int8) are stored and reloaded as their bits.
          float *sum = partial + (c - cb) * kBlock * kBlock;
          if (first)
            zeroTiles(rb.twoHalves);
          else
            loadTiles(sum, rb.twoHalves);
          // The chunk's first row block reads the weight from memory: its
          // panels are prefetched to L1 kPrefetchSteps steps ahead (the
          // stream crosses a 4 KiB page every 4 steps, where the hardware
          // prefetcher starts over). The other row blocks find the chunk in
          // L2, where prefetching costs more than it gains (BERT-base batch
          // 8: 7-15% slower when every block prefetches). Before runColumns
          // took short inputs, this made BERT-base batch 1 6% faster.
          const bool prefetch = mb == m0;
          for (int64_t k = k0; k < k1; k += kStepBytes) {
            if (prefetch) {
              const int64_t ahead =
                  (k + kPrefetchSteps * kStepBytes) * kPanelCols;
              for (int64_t line = 0; line < 16 * 64; line += 64) {
                _mm_prefetch(reinterpret_cast<const char *>(b0 + ahead + line),
                             _MM_HINT_T0);
                _mm_prefetch(reinterpret_cast<const char *>(b1 + ahead + line),
                             _MM_HINT_T0);
              }
            }
            tileStep<kind, kStreamWeights<kind>>(s, rb, b0, b1, k);
          }
          // Deferred: the finished block stays in its partial sums.
          const bool now = last && !kStreamWeights<kind>;
          storeTiles(now ? block : sum, rb.twoHalves);
          if (now)
            finishBlock<kind>(s, block, rb.r0, rb.rows, c * kBlock, e, out,
                              avx512);
        }
        if (last && kStreamWeights<kind>)
          for (int64_t c = cb; c < cEnd; ++c)
            finishBlock<kind>(s, partial + (c - cb) * kBlock * kBlock, rb.r0,
                              rb.rows, c * kBlock, e, out, avx512);
      }
    }
  }
  _tile_release();
}

/// Pads the input's K when needed, picks the blocking and runs the team.
template <Kind kind>
void run(const void *input, int64_t rows, const AmxWeight &w,
         const float *weightScales, bool perChannel, const Epilogue &e,
         float *out, int threads, void *scratch,
         const int32_t *columnOffsets = nullptr) {
  Shape s;
  s.columnOffsets = columnOffsets;
  const int64_t rowBytes = w.k * w.elementBytes;
  s.a = static_cast<const uint8_t *>(input);
  s.lda = rowBytes;
  s.kBytes = w.kPadded * w.elementBytes;
  if (w.k != w.kPadded) {
    // Tiles read 64 bytes of K per row: copy the rows with K padded by
    // zeros.
    uint8_t *padded = static_cast<uint8_t *>(scratch);
    for (int64_t r = 0; r < rows; ++r) {
      std::memcpy(padded + r * s.kBytes, s.a + r * rowBytes, size_t(rowBytes));
      std::memset(padded + r * s.kBytes + rowBytes, 0,
                  size_t(s.kBytes - rowBytes));
    }
    s.a = padded;
    s.lda = s.kBytes;
  }
  s.b = w.data;
  s.n = w.n;
  // K up to 2048 bytes per row runs in slices of 512 (the input slice
  // stays in L1), or whole up to 1536 where the weights stream past L1
  // (the 48 KiB input block fits it, and no partial sums are stored and
  // reloaded); up to 8192 whole (a 32-row block of the input, at most
  // 256 KiB, stays in L2 beside the weight chunk: BERT-base's FFN output
  // projection, K = 3072, ran 17% (bf16) and 9% (int8) faster than in
  // slices of 1024); longer rows in slices of 1024.
  const int64_t wholeUpTo = kStreamWeights<kind> ? 1536 : 0;
  s.sliceBytes = s.kBytes <= wholeUpTo ? s.kBytes
                 : s.kBytes <= 2048    ? std::min<int64_t>(s.kBytes, 512)
                 : s.kBytes <= 8192    ? s.kBytes
                                       : 1024;
  s.weightScales = weightScales;
  s.perChannel = perChannel;
  // Column blocks per chunk: about 768 KiB of packed weight.
  const int64_t chunk =
      std::max<int64_t>(1, (768 * 1024) / (s.kBytes * kBlock));
  const int64_t rowBlocks = (rows + kBlock - 1) / kBlock;
  const int64_t colBlocks = w.nPadded / kBlock;
  int team = threads > 0 ? threads : omp_get_max_threads();
  team =
      int(std::max<int64_t>(1, std::min<int64_t>(team, rowBlocks * colBlocks)));
  const bool avx512 = useAvx512();
  OmpRegionSync ompSync;
  ompSync.fork();
#pragma omp parallel num_threads(team)
  {
    ompSync.enter();
    const int64_t t = omp_get_thread_num(), nt = omp_get_num_threads();
    // The partial sums' tile rows must not straddle cache lines: a tile
    // load or store of rows split across two lines took 4-6 times as long
    // on this machine.
    struct alignas(64) Line {
      float values[16];
    };
    std::vector<Line> lines(size_t(chunk * kBlock * kBlock / 16));
    float *partial = lines.front().values;
    if (rowBlocks <= kColumnOrderRowBlocks && colBlocks >= nt)
      runColumns<kind>(s, rows, 0, rowBlocks, colBlocks * t / nt,
                       colBlocks * (t + 1) / nt, e, out, avx512);
    else if (colBlocks >= nt && rowBlocks < kRowSplitBlocksPerThread * nt)
      runRange<kind>(s, rows, 0, rowBlocks, colBlocks * t / nt,
                     colBlocks * (t + 1) / nt, chunk, e, out, avx512, partial);
    else
      runRange<kind>(s, rows, rowBlocks * t / nt, rowBlocks * (t + 1) / nt, 0,
                     colBlocks, chunk, e, out, avx512, partial);
    ompSync.leave();
  }
  ompSync.join();
}

} // namespace

LMOPT_AMX_TARGET void quant::configureAmxTiles(int64_t rows) {
  TileConfig cfg = tileConfig(rows);
  // GCC 12 does not see that LDTILECFG reads all 64 bytes and drops the
  // stores of the rows and widths: make them visible first.
  asm volatile("" : : "r"(&cfg) : "memory");
  _tile_loadconfig(&cfg);
}
#else
void quant::configureAmxTiles(int64_t rows) { (void)rows; }
#endif // LMOPT_AMX

void quant::gemmAmxBf16(const uint16_t *input, int64_t rows, const AmxWeight &w,
                        const Epilogue &e, float *out, int threads,
                        void *scratch) {
#ifdef LMOPT_AMX
  run<Kind::BF16>(input, rows, w, nullptr, false, e, out, threads, scratch);
#else
  (void)input, (void)rows, (void)w, (void)e, (void)out, (void)threads,
      (void)scratch;
#endif
}

void quant::gemmAmxInt8(const void *input, bool inputSigned, int64_t rows,
                        const AmxWeight &w, const float *weightScales,
                        bool perChannel, const Epilogue &e, float *out,
                        int threads, void *scratch,
                        const int32_t *columnOffsets) {
#ifdef LMOPT_AMX
  if (inputSigned)
    run<Kind::S8>(input, rows, w, weightScales, perChannel, e, out, threads,
                  scratch, columnOffsets);
  else
    run<Kind::U8>(input, rows, w, weightScales, perChannel, e, out, threads,
                  scratch, columnOffsets);
#else
  (void)input, (void)inputSigned, (void)rows, (void)w, (void)weightScales,
      (void)perChannel, (void)e, (void)out, (void)threads, (void)scratch,
      (void)columnOffsets;
#endif
}

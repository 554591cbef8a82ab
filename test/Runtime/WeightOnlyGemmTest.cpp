//===- WeightOnlyGemmTest.cpp - The int4 and f16 weight-only GEMMs --------===//
//
// Both forms (AVX-512 and portable) of both GEMMs against the products
// summed in double, with QuantLinearStepTest.cpp's tolerance
// (|got - want| <= 1e-5 * mag + 1e-6, mag the sum of |x_k w_k|): f16 x f16
// products are exact in f32 and int4 weights are dequantized exactly as the
// formula says, so only the f32 sums round.
//
//===----------------------------------------------------------------------===//

#include "lmopt/Format/Float16.h"

#include "../../lib/Runtime/CPU/WeightOnlyGemm.h"
#include "../../lib/Runtime/CPU/QuantKernels.h"
#include "TestUtil.h"

#include <cmath>
#include <string>

using namespace lmopt::runtime;
using namespace lmopt::runtime::test;

namespace {

void checkWeightOnlyGemms(int64_t m, int64_t k) {
  SCOPED_TRACE(std::to_string(m) + "x" + std::to_string(k));
  const int64_t n = 70;
  std::vector<float> x = hashValues(901, m * k, 4.0);
  std::vector<uint16_t> xh, wh;
  for (float &v : x) {
    xh.push_back(floatToHalf(v));
    v = halfToFloat(xh.back());
  }
  std::vector<float> raw = hashValues(902, n * k, 1.0); // [N, K]
  std::vector<double> wf(size_t(n * k)), w4(size_t(n * k));
  std::vector<uint8_t> nibbles(size_t(n * k / 2), 0);
  std::vector<float> scales = hashValues(903, n * (k / 32), 0.1);
  for (float &sc : scales)
    sc = std::fabs(sc) + 0.01f;
  std::vector<uint8_t> zps(size_t(n * (k / 32)));
  for (int64_t j = 0; j < n; ++j)
    for (int64_t kk = 0; kk < k; ++kk) {
      size_t at = size_t(j * k + kk);
      wh.push_back(floatToHalf(raw[at]));
      wf[at] = halfToFloat(wh.back());
      int64_t blk = j * (k / 32) + kk / 32;
      zps[size_t(blk)] = uint8_t(blk % 16);
      int q = int((raw[at] + 0.5f) * 15.99f);
      nibbles[size_t(at / 2)] |= uint8_t(q << (kk % 2 ? 4 : 0));
      w4[at] = double(float(q - int(zps[size_t(blk)])) * scales[size_t(blk)]);
    }
  quant::F16Panels pf;
  quant::packF16(wh.data(), /*transposed=*/true, k, n, pf);
  quant::Int4Panels p4;
  quant::packInt4(nibbles.data(), scales.data(), zps.data(),
                  /*weightSigned=*/false, k, n, 32, p4);
  std::vector<float> scratch(quant::gemmScratchFloats(m, k, 2));
  for (bool avx512 : {false, quant::useAvx512()})
    for (int f16 = 0; f16 < 2; ++f16) {
      SCOPED_TRACE(std::string(f16 ? "f16" : "int4") +
                   (avx512 ? " avx512" : " portable"));
      std::vector<float> acc(size_t(m * 2 * quant::kPanel), -1.0f);
      // Every row is reported complete exactly once (threads get disjoint
      // ranges, so each writes its own counters).
      std::vector<int> finished(size_t(m), 0);
      quant::RowsDone done = [&](int64_t r0, int64_t r1) {
        for (int64_t r = r0; r < r1; ++r)
          ++finished[size_t(r)];
      };
      if (f16)
        quant::gemmF16(xh.data(), m, pf, scratch.data(), acc.data(), 2, avx512,
                       done);
      else
        quant::gemmInt4(x.data(), m, p4, scratch.data(), acc.data(), 2, avx512,
                        done);
      EXPECT_EQ(finished, std::vector<int>(size_t(m), 1));
      const std::vector<double> &w = f16 ? wf : w4;
      int bad = 0;
      for (int64_t r = 0; r < m; ++r)
        for (int64_t j = 0; j < 2 * quant::kPanel; ++j) {
          double want = 0, mag = 0;
          for (int64_t kk = 0; j < n && kk < k; ++kk) {
            double t = double(x[size_t(r * k + kk)]) * w[size_t(j * k + kk)];
            want += t;
            mag += std::fabs(t);
          }
          double got = acc[size_t(r * 2 * quant::kPanel + j)];
          if (!(std::fabs(got - want) <= 1e-5 * mag + 1e-6) && bad++ < 5)
            ADD_FAILURE() << "acc[" << r << ", " << j << "] = " << got
                          << ", want " << want;
        }
      EXPECT_EQ(bad, 0);
    }
}

} // namespace

TEST(WeightOnlyGemm, PortableAndAvx512FormsMatchTheFormula) {
  // N = 70: a partial second panel. 13 rows: two
  // full 6-row groups and one of 1; K = 160: a 128 chunk and a partial
  // one, and a partial 16-lane tail in the input regrouping. 700 rows of
  // K = 384 (1.05 MiB of f32 input) are two row blocks.
  checkWeightOnlyGemms(13, 160);
  // One and two rows: int4 takes the decoding path (no regrouping).
  checkWeightOnlyGemms(1, 160);
  checkWeightOnlyGemms(2, 384);
  checkWeightOnlyGemms(700, 384);
}

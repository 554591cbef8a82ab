//===- QuantLinearStepTest.cpp - QuantLinearStep against its semantics ----===//
//
// Every mode against a straightforward evaluation of docs/dialect.md's
// formula, "act(dequantize(q(input)) x dequantize(weight) + bias) +
// residual", written here independently of the step: quantization in f32 as
// the doc (and ONNX DynamicQuantizeLinear) define it, products summed in
// double, the activation in double.
//
// Tolerance: |got - want| <= 1e-5 * mag + 1e-6, where mag is the sum of the
// absolute values of everything summed into the output (|x_k w_k| over k,
// scaled, plus |bias| and |residual|). For int8 the integer product is exact
// (i32) and the step adds at most four f32 roundings (~5e-7 * mag) and the
// AVX-512 erf's 5e-7 absolute error; for bf16, fp16 and int4 the f32
// accumulation over K <= 768 terms in blocks stays well below 1e-5 * mag
// (bf16 and f16 products are exact in f32, so only the sums round). A wrongly
// rounded quantized input moves an output by about mag / (K * 64), so the
// quantizers are also checked bit for bit, ties included.
//
//===----------------------------------------------------------------------===//

#include "lmopt/Runtime/CPU/QuantLinearStep.h"
#include "lmopt/Format/Float16.h"
#include "lmopt/Runtime/CPU/Executor.h"

#include "../../lib/Runtime/CPU/AmxGemm.h"
#include "../../lib/Runtime/CPU/QuantKernels.h"
#include "TestUtil.h"

#include <cmath>
#include <cstring>

using namespace lmopt::runtime;
using namespace lmopt::runtime::test;

namespace {

double activate(double v, LinearActivation act) {
  switch (act) {
  case LinearActivation::None:
    return v;
  case LinearActivation::Relu:
    return v > 0 ? v : 0;
  case LinearActivation::Gelu:
    return 0.5 * v * (1 + std::erf(v / std::sqrt(2.0)));
  case LinearActivation::GeluTanh:
    return 0.5 * v *
           (1 + std::tanh(std::sqrt(2 / M_PI) * (v + 0.044715 * v * v * v)));
  }
  return v;
}

/// ONNX QuantizeLinear of one f32 value (what lmopt.quantize's kernels
/// compute): x / scale in f32, rounded half to even, plus the zero point,
/// saturated to u8 or i8; the byte as stored.
uint8_t quantizeLinear(float x, float scale, int32_t zeroPoint, bool isSigned) {
  float q = std::nearbyint(x / scale) + float(zeroPoint);
  float lo = isSigned ? -128.0f : 0.0f, hi = isSigned ? 127.0f : 255.0f;
  return uint8_t(int32_t(std::min(hi, std::max(lo, q))));
}

/// One case's operands, in the step's storage forms, and the reference's
/// dequantized view of them.
struct Case {
  QuantLinearStepDesc desc;
  int64_t m = 0;
  std::vector<float> input, bias, residual, scales;
  std::vector<int8_t> weight8;       // int8: [K, N] or [N, K]
  std::vector<uint16_t> weightBf16;  // bf16, or f16 bits for fp16
  std::vector<uint8_t> weight4;      // int4: [N, K/2]
  std::vector<uint8_t> zeroPoints4;  // int4: [N, K/block]
  std::vector<uint8_t> zeroPoints8;  // int8 (optional): [N] or [1]
  std::vector<uint8_t> staticInput;  // int8 static: u8 or i8 bytes
  std::vector<uint16_t> inputBf16;   // bf16, or f16 bits for fp16
  /// Dequantized weight, [K, N].
  std::vector<double> w;

  QuantLinearWeights weights() const {
    QuantLinearWeights out;
    switch (desc.mode) {
    case QuantLinearMode::BF16:
    case QuantLinearMode::FP16:
      out.weight = weightBf16.data();
      break;
    case QuantLinearMode::Int4WeightOnly:
      out.weight = weight4.data();
      out.zeroPoints = zeroPoints4.data();
      break;
    default:
      out.weight = weight8.data();
      out.zeroPoints = zeroPoints8.empty() ? nullptr : zeroPoints8.data();
    }
    out.scales = scales.data();
    return out;
  }
  const void *stepInput() const {
    if (desc.mode == QuantLinearMode::Int8Static)
      return staticInput.data();
    if (desc.mode == QuantLinearMode::BF16 ||
        desc.mode == QuantLinearMode::FP16)
      return inputBf16.data();
    return input.data();
  }
};

Case makeCase(QuantLinearMode mode, int64_t m, int64_t k, int64_t n,
              bool transpose, bool bias, LinearActivation act, bool residual,
              uint32_t seed) {
  Case c;
  c.desc.name = "dense_q";
  c.desc.mode = mode;
  c.desc.inputFeatures = k;
  c.desc.outputFeatures = n;
  c.desc.transposeWeight = transpose;
  c.desc.hasBias = bias;
  c.desc.activation = act;
  c.desc.hasResidual = residual;
  c.m = m;
  c.input = hashValues(seed, m * k, 4.0);
  // A few rows with one large value and one row of zeros exercise the row
  // scales' range.
  if (m > 2) {
    c.input[size_t(1 * k + 3)] = 37.5f;
    std::fill(c.input.begin() + 2 * k, c.input.begin() + 3 * k, 0.0f);
  }
  if (bias)
    c.bias = hashValues(seed + 1, n, 2.0);
  if (residual)
    c.residual = hashValues(seed + 2, m * n, 2.0);
  std::vector<float> raw = hashValues(seed + 3, k * n, 1.0); // [K, N]
  c.w.resize(size_t(k * n));
  if (mode == QuantLinearMode::BF16 || mode == QuantLinearMode::FP16) {
    bool f16 = mode == QuantLinearMode::FP16;
    auto narrow = [&](float x) {
      return f16 ? floatToHalf(x) : floatToBFloat16(x);
    };
    auto widen = [&](uint16_t b) {
      return f16 ? halfToFloat(b) : bfloat16ToFloat(b);
    };
    c.weightBf16.resize(size_t(k * n));
    for (int64_t kk = 0; kk < k; ++kk)
      for (int64_t j = 0; j < n; ++j) {
        uint16_t b = narrow(raw[size_t(kk * n + j)]);
        c.weightBf16[size_t(transpose ? j * k + kk : kk * n + j)] = b;
        c.w[size_t(kk * n + j)] = widen(b);
      }
    // The input as the cast before the linear leaves it (f16: the row of
    // 37.5 and values down to the subnormal range round like any other).
    for (float &x : c.input) {
      c.inputBf16.push_back(narrow(x));
      x = widen(c.inputBf16.back());
    }
  } else if (mode == QuantLinearMode::Int4WeightOnly) {
    int64_t block = c.desc.blockSize = k >= 64 ? 32 : 16;
    int64_t blocks = k / block;
    c.desc.hasZeroPoints = true;
    c.scales = hashValues(seed + 4, n * blocks, 0.1);
    for (float &s : c.scales)
      s = std::fabs(s) + 0.01f;
    c.weight4.assign(size_t(n * k / 2), 0);
    c.zeroPoints4.resize(size_t(n * blocks));
    std::vector<float> zr = hashValues(seed + 5, n * blocks, 1.0);
    for (int64_t j = 0; j < n; ++j)
      for (int64_t kk = 0; kk < k; ++kk) {
        int64_t b = kk / block;
        int zp = int((zr[size_t(j * blocks + b)] + 0.5f) * 15.99f) - 8;
        c.zeroPoints4[size_t(j * blocks + b)] = uint8_t(int8_t(zp));
        // Signed nibbles -8..7.
        int q = int((raw[size_t(kk * n + j)] + 0.5f) * 15.99f) - 8;
        c.weight4[size_t(j * (k / 2) + kk / 2)] |=
            uint8_t((q & 0xF) << (kk % 2 ? 4 : 0));
        c.w[size_t(kk * n + j)] =
            double(float(q - zp) * c.scales[size_t(j * blocks + b)]);
      }
  } else {
    c.scales = hashValues(seed + 4, n, 0.02);
    for (float &s : c.scales)
      s = std::fabs(s) + 0.001f;
    c.weight8.resize(size_t(k * n));
    for (int64_t kk = 0; kk < k; ++kk)
      for (int64_t j = 0; j < n; ++j) {
        int8_t q = int8_t(std::lround(raw[size_t(kk * n + j)] * 254));
        c.weight8[size_t(transpose ? j * k + kk : kk * n + j)] = q;
        c.w[size_t(kk * n + j)] = double(q) * c.scales[size_t(j)];
      }
    if (mode == QuantLinearMode::Int8Static) {
      c.desc.inputScale = 0.03125f;
      c.desc.inputZeroPoint = 131;
      c.staticInput.resize(size_t(m * k));
      std::vector<float> u = hashValues(seed + 6, m * k, 1.0);
      for (size_t i = 0; i < u.size(); ++i)
        c.staticInput[i] = uint8_t(int((u[i] + 0.5f) * 255.99f));
    }
  }
  return c;
}

/// The doc's q(input), dequantized, [M, K].
std::vector<double> dequantizedInput(const Case &c) {
  int64_t m = c.m, k = c.desc.inputFeatures;
  std::vector<double> x(size_t(m * k));
  switch (c.desc.mode) {
  case QuantLinearMode::Int8DynamicPerToken:
    for (int64_t r = 0; r < m; ++r) {
      float amax = 0;
      for (int64_t j = 0; j < k; ++j)
        amax = std::max(amax, std::fabs(c.input[size_t(r * k + j)]));
      float s = amax > 0 ? amax / 127.0f : 1.0f;
      for (int64_t j = 0; j < k; ++j)
        x[size_t(r * k + j)] =
            double(std::nearbyint(c.input[size_t(r * k + j)] / s)) * s;
    }
    break;
  case QuantLinearMode::Int8DynamicPerTensor: {
    float lo = 0, hi = 0;
    for (float v : c.input) {
      lo = std::min(lo, v);
      hi = std::max(hi, v);
    }
    float scale = (hi - lo) / 255.0f;
    float zp = std::nearbyint(std::min(255.0f, std::max(0.0f, -lo / scale)));
    for (size_t i = 0; i < x.size(); ++i) {
      float q = std::min(
          255.0f, std::max(0.0f, std::nearbyint(c.input[i] / scale) + zp));
      x[i] = (double(q) - zp) * scale;
    }
    break;
  }
  case QuantLinearMode::Int8Static:
    for (size_t i = 0; i < x.size(); ++i)
      x[i] = (double(c.staticInput[i]) - c.desc.inputZeroPoint) *
             c.desc.inputScale;
    break;
  default:
    for (size_t i = 0; i < x.size(); ++i)
      x[i] = c.input[i];
  }
  return x;
}

/// Runs the step (with the residual in place when `inPlace`) and compares.
void checkCase(const Case &c, bool inPlace = false, int threads = 0) {
  SCOPED_TRACE(
      std::string(quantLinearModeName(c.desc.mode)) + " " +
      std::to_string(c.m) + "x" + std::to_string(c.desc.inputFeatures) + "x" +
      std::to_string(c.desc.outputFeatures) + " act " +
      linearActivationName(c.desc.activation) +
      (c.desc.hasBias ? " bias" : "") +
      (c.desc.hasResidual ? (inPlace ? " residual(in place)" : " residual")
                          : "") +
      (c.desc.outputBf16 ? " bf16 output" : ""));
  std::unique_ptr<CpuContext> ctx = makeContext(threads);
  ASSERT_TRUE(ctx);
  std::unique_ptr<QuantLinearStep> step;
  Status st = QuantLinearStep::create(*ctx, c.desc, c.m, c.weights(), step);
  ASSERT_TRUE(st) << st.toString();
  int64_t m = c.m, k = c.desc.inputFeatures, n = c.desc.outputFeatures;
  std::vector<float> out(size_t(m * n), -7.0f);
  const float *residual = c.desc.hasResidual ? c.residual.data() : nullptr;
  if (inPlace) {
    out = c.residual;
    residual = out.data();
  }
  std::vector<uint16_t> outBf16(size_t(m * n), 0xFFFF);
  if (c.desc.outputBf16) {
    QuantLinearIo io;
    io.input = c.stepInput();
    io.bias = c.desc.hasBias ? c.bias.data() : nullptr;
    io.output = outBf16.data();
    st = step->run(io);
    ASSERT_TRUE(st) << st.toString();
    for (size_t i = 0; i < out.size(); ++i)
      out[i] = bfloat16ToFloat(outBf16[i]);
  } else {
    st = step->run(c.stepInput(), c.desc.hasBias ? c.bias.data() : nullptr,
                   residual, out.data());
    ASSERT_TRUE(st) << st.toString();
  }

  std::vector<double> x = dequantizedInput(c);
  int bad = 0;
  for (int64_t r = 0; r < m; ++r)
    for (int64_t j = 0; j < n; ++j) {
      double sum = 0, mag = 0;
      for (int64_t kk = 0; kk < k; ++kk) {
        double t = x[size_t(r * k + kk)] * c.w[size_t(kk * n + j)];
        sum += t;
        mag += std::fabs(t);
      }
      if (c.desc.hasBias) {
        sum += c.bias[size_t(j)];
        mag += std::fabs(c.bias[size_t(j)]);
      }
      double want = activate(sum, c.desc.activation);
      if (c.desc.hasResidual) {
        want += c.residual[size_t(r * n + j)];
        mag += std::fabs(c.residual[size_t(r * n + j)]);
      }
      double got = out[size_t(r * n + j)];
      // A bf16 output adds its rounding: at most half a unit in the last
      // of its 8 significant bits, 2^-8 of the value (truncating instead
      // errs by up to 2^-7).
      double tolerance =
          1e-5 * mag + 1e-6 +
          (c.desc.outputBf16 ? std::ldexp(std::fabs(want), -8) : 0.0);
      if (!(std::fabs(got - want) <= tolerance) && bad++ < 5)
        ADD_FAILURE() << "out[" << r << ", " << j << "] = " << got
                      << ", want " << want << " (mag " << mag << ")";
    }
  EXPECT_EQ(bad, 0);
}

const QuantLinearMode kModes[] = {
    QuantLinearMode::Int8DynamicPerToken, QuantLinearMode::Int8DynamicPerTensor,
    QuantLinearMode::Int8Static,          QuantLinearMode::BF16,
    QuantLinearMode::Int4WeightOnly,      QuantLinearMode::FP16};

const LinearActivation kActs[] = {LinearActivation::None, LinearActivation::Relu,
                                  LinearActivation::Gelu,
                                  LinearActivation::GeluTanh};

TEST(QuantLinearStep, EveryModeAndEpilogueSmallShape) {
  // 7 rows (not a multiple of the int4 kernel's 6), N = 40 (a partial
  // 16-lane vector and a partial 64-column panel).
  uint32_t seed = 11;
  for (QuantLinearMode mode : kModes)
    for (LinearActivation act : kActs)
      for (int epilogue = 0; epilogue < 4; ++epilogue)
        checkCase(makeCase(mode, 7, 64, 40, epilogue & 1, epilogue & 1, act,
                           epilogue & 2, seed++));
}

TEST(QuantLinearStep, BertShapes) {
  // The shapes and epilogues of a BERT-base layer (K, N cut to keep the
  // reference quick): QKV (bias), FFN up (bias, gelu), FFN down (bias,
  // residual in place).
  uint32_t seed = 101;
  for (QuantLinearMode mode : kModes) {
    checkCase(makeCase(mode, 128, 768, 96, true, true, LinearActivation::None,
                       false, seed++));
    checkCase(makeCase(mode, 128, 256, 192, true, true, LinearActivation::Gelu,
                       false, seed++));
    checkCase(makeCase(mode, 128, 768, 64, true, true, LinearActivation::None,
                       true, seed++),
              /*inPlace=*/true);
  }
}

TEST(QuantLinearStep, AmxTiles) {
  // Where the CPU has AMX, bf16 and int8 (per token, per tensor, static;
  // with an input zero point or without) run the runtime's tile kernel
  // (AmxGemm.h), both loop
  // orders (up to 4 row blocks: column by column; more: row blocks per
  // column chunk): row counts
  // that leave a partial 32-row block of at most 16 rows (one input tile)
  // and of more, K not a multiple of the tile step (the input copied with K
  // padded), N not a multiple of 32, K whole or in several slices with
  // partial sums kept between them (K = 1536: bf16 whole, int8 in slices of
  // 512; K = 4608: bf16 in slices of 1024, int8 whole) and, on one thread,
  // several column chunks (K = 1536 puts 8 or 16 column blocks in a chunk).
  struct Kind {
    QuantLinearMode mode;
    bool usable;
    const char *implementation;
  };
  const Kind kinds[] = {
      {QuantLinearMode::BF16, quant::amxBf16Usable(), "lmopt:amx_bf16"},
      {QuantLinearMode::Int8DynamicPerToken, quant::amxInt8Usable(),
       "lmopt:amx_int8"},
      {QuantLinearMode::Int8Static, quant::amxInt8Usable(), "lmopt:amx_int8"},
      {QuantLinearMode::Int8DynamicPerTensor, quant::amxInt8Usable(),
       "lmopt:amx_int8"}};
  if (!kinds[0].usable && !kinds[1].usable)
    GTEST_SKIP() << "no AMX on this CPU (or oneDNN's ISA cap excludes it): "
                    "these modes run oneDNN's matmul, covered above";
  std::unique_ptr<CpuContext> ctx = makeContext(0);
  ASSERT_TRUE(ctx);
  uint32_t seed = 501;
  for (const Kind &kind : kinds) {
    if (!kind.usable)
      continue;
    auto make = [&](int64_t m, int64_t k, int64_t n, bool transpose, bool bias,
                    LinearActivation act, bool residual) {
      // int8 static with makeCase's input zero point (131) and per-tensor
      // inputs with theirs: the kernel subtracts zp * the column sums.
      return makeCase(kind.mode, m, k, n, transpose, bias, act, residual,
                      seed++);
    };
    Case probe = make(33, 64, 40, false, true, LinearActivation::None, false);
    std::unique_ptr<QuantLinearStep> step;
    ASSERT_TRUE(QuantLinearStep::create(*ctx, probe.desc, probe.m,
                                        probe.weights(), step));
    EXPECT_EQ(step->implementation(), kind.implementation);
    checkCase(probe);
    if (kind.mode == QuantLinearMode::Int8Static) {
      Case noZeroPoint =
          make(40, 200, 70, false, true, LinearActivation::None, false);
      noZeroPoint.desc.inputZeroPoint = 0;
      checkCase(noZeroPoint);
    }
    for (int64_t m : {1, 16, 47, 50, 64})
      checkCase(make(m, 72, 130, m % 2, true, LinearActivation::Gelu, m > 16),
                /*inPlace=*/m == 50);
    checkCase(make(50, 1536, 300, true, true, LinearActivation::GeluTanh, true),
              /*inPlace=*/true, /*threads=*/1);
    checkCase(make(70, 1536, 40, false, false, LinearActivation::Relu, false),
              /*inPlace=*/false, /*threads=*/2);
    checkCase(make(40, 4608, 70, false, true, LinearActivation::None, true),
              /*inPlace=*/false, /*threads=*/2);
    // More than 4 row blocks (the cases above run column block by column
    // block, K whole): chunks of column blocks, K in slices with partial
    // sums (1536: int8 in 3 slices; 4608: bf16 in 9 of 1024), a last block
    // of at most 16 rows and of more, and N below the thread count's
    // column blocks (rows split between threads).
    checkCase(
        make(161, 1536, 300, true, true, LinearActivation::GeluTanh, true),
        /*inPlace=*/true, /*threads=*/1);
    checkCase(make(150, 4608, 70, false, true, LinearActivation::Gelu, false),
              /*inPlace=*/false, /*threads=*/2);
    checkCase(make(200, 72, 20, false, true, LinearActivation::Relu, true),
              /*inPlace=*/false, /*threads=*/2);
    // K = 768 with more than 4 row blocks: bf16 runs K whole with its
    // epilogues deferred to the end of each row block's pass over a chunk
    // (two chunks of 16 and 3 column blocks on one thread), int8 in two
    // slices.
    checkCase(make(161, 768, 600, false, true, LinearActivation::Gelu, true),
              /*inPlace=*/true, /*threads=*/1);
    // 17 row blocks on 2 threads (8 and 9), split by rows, every thread
    // over all the column blocks and two chunks (bf16 16 + 3, int8 32 + 6
    // column blocks at N = 600 and 1200).
    checkCase(make(530, 768, kind.mode == QuantLinearMode::BF16 ? 600 : 1200,
                   true, true, LinearActivation::Gelu, true),
              /*inPlace=*/false, /*threads=*/2);
  }
}

TEST(QuantLinearStep, Bf16Output) {
  // bf16 and int8 steps writing a bf16 output (what the CPU target's plan
  // gives a linear whose only reader is a cast to bf16, or an attention
  // with bf16 products): the AMX kernel's block epilogue where the CPU has
  // AMX, else oneDNN's matmul with a bf16 destination (bf16) or into a
  // scratch and the epilogue over it (int8; runtime-unittests.test runs
  // this under an ISA cap too). Against the reference within the f32
  // tolerance plus bf16's rounding, and bit for bit the f32 output rounded
  // as the cast rounds (floatToBFloat16: ties to even).
  std::unique_ptr<CpuContext> ctx = makeContext(0);
  ASSERT_TRUE(ctx);
  uint32_t seed = 701;
  struct Shape {
    QuantLinearMode mode;
    int64_t m, k, n;
    bool transpose, bias;
    LinearActivation act;
  };
  const QuantLinearMode bf = QuantLinearMode::BF16,
                        sta = QuantLinearMode::Int8Static,
                        tok = QuantLinearMode::Int8DynamicPerToken,
                        ten = QuantLinearMode::Int8DynamicPerTensor;
  const Shape shapes[] = {
      {bf, 7, 64, 40, false, true, LinearActivation::None},
      {bf, 7, 64, 40, true, false, LinearActivation::Relu},
      {bf, 33, 64, 40, false, true, LinearActivation::Gelu},
      {bf, 128, 768, 96, false, true, LinearActivation::Gelu},
      {bf, 50, 1536, 130, true, true, LinearActivation::GeluTanh},
      {bf, 1, 72, 130, false, true, LinearActivation::None},
      {sta, 33, 64, 40, false, true, LinearActivation::None},
      {sta, 161, 768, 600, false, true, LinearActivation::Gelu},
      {tok, 40, 200, 70, true, true, LinearActivation::None},
      {tok, 288, 768, 96, false, true, LinearActivation::None},
      {ten, 1, 72, 130, false, true, LinearActivation::Relu}};
  for (const Shape &shape : shapes) {
    Case c = makeCase(shape.mode, shape.m, shape.k, shape.n, shape.transpose,
                      shape.bias, shape.act, false, seed++);
    c.desc.outputBf16 = true;
    checkCase(c);

    std::unique_ptr<QuantLinearStep> wide, narrow;
    Case f32 = c;
    f32.desc.outputBf16 = false;
    ASSERT_TRUE(
        QuantLinearStep::create(*ctx, f32.desc, c.m, f32.weights(), wide));
    ASSERT_TRUE(
        QuantLinearStep::create(*ctx, c.desc, c.m, c.weights(), narrow));
    const size_t count = size_t(c.m * c.desc.outputFeatures);
    std::vector<float> want(count);
    std::vector<uint16_t> got(count);
    const float *bias = shape.bias ? c.bias.data() : nullptr;
    ASSERT_TRUE(wide->run(c.stepInput(), bias, nullptr, want.data()));
    QuantLinearIo io;
    io.input = c.stepInput();
    io.bias = bias;
    io.output = got.data();
    ASSERT_TRUE(narrow->run(io));
    int differ = 0;
    for (size_t i = 0; i < count; ++i)
      if (got[i] != floatToBFloat16(want[i]) && differ++ < 5)
        ADD_FAILURE() << "output " << i << ": bits " << got[i] << ", the f32 "
                      << want[i] << " rounds to " << floatToBFloat16(want[i]);
    EXPECT_EQ(differ, 0);
  }
  // A residual cannot be added to a bf16 output, nor another mode write one.
  Case withResidual = makeCase(QuantLinearMode::BF16, 4, 64, 40, false, true,
                               LinearActivation::None, true, seed++);
  withResidual.desc.outputBf16 = true;
  std::unique_ptr<QuantLinearStep> refused;
  Status st = QuantLinearStep::create(*ctx, withResidual.desc, 4,
                                      withResidual.weights(), refused);
  EXPECT_FALSE(st);
  EXPECT_NE(st.message().find("a bf16 output is for bf16 and int8 steps "
                              "without a residual or another narrowed output"),
            std::string::npos)
      << st.toString();
  // Nor another narrowed output with it, nor a half-precision step.
  Case int8 = makeCase(QuantLinearMode::Int8DynamicPerToken, 4, 64, 40, false,
                       true, LinearActivation::None, false, seed++);
  int8.desc.outputBf16 = true;
  int8.desc.quantizeOutput = true;
  EXPECT_FALSE(
      QuantLinearStep::create(*ctx, int8.desc, 4, int8.weights(), refused));
  Case fp16 = makeCase(QuantLinearMode::FP16, 4, 64, 40, false, true,
                       LinearActivation::None, false, seed++);
  fp16.desc.outputBf16 = true;
  EXPECT_FALSE(
      QuantLinearStep::create(*ctx, fp16.desc, 4, fp16.weights(), refused));
}

TEST(QuantLinearStep, OneThreadAndOneRow) {
  uint32_t seed = 301;
  for (QuantLinearMode mode : kModes) {
    checkCase(makeCase(mode, 1, 128, 70, false, true, LinearActivation::Gelu,
                       true, seed++),
              false, /*threads=*/1);
    checkCase(makeCase(mode, 13, 128, 130, false, false,
                       LinearActivation::Relu, true, seed++),
              true, /*threads=*/1);
  }
}

TEST(QuantLinearStep, PerTensorWeightScale) {
  Case c = makeCase(QuantLinearMode::Int8DynamicPerToken, 9, 64, 33, false,
                    true, LinearActivation::None, false, 401);
  c.desc.perChannelScales = false;
  for (int64_t kk = 0; kk < 64; ++kk)
    for (int64_t j = 0; j < 33; ++j)
      c.w[size_t(kk * 33 + j)] = double(c.weight8[size_t(kk * 33 + j)]) *
                                 c.scales[0];
  checkCase(c);
}

TEST(QuantLinearStep, UnsignedInt8WeightsWithZeroPoints) {
  // ONNX Runtime's quantize_dynamic with QUInt8 weights: u8 with zero
  // points, per tensor or per channel, under dynamic per-tensor inputs.
  for (bool perChannel : {false, true})
    for (bool zeroPoints : {false, true}) {
      Case c = makeCase(QuantLinearMode::Int8DynamicPerTensor, 9, 128, 40,
                        perChannel, true, LinearActivation::Gelu, true,
                        801 + 2 * perChannel + zeroPoints);
      c.desc.weightSigned = false;
      c.desc.hasZeroPoints = zeroPoints;
      c.desc.perChannelScales = perChannel;
      int64_t count = perChannel ? 40 : 1;
      std::vector<float> zr = hashValues(811, count, 1.0);
      for (float z : zr)
        c.zeroPoints8.push_back(uint8_t(128 + int(z * 60)));
      if (!zeroPoints)
        c.zeroPoints8.clear();
      std::vector<float> raw = hashValues(812, 128 * 40, 1.0);
      for (int64_t kk = 0; kk < 128; ++kk)
        for (int64_t j = 0; j < 40; ++j) {
          uint8_t u = uint8_t(int((raw[size_t(kk * 40 + j)] + 0.5f) * 255.99f));
          c.weight8[size_t(perChannel ? j * 128 + kk : kk * 40 + j)] =
              int8_t(u);
          int64_t i = perChannel ? j : 0;
          int zp = zeroPoints ? c.zeroPoints8[size_t(i)] : 0;
          c.w[size_t(kk * 40 + j)] = (double(u) - zp) * c.scales[size_t(i)];
        }
      checkCase(c);
    }
}

TEST(QuantLinearStep, UnsignedInt4WithoutZeroPoints) {
  Case c = makeCase(QuantLinearMode::Int4WeightOnly, 5, 128, 80, false, false,
                    LinearActivation::None, false, 501);
  c.desc.weightSigned = false;
  c.desc.hasZeroPoints = false;
  c.desc.blockSize = 64;
  c.scales.resize(size_t(80 * 2));
  for (int64_t j = 0; j < 80; ++j)
    for (int64_t kk = 0; kk < 128; ++kk) {
      int q = (c.weight4[size_t(j * 64 + kk / 2)] >> (kk % 2 ? 4 : 0)) & 0xF;
      c.w[size_t(kk * 80 + j)] =
          double(float(q) * c.scales[size_t(j * 2 + kk / 64)]);
    }
  checkCase(c);
}

// The quantizers, bit for bit, on ties and on both kernel forms.
TEST(QuantLinearStep, StaticQuantizedOutput) {
  // int8 steps writing their output quantized with a fixed scale and zero
  // point (what the CPU target's plan gives a linear whose only reader is a
  // static QuantizeLinear): the AMX kernel's block epilogue where the CPU
  // has AMX, else the matmul into a scratch and the epilogue over it
  // (runtime-unittests.test runs this under an ISA cap too). Bit for bit
  // the same step's f32 output quantized by QuantizeLinear's definition.
  std::unique_ptr<CpuContext> ctx = makeContext(0);
  ASSERT_TRUE(ctx);
  uint32_t seed = 901;
  struct Shape {
    QuantLinearMode mode;
    int64_t m, k, n;
    bool transpose, bias;
    LinearActivation act;
    bool outSigned;
  };
  const QuantLinearMode st = QuantLinearMode::Int8Static,
                        tok = QuantLinearMode::Int8DynamicPerToken,
                        ten = QuantLinearMode::Int8DynamicPerTensor;
  const Shape shapes[] = {
      {st, 7, 64, 40, false, true, LinearActivation::None, false},
      {st, 33, 64, 40, true, false, LinearActivation::Relu, true},
      {st, 128, 768, 96, false, true, LinearActivation::Gelu, false},
      {st, 161, 768, 600, false, true, LinearActivation::Gelu, false},
      {st, 50, 1536, 130, true, true, LinearActivation::GeluTanh, true},
      {tok, 40, 200, 70, false, true, LinearActivation::Gelu, false},
      {ten, 1, 72, 130, false, true, LinearActivation::None, true}};
  for (const Shape &shape : shapes) {
    Case c = makeCase(shape.mode, shape.m, shape.k, shape.n, shape.transpose,
                      shape.bias, shape.act, false, seed++);
    Case q = c;
    q.desc.outputStatic = true;
    q.desc.outputSigned = shape.outSigned;
    q.desc.outputZeroPoint = shape.outSigned ? -7 : 121;
    for (int threads : {1, 2}) {
      std::unique_ptr<CpuContext> team = makeContext(threads);
      ASSERT_TRUE(team);
      std::unique_ptr<QuantLinearStep> wide, narrow;
      ASSERT_TRUE(
          QuantLinearStep::create(*team, c.desc, c.m, c.weights(), wide));
      const size_t count = size_t(c.m * c.desc.outputFeatures);
      std::vector<float> want(count);
      std::vector<uint8_t> got(count, 0xAB);
      const float *bias = shape.bias ? c.bias.data() : nullptr;
      ASSERT_TRUE(wide->run(c.stepInput(), bias, nullptr, want.data()));
      // 150 steps for the largest magnitude: most values land inside the
      // range, the largest saturate at one end or both.
      float largest = 0;
      for (float v : want)
        largest = std::max(largest, std::fabs(v));
      q.desc.outputScale = largest / 150;
      ASSERT_TRUE(
          QuantLinearStep::create(*team, q.desc, c.m, q.weights(), narrow));
      QuantLinearIo io;
      io.input = c.stepInput();
      io.bias = bias;
      io.output = got.data();
      ASSERT_TRUE(narrow->run(io));
      int differ = 0, saturated = 0;
      for (size_t i = 0; i < count; ++i) {
        uint8_t expect =
            quantizeLinear(want[i], q.desc.outputScale, q.desc.outputZeroPoint,
                           shape.outSigned);
        saturated += expect == (shape.outSigned ? 0x80 : 0) ||
                     expect == (shape.outSigned ? 0x7F : 0xFF);
        if (got[i] != expect && differ++ < 5)
          ADD_FAILURE() << quantLinearModeName(shape.mode) << " " << shape.m
                        << "x" << shape.k << "x" << shape.n << " output " << i
                        << ": byte " << int(got[i]) << ", the f32 " << want[i]
                        << " quantizes to " << int(expect);
      }
      EXPECT_EQ(differ, 0);
      // The values cover the range, not only its ends.
      EXPECT_LT(saturated, int(count / 2));
    }
  }
  // Refused: a residual, a per-token quantized output beside it, a bf16
  // step, a scale that is not positive, a zero point outside the type.
  auto refuse = [&](Case c, const char *message) {
    std::unique_ptr<QuantLinearStep> step;
    Status status =
        QuantLinearStep::create(*ctx, c.desc, c.m, c.weights(), step);
    EXPECT_FALSE(status) << message;
    EXPECT_NE(status.message().find(message), std::string::npos)
        << status.toString();
  };
  Case base = makeCase(st, 4, 64, 40, false, true, LinearActivation::None,
                       false, seed++);
  base.desc.outputStatic = true;
  base.desc.outputScale = 0.02f;
  Case residual = makeCase(st, 4, 64, 40, false, true, LinearActivation::None,
                           true, seed++);
  residual.desc.outputStatic = true;
  refuse(residual, "a statically quantized output is for int8 steps");
  Case both = base;
  both.desc.quantizeOutput = true;
  refuse(both, "a statically quantized output is for int8 steps");
  Case bf16 = makeCase(QuantLinearMode::BF16, 4, 64, 40, false, true,
                       LinearActivation::None, false, seed++);
  bf16.desc.outputStatic = true;
  refuse(bf16, "a statically quantized output is for int8 steps");
  Case zeroScale = base;
  zeroScale.desc.outputScale = 0;
  refuse(zeroScale, "output scale 0.000000 is not a positive finite number");
  Case farZero = base;
  farZero.desc.outputZeroPoint = 300;
  refuse(farZero, "output zero point 300 is outside the u8 range");
}

TEST(QuantKernels, PerTokenRoundsHalfToEven) {
  // max |row| = 127 gives scale 1, so x / s = x exactly.
  std::vector<float> row = {127.0f, 2.5f, 3.5f, -2.5f, -0.5f, 0.5f, 1.5f,
                            -127.0f, 126.5f, 0.0f, -3.5f, 100.49f};
  std::vector<int8_t> want = {127, 2, 4, -2, 0, 0, 2, -127, 126, 0, -4, 100};
  for (bool avx512 : {false, quant::useAvx512()}) {
    std::vector<int8_t> q(row.size());
    float scale = 0;
    quant::quantizeRowsS8(row.data(), 1, int64_t(row.size()), q.data(),
                          &scale, 1, avx512);
    EXPECT_EQ(scale, 1.0f);
    EXPECT_EQ(q, want) << (avx512 ? "avx512" : "portable");
    std::vector<float> zeros(20, 0.0f);
    std::vector<int8_t> qz(20, 5);
    quant::quantizeRowsS8(zeros.data(), 1, 20, qz.data(), &scale, 1, avx512);
    EXPECT_EQ(scale, 1.0f);
    EXPECT_EQ(qz, std::vector<int8_t>(20, 0));
  }
}

// The AVX-512 quantizer divides by multiplying with the reciprocal and
// correcting once; every quotient must still be the division's, on many
// rows (split over two threads), on rows whose values are exact halves of
// the scale (ties), and on rows so small that the reciprocal is not a
// normal float (where the division runs).
TEST(QuantKernels, PerTokenQuotientsAreDivisions) {
  const int64_t rows = 300, k = 200;
  std::vector<float> x(size_t(rows * k));
  uint32_t state = 12345;
  auto next = [&] {
    state = state * 1664525u + 1013904223u;
    return state >> 8;
  };
  for (int64_t r = 0; r < rows; ++r) {
    // Row magnitudes from 1e-40 (subnormal) to 1e4, with 11-bit
    // significands so that the tie rows below are exact.
    float magnitude = std::ldexp(float(1024 + next() % 1024) / 1024.0f,
                                 int(r % 150) - 133);
    for (int64_t j = 0; j < k; ++j) {
      float u = float(next() % 2001) / 1000.0f - 1.0f;
      x[size_t(r * k + j)] = u * magnitude;
    }
    if (r % 3 == 0) {
      // Multiples of half the step s = 127 * magnitude / 127 = magnitude.
      x[size_t(r * k)] = 127.0f * magnitude;
      for (int64_t j = 1; j < k; ++j)
        x[size_t(r * k + j)] =
            float(int(next() % 253) - 126) * 0.5f * magnitude;
    }
  }
  std::vector<int8_t> want(x.size());
  std::vector<float> wantScales(static_cast<size_t>(rows));
  for (int64_t r = 0; r < rows; ++r) {
    float m = 0;
    for (int64_t j = 0; j < k; ++j)
      m = std::max(m, std::fabs(x[size_t(r * k + j)]));
    float s = m > 0 ? m / 127.0f : 1.0f;
    wantScales[size_t(r)] = s;
    for (int64_t j = 0; j < k; ++j)
      want[size_t(r * k + j)] = int8_t(std::min(
          127.0f, std::max(-128.0f, std::nearbyint(x[size_t(r * k + j)] / s))));
  }
  for (bool avx512 : {false, quant::useAvx512()}) {
    std::vector<int8_t> q(x.size());
    std::vector<float> scales(static_cast<size_t>(rows));
    quant::quantizeRowsS8(x.data(), rows, k, q.data(), scales.data(), 2,
                          avx512);
    EXPECT_EQ(scales, wantScales) << (avx512 ? "avx512" : "portable");
    EXPECT_EQ(q, want) << (avx512 ? "avx512" : "portable");
  }
}

TEST(QuantKernels, PerTensorMatchesDynamicQuantizeLinear) {
  // min -1, max 1.55: scale 0.01, zero point 100. The expected bytes are
  // onnxruntime 1.32's DynamicQuantizeLinear output for this input.
  std::vector<float> x = {-1.0f, 1.55f, 0.0f, 0.005f, 0.015f, -0.025f, 0.5f};
  const std::vector<uint8_t> want = {0, 255, 100, 100, 102, 98, 150};
  for (bool avx512 : {false, quant::useAvx512()}) {
    std::vector<uint8_t> q(x.size());
    float scale = 0;
    int32_t zp = -1;
    quant::quantizeTensorU8(x.data(), int64_t(x.size()), q.data(), scale, zp,
                            1, avx512);
    EXPECT_EQ(scale, 0.01f);
    EXPECT_EQ(zp, 100);
    EXPECT_EQ(q, want) << (avx512 ? "avx512" : "portable");
  }
}

TEST(QuantKernels, Bf16OutputRoundsAsTheCast) {
  // The epilogue's bf16 store, both forms, bit for bit against
  // floatToBFloat16 (the rounding of the cast it replaces): ties to even
  // both ways, values that round up into the next binade and to infinity,
  // subnormals, infinities and NaNs (quieted, sign and top payload kept).
  // (No -0: the epilogue's a * 1 + 0 makes it +0 before the store.)
  const uint32_t specials[] = {
      0x3F808000u, 0x3F818000u, 0x3F80FFFFu, 0x3F807FFFu, 0xBF808000u,
      0x3FFFFFFFu, 0x7F7FFFFFu, 0xFF7F8000u, 0x00000001u, 0x80018000u,
      0x7F800000u, 0xFF800000u, 0x7FC00001u, 0xFF800001u, 0x7FBF0000u,
      0x00000000u, 0x807FFFFFu};
  std::vector<float> values;
  for (uint32_t bits : specials) {
    float v;
    std::memcpy(&v, &bits, 4);
    values.push_back(v);
  }
  for (float v : hashValues(9, 47, 100.0))
    values.push_back(v);
  const int64_t n = int64_t(values.size());
  quant::Epilogue e;
  for (bool avx512 : {false, quant::useAvx512()}) {
    std::vector<uint16_t> got(size_t(n), 0xABCD);
    e.bf16Out = got.data();
    quant::applyEpilogue(values.data(), n, 1, n, e, nullptr, 1, avx512);
    for (int64_t i = 0; i < n; ++i)
      EXPECT_EQ(got[size_t(i)], floatToBFloat16(values[size_t(i)]))
          << (avx512 ? "AVX-512" : "portable") << " form, value " << i;
  }
}

TEST(QuantKernels, StaticOutputRoundsAsQuantizeLinear) {
  // The epilogue's statically quantized store, both forms, bit for bit
  // against QuantizeLinear's definition: quotients that tie (k + 1/2 times
  // the scale) both ways, values past both ends of the range and the
  // infinities (saturated), 0, and ordinary values; u8 and i8; a scale
  // whose reciprocal is not a normal float (the division runs). NaN gives
  // 0.
  const float scales[] = {0.0114554409f, 3.0f, 0.25f, 1e-39f};
  for (float scale : scales)
    for (bool isSigned : {false, true})
      for (int32_t zeroPoint : {isSigned ? -3 : 15, isSigned ? 0 : 134}) {
        std::vector<float> values;
        for (int k = -300; k <= 300; k += 7) {
          values.push_back((float(k) + 0.5f) * scale);
          values.push_back(float(k) * scale);
        }
        for (float v : {0.0f, 1e30f, -1e30f, INFINITY, -INFINITY})
          values.push_back(v);
        for (float v : hashValues(11, 40, 5.0))
          values.push_back(v);
        const int64_t n = int64_t(values.size());
        quant::Epilogue e;
        e.q8Scale = scale;
        e.q8ZeroPoint = zeroPoint;
        e.q8Signed = isSigned;
        for (bool avx512 : {false, quant::useAvx512()}) {
          std::vector<uint8_t> got(values.size(), 0xAB);
          e.q8Out = got.data();
          quant::applyEpilogue(values.data(), n, 1, n, e, nullptr, 1, avx512);
          for (int64_t i = 0; i < n; ++i)
            EXPECT_EQ(got[size_t(i)], quantizeLinear(values[size_t(i)], scale,
                                                     zeroPoint, isSigned))
                << (avx512 ? "AVX-512" : "portable") << " form, value "
                << values[size_t(i)] << ", scale " << scale << ", zero point "
                << zeroPoint;
          const float nan = NAN;
          quant::applyEpilogue(&nan, 1, 1, 1, e, nullptr, 1, avx512);
          EXPECT_EQ(got[0], 0) << (avx512 ? "AVX-512" : "portable");
        }
      }
}

TEST(QuantKernels, EpilogueFormsAgree) {
  // The AVX-512 activation approximations against the portable (libm) form.
  const int64_t rows = 3, n = 37;
  std::vector<float> acc = hashValues(7, rows * n, 16.0);
  // Far into both tails of the activations (exp's clamping range).
  acc[5] = -400.0f;
  acc[6] = 400.0f;
  acc[40] = -60.0f;
  std::vector<float> bias = hashValues(8, n, 2.0);
  std::vector<float> rs = {0.5f, 1.0f, 0.25f};
  for (LinearActivation act : kActs) {
    quant::Epilogue e;
    e.rowScales = rs.data();
    e.bias = bias.data();
    e.activation = act;
    std::vector<float> a(size_t(rows * n)), b(size_t(rows * n));
    quant::applyEpilogue(acc.data(), n, rows, n, e, a.data(), 1, false);
    quant::applyEpilogue(acc.data(), n, rows, n, e, b.data(), 1,
                         quant::useAvx512());
    for (size_t i = 0; i < a.size(); ++i)
      EXPECT_NEAR(a[i], b[i], 2e-6 * (1 + std::fabs(a[i])))
          << linearActivationName(act) << " at " << i;
  }
}

TEST(QuantKernels, GeluAgreesWithErfInDouble) {
  // The epilogue's GELU (x Phi(x), Phi from a table of piecewise
  // polynomials in the AVX-512 form) against 0.5 x erfc(-x / sqrt 2) in
  // double on a fine grid across the table's range and past both ends,
  // every piece boundary (multiples of 3/8 from -6 to 6) and its
  // neighbours included; 1e-6 absolute is about two f32 ulps at |x| = 6.
  // Infinities and NaN as the formula gives them in f32: +inf for +inf,
  // NaN (-inf x 0) for -inf, NaN for NaN.
  std::vector<float> x;
  for (double v = -9.0; v < 9.0; v += 1.0 / 4096)
    x.push_back(float(v));
  for (int i = 0; i <= 32; ++i) {
    const float v = float(-6.0 + i * 0.375);
    for (float w : {std::nextafter(v, -1e9f), v, std::nextafter(v, 1e9f)})
      x.push_back(w);
  }
  const int64_t n = int64_t(x.size());
  quant::Epilogue e;
  e.activation = LinearActivation::Gelu;
  for (bool avx512 : {false, quant::useAvx512()}) {
    std::vector<float> got(x.size());
    quant::applyEpilogue(x.data(), n, 1, n, e, got.data(), 1, avx512);
    double worst = 0;
    for (int64_t i = 0; i < n; ++i) {
      const double v = x[size_t(i)];
      const double want = 0.5 * v * std::erfc(-v / std::sqrt(2.0));
      worst = std::max(worst, std::fabs(got[size_t(i)] - want));
      ASSERT_NEAR(got[size_t(i)], want, 1e-6)
          << (avx512 ? "AVX-512" : "portable") << " form, x = " << v;
    }
    char text[32];
    std::snprintf(text, sizeof text, "%.2g", worst);
    RecordProperty(avx512 ? "avx512_max_abs_error" : "portable_max_abs_error",
                   text);
    const float specials[] = {INFINITY, -INFINITY, NAN};
    std::vector<float> out(3);
    quant::applyEpilogue(specials, 3, 1, 3, e, out.data(), 1, avx512);
    EXPECT_EQ(out[0], INFINITY) << (avx512 ? "AVX-512" : "portable");
    EXPECT_TRUE(std::isnan(out[1])) << (avx512 ? "AVX-512" : "portable");
    EXPECT_TRUE(std::isnan(out[2])) << (avx512 ? "AVX-512" : "portable");
  }
}

TEST(QuantLinearStep, RefusesBadDescs) {
  std::unique_ptr<CpuContext> ctx = makeContext();
  ASSERT_TRUE(ctx);
  Case c = makeCase(QuantLinearMode::Int4WeightOnly, 4, 64, 16, false, false,
                    LinearActivation::None, false, 601);
  std::unique_ptr<QuantLinearStep> step;
  c.desc.blockSize = 24;
  EXPECT_STATUS(QuantLinearStep::create(*ctx, c.desc, 4, c.weights(), step),
                StatusCode::InvalidArgument,
                "quant_linear step 'dense_q' (int4_weight_only): int4 block "
                "size 24 must be even and divide K = 64");
  c.desc.blockSize = 16;
  QuantLinearWeights w = c.weights();
  w.scales = nullptr;
  EXPECT_STATUS(QuantLinearStep::create(*ctx, c.desc, 4, w, step),
                StatusCode::InvalidArgument,
                "quant_linear step 'dense_q' (int4_weight_only): null weight "
                "scales pointer");
  Case s = makeCase(QuantLinearMode::Int8Static, 4, 64, 16, false, true,
                    LinearActivation::None, false, 602);
  s.desc.inputZeroPoint = 300;
  EXPECT_STATUS(QuantLinearStep::create(*ctx, s.desc, 4, s.weights(), step),
                StatusCode::InvalidArgument,
                "quant_linear step 'dense_q' (int8_static): input zero point "
                "300 is outside the u8 range");
  s.desc.inputZeroPoint = 0;
  ASSERT_TRUE(QuantLinearStep::create(*ctx, s.desc, 4, s.weights(), step));
  std::vector<float> out(64);
  EXPECT_STATUS(step->run(s.staticInput.data(), nullptr, nullptr, out.data()),
                StatusCode::InvalidArgument,
                "quant_linear step 'dense_q': bias passed iff the desc has "
                "one is violated");
}

// An int8 step writing its output quantized, and the per-token step
// reading it, give the bits of the unfused pair: the producer's bytes and
// row scales are what the consumer's own quantizer makes of the f32 output,
// and the consumer's output is the same. Also for a per-tensor and a
// static producer (any int8 mode may quantize its output), on one thread
// and two.
TEST(QuantLinearStep, QuantizedOutputFeedsQuantizedInput) {
  const int64_t m = 37, k = 96, n = 160, n2 = 48;
  for (QuantLinearMode mode :
       {QuantLinearMode::Int8DynamicPerToken,
        QuantLinearMode::Int8DynamicPerTensor, QuantLinearMode::Int8Static})
    for (int threads : {1, 2}) {
      std::unique_ptr<CpuContext> ctx = makeContext(threads);
      ASSERT_TRUE(ctx);
      Case up = makeCase(mode, m, k, n, true, true, LinearActivation::Gelu,
                         false, 700 + int(mode));
      Case down = makeCase(QuantLinearMode::Int8DynamicPerToken, m, n, n2,
                           false, true, LinearActivation::None, false, 710);
      std::unique_ptr<QuantLinearStep> plainUp, plainDown, fusedUp, fusedDown;
      ASSERT_TRUE(QuantLinearStep::create(*ctx, up.desc, m, up.weights(),
                                          plainUp));
      ASSERT_TRUE(QuantLinearStep::create(*ctx, down.desc, m, down.weights(),
                                          plainDown));
      up.desc.quantizeOutput = true;
      down.desc.inputQuantized = true;
      ASSERT_TRUE(QuantLinearStep::create(*ctx, up.desc, m, up.weights(),
                                          fusedUp));
      ASSERT_TRUE(QuantLinearStep::create(*ctx, down.desc, m, down.weights(),
                                          fusedDown));

      std::vector<float> hidden(size_t(m * n)), plainOut(size_t(m * n2));
      ASSERT_TRUE(plainUp->run(up.stepInput(), up.bias.data(), nullptr,
                               hidden.data()));
      ASSERT_TRUE(plainDown->run(hidden.data(), down.bias.data(), nullptr,
                                 plainOut.data()));
      std::vector<int8_t> wantQ(size_t(m * n));
      std::vector<float> wantScales(static_cast<size_t>(m));
      quant::quantizeRowsS8(hidden.data(), m, n, wantQ.data(),
                            wantScales.data(), 1, false);

      std::vector<int8_t> q(size_t(m * n));
      std::vector<float> scales(static_cast<size_t>(m)),
          product(size_t(m * n)), out(size_t(m * n2));
      QuantLinearIo io;
      io.input = up.stepInput();
      io.bias = up.bias.data();
      io.output = q.data();
      io.outputScales = scales.data();
      io.product = product.data();
      ASSERT_TRUE(fusedUp->run(io));
      EXPECT_EQ(q, wantQ) << quantLinearModeName(mode) << " " << threads;
      EXPECT_EQ(scales, wantScales) << quantLinearModeName(mode);
      QuantLinearIo next;
      next.input = q.data();
      next.inputScales = scales.data();
      next.bias = down.bias.data();
      next.output = out.data();
      ASSERT_TRUE(fusedDown->run(next));
      EXPECT_EQ(out, plainOut) << quantLinearModeName(mode) << " " << threads;

      // The fused forms' buffers are required, and only for them.
      EXPECT_STATUS(fusedUp->run(up.stepInput(), up.bias.data(), nullptr,
                                 hidden.data()),
                    StatusCode::InvalidArgument,
                    "quant_linear step 'dense_q': input scales are passed iff "
                    "the input is quantized, output scales and the product "
                    "scratch iff the output is");
    }

  std::unique_ptr<CpuContext> ctx = makeContext();
  std::unique_ptr<QuantLinearStep> step;
  Case tensor = makeCase(QuantLinearMode::Int8DynamicPerTensor, 4, 64, 16,
                         false, false, LinearActivation::None, false, 720);
  tensor.desc.inputQuantized = true;
  EXPECT_STATUS(QuantLinearStep::create(*ctx, tensor.desc, 4,
                                        tensor.weights(), step),
                StatusCode::InvalidArgument,
                "quant_linear step 'dense_q' (int8_dynamic_per_tensor): a "
                "quantized input is for int8_dynamic_per_token");
  Case residual = makeCase(QuantLinearMode::Int8DynamicPerToken, 4, 64, 16,
                           false, false, LinearActivation::None, true, 721);
  residual.desc.quantizeOutput = true;
  EXPECT_STATUS(QuantLinearStep::create(*ctx, residual.desc, 4,
                                        residual.weights(), step),
                StatusCode::InvalidArgument,
                "quant_linear step 'dense_q' (int8_dynamic_per_token): a "
                "quantized output is for int8 steps without a residual");
}

/// A plan with one quant_linear step whose constants lie in `weights`.
struct OneStepPlan {
  /// No states: what the executor reads of the program.
  Program program;
  Plan plan;
  std::vector<uint8_t> weights;
  uint32_t add(DType dtype, std::vector<int64_t> dims, TensorStorage storage,
               const void *data = nullptr) {
    PlanTensor t;
    t.name = "t" + std::to_string(plan.tensors.size());
    t.dtype = dtype;
    t.dims = std::move(dims);
    t.storage = storage;
    if (storage == TensorStorage::Weight) {
      t.offset = weights.size();
      weights.resize(weights.size() + (t.byteSize() + 63) / 64 * 64);
      std::memcpy(weights.data() + t.offset, data, t.byteSize());
    } else if (storage == TensorStorage::Arena) {
      t.offset = plan.arenaSize();
      plan.arenaSizes = {t.offset + (t.byteSize() + 63) / 64 * 64};
    }
    return plan.addTensor(t);
  }
};

TEST(QuantLinearExecutor, BuildsAndRunsFromAPlan) {
  Case c = makeCase(QuantLinearMode::Int4WeightOnly, 6, 64, 24, false, true,
                    LinearActivation::Gelu, false, 701);
  OneStepPlan p;
  uint32_t in = p.add(DType::F32, {2, 3, 64}, TensorStorage::Input);
  uint32_t w = p.add(DType::I8, {24, 32}, TensorStorage::Weight,
                     c.weight4.data());
  // K = 64 in blocks of 32 (makeCase's choice): [N, 2] scales.
  uint32_t s = p.add(DType::F32, {24, 2}, TensorStorage::Weight,
                     c.scales.data());
  uint32_t z = p.add(DType::I8, {24, 2}, TensorStorage::Weight,
                     c.zeroPoints4.data());
  uint32_t b = p.add(DType::F32, {24}, TensorStorage::Weight, c.bias.data());
  uint32_t o = p.add(DType::F32, {2, 3, 24}, TensorStorage::Arena);
  PlanStep &step = p.plan.addStep(StepKind::QuantLinear, "ffn_up");
  step.operands = {in, w, s, z, b};
  step.results = {o};
  auto attr = [&](const char *name, int64_t v) {
    PlanAttr a;
    a.name = name;
    a.intValue = v;
    step.attrs.push_back(a);
  };
  PlanAttr mode;
  mode.name = "mode";
  mode.kind = PlanAttr::Kind::String;
  mode.stringValue = "int4_weight_only";
  step.attrs.push_back(mode);
  attr("block_size", 32);
  attr("has_zero_points", 1);
  attr("has_bias", 1);
  attr("activation", 2);

  std::unique_ptr<CpuContext> ctx = makeContext();
  ASSERT_TRUE(ctx);
  CpuStepContext bc{p.program, p.plan,    *ctx,
                    nullptr,   "q.lmopt", p.weights.data()};
  std::unique_ptr<StepExecutor> exec;
  Status st = createCpuStepExecutor(bc, p.plan.steps[0], exec);
  ASSERT_TRUE(st) << st.toString();
  std::vector<float> out(6 * 24);
  std::vector<void *> ptrs = {c.input.data(), nullptr, nullptr, nullptr,
                              nullptr, out.data()};
  for (uint32_t id : {w, s, z, b})
    ptrs[id] = p.weights.data() + p.plan.tensors[id].offset;
  ASSERT_TRUE(exec->run(ptrs.data()));
  std::unique_ptr<QuantLinearStep> direct;
  ASSERT_TRUE(QuantLinearStep::create(*ctx, c.desc, 6, c.weights(), direct));
  std::vector<float> want(6 * 24);
  ASSERT_TRUE(direct->run(c.input.data(), c.bias.data(), nullptr, want.data()));
  EXPECT_EQ(out, want);

  // Diagnostics name the bundle, the step and the operand.
  step.attrs[0].stringValue = "int3";
  EXPECT_STATUS(createCpuStepExecutor(bc, p.plan.steps[0], exec),
                StatusCode::Unsupported,
                "bundle 'q.lmopt': quant_linear step 'ffn_up': attribute "
                "'mode' is 'int3'; expected int8_dynamic_per_token, "
                "int8_dynamic_per_tensor, int8_static, bf16, "
                "int4_weight_only or fp16");
  step.attrs[0].stringValue = "int4_weight_only";
  p.plan.tensors[s].dims = {24, 4};
  EXPECT_STATUS(createCpuStepExecutor(bc, p.plan.steps[0], exec),
                StatusCode::InvalidFormat,
                "bundle 'q.lmopt': quant_linear step 'ffn_up': scales 't2' "
                "(f32 [24, 4]) should have dims [24, 2]");
  p.plan.tensors[s].dims = {24, 2};
  p.plan.tensors[w].storage = TensorStorage::Arena;
  EXPECT_STATUS(createCpuStepExecutor(bc, p.plan.steps[0], exec),
                StatusCode::InvalidFormat,
                "bundle 'q.lmopt': quant_linear step 'ffn_up': weight 't1' "
                "(i8 [24, 32]) is not in the weights section; a quantized "
                "linear packs its constants when the session is created");
  p.plan.tensors[w].storage = TensorStorage::Weight;
  attr("quantize_output", 1);
  EXPECT_STATUS(createCpuStepExecutor(bc, p.plan.steps[0], exec),
                StatusCode::InvalidFormat,
                "bundle 'q.lmopt': quant_linear step 'ffn_up': attribute "
                "'quantize_output' is for int8 steps without a residual");
  step.attrs.back().name = "input_quantized";
  EXPECT_STATUS(createCpuStepExecutor(bc, p.plan.steps[0], exec),
                StatusCode::InvalidFormat,
                "bundle 'q.lmopt': quant_linear step 'ffn_up': attribute "
                "'input_quantized' is for int8_dynamic_per_token steps");
  // A statically quantized output needs its scale, and an int8 step.
  step.attrs.back().name = "output_static";
  EXPECT_STATUS(createCpuStepExecutor(bc, p.plan.steps[0], exec),
                StatusCode::InvalidFormat,
                "bundle 'q.lmopt': quant_linear step 'ffn_up' lacks the float "
                "attribute 'output_scale'");
  PlanAttr scale;
  scale.name = "output_scale";
  scale.kind = PlanAttr::Kind::Float;
  scale.floatValue = 0.05;
  step.attrs.push_back(scale);
  EXPECT_STATUS(createCpuStepExecutor(bc, p.plan.steps[0], exec),
                StatusCode::InvalidFormat,
                "bundle 'q.lmopt': quant_linear step 'ffn_up': attribute "
                "'output_static' is for int8 steps without a residual or "
                "'quantize_output'");
  step.attrs.pop_back();
  step.attrs.pop_back();
  attr("group", 1);
  EXPECT_STATUS(createCpuStepExecutor(bc, p.plan.steps[0], exec),
                StatusCode::Unsupported,
                "bundle 'q.lmopt': quant_linear step 'ffn_up': has attribute "
                "'group', which this runtime does not know");
}

TEST(QuantKernels, WidenF16) {
  // 20 values, so that the AVX-512 form converts 16 and the portable form
  // the rest; the expected values are the IEEE half definitions.
  std::vector<uint16_t> bits = {0x3C00, 0xC000, 0x0001, 0x0400, 0x7BFF,
                                0x3555, 0x0000, 0x8000, 0x2E66, 0x03FF,
                                0x3800, 0x4248, 0xBC00, 0x1400, 0x5640,
                                0x0200, 0x3C01, 0xFBFF, 0x0001, 0x3555};
  std::vector<float> want = {1.0f, -2.0f, 0x1p-24f, 0x1p-14f, 65504.0f,
                             0x1.554p-2f, 0.0f, -0.0f, 0x1.998p-4f,
                             0x1.ff8p-15f, 0.5f, 3.140625f, -1.0f, 0x1p-10f,
                             100.0f, 0x1p-15f, 0x1.004p+0f, -65504.0f,
                             0x1p-24f, 0x1.554p-2f};
  std::vector<float> got(bits.size());
  quant::widenF16(bits.data(), bits.size(), got.data());
  for (size_t i = 0; i < bits.size(); ++i)
    EXPECT_EQ(got[i], want[i]) << "at " << i;
  EXPECT_TRUE(std::signbit(got[7]));
}

TEST(QuantLinearExecutor, ReadsF16ScalesAndPackedU4ZeroPoints) {
  // K = 96 in blocks of 32: three blocks, so the packed zero points end
  // with a lone low nibble per row.
  Case c = makeCase(QuantLinearMode::Int4WeightOnly, 4, 96, 20, false, false,
                    LinearActivation::None, false, 801);
  c.desc.weightSigned = false;
  const int64_t n = 20, blocks = 3;
  ASSERT_EQ(c.desc.blockSize, 32);
  // f16 scales 0x2000 + j * 37 + b * 5 (normal, 2^-7 and up), their f32
  // values by the IEEE half definition, and u4 zero points 0..15.
  std::vector<uint16_t> halfScales(size_t(n * blocks));
  std::vector<uint8_t> packedZps(size_t(n * 2), 0);
  for (int64_t j = 0; j < n; ++j)
    for (int64_t b = 0; b < blocks; ++b) {
      uint16_t h = uint16_t(0x2000 + j * 37 + b * 5);
      halfScales[size_t(j * blocks + b)] = h;
      c.scales[size_t(j * blocks + b)] = halfToFloat(h);
      uint8_t zp = uint8_t((j * 7 + b * 3) % 16);
      c.zeroPoints4[size_t(j * blocks + b)] = zp;
      packedZps[size_t(j * 2 + b / 2)] |= uint8_t(zp << (b % 2 ? 4 : 0));
    }
  OneStepPlan p;
  uint32_t in = p.add(DType::F32, {4, 96}, TensorStorage::Input);
  uint32_t w = p.add(DType::U8, {n, 48}, TensorStorage::Weight,
                     c.weight4.data());
  uint32_t s = p.add(DType::F16, {n, blocks}, TensorStorage::Weight,
                     halfScales.data());
  uint32_t z = p.add(DType::U8, {n, 2}, TensorStorage::Weight,
                     packedZps.data());
  uint32_t o = p.add(DType::F32, {4, n}, TensorStorage::Arena);
  PlanStep &step = p.plan.addStep(StepKind::QuantLinear, "fc");
  step.operands = {in, w, s, z};
  step.results = {o};
  PlanAttr mode;
  mode.name = "mode";
  mode.kind = PlanAttr::Kind::String;
  mode.stringValue = "int4_weight_only";
  step.attrs.push_back(mode);
  const std::pair<const char *, int64_t> attrs[] = {
      {"block_size", 32}, {"weight_signed", 0}, {"has_zero_points", 1}};
  for (auto [name, v] : attrs) {
    PlanAttr a;
    a.name = name;
    a.intValue = v;
    step.attrs.push_back(a);
  }
  std::unique_ptr<CpuContext> ctx = makeContext();
  ASSERT_TRUE(ctx);
  CpuStepContext bc{p.program, p.plan,    *ctx,
                    nullptr,   "q.lmopt", p.weights.data()};
  std::unique_ptr<StepExecutor> exec;
  Status st = createCpuStepExecutor(bc, p.plan.steps[0], exec);
  ASSERT_TRUE(st) << st.toString();
  std::vector<float> out(size_t(4 * n));
  std::vector<void *> ptrs = {c.input.data(), nullptr, nullptr, nullptr,
                              out.data()};
  for (uint32_t id : {w, s, z})
    ptrs[id] = p.weights.data() + p.plan.tensors[id].offset;
  ASSERT_TRUE(exec->run(ptrs.data()));
  // The same step from f32 scales and one zero point per byte.
  std::unique_ptr<QuantLinearStep> direct;
  ASSERT_TRUE(QuantLinearStep::create(*ctx, c.desc, 4, c.weights(), direct));
  std::vector<float> want(size_t(4 * n));
  ASSERT_TRUE(direct->run(c.input.data(), nullptr, nullptr, want.data()));
  EXPECT_EQ(out, want);
  // And against the dequantized weight: w = (q - zp) * scale.
  for (int64_t r = 0; r < 4; ++r)
    for (int64_t j = 0; j < n; ++j) {
      double acc = 0.0;
      for (int64_t kk = 0; kk < 96; ++kk) {
        int q = (c.weight4[size_t(j * 48 + kk / 2)] >> (kk % 2 ? 4 : 0)) & 0xF;
        int64_t b = kk / 32;
        acc += double(c.input[size_t(r * 96 + kk)]) *
               double(float(q - int(c.zeroPoints4[size_t(j * blocks + b)])) *
                      c.scales[size_t(j * blocks + b)]);
      }
      EXPECT_NEAR(out[size_t(r * n + j)], acc, 1e-4 * (1.0 + std::fabs(acc)))
          << "at " << r << ", " << j;
    }

  // f16 scales are for int4 only; zero points of another width are refused.
  p.plan.tensors[z].dims = {n, 4};
  EXPECT_STATUS(createCpuStepExecutor(bc, p.plan.steps[0], exec),
                StatusCode::InvalidFormat,
                "bundle 'q.lmopt': quant_linear step 'fc': zero_points 't3' "
                "(u8 [20, 4]) should have dims [20, 3]");
  p.plan.tensors[z].dims = {n, 2};
  p.plan.tensors[s].dtype = DType::BF16;
  EXPECT_STATUS(createCpuStepExecutor(bc, p.plan.steps[0], exec),
                StatusCode::InvalidFormat,
                "bundle 'q.lmopt': quant_linear step 'fc': scales 't2' "
                "(bf16 [20, 3]) has dtype bf16; expected f32 or f16");
}

} // namespace

TEST(QuantLinearExecutor, BuildsFp16StepsFromAPlan) {
  // fp16: f16 input and [N, K] f16 weight, no scales; bias and residual.
  Case c = makeCase(QuantLinearMode::FP16, 5, 48, 20, true, true,
                    LinearActivation::None, true, 721);
  OneStepPlan p;
  uint32_t in = p.add(DType::F16, {5, 48}, TensorStorage::Input);
  uint32_t w =
      p.add(DType::F16, {20, 48}, TensorStorage::Weight, c.weightBf16.data());
  uint32_t b = p.add(DType::F32, {20}, TensorStorage::Weight, c.bias.data());
  uint32_t r = p.add(DType::F32, {5, 20}, TensorStorage::Input);
  uint32_t o = p.add(DType::F32, {5, 20}, TensorStorage::Arena);
  PlanStep &step = p.plan.addStep(StepKind::QuantLinear, "dense");
  step.operands = {in, w, b, r};
  step.results = {o};
  auto attr = [&](const char *name, int64_t v) {
    PlanAttr a;
    a.name = name;
    a.intValue = v;
    step.attrs.push_back(a);
  };
  PlanAttr mode;
  mode.name = "mode";
  mode.kind = PlanAttr::Kind::String;
  mode.stringValue = "fp16";
  step.attrs.push_back(mode);
  attr("transpose_weight", 1);
  attr("has_bias", 1);
  attr("has_residual", 1);

  std::unique_ptr<CpuContext> ctx = makeContext();
  ASSERT_TRUE(ctx);
  CpuStepContext bc{p.program, p.plan,    *ctx,
                    nullptr,   "h.lmopt", p.weights.data()};
  std::unique_ptr<StepExecutor> exec;
  Status st = createCpuStepExecutor(bc, p.plan.steps[0], exec);
  ASSERT_TRUE(st) << st.toString();
  std::vector<float> out(5 * 20);
  std::vector<void *> ptrs = {c.inputBf16.data(), nullptr, nullptr,
                              c.residual.data(), out.data()};
  for (uint32_t id : {w, b})
    ptrs[id] = p.weights.data() + p.plan.tensors[id].offset;
  ASSERT_TRUE(exec->run(ptrs.data()));
  std::unique_ptr<QuantLinearStep> direct;
  ASSERT_TRUE(QuantLinearStep::create(*ctx, c.desc, 5, c.weights(), direct));
  EXPECT_EQ(direct->packedBytes(), 48u * 64 * 2); // one panel of halves
  std::vector<float> want(5 * 20);
  ASSERT_TRUE(direct->run(c.inputBf16.data(), c.bias.data(), c.residual.data(),
                          want.data()));
  EXPECT_EQ(out, want);

  // An f32 input (the cast to f16 missing) and zero points are refused.
  p.plan.tensors[in].dtype = DType::F32;
  EXPECT_STATUS(createCpuStepExecutor(bc, p.plan.steps[0], exec),
                StatusCode::InvalidFormat,
                "bundle 'h.lmopt': quant_linear step 'dense': input 't0' "
                "(f32 [5, 48]) has dtype f32; expected f16");
  p.plan.tensors[in].dtype = DType::F16;
  attr("has_zero_points", 1);
  EXPECT_STATUS(createCpuStepExecutor(bc, p.plan.steps[0], exec),
                StatusCode::InvalidFormat,
                "bundle 'h.lmopt': quant_linear step 'dense': a fp16 step "
                "has no zero points");
}

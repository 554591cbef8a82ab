//===- CudaStepTest.cpp - The CUDA attention and gather steps -------------===//
//
// Each case builds one step (a Program and Plan, as a session would) on the
// `cuda` device and on the `cpu` device, runs both on the same inputs and
// compares: the CPU step is the oracle (it is checked against NumPy and
// onnxruntime elsewhere). Only Device.h is used, so the tests build on
// machines without CUDA; they skip, saying why, where createDevice("cuda")
// fails (no driver, no GPU, or a runtime built without the device).
//
//===----------------------------------------------------------------------===//

#include "lmopt/Format/Float16.h"
#include "lmopt/Runtime/Device.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <string>
#include <vector>

using namespace lmopt::runtime;

namespace {

/// Deterministic values in [-scale, scale).
std::vector<float> randomValues(uint32_t seed, size_t count, float scale) {
  std::vector<float> v(count);
  uint64_t state = 0x9e3779b97f4a7c15ull * (seed + 1);
  for (float &x : v) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    x = scale * (float(uint32_t(state >> 40)) / float(1u << 24) * 2.0f - 1.0f);
  }
  return v;
}

/// Both devices, or a skip.
class CudaStepTest : public ::testing::Test {
public:
  void SetUp() override {
    Status st = createDevice("cuda", DeviceOptions(), gpu);
    if (!st)
      GTEST_SKIP() << "no CUDA device here: " << st.message();
    st = createDevice("cpu", DeviceOptions(), cpu);
    ASSERT_TRUE(st) << st.message();
  }

  /// A device copy of `bytes` bytes of `host` (kept until the test ends).
  void *upload(const void *host, size_t bytes) {
    std::unique_ptr<DeviceBuffer> buffer;
    Status st = gpu->allocate(bytes, buffer);
    EXPECT_TRUE(st) << st.message();
    if (!st)
      return nullptr;
    st = gpu->copy(buffer->data(), host, bytes, Device::CopyKind::HostToDevice);
    EXPECT_TRUE(st) << st.message();
    buffers.push_back(std::move(buffer));
    return buffers.back()->data();
  }

  std::vector<uint8_t> download(const void *device, size_t bytes) {
    std::vector<uint8_t> host(bytes);
    Status st = gpu->copy(host.data(), device, bytes,
                          Device::CopyKind::DeviceToHost);
    EXPECT_TRUE(st) << st.message();
    return host;
  }

  std::unique_ptr<Device> gpu, cpu;
  std::vector<std::unique_ptr<DeviceBuffer>> buffers;
};

/// Tensors, states and one step in a program on devices cpu and cuda.
struct OneStep {
  Program program;
  Plan plan;
  PlanStep *step = nullptr;
  uint64_t arenaEnd = 0;

  OneStep(StepKind kind, const std::string &name) {
    program.devices.push_back({"cuda", ""});
    step = &plan.addStep(kind, name);
    step->device = 1;
  }
  uint32_t arena(const std::string &name, DType dtype,
                 std::vector<int64_t> dims) {
    PlanTensor t{name, dtype, std::move(dims), TensorStorage::Arena, arenaEnd};
    t.device = 1;
    arenaEnd += (t.byteSize() + 63) / 64 * 64 + 64;
    return plan.addTensor(t);
  }
  /// A view `dims` of a new state of `capacity` dims.
  uint32_t state(const std::string &name, DType dtype,
                 std::vector<int64_t> dims, std::vector<int64_t> capacity) {
    PlanState s;
    s.name = name;
    s.dtype = dtype;
    s.dims = std::move(capacity);
    s.device = 1;
    program.states.push_back(s);
    PlanTensor t{name, dtype, std::move(dims), TensorStorage::State,
                 uint64_t(program.states.size() - 1)};
    t.device = 1;
    return plan.addTensor(t);
  }
  void attr(const std::string &name, int64_t value) {
    PlanAttr a;
    a.name = name;
    a.intValue = value;
    step->attrs.push_back(a);
  }
  void floatAttr(const std::string &name, double value) {
    PlanAttr a;
    a.name = name;
    a.kind = PlanAttr::Kind::Float;
    a.floatValue = value;
    step->attrs.push_back(a);
  }
  StepBuildContext context() {
    plan.arenaSizes = {0, arenaEnd};
    return StepBuildContext{program, plan, "cuda_test.lmopt"};
  }
};

//===----------------------------------------------------------------------===//
// Attention
//===----------------------------------------------------------------------===//

enum class MaskFill { None, KeyPadding, NegInfRows, BoolRandom, BoolRows };

struct AttentionCase {
  int64_t batch = 1, heads = 2, queryLength = 5, keyLength = 7, headDim = 64;
  bool causal = false, kvHeadsSplit = false, zeroMaskedRows = false;
  /// Key and value as views of states this long (0: dense arena tensors).
  int64_t capacity = 0;
  /// Query, key and value as views of one fused [B, S, 3*H*D] buffer.
  bool fusedQkv = false;
  MaskFill mask = MaskFill::None;
  /// Mask dims as a pattern over B, H, Sq, Sk: 0 keeps the dim, 1 makes it
  /// 1 (broadcast); the mask's rank is the pattern's length.
  std::vector<int> maskPattern = {0, 1, 1, 0};
  DType dtype = DType::F32;
  double scale = 0; // 0: 1/sqrt(D)
};

std::string describeCase(const AttentionCase &c) {
  return "B" + std::to_string(c.batch) + " H" + std::to_string(c.heads) +
         " Sq" + std::to_string(c.queryLength) + " Sk" +
         std::to_string(c.keyLength) + " D" + std::to_string(c.headDim) +
         (c.causal ? " causal" : "") + (c.kvHeadsSplit ? " kv_split" : "") +
         (c.zeroMaskedRows ? " zero_rows" : "") +
         (c.capacity ? " capacity " + std::to_string(c.capacity) : "") +
         (c.fusedQkv ? " fused" : "") + " mask " +
         std::to_string(int(c.mask)) + " " + dtypeName(c.dtype);
}

/// Rounds through the case's dtype (so both devices see one value) and
/// returns the bytes the GPU reads.
std::vector<uint8_t> encode(std::vector<float> &values, DType dtype) {
  if (dtype == DType::F32) {
    std::vector<uint8_t> bytes(values.size() * 4);
    std::memcpy(bytes.data(), values.data(), bytes.size());
    return bytes;
  }
  std::vector<uint8_t> bytes(values.size() * 2);
  for (size_t i = 0; i < values.size(); ++i) {
    uint16_t bits = dtype == DType::F16 ? floatToHalf(values[i])
                                        : floatToBFloat16(values[i]);
    values[i] = dtype == DType::F16 ? halfToFloat(bits) : bfloat16ToFloat(bits);
    std::memcpy(bytes.data() + 2 * i, &bits, 2);
  }
  return bytes;
}

std::vector<float> decode(const std::vector<uint8_t> &bytes, DType dtype) {
  size_t size = dtypeSize(dtype), count = bytes.size() / size;
  std::vector<float> values(count);
  for (size_t i = 0; i < count; ++i) {
    if (dtype == DType::F32) {
      std::memcpy(&values[i], bytes.data() + 4 * i, 4);
      continue;
    }
    uint16_t bits;
    std::memcpy(&bits, bytes.data() + 2 * i, 2);
    values[i] = dtype == DType::F16 ? halfToFloat(bits) : bfloat16ToFloat(bits);
  }
  return values;
}

/// Builds the case on both devices, runs it, and compares.
void runAttention(CudaStepTest &t, const AttentionCase &c) {
  SCOPED_TRACE(describeCase(c));
  const int64_t B = c.batch, H = c.heads, Sq = c.queryLength,
                Sk = c.keyLength, D = c.headDim, width = H * D;
  const int64_t cap = c.capacity ? c.capacity : Sk;
  // The plan for the GPU in the case's dtype, and the same plan in f32 for
  // the CPU oracle.
  auto build = [&](DType dtype, OneStep &s, std::vector<int64_t> &kvDims) {
    s.attr("num_heads", H);
    s.floatAttr("scale", c.scale ? c.scale : 1.0 / std::sqrt(double(D)));
    s.attr("causal", c.causal);
    s.attr("kv_heads_split", c.kvHeadsSplit);
    s.attr("zero_masked_rows", c.zeroMaskedRows);
    uint32_t q, k, v;
    if (c.fusedQkv) {
      uint32_t qkv = s.arena("qkv", dtype, {B, Sq, 3 * width});
      for (auto [role, offset] : {std::pair<const char *, int64_t>{"query", 0},
                                  {"key", width},
                                  {"value", 2 * width}}) {
        s.attr(std::string(role) + "_offset", offset);
        s.attr(std::string(role) + "_row_stride", 3 * width);
      }
      q = k = v = qkv;
    } else {
      q = s.arena("query", dtype, {B, Sq, width});
      kvDims = c.kvHeadsSplit ? std::vector<int64_t>{B, H, Sk, D}
                              : std::vector<int64_t>{B, Sk, width};
      std::vector<int64_t> kvCapacity = kvDims;
      kvCapacity[c.kvHeadsSplit ? 2 : 1] = cap;
      if (c.capacity) {
        k = s.state("key_cache", dtype, kvDims, kvCapacity);
        v = s.state("value_cache", dtype, kvDims, kvCapacity);
      } else {
        k = s.arena("key", dtype, kvDims);
        v = s.arena("value", dtype, kvDims);
      }
      kvDims = kvCapacity;
    }
    s.step->operands = {q, k, v};
    if (c.mask != MaskFill::None) {
      const int64_t full[4] = {B, H, Sq, Sk};
      std::vector<int64_t> dims;
      size_t rank = c.maskPattern.size();
      for (size_t i = 0; i < rank; ++i)
        dims.push_back(c.maskPattern[i] ? 1 : full[4 - rank + i]);
      bool isBool =
          c.mask == MaskFill::BoolRandom || c.mask == MaskFill::BoolRows;
      s.step->operands.push_back(
          s.arena("mask", isBool ? DType::Bool : DType::F32, dims));
    }
    s.step->results = {s.arena("output", dtype, {B, Sq, width})};
  };
  OneStep gpuStep(StepKind::Attention, "attn"), cpuStep(StepKind::Attention,
                                                        "attn");
  std::vector<int64_t> kvDims;
  build(c.dtype, gpuStep, kvDims);
  build(DType::F32, cpuStep, kvDims);

  // Inputs: the fused buffer, or Q and (at capacity) K and V.
  const float amp = 2.0f;
  std::vector<std::vector<float>> inputs;
  if (c.fusedQkv) {
    inputs.push_back(randomValues(1, size_t(B * Sq * 3 * width), amp));
  } else {
    size_t kvCount = 1;
    for (int64_t d : kvDims)
      kvCount *= size_t(d);
    inputs.push_back(randomValues(1, size_t(B * Sq * width), amp));
    inputs.push_back(randomValues(2, kvCount, amp));
    inputs.push_back(randomValues(3, kvCount, amp));
  }
  std::vector<std::vector<uint8_t>> gpuBytes;
  for (std::vector<float> &in : inputs)
    gpuBytes.push_back(encode(in, c.dtype));

  // The mask, in bytes either way (f32 or one byte per element).
  std::vector<uint8_t> maskBytes;
  if (c.mask != MaskFill::None) {
    const PlanTensor &m = cpuStep.plan.tensors[cpuStep.step->operands[3]];
    const size_t count = size_t(m.elementCount());
    const int64_t keys = m.dims.back();
    const int64_t rowsOf = int64_t(count) / keys;
    std::vector<float> additive(count, 0.0f);
    std::vector<uint8_t> keep(count, 1);
    std::vector<float> noise = randomValues(4, count, 1.0f);
    for (int64_t r = 0; r < rowsOf; ++r)
      for (int64_t j = 0; j < keys; ++j) {
        size_t at = size_t(r * keys + j);
        switch (c.mask) {
        case MaskFill::KeyPadding: // the last third of the keys of odd rows
          additive[at] = (r % 2 && j >= keys - keys / 3) ? -10000.0f
                                                         : noise[at] * 0.5f;
          break;
        case MaskFill::NegInfRows: // every third row all -inf
          additive[at] = r % 3 == 1 ? -std::numeric_limits<float>::infinity()
                         : j % 5 == 0 ? -std::numeric_limits<float>::infinity()
                                      : 0.0f;
          break;
        case MaskFill::BoolRandom:
          keep[at] = noise[at] > -0.4f;
          break;
        case MaskFill::BoolRows: // every third row hides every key
          keep[at] = r % 3 != 1 && noise[at] > -0.6f;
          break;
        case MaskFill::None:
          break;
        }
      }
    bool isBool = m.dtype == DType::Bool;
    maskBytes.resize(count * (isBool ? 1 : 4));
    std::memcpy(maskBytes.data(), isBool ? (void *)keep.data() : additive.data(),
                maskBytes.size());
  }

  // The CPU oracle.
  std::unique_ptr<StepExecutor> cpuExec;
  Status st = t.cpu->createStep(cpuStep.context(), *cpuStep.step, cpuExec);
  ASSERT_TRUE(st) << st.message();
  std::vector<float> want(size_t(B * Sq * width));
  std::vector<void *> cpuTensors(cpuStep.plan.tensors.size(), nullptr);
  const std::vector<uint32_t> &ops = cpuStep.step->operands;
  for (size_t i = 0; i < 3; ++i)
    cpuTensors[ops[i]] = inputs[c.fusedQkv ? 0 : i].data();
  if (ops.size() == 4)
    cpuTensors[ops[3]] = maskBytes.data();
  cpuTensors[cpuStep.step->results[0]] = want.data();
  st = cpuExec->run(cpuTensors.data());
  ASSERT_TRUE(st) << st.message();

  // The GPU.
  std::unique_ptr<StepExecutor> gpuExec;
  st = t.gpu->createStep(gpuStep.context(), *gpuStep.step, gpuExec);
  ASSERT_TRUE(st) << st.message();
  std::vector<void *> gpuTensors(gpuStep.plan.tensors.size(), nullptr);
  for (size_t i = 0; i < 3; ++i) {
    const std::vector<uint8_t> &bytes = gpuBytes[c.fusedQkv ? 0 : i];
    if (!gpuTensors[ops[i]])
      gpuTensors[ops[i]] = t.upload(bytes.data(), bytes.size());
  }
  if (ops.size() == 4)
    gpuTensors[ops[3]] = t.upload(maskBytes.data(), maskBytes.size());
  const size_t outBytes = want.size() * dtypeSize(c.dtype);
  std::vector<uint8_t> poison(outBytes, 0x7f);
  void *out = t.upload(poison.data(), outBytes);
  gpuTensors[gpuStep.step->results[0]] = out;
  st = gpuExec->run(gpuTensors.data());
  ASSERT_TRUE(st) << st.message();
  st = t.gpu->synchronize();
  ASSERT_TRUE(st) << st.message();
  std::vector<float> got = decode(t.download(out, outBytes), c.dtype);

  // f32 differs from the CPU only in summation order; 16-bit outputs are
  // rounded once more.
  const double atol = c.dtype == DType::F32   ? 2e-5
                      : c.dtype == DType::F16 ? 2e-3
                                              : 1.6e-2;
  const double rtol = c.dtype == DType::F32 ? 1e-4 : atol;
  int bad = 0;
  for (size_t i = 0; i < want.size() && bad < 8; ++i) {
    bool ok = std::isnan(want[i])
                  ? std::isnan(got[i])
                  : std::fabs(got[i] - want[i]) <=
                        atol + rtol * std::fabs(want[i]);
    if (ok)
      continue;
    ++bad;
    ADD_FAILURE() << "element " << i << " (row " << i / size_t(width)
                  << "): got " << got[i] << ", the CPU " << want[i];
  }
}

TEST_F(CudaStepTest, AttentionBertKeyPadding) {
  AttentionCase c;
  c.batch = 3;
  c.heads = 4;
  c.queryLength = c.keyLength = 77;
  c.mask = MaskFill::KeyPadding;
  c.maskPattern = {0, 1, 1, 0}; // [B, 1, 1, Sk]
  runAttention(*this, c);
  c.maskPattern = {0, 0}; // [Sq, Sk] broadcast over B and H
  runAttention(*this, c);
}

TEST_F(CudaStepTest, AttentionCausalSquare) {
  for (int64_t len : {1, 63, 64, 65, 130}) {
    AttentionCase c;
    c.heads = 3;
    c.queryLength = c.keyLength = len;
    c.causal = true;
    runAttention(*this, c);
  }
}

TEST_F(CudaStepTest, AttentionHeadDims) {
  for (int64_t d : {8, 32, 48, 64, 80, 128}) {
    AttentionCase c;
    c.batch = 2;
    c.queryLength = 70;
    c.keyLength = 129;
    c.headDim = d;
    c.scale = 0.3;
    runAttention(*this, c);
  }
}

TEST_F(CudaStepTest, AttentionCausalOffsets) {
  AttentionCase c;
  c.causal = true;
  c.headDim = 128;
  c.queryLength = 37; // a chunk of new tokens after 113 cached ones
  c.keyLength = 150;
  runAttention(*this, c);
  // More queries than keys: the first rows see no key at all.
  c.headDim = 64;
  c.queryLength = 70;
  c.keyLength = 20;
  runAttention(*this, c);
  c.zeroMaskedRows = true;
  runAttention(*this, c);
}

TEST_F(CudaStepTest, AttentionMaskedRows) {
  for (bool zero : {false, true}) {
    for (MaskFill fill : {MaskFill::BoolRows, MaskFill::BoolRandom,
                          MaskFill::NegInfRows}) {
      AttentionCase c;
      c.batch = 2;
      c.queryLength = 66;
      c.keyLength = 71;
      c.mask = fill;
      c.maskPattern = {0, 0, 0, 0};
      c.zeroMaskedRows = zero;
      runAttention(*this, c);
      c.queryLength = 3; // the decode kernel
      runAttention(*this, c);
    }
  }
}

TEST_F(CudaStepTest, AttentionDecodeAtCapacity) {
  for (bool split : {false, true})
    for (int64_t sk : {1, 200, 333, 3000}) {
      AttentionCase c;
      c.heads = 12;
      c.queryLength = 1;
      c.keyLength = sk;
      c.capacity = 4096;
      c.causal = true;
      c.kvHeadsSplit = split;
      runAttention(*this, c);
    }
  // A few rows at once, each with its own causal end, D 128.
  AttentionCase c;
  c.batch = 2;
  c.queryLength = 4;
  c.keyLength = 517;
  c.capacity = 600;
  c.headDim = 128;
  c.causal = true;
  runAttention(*this, c);
}

TEST_F(CudaStepTest, AttentionPrefillAtCapacity) {
  AttentionCase c;
  c.queryLength = 40;
  c.keyLength = 300;
  c.capacity = 512;
  c.causal = true;
  c.kvHeadsSplit = true;
  runAttention(*this, c);
}

TEST_F(CudaStepTest, AttentionFusedQkvViews) {
  AttentionCase c;
  c.batch = 2;
  c.heads = 12;
  c.queryLength = c.keyLength = 50;
  c.fusedQkv = true;
  c.causal = true;
  runAttention(*this, c);
}

TEST_F(CudaStepTest, AttentionHalfPrecision) {
  for (DType dtype : {DType::F16, DType::BF16})
    for (int64_t sq : {1, 90}) {
      AttentionCase c;
      c.batch = 2;
      c.heads = 4;
      c.queryLength = sq;
      c.keyLength = 300;
      c.causal = true;
      c.dtype = dtype;
      c.mask = MaskFill::KeyPadding;
      runAttention(*this, c);
    }
}

/// The message of building `s`'s step on the GPU (empty when it builds).
std::string buildError(CudaStepTest &t, OneStep &s) {
  std::unique_ptr<StepExecutor> exec;
  Status st = t.gpu->createStep(s.context(), *s.step, exec);
  return st ? std::string() : st.message();
}

TEST_F(CudaStepTest, AttentionRejects) {
  auto make = [](int64_t headDim, DType keyType) {
    auto s = std::make_unique<OneStep>(StepKind::Attention, "attn_bad");
    s->attr("num_heads", 2);
    s->floatAttr("scale", 0.1);
    uint32_t q = s->arena("q", DType::F32, {1, 4, 2 * headDim});
    uint32_t k = s->arena("k", keyType, {1, 4, 2 * headDim});
    uint32_t v = s->arena("v", DType::F32, {1, 4, 2 * headDim});
    s->step->operands = {q, k, v};
    s->step->results = {s->arena("o", DType::F32, {1, 4, 2 * headDim})};
    return s;
  };
  auto big = make(256, DType::F32);
  EXPECT_EQ(buildError(*this, *big),
            "bundle 'cuda_test.lmopt': attention step 'attn_bad': head dim "
            "256 is above the CUDA attention kernel's limit of 128");
  auto mixed = make(64, DType::F16);
  EXPECT_EQ(buildError(*this, *mixed),
            "bundle 'cuda_test.lmopt': attention step 'attn_bad': key 'k' "
            "(f16 [1, 4, 128]) has dtype f16; expected f32, the query's");
  auto masked = make(64, DType::F32);
  masked->step->operands.push_back(masked->arena("m", DType::F32, {3, 4}));
  EXPECT_EQ(buildError(*this, *masked),
            "bundle 'cuda_test.lmopt': attention step 'attn_bad': additive "
            "mask dims [3, 4] do not broadcast to [B, H, Sq, Sk] = "
            "[1, 2, 4, 4]");
}

//===----------------------------------------------------------------------===//
// Gather
//===----------------------------------------------------------------------===//

/// Runs a gather on both devices; with `badIndex` an index is out of range:
/// the CPU refuses it and the GPU's synchronize reports it, once.
void runGather(CudaStepTest &t, DType dataType, std::vector<int64_t> dataDims,
               int64_t axis, std::vector<int64_t> indices,
               std::vector<int64_t> indicesDims, DType indexType,
               bool rowScales = false, bool badIndex = false) {
  SCOPED_TRACE(std::string(dtypeName(dataType)) + " " + formatDims(dataDims) +
               " axis " + std::to_string(axis));
  OneStep s(StepKind::Gather, "embed");
  s.attr("axis", axis);
  if (rowScales)
    s.attr("row_scales", 1);
  uint32_t data = s.arena("table", dataType, dataDims);
  uint32_t idx = s.arena("ids", indexType, indicesDims);
  s.step->operands = {data, idx};
  if (rowScales)
    s.step->operands.push_back(s.arena("scales", DType::F32, {dataDims[0]}));
  std::vector<int64_t> outDims(dataDims.begin(), dataDims.begin() + axis);
  outDims.insert(outDims.end(), indicesDims.begin(), indicesDims.end());
  outDims.insert(outDims.end(), dataDims.begin() + axis + 1, dataDims.end());
  uint32_t out =
      s.arena("out", rowScales ? DType::F32 : dataType, std::move(outDims));
  s.step->results = {out};

  const PlanTensor &dataT = s.plan.tensors[data], &outT = s.plan.tensors[out];
  std::vector<uint8_t> dataBytes(dataT.byteSize());
  for (size_t i = 0; i < dataBytes.size(); ++i)
    dataBytes[i] = uint8_t(i * 131 + 7);
  std::vector<uint8_t> indexBytes(indices.size() * dtypeSize(indexType));
  for (size_t i = 0; i < indices.size(); ++i) {
    if (indexType == DType::I64) {
      std::memcpy(indexBytes.data() + 8 * i, &indices[i], 8);
    } else {
      int32_t narrow = int32_t(indices[i]);
      std::memcpy(indexBytes.data() + 4 * i, &narrow, 4);
    }
  }
  std::vector<float> scales =
      randomValues(9, size_t(rowScales ? dataDims[0] : 0), 0.05f);

  std::vector<uint8_t> want(outT.byteSize());
  std::vector<void *> tensors(s.plan.tensors.size(), nullptr);
  tensors[data] = dataBytes.data();
  tensors[idx] = indexBytes.data();
  if (rowScales)
    tensors[s.step->operands[2]] = scales.data();
  tensors[out] = want.data();
  std::unique_ptr<StepExecutor> cpuExec;
  Status st = t.cpu->createStep(s.context(), *s.step, cpuExec);
  ASSERT_TRUE(st) << st.message();
  st = cpuExec->run(tensors.data());
  ASSERT_EQ(bool(st), !badIndex) << st.message();
  std::string cpuMessage = st ? std::string() : st.message();

  std::unique_ptr<StepExecutor> gpuExec;
  st = t.gpu->createStep(s.context(), *s.step, gpuExec);
  ASSERT_TRUE(st) << st.message();
  tensors[data] = t.upload(dataBytes.data(), dataBytes.size());
  tensors[idx] = t.upload(indexBytes.data(), indexBytes.size());
  if (rowScales)
    tensors[s.step->operands[2]] =
        t.upload(scales.data(), scales.size() * sizeof(float));
  std::vector<uint8_t> poison(want.size(), 0x5a);
  tensors[out] = t.upload(poison.data(), poison.size());
  st = gpuExec->run(tensors.data());
  ASSERT_TRUE(st) << st.message();
  st = t.gpu->synchronize();
  if (badIndex) {
    // The CPU's words, after the bundle's name.
    ASSERT_FALSE(st) << "an index out of range went unreported";
    EXPECT_EQ(st.message(), "bundle 'cuda_test.lmopt': " + cpuMessage);
    EXPECT_EQ(st.code(), StatusCode::InvalidArgument);
    // Reported once: the next synchronize is clean.
    st = t.gpu->synchronize();
    EXPECT_TRUE(st) << st.message();
    return;
  }
  ASSERT_TRUE(st) << st.message();
  std::vector<uint8_t> got = t.download(tensors[out], want.size());
  if (!rowScales) {
    EXPECT_EQ(got, want);
    return;
  }
  std::vector<float> gotF = decode(got, DType::F32),
                     wantF = decode(want, DType::F32);
  for (size_t i = 0; i < wantF.size(); ++i)
    ASSERT_FLOAT_EQ(gotF[i], wantF[i]) << "element " << i;
}

TEST_F(CudaStepTest, GatherEmbeddingRows) {
  std::vector<int64_t> ids = {0, 5, 49, -1, -50, 17, 17, 3};
  runGather(*this, DType::F32, {50, 768}, 0, ids, {2, 4}, DType::I64);
  runGather(*this, DType::F32, {50, 768}, 0, ids, {8}, DType::I32);
  runGather(*this, DType::F16, {50, 3}, 0, ids, {8}, DType::I64); // 6 bytes
  runGather(*this, DType::I8, {50, 13}, 0, ids, {8}, DType::I32); // 13 bytes
}

TEST_F(CudaStepTest, GatherInnerAxes) {
  runGather(*this, DType::F16, {3, 10, 5}, 1, {9, 0, -3}, {3}, DType::I64);
  runGather(*this, DType::F32, {4, 6}, 1, {2, -6}, {1, 2}, DType::I32);
  runGather(*this, DType::F32, {7, 300}, 0, {}, {0}, DType::I64);
}

TEST_F(CudaStepTest, GatherRowQuantized) {
  runGather(*this, DType::I8, {50, 100}, 0, {4, -2, 0, 49}, {4}, DType::I64,
            /*rowScales=*/true);
}

TEST_F(CudaStepTest, GatherIndexOutOfRange) {
  runGather(*this, DType::F32, {50, 16}, 0, {1, 2, 50, 3}, {2, 2}, DType::I64,
            false, /*badIndex=*/true);
  runGather(*this, DType::F32, {50, 16}, 0, {-51}, {1}, DType::I32, false,
            /*badIndex=*/true);
}

} // namespace

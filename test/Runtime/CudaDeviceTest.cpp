//===- CudaDeviceTest.cpp - The cuda device and its steps ----------------===//
//
// On a machine without a CUDA driver (where the tests usually run) the
// device must refuse to be created, naming the driver. With a GPU, each
// step kind runs through the Device interface on hand-made plans, against
// references computed here in double from the same (dtype-rounded) inputs;
// without one those tests are skipped, saying why.
//
// Run on a GPU machine: build/bin/lmopt-runtime-tests --gtest_filter='Cuda*'
//
//===----------------------------------------------------------------------===//

#include "lmopt/Format/Bundle.h"
#include "lmopt/Format/CudaKernels.h"
#include "lmopt/Format/Float16.h"
#include "lmopt/Runtime/Device.h"
#include "lmopt/Runtime/Session.h"

#include "TestUtil.h"

#include <gtest/gtest.h>

#include <dlfcn.h>

#include <cmath>
#include <cstring>
#include <map>
#include <string>
#include <vector>

using namespace lmopt::runtime;
using namespace lmopt::runtime::test;

namespace {

#ifdef LMOPT_HAVE_CUDA

TEST(CudaDevice, WithoutADriverItIsRefusedNamingIt) {
  if (void *driver = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL)) {
    dlclose(driver);
    GTEST_SKIP() << "this machine has a CUDA driver";
  }
  const char *path = std::getenv("LMOPT_CUDA_LIBRARY_PATH");
  if (path && *path)
    GTEST_SKIP() << "LMOPT_CUDA_LIBRARY_PATH is set";
  std::unique_ptr<Device> device;
  Status st = createDevice("cuda", {}, device);
  EXPECT_EQ(st.code(), StatusCode::Unsupported) << st.toString();
  EXPECT_EQ(st.message().rfind("no CUDA driver: libcuda.so.1 not found (", 0),
            0u)
      << st.message();
  EXPECT_NE(st.message().find("LMOPT_CUDA_LIBRARY_PATH"), std::string::npos)
      << st.message();
  EXPECT_EQ(device, nullptr);
  // The outcome is kept: asking again gives the same answer.
  Status again = createDevice("cuda", {}, device);
  EXPECT_EQ(again.message(), st.message());
}

//===----------------------------------------------------------------------===//
// On a GPU
//===----------------------------------------------------------------------===//

std::vector<uint8_t> encode(const std::vector<float> &values, DType dtype) {
  std::vector<uint8_t> bytes(values.size() * dtypeSize(dtype));
  for (size_t i = 0; i < values.size(); ++i) {
    if (dtype == DType::F32) {
      std::memcpy(bytes.data() + 4 * i, &values[i], 4);
      continue;
    }
    uint16_t h = dtype == DType::F16 ? floatToHalf(values[i])
                                     : floatToBFloat16(values[i]);
    std::memcpy(bytes.data() + 2 * i, &h, 2);
  }
  return bytes;
}

std::vector<float> decode(const std::vector<uint8_t> &bytes, DType dtype) {
  size_t count = bytes.size() / dtypeSize(dtype);
  std::vector<float> values(count);
  for (size_t i = 0; i < count; ++i) {
    if (dtype == DType::F32) {
      std::memcpy(&values[i], bytes.data() + 4 * i, 4);
      continue;
    }
    uint16_t h = 0;
    std::memcpy(&h, bytes.data() + 2 * i, 2);
    values[i] = dtype == DType::F16 ? halfToFloat(h) : bfloat16ToFloat(h);
  }
  return values;
}

/// Values as the dtype holds them (what the GPU reads).
std::vector<float> rounded(const std::vector<float> &values, DType dtype) {
  return decode(encode(values, dtype), dtype);
}

/// A one-step plan on devices {cpu, cuda}, its tensors' bytes, and a run of
/// it through the cuda device.
class CudaDeviceStepTest : public ::testing::Test {
protected:
  void SetUp() override {
    Status st = createDevice("cuda", options(), device);
    if (!st)
      GTEST_SKIP() << "no CUDA device: " << st.message();
    program.devices = {{"cpu", ""}, {"cuda", ""}};
  }
  virtual DeviceOptions options() const { return {}; }

  /// A tensor on the GPU (device 1) in the arena at its own 256-byte
  /// aligned offset, or at `offset` when given (to alias another).
  uint32_t add(const std::string &name, DType dtype, std::vector<int64_t> dims,
               std::vector<uint8_t> bytes = {}, int64_t offset = -1) {
    PlanTensor t;
    t.name = name;
    t.dtype = dtype;
    t.dims = std::move(dims);
    t.storage = TensorStorage::Arena;
    t.device = 1;
    t.offset = offset >= 0 ? uint64_t(offset) : nextOffset;
    nextOffset += (t.byteSize() + 255) / 256 * 256 + 256;
    if (bytes.empty())
      bytes.resize(t.byteSize());
    plan.tensors.push_back(t);
    data.push_back(std::move(bytes));
    return uint32_t(plan.tensors.size() - 1);
  }
  uint32_t addFloats(const std::string &name, DType dtype,
                     std::vector<int64_t> dims,
                     const std::vector<float> &values) {
    return add(name, dtype, std::move(dims), encode(values, dtype));
  }
  /// A host tensor (device 0, the caller's memory).
  uint32_t addHost(const std::string &name, DType dtype,
                   std::vector<int64_t> dims, std::vector<uint8_t> bytes) {
    uint32_t id = add(name, dtype, std::move(dims), std::move(bytes));
    plan.tensors[id].device = 0;
    return id;
  }
  /// A view `dims` of state `state` (capacity and bytes in program.states
  /// and stateBytes).
  uint32_t addStateView(const std::string &name, size_t state,
                        std::vector<int64_t> dims) {
    const PlanState &s = program.states[state];
    PlanTensor t;
    t.name = name;
    t.dtype = s.dtype;
    t.dims = std::move(dims);
    t.storage = TensorStorage::State;
    t.offset = state;
    t.device = 1;
    plan.tensors.push_back(t);
    data.push_back({});
    return uint32_t(plan.tensors.size() - 1);
  }

  PlanStep &step(StepKind kind, std::vector<uint32_t> operands,
                 std::vector<uint32_t> results) {
    plan.steps.clear();
    PlanStep &s = plan.addStep(kind, "s");
    s.device = 1;
    s.operands = std::move(operands);
    s.results = std::move(results);
    return s;
  }
  static void setInt(PlanStep &s, const std::string &name, int64_t value) {
    PlanAttr attr;
    attr.name = name;
    attr.intValue = value;
    s.attrs.push_back(attr);
  }

  Status build(std::unique_ptr<StepExecutor> &out) {
    program.entries = {plan};
    StepBuildContext context{program, program.entries[0], "t.lmopt"};
    return device->createStep(context, program.entries[0].steps[0], out);
  }

  /// Builds and runs the step; `data` then holds every tensor's bytes after
  /// it (and stateBytes every state's).
  Status run() {
    std::unique_ptr<StepExecutor> executor;
    if (Status st = build(executor); !st)
      return st;
    std::map<uint64_t, size_t> arenaBuffer; // offset -> buffers index
    std::vector<std::unique_ptr<DeviceBuffer>> buffers;
    std::vector<void *> pointers(plan.tensors.size());
    auto upload = [&](const std::vector<uint8_t> &bytes, uint64_t size,
                      void *&pointer) -> Status {
      std::unique_ptr<DeviceBuffer> buffer;
      if (Status st = device->allocate(size, buffer); !st)
        return st;
      if (!bytes.empty())
        if (Status st = device->copy(buffer->data(), bytes.data(), bytes.size(),
                                     Device::CopyKind::HostToDevice);
            !st)
          return st;
      pointer = buffer->data();
      buffers.push_back(std::move(buffer));
      return Status::ok();
    };
    std::vector<void *> statePointers(program.states.size());
    for (size_t s = 0; s < program.states.size(); ++s)
      if (Status st = upload(stateBytes[s], program.states[s].byteSize(),
                             statePointers[s]);
          !st)
        return st;
    for (size_t i = 0; i < plan.tensors.size(); ++i) {
      const PlanTensor &t = plan.tensors[i];
      if (t.device == 0) {
        pointers[i] = data[i].data();
      } else if (t.storage == TensorStorage::State) {
        pointers[i] = statePointers[t.offset];
      } else if (auto it = arenaBuffer.find(t.offset);
                 it != arenaBuffer.end()) {
        pointers[i] = pointers[it->second];
      } else {
        if (Status st = upload(data[i], t.byteSize(), pointers[i]); !st)
          return st;
        arenaBuffer[t.offset] = i;
      }
    }
    if (Status st = executor->run(pointers.data()); !st)
      return st;
    if (Status st = device->synchronize(); !st)
      return st;
    for (size_t i = 0; i < plan.tensors.size(); ++i) {
      const PlanTensor &t = plan.tensors[i];
      if (t.device == 0 || t.storage == TensorStorage::State)
        continue;
      data[i].resize(t.byteSize());
      if (Status st = device->copy(data[i].data(), pointers[i], data[i].size(),
                                   Device::CopyKind::DeviceToHost);
          !st)
        return st;
    }
    for (size_t s = 0; s < program.states.size(); ++s) {
      stateBytes[s].resize(program.states[s].byteSize());
      if (Status st = device->copy(stateBytes[s].data(), statePointers[s],
                                   stateBytes[s].size(),
                                   Device::CopyKind::DeviceToHost);
          !st)
        return st;
    }
    return Status::ok();
  }

  std::unique_ptr<Device> device;
  Program program;
  Plan plan;
  std::vector<std::vector<uint8_t>> data;
  std::vector<std::vector<uint8_t>> stateBytes;
  uint64_t nextOffset = 0;
};

/// |got - want| <= atol + rtol * |want| for every element.
void expectClose(const std::vector<float> &got, const std::vector<double> &want,
                 double atol, double rtol, const std::string &what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  size_t bad = 0;
  for (size_t i = 0; i < got.size(); ++i)
    if (!(std::fabs(got[i] - want[i]) <= atol + rtol * std::fabs(want[i])) &&
        bad++ < 5)
      ADD_FAILURE() << what << ": element " << i << " is " << got[i]
                    << ", expected " << want[i];
  EXPECT_EQ(bad, 0u) << what;
}

double activate(double x, int activation) {
  switch (activation) {
  case 1:
    return x > 0 ? x : 0;
  case 2:
    return 0.5 * x * (1 + std::erf(x / std::sqrt(2.0)));
  case 3:
    return 0.5 * x *
           (1 + std::tanh(std::sqrt(2 / M_PI) * (x + 0.044715 * x * x * x)));
  default:
    return x;
  }
}

/// Tolerances for a product of K = 64 terms in [-1, 1], output rounded to
/// the dtype.
void tolerances(DType dtype, double &atol, double &rtol) {
  atol = dtype == DType::F32 ? 1e-4 : dtype == DType::F16 ? 1e-2 : 6e-2;
  rtol = dtype == DType::F32 ? 1e-5 : dtype == DType::F16 ? 2e-3 : 1.6e-2;
}

struct LinearCase {
  const char *name;
  bool transpose, bias, residual, inPlace;
  int activation;
};

const LinearCase kLinearCases[] = {
    {"plain", false, false, false, false, 0},
    {"transposed", true, false, false, false, 0},
    {"bias", false, true, false, false, 0},
    {"bias_relu", false, true, false, false, 1},
    {"bias_gelu", true, true, false, false, 2},
    {"bias_gelu_tanh", false, true, false, false, 3},
    {"relu_no_bias", false, false, false, false, 1},
    {"residual", false, true, true, false, 0},
    {"residual_in_place", true, true, true, true, 0},
    {"gelu_residual", false, true, true, false, 2},
    {"relu_residual_in_place", false, false, true, true, 1},
    {"gelu_tanh_residual_in_place", true, true, true, true, 3},
};

class CudaLinearTest : public CudaDeviceStepTest,
                       public ::testing::WithParamInterface<DType> {};

TEST_P(CudaLinearTest, MatchesADoubleReference) {
  DType dtype = GetParam();
  const int64_t batch = 2, seq = 3, m = batch * seq, k = 64, n = 48;
  for (const LinearCase &lc : kLinearCases) {
    SCOPED_TRACE(lc.name);
    plan = Plan();
    data.clear();
    nextOffset = 0;
    std::vector<float> x = rounded(hashValues(1, m * k, 1.0), dtype);
    std::vector<float> w = rounded(hashValues(2, k * n, 1.0), dtype);
    std::vector<float> b = rounded(hashValues(3, n, 1.0), dtype);
    std::vector<float> r = rounded(hashValues(4, m * n, 1.0), dtype);
    // The weight as stored: [K, N], or [N, K] when transposed.
    std::vector<float> stored(w.size());
    for (int64_t i = 0; i < k; ++i)
      for (int64_t j = 0; j < n; ++j)
        stored[lc.transpose ? j * k + i : i * n + j] = w[i * n + j];
    uint32_t input = addFloats("x", dtype, {batch, seq, k}, x);
    uint32_t weight = addFloats("w", dtype,
                                lc.transpose ? std::vector<int64_t>{n, k}
                                             : std::vector<int64_t>{k, n},
                                stored);
    std::vector<uint32_t> operands = {input, weight};
    if (lc.bias)
      operands.push_back(addFloats("b", dtype, {n}, b));
    uint32_t residual = 0;
    if (lc.residual) {
      residual = addFloats("r", dtype, {batch, seq, n}, r);
      operands.push_back(residual);
    }
    uint32_t output = lc.inPlace
                          ? add("y", dtype, {batch, seq, n}, data[residual],
                                int64_t(plan.tensors[residual].offset))
                          : add("y", dtype, {batch, seq, n});
    PlanStep &s = step(StepKind::Linear, operands, {output});
    setInt(s, "transpose_weight", lc.transpose);
    setInt(s, "activation", lc.activation);
    setInt(s, "has_bias", lc.bias);
    setInt(s, "has_residual", lc.residual);
    Status st = run();
    ASSERT_TRUE(st.isOk()) << st.toString();

    std::vector<double> want(m * n);
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        double sum = lc.bias ? b[j] : 0;
        for (int64_t p = 0; p < k; ++p)
          sum += double(x[i * k + p]) * w[p * n + j];
        want[i * n + j] =
            activate(sum, lc.activation) + (lc.residual ? r[i * n + j] : 0);
      }
    double atol = 0, rtol = 0;
    tolerances(dtype, atol, rtol);
    expectClose(decode(data[output], dtype), want, atol, rtol, lc.name);
  }
}

INSTANTIATE_TEST_SUITE_P(Dtypes, CudaLinearTest,
                         ::testing::Values(DType::F32, DType::F16, DType::BF16),
                         [](const auto &info) {
                           return std::string(dtypeName(info.param));
                         });

/// f32 on TF32 tensor cores: inputs rounded to 10 mantissa bits.
class CudaTf32Test : public CudaDeviceStepTest {
protected:
  DeviceOptions options() const override {
    DeviceOptions o;
    o.allowTf32 = true;
    return o;
  }
};

TEST_F(CudaTf32Test, LinearWithinTf32Rounding) {
  const int64_t m = 7, k = 64, n = 40;
  std::vector<float> x = hashValues(5, m * k, 1.0),
                     w = hashValues(6, k * n, 1.0);
  uint32_t y = add("y", DType::F32, {m, n});
  step(StepKind::Linear,
       {addFloats("x", DType::F32, {m, k}, x),
        addFloats("w", DType::F32, {k, n}, w)},
       {y});
  Status st = run();
  ASSERT_TRUE(st.isOk()) << st.toString();
  std::vector<double> want(m * n);
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j)
      for (int64_t p = 0; p < k; ++p)
        want[i * n + j] += double(x[i * k + p]) * w[p * n + j];
  // 2^-11 relative per input, over 64 terms of magnitude <= 1.
  expectClose(decode(data[y], DType::F32), want, 2e-2, 1e-3, "tf32");
}

struct MatMulCase {
  const char *name;
  std::vector<int64_t> lhs, rhs, out;
};

const MatMulCase kMatMulCases[] = {
    {"shared_rhs", {2, 3, 4, 5}, {5, 6}, {2, 3, 4, 6}},
    {"strided_batch", {2, 3, 4, 5}, {2, 3, 5, 6}, {2, 3, 4, 6}},
    {"broadcast_lhs", {1, 4, 5}, {3, 5, 6}, {3, 4, 6}},
    {"broadcast_rhs_batch", {3, 4, 5}, {1, 5, 6}, {3, 4, 6}},
    {"mixed_broadcast", {2, 1, 4, 5}, {1, 3, 5, 6}, {2, 3, 4, 6}},
    {"vector_lhs", {5}, {2, 5, 6}, {2, 6}},
    {"vector_rhs", {2, 4, 5}, {5}, {2, 4}},
    {"plain", {7, 9}, {9, 3}, {7, 3}},
    {"k_zero", {2, 3, 0}, {0, 4}, {2, 3, 4}},
};

/// numpy.matmul in double, for the cases above.
std::vector<double> matmulReference(const MatMulCase &mc,
                                    const std::vector<float> &lhs,
                                    const std::vector<float> &rhs) {
  std::vector<int64_t> l = mc.lhs, r = mc.rhs;
  if (l.size() == 1)
    l.insert(l.begin(), 1);
  if (r.size() == 1)
    r.push_back(1);
  int64_t m = l[l.size() - 2], k = l.back(), n = r.back();
  std::vector<int64_t> lb(l.begin(), l.end() - 2), rb(r.begin(), r.end() - 2);
  size_t rank = std::max(lb.size(), rb.size());
  lb.insert(lb.begin(), rank - lb.size(), 1);
  rb.insert(rb.begin(), rank - rb.size(), 1);
  std::vector<int64_t> batch(rank);
  int64_t count = 1;
  for (size_t i = 0; i < rank; ++i)
    count *= batch[i] = std::max(lb[i], rb[i]);
  std::vector<double> out(count * m * n);
  for (int64_t b = 0; b < count; ++b) {
    int64_t rem = b, lo = 0, ro = 0, ls = 1, rs = 1;
    for (size_t i = rank; i-- > 0;) {
      int64_t idx = rem % batch[i];
      rem /= batch[i];
      lo += (lb[i] == 1 ? 0 : idx) * ls;
      ro += (rb[i] == 1 ? 0 : idx) * rs;
      ls *= lb[i];
      rs *= rb[i];
    }
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        double sum = 0;
        for (int64_t p = 0; p < k; ++p)
          sum +=
              double(lhs[lo * m * k + i * k + p]) * rhs[ro * k * n + p * n + j];
        out[b * m * n + i * n + j] = sum;
      }
  }
  return out;
}

class CudaMatMulTest : public CudaDeviceStepTest,
                       public ::testing::WithParamInterface<DType> {};

TEST_P(CudaMatMulTest, BroadcastsAsNumpy) {
  DType dtype = GetParam();
  for (const MatMulCase &mc : kMatMulCases) {
    SCOPED_TRACE(mc.name);
    plan = Plan();
    data.clear();
    nextOffset = 0;
    int64_t lhsCount = 1, rhsCount = 1;
    for (int64_t d : mc.lhs)
      lhsCount *= d;
    for (int64_t d : mc.rhs)
      rhsCount *= d;
    std::vector<float> lhs = rounded(hashValues(7, lhsCount, 1.0), dtype);
    std::vector<float> rhs = rounded(hashValues(8, rhsCount, 1.0), dtype);
    uint32_t out = add("out", dtype, mc.out,
                       encode(std::vector<float>(
                                  [&] {
                                    int64_t c = 1;
                                    for (int64_t d : mc.out)
                                      c *= d;
                                    return size_t(c);
                                  }(),
                                  123.0f),
                              dtype));
    step(StepKind::MatMul,
         {addFloats("lhs", dtype, mc.lhs, lhs),
          addFloats("rhs", dtype, mc.rhs, rhs)},
         {out});
    Status st = run();
    ASSERT_TRUE(st.isOk()) << st.toString();
    double atol = 0, rtol = 0;
    tolerances(dtype, atol, rtol);
    expectClose(decode(data[out], dtype), matmulReference(mc, lhs, rhs), atol,
                rtol, mc.name);
  }
}

INSTANTIATE_TEST_SUITE_P(Dtypes, CudaMatMulTest,
                         ::testing::Values(DType::F32, DType::F16, DType::BF16),
                         [](const auto &info) {
                           return std::string(dtypeName(info.param));
                         });

TEST_F(CudaDeviceStepTest, CopiesBetweenHostAndDevice) {
  std::vector<uint8_t> bytes(1000);
  for (size_t i = 0; i < bytes.size(); ++i)
    bytes[i] = uint8_t(i * 7 + 1);
  // Host -> device, device -> device, device -> host, one step at a time.
  uint32_t host = addHost("in", DType::U8, {1000}, bytes);
  uint32_t a = add("a", DType::U8, {1000});
  uint32_t back = addHost("back", DType::U8, {1000}, {});
  step(StepKind::Copy, {host}, {a});
  Status st = run();
  ASSERT_TRUE(st.isOk()) << st.toString();
  EXPECT_EQ(data[a], bytes);
  std::vector<uint8_t> onDevice = data[a];

  step(StepKind::Copy, {a}, {back});
  ASSERT_TRUE(run().isOk());
  EXPECT_EQ(data[back], bytes);

  uint32_t b = add("b", DType::U8, {1000});
  step(StepKind::Copy, {a}, {b});
  ASSERT_TRUE(run().isOk());
  EXPECT_EQ(data[b], bytes);
  EXPECT_EQ(onDevice, bytes);

  // Host to host is not the cuda device's business.
  uint32_t other = addHost("other", DType::U8, {1000}, bytes);
  step(StepKind::Copy, {host}, {other});
  std::unique_ptr<StepExecutor> executor;
  EXPECT_STATUS(build(executor), StatusCode::Unsupported,
                "bundle 't.lmopt': copy step 's': copies from device 'cpu' "
                "to 'cpu'; the cuda device copies between itself and the "
                "host only");
}

TEST_F(CudaDeviceStepTest, AppendsTheLastRowsOfAStateView) {
  // A key cache [2, 3, 8, 4] holding 4 rows per head; 2 more are appended
  // along axis 2 (rows 4 and 5), the rest stays as it was.
  PlanState cache;
  cache.name = "cache";
  cache.dtype = DType::F32;
  cache.dims = {2, 3, 8, 4};
  cache.device = 1;
  program.states = {cache};
  std::vector<float> before = hashValues(9, 2 * 3 * 8 * 4, 1.0);
  stateBytes = {encode(before, DType::F32)};
  std::vector<float> value = hashValues(10, 2 * 3 * 2 * 4, 1.0);
  uint32_t v = addFloats("v", DType::F32, {2, 3, 2, 4}, value);
  uint32_t view = addStateView("cache_view", 0, {2, 3, 6, 4});
  PlanStep &s = step(StepKind::Append, {v}, {view});
  setInt(s, "axis", 2);
  Status st = run();
  ASSERT_TRUE(st.isOk()) << st.toString();
  std::vector<float> after = decode(stateBytes[0], DType::F32);
  std::vector<float> want = before;
  for (int b = 0; b < 2; ++b)
    for (int h = 0; h < 3; ++h)
      for (int r = 0; r < 2; ++r)
        for (int d = 0; d < 4; ++d)
          want[((b * 3 + h) * 8 + 4 + r) * 4 + d] =
              value[((b * 3 + h) * 2 + r) * 4 + d];
  EXPECT_EQ(after, want);

  // Along the first axis: one contiguous block.
  cache.dims = {8, 5};
  program.states = {cache};
  before = hashValues(11, 40, 1.0);
  stateBytes = {encode(before, DType::F32)};
  plan = Plan();
  data.clear();
  value = hashValues(12, 15, 1.0);
  v = addFloats("v", DType::F32, {3, 5}, value);
  view = addStateView("cache_view", 0, {7, 5});
  PlanStep &s2 = step(StepKind::Append, {v}, {view});
  setInt(s2, "axis", 0);
  st = run();
  ASSERT_TRUE(st.isOk()) << st.toString();
  want = before;
  std::copy(value.begin(), value.end(), want.begin() + 4 * 5);
  EXPECT_EQ(decode(stateBytes[0], DType::F32), want);
}

TEST_F(CudaDeviceStepTest, StepsItCannotRunAreRefusedByName) {
  uint32_t x = add("x", DType::F32, {2, 4});
  uint32_t w = add("w", DType::F16, {4, 3});
  uint32_t y = add("y", DType::F32, {2, 3});
  step(StepKind::QuantLinear, {x, w}, {y});
  std::unique_ptr<StepExecutor> executor;
  EXPECT_STATUS(build(executor), StatusCode::Unsupported,
                "bundle 't.lmopt': quant_linear step 's': the cuda device "
                "cannot run quant_linear steps yet");
  step(StepKind::Linear, {x, w}, {y});
  EXPECT_STATUS(build(executor), StatusCode::InvalidFormat,
                "bundle 't.lmopt': linear step 's': weight 'w' (f16 [4, 3]) "
                "has dtype f16; expected f32");
  PlanStep &k = step(StepKind::Kernel, {x}, {y});
  PlanAttr entry;
  entry.name = "entry";
  entry.kind = PlanAttr::Kind::String;
  entry.stringValue = "fused_0";
  k.attrs.push_back(entry);
  EXPECT_STATUS(build(executor), StatusCode::NotFound,
                "bundle 't.lmopt': kernel step 's': calls kernel 'fused_0' "
                "but the bundle has no kernels for the cuda device");
}

TEST_F(CudaDeviceStepTest, RequirementsAndKernelPayloadsAreChecked) {
  auto check = [&](const std::string &text) {
    return device->checkRequirements(
        reinterpret_cast<const uint8_t *>(text.data()), text.size(), "t.lmopt");
  };
  // The cpu's lines are the cpu device's business.
  EXPECT_TRUE(check("cpu-feature avx9000\ncuda-sm 70\n").isOk());
  Status st = check("cuda-sm 999\n");
  EXPECT_EQ(st.code(), StatusCode::Unsupported);
  EXPECT_EQ(st.message().rfind("bundle 't.lmopt' needs a GPU of compute "
                               "capability 99.9 or newer; this one (",
                               0),
            0u)
      << st.message();
  EXPECT_STATUS(check("cuda-sm 9.0\n"), StatusCode::InvalidFormat,
                "bundle 't.lmopt': 'requires' line 1 is 'cuda-sm 9.0'; "
                "expected 'cuda-sm <major * 10 + minor>' (cuda-sm 90)");

  CudaKernelPayload payload;
  payload.smVersion = 999;
  std::vector<uint8_t> bytes = serializeCudaKernels(payload);
  st = device->loadKernels(bytes.data(), bytes.size(), "k");
  EXPECT_EQ(st.code(), StatusCode::Unsupported);
  EXPECT_EQ(st.message().rfind("k: the kernels are compiled for sm_999; "
                               "this GPU (",
                               0),
            0u)
      << st.message();
  payload.smVersion = 75;
  const char junk[] = "not a CUDA binary";
  payload.image.assign(junk, junk + sizeof junk - 1);
  bytes = serializeCudaKernels(payload);
  st = device->loadKernels(bytes.data(), bytes.size(), "k");
  EXPECT_EQ(st.code(), StatusCode::InvalidFormat);
  EXPECT_NE(st.message().find("cuModuleLoadData failed"), std::string::npos)
      << st.message();
}

//===----------------------------------------------------------------------===//
// Through a session
//===----------------------------------------------------------------------===//

/// A bundle as the CUDA target lays one out: x [4, 8] is copied to the GPU,
/// y = gelu(x W + b) runs there (W [8, 6], b [6] in the weights section,
/// uploaded by the session), and y is copied back to the host.
Status writeGpuLinearBundle(const std::string &path,
                            const std::vector<float> &w,
                            const std::vector<float> &b) {
  Plan plan;
  auto tensor = [&](const char *name, std::vector<int64_t> dims,
                    TensorStorage storage, uint32_t device, uint64_t offset) {
    PlanTensor t;
    t.name = name;
    t.dims = std::move(dims);
    t.storage = storage;
    t.device = device;
    t.offset = offset;
    return plan.addTensor(t);
  };
  uint32_t x = tensor("x", {4, 8}, TensorStorage::Input, 0, 0);
  uint32_t xGpu = tensor("x_gpu", {4, 8}, TensorStorage::Arena, 1, 0);
  uint32_t wGpu = tensor("w", {8, 6}, TensorStorage::Weight, 1, 0);
  uint32_t bGpu = tensor("b", {6}, TensorStorage::Weight, 1, 256);
  uint32_t yGpu = tensor("y_gpu", {4, 6}, TensorStorage::Arena, 1, 128);
  uint32_t y = tensor("y", {4, 6}, TensorStorage::Arena, 0, 0);
  plan.arenaSizes = {4 * 6 * 4, 128 + 4 * 6 * 4};
  plan.inputs = {{"x", x}};
  plan.outputs = {{"y", y}};
  auto add = [&](StepKind kind, const char *name,
                 std::vector<uint32_t> operands,
                 std::vector<uint32_t> results) -> PlanStep & {
    PlanStep &s = plan.addStep(kind, name);
    s.device = 1;
    s.operands = std::move(operands);
    s.results = std::move(results);
    return s;
  };
  add(StepKind::Copy, "upload", {x}, {xGpu});
  PlanStep &linear = add(StepKind::Linear, "fc", {xGpu, wGpu, bGpu}, {yGpu});
  for (auto [name, value] :
       {std::pair<const char *, int64_t>{"activation", 2}, {"has_bias", 1}}) {
    PlanAttr attr;
    attr.name = name;
    attr.intValue = value;
    linear.attrs.push_back(attr);
  }
  add(StepKind::Copy, "download", {yGpu}, {y});
  Program program;
  program.devices = {{"cpu", ""}, {"cuda", ""}};
  program.entries = {plan};
  std::vector<uint8_t> weights(256 + 64);
  std::memcpy(weights.data(), w.data(), w.size() * 4);
  std::memcpy(weights.data() + 256, b.data(), b.size() * 4);
  BundleWriter writer;
  if (Status st = writer.addSection("plan", SectionKind::Plan,
                                    serializeProgram(program));
      !st)
    return st;
  std::string requires_ = "cpu-feature sse4.2\ncuda-sm 80\n";
  if (Status st = writer.addSection("requires", SectionKind::Requirements,
                                    requires_.data(), requires_.size());
      !st)
    return st;
  if (Status st = writer.addSection("weights", SectionKind::Weights,
                                    weights.data(), weights.size());
      !st)
    return st;
  return writer.write(path);
}

TEST(CudaSession, ABundleForTheGpuRunsOrSaysWhyNot) {
  std::vector<float> w = hashValues(21, 48, 1.0), b = hashValues(22, 6, 1.0);
  TempDir dir;
  std::string path = dir.file("gpu.lmopt");
  ASSERT_TRUE(writeGpuLinearBundle(path, w, b).isOk());
  SessionOptions options;
  options.profile = true;
  std::unique_ptr<Session> session;
  Status st = Session::create(path, options, session);
  std::unique_ptr<Device> probe;
  if (Status gpu = createDevice("cuda", {}, probe); !gpu) {
    // Without a GPU, the session gives the device's reason.
    EXPECT_EQ(st.code(), gpu.code());
    EXPECT_EQ(st.message(), gpu.message());
    GTEST_SKIP() << "no CUDA device: " << gpu.message();
  }
  probe.reset();
  ASSERT_TRUE(st.isOk()) << st.toString();
  std::vector<float> x = hashValues(23, 32, 1.0);
  NamedTensor input{"x", {DType::F32, {4, 8}, encode(x, DType::F32)}};
  std::vector<NamedTensor> outputs;
  for (int run = 0; run < 2; ++run) {
    st = session->run(std::vector<NamedTensor>{input}, outputs);
    ASSERT_TRUE(st.isOk()) << st.toString();
  }
  ASSERT_EQ(outputs.size(), 1u);
  std::vector<double> want(24);
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 6; ++j) {
      double sum = b[j];
      for (int p = 0; p < 8; ++p)
        sum += double(x[i * 8 + p]) * w[p * 6 + j];
      want[i * 6 + j] = 0.5 * sum * (1 + std::erf(sum / std::sqrt(2.0)));
    }
  expectClose(decode(outputs[0].tensor.data, DType::F32), want, 1e-4, 1e-5,
              "y");
  // Steps on the GPU are timed with its events.
  ASSERT_EQ(session->profile().size(), 3u);
  for (const StepProfile &p : session->profile()) {
    EXPECT_EQ(p.calls, 2u) << p.name;
    EXPECT_GT(p.seconds, 0) << p.name;
  }
}

#endif // LMOPT_HAVE_CUDA

} // namespace

//===- SessionTestUtil.h - Helpers for the session tests --------*- C++ -*-===//
//
// Tensors, small models and a fixture shared by SessionTest.cpp and
// SessionErrorTest.cpp.
//
//===----------------------------------------------------------------------===//

#ifndef LMOPT_TEST_RUNTIME_SESSIONTESTUTIL_H
#define LMOPT_TEST_RUNTIME_SESSIONTESTUTIL_H

#include "lmopt/Runtime/Session.h"
#include "lmopt/Runtime/lmopt_runtime.h"

#include "BundleBuilder.h"
#include "TestUtil.h"

#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace lmopt::runtime::test {

template <typename T>
Tensor makeTensor(DType dtype, std::vector<int64_t> shape,
                  const std::vector<T> &values) {
  Tensor t;
  t.dtype = dtype;
  t.shape = std::move(shape);
  t.data.resize(values.size() * sizeof(T));
  if (!values.empty())
    std::memcpy(t.data.data(), values.data(), t.data.size());
  return t;
}

inline Tensor f32(std::vector<int64_t> shape,
                  const std::vector<float> &values) {
  return makeTensor(DType::F32, std::move(shape), values);
}

template <typename T> std::vector<T> values(const Tensor &t) {
  std::vector<T> out(t.data.size() / sizeof(T));
  if (!out.empty())
    std::memcpy(out.data(), t.data.data(), t.data.size());
  return out;
}

/// A session test: a temporary folder holding the bundle.
class SessionTest : public ::testing::Test {
protected:
  std::string write(const BundleBuilder &builder,
                    const std::string &name = "m.lmopt") {
    std::string path = dir.file(name);
    Status st = builder.write(path);
    EXPECT_TRUE(st) << st.toString();
    return path;
  }

  Status create(const BundleBuilder &builder, std::unique_ptr<Session> &session,
                const SessionOptions &options = {}) {
    return Session::create(write(builder), options, session);
  }

  /// The message of a failed create, with the bundle path replaced by 'B'.
  std::string createError(const BundleBuilder &builder) {
    std::string path = write(builder);
    std::unique_ptr<Session> session;
    Status st = Session::create(path, {}, session);
    EXPECT_FALSE(st);
    EXPECT_EQ(session, nullptr);
    std::string message = st.message();
    for (size_t pos; (pos = message.find(path)) != std::string::npos;)
      message.replace(pos, path.size(), "B");
    return message;
  }

  TempDir dir;
};

/// x [2, 3] -> relu(x W + b) with W [3, 4] and b [4] in the weights.
inline BundleBuilder linearReluModel() {
  BundleBuilder b;
  uint32_t x = b.input("x", DType::F32, {2, 3});
  uint32_t w = b.weight<float>("w", DType::F32, {3, 4},
                               {1, 0, -1, 2, //
                                0, 1, 1, -1, //
                                1, 1, 0, 0.5f});
  uint32_t bias = b.weight<float>("b", DType::F32, {4}, {0.5f, -1, 0, 0});
  uint32_t y = b.arena("y", DType::F32, {2, 4});
  PlanStep &s = b.step(StepKind::Linear, "dense_0", {x, w, bias}, {y});
  addInt(s, "transpose_weight", 0);
  addInt(s, "activation", 1); // relu
  addInt(s, "has_bias", 1);
  addInt(s, "has_residual", 0);
  b.output("y", y);
  return b;
}

inline std::vector<uint8_t> readKernels(bool alt = false) {
  return readBytes(alt ? LMOPT_RUNTIME_TEST_KERNELS_ALT
                       : LMOPT_RUNTIME_TEST_KERNELS);
}

/// out = add_relu_6(a, b) with a an input and b a weight, both [2, 3].
inline BundleBuilder kernelModel(bool alt = false) {
  BundleBuilder b;
  uint32_t a = b.input("a", DType::F32, {2, 3});
  uint32_t w = b.weight<float>("w", DType::F32, {2, 3}, {1, 1, 1, -5, -5, -5});
  uint32_t out = b.arena("out", DType::F32, {2, 3});
  addString(b.step(StepKind::Kernel, "fused_add_relu", {a, w}, {out}), "entry",
            "add_relu_6");
  b.output("out", out);
  b.kernels = readKernels(alt);
  return b;
}

/// kernelModel plus a linear step: sum [2, 1] = x [2, 3] times a weight of
/// ones, so that a run exercises a generated kernel and a oneDNN product.
inline BundleBuilder kernelAndLinearModel() {
  BundleBuilder b = kernelModel();
  uint32_t x = b.input("x", DType::F32, {2, 3});
  uint32_t w =
      b.weight<float>("w2", DType::F32, {3, 1}, std::vector<float>{1, 1, 1});
  uint32_t sum = b.arena("sum", DType::F32, {2, 1});
  b.step(StepKind::Linear, "row_sum", {x, w}, {sum});
  b.output("sum", sum);
  return b;
}

/// Inputs of kernelAndLinearModel with every element `v`.
inline std::vector<NamedTensor> kernelAndLinearInputs(float v) {
  return {{"a", f32({2, 3}, {v, v, v, v, v, v})},
          {"x", f32({2, 3}, {v, v, v, v, v, v})}};
}

/// "" when `outputs` are kernelAndLinearModel's for kernelAndLinearInputs(v):
/// out = max(a + [1, 1, 1, -5, -5, -5], 0) and sum = 3 v per row; else what
/// differs.
inline std::string checkKernelAndLinearOutputs(
    float v, const std::vector<NamedTensor> &outputs) {
  if (outputs.size() != 2)
    return std::to_string(outputs.size()) + " outputs for input " +
           std::to_string(v);
  float low = v > 5 ? v - 5 : 0;
  if (values<float>(outputs[0].tensor) !=
      std::vector<float>{v + 1, v + 1, v + 1, low, low, low})
    return "wrong 'out' for input " + std::to_string(v);
  if (values<float>(outputs[1].tensor) != std::vector<float>{3 * v, 3 * v})
    return "wrong 'sum' for input " + std::to_string(v);
  return "";
}

/// q, k, v -> attention with `heads` heads, as the compiler emits it.
inline BundleBuilder attentionModel(std::vector<int64_t> qDims,
                                    std::vector<int64_t> kvDims, int64_t heads,
                                    double scale, bool causal, bool kvSplit) {
  BundleBuilder b;
  uint32_t q = b.input("q", DType::F32, qDims);
  uint32_t k = b.input("k", DType::F32, kvDims);
  uint32_t v = b.input("v", DType::F32, kvDims);
  uint32_t out = b.arena("out", DType::F32, qDims);
  PlanStep &s = b.step(StepKind::Attention, "attn", {q, k, v}, {out});
  addInt(s, "num_heads", heads);
  addFloat(s, "scale", scale);
  addInt(s, "causal", causal);
  addInt(s, "kv_heads_split", kvSplit);
  addInt(s, "zero_masked_rows", 0);
  b.output("out", out);
  return b;
}

using Result = std::pair<lmoptStatusCode, std::string>;
/// Takes ownership of a C status and returns its code and message.
inline Result take(lmoptStatus st) {
  Result r{lmoptStatusGetCode(st), lmoptStatusGetMessage(st)};
  lmoptStatusDestroy(st);
  return r;
}

} // namespace lmopt::runtime::test

#endif // LMOPT_TEST_RUNTIME_SESSIONTESTUTIL_H

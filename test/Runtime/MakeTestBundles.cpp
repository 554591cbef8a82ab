//===- MakeTestBundles.cpp - Bundles and inputs for lmopt-run's tests -----===//
//
// lmopt-make-test-bundles OUTDIR writes a small model and its inputs and
// references for test/tools/lmopt-run:
//
//   model.lmopt  inputs x f32 [2, 3], ids i64 [2]; outputs
//                y = relu(x W + b)        (linear step, W [3, 4], b [4])
//                emb = table[ids]         (gather step, table f32 [4, 3])
//                k = max(x + c, 0)        (kernel step add_relu_6, c [2, 3])
//   x.npy, ids.npy, inputs.npz             the inputs below
//   x-f64.npy, x-shape.npy, ids-range.npy  wrong dtype, wrong shape, index 7
//   ref.npz       y, emb, k as worked out by hand next to the inputs
//   ref-off.npz   y[1][0] off by 0.01, and a member 'extra' that is no
//                 output; ref-partial.npz only y
//
//===----------------------------------------------------------------------===//

#include "BundleBuilder.h"

#include "lmopt/Format/Npy.h"

#include "TestUtil.h"

#include <cstdio>
#include <cstring>

using namespace lmopt::runtime;
using namespace lmopt::runtime::test;

template <typename T>
static Tensor tensor(DType dtype, std::vector<int64_t> shape,
                     const std::vector<T> &values) {
  Tensor t;
  t.dtype = dtype;
  t.shape = std::move(shape);
  t.data.resize(values.size() * sizeof(T));
  std::memcpy(t.data.data(), values.data(), t.data.size());
  return t;
}

static bool check(const Status &st) {
  if (!st)
    std::fprintf(stderr, "lmopt-make-test-bundles: %s\n",
                 st.toString().c_str());
  return st.isOk();
}

int main(int argc, char **argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: lmopt-make-test-bundles OUTDIR\n");
    return 1;
  }
  std::string dir = argv[1];

  BundleBuilder b;
  uint32_t x = b.input("x", DType::F32, {2, 3});
  uint32_t ids = b.input("ids", DType::I64, {2});
  uint32_t w = b.weight<float>("w", DType::F32, {3, 4},
                               {1, 0, -1, 2, 0, 1, 1, -1, 1, 1, 0, 0.5f});
  uint32_t bias = b.weight<float>("b", DType::F32, {4}, {0.5f, -1, 0, 0});
  uint32_t table =
      b.weight<float>("table", DType::F32, {4, 3},
                      {0, 1, 2, 10, 11, 12, 20, 21, 22, 30, 31, 32});
  uint32_t c = b.weight<float>("c", DType::F32, {2, 3}, {1, 1, 1, -5, -5, -5});
  uint32_t y = b.arena("y", DType::F32, {2, 4});
  uint32_t emb = b.arena("emb", DType::F32, {2, 3});
  uint32_t k = b.arena("k", DType::F32, {2, 3});
  PlanStep &linear = b.step(StepKind::Linear, "dense_0", {x, w, bias}, {y});
  addInt(linear, "activation", 1);
  addInt(linear, "has_bias", 1);
  addInt(b.step(StepKind::Gather, "embed", {table, ids}, {emb}), "axis", 0);
  addString(b.step(StepKind::Kernel, "fused_add_relu", {x, c}, {k}), "entry",
            "add_relu_6");
  b.output("y", y);
  b.output("emb", emb);
  b.output("k", k);
  b.kernels = readBytes(LMOPT_RUNTIME_TEST_KERNELS);
  b.meta = "{\"model\": \"lmopt-run test\"}";
  if (!check(b.write(dir + "/model.lmopt")))
    return 1;

  Tensor xv = tensor<float>(DType::F32, {2, 3}, {1, 2, 3, -1, 0, 1});
  Tensor idsv = tensor<int64_t>(DType::I64, {2}, {3, 1});
  // y: [1 2 3] W + b = [4.5, 4, 1, 1.5]; [-1 0 1] W + b = [0.5, 0, 1, -1.5],
  // relu. emb: table rows 3 and 1. k: max(x + c, 0).
  Tensor yv =
      tensor<float>(DType::F32, {2, 4}, {4.5f, 4, 1, 1.5f, 0.5f, 0, 1, 0});
  Tensor embv = tensor<float>(DType::F32, {2, 3}, {30, 31, 32, 10, 11, 12});
  Tensor kv = tensor<float>(DType::F32, {2, 3}, {2, 3, 4, 0, 0, 0});
  Tensor yOff = yv;
  yOff.as<float>()[4] += 0.01f;
  bool ok =
      check(writeNpy(dir + "/x.npy", xv)) &&
      check(writeNpy(dir + "/ids.npy", idsv)) &&
      check(writeNpz(dir + "/inputs.npz", {{"x", xv}, {"ids", idsv}})) &&
      check(writeNpy(dir + "/x-f64.npy",
                     tensor<double>(DType::F64, {2, 3}, {1, 2, 3, 4, 5, 6}))) &&
      check(writeNpy(dir + "/x-shape.npy",
                     tensor<float>(DType::F32, {3, 2}, {1, 2, 3, 4, 5, 6}))) &&
      check(writeNpy(dir + "/ids-range.npy",
                     tensor<int64_t>(DType::I64, {2}, {0, 7}))) &&
      check(
          writeNpz(dir + "/ref.npz", {{"y", yv}, {"emb", embv}, {"k", kv}})) &&
      check(writeNpz(dir + "/ref-off.npz",
                     {{"y", yOff}, {"emb", embv}, {"k", kv}, {"extra", kv}})) &&
      check(writeNpz(dir + "/ref-partial.npz", {{"y", yv}}));
  return ok ? 0 : 1;
}

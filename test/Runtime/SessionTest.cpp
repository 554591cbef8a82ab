//===- SessionTest.cpp - Running bundles end to end -----------------------===//
//
// Each test builds a small bundle (plan, weights, kernels) with BundleBuilder,
// opens it as a Session and runs it. Expected values are worked out by hand
// from each step's meaning (numpy semantics), written next to the inputs.
//
//===----------------------------------------------------------------------===//

#include "lmopt/Runtime/Session.h"

#include "lmopt/Runtime/Bundle.h"
#include "lmopt/Runtime/CPU/KernelLibrary.h"
#include "lmopt/Runtime/lmopt_runtime.h"

#include "BundleBuilder.h"
#include "TestUtil.h"

#include <gmock/gmock.h>

#include <cmath>
#include <cstdlib>
#include <cstring>

using namespace lmopt::runtime;
using namespace lmopt::runtime::test;
using ::testing::ElementsAre;
using ::testing::ElementsAreArray;
using ::testing::HasSubstr;

namespace {

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

Tensor f32(std::vector<int64_t> shape, const std::vector<float> &values) {
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

  Status create(const BundleBuilder &builder,
                std::unique_ptr<Session> &session,
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
BundleBuilder linearReluModel() {
  BundleBuilder b;
  uint32_t x = b.input("x", DType::F32, {2, 3});
  uint32_t w = b.weight<float>("w", DType::F32, {3, 4},
                               {1, 0, -1, 2,   //
                                0, 1, 1, -1,   //
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

std::vector<uint8_t> readKernels(bool alt = false) {
  return readBytes(alt ? LMOPT_RUNTIME_TEST_KERNELS_ALT
                       : LMOPT_RUNTIME_TEST_KERNELS);
}

/// out = add_relu_6(a, b) with a an input and b a weight, both [2, 3].
BundleBuilder kernelModel(bool alt = false) {
  BundleBuilder b;
  uint32_t a = b.input("a", DType::F32, {2, 3});
  uint32_t w = b.weight<float>("w", DType::F32, {2, 3}, {1, 1, 1, -5, -5, -5});
  uint32_t out = b.arena("out", DType::F32, {2, 3});
  addString(b.step(StepKind::Kernel, "fused_add_relu", {a, w}, {out}),
            "entry", "add_relu_6");
  b.output("out", out);
  b.kernels = readKernels(alt);
  return b;
}

} // namespace

//===----------------------------------------------------------------------===//
// Steps
//===----------------------------------------------------------------------===//

TEST_F(SessionTest, LinearWithBiasAndRelu) {
  std::unique_ptr<Session> session;
  ASSERT_TRUE(create(linearReluModel(), session));
  ASSERT_EQ(session->inputs().size(), 1u);
  EXPECT_EQ(session->inputs()[0].name, "x");
  EXPECT_EQ(session->inputs()[0].dtype, DType::F32);
  EXPECT_THAT(session->inputs()[0].dims, ElementsAre(2, 3));
  ASSERT_EQ(session->outputs().size(), 1u);
  EXPECT_THAT(session->outputs()[0].dims, ElementsAre(2, 4));

  std::vector<NamedTensor> outputs;
  Status st =
      session->run({{"x", f32({2, 3}, {1, 2, 3, -1, 0, 1})}}, outputs);
  ASSERT_TRUE(st) << st.toString();
  ASSERT_EQ(outputs.size(), 1u);
  EXPECT_EQ(outputs[0].name, "y");
  EXPECT_EQ(outputs[0].tensor.dtype, DType::F32);
  EXPECT_THAT(outputs[0].tensor.shape, ElementsAre(2, 4));
  // Row 0: [1 2 3] W = [4, 5, 1, 1.5], + b = [4.5, 4, 1, 1.5].
  // Row 1: [-1 0 1] W = [0, 1, 1, -1.5], + b = [0.5, 0, 1, -1.5] -> relu.
  EXPECT_THAT(values<float>(outputs[0].tensor),
              ElementsAre(4.5f, 4, 1, 1.5f, 0.5f, 0, 1, 0));
}

TEST_F(SessionTest, LinearTransposedWithInPlaceResidual) {
  // acc = copy(r); out = x W^T + acc, with out at acc's arena bytes (the
  // residual accumulated in place). x is [2, 1, 2]: two rows.
  BundleBuilder b;
  uint32_t x = b.input("x", DType::F32, {2, 1, 2});
  uint32_t r = b.input("r", DType::F32, {2, 1, 3});
  uint32_t w = b.weight<float>("w", DType::F32, {3, 2}, {1, 0, 0, 1, 1, 1});
  uint32_t acc = b.arenaAt("acc", DType::F32, {2, 1, 3}, 0);
  uint32_t out = b.arenaAt("out", DType::F32, {2, 1, 3}, 0);
  b.step(StepKind::Copy, "residual_copy", {r}, {acc});
  PlanStep &s = b.step(StepKind::Linear, "dense_1", {x, w, acc}, {out});
  addInt(s, "transpose_weight", 1);
  addInt(s, "activation", 0);
  addInt(s, "has_bias", 0);
  addInt(s, "has_residual", 1);
  b.output("out", out);
  std::unique_ptr<Session> session;
  Status st = create(b, session);
  ASSERT_TRUE(st) << st.toString();

  std::vector<NamedTensor> outputs;
  st = session->run({{"r", f32({2, 1, 3}, {0.5f, 0.5f, 0.5f, 10, 20, 30})},
                     {"x", f32({2, 1, 2}, {1, 2, 3, -1})}},
                    outputs);
  ASSERT_TRUE(st) << st.toString();
  // W^T is [[1, 0, 1], [0, 1, 1]]: [1 2] -> [1, 2, 3]; [3 -1] -> [3, -1, 2].
  EXPECT_THAT(outputs[0].tensor.shape, ElementsAre(2, 1, 3));
  EXPECT_THAT(values<float>(outputs[0].tensor),
              ElementsAre(1.5f, 2.5f, 3.5f, 13, 19, 32));
}

TEST_F(SessionTest, GatherRowsAndColumns) {
  // emb = table[ids] (axis 0, i64, a negative index counts from the end);
  // cols = m[:, idx] (axis 1, i32).
  BundleBuilder b;
  uint32_t ids = b.input("ids", DType::I64, {2, 2});
  uint32_t idx = b.input("idx", DType::I32, {2});
  uint32_t table = b.weight<float>("table", DType::F32, {4, 3},
                                   {0, 1, 2, 10, 11, 12, 20, 21, 22, 30, 31,
                                    32});
  uint32_t m =
      b.weight<int32_t>("m", DType::I32, {2, 3}, {1, 2, 3, 4, 5, 6});
  uint32_t emb = b.arena("emb", DType::F32, {2, 2, 3});
  uint32_t cols = b.arena("cols", DType::I32, {2, 2});
  addInt(b.step(StepKind::Gather, "embed", {table, ids}, {emb}), "axis", 0);
  addInt(b.step(StepKind::Gather, "pick", {m, idx}, {cols}), "axis", 1);
  b.output("emb", emb);
  b.output("cols", cols);
  std::unique_ptr<Session> session;
  Status st = create(b, session);
  ASSERT_TRUE(st) << st.toString();

  std::vector<NamedTensor> outputs;
  st = session->run(
      {{"ids", makeTensor<int64_t>(DType::I64, {2, 2}, {3, 0, -1, 2})},
       {"idx", makeTensor<int32_t>(DType::I32, {2}, {2, 0})}},
      outputs);
  ASSERT_TRUE(st) << st.toString();
  ASSERT_EQ(outputs.size(), 2u);
  EXPECT_EQ(outputs[0].name, "emb");
  EXPECT_THAT(outputs[0].tensor.shape, ElementsAre(2, 2, 3));
  EXPECT_THAT(values<float>(outputs[0].tensor),
              ElementsAre(30, 31, 32, 0, 1, 2, 30, 31, 32, 20, 21, 22));
  EXPECT_EQ(outputs[1].name, "cols");
  EXPECT_EQ(outputs[1].tensor.dtype, DType::I32);
  EXPECT_THAT(values<int32_t>(outputs[1].tensor), ElementsAre(3, 1, 6, 4));

  // An index out of range fails the run, naming the step and the index.
  st = session->run(
      {{"ids", makeTensor<int64_t>(DType::I64, {2, 2}, {0, 4, 0, 0})},
       {"idx", makeTensor<int32_t>(DType::I32, {2}, {2, 0})}},
      outputs);
  EXPECT_EQ(st.code(), StatusCode::InvalidArgument);
  EXPECT_THAT(st.message(), HasSubstr("gather step 'embed': index 4"));
  EXPECT_TRUE(outputs.empty());
}

TEST_F(SessionTest, CopyAnInputToAnOutput) {
  BundleBuilder b;
  uint32_t x = b.input("x", DType::U8, {5});
  uint32_t y = b.arena("y", DType::U8, {5});
  b.step(StepKind::Copy, "identity", {x}, {y});
  b.output("y", y);
  std::unique_ptr<Session> session;
  ASSERT_TRUE(create(b, session));
  std::vector<NamedTensor> outputs;
  ASSERT_TRUE(session->run(
      {{"x", makeTensor<uint8_t>(DType::U8, {5}, {9, 8, 7, 6, 5})}}, outputs));
  EXPECT_THAT(outputs[0].tensor.data, ElementsAre(9, 8, 7, 6, 5));
}

TEST_F(SessionTest, KernelSteps) {
  // add_relu_6, then double_and_sum_4 on a weight: two results.
  BundleBuilder b = kernelModel();
  uint32_t v = b.weight<float>("v", DType::F32, {4}, {1, 2, 3, 4.5f});
  uint32_t doubled = b.arena("doubled", DType::F32, {4});
  uint32_t total = b.arena("total", DType::F32, {1});
  addString(b.step(StepKind::Kernel, "fused_double", {v}, {doubled, total}),
            "entry", "double_and_sum_4");
  b.output("doubled", doubled);
  b.output("total", total);
  std::unique_ptr<Session> session;
  Status st = create(b, session);
  ASSERT_TRUE(st) << st.toString();
  std::vector<NamedTensor> outputs;
  st = session->run({{"a", f32({2, 3}, {1, -2, 3, 4, 6, 5.5f})}}, outputs);
  ASSERT_TRUE(st) << st.toString();
  ASSERT_EQ(outputs.size(), 3u);
  // max(a + [1, 1, 1, -5, -5, -5], 0).
  EXPECT_THAT(values<float>(outputs[0].tensor),
              ElementsAre(2, 0, 4, 0, 1, 0.5f));
  EXPECT_THAT(values<float>(outputs[1].tensor), ElementsAre(2, 4, 6, 9));
  EXPECT_THAT(values<float>(outputs[2].tensor), ElementsAre(10.5f));
}

TEST_F(SessionTest, MisalignedInputsAreAlignedForKernels) {
  BundleBuilder b;
  b.kernels = readKernels();
  uint32_t x = b.input("x", DType::F32, {3});
  uint32_t mod = b.arena("mod", DType::I64, {1});
  addString(b.step(StepKind::Kernel, "probe", {x}, {mod}), "entry",
            "address_mod_64");
  b.output("mod", mod);
  std::unique_ptr<Session> session;
  ASSERT_TRUE(create(b, session));
  alignas(64) float buffer[32] = {};
  for (size_t offset : {0, 1, 4, 15}) {
    int64_t dims[] = {3};
    TensorView view{DType::F32, dims, 1, buffer + offset, 12};
    std::vector<NamedTensor> outputs;
    ASSERT_TRUE(session->run({NamedTensorView{"x", view}}, outputs));
    EXPECT_THAT(values<int64_t>(outputs[0].tensor), ElementsAre(0))
        << "input at float offset " << offset;
  }
}

TEST_F(SessionTest, OutputDataPointsIntoTheArena) {
  std::unique_ptr<Session> session;
  ASSERT_TRUE(create(linearReluModel(), session));
  Tensor x = f32({2, 3}, {0, 0, 0, 0, 0, 0});
  NamedTensorView view{"x", TensorView::of(x)};
  ASSERT_TRUE(session->execute(&view, 1));
  std::vector<float> y(8);
  std::memcpy(y.data(), session->outputData(0), 32);
  // Zero input: relu(b).
  EXPECT_THAT(y, ElementsAre(0.5f, 0, 0, 0, 0.5f, 0, 0, 0));
}

TEST_F(SessionTest, ProfileCountsEveryStep) {
  SessionOptions options;
  options.profile = true;
  options.threads = 1;
  std::unique_ptr<Session> session;
  ASSERT_TRUE(create(linearReluModel(), session, options));
  std::vector<NamedTensor> outputs;
  for (int i = 0; i < 3; ++i)
    ASSERT_TRUE(session->run({{"x", f32({2, 3}, {1, 2, 3, 4, 5, 6})}},
                             outputs));
  ASSERT_EQ(session->profile().size(), 1u);
  EXPECT_EQ(session->profile()[0].name, "dense_0");
  EXPECT_EQ(session->profile()[0].kind, StepKind::Linear);
  EXPECT_EQ(session->profile()[0].calls, 3u);
  EXPECT_GT(session->profile()[0].seconds, 0);
  session->resetProfile();
  EXPECT_EQ(session->profile()[0].calls, 0u);

  std::unique_ptr<Session> plain;
  ASSERT_TRUE(create(linearReluModel(), plain));
  EXPECT_TRUE(plain->profile().empty());
}

TEST_F(SessionTest, MetaIsHandedOut) {
  BundleBuilder b = linearReluModel();
  b.meta = "{\"model\": \"tiny\"}";
  std::unique_ptr<Session> session;
  ASSERT_TRUE(create(b, session));
  EXPECT_EQ(session->meta(), "{\"model\": \"tiny\"}");
}

//===----------------------------------------------------------------------===//
// Several sessions and libraries
//===----------------------------------------------------------------------===//

TEST_F(SessionTest, TwoSessionsOfOneBundle) {
  std::string path = write(kernelModel());
  std::unique_ptr<Session> first, second;
  ASSERT_TRUE(Session::create(path, {}, first));
  ASSERT_TRUE(Session::create(path, {}, second));
  std::vector<NamedTensor> out1, out2;
  ASSERT_TRUE(first->run({{"a", f32({2, 3}, {1, 1, 1, 1, 1, 1})}}, out1));
  ASSERT_TRUE(second->run({{"a", f32({2, 3}, {2, 2, 2, 9, 9, 9})}}, out2));
  EXPECT_THAT(values<float>(out1[0].tensor), ElementsAre(2, 2, 2, 0, 0, 0));
  EXPECT_THAT(values<float>(out2[0].tensor), ElementsAre(3, 3, 3, 4, 4, 4));
  first.reset();
  ASSERT_TRUE(second->run({{"a", f32({2, 3}, {0, 0, 0, 6, 6, 6})}}, out2));
  EXPECT_THAT(values<float>(out2[0].tensor), ElementsAre(1, 1, 1, 1, 1, 1));
}

TEST_F(SessionTest, LibrariesWithTheSameEntryNamesStayApart) {
  // The alternative library's add_relu_6 computes a - b.
  std::string mainPath = write(kernelModel(false), "main.lmopt");
  std::string altPath = write(kernelModel(true), "alt.lmopt");
  Tensor a = f32({2, 3}, {1, 2, 3, 4, 5, 6});
  std::vector<NamedTensor> outputs;
  std::unique_ptr<Session> main, alt;
  ASSERT_TRUE(Session::create(mainPath, {}, main));
  ASSERT_TRUE(Session::create(altPath, {}, alt));
  ASSERT_TRUE(alt->run({{"a", a}}, outputs));
  EXPECT_THAT(values<float>(outputs[0].tensor),
              ElementsAre(0, 1, 2, 9, 10, 11));
  ASSERT_TRUE(main->run({{"a", a}}, outputs));
  EXPECT_THAT(values<float>(outputs[0].tensor), ElementsAre(2, 3, 4, 0, 0, 1));

  // Unloading one and loading the other (possibly under a reused descriptor
  // number) gives the library that was asked for, every time.
  for (int i = 0; i < 4; ++i) {
    bool useAlt = i % 2 == 0;
    std::unique_ptr<Session> session;
    ASSERT_TRUE(Session::create(useAlt ? altPath : mainPath, {}, session));
    main.reset();
    ASSERT_TRUE(session->run({{"a", a}}, outputs));
    EXPECT_EQ(values<float>(outputs[0].tensor)[0], useAlt ? 0 : 2)
        << "round " << i;
  }
}

TEST(KernelLibrary, LoadsFromAMemfdAndLeavesNoFile) {
  std::vector<uint8_t> bytes = readKernels();
  std::unique_ptr<KernelLibrary> library;
  ASSERT_TRUE(
      KernelLibrary::load(bytes.data(), bytes.size(), "test kernels", library));
  EXPECT_STREQ(library->loadedFrom(), "memfd");
  KernelFunction fn = nullptr;
  ASSERT_TRUE(library->lookup("double_and_sum_4", fn));
  float in[4] = {1, 2, 3, 4}, doubled[4], total[1];
  void *args[] = {in, doubled, total};
  fn(args);
  EXPECT_THAT(doubled, ElementsAre(2, 4, 6, 8));
  EXPECT_EQ(total[0], 10);

  Status st = library->lookup("no_such_kernel", fn);
  EXPECT_EQ(st.code(), StatusCode::NotFound);
  EXPECT_THAT(st.message(),
              HasSubstr("test kernels has no kernel 'no_such_kernel': "));
  EXPECT_THAT(st.message(), HasSubstr("undefined symbol: no_such_kernel"));
}

TEST(KernelLibrary, FallsBackToAnUnlinkedTemporaryFile) {
  TempDir tmp;
  const char *saved = std::getenv("TMPDIR");
  std::string savedValue = saved ? saved : "";
  setenv("TMPDIR", tmp.path().c_str(), 1);
  std::vector<uint8_t> bytes = readKernels(true);
  std::unique_ptr<KernelLibrary> library;
  Status st = KernelLibrary::load(bytes.data(), bytes.size(), "test kernels",
                                  library, /*allowMemfd=*/false);
  if (saved)
    setenv("TMPDIR", savedValue.c_str(), 1);
  else
    unsetenv("TMPDIR");
  ASSERT_TRUE(st) << st.toString();
  EXPECT_STREQ(library->loadedFrom(), "temporary file");
  EXPECT_TRUE(listDir(tmp.path()).empty());
  KernelFunction fn = nullptr;
  ASSERT_TRUE(library->lookup("add_relu_6", fn));
  float a[6] = {1, 2, 3, 4, 5, 6}, b[6] = {1, 1, 1, 1, 1, 1}, out[6];
  void *args[] = {a, b, out};
  fn(args);
  EXPECT_THAT(out, ElementsAre(0, 1, 2, 3, 4, 5)); // the alternative: a - b
}

//===----------------------------------------------------------------------===//
// Input errors
//===----------------------------------------------------------------------===//

TEST_F(SessionTest, InputErrors) {
  BundleBuilder b = linearReluModel();
  uint32_t ids = b.input("ids", DType::I64, {2});
  uint32_t copied = b.arena("ids_copy", DType::I64, {2});
  b.step(StepKind::Copy, "copy_ids", {ids}, {copied});
  std::unique_ptr<Session> session;
  ASSERT_TRUE(create(b, session));
  Tensor x = f32({2, 3}, {1, 2, 3, 4, 5, 6});
  Tensor id = makeTensor<int64_t>(DType::I64, {2}, {0, 1});
  std::vector<NamedTensor> outputs;

  EXPECT_STATUS(session->run({{"x", x}}, outputs),
                StatusCode::InvalidArgument,
                "missing input 'ids' (i64 [2])");
  EXPECT_STATUS(session->run(std::vector<NamedTensor>{}, outputs),
                StatusCode::InvalidArgument,
                "missing input 'x' (f32 [2, 3]), 'ids' (i64 [2])");
  EXPECT_STATUS(session->run({{"x", x}, {"ids", id}, {"mask", id}}, outputs),
                StatusCode::InvalidArgument,
                "unknown input 'mask'; the model's inputs are 'x', 'ids'");
  EXPECT_STATUS(session->run({{"x", x}, {"ids", id}, {"x", x}}, outputs),
                StatusCode::InvalidArgument, "input 'x' is given twice");
  EXPECT_STATUS(
      session->run({{"x", makeTensor<double>(DType::F64, {2, 3},
                                             {1, 2, 3, 4, 5, 6})},
                    {"ids", id}},
                   outputs),
      StatusCode::InvalidArgument,
      "input 'x' has dtype f64; the model expects f32 [2, 3]");
  EXPECT_STATUS(
      session->run({{"x", f32({3, 2}, {1, 2, 3, 4, 5, 6})}, {"ids", id}},
                   outputs),
      StatusCode::InvalidArgument,
      "input 'x' has shape [3, 2]; the model expects f32 [2, 3]");
  EXPECT_STATUS(
      session->run({{"x", f32({2, 3, 1}, {1, 2, 3, 4, 5, 6})}, {"ids", id}},
                   outputs),
      StatusCode::InvalidArgument,
      "input 'x' has shape [2, 3, 1]; the model expects f32 [2, 3]");
  EXPECT_TRUE(outputs.empty());

  // Views are checked against their byte size and pointers.
  int64_t dims[] = {2, 3};
  float data[6] = {};
  std::vector<NamedTensorView> views = {
      {"x", TensorView{DType::F32, dims, 2, data, 20}},
      {"ids", TensorView::of(id)}};
  EXPECT_STATUS(session->run(views, outputs), StatusCode::InvalidArgument,
                "input 'x' has 20 bytes of data; f32 [2, 3] needs 24");
  views[0].tensor = TensorView{DType::F32, dims, 2, nullptr, 24};
  EXPECT_STATUS(session->run(views, outputs), StatusCode::InvalidArgument,
                "input 'x' has null data");
  views[0].tensor = TensorView{DType::F32, nullptr, 2, data, 24};
  EXPECT_STATUS(session->run(views, outputs), StatusCode::InvalidArgument,
                "input 'x' has shape (null dims of rank 2); the model "
                "expects f32 [2, 3]");

  // The session still runs after refusing inputs.
  ASSERT_TRUE(session->run({{"ids", id}, {"x", x}}, outputs));
  EXPECT_EQ(outputs.size(), 1u);
}

//===----------------------------------------------------------------------===//
// Bundle and plan errors
//===----------------------------------------------------------------------===//

TEST_F(SessionTest, BundleErrors) {
  std::unique_ptr<Session> session;
  Status st = Session::create(dir.file("missing.lmopt"), {}, session);
  EXPECT_EQ(st.code(), StatusCode::IoError);
  EXPECT_THAT(st.message(), HasSubstr("missing.lmopt"));

  // No plan section.
  BundleWriter writer;
  ASSERT_TRUE(writer.addSection("meta", SectionKind::Meta, "{}", 2));
  ASSERT_TRUE(writer.write(dir.file("noplan.lmopt")));
  EXPECT_STATUS(Session::create(dir.file("noplan.lmopt"), {}, session),
                StatusCode::NotFound,
                "bundle '" + dir.file("noplan.lmopt") +
                    "' has no 'plan' section");

  // A plan that does not parse: every truncation is refused by parsePlan
  // (PlanTest); here, one through the session.
  BundleBuilder model = linearReluModel();
  std::vector<uint8_t> plan = model.planBytes();
  plan.resize(plan.size() - 3);
  BundleWriter truncated;
  ASSERT_TRUE(truncated.addSection("plan", SectionKind::Plan, plan));
  ASSERT_TRUE(truncated.addSection("weights", SectionKind::Weights,
                                   model.weights.data(),
                                   model.weights.size()));
  ASSERT_TRUE(truncated.write(dir.file("truncated.lmopt")));
  st = Session::create(dir.file("truncated.lmopt"), {}, session);
  EXPECT_EQ(st.code(), StatusCode::InvalidFormat);
  EXPECT_THAT(st.message(), HasSubstr("plan section of '" +
                                      dir.file("truncated.lmopt") + "'"));
  EXPECT_THAT(st.message(), HasSubstr("truncated while reading"));

  // Weights that the plan expects but the bundle lacks.
  BundleBuilder noWeights = linearReluModel();
  noWeights.weights.clear();
  st = create(noWeights, session);
  EXPECT_EQ(st.code(), StatusCode::InvalidFormat);
  EXPECT_THAT(st.message(), HasSubstr("beyond the 0-byte weights section"));

  // A negative thread count.
  SessionOptions options;
  options.threads = -2;
  EXPECT_STATUS(create(linearReluModel(), session, options),
                StatusCode::InvalidArgument,
                "cpu context: thread count -2 is negative (0 keeps the "
                "default)");
  EXPECT_EQ(session, nullptr);
}

TEST_F(SessionTest, KernelErrors) {
  BundleBuilder missingEntry = kernelModel();
  missingEntry.plan.steps[0].attrs[0].stringValue = "not_exported";
  std::string message = createError(missingEntry);
  EXPECT_THAT(message,
              HasSubstr("bundle 'B': kernel step 'fused_add_relu': kernels "
                        "section of 'B' has no kernel 'not_exported': "));
  EXPECT_THAT(message, HasSubstr("undefined symbol: not_exported"));

  BundleBuilder noKernels = kernelModel();
  noKernels.kernels.clear();
  EXPECT_EQ(createError(noKernels),
            "bundle 'B': kernel step 'fused_add_relu': calls kernel "
            "'add_relu_6' but the bundle has no 'kernels' section");

  BundleBuilder notElf = kernelModel();
  notElf.kernels.assign(100, 'x');
  EXPECT_EQ(createError(notElf),
            "kernels section of 'B' is not a shared object: it starts with "
            "'xxxx', not '\\x7fELF'");

  BundleBuilder shortElf = kernelModel();
  shortElf.kernels = {0x7f, 'E', 'L', 'F'};
  EXPECT_EQ(createError(shortElf),
            "kernels section of 'B' is not a shared object: 4 bytes, "
            "shorter than an ELF header");

  // ELF magic, then garbage: the dynamic loader's own message.
  BundleBuilder badElf = kernelModel();
  badElf.kernels.resize(200);
  std::fill(badElf.kernels.begin() + 4, badElf.kernels.end(), 0x55);
  message = createError(badElf);
  EXPECT_THAT(message, HasSubstr("cannot load kernels section of 'B': "));

  BundleBuilder noEntry = kernelModel();
  noEntry.plan.steps[0].attrs.clear();
  EXPECT_EQ(createError(noEntry), "bundle 'B': kernel step 'fused_add_relu' "
                                  "lacks the string attribute 'entry'");
}

TEST_F(SessionTest, LinearStepErrors) {
  auto expectError = [&](BundleBuilder b, const std::string &want) {
    EXPECT_EQ(createError(b), want);
  };
  {
    BundleBuilder b = linearReluModel();
    b.plan.steps[0].operands.pop_back(); // the bias
    expectError(b, "bundle 'B': linear step 'dense_0': has 2 operands; "
                   "expected 3 (input, weight, bias)");
  }
  {
    BundleBuilder b = linearReluModel();
    b.plan.tensors[1].dims = {4, 3}; // weight [4, 3]: K = 4
    b.plan.tensors[1].offset = 0;
    expectError(b, "bundle 'B': linear step 'dense_0': input 'x' (f32 [2, 3]) "
                   "has 3 features but weight 'w' (f32 [4, 3]) ([K, N]) has "
                   "K = 4");
  }
  {
    BundleBuilder b = linearReluModel();
    b.plan.tensors[3].dims = {2, 5};
    b.plan.arenaSize = 64;
    expectError(b, "bundle 'B': linear step 'dense_0': output 'y' (f32 "
                   "[2, 5]) should have dims [2, 4] (the input's leading "
                   "dims, then N)");
  }
  {
    BundleBuilder b = linearReluModel();
    b.plan.tensors[2].dims = {3};
    expectError(b, "bundle 'B': linear step 'dense_0': bias 'b' (f32 [3]) "
                   "should have dims [4] ([N])");
  }
  {
    BundleBuilder b = linearReluModel();
    b.plan.tensors[0].dtype = DType::F16;
    expectError(b, "bundle 'B': linear step 'dense_0': input 'x' (f16 "
                   "[2, 3]) has dtype f16; expected f32");
  }
  {
    BundleBuilder b = linearReluModel();
    b.plan.steps[0].attrs[1].intValue = 7;
    expectError(b, "bundle 'B': linear step 'dense_0': attribute "
                   "'activation' is 7; expected 0 (none), 1 (relu), 2 "
                   "(gelu) or 3 (gelu_tanh)");
  }
  {
    BundleBuilder b = linearReluModel();
    b.plan.steps[0].attrs[2].intValue = 2;
    expectError(b, "bundle 'B': linear step 'dense_0': attribute 'has_bias' "
                   "is 2; expected 0 or 1");
  }
  {
    BundleBuilder b = linearReluModel();
    addInt(b.plan.steps[0], "alpha", 1);
    expectError(b, "bundle 'B': linear step 'dense_0': has attribute "
                   "'alpha', which this runtime does not know");
  }
  {
    BundleBuilder b = linearReluModel();
    b.plan.steps[0].attrs[0].kind = PlanAttr::Kind::Float;
    expectError(b, "bundle 'B': linear step 'dense_0' has a non-integer "
                   "attribute 'transpose_weight'");
  }
}

TEST_F(SessionTest, GatherAndCopyStepErrors) {
  auto gatherModel = [] {
    BundleBuilder b;
    uint32_t ids = b.input("ids", DType::I64, {2});
    uint32_t table =
        b.weight<float>("table", DType::F32, {3, 2}, {0, 1, 2, 3, 4, 5});
    uint32_t out = b.arena("out", DType::F32, {2, 2});
    addInt(b.step(StepKind::Gather, "embed", {table, ids}, {out}), "axis", 0);
    b.output("out", out);
    return b;
  };
  std::unique_ptr<Session> session;
  ASSERT_TRUE(create(gatherModel(), session));
  {
    BundleBuilder b = gatherModel();
    b.plan.steps[0].attrs[0].intValue = 2;
    EXPECT_EQ(createError(b), "bundle 'B': gather step 'embed': attribute "
                              "'axis' is 2; expected a value in [0, 2)");
  }
  {
    BundleBuilder b = gatherModel();
    b.plan.tensors[0].dtype = DType::F32;
    EXPECT_EQ(createError(b), "bundle 'B': gather step 'embed': indices "
                              "'ids' (f32 [2]) have dtype f32; expected i32 "
                              "or i64");
  }
  {
    BundleBuilder b = gatherModel();
    b.plan.tensors[2].dims = {2, 3};
    b.plan.arenaSize = 64;
    EXPECT_EQ(createError(b),
              "bundle 'B': gather step 'embed': output 'out' (f32 [2, 3]) "
              "should have dims [2, 2] (data[:axis] + indices + "
              "data[axis+1:])");
  }
  {
    BundleBuilder b = gatherModel();
    b.plan.tensors[2].dtype = DType::I32;
    EXPECT_EQ(createError(b), "bundle 'B': gather step 'embed': output 'out' "
                              "(i32 [2, 2]) has dtype i32; expected f32");
  }
  {
    BundleBuilder b = gatherModel();
    b.plan.steps[0].operands.push_back(0);
    EXPECT_EQ(createError(b), "bundle 'B': gather step 'embed': has 3 "
                              "operands; expected 2 (data, indices)");
  }
  {
    BundleBuilder b = gatherModel();
    b.plan.steps[0].attrs.clear();
    EXPECT_EQ(createError(b), "bundle 'B': gather step 'embed' lacks the "
                              "integer attribute 'axis'");
  }
  {
    BundleBuilder b;
    uint32_t x = b.input("x", DType::F32, {3});
    uint32_t y = b.arena("y", DType::F32, {4});
    b.step(StepKind::Copy, "dup", {x}, {y});
    EXPECT_EQ(createError(b), "bundle 'B': copy step 'dup': copies 12 bytes "
                              "of 'x' (f32 [3]) into 16 bytes of 'y' (f32 "
                              "[4])");
  }
  {
    BundleBuilder b;
    uint32_t x = b.input("x", DType::F32, {3});
    uint32_t y = b.arena("y", DType::F32, {3});
    b.step(StepKind::Copy, "dup", {x, x}, {y});
    EXPECT_EQ(createError(b), "bundle 'B': copy step 'dup': has 2 operands; "
                              "expected 1 (source)");
  }
}

TEST_F(SessionTest, ResultsMustNotAliasOperands) {
  // A kernel whose output shares arena bytes with its operand.
  BundleBuilder b;
  b.kernels = readKernels();
  uint32_t x = b.input("x", DType::F32, {4});
  uint32_t t = b.arenaAt("t", DType::F32, {4}, 0);
  uint32_t doubled = b.arenaAt("doubled", DType::F32, {4}, 0);
  uint32_t total = b.arenaAt("total", DType::F32, {1}, 64);
  b.step(StepKind::Copy, "stage", {x}, {t});
  addString(b.step(StepKind::Kernel, "k", {t}, {doubled, total}), "entry",
            "double_and_sum_4");
  EXPECT_EQ(createError(b),
            "bundle 'B': kernel step 'k': result 0 'doubled' (f32 [4]) at "
            "arena offset 0 overlaps operand 0 't' (f32 [4]) at arena offset "
            "0");
  b.plan.tensors[doubled].offset = 64;
  b.plan.arenaSize = 256;
  EXPECT_EQ(createError(b), "bundle 'B': kernel step 'k': results 0 "
                            "'doubled' (f32 [4]) and 1 'total' (f32 [1]) "
                            "overlap in the arena");
  b.plan.tensors[doubled].offset = 128;
  std::unique_ptr<Session> session;
  EXPECT_TRUE(create(b, session));

  // A linear step's residual may be its output only exactly.
  BundleBuilder lin;
  uint32_t in = lin.input("x", DType::F32, {1, 1});
  uint32_t w = lin.weight<float>("w", DType::F32, {1, 32},
                                 std::vector<float>(32, 1.5f));
  uint32_t acc = lin.arenaAt("acc", DType::F32, {1, 32}, 0);
  uint32_t out = lin.arenaAt("out", DType::F32, {1, 32}, 64);
  addInt(lin.step(StepKind::Linear, "res", {in, w, acc}, {out}),
         "has_residual", 1);
  lin.output("out", out);
  EXPECT_EQ(createError(lin), "bundle 'B': linear step 'res': result 0 'out' "
                              "(f32 [1, 32]) at arena offset 64 overlaps "
                              "operand 2 'acc' (f32 [1, 32]) at arena offset "
                              "0");
  lin.plan.tensors[out].offset = 0;
  ASSERT_TRUE(create(lin, session));
  // The arena starts zeroed: out = 2 x 1.5 + 0, then accumulates in place.
  std::vector<NamedTensor> outputs;
  ASSERT_TRUE(session->run({{"x", f32({1, 1}, {2})}}, outputs));
  EXPECT_EQ(values<float>(outputs[0].tensor), std::vector<float>(32, 3));
  ASSERT_TRUE(session->run({{"x", f32({1, 1}, {2})}}, outputs));
  EXPECT_EQ(values<float>(outputs[0].tensor), std::vector<float>(32, 6));
}

namespace {
/// q, k, v -> attention with `heads` heads, as the compiler emits it.
BundleBuilder attentionModel(std::vector<int64_t> qDims,
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
} // namespace

TEST_F(SessionTest, AttentionTwoHeadsCausal) {
  // B = 1, Sq = Sk = 2, H = 2, D = 1. With q = 0 every score is 0, so each
  // head averages the values it sees: query 0 sees key 0 only (causal),
  // query 1 both. Head 0 reads v[:, 0] = [1, 3], head 1 v[:, 1] = [10, 30].
  std::unique_ptr<Session> session;
  Status st = create(attentionModel({1, 2, 2}, {1, 2, 2}, 2, 1.0, true,
                                    false),
                     session);
  ASSERT_TRUE(st) << st.toString();
  std::vector<NamedTensor> outputs;
  st = session->run({{"q", f32({1, 2, 2}, {0, 0, 0, 0})},
                     {"k", f32({1, 2, 2}, {5, -1, 2, 7})},
                     {"v", f32({1, 2, 2}, {1, 10, 3, 30})}},
                    outputs);
  ASSERT_TRUE(st) << st.toString();
  EXPECT_THAT(values<float>(outputs[0].tensor), ElementsAre(1, 10, 2, 20));
}

TEST_F(SessionTest, AttentionScaleAndMasks) {
  // One head, D = 1: score_j = q k_j scale = 2 k_j 0.5 = k_j. With
  // k = [0, ln 3] the weights are [1/4, 3/4]: out = 4/4 + 3 x 8/4 = 7.
  std::unique_ptr<Session> session;
  ASSERT_TRUE(create(attentionModel({1, 1, 1}, {1, 2, 1}, 1, 0.5, false,
                                    false),
                     session));
  std::vector<NamedTensor> outputs;
  ASSERT_TRUE(session->run({{"q", f32({1, 1, 1}, {2})},
                            {"k", f32({1, 2, 1}, {0, std::log(3.0f)})},
                            {"v", f32({1, 2, 1}, {4, 8})}},
                           outputs));
  EXPECT_NEAR(values<float>(outputs[0].tensor)[0], 7, 1e-5);

  // The same weights from an additive mask [0, ln 3] with q = 0.
  BundleBuilder additive =
      attentionModel({1, 1, 1}, {1, 2, 1}, 1, 1.0, false, false);
  additive.plan.steps[0].operands.push_back(
      additive.input("mask", DType::F32, {1, 2}));
  ASSERT_TRUE(create(additive, session));
  ASSERT_TRUE(session->run({{"q", f32({1, 1, 1}, {0})},
                            {"k", f32({1, 2, 1}, {1, 1})},
                            {"v", f32({1, 2, 1}, {4, 8})},
                            {"mask", f32({1, 2}, {0, std::log(3.0f)})}},
                           outputs));
  EXPECT_NEAR(values<float>(outputs[0].tensor)[0], 7, 1e-5);

  // Keys and values split by head ([B, H, Sk, D]) and a bool mask [Sq, Sk]
  // hiding key 1: each head returns its key-0 value.
  BundleBuilder split = attentionModel({1, 2, 2}, {1, 2, 2, 1}, 2, 1.0, false,
                                       true);
  split.plan.steps[0].operands.push_back(
      split.input("mask", DType::Bool, {2, 2}));
  Status st = create(split, session);
  ASSERT_TRUE(st) << st.toString();
  ASSERT_TRUE(session->run(
      {{"q", f32({1, 2, 2}, {1, 2, 3, 4})},
       {"k", f32({1, 2, 2, 1}, {1, 2, 3, 4})},
       {"v", f32({1, 2, 2, 1}, {5, 7, 6, 8})},
       {"mask", makeTensor<uint8_t>(DType::Bool, {2, 2}, {1, 0, 1, 0})}},
      outputs));
  EXPECT_THAT(values<float>(outputs[0].tensor), ElementsAre(5, 6, 5, 6));
}

TEST_F(SessionTest, AttentionStepsAreChecked) {
  BundleBuilder b;
  uint32_t q = b.input("q", DType::F32, {1, 2, 4});
  uint32_t k = b.input("k", DType::F32, {1, 3, 4});
  uint32_t v = b.input("v", DType::F32, {1, 3, 4});
  uint32_t out = b.arena("out", DType::F32, {1, 2, 4});
  PlanStep &s = b.step(StepKind::Attention, "attn", {q, k, v}, {out});
  addInt(s, "num_heads", 3);
  addFloat(s, "scale", 0.5);
  EXPECT_EQ(createError(b), "bundle 'B': attention step 'attn': query 'q' "
                            "(f32 [1, 2, 4]) has 4 features, not a positive "
                            "multiple of num_heads = 3");
  b.plan.steps[0].attrs[0].intValue = 2;
  b.plan.tensors[k].dims = {1, 3, 2};
  EXPECT_EQ(createError(b), "bundle 'B': attention step 'attn': key 'k' (f32 "
                            "[1, 3, 2]) should have dims [1, 3, 4] ([B, Sk, "
                            "H*D])");
  b.plan.tensors[k].dims = {1, 3, 4};
  uint32_t mask = b.input("mask", DType::I32, {1, 3});
  b.plan.steps[0].operands.push_back(mask);
  EXPECT_EQ(createError(b), "bundle 'B': attention step 'attn': mask 'mask' "
                            "(i32 [1, 3]) has dtype i32; expected f32 "
                            "(additive) or bool");
}

//===----------------------------------------------------------------------===//
// C API
//===----------------------------------------------------------------------===//

namespace {
using Result = std::pair<lmoptStatusCode, std::string>;
/// Takes ownership of a C status and returns its code and message.
Result take(lmoptStatus st) {
  Result r{lmoptStatusGetCode(st), lmoptStatusGetMessage(st)};
  lmoptStatusDestroy(st);
  return r;
}
} // namespace

TEST_F(SessionTest, CApiRunsAModel) {
  std::string path = write(linearReluModel());
  lmoptSession session = nullptr;
  ASSERT_EQ(lmoptSessionCreate(path.c_str(), nullptr, &session), nullptr);
  size_t count = 0;
  ASSERT_EQ(lmoptSessionInputCount(session, &count), nullptr);
  EXPECT_EQ(count, 1u);
  ASSERT_EQ(lmoptSessionOutputCount(session, &count), nullptr);
  EXPECT_EQ(count, 1u);
  lmoptValueInfo info;
  ASSERT_EQ(lmoptSessionInputInfo(session, 0, &info), nullptr);
  EXPECT_STREQ(info.name, "x");
  EXPECT_EQ(info.dtype, LMOPT_DTYPE_F32);
  ASSERT_EQ(info.rank, 2);
  EXPECT_EQ(info.dims[0], 2);
  EXPECT_EQ(info.dims[1], 3);
  ASSERT_EQ(lmoptSessionOutputInfo(session, 0, &info), nullptr);
  EXPECT_STREQ(info.name, "y");
  EXPECT_EQ(info.rank, 2);
  EXPECT_EQ(info.dims[1], 4);

  int64_t dims[] = {2, 3};
  float x[] = {1, 2, 3, -1, 0, 1};
  lmoptTensor input{LMOPT_DTYPE_F32, 2, dims, x, sizeof(x)};
  const char *names[] = {"x"};
  size_t numOutputs = 9;
  lmoptTensor *outputs = nullptr;
  ASSERT_EQ(
      lmoptSessionRun(session, 1, names, &input, &numOutputs, &outputs),
      nullptr);
  ASSERT_EQ(numOutputs, 1u);
  EXPECT_EQ(outputs[0].dtype, LMOPT_DTYPE_F32);
  ASSERT_EQ(outputs[0].rank, 2);
  EXPECT_EQ(outputs[0].dims[0], 2);
  EXPECT_EQ(outputs[0].dims[1], 4);
  ASSERT_EQ(outputs[0].byteSize, 32u);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(outputs[0].data) % 64, 0u);
  const float *y = static_cast<const float *>(outputs[0].data);
  EXPECT_THAT(std::vector<float>(y, y + 8),
              ElementsAre(4.5f, 4, 1, 1.5f, 0.5f, 0, 1, 0));
  lmoptTensorArrayDestroy(outputs);
  lmoptTensorArrayDestroy(nullptr);

  lmoptSessionOptions options{2};
  lmoptSession second = nullptr;
  ASSERT_EQ(lmoptSessionCreate(path.c_str(), &options, &second), nullptr);
  ASSERT_EQ(lmoptSessionRun(second, 1, names, &input, &numOutputs, &outputs),
            nullptr);
  EXPECT_EQ(static_cast<const float *>(outputs[0].data)[0], 4.5f);
  lmoptTensorArrayDestroy(outputs);
  EXPECT_EQ(lmoptSessionDestroy(second), nullptr);
  EXPECT_EQ(lmoptSessionDestroy(session), nullptr);
  EXPECT_EQ(lmoptSessionDestroy(nullptr), nullptr);
}

TEST_F(SessionTest, CApiErrors) {
  std::string path = write(linearReluModel());
  lmoptSession session = reinterpret_cast<lmoptSession>(this);
  EXPECT_EQ(take(lmoptSessionCreate(nullptr, nullptr, &session)),
            Result(LMOPT_STATUS_INVALID_ARGUMENT,
                   "lmoptSessionCreate: 'path' is null"));
  EXPECT_EQ(session, nullptr);
  EXPECT_EQ(take(lmoptSessionCreate(path.c_str(), nullptr, nullptr)),
            Result(LMOPT_STATUS_INVALID_ARGUMENT,
                   "lmoptSessionCreate: 'outSession' is null"));
  Result missing = take(lmoptSessionCreate(dir.file("nope.lmopt").c_str(),
                                           nullptr, &session));
  EXPECT_EQ(missing.first, LMOPT_STATUS_IO_ERROR);
  EXPECT_THAT(missing.second, HasSubstr("nope.lmopt"));
  lmoptSessionOptions badOptions{-1};
  EXPECT_EQ(take(lmoptSessionCreate(path.c_str(), &badOptions, &session)),
            Result(LMOPT_STATUS_INVALID_ARGUMENT,
                   "cpu context: thread count -1 is negative (0 keeps the "
                   "default)"));

  ASSERT_EQ(lmoptSessionCreate(path.c_str(), nullptr, &session), nullptr);
  lmoptValueInfo info;
  EXPECT_EQ(take(lmoptSessionInputInfo(session, 1, &info)),
            Result(LMOPT_STATUS_INVALID_ARGUMENT,
                   "lmoptSessionInputInfo: index 1 is out of range; the "
                   "model has 1 inputs"));
  EXPECT_EQ(take(lmoptSessionOutputInfo(session, 0, nullptr)),
            Result(LMOPT_STATUS_INVALID_ARGUMENT,
                   "lmoptSessionOutputInfo: a pointer argument is null"));
  EXPECT_EQ(take(lmoptSessionInputCount(nullptr, nullptr)),
            Result(LMOPT_STATUS_INVALID_ARGUMENT,
                   "lmoptSessionInputCount: a pointer argument is null"));

  int64_t dims[] = {2, 3};
  float x[6] = {};
  const char *names[] = {"x"};
  size_t numOutputs = 5;
  lmoptTensor *outputs = reinterpret_cast<lmoptTensor *>(this);
  lmoptTensor input{LMOPT_DTYPE_F32, 2, dims, x, sizeof(x)};
  auto run = [&](const lmoptTensor &t, const char *name = "x") {
    names[0] = name;
    return take(lmoptSessionRun(session, 1, names, &t, &numOutputs, &outputs));
  };
  EXPECT_EQ(run(input, "y"),
            Result(LMOPT_STATUS_INVALID_ARGUMENT,
                   "unknown input 'y'; the model's inputs are 'x'"));
  EXPECT_EQ(numOutputs, 0u);
  EXPECT_EQ(outputs, nullptr);
  EXPECT_EQ(run(input, nullptr),
            Result(LMOPT_STATUS_INVALID_ARGUMENT,
                   "lmoptSessionRun: input 0 has a null name"));
  EXPECT_EQ(run({77, 2, dims, x, sizeof(x)}),
            Result(LMOPT_STATUS_INVALID_ARGUMENT,
                   "lmoptSessionRun: input 0 'x' has invalid dtype 77"));
  EXPECT_EQ(run({LMOPT_DTYPE_F32, -1, dims, x, sizeof(x)}),
            Result(LMOPT_STATUS_INVALID_ARGUMENT,
                   "lmoptSessionRun: input 0 'x' has rank -1, outside [0, "
                   "64]"));
  EXPECT_EQ(run({LMOPT_DTYPE_F32, 2, nullptr, x, sizeof(x)}),
            Result(LMOPT_STATUS_INVALID_ARGUMENT,
                   "lmoptSessionRun: input 0 'x' has null dims for rank 2"));
  EXPECT_EQ(run({LMOPT_DTYPE_I32, 2, dims, x, sizeof(x)}),
            Result(LMOPT_STATUS_INVALID_ARGUMENT,
                   "input 'x' has dtype i32; the model expects f32 [2, 3]"));
  EXPECT_EQ(run({LMOPT_DTYPE_F32, 2, dims, x, 20}),
            Result(LMOPT_STATUS_INVALID_ARGUMENT,
                   "input 'x' has 20 bytes of data; f32 [2, 3] needs 24"));
  EXPECT_EQ(take(lmoptSessionRun(session, 0, nullptr, nullptr, &numOutputs,
                                 &outputs)),
            Result(LMOPT_STATUS_INVALID_ARGUMENT,
                   "missing input 'x' (f32 [2, 3])"));
  EXPECT_EQ(take(lmoptSessionRun(session, 1, nullptr, &input, &numOutputs,
                                 &outputs)),
            Result(LMOPT_STATUS_INVALID_ARGUMENT,
                   "lmoptSessionRun: 'names' or 'inputs' is null for 1 "
                   "inputs"));
  EXPECT_EQ(take(lmoptSessionRun(session, 1, names, &input, nullptr,
                                 &outputs)),
            Result(LMOPT_STATUS_INVALID_ARGUMENT,
                   "lmoptSessionRun: a pointer argument is null"));
  EXPECT_EQ(lmoptSessionDestroy(session), nullptr);
}

//===- SessionErrorTest.cpp - What sessions refuse, and how they say it ---===//
//
// Bad inputs, bundles, plans, kernels and steps: each failure's code and
// message, from the C++ and the C API.
//
//===----------------------------------------------------------------------===//

#include "lmopt/Runtime/Session.h"

#include "lmopt/Format/Bundle.h"

#include "SessionTestUtil.h"

#include <gmock/gmock.h>

#include <cmath>
#include <cstdlib>
#include <cstring>

using namespace lmopt::runtime;
using namespace lmopt::runtime::test;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

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

  EXPECT_STATUS(session->run({{"x", x}}, outputs), StatusCode::InvalidArgument,
                "missing input 'ids' (i64 [2])");
  EXPECT_STATUS(session->run(std::vector<NamedTensor>{}, outputs),
                StatusCode::InvalidArgument,
                "missing input 'x' (f32 [2, 3]), 'ids' (i64 [2])");
  EXPECT_STATUS(session->run({{"x", x}, {"ids", id}, {"mask", id}}, outputs),
                StatusCode::InvalidArgument,
                "unknown input 'mask'; the model's inputs are 'x', 'ids'");
  EXPECT_STATUS(session->run({{"x", x}, {"ids", id}, {"x", x}}, outputs),
                StatusCode::InvalidArgument, "input 'x' is given twice");
  EXPECT_STATUS(session->run({{"x", makeTensor<double>(DType::F64, {2, 3},
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
                                   model.weights.data(), model.weights.size()));
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
    b.plan.arenaSizes = {64};
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

TEST_F(SessionTest, RowQuantizedGatherErrors) {
  auto model = [] {
    BundleBuilder b;
    uint32_t ids = b.input("ids", DType::I64, {2});
    uint32_t table =
        b.weight<int8_t>("table", DType::I8, {3, 2}, {1, 2, 3, 4, 5, 6});
    uint32_t scales =
        b.weight<float>("scales", DType::F32, {3}, {1.0f, 2.0f, 3.0f});
    uint32_t out = b.arena("out", DType::F32, {2, 2});
    PlanStep &step =
        b.step(StepKind::Gather, "embed", {table, ids, scales}, {out});
    addInt(step, "axis", 0);
    addInt(step, "row_scales", 1);
    b.output("out", out);
    return b;
  };
  std::unique_ptr<Session> session;
  ASSERT_TRUE(create(model(), session));
  {
    BundleBuilder b = model();
    b.plan.steps[0].operands.pop_back();
    EXPECT_EQ(createError(b), "bundle 'B': gather step 'embed': has 2 "
                              "operands; expected 3 (data, indices, scales)");
  }
  {
    BundleBuilder b = model();
    b.plan.steps[0].attrs[1].intValue = 2;
    EXPECT_THAT(createError(b), HasSubstr("row_scales"));
  }
  {
    BundleBuilder b = model();
    b.plan.tensors[1].dtype = DType::U8;
    EXPECT_EQ(createError(b), "bundle 'B': gather step 'embed': data "
                              "'table' (u8 [3, 2]) has dtype u8; expected i8");
  }
  {
    BundleBuilder b = model();
    b.plan.tensors[2].dims = {2};
    EXPECT_EQ(createError(b), "bundle 'B': gather step 'embed': scales "
                              "'scales' (f32 [2]) should have dims [3] (one "
                              "per row of data)");
  }
  {
    BundleBuilder b = model();
    b.plan.tensors[3].dtype = DType::I8;
    EXPECT_EQ(createError(b), "bundle 'B': gather step 'embed': output 'out' "
                              "(i8 [2, 2]) has dtype i8; expected f32");
  }
  {
    BundleBuilder b = model();
    b.plan.steps[0].attrs[0].intValue = 1;
    b.plan.tensors[3].dims = {3, 2};
    b.plan.arenaSizes = {64};
    EXPECT_EQ(createError(b), "bundle 'B': gather step 'embed': a "
                              "row-quantized table is gathered along axis 0, "
                              "got attribute 'axis' 1");
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
    b.plan.arenaSizes = {64};
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

/// A copy into 't' at arena offset 0, then kernel 'k' reading 't' and
/// writing 'doubled' at the same offset (and 'total' at 64); returns
/// 'doubled'.
static uint32_t addOverlappingKernel(BundleBuilder &b) {
  b.kernels = readKernels();
  uint32_t x = b.input("x", DType::F32, {4});
  uint32_t t = b.arenaAt("t", DType::F32, {4}, 0);
  uint32_t doubled = b.arenaAt("doubled", DType::F32, {4}, 0);
  uint32_t total = b.arenaAt("total", DType::F32, {1}, 64);
  b.step(StepKind::Copy, "stage", {x}, {t});
  addString(b.step(StepKind::Kernel, "k", {t}, {doubled, total}), "entry",
            "double_and_sum_4");
  return doubled;
}

TEST_F(SessionTest, InPlaceKernelResultsMustBeTheirStateViews) {
  // 'in_place' lets a kernel write a state it reads where it lies (a
  // gradient accumulated into its state); it names result:operand pairs
  // that are one state view, nothing else.
  for (const char *list : {"0:0", "0-0", "2:0"}) {
    BundleBuilder b;
    addOverlappingKernel(b);
    addString(b.plan.steps.back(), "in_place", list);
    std::string error = createError(b);
    SCOPED_TRACE(list);
    EXPECT_EQ(error,
              std::string(list) == "0:0"
                  ? "bundle 'B': kernel step 'k': in-place result 0 "
                    "'doubled' (f32 [4]) is not the state view operand 0 "
                    "'t' (f32 [4]) is"
              : std::string(list) == "0-0"
                  ? "bundle 'B': kernel step 'k': has attribute 'in_place' = "
                    "'0-0', which is not a list of result:operand numbers"
                  : "bundle 'B': kernel step 'k': has attribute 'in_place' = "
                    "'2:0', which names a result or operand it does not have");
  }
}

TEST_F(SessionTest, ResultsMustNotAliasOperands) {
  // A kernel whose output shares arena bytes with its operand.
  BundleBuilder b;
  uint32_t doubled = addOverlappingKernel(b);
  EXPECT_EQ(createError(b),
            "bundle 'B': kernel step 'k': result 0 'doubled' (f32 [4]) at "
            "arena offset 0 overlaps operand 0 't' (f32 [4]) at arena offset "
            "0");
  b.plan.tensors[doubled].offset = 64;
  b.plan.arenaSizes = {256};
  EXPECT_EQ(createError(b), "bundle 'B': kernel step 'k': results 0 "
                            "'doubled' (f32 [4]) and 1 'total' (f32 [1]) "
                            "overlap in the arena");
  b.plan.tensors[doubled].offset = 128;
  std::unique_ptr<Session> session;
  EXPECT_TRUE(create(b, session));

  // A linear step's residual may be its output only exactly.
  BundleBuilder lin;
  uint32_t in = lin.input("x", DType::F32, {1, 1});
  uint32_t w =
      lin.weight<float>("w", DType::F32, {1, 32}, std::vector<float>(32, 1.5f));
  uint32_t acc = lin.arenaAt("acc", DType::F32, {1, 32}, 0);
  uint32_t out = lin.arenaAt("out", DType::F32, {1, 32}, 64);
  addInt(lin.step(StepKind::Linear, "res", {in, w, acc}, {out}), "has_residual",
         1);
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
                            "G*D])");
  // Grouped-query attention: 2 query heads of 2 share one key/value head,
  // so key and value hold 2 features; num_kv_heads must divide num_heads.
  addInt(s, "num_kv_heads", 3);
  EXPECT_EQ(createError(b), "bundle 'B': attention step 'attn': "
                            "num_kv_heads = 3 does not divide num_heads = 2");
  b.plan.steps[0].attrs.back().intValue = 1;
  EXPECT_EQ(createError(b), "bundle 'B': attention step 'attn': value 'v' "
                            "(f32 [1, 3, 4]) should have dims [1, 3, 2] ([B, "
                            "Sk, G*D])");
  b.plan.steps[0].attrs.pop_back();
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
  Result missing = take(
      lmoptSessionCreate(dir.file("nope.lmopt").c_str(), nullptr, &session));
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
  EXPECT_EQ(
      take(
          lmoptSessionRun(session, 0, nullptr, nullptr, &numOutputs, &outputs)),
      Result(LMOPT_STATUS_INVALID_ARGUMENT, "missing input 'x' (f32 [2, 3])"));
  EXPECT_EQ(
      take(lmoptSessionRun(session, 1, nullptr, &input, &numOutputs, &outputs)),
      Result(LMOPT_STATUS_INVALID_ARGUMENT,
             "lmoptSessionRun: 'names' or 'inputs' is null for 1 "
             "inputs"));
  EXPECT_EQ(take(lmoptSessionRun(session, 1, names, &input, nullptr, &outputs)),
            Result(LMOPT_STATUS_INVALID_ARGUMENT,
                   "lmoptSessionRun: a pointer argument is null"));
  EXPECT_EQ(lmoptSessionDestroy(session), nullptr);
}

//===----------------------------------------------------------------------===//
// Corrupted plans
//===----------------------------------------------------------------------===//

TEST_F(SessionTest, EveryPlanByteCorruptionIsHandled) {
  // Each plan byte after the magic changed in two ways in turn (the
  // bundle's checksums made to match):
  // creation fails with a message or yields a session whose checks passed,
  // which then runs on zero inputs when its tensors are small. Kernel steps
  // are left out: a kernel trusts the buffers the plan gives it.
  BundleBuilder b = linearReluModel();
  uint32_t ids = b.input("ids", DType::I64, {2});
  uint32_t table =
      b.weight<float>("table", DType::F32, {4, 3}, std::vector<float>(12, 1));
  uint32_t emb = b.arena("emb", DType::F32, {2, 3});
  uint32_t copied = b.arena("copied", DType::F32, {2, 3});
  addInt(b.step(StepKind::Gather, "embed", {table, ids}, {emb}), "axis", 0);
  b.step(StepKind::Copy, "copy", {emb}, {copied});
  b.output("copied", copied);
  std::vector<uint8_t> plan = b.planBytes();
  size_t created = 0, failed = 0;
  for (size_t i = 8 * 2; i < plan.size() * 2; ++i) {
    std::vector<uint8_t> corrupt = plan;
    static constexpr uint8_t kDeltas[] = {0x01, 0x80};
    corrupt[i / 2] = uint8_t(corrupt[i / 2] + kDeltas[i % 2]);
    BundleWriter writer;
    ASSERT_TRUE(writer.addSection("plan", SectionKind::Plan, corrupt));
    ASSERT_TRUE(writer.addSection("weights", SectionKind::Weights,
                                  b.weights.data(), b.weights.size()));
    ASSERT_TRUE(writer.write(dir.file("c.lmopt")));
    std::unique_ptr<Session> session;
    Status st = Session::create(dir.file("c.lmopt"), {}, session);
    if (!st) {
      ++failed;
      EXPECT_FALSE(st.message().empty());
      continue;
    }
    ++created;
    bool small = session->plan().arenaSize() <= (1 << 20);
    std::vector<NamedTensor> inputs;
    for (const ValueInfo &info : session->inputs()) {
      Tensor t;
      t.dtype = info.dtype;
      t.shape = info.dims;
      uint64_t bytes = t.elementCount() * dtypeSize(info.dtype);
      small &= bytes <= (1 << 20);
      if (small)
        t.data.assign(bytes, 0);
      inputs.push_back({info.name, std::move(t)});
    }
    std::vector<NamedTensor> outputs;
    if (small)
      (void)session->run(inputs, outputs);
  }
  EXPECT_GT(failed, 0u);
  EXPECT_GT(created, 0u); // bytes of names and values
}

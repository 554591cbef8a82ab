//===- SessionTest.cpp - Running bundles end to end -----------------------===//
//
// Each test builds a small bundle (plan, weights, kernels) with BundleBuilder,
// opens it as a Session and runs it. Expected values are worked out by hand
// from each step's meaning (numpy semantics), written next to the inputs.
//
//===----------------------------------------------------------------------===//

#include "lmopt/Runtime/Session.h"

#include "lmopt/Runtime/CPU/KernelLibrary.h"

#include "SessionTestUtil.h"

#include <gmock/gmock.h>

#include <climits>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <tuple>

using namespace lmopt::runtime;
using namespace lmopt::runtime::test;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

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
  Status st = session->run({{"x", f32({2, 3}, {1, 2, 3, -1, 0, 1})}}, outputs);
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

/// Resident KiB of this process's mappings of the file at `path`
/// (/proc/self/smaps), or -1 when it cannot be read.
static long mappedResidentKiB(const std::string &path) {
  char resolved[PATH_MAX];
  if (!realpath(path.c_str(), resolved))
    return -1;
  std::FILE *f = std::fopen("/proc/self/smaps", "r");
  if (!f)
    return -1;
  long total = 0;
  bool inFile = false;
  char line[4096];
  while (std::fgets(line, sizeof(line), f)) {
    std::string text(line);
    if (!text.empty() && text.back() == '\n')
      text.pop_back();
    long kib = 0;
    if (std::sscanf(line, "Rss: %ld kB", &kib) == 1) {
      if (inFile)
        total += kib;
    } else if (text.find('-') < text.find(' ')) {
      // A mapping's first line: "start-end perms offset dev inode  path".
      inFile = text.size() >= std::strlen(resolved) &&
               text.compare(text.size() - std::strlen(resolved),
                            std::string::npos, resolved) == 0;
    }
  }
  std::fclose(f);
  return total;
}

// Two linears share a 256 KiB weight (one reads it transposed); both forms
// give the same values, and packed, the weight's mapped pages are released
// while a weight that is also a plan output stays resident and readable.
TEST_F(SessionTest, PackedLinearWeightsAndReleasedPages) {
  // 16 rows: fewer read the weight in place, packed or not (Executor.cpp).
  constexpr int64_t kDim = 256, kRows = 16;
  std::vector<float> weight(size_t(kDim * kDim)), input(size_t(kRows * kDim));
  for (size_t i = 0; i < weight.size(); ++i)
    weight[i] = float(int(i % 7) - 3) / 8;
  for (size_t i = 0; i < input.size(); ++i)
    input[i] = float(int(i % 5) - 2) / 4;
  BundleBuilder b;
  uint32_t x = b.input("x", DType::F32, {kRows, kDim});
  uint32_t w = b.weight<float>("w", DType::F32, {kDim, kDim}, weight);
  uint32_t small =
      b.weight<float>("small", DType::F32, {4, 2}, {1, 2, 3, 4, 5, 6, 7, 8});
  uint32_t x4 = b.input("x4", DType::F32, {1, 4});
  uint32_t y = b.arena("y", DType::F32, {kRows, kDim});
  uint32_t yt = b.arena("yt", DType::F32, {kRows, kDim});
  uint32_t z = b.arena("z", DType::F32, {1, 2});
  for (auto [name, out, transpose] :
       {std::tuple<const char *, uint32_t, int>{"dense", y, 0},
        {"dense_t", yt, 1}}) {
    PlanStep &s = b.step(StepKind::Linear, name, {x, w}, {out});
    addInt(s, "transpose_weight", transpose);
    addInt(s, "has_bias", 0);
    addInt(s, "has_residual", 0);
  }
  PlanStep &s = b.step(StepKind::Linear, "dense_small", {x4, small}, {z});
  addInt(s, "has_bias", 0);
  addInt(s, "has_residual", 0);
  b.output("y", y);
  b.output("yt", yt);
  b.output("z", z);
  b.output("small", small);
  std::string path = write(b);

  std::vector<std::vector<NamedTensor>> results;
  std::vector<long> resident;
  for (bool pack : {true, false}) {
    SCOPED_TRACE(pack ? "packed" : "in place");
    SessionOptions options;
    options.packLinearWeights = pack;
    std::unique_ptr<Session> session;
    Status st = Session::create(path, options, session);
    ASSERT_TRUE(st) << st.toString();
    resident.push_back(mappedResidentKiB(path));
    std::vector<NamedTensor> outputs;
    st = session->run(
        {{"x", f32({kRows, kDim}, input)}, {"x4", f32({1, 4}, {1, 0, -1, 2})}},
        outputs);
    ASSERT_TRUE(st) << st.toString();
    ASSERT_EQ(outputs.size(), 4u);
    // x W and x W^T at a few elements, in double.
    for (auto [row, col] :
         {std::pair<int64_t, int64_t>{0, 0}, {1, 77}, {2, 255}}) {
      double want = 0, wantT = 0;
      for (int64_t k = 0; k < kDim; ++k) {
        want += double(input[size_t(row * kDim + k)]) *
                weight[size_t(k * kDim + col)];
        wantT += double(input[size_t(row * kDim + k)]) *
                 weight[size_t(col * kDim + k)];
      }
      EXPECT_NEAR(values<float>(outputs[0].tensor)[size_t(row * kDim + col)],
                  want, 1e-4);
      EXPECT_NEAR(values<float>(outputs[1].tensor)[size_t(row * kDim + col)],
                  wantT, 1e-4);
    }
    // [1 0 -1 2] [[1 2] [3 4] [5 6] [7 8]] = [10, 12].
    EXPECT_THAT(values<float>(outputs[2].tensor), ElementsAre(10, 12));
    EXPECT_THAT(values<float>(outputs[3].tensor),
                ElementsAre(1, 2, 3, 4, 5, 6, 7, 8));
    results.push_back(std::move(outputs));
  }
  EXPECT_EQ(results[0][0].tensor.data, results[1][0].tensor.data);
  EXPECT_EQ(results[0][1].tensor.data, results[1][1].tensor.data);
  // The 256 KiB weight minus its two edge pages at most, in 4 KiB pages.
  ASSERT_GE(resident[0], 0);
  EXPECT_LE(resident[0] + 240, resident[1])
      << "packed " << resident[0] << " KiB, in place " << resident[1]
      << " KiB resident";
}

TEST_F(SessionTest, GatherRowsAndColumns) {
  // emb = table[ids] (axis 0, i64, a negative index counts from the end);
  // cols = m[:, idx] (axis 1, i32).
  BundleBuilder b;
  uint32_t ids = b.input("ids", DType::I64, {2, 2});
  uint32_t idx = b.input("idx", DType::I32, {2});
  uint32_t table =
      b.weight<float>("table", DType::F32, {4, 3},
                      {0, 1, 2, 10, 11, 12, 20, 21, 22, 30, 31, 32});
  uint32_t m = b.weight<int32_t>("m", DType::I32, {2, 3}, {1, 2, 3, 4, 5, 6});
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

TEST_F(SessionTest, GatherRowQuantizedTable) {
  // emb = table[ids] * scales[ids][:, None] with an i8 table: the values
  // are exact in f32 (scales are powers of two), as NumPy gives them.
  BundleBuilder b;
  uint32_t ids = b.input("ids", DType::I64, {3});
  uint32_t table =
      b.weight<int8_t>("table", DType::I8, {3, 2}, {127, -1, 0, 64, -127, 3});
  uint32_t scales =
      b.weight<float>("table.scales", DType::F32, {3}, {0.5f, 1.0f, 0.25f});
  uint32_t emb = b.arena("emb", DType::F32, {3, 2});
  PlanStep &step =
      b.step(StepKind::Gather, "embed", {table, ids, scales}, {emb});
  addInt(step, "axis", 0);
  addInt(step, "row_scales", 1);
  b.output("emb", emb);
  std::unique_ptr<Session> session;
  Status st = create(b, session);
  ASSERT_TRUE(st) << st.toString();
  std::vector<NamedTensor> outputs;
  st = session->run({{"ids", makeTensor<int64_t>(DType::I64, {3}, {2, 0, -2})}},
                    outputs);
  ASSERT_TRUE(st) << st.toString();
  ASSERT_EQ(outputs.size(), 1u);
  EXPECT_EQ(outputs[0].tensor.dtype, DType::F32);
  EXPECT_THAT(values<float>(outputs[0].tensor),
              ElementsAre(-31.75f, 0.75f, 63.5f, -0.5f, 0.0f, 64.0f));
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

// A kernel with a partitioned entry runs on the session's threads as
// several shares of its rows, share p of P computing rows
// [n p / P, n (p + 1) / P), as its `part` result records. With one
// thread the whole kernel runs (one share).
TEST_F(SessionTest, PartitionedKernelSplitsRowsBetweenThreads) {
  constexpr int64_t rows = 131072;
  BundleBuilder b;
  b.kernels = readKernels();
  uint32_t x = b.input("x", DType::F32, {rows});
  uint32_t doubled = b.arena("doubled", DType::F32, {rows});
  uint32_t part = b.arena("part", DType::F32, {rows});
  addString(b.step(StepKind::Kernel, "rows", {x}, {doubled, part}), "entry",
            "double_rows");
  b.output("doubled", doubled);
  b.output("part", part);
  std::vector<float> input(rows);
  for (int64_t i = 0; i < rows; ++i)
    input[i] = float(i % 1000) - 500;
  for (int threads : {1, 2, 3}) {
    SessionOptions options;
    options.threads = threads;
    std::unique_ptr<Session> session;
    Status st = create(b, session, options);
    ASSERT_TRUE(st) << st.toString();
    for (int run = 0; run < 3; ++run) {
      std::vector<NamedTensor> outputs;
      st = session->run({{"x", f32({rows}, input)}}, outputs);
      ASSERT_TRUE(st) << st.toString();
      std::vector<float> out = values<float>(outputs[0].tensor);
      std::vector<float> who = values<float>(outputs[1].tensor);
      int64_t parts = int64_t(who.back()) + 1;
      if (threads == 1)
        EXPECT_EQ(parts, 1);
      else
        EXPECT_GE(parts, threads);
      for (int64_t i = 0; i < rows; ++i) {
        ASSERT_EQ(out[i], 2 * input[i]) << "row " << i;
        auto share = int64_t(who[i]);
        ASSERT_TRUE(rows * share / parts <= i && i < rows * (share + 1) / parts)
            << "row " << i << " from share " << share << " of " << parts << ", "
            << threads << " threads";
      }
    }
  }
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
    ASSERT_TRUE(
        session->run({{"x", f32({2, 3}, {1, 2, 3, 4, 5, 6})}}, outputs));
  ASSERT_EQ(session->profile().size(), 1u);
  EXPECT_EQ(session->profile()[0].name, "dense_0");
  EXPECT_EQ(session->profile()[0].kind, StepKind::Linear);
  EXPECT_EQ(session->profile()[0].index, 0u);
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

TEST_F(SessionTest, SessionsRunOnTwoThreadsAtOnce) {
  // A linear and a kernel step; each thread has its own session and inputs
  // (ConcurrencyTest.cpp runs more threads, and threads sharing a session).
  std::string path = write(kernelAndLinearModel());
  auto work = [&](float base, std::string &failure) {
    SessionOptions options;
    options.threads = 1;
    std::unique_ptr<Session> session;
    if (Status st = Session::create(path, options, session); !st) {
      failure = st.toString();
      return;
    }
    std::vector<NamedTensor> outputs;
    for (int i = 0; i < 50 && failure.empty(); ++i) {
      float v = base + float(i);
      if (Status st = session->run(kernelAndLinearInputs(v), outputs); !st)
        failure = st.toString();
      else
        failure = checkKernelAndLinearOutputs(v, outputs);
    }
  };
  std::string failure1, failure2;
  std::thread t1(work, 0.0f, std::ref(failure1));
  std::thread t2(work, 100.0f, std::ref(failure2));
  t1.join();
  t2.join();
  EXPECT_EQ(failure1, "");
  EXPECT_EQ(failure2, "");
}

TEST_F(SessionTest, OutputsThatAreInputsOrWeights) {
  // The plan may name an input or a weight as an output directly.
  BundleBuilder b;
  uint32_t x = b.input("x", DType::I16, {3});
  uint32_t w = b.weight<int16_t>("w", DType::I16, {2}, {-7, 9});
  b.output("x_again", x);
  b.output("w", w);
  std::unique_ptr<Session> session;
  ASSERT_TRUE(create(b, session));
  std::vector<NamedTensor> outputs;
  ASSERT_TRUE(session->run(
      {{"x", makeTensor<int16_t>(DType::I16, {3}, {1, 2, 3})}}, outputs));
  ASSERT_EQ(outputs.size(), 2u);
  EXPECT_EQ(outputs[0].name, "x_again");
  EXPECT_THAT(values<int16_t>(outputs[0].tensor), ElementsAre(1, 2, 3));
  EXPECT_EQ(outputs[1].name, "w");
  EXPECT_THAT(values<int16_t>(outputs[1].tensor), ElementsAre(-7, 9));
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

TEST_F(SessionTest, AttentionTwoHeadsCausal) {
  // B = 1, Sq = Sk = 2, H = 2, D = 1. With q = 0 every score is 0, so each
  // head averages the values it sees: query 0 sees key 0 only (causal),
  // query 1 both. Head 0 reads v[:, 0] = [1, 3], head 1 v[:, 1] = [10, 30].
  std::unique_ptr<Session> session;
  Status st = create(attentionModel({1, 2, 2}, {1, 2, 2}, 2, 1.0, true, false),
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
  ASSERT_TRUE(create(attentionModel({1, 1, 1}, {1, 2, 1}, 1, 0.5, false, false),
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
  BundleBuilder split =
      attentionModel({1, 2, 2}, {1, 2, 2, 1}, 2, 1.0, false, true);
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

/// One [1, 2, 6] buffer holding q, k, v (one head, D = 2) side by side, as
/// a fused QKV projection writes them; the attention step reads the three
/// views in place.
static BundleBuilder attentionViewModel() {
  BundleBuilder b;
  uint32_t qkv = b.input("qkv", DType::F32, {1, 2, 6});
  uint32_t out = b.arena("out", DType::F32, {1, 2, 2});
  PlanStep &s = b.step(StepKind::Attention, "attn", {qkv, qkv, qkv}, {out});
  addInt(s, "num_heads", 1);
  addFloat(s, "scale", 1.0);
  addInt(s, "causal", 0);
  addInt(s, "kv_heads_split", 0);
  addInt(s, "zero_masked_rows", 0);
  for (auto [role, offset] :
       {std::pair{"query", 0}, {"key", 2}, {"value", 4}}) {
    addInt(s, std::string(role) + "_offset", offset);
    addInt(s, std::string(role) + "_row_stride", 6);
  }
  b.output("out", out);
  return b;
}

TEST_F(SessionTest, AttentionReadsViewsOfOneBuffer) {
  // Row 0: q = [1, 0] scores keys [0, 0] and [ln 3, 0] as 0 and ln 3, so
  // weights [1/4, 3/4] over values [4, 40] and [8, 80]: [7, 70]. Row 1:
  // q = 0 weighs both values equally: [6, 60].
  std::unique_ptr<Session> session;
  Status st = create(attentionViewModel(), session);
  ASSERT_TRUE(st) << st.toString();
  std::vector<NamedTensor> outputs;
  float ln3 = std::log(3.0f);
  st = session->run({{"qkv", f32({1, 2, 6}, {1, 0, 0, 0, 4, 40, //
                                             0, 0, ln3, 0, 8, 80})}},
                    outputs);
  ASSERT_TRUE(st) << st.toString();
  std::vector<float> got = values<float>(outputs[0].tensor);
  ASSERT_EQ(got.size(), 4u);
  const float want[] = {7, 70, 6, 60};
  for (size_t i = 0; i < 4; ++i)
    EXPECT_NEAR(got[i], want[i], 1e-4) << "element " << i;
}

TEST_F(SessionTest, AttentionViewsAreChecked) {
  BundleBuilder b = attentionViewModel();
  std::vector<PlanAttr> &attrs = b.plan.steps[0].attrs;
  auto attr = [&](const std::string &name) -> PlanAttr & {
    for (PlanAttr &a : attrs)
      if (a.name == name)
        return a;
    ADD_FAILURE() << "no attribute " << name;
    return attrs.front();
  };
  const std::vector<PlanAttr> good = attrs;
  attrs.erase(std::find_if(attrs.begin(), attrs.end(), [](const PlanAttr &a) {
    return a.name == "key_row_stride";
  }));
  EXPECT_EQ(createError(b), "bundle 'B': attention step 'attn': has attribute "
                            "'key_offset' without 'key_row_stride'");
  attrs = good;
  attr("query_row_stride").intValue = 8;
  EXPECT_EQ(createError(b),
            "bundle 'B': attention step 'attn': query 'qkv' (f32 [1, 2, 6]) "
            "should have dims [1, 2, 8] (the buffer [B, S, query_row_stride] "
            "its view reads)");
  attrs = good;
  attr("value_offset").intValue = 5;
  EXPECT_EQ(createError(b), "bundle 'B': attention step 'attn': value view "
                            "at offset 5 of 2 elements (H*D) ends past its "
                            "row stride 6");
  attrs = good;
  attr("key_row_stride").intValue = -6;
  EXPECT_EQ(createError(b), "bundle 'B': attention step 'attn': attribute "
                            "'key_row_stride' is -6 and 'key_offset' is 2; "
                            "expected a positive stride and an offset >= 0");
  attrs = good;
  attr("kv_heads_split").intValue = 1;
  EXPECT_EQ(createError(b), "bundle 'B': attention step 'attn': key is a "
                            "view, which kv_heads_split does not allow (key "
                            "and value are dense [B, H, Sk, D])");
  attrs = good;
  // H*D comes from the output when the query is a view.
  b.plan.tensors[b.plan.steps[0].results[0]].dims = {1, 2, 1};
  attr("num_heads").intValue = 2;
  EXPECT_EQ(createError(b), "bundle 'B': attention step 'attn': output 'out' "
                            "(f32 [1, 2, 1]) has 1 features, not a positive "
                            "multiple of num_heads = 2");
}

//===----------------------------------------------------------------------===//
// C API
//===----------------------------------------------------------------------===//

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
  ASSERT_EQ(lmoptSessionRun(session, 1, names, &input, &numOutputs, &outputs),
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

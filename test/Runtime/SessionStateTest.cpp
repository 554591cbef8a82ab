//===- SessionStateTest.cpp - Entry points and state tensors --------------===//
//
// Bundles with several entries that share weights and states: a state keeps
// its value from one run to the next, grows by an append step, is read by
// attention at its capacity, and can be read, written, reset, saved and
// loaded; every misuse fails with a message and changes nothing. Expected
// values are the inputs moved into place (append) or the same attention on
// dense operands, whose numerics AttentionStepTest checks against numpy.
//
//===----------------------------------------------------------------------===//

#include "lmopt/Runtime/Session.h"

#include "lmopt/Format/Bundle.h"
#include "lmopt/Runtime/Device.h"

#include "SessionTestUtil.h"

#include <gmock/gmock.h>

#include <cmath>
#include <fstream>

using namespace lmopt::runtime;
using namespace lmopt::runtime::test;
using ::testing::ElementsAre;
using ::testing::ElementsAreArray;
using ::testing::HasSubstr;

/// A cache `c` f32 [1, <=4, 2], no value at first. Entry `start` writes it
/// from input x [1, n, 2] (n <= 4); entry `step` appends input t [1, 1, 2]
/// to it (its length a state symbol, at most 3 before the append) and
/// returns t, so that a run is visible in an output too.
static BundleBuilder cacheModel() {
  BundleBuilder b;
  uint32_t cache = b.state("c", DType::F32, {1, 4, 2});

  b.plan.symbols = {{"x.1", 0, 1, 4}};
  uint32_t n = b.plan.addExpr({{{DimOp::Kind::Symbol, 0}}});
  uint32_t x = b.input("x", DType::F32, {1, 4, 2});
  b.plan.tensors[x].dimExprs = {-1, int32_t(n), -1};
  uint32_t view = b.stateView("c", cache, {1, 4, 2});
  b.plan.tensors[view].dimExprs = {-1, int32_t(n), -1};
  addInt(b.step(StepKind::Append, "write", {x}, {view}), "axis", 1);
  b.plan.stateWrites = {{cache, view}};
  b.finishEntry("start");

  b.plan.name = "step";
  b.plan.symbols = {{"c.1", cache, 1, 3, PlanSymbol::Source::State}};
  uint32_t p = b.plan.addExpr({{{DimOp::Kind::Symbol, 0}}});
  uint32_t p1 = b.plan.addExpr({{{DimOp::Kind::Symbol, 0},
                                 {DimOp::Kind::Const, 1},
                                 {DimOp::Kind::Add, 0}}});
  uint32_t t = b.input("t", DType::F32, {1, 1, 2});
  uint32_t past = b.stateView("past", cache, {1, 3, 2});
  b.plan.tensors[past].dimExprs = {-1, int32_t(p), -1};
  uint32_t present = b.stateView("present", cache, {1, 4, 2});
  b.plan.tensors[present].dimExprs = {-1, int32_t(p1), -1};
  uint32_t y = b.arena("y", DType::F32, {1, 1, 2});
  addInt(b.step(StepKind::Append, "append", {t}, {present}), "axis", 1);
  b.step(StepKind::Copy, "echo", {t}, {y});
  b.output("y", y);
  b.plan.stateReads = {{cache, past}};
  b.plan.stateWrites = {{cache, present}};
  return b;
}

static std::vector<float> stateValues(const Session &session,
                                      const std::string &name,
                                      std::vector<int64_t> *dims = nullptr) {
  Tensor value;
  Status st = session.readState(name, value);
  EXPECT_TRUE(st) << st.toString();
  if (dims)
    *dims = value.shape;
  return values<float>(value);
}

TEST_F(SessionTest, EntriesAndTheirStates) {
  std::unique_ptr<Session> session;
  Status st = create(cacheModel(), session);
  ASSERT_TRUE(st) << st.toString();
  ASSERT_EQ(session->entries().size(), 2u);
  EXPECT_EQ(session->entries()[0].name, "start");
  EXPECT_THAT(session->entries()[1].stateReads, ElementsAre("c"));
  EXPECT_THAT(session->entries()[1].stateWrites, ElementsAre("c"));
  EXPECT_EQ(session->findEntry("step"), 1);
  EXPECT_EQ(session->findEntry("nope"), -1);
  std::vector<StateInfo> states = session->states();
  ASSERT_EQ(states.size(), 1u);
  EXPECT_EQ(states[0].name, "c");
  EXPECT_EQ(states[0].device, "cpu");
  EXPECT_FALSE(states[0].hasValue);
  EXPECT_THAT(states[0].maxDims, ElementsAre(1, 4, 2));
}

TEST_F(SessionTest, StatePersistsAcrossRunsAndGrows) {
  std::unique_ptr<Session> session;
  ASSERT_TRUE(create(cacheModel(), session));
  std::vector<NamedTensor> outputs;
  Status st =
      session->run("start", {{"x", f32({1, 2, 2}, {1, 2, 3, 4})}}, outputs);
  ASSERT_TRUE(st) << st.toString();
  std::vector<int64_t> dims;
  EXPECT_THAT(stateValues(*session, "c", &dims), ElementsAre(1, 2, 3, 4));
  EXPECT_THAT(dims, ElementsAre(1, 2, 2));

  st = session->run("step", {{"t", f32({1, 1, 2}, {5, 6})}}, outputs);
  ASSERT_TRUE(st) << st.toString();
  ASSERT_EQ(outputs.size(), 1u);
  EXPECT_THAT(values<float>(outputs[0].tensor), ElementsAre(5, 6));
  st = session->run("step", {{"t", f32({1, 1, 2}, {7, 8})}}, outputs);
  ASSERT_TRUE(st) << st.toString();
  EXPECT_THAT(stateValues(*session, "c", &dims),
              ElementsAre(1, 2, 3, 4, 5, 6, 7, 8));
  EXPECT_THAT(dims, ElementsAre(1, 4, 2));
  EXPECT_TRUE(session->states()[0].hasValue);

  // The cache is full: its length 4 is beyond the symbol's bound 3, and a
  // refused run changes nothing.
  EXPECT_STATUS(session->run("step", {{"t", f32({1, 1, 2}, {9, 9})}}, outputs),
                StatusCode::InvalidArgument,
                "state 'c' dim 1 is 4, beyond its bound 3 (c.1 <= 3; "
                "recompile with a larger --max-shape)");
  EXPECT_THAT(stateValues(*session, "c"), ElementsAre(1, 2, 3, 4, 5, 6, 7, 8));

  // Starting again overwrites it.
  ASSERT_TRUE(session->run("start", {{"x", f32({1, 1, 2}, {0, 1})}}, outputs));
  EXPECT_THAT(stateValues(*session, "c"), ElementsAre(0, 1));
}

TEST_F(SessionTest, StateWithoutValueIsRefused) {
  std::unique_ptr<Session> session;
  ASSERT_TRUE(create(cacheModel(), session));
  std::vector<NamedTensor> outputs;
  EXPECT_STATUS(session->run("step", {{"t", f32({1, 1, 2}, {5, 6})}}, outputs),
                StatusCode::InvalidArgument,
                "entry 'step' reads state 'c', which has no value yet; run "
                "'start' first");
  Tensor value;
  EXPECT_STATUS(session->readState("c", value), StatusCode::InvalidArgument,
                "state 'c' has no value yet");
  ASSERT_TRUE(session->run("start", {{"x", f32({1, 1, 2}, {1, 2})}}, outputs));
  ASSERT_TRUE(session->resetStates());
  EXPECT_FALSE(session->states()[0].hasValue);
  EXPECT_FALSE(session->run("step", {{"t", f32({1, 1, 2}, {5, 6})}}, outputs));
}

TEST_F(SessionTest, UnknownEntryAndInputs) {
  std::unique_ptr<Session> session;
  ASSERT_TRUE(create(cacheModel(), session));
  std::vector<NamedTensor> outputs;
  std::string path = dir.file("m.lmopt");
  EXPECT_STATUS(session->run("decode", {}, outputs),
                StatusCode::InvalidArgument,
                "bundle '" + path +
                    "' has no entry 'decode'; its entries are 'start', 'step'");
  EXPECT_STATUS(session->run("start", {{"t", f32({1, 1, 2}, {5, 6})}}, outputs),
                StatusCode::InvalidArgument,
                "unknown input 't'; the inputs of entry 'start' are 'x'");
}

TEST_F(SessionTest, WriteAndReadState) {
  std::unique_ptr<Session> session;
  ASSERT_TRUE(create(cacheModel(), session));
  Tensor value = f32({1, 3, 2}, {1, 2, 3, 4, 5, 6});
  ASSERT_TRUE(session->writeState("c", TensorView::of(value)));
  std::vector<int64_t> dims;
  EXPECT_THAT(stateValues(*session, "c", &dims), ElementsAre(1, 2, 3, 4, 5, 6));
  EXPECT_THAT(dims, ElementsAre(1, 3, 2));
  std::vector<NamedTensor> outputs;
  ASSERT_TRUE(session->run("step", {{"t", f32({1, 1, 2}, {7, 8})}}, outputs));
  EXPECT_THAT(stateValues(*session, "c"), ElementsAre(1, 2, 3, 4, 5, 6, 7, 8));

  Tensor wide = f32({1, 5, 2}, std::vector<float>(10, 0));
  EXPECT_STATUS(session->writeState("c", TensorView::of(wide)),
                StatusCode::InvalidArgument,
                "state 'c' (f32, at most [1, 4, 2]) cannot take a value of "
                "dims [1, 5, 2]: dim 1 is beyond the capacity");
  Tensor ints = makeTensor<int32_t>(DType::I32, {1, 1, 2}, {1, 2});
  EXPECT_STATUS(session->writeState("c", TensorView::of(ints)),
                StatusCode::InvalidArgument,
                "state 'c' (f32, at most [1, 4, 2]) cannot take a value of "
                "dtype i32");
  Tensor flat = f32({2}, {1, 2});
  EXPECT_STATUS(session->writeState("c", TensorView::of(flat)),
                StatusCode::InvalidArgument,
                "state 'c' (f32, at most [1, 4, 2]) cannot take a value of "
                "rank 1");
  EXPECT_STATUS(session->writeState("k", TensorView::of(flat)),
                StatusCode::InvalidArgument,
                "bundle '" + dir.file("m.lmopt") +
                    "' has no state 'k'; its states are 'c'");
  // Nothing changed.
  EXPECT_THAT(stateValues(*session, "c"), ElementsAre(1, 2, 3, 4, 5, 6, 7, 8));
}

TEST_F(SessionTest, SaveAndLoadStates) {
  std::unique_ptr<Session> session;
  ASSERT_TRUE(create(cacheModel(), session));
  std::vector<NamedTensor> outputs;
  ASSERT_TRUE(session->run("start", {{"x", f32({1, 3, 2}, {1, 2, 3, 4, 5, 6})}},
                           outputs));
  std::string saved = dir.file("states.npz");
  Status st = session->saveStates(saved);
  ASSERT_TRUE(st) << st.toString();
  std::vector<NamedTensor> members;
  ASSERT_TRUE(readNpz(saved, members));
  ASSERT_EQ(members.size(), 1u);
  EXPECT_EQ(members[0].name, "c");
  EXPECT_THAT(members[0].tensor.shape, ElementsAre(1, 3, 2));

  std::unique_ptr<Session> other;
  ASSERT_TRUE(Session::create(dir.file("m.lmopt"), {}, other));
  st = other->loadStates(saved);
  ASSERT_TRUE(st) << st.toString();
  EXPECT_THAT(stateValues(*other, "c"), ElementsAre(1, 2, 3, 4, 5, 6));
  ASSERT_TRUE(other->run("step", {{"t", f32({1, 1, 2}, {7, 8})}}, outputs));
  EXPECT_THAT(stateValues(*other, "c"), ElementsAre(1, 2, 3, 4, 5, 6, 7, 8));
}

TEST_F(SessionTest, BadStateFilesChangeNothing) {
  std::unique_ptr<Session> session;
  ASSERT_TRUE(create(cacheModel(), session));
  std::vector<NamedTensor> outputs;
  ASSERT_TRUE(session->run("start", {{"x", f32({1, 1, 2}, {1, 2})}}, outputs));

  std::string unknown = dir.file("unknown.npz");
  ASSERT_TRUE(writeNpz(
      unknown, {{"c", f32({1, 2, 2}, {9, 9, 9, 9})}, {"k", f32({1}, {1})}}));
  Status st = session->loadStates(unknown);
  EXPECT_EQ(st.code(), StatusCode::InvalidArgument);
  EXPECT_THAT(st.message(),
              HasSubstr("'" + unknown + "' member 'k': bundle '" +
                        dir.file("m.lmopt") +
                        "' has no state 'k'; its states are 'c'"));
  std::string wide = dir.file("wide.npz");
  ASSERT_TRUE(writeNpz(wide, {{"c", f32({1, 5, 2}, std::vector<float>(10))}}));
  EXPECT_STATUS(session->loadStates(wide), StatusCode::InvalidArgument,
                "'" + wide +
                    "': state 'c' (f32, at most [1, 4, 2]) cannot take a value "
                    "of dims [1, 5, 2]: dim 1 is beyond the capacity");
  std::string garbage = dir.file("garbage.npz");
  std::ofstream(garbage) << "not an archive";
  EXPECT_FALSE(session->loadStates(garbage));
  EXPECT_FALSE(session->loadStates(dir.file("missing.npz")));
  // The first member of `unknown` was valid, but nothing was applied.
  EXPECT_THAT(stateValues(*session, "c"), ElementsAre(1, 2));

  // A failed save leaves no file behind.
  std::string nowhere = dir.file("no-such-folder/states.npz");
  EXPECT_FALSE(session->saveStates(nowhere));
  EXPECT_FALSE(std::ifstream(nowhere).good());
}

TEST_F(SessionTest, InitialStateValues) {
  // `w` starts as the bundle's bytes and `z` as zeros; both are read as
  // dense tensors by copy steps.
  BundleBuilder b;
  uint32_t bytes = b.weight<float>("w0", DType::F32, {2, 2}, {1, 2, 3, 4});
  uint32_t w = b.state("w", DType::F32, {2, 2}, PlanState::Init::Weight,
                       b.plan.tensors[bytes].offset);
  uint32_t z = b.state("z", DType::F32, {3}, PlanState::Init::Zero);
  b.plan.tensors.clear(); // the weight tensor itself is not needed
  uint32_t wv = b.stateView("w", w, {2, 2});
  uint32_t zv = b.stateView("z", z, {3});
  uint32_t wo = b.arena("w_out", DType::F32, {2, 2});
  uint32_t zo = b.arena("z_out", DType::F32, {3});
  b.step(StepKind::Copy, "copy_w", {wv}, {wo});
  b.step(StepKind::Copy, "copy_z", {zv}, {zo});
  b.output("w", wo);
  b.output("z", zo);
  std::unique_ptr<Session> session;
  Status st = create(b, session);
  ASSERT_TRUE(st) << st.toString();
  std::vector<NamedTensor> outputs;
  ASSERT_TRUE(session->run(std::vector<NamedTensor>{}, outputs));
  EXPECT_THAT(values<float>(outputs[0].tensor), ElementsAre(1, 2, 3, 4));
  EXPECT_THAT(values<float>(outputs[1].tensor), ElementsAre(0, 0, 0));
  Tensor value = f32({2, 2}, {5, 6, 7, 8});
  ASSERT_TRUE(session->writeState("w", TensorView::of(value)));
  ASSERT_TRUE(session->run(std::vector<NamedTensor>{}, outputs));
  EXPECT_THAT(values<float>(outputs[0].tensor), ElementsAre(5, 6, 7, 8));
  ASSERT_TRUE(session->resetStates());
  ASSERT_TRUE(session->run(std::vector<NamedTensor>{}, outputs));
  EXPECT_THAT(values<float>(outputs[0].tensor), ElementsAre(1, 2, 3, 4));
}

TEST_F(SessionTest, StateViewsThatAreNotDenseAreRefused) {
  // A copy reads the first 2 of 4 rows of every batch of [2, 4, 2]: not one
  // dense block.
  BundleBuilder b;
  uint32_t s = b.state("s", DType::F32, {2, 4, 2}, PlanState::Init::Zero);
  uint32_t v = b.stateView("s", s, {2, 2, 2});
  uint32_t out = b.arena("out", DType::F32, {2, 2, 2});
  b.step(StepKind::Copy, "copy", {v}, {out});
  b.output("out", out);
  EXPECT_EQ(createError(b),
            "bundle 'B': copy step 'copy': operand 0 's' (f32 [2, 2, 2]) is a "
            "view of state 's' [2, 4, 2] that is not one dense block, which "
            "this step cannot read");
  // Its first batch alone is dense.
  b.plan.tensors[v].dims = {1, 4, 2};
  b.plan.tensors[out].dims = {1, 4, 2};
  std::unique_ptr<Session> session;
  Status st = create(b, session);
  EXPECT_TRUE(st) << st.toString();
}

TEST_F(SessionTest, AppendStepErrors) {
  BundleBuilder b;
  uint32_t s = b.state("s", DType::F32, {1, 4, 2});
  uint32_t x = b.input("x", DType::F32, {1, 2, 2});
  uint32_t v = b.stateView("s", s, {1, 3, 2});
  PlanStep &step = b.step(StepKind::Append, "append", {x}, {v});
  addInt(step, "axis", 2);
  EXPECT_EQ(createError(b),
            "bundle 'B': append step 'append': value 'x' (f32 [1, 2, 2]) does "
            "not fit the last rows of 's' (f32 [1, 3, 2]) along axis 2");
  b.plan.steps[0].attrs[0].intValue = 3;
  EXPECT_EQ(createError(b),
            "bundle 'B': append step 'append': has axis 3 for rank 3");
  b.plan.steps[0].attrs[0].intValue = 1;
  b.plan.steps[0].results = {b.arena("a", DType::F32, {1, 3, 2})};
  EXPECT_EQ(createError(b), "bundle 'B': append step 'append': writes 'a' "
                            "(f32 [1, 3, 2]), which is not a state view");
}

TEST_F(SessionTest, DevicesThisRuntimeLacksAreRefused) {
  BundleBuilder b;
  b.input("x", DType::F32, {1});
  b.plan.tensors[0].device = 0;
  b.states.clear();
  // A second device that no step uses still has to exist.
  Program program;
  program.devices = {{"cpu", ""}, {"tpu", ""}};
  program.entries = {b.plan};
  std::vector<uint8_t> bytes = serializeProgram(program);
  BundleWriter writer;
  ASSERT_TRUE(writer.addSection("plan", SectionKind::Plan, bytes));
  std::string path = dir.file("tpu.lmopt");
  ASSERT_TRUE(writer.write(path));
  // Which devices a runtime has depends on how it was built (cuda with the
  // CUDA toolkit).
  std::string known;
  for (const std::string &name : knownDevices())
    known += (known.empty() ? "'" : ", '") + name + "'";
  EXPECT_NE(known.find("'cpu'"), std::string::npos) << known;
  std::unique_ptr<Session> session;
  EXPECT_STATUS(Session::create(path, {}, session), StatusCode::Unsupported,
                "bundle '" + path +
                    "' runs on device 'tpu', which this runtime does not "
                    "have (it has " +
                    known + ")");
}

TEST_F(SessionTest, LegacyBundlesStillRun) {
  BundleBuilder b = linearReluModel();
  b.legacy = true;
  std::unique_ptr<Session> session;
  Status st = create(b, session);
  ASSERT_TRUE(st) << st.toString();
  EXPECT_EQ(session->entries()[0].name, "main");
  std::vector<NamedTensor> outputs;
  ASSERT_TRUE(session->run({{"x", f32({2, 3}, {1, 2, 3, -1, 0, 1})}}, outputs));
  EXPECT_THAT(values<float>(outputs[0].tensor),
              ElementsAre(4.5f, 4, 1, 1.5f, 0.5f, 0, 1, 0));
}

/// Attention over a key/value cache kept at its capacity equals the same
/// attention over dense key and value tensors.
TEST_F(SessionTest, AttentionReadsStateAtItsCapacity) {
  const int64_t heads = 2, dim = 4, capacity = 6, length = 5, queries = 2;
  auto attention = [&](BundleBuilder &b, uint32_t q, uint32_t k, uint32_t v) {
    uint32_t out = b.arena("out", DType::F32, {1, queries, heads * dim});
    PlanStep &step = b.step(StepKind::Attention, "attn", {q, k, v}, {out});
    addInt(step, "num_heads", heads);
    addFloat(step, "scale", 0.5);
    addInt(step, "causal", 1);
    addInt(step, "kv_heads_split", 1);
    b.output("out", out);
  };
  BundleBuilder dense;
  uint32_t q = dense.input("q", DType::F32, {1, queries, heads * dim});
  uint32_t k = dense.input("k", DType::F32, {1, heads, length, dim});
  uint32_t v = dense.input("v", DType::F32, {1, heads, length, dim});
  attention(dense, q, k, v);

  BundleBuilder cached;
  uint32_t ks = cached.state("k", DType::F32, {1, heads, capacity, dim});
  uint32_t vs = cached.state("v", DType::F32, {1, heads, capacity, dim});
  q = cached.input("q", DType::F32, {1, queries, heads * dim});
  k = cached.stateView("k", ks, {1, heads, length, dim});
  v = cached.stateView("v", vs, {1, heads, length, dim});
  attention(cached, q, k, v);
  cached.plan.stateReads = {{ks, k}, {vs, v}};

  std::vector<float> qv, kv, vv;
  for (int64_t i = 0; i < queries * heads * dim; ++i)
    qv.push_back(std::sin(0.3f * float(i)));
  for (int64_t i = 0; i < heads * length * dim; ++i) {
    kv.push_back(std::cos(0.7f * float(i)));
    vv.push_back(0.1f * float(i % 7) - 0.2f);
  }
  Tensor qt = f32({1, queries, heads * dim}, qv);
  Tensor kt = f32({1, heads, length, dim}, kv);
  Tensor vt = f32({1, heads, length, dim}, vv);

  std::unique_ptr<Session> denseSession, cachedSession;
  ASSERT_TRUE(Session::create(write(dense, "dense.lmopt"), {}, denseSession));
  Status st = Session::create(write(cached, "cached.lmopt"), {}, cachedSession);
  ASSERT_TRUE(st) << st.toString();
  std::vector<NamedTensor> want, got;
  ASSERT_TRUE(denseSession->run({{"q", qt}, {"k", kt}, {"v", vt}}, want));
  // Garbage beyond the cached length must not matter: fill the whole
  // capacity first, then give the state its real value.
  Tensor full = f32({1, heads, capacity, dim},
                    std::vector<float>(heads * capacity * dim, 1e6f));
  ASSERT_TRUE(cachedSession->writeState("k", TensorView::of(full)));
  ASSERT_TRUE(cachedSession->writeState("v", TensorView::of(full)));
  ASSERT_TRUE(cachedSession->writeState("k", TensorView::of(kt)));
  ASSERT_TRUE(cachedSession->writeState("v", TensorView::of(vt)));
  st = cachedSession->run({{"q", qt}}, got);
  ASSERT_TRUE(st) << st.toString();
  std::vector<float> a = values<float>(want[0].tensor);
  std::vector<float> g = values<float>(got[0].tensor);
  ASSERT_EQ(a.size(), g.size());
  for (size_t i = 0; i < a.size(); ++i)
    EXPECT_NEAR(a[i], g[i], 1e-6f) << i;
}

TEST_F(SessionTest, CApiEntriesAndStates) {
  std::string path = write(cacheModel());
  lmoptSession session = nullptr;
  ASSERT_EQ(lmoptSessionCreate(path.c_str(), nullptr, &session), nullptr);
  size_t count = 0;
  ASSERT_EQ(lmoptSessionEntryCount(session, &count), nullptr);
  EXPECT_EQ(count, 2u);
  const char *name = nullptr;
  ASSERT_EQ(lmoptSessionEntryName(session, 1, &name), nullptr);
  EXPECT_STREQ(name, "step");
  lmoptStatus st = lmoptSessionEntryName(session, 2, &name);
  EXPECT_STREQ(lmoptStatusGetMessage(st),
               "lmoptSessionEntryName: index 2 is out of range; the bundle "
               "has 2 entries");
  lmoptStatusDestroy(st);

  float x[4] = {1, 2, 3, 4}, t[2] = {5, 6};
  int64_t xDims[3] = {1, 2, 2}, tDims[3] = {1, 1, 2};
  lmoptTensor xIn{LMOPT_DTYPE_F32, 3, xDims, x, sizeof(x)};
  lmoptTensor tIn{LMOPT_DTYPE_F32, 3, tDims, t, sizeof(t)};
  const char *xName = "x", *tName = "t";
  size_t n = 0;
  lmoptTensor *outputs = nullptr;
  ASSERT_EQ(
      lmoptSessionRunEntry(session, "start", 1, &xName, &xIn, &n, &outputs),
      nullptr);
  EXPECT_EQ(n, 0u);
  lmoptTensorArrayDestroy(outputs);
  ASSERT_EQ(
      lmoptSessionRunEntry(session, "step", 1, &tName, &tIn, &n, &outputs),
      nullptr);
  ASSERT_EQ(n, 1u);
  EXPECT_EQ(static_cast<float *>(outputs[0].data)[1], 6);
  lmoptTensorArrayDestroy(outputs);
  st = lmoptSessionRunEntry(session, "decode", 1, &tName, &tIn, &n, &outputs);
  EXPECT_STREQ(lmoptStatusGetMessage(st),
               "lmoptSessionRunEntry: the bundle has no entry 'decode'; its "
               "entries are 'start', 'step'");
  lmoptStatusDestroy(st);

  std::string saved = dir.file("c.npz");
  ASSERT_EQ(lmoptSessionSaveStates(session, saved.c_str()), nullptr);
  ASSERT_EQ(lmoptSessionResetStates(session), nullptr);
  st = lmoptSessionRunEntry(session, "step", 1, &tName, &tIn, &n, &outputs);
  EXPECT_EQ(lmoptStatusGetCode(st), LMOPT_STATUS_INVALID_ARGUMENT);
  lmoptStatusDestroy(st);
  ASSERT_EQ(lmoptSessionLoadStates(session, saved.c_str()), nullptr);
  ASSERT_EQ(
      lmoptSessionRunEntry(session, "step", 1, &tName, &tIn, &n, &outputs),
      nullptr);
  lmoptTensorArrayDestroy(outputs);
  st = lmoptSessionLoadStates(session, nullptr);
  EXPECT_STREQ(lmoptStatusGetMessage(st),
               "lmoptSessionLoadStates: a pointer argument is null");
  lmoptStatusDestroy(st);
  lmoptSessionDestroy(session);
}

TEST_F(SessionTest, KernelsReadOnlyTheDimsOfListedStateViews) {
  // address_mod_64 reads its operand's address, never its bytes: a state
  // view that is not one dense block may be its operand when dims_only
  // lists it.
  auto model = [](const char *dimsOnly) {
    BundleBuilder b;
    uint32_t s = b.state("s", DType::F32, {1, 4, 2}, PlanState::Init::Zero);
    uint32_t v = b.stateView("s", s, {1, 2, 2});
    uint32_t out = b.arena("out", DType::I64, {1});
    PlanStep &step = b.step(StepKind::Kernel, "k", {v}, {out});
    addString(step, "entry", "address_mod_64");
    if (dimsOnly)
      addString(step, "dims_only", dimsOnly);
    b.output("out", out);
    b.kernels = readKernels();
    return b;
  };
  std::unique_ptr<Session> session;
  Status st = create(model("0"), session);
  ASSERT_TRUE(st) << st.toString();
  std::vector<NamedTensor> outputs;
  ASSERT_TRUE(session->run(std::vector<NamedTensor>{}, outputs));
  EXPECT_THAT(values<int64_t>(outputs[0].tensor), ElementsAre(0));
  EXPECT_EQ(createError(model(nullptr)),
            "bundle 'B': kernel step 'k': operand 0 's' (f32 [1, 2, 2]) is a "
            "view of state 's' [1, 4, 2] that is not one dense block, which "
            "this step cannot read");
  for (const char *bad : {"1", "0,0", "x", ""})
    EXPECT_EQ(createError(model(bad)),
              "bundle 'B': kernel step 'k': has attribute 'dims_only' = '" +
                  std::string(bad) +
                  "', which is not a list of its operand numbers");
}

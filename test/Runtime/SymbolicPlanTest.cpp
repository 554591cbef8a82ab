//===- SymbolicPlanTest.cpp - Plans with symbolic dims --------------------===//
//
// Version 1.1 of the plan encoding: dim expressions (evaluation, overflow,
// printing), the symbol tables' encoding and validation, the per-run
// evaluation of every dim with its bound and assumption checks, and sessions
// that run one bundle at several shapes. Expected values are computed in the
// test from each step's definition (numpy semantics), not by the runtime.
//
//===----------------------------------------------------------------------===//

#include "lmopt/Format/Plan.h"
#include "lmopt/Format/PlanShapes.h"
#include "lmopt/Runtime/Session.h"

#include "SessionTestUtil.h"

#include <gmock/gmock.h>

#include <cmath>
#include <limits>

using namespace lmopt::runtime;
using namespace lmopt::runtime::test;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

using Op = DimOp::Kind;

static DimExpr expr(std::vector<DimOp> ops) { return DimExpr{std::move(ops)}; }
static DimOp sym(int64_t i) { return {Op::Symbol, i}; }
static DimOp cst(int64_t v) { return {Op::Const, v}; }
static DimOp op(Op kind) { return {kind, 0}; }

/// Two symbols: a (input 0 dim 0, <= 8) and b (input 0 dim 1, <= 16).
static Plan twoSymbols() {
  Plan p;
  p.symbols = {{"x.0", 0, 0, 8}, {"x.1", 0, 1, 16}};
  return p;
}

//===----------------------------------------------------------------------===//
// Expressions
//===----------------------------------------------------------------------===//

TEST(DimExpr, EvaluatesPolynomialsAndDivisions) {
  Plan p = twoSymbols();
  int64_t out = 0;
  // a * b * 12 + 3 with a = 2, b = 5.
  DimExpr poly = expr(
      {sym(0), sym(1), op(Op::Mul), cst(12), op(Op::Mul), cst(3), op(Op::Add)});
  ASSERT_TRUE(evaluateDimExpr(p, poly, {2, 5}, out));
  EXPECT_EQ(out, 123);
  EXPECT_EQ(formatDimExpr(p, poly), "x.0 * x.1 * 12 + 3");
  // Floor division rounds towards -inf, as Python's //.
  DimExpr div = expr({cst(3), sym(1), op(Op::Sub), cst(2), op(Op::FloorDiv)});
  ASSERT_TRUE(evaluateDimExpr(p, div, {0, 6}, out));
  EXPECT_EQ(out, -2); // (3 - 6) // 2
  EXPECT_EQ(formatDimExpr(p, div), "(3 - x.1) floordiv 2");
  DimExpr mins = expr({cst(128), sym(1), op(Op::Min), sym(0), op(Op::Max)});
  ASSERT_TRUE(evaluateDimExpr(p, mins, {4, 200}, out));
  EXPECT_EQ(out, 128);
  ASSERT_TRUE(evaluateDimExpr(p, mins, {9, 7}, out));
  EXPECT_EQ(out, 9);
  EXPECT_EQ(formatDimExpr(p, mins), "max(min(128, x.1), x.0)");
}

TEST(DimExpr, RefusesOverflowDivisionByZeroAndMalformedPrograms) {
  Plan p = twoSymbols();
  int64_t out = 0;
  int64_t big = std::numeric_limits<int64_t>::max() / 2 + 1;
  EXPECT_STATUS(
      evaluateDimExpr(p, expr({sym(0), sym(1), op(Op::Mul)}), {big, 2}, out),
      StatusCode::InvalidArgument,
      "dim expression 'x.0 * x.1' overflows 64 bits with operands " +
          std::to_string(big) + " and 2");
  EXPECT_STATUS(
      evaluateDimExpr(p, expr({cst(5), sym(0), op(Op::FloorDiv)}), {0, 0}, out),
      StatusCode::InvalidArgument,
      "dim expression '5 floordiv x.0' divides 5 by zero");
  EXPECT_STATUS(evaluateDimExpr(p, expr({cst(5), op(Op::Add)}), {0, 0}, out),
                StatusCode::InvalidArgument,
                "dim expression '<malformed>' is malformed: an operation "
                "lacks its operands");
  EXPECT_STATUS(evaluateDimExpr(p, expr({cst(5), cst(6)}), {0, 0}, out),
                StatusCode::InvalidArgument,
                "dim expression '<malformed>' is malformed: it leaves 2 "
                "values instead of one");
  EXPECT_STATUS(evaluateDimExpr(p, expr({sym(2)}), {0, 0}, out),
                StatusCode::InvalidArgument,
                "dim expression '?2' refers to symbol 2 of 2");
}

//===----------------------------------------------------------------------===//
// Encoding
//===----------------------------------------------------------------------===//

/// x [a, b] (a <= 4, b <= 8) and t [a, b] (t.0 == x.0 assumed), y = [a * b]
/// in the arena.
static Plan symbolicPlan() {
  Plan p;
  p.symbols = {{"x.0", 0, 0, 4}, {"x.1", 0, 1, 8}, {"t.0", 1, 0, 4}};
  uint32_t a = p.addExpr(expr({sym(0)}));
  uint32_t b = p.addExpr(expr({sym(1)}));
  uint32_t t0 = p.addExpr(expr({sym(2)}));
  uint32_t ab = p.addExpr(expr({sym(0), sym(1), op(Op::Mul)}));
  p.assumptions = {{PlanAssumption::Kind::Equal, t0, a}};
  PlanTensor x{"x", DType::F32, {4, 8}, TensorStorage::Input, 0};
  x.dimExprs = {int32_t(a), int32_t(b)};
  PlanTensor t{"t", DType::F32, {4, 8}, TensorStorage::Input, 1};
  t.dimExprs = {int32_t(t0), int32_t(b)};
  PlanTensor y{"y", DType::F32, {32}, TensorStorage::Arena, 0};
  y.dimExprs = {int32_t(ab)};
  uint32_t xi = p.addTensor(x), ti = p.addTensor(t), yi = p.addTensor(y);
  p.inputs = {{"x", xi}, {"t", ti}};
  p.outputs = {{"y", yi}};
  p.arenaSizes = {128};
  PlanStep &s = p.addStep(StepKind::Copy, "c");
  s.operands = {xi};
  s.results = {yi};
  return p;
}

/// Parses a 1.1 plan: a program whose one entry is `out`.
static Status parse(const std::vector<uint8_t> &bytes, Plan &out) {
  Program program;
  Status st = parsePlan(bytes.data(), bytes.size(), 0, "m.lmopt", program);
  out = st ? program.entries.front() : Plan();
  return st;
}

TEST(SymbolicPlan, RoundTripsAsVersion1_1) {
  Plan plan = symbolicPlan();
  std::vector<uint8_t> bytes = serializeLegacyPlan(plan);
  // Version 1.1 after the magic.
  EXPECT_THAT(std::vector<uint8_t>(bytes.begin() + 8, bytes.begin() + 16),
              ElementsAre(1, 0, 0, 0, 1, 0, 0, 0));
  Plan back;
  Status st = parse(bytes, back);
  ASSERT_TRUE(st) << st.toString();
  ASSERT_EQ(back.symbols.size(), 3u);
  EXPECT_EQ(back.symbols[1].name, "x.1");
  EXPECT_EQ(back.symbols[1].bound, 8);
  ASSERT_EQ(back.exprs.size(), 4u);
  ASSERT_EQ(back.assumptions.size(), 1u);
  // Dims hold the values at the bounds; dimExprs say which are symbolic.
  EXPECT_THAT(back.tensors[2].dims, ElementsAre(32));
  EXPECT_THAT(back.tensors[2].dimExprs, ElementsAre(3));
  EXPECT_THAT(back.tensors[1].dimExprs, ElementsAre(2, 1));
  EXPECT_EQ(serializeLegacyPlan(back), bytes);
}

TEST(SymbolicPlan, StaticPlansStayVersion1_0) {
  Plan plan;
  plan.addTensor({"x", DType::F32, {2}, TensorStorage::Input, 0});
  plan.inputs = {{"x", 0}};
  std::vector<uint8_t> bytes = serializeLegacyPlan(plan);
  EXPECT_THAT(std::vector<uint8_t>(bytes.begin() + 8, bytes.begin() + 16),
              ElementsAre(1, 0, 0, 0, 0, 0, 0, 0));
}

TEST(SymbolicPlan, AddExprSharesEqualExpressions) {
  Plan p;
  EXPECT_EQ(p.addExpr(expr({sym(0)})), 0u);
  EXPECT_EQ(p.addExpr(expr({sym(1)})), 1u);
  EXPECT_EQ(p.addExpr(expr({sym(0)})), 0u);
  EXPECT_EQ(p.exprs.size(), 2u);
}

TEST(SymbolicPlan, EveryTruncationIsRefused) {
  std::vector<uint8_t> bytes = serializeLegacyPlan(symbolicPlan());
  for (size_t size = 0; size < bytes.size(); ++size) {
    std::vector<uint8_t> cut(bytes.begin(), bytes.begin() + size);
    Plan out;
    EXPECT_FALSE(parse(cut, out)) << "accepted " << size << " bytes";
  }
}

TEST(SymbolicPlan, ValidationErrors) {
  auto error = [](Plan plan) {
    Plan out;
    Status st = parse(serializeLegacyPlan(plan), out);
    EXPECT_FALSE(st);
    return st.message();
  };
  Plan p = symbolicPlan();
  p.symbols[1].bound = -1;
  EXPECT_THAT(error(p), HasSubstr("symbol 'x.1' has bound -1"));
  p = symbolicPlan();
  p.symbols[2].index = 0;
  p.symbols[2].dim = 1;
  EXPECT_THAT(error(p),
              HasSubstr("symbols 'x.1' and 't.0' both name dim 1 of input 0"));
  p = symbolicPlan();
  p.exprs[3].ops.push_back(op(Op::Add));
  EXPECT_THAT(error(p), HasSubstr("expression 3 at the symbols' bounds: dim "
                                  "expression '<malformed>' is malformed"));
  p = symbolicPlan();
  p.exprs[3] = expr({cst(1), sym(1), op(Op::Sub)});
  EXPECT_THAT(error(p),
              HasSubstr("expression 3 '1 - x.1' is -7 at the symbols' bounds"));
  p = symbolicPlan();
  p.exprs[3].ops[0].kind = DimOp::Kind(9);
  EXPECT_THAT(error(p), HasSubstr("expression 3 has operation kind 9"));
  p = symbolicPlan();
  p.tensors[2].dimExprs = {7};
  EXPECT_THAT(error(p), HasSubstr("tensor 2 'y' has dim 0 = -8, which names "
                                  "expression 7 of 4"));
  p = symbolicPlan();
  p.assumptions[0].rhs = 4;
  EXPECT_THAT(error(p),
              HasSubstr("assumption 0 refers to expressions 2 and 4 of 4"));
  p = symbolicPlan();
  p.symbols[0].index = 2;
  EXPECT_THAT(error(p), HasSubstr("symbol 'x.0' names input 2 of 2"));
  p = symbolicPlan();
  p.tensors[0].dimExprs = {3, 1}; // x.0 is not x's dim 0 any more
  EXPECT_THAT(error(p), HasSubstr("symbol 'x.0' names dim 0 of input 'x', "
                                  "which is not that symbol"));
  p = symbolicPlan();
  p.tensors[2].dims = {33}; // ignored: symbolic dims are written as exprs
  p.arenaSizes = {64};      // but 32 floats at the bounds do not fit
  EXPECT_THAT(error(p), HasSubstr("needs bytes [0, 0 + 128) beyond the "
                                  "64-byte arena"));
}

//===----------------------------------------------------------------------===//
// Per-run evaluation
//===----------------------------------------------------------------------===//

static Plan parsed(const Plan &plan) {
  Plan out;
  Status st = parse(serializeLegacyPlan(plan), out);
  EXPECT_TRUE(st) << st.toString();
  return out;
}

TEST(PlanShapes, EvaluatesEveryTensor) {
  Plan p = parsed(symbolicPlan());
  PlanShapes shapes;
  Status st = evaluatePlanShapes(p, {{3, 5}, {3, 5}}, {}, {}, shapes);
  ASSERT_TRUE(st) << st.toString();
  EXPECT_THAT(shapes.symbols, ElementsAre(3, 5, 3));
  EXPECT_THAT(shapes.dims[0], ElementsAre(3, 5));
  EXPECT_THAT(shapes.dims[2], ElementsAre(15));
  ASSERT_TRUE(evaluatePlanShapes(p, {{4, 8}, {4, 8}}, {}, {}, shapes));
  EXPECT_THAT(shapes.dims[2], ElementsAre(32));
  ASSERT_TRUE(evaluatePlanShapes(p, {{0, 8}, {0, 8}}, {}, {}, shapes));
  EXPECT_THAT(shapes.dims[2], ElementsAre(0));
}

TEST(PlanShapes, BoundsDimsAndAssumptionsAreChecked) {
  Plan p = parsed(symbolicPlan());
  PlanShapes shapes;
  EXPECT_STATUS(evaluatePlanShapes(p, {{3, 9}, {3, 9}}, {}, {}, shapes),
                StatusCode::InvalidArgument,
                "input 'x' dim 1 is 9, beyond its bound 8 (x.1 <= 8; "
                "recompile with a larger --max-shape)");
  EXPECT_STATUS(evaluatePlanShapes(p, {{3, 5}, {3, 6}}, {}, {}, shapes),
                StatusCode::InvalidArgument,
                "input 't' dim 1 is 6; the model needs x.1 = 5");
  EXPECT_STATUS(evaluatePlanShapes(p, {{3, 5}, {2, 5}}, {}, {}, shapes),
                StatusCode::InvalidArgument,
                "the inputs break an assumption the model was compiled with: "
                "t.0 == x.0, but 2 != 3 (x.0 = 3, x.1 = 5, t.0 = 2)");
}

TEST(PlanShapes, ATensorBeyondItsReservedBytesIsRefused) {
  // y = 10 - x.1 is largest at x.1 = 0, not at the bound: the plan reserved
  // too little and the run must not write past it.
  Plan p = symbolicPlan();
  p.exprs[3] = expr({cst(10), sym(1), op(Op::Sub)});
  p = parsed(p);
  EXPECT_THAT(p.tensors[2].dims, ElementsAre(2));
  PlanShapes shapes;
  ASSERT_TRUE(evaluatePlanShapes(p, {{1, 8}, {1, 8}}, {}, {}, shapes));
  EXPECT_STATUS(evaluatePlanShapes(p, {{1, 7}, {1, 7}}, {}, {}, shapes),
                StatusCode::InvalidFormat,
                "tensor 'y' would have dims [3] with x.0 = 1, x.1 = 7, t.0 = "
                "1, more elements than the [2] the plan reserved for it");
}

//===----------------------------------------------------------------------===//
// Sessions
//===----------------------------------------------------------------------===//

/// Makes tensor `id` of `b` symbolic: `exprs[d]` for dim d (-1: static).
static void setSymbolic(BundleBuilder &b, uint32_t id,
                        std::vector<int32_t> exprs) {
  b.plan.tensors[id].dimExprs = std::move(exprs);
}

/// x [n, 3] (n <= 4) -> linear (w [3, 4], bias, relu) -> y [n, 4]
///                   -> gather rows of y by ids [m] (m <= 3) -> g [m, 4]
static BundleBuilder symbolicLinearModel() {
  BundleBuilder b;
  b.plan.symbols = {{"x.0", 0, 0, 4}, {"ids.0", 1, 0, 3}};
  int32_t n = int32_t(b.plan.addExpr(expr({sym(0)})));
  int32_t m = int32_t(b.plan.addExpr(expr({sym(1)})));
  uint32_t x = b.input("x", DType::F32, {4, 3});
  uint32_t ids = b.input("ids", DType::I64, {3});
  uint32_t w = b.weight<float>("w", DType::F32, {3, 4},
                               {1, 0, 1, 0.5f, 0, 1, -1, 0, 1, 1, 0, 0});
  uint32_t bias = b.weight<float>("b", DType::F32, {4}, {0.5f, 0, 0, 0});
  uint32_t y = b.arena("y", DType::F32, {4, 4});
  uint32_t g = b.arena("g", DType::F32, {3, 4});
  setSymbolic(b, x, {n, -1});
  setSymbolic(b, ids, {m});
  setSymbolic(b, y, {n, -1});
  setSymbolic(b, g, {m, -1});
  PlanStep &s = b.step(StepKind::Linear, "dense", {x, w, bias}, {y});
  addInt(s, "activation", 1);
  addInt(s, "has_bias", 1);
  addInt(b.step(StepKind::Gather, "rows", {y, ids}, {g}), "axis", 0);
  b.output("y", y);
  b.output("g", g);
  return b;
}

/// relu(x W + b) by its definition, W as in symbolicLinearModel.
static std::vector<float> linearReference(const std::vector<float> &x) {
  const float w[3][4] = {{1, 0, 1, 0.5f}, {0, 1, -1, 0}, {1, 1, 0, 0}};
  const float bias[4] = {0.5f, 0, 0, 0};
  std::vector<float> y;
  for (size_t r = 0; r < x.size() / 3; ++r)
    for (int j = 0; j < 4; ++j) {
      float sum = bias[j];
      for (int k = 0; k < 3; ++k)
        sum += x[r * 3 + k] * w[k][j];
      y.push_back(std::max(sum, 0.0f));
    }
  return y;
}

TEST_F(SessionTest, OneSymbolicBundleRunsAtSeveralShapes) {
  std::unique_ptr<Session> session;
  Status st = create(symbolicLinearModel(), session);
  ASSERT_TRUE(st) << st.toString();
  EXPECT_THAT(session->inputs()[0].dims, ElementsAre(-1, 3));
  EXPECT_THAT(session->inputs()[0].maxDims, ElementsAre(4, 3));
  EXPECT_THAT(session->outputs()[1].dims, ElementsAre(-1, 4));

  // Shapes in an order that grows, shrinks and repeats.
  for (int64_t n : {2, 4, 1, 1, 3}) {
    std::vector<float> x;
    for (int64_t i = 0; i < n * 3; ++i)
      x.push_back(float((i * 7) % 5) - 2);
    std::vector<int64_t> ids = {n - 1, 0};
    std::vector<NamedTensor> outputs;
    st = session->run(
        {{"x", f32({n, 3}, x)}, {"ids", makeTensor(DType::I64, {2}, ids)}},
        outputs);
    ASSERT_TRUE(st) << "n = " << n << ": " << st.toString();
    std::vector<float> y = linearReference(x);
    EXPECT_THAT(outputs[0].tensor.shape, ElementsAre(n, 4));
    EXPECT_EQ(values<float>(outputs[0].tensor), y) << "n = " << n;
    std::vector<float> g(y.begin() + (n - 1) * 4, y.begin() + n * 4);
    g.insert(g.end(), y.begin(), y.begin() + 4);
    EXPECT_THAT(outputs[1].tensor.shape, ElementsAre(2, 4));
    EXPECT_EQ(values<float>(outputs[1].tensor), g) << "n = " << n;
  }
}

TEST_F(SessionTest, SymbolicRunErrorsNameInputDimValueAndBound) {
  std::unique_ptr<Session> session;
  ASSERT_TRUE(create(symbolicLinearModel(), session));
  std::vector<NamedTensor> outputs;
  std::vector<float> x(15, 1.0f);
  EXPECT_STATUS(
      session->run({{"x", f32({5, 3}, x)},
                    {"ids", makeTensor<int64_t>(DType::I64, {1}, {0})}},
                   outputs),
      StatusCode::InvalidArgument,
      "input 'x' dim 0 is 5, beyond its bound 4 (x.0 <= 4; "
      "recompile with a larger --max-shape)");
  EXPECT_STATUS(
      session->run({{"x", f32({1, 2}, {1, 2})},
                    {"ids", makeTensor<int64_t>(DType::I64, {1}, {0})}},
                   outputs),
      StatusCode::InvalidArgument, "input 'x' dim 1 is 2; the model needs 3");
  EXPECT_STATUS(
      session->run({{"x", f32({1, 3}, {1, 2, 3})},
                    {"ids", makeTensor<int64_t>(DType::I64, {1, 1}, {0})}},
                   outputs),
      StatusCode::InvalidArgument,
      "input 'ids' has shape [1, 1]; the model expects i64 [<=3]");
  // An index beyond the run's rows (not the bound's) is refused.
  Status st = session->run({{"x", f32({1, 3}, {1, 2, 3})},
                            {"ids", makeTensor<int64_t>(DType::I64, {1}, {1})}},
                           outputs);
  EXPECT_FALSE(st);
  EXPECT_THAT(st.message(), HasSubstr("index 1"));
  // The session still runs after the errors.
  st = session->run({{"x", f32({1, 3}, {1, 2, 3})},
                     {"ids", makeTensor<int64_t>(DType::I64, {1}, {0})}},
                    outputs);
  ASSERT_TRUE(st) << st.toString();
  EXPECT_EQ(values<float>(outputs[0].tensor), linearReference({1, 2, 3}));
}

/// Attention over q, k, v [B, S, 4] (B <= 2, S <= 5), two heads, by its
/// definition: softmax(q k^T * scale) v per batch and head.
static std::vector<float> attentionReference(const std::vector<float> &q,
                                             const std::vector<float> &k,
                                             const std::vector<float> &v,
                                             int64_t batch, int64_t seq,
                                             float scale) {
  std::vector<float> out(q.size());
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t h = 0; h < 2; ++h)
      for (int64_t i = 0; i < seq; ++i) {
        std::vector<double> p(seq);
        double top = -INFINITY, sum = 0;
        for (int64_t j = 0; j < seq; ++j) {
          double dot = 0;
          for (int64_t d = 0; d < 2; ++d)
            dot += q[(b * seq + i) * 4 + h * 2 + d] *
                   k[(b * seq + j) * 4 + h * 2 + d];
          p[j] = dot * scale;
          top = std::max(top, p[j]);
        }
        for (double &e : p)
          sum += (e = std::exp(e - top));
        for (int64_t d = 0; d < 2; ++d) {
          double acc = 0;
          for (int64_t j = 0; j < seq; ++j)
            acc += p[j] / sum * v[(b * seq + j) * 4 + h * 2 + d];
          out[(b * seq + i) * 4 + h * 2 + d] = float(acc);
        }
      }
  return out;
}

TEST_F(SessionTest, SymbolicAttentionAndKernel) {
  BundleBuilder b;
  b.plan.symbols = {{"q.0", 0, 0, 2}, {"q.1", 0, 1, 5}};
  int32_t batch = int32_t(b.plan.addExpr(expr({sym(0)})));
  int32_t seq = int32_t(b.plan.addExpr(expr({sym(1)})));
  int32_t rows = int32_t(
      b.plan.addExpr(expr({sym(0), sym(1), op(Op::Mul), cst(2), op(Op::Mul)})));
  uint32_t q = b.input("q", DType::F32, {2, 5, 4});
  uint32_t k = b.input("k", DType::F32, {2, 5, 4});
  uint32_t v = b.input("v", DType::F32, {2, 5, 4});
  uint32_t out = b.arena("out", DType::F32, {2, 5, 4});
  uint32_t view = b.arenaAt("view", DType::F32, {20, 2}, 0);
  uint32_t affine = b.arena("affine", DType::F32, {20, 2});
  for (uint32_t id : {q, k, v, out})
    setSymbolic(b, id, {batch, seq, -1});
  setSymbolic(b, view, {rows, -1});
  setSymbolic(b, affine, {rows, -1});
  PlanStep &s = b.step(StepKind::Attention, "attn", {q, k, v}, {out});
  addInt(s, "num_heads", 2);
  addFloat(s, "scale", 0.5);
  // The attention's output as [B * S * 2, 2] through a copy, then a kernel
  // that reads the sizes of its symbolic dims.
  b.step(StepKind::Copy, "flatten", {out}, {view});
  addString(b.step(StepKind::Kernel, "affine", {view}, {affine}), "entry",
            "affine_rows_dyn");
  b.output("out", out);
  b.output("affine", affine);
  b.kernels = readKernels();
  // The copy's result shares out's bytes in this hand-made plan; place it
  // after everything instead.
  b.plan.tensors[view].offset = 2 * 256;
  b.plan.tensors[affine].offset = 3 * 256;
  b.plan.arenaSizes = {4 * 256};

  std::unique_ptr<Session> session;
  Status st = create(b, session);
  ASSERT_TRUE(st) << st.toString();
  for (auto [batchSize, seqLen] :
       {std::pair<int64_t, int64_t>{1, 3}, {2, 5}, {2, 1}}) {
    int64_t count = batchSize * seqLen * 4;
    std::vector<float> qv, kv, vv;
    for (int64_t i = 0; i < count; ++i) {
      qv.push_back(std::sin(float(i)));
      kv.push_back(std::cos(float(i) * 0.7f));
      vv.push_back(float(i % 7) - 3);
    }
    std::vector<NamedTensor> outputs;
    st = session->run({{"q", f32({batchSize, seqLen, 4}, qv)},
                       {"k", f32({batchSize, seqLen, 4}, kv)},
                       {"v", f32({batchSize, seqLen, 4}, vv)}},
                      outputs);
    ASSERT_TRUE(st) << st.toString();
    std::vector<float> want =
        attentionReference(qv, kv, vv, batchSize, seqLen, 0.5f);
    EXPECT_THAT(outputs[0].tensor.shape, ElementsAre(batchSize, seqLen, 4));
    std::vector<float> got = values<float>(outputs[0].tensor);
    ASSERT_EQ(got.size(), want.size());
    for (size_t i = 0; i < got.size(); ++i)
      EXPECT_NEAR(got[i], want[i], 1e-5) << "at " << i;
    EXPECT_THAT(outputs[1].tensor.shape,
                ElementsAre(batchSize * seqLen * 2, 2));
    std::vector<float> affineGot = values<float>(outputs[1].tensor);
    ASSERT_EQ(affineGot.size(), got.size());
    for (size_t i = 0; i < got.size(); ++i)
      EXPECT_FLOAT_EQ(affineGot[i], got[i] * 3 + 1) << "at " << i;
  }
}

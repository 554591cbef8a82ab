//===- ProgramTest.cpp - Plan encoding 2.0: devices, states, entries -----===//
//
// serializeProgram/parsePlan round trips, the byte layout of a small
// program, every truncation and single-byte corruption, and every check
// parsePlan makes of what 2.0 adds: devices, states and their views, state
// reads and writes, state symbols, several entries, step devices and the
// append step. Each check is triggered by a program serialized with one bad
// field, since the serializer writes whatever it is given.
//
//===----------------------------------------------------------------------===//

#include "lmopt/Format/Plan.h"
#include "lmopt/Format/PlanShapes.h"

#include "TestUtil.h"

#include <gmock/gmock.h>

using namespace lmopt::runtime;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

static constexpr uint64_t kWeightsSize = 256;

/// A key/value cache in the manner of a decoder: a `prefill` entry that
/// writes the state with a symbolic length, and a `decode` entry on two
/// devices that reads it (its length a state symbol), appends one row and
/// writes it back.
static Program sampleProgram() {
  Program program;
  program.devices = {{"cpu", "kernels"}, {"gpu", "kernels.gpu"}};
  PlanState cache;
  cache.name = "cache";
  cache.dtype = DType::F32;
  cache.dims = {2, 8, 4};
  program.states.push_back(cache);
  PlanState scale;
  scale.name = "scale";
  scale.dtype = DType::F32;
  scale.dims = {4};
  scale.device = 1;
  scale.init = PlanState::Init::Weight;
  scale.offset = 64;
  program.states.push_back(scale);
  PlanState steps;
  steps.name = "steps";
  steps.dtype = DType::I64;
  steps.dims = {1};
  steps.init = PlanState::Init::Zero;
  program.states.push_back(steps);

  Plan prefill;
  prefill.name = "prefill";
  prefill.arenaSizes = {0};
  prefill.symbols = {{"x.1", 0, 1, 8}};
  uint32_t s = prefill.addExpr({{{DimOp::Kind::Symbol, 0}}});
  PlanTensor x{"x", DType::F32, {2, 8, 4}, TensorStorage::Input, 0};
  x.dimExprs = {-1, int32_t(s), -1};
  PlanTensor view{"cache", DType::F32, {2, 8, 4}, TensorStorage::State, 0};
  view.dimExprs = {-1, int32_t(s), -1};
  uint32_t xi = prefill.addTensor(x), vi = prefill.addTensor(view);
  prefill.inputs = {{"x", xi}};
  prefill.stateWrites = {{0, vi}};
  PlanStep &append = prefill.addStep(StepKind::Append, "write");
  append.operands = {xi};
  append.results = {vi};
  append.attrs.push_back({"axis", PlanAttr::Kind::Int, 1, 0, ""});
  program.entries.push_back(prefill);

  Plan decode;
  decode.name = "decode";
  decode.arenaSizes = {64, 128};
  decode.symbols = {{"cache.1", 0, 1, 7, PlanSymbol::Source::State}};
  uint32_t p = decode.addExpr({{{DimOp::Kind::Symbol, 0}}});
  uint32_t p1 = decode.addExpr({{{DimOp::Kind::Symbol, 0},
                                 {DimOp::Kind::Const, 1},
                                 {DimOp::Kind::Add, 0}}});
  PlanTensor past{"past", DType::F32, {2, 7, 4}, TensorStorage::State, 0};
  past.dimExprs = {-1, int32_t(p), -1};
  PlanTensor present{"present", DType::F32, {2, 8, 4}, TensorStorage::State, 0};
  present.dimExprs = {-1, int32_t(p1), -1};
  uint32_t ti =
      decode.addTensor({"t", DType::F32, {2, 1, 4}, TensorStorage::Input, 0});
  uint32_t pi = decode.addTensor(past), ni = decode.addTensor(present);
  uint32_t host =
      decode.addTensor({"h", DType::F32, {2, 1, 4}, TensorStorage::Arena, 0});
  PlanTensor onGpu{"g", DType::F32, {2, 1, 4}, TensorStorage::Arena, 64};
  onGpu.device = 1;
  uint32_t gi = decode.addTensor(onGpu);
  PlanTensor w{"w", DType::F32, {4}, TensorStorage::Weight, 0};
  w.device = 1;
  uint32_t wi = decode.addTensor(w);
  PlanTensor sc{"scale", DType::F32, {4}, TensorStorage::State, 1};
  sc.device = 1;
  uint32_t si = decode.addTensor(sc);
  decode.inputs = {{"t", ti}};
  decode.outputs = {{"h", host}};
  decode.stateReads = {{0, pi}};
  decode.stateWrites = {{0, ni}};
  PlanStep &up = decode.addStep(StepKind::Copy, "upload");
  up.operands = {ti};
  up.results = {gi};
  up.device = 1;
  PlanStep &k = decode.addStep(StepKind::Kernel, "scale");
  k.device = 1;
  k.operands = {gi, wi, si};
  k.results = {gi};
  k.attrs.push_back({"entry", PlanAttr::Kind::String, 0, 0, "k0"});
  PlanStep &down = decode.addStep(StepKind::Copy, "download");
  down.operands = {gi};
  down.results = {host};
  PlanStep &add = decode.addStep(StepKind::Append, "append");
  add.operands = {host};
  add.results = {ni};
  add.attrs.push_back({"axis", PlanAttr::Kind::Int, 1, 0, ""});
  program.entries.push_back(decode);
  return program;
}

static Status parse(const std::vector<uint8_t> &bytes, Program &out,
                    uint64_t weightsSize = kWeightsSize) {
  return parsePlan(bytes.data(), bytes.size(), weightsSize, "m.lmopt", out);
}

/// Serializes `program`, parses it and returns the failure's message.
static std::string parseError(const Program &program) {
  Program out;
  Status st = parse(serializeProgram(program), out);
  EXPECT_FALSE(st);
  EXPECT_EQ(st.code(), StatusCode::InvalidFormat) << st.toString();
  EXPECT_TRUE(out.entries.empty() && out.states.empty());
  return st.message();
}

TEST(Program, RoundTrip) {
  Program program = sampleProgram();
  std::vector<uint8_t> bytes = serializeProgram(program);
  // Version 2.0 after the magic.
  EXPECT_THAT(std::vector<uint8_t>(bytes.begin() + 8, bytes.begin() + 16),
              ElementsAre(2, 0, 0, 0, 0, 0, 0, 0));
  Program parsed;
  Status st = parse(bytes, parsed);
  ASSERT_TRUE(st) << st.toString();
  EXPECT_EQ(serializeProgram(parsed), bytes);
  ASSERT_EQ(parsed.devices.size(), 2u);
  EXPECT_EQ(parsed.devices[1].name, "gpu");
  EXPECT_EQ(parsed.devices[1].kernels, "kernels.gpu");
  ASSERT_EQ(parsed.states.size(), 3u);
  EXPECT_EQ(parsed.states[1].init, PlanState::Init::Weight);
  EXPECT_EQ(parsed.states[1].device, 1u);
  EXPECT_EQ(parsed.states[1].byteSize(), 16u);
  EXPECT_EQ(parsed.findState("steps"), 2);
  EXPECT_EQ(parsed.findState("nope"), -1);
  ASSERT_EQ(parsed.entries.size(), 2u);
  const Plan *decode = parsed.findEntry("decode");
  ASSERT_TRUE(decode);
  EXPECT_EQ(parsed.findEntry("main"), nullptr);
  EXPECT_EQ(decode->arenaSize(1), 128u);
  EXPECT_EQ(decode->arenaSize(5), 0u);
  EXPECT_EQ(decode->symbols[0].source, PlanSymbol::Source::State);
  EXPECT_EQ(decode->tensors[2].storage, TensorStorage::State);
  // A state view's dims at the bounds: 7 + 1.
  EXPECT_EQ(decode->tensors[2].dims, (std::vector<int64_t>{2, 8, 4}));
  EXPECT_EQ(decode->steps[0].device, 1u);
  EXPECT_EQ(decode->steps[3].kind, StepKind::Append);
  ASSERT_EQ(decode->stateReads.size(), 1u);
  EXPECT_EQ(decode->stateReads[0].tensor, 1u);
}

TEST(Program, EncodingLayout) {
  // The byte layout docs/bundle-format.md describes, field by field.
  Program program;
  PlanState state;
  state.name = "s";
  state.dtype = DType::I32;
  state.dims = {3};
  state.init = PlanState::Init::Zero;
  program.states.push_back(state);
  Plan plan;
  plan.name = "e";
  plan.arenaSizes = {0x40};
  plan.addTensor({"t", DType::I32, {3}, TensorStorage::State, 0});
  plan.stateWrites = {{0, 0}};
  PlanStep &s = plan.addStep(StepKind::Copy, "c");
  s.operands = {0};
  s.results = {0};
  program.entries.push_back(plan);
  // clang-format off
  std::vector<uint8_t> expected = {
      'L', 'M', 'O', 'P', 'T', 'P', 'L', 'N',  // magic
      2, 0, 0, 0, 0, 0, 0, 0,                  // version 2.0
      1, 0, 0, 0,                              // device count
      3, 0, 0, 0, 'c', 'p', 'u', 0, 0, 0, 0,   // 'cpu', no kernels section
      1, 0, 0, 0,                              // state count
      1, 0, 0, 0, 's',                         // name
      9, 0, 0, 0,                              // dtype i32
      1, 0, 0, 0, 3, 0, 0, 0, 0, 0, 0, 0,      // rank, dims
      0, 0, 0, 0,                              // device 0
      2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,      // init zero, offset 0
      1, 0, 0, 0,                              // entry count
      1, 0, 0, 0, 'e',                         // entry name
      1, 0, 0, 0, 0x40, 0, 0, 0, 0, 0, 0, 0,   // arenas: device 0, 64 bytes
      0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,      // no symbols, exprs, assumptions
      1, 0, 0, 0,                              // tensor count
      1, 0, 0, 0, 't',                         // name
      9, 0, 0, 0,                              // dtype i32
      1, 0, 0, 0, 3, 0, 0, 0, 0, 0, 0, 0,      // rank, dims
      4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,      // state, number 0
      0, 0, 0, 0,                              // device 0
      0, 0, 0, 0, 0, 0, 0, 0,                  // no inputs, no outputs
      0, 0, 0, 0,                              // no state reads
      1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,      // state writes: state 0 <- tensor 0
      1, 0, 0, 0,                              // step count
      5, 0, 0, 0, 1, 0, 0, 0, 'c',             // copy step 'c'
      0, 0, 0, 0,                              // device 0
      1, 0, 0, 0, 0, 0, 0, 0,                  // operands: tensor 0
      1, 0, 0, 0, 0, 0, 0, 0,                  // results: tensor 0
      0, 0, 0, 0,                              // no attributes
  };
  // clang-format on
  EXPECT_EQ(serializeProgram(program), expected);
  Program parsed;
  ASSERT_TRUE(parse(expected, parsed));
  EXPECT_EQ(parsed.entries[0].name, "e");
}

TEST(Program, EveryTruncationFails) {
  std::vector<uint8_t> bytes = serializeProgram(sampleProgram());
  for (size_t length = 0; length < bytes.size(); ++length) {
    std::vector<uint8_t> cut(bytes.begin(), bytes.begin() + length);
    Program out;
    Status st = parse(cut, out);
    ASSERT_FALSE(st) << "length " << length;
    EXPECT_EQ(st.code(), StatusCode::InvalidFormat) << st.toString();
    EXPECT_THAT(st.message(), HasSubstr("plan section of 'm.lmopt'"));
    EXPECT_TRUE(out.entries.empty());
  }
}

TEST(Program, EverySingleByteCorruptionIsHandled) {
  // Parsing either fails cleanly or yields a valid program; nothing reads
  // outside the buffer (ASan builds check that).
  std::vector<uint8_t> bytes = serializeProgram(sampleProgram());
  for (size_t i = 0; i < bytes.size(); ++i)
    for (int delta : {1, 0x80, 0xff}) {
      std::vector<uint8_t> corrupt = bytes;
      corrupt[i] = uint8_t(corrupt[i] + delta);
      Program out;
      Status st = parse(corrupt, out);
      Program again;
      if (st)
        EXPECT_TRUE(parse(serializeProgram(out), again)) << "byte " << i;
      else
        EXPECT_TRUE(out.entries.empty()) << "byte " << i;
    }
}

TEST(Program, DeviceErrors) {
  Program p = sampleProgram();
  p.devices.clear();
  EXPECT_THAT(parseError(p), HasSubstr("the program has no devices"));
  p = sampleProgram();
  p.devices[1].name = "cpu";
  EXPECT_THAT(parseError(p), HasSubstr("device 1 'cpu': device names must be "
                                       "distinct and not empty"));
  p = sampleProgram();
  p.devices[1].name = "";
  EXPECT_THAT(parseError(p), HasSubstr("device 1 '': device names must be "
                                       "distinct and not empty"));
  p = sampleProgram();
  std::swap(p.devices[0], p.devices[1]);
  EXPECT_THAT(parseError(p),
              HasSubstr("device 0 is 'gpu'; it must be the host 'cpu'"));
  p = sampleProgram();
  p.entries[1].tensors[3].device = 2;
  EXPECT_THAT(parseError(p), HasSubstr("tensor 3 'h' is on device 2 of 2"));
  p = sampleProgram();
  p.entries[1].tensors[0].device = 1;
  EXPECT_THAT(parseError(p), HasSubstr("tensor 0 't' is an input on device 1; "
                                       "inputs are the caller's host memory "
                                       "(device 0)"));
  p = sampleProgram();
  p.entries[1].tensors[4].offset = 128; // the gpu arena has 128 bytes
  EXPECT_THAT(parseError(p), HasSubstr("tensor 4 'g' needs bytes [128, 128 + "
                                       "32) beyond the 128-byte arena"));
  p = sampleProgram();
  p.entries[1].arenaSizes = {64, 128, 0};
  EXPECT_THAT(parseError(p),
              HasSubstr("entry 'decode' has 3 arenas for 2 devices"));
}

TEST(Program, StepDeviceErrors) {
  Program p = sampleProgram();
  p.entries[1].steps[1].device = 7;
  EXPECT_THAT(parseError(p),
              HasSubstr("kernel step 'scale' is on device 7 of 2"));
  p = sampleProgram();
  p.entries[1].steps[1].device = 0;
  EXPECT_THAT(parseError(p), HasSubstr("kernel step 'scale' runs on device 0 "
                                       "but tensor 'g' is on device 1"));
  p = sampleProgram();
  p.entries[1].steps[1].results = {5};
  EXPECT_THAT(parseError(p), HasSubstr("kernel step 'scale' writes tensor 5 "
                                       "'w', which is a read-only weight"));
}

TEST(Program, StateErrors) {
  Program p = sampleProgram();
  p.states[1].name = "cache";
  EXPECT_THAT(parseError(p), HasSubstr("state 1 'cache': state names must be "
                                       "distinct and not empty"));
  p = sampleProgram();
  p.states[0].dtype = DType(0);
  EXPECT_THAT(parseError(p), HasSubstr("state 0 'cache' has dtype 0, not one "
                                       "of lmoptDType's values"));
  p = sampleProgram();
  p.states[0].dims = {2, -8, 4};
  EXPECT_THAT(parseError(p), HasSubstr("state 0 'cache' has dim 1 = -8"));
  p = sampleProgram();
  p.states[0].device = 3;
  EXPECT_THAT(parseError(p), HasSubstr("state 0 'cache' is on device 3 of 2"));
  p = sampleProgram();
  p.states[0].init = PlanState::Init(9);
  EXPECT_THAT(parseError(p), HasSubstr("state 0 'cache' has init kind 9"));
  p = sampleProgram();
  p.states[1].offset = 256;
  EXPECT_THAT(parseError(p), HasSubstr("state 1 'scale' needs bytes [256, 256 "
                                       "+ 16) beyond the 256-byte weights "
                                       "section"));
  p = sampleProgram();
  p.states[0].offset = 64;
  EXPECT_THAT(parseError(p), HasSubstr("state 0 'cache' has offset 64 but its "
                                       "init is none"));
}

TEST(Program, StateViewErrors) {
  Program p = sampleProgram();
  p.entries[1].tensors[1].offset = 3;
  EXPECT_THAT(parseError(p), HasSubstr("tensor 1 'past' views state 3 of 3"));
  p = sampleProgram();
  p.entries[1].tensors[1].dtype = DType::F16;
  EXPECT_THAT(parseError(p),
              HasSubstr("tensor 1 'past', a view of state 'cache' (f32 [2, 8, "
                        "4]), has dtype f16"));
  p = sampleProgram();
  p.entries[1].tensors[6].device = 0;
  EXPECT_THAT(parseError(p), HasSubstr("tensor 6 'scale', a view of state "
                                       "'scale' (f32 [4]), is on device 0, "
                                       "not the state's 1"));
  p = sampleProgram();
  p.entries[0].tensors[1].dims = {2, 8};
  p.entries[0].tensors[1].dimExprs = {-1, 0};
  EXPECT_THAT(parseError(p), HasSubstr("tensor 1 'cache', a view of state "
                                       "'cache' (f32 [2, 8, 4]), has rank 2"));
  p = sampleProgram();
  p.entries[0].symbols[0].bound = 9;
  EXPECT_THAT(parseError(p), HasSubstr("has dims [2, 9, 4], beyond the "
                                       "state's in dim 1"));
}

TEST(Program, StateUseErrors) {
  Program p = sampleProgram();
  p.entries[1].stateReads[0].state = 4;
  EXPECT_THAT(parseError(p), HasSubstr("state reads names state 4 of 3"));
  p = sampleProgram();
  p.entries[1].stateWrites.push_back(p.entries[1].stateWrites[0]);
  EXPECT_THAT(parseError(p),
              HasSubstr("state writes name state 'cache' twice"));
  p = sampleProgram();
  p.entries[1].stateReads[0].tensor = 40;
  EXPECT_THAT(parseError(p), HasSubstr("state reads of state 'cache' refers "
                                       "to tensor 40 of 7"));
  p = sampleProgram();
  p.entries[1].stateReads[0].tensor = 3;
  EXPECT_THAT(parseError(p),
              HasSubstr("state reads of state 'cache' refers to tensor 'h', "
                        "which is not a view of that state"));
  p = sampleProgram();
  p.entries[1].stateReads[0].state = 1; // tensor 1 views state 0
  EXPECT_THAT(parseError(p),
              HasSubstr("state reads of state 'scale' refers to tensor "
                        "'past', which is not a view of that state"));
}

TEST(Program, OutputsAreNotStateViews) {
  Program p = sampleProgram();
  p.entries[1].outputs.push_back({"past", 1});
  EXPECT_THAT(parseError(p), HasSubstr("output 'past' is a view of state 0; "
                                       "outputs are copies (a step copies the "
                                       "state)"));
}

TEST(Program, SymbolErrors) {
  Program p = sampleProgram();
  p.entries[1].symbols[0].source = PlanSymbol::Source(5);
  EXPECT_THAT(parseError(p), HasSubstr("symbol 'cache.1' has source 5"));
  p = sampleProgram();
  p.entries[1].symbols[0].index = 3;
  EXPECT_THAT(parseError(p), HasSubstr("symbol 'cache.1' names state 3 of 3"));
  p = sampleProgram();
  p.entries[1].symbols[0].dim = 3;
  EXPECT_THAT(parseError(p), HasSubstr("symbol 'cache.1' names dim 3 of state "
                                       "'cache', which has rank 3"));
  p = sampleProgram();
  p.entries[1].symbols[0].bound = 8; // present = bound + 1 > capacity first
  EXPECT_THAT(parseError(p), HasSubstr("beyond the state's in dim 1"));
  p = sampleProgram();
  p.entries[1].symbols[0].bound = 9;
  p.entries[1].tensors[2].dimExprs = {}; // only the past view uses it
  p.entries[1].tensors[2].dims = {2, 8, 4};
  p.entries[1].tensors[1].dimExprs = {};
  p.entries[1].tensors[1].dims = {2, 7, 4};
  EXPECT_THAT(parseError(p), HasSubstr("symbol 'cache.1' has bound 9, beyond "
                                       "state 'cache' dim 1 of 8"));
}

TEST(Program, EntryErrors) {
  Program p = sampleProgram();
  p.entries.clear();
  EXPECT_THAT(parseError(p), HasSubstr("the program has no entries"));
  p = sampleProgram();
  p.entries[1].name = "prefill";
  EXPECT_THAT(parseError(p), HasSubstr("entry 1 'prefill': entry names must "
                                       "be distinct and not empty"));
  std::vector<uint8_t> bytes = serializeProgram(sampleProgram());
  bytes.push_back(0);
  Program out;
  EXPECT_STATUS(parse(bytes, out), StatusCode::InvalidFormat,
                "plan section of 'm.lmopt' at byte " +
                    std::to_string(bytes.size() - 9) +
                    ": 1 bytes follow the last entry");
}

TEST(Program, LegacyPlansHaveNoStatesOrAppend) {
  // A 1.x plan is read as one entry; what 2.0 adds is refused in it.
  Plan plan;
  plan.arenaSizes = {64};
  plan.addTensor({"t", DType::F32, {2}, TensorStorage::State, 0});
  Program out;
  EXPECT_THAT(parse(serializeLegacyPlan(plan), out).message(),
              HasSubstr("tensor 0 't' has storage kind 4"));
  plan.tensors[0].storage = TensorStorage::Arena;
  plan.addStep(StepKind::Append, "a");
  EXPECT_THAT(parse(serializeLegacyPlan(plan), out).message(),
              HasSubstr("step 'a' has kind 8, which this runtime does not "
                        "know"));
}

TEST(Program, StateSymbolsBindFromStateDims) {
  Program p = sampleProgram();
  const Plan &decode = p.entries[1];
  PlanShapes shapes;
  ASSERT_TRUE(evaluatePlanShapes(decode, {{2, 1, 4}}, p.states,
                                 {{2, 5, 4}, {4}, {1}}, shapes));
  EXPECT_THAT(shapes.symbols, ElementsAre(5));
  EXPECT_EQ(shapes.dims[1], (std::vector<int64_t>{2, 5, 4}));
  EXPECT_EQ(shapes.dims[2], (std::vector<int64_t>{2, 6, 4}));
  EXPECT_STATUS(evaluatePlanShapes(decode, {{2, 1, 4}}, p.states,
                                   {{2, 8, 4}, {4}, {1}}, shapes),
                StatusCode::InvalidArgument,
                "state 'cache' dim 1 is 8, beyond its bound 7 (cache.1 <= 7; "
                "recompile with a larger --max-shape)");
  EXPECT_STATUS(
      evaluatePlanShapes(decode, {{2, 1, 4}}, p.states, {{}, {4}, {1}}, shapes),
      StatusCode::InvalidArgument,
      "state 'cache' has no value to take cache.1 from");
}

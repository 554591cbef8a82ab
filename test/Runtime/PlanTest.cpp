//===- PlanTest.cpp - Plan encoding and validation ------------------------===//
//
// The 1.x encoding, which parsePlan still reads (as a program of one entry):
// serializeLegacyPlan/parsePlan round trips, and every check parsePlan makes
// of it: each is triggered by a plan serialized with one bad field, since the
// serializer writes whatever it is given. ProgramTest.cpp covers 2.0.
//
//===----------------------------------------------------------------------===//

#include "lmopt/Format/Plan.h"

#include "TestUtil.h"

#include <gmock/gmock.h>

#include <cstring>
#include <limits>

using namespace lmopt::runtime;
using ::testing::HasSubstr;

static constexpr uint64_t kWeightsSize = 256;

/// A plan using every storage kind, step kind and attribute kind.
static Plan samplePlan() {
  Plan p;
  p.arenaSizes = {192};
  uint32_t x = p.addTensor({"x", DType::F32, {2, 3}, TensorStorage::Input, 0});
  uint32_t ids = p.addTensor({"ids", DType::I64, {2}, TensorStorage::Input, 1});
  uint32_t w = p.addTensor({"w", DType::F32, {3, 4}, TensorStorage::Weight, 0});
  uint32_t table =
      p.addTensor({"table", DType::F16, {5, 4}, TensorStorage::Weight, 64});
  uint32_t y = p.addTensor({"y", DType::F32, {2, 4}, TensorStorage::Arena, 0});
  uint32_t e = p.addTensor({"e", DType::F16, {2, 4}, TensorStorage::Arena, 64});
  uint32_t s = p.addTensor({"s", DType::F32, {}, TensorStorage::Arena, 128});
  p.inputs = {{"x", x}, {"ids", ids}};
  p.outputs = {{"y", y}, {"e", e}, {"s", s}};

  PlanStep &linear = p.addStep(StepKind::Linear, "dense_0");
  linear.operands = {x, w};
  linear.results = {y};
  PlanAttr act;
  act.name = "activation";
  act.kind = PlanAttr::Kind::Int;
  act.intValue = -3;
  linear.attrs.push_back(act);

  PlanStep &gather = p.addStep(StepKind::Gather, "embed");
  gather.operands = {table, ids};
  gather.results = {e};
  PlanStep &kernel = p.addStep(StepKind::Kernel, "fused_1");
  kernel.operands = {y, e};
  kernel.results = {s};
  PlanAttr entry;
  entry.name = "entry";
  entry.kind = PlanAttr::Kind::String;
  entry.stringValue = "kernel_1";
  kernel.attrs.push_back(entry);
  PlanAttr scale;
  scale.name = "scale";
  scale.kind = PlanAttr::Kind::Float;
  scale.floatValue = -0.125;
  kernel.attrs.push_back(scale);
  p.addStep(StepKind::Copy, "copy").operands = {y};
  p.steps.back().results = {y};
  p.addStep(StepKind::Attention, "attn");
  return p;
}

/// Parses a 1.x plan: a program whose one entry is `out`.
static Status parse(const std::vector<uint8_t> &bytes, Plan &out,
                    uint64_t weightsSize = kWeightsSize) {
  Program program;
  Status st =
      parsePlan(bytes.data(), bytes.size(), weightsSize, "m.lmopt", program);
  out = st ? program.entries.front() : Plan();
  if (st && (program.entries.size() != 1 || program.devices.size() != 1 ||
             program.devices[0].name != "cpu" ||
             program.devices[0].kernels != "kernels" ||
             !program.states.empty() || out.name != "main"))
    return Status::error(StatusCode::InvalidFormat,
                         "a 1.x plan is not one 'main' entry on the cpu");
  return st;
}

/// Serializes `plan`, parses it and returns the failure's message.
static std::string parseError(const Plan &plan,
                              StatusCode code = StatusCode::InvalidFormat) {
  Plan out;
  Status st = parse(serializeLegacyPlan(plan), out);
  EXPECT_FALSE(st);
  EXPECT_EQ(st.code(), code) << st.toString();
  EXPECT_TRUE(out.tensors.empty() && out.steps.empty());
  return st.message();
}

static void expectSamePlan(const Plan &a, const Plan &b) {
  EXPECT_EQ(a.arenaSize(), b.arenaSize());
  ASSERT_EQ(a.tensors.size(), b.tensors.size());
  for (size_t i = 0; i < a.tensors.size(); ++i) {
    EXPECT_EQ(a.tensors[i].name, b.tensors[i].name);
    EXPECT_EQ(a.tensors[i].dtype, b.tensors[i].dtype);
    EXPECT_EQ(a.tensors[i].dims, b.tensors[i].dims);
    EXPECT_EQ(a.tensors[i].storage, b.tensors[i].storage);
    EXPECT_EQ(a.tensors[i].offset, b.tensors[i].offset);
  }
  for (auto [x, y] : {std::make_pair(&a.inputs, &b.inputs),
                      std::make_pair(&a.outputs, &b.outputs)}) {
    ASSERT_EQ(x->size(), y->size());
    for (size_t i = 0; i < x->size(); ++i) {
      EXPECT_EQ((*x)[i].name, (*y)[i].name);
      EXPECT_EQ((*x)[i].tensor, (*y)[i].tensor);
    }
  }
  ASSERT_EQ(a.steps.size(), b.steps.size());
  for (size_t i = 0; i < a.steps.size(); ++i) {
    const PlanStep &s = a.steps[i], &t = b.steps[i];
    EXPECT_EQ(s.kind, t.kind);
    EXPECT_EQ(s.name, t.name);
    EXPECT_EQ(s.operands, t.operands);
    EXPECT_EQ(s.results, t.results);
    ASSERT_EQ(s.attrs.size(), t.attrs.size());
    for (size_t j = 0; j < s.attrs.size(); ++j) {
      EXPECT_EQ(s.attrs[j].name, t.attrs[j].name);
      EXPECT_EQ(s.attrs[j].kind, t.attrs[j].kind);
      EXPECT_EQ(s.attrs[j].intValue, t.attrs[j].intValue);
      EXPECT_EQ(s.attrs[j].floatValue, t.attrs[j].floatValue);
      EXPECT_EQ(s.attrs[j].stringValue, t.attrs[j].stringValue);
    }
  }
}

TEST(Plan, RoundTrip) {
  Plan plan = samplePlan();
  std::vector<uint8_t> bytes = serializeLegacyPlan(plan);
  Plan parsed;
  Status st = parse(bytes, parsed);
  ASSERT_TRUE(st) << st.toString();
  expectSamePlan(plan, parsed);
  EXPECT_EQ(serializeLegacyPlan(parsed), bytes);
  EXPECT_EQ(parsed.tensors[3].byteSize(), 40u);    // f16 [5, 4]
  EXPECT_EQ(parsed.tensors[6].elementCount(), 1u); // a scalar

  // An empty plan is valid too.
  Plan empty;
  ASSERT_TRUE(parse(serializeLegacyPlan(empty), parsed));
  EXPECT_TRUE(parsed.tensors.empty());
  EXPECT_EQ(parsed.arenaSize(), 0u);
}

TEST(Plan, EncodingLayout) {
  // The byte layout docs/bundle-format.md describes, field by field.
  Plan p;
  p.arenaSizes = {0x40};
  p.addTensor({"t", DType::I32, {3}, TensorStorage::Arena, 0});
  p.outputs = {{"o", 0}};
  PlanStep &s = p.addStep(StepKind::Copy, "c");
  s.results = {0};
  s.attrs.push_back({"a", PlanAttr::Kind::Int, 7, 0, ""});
  // clang-format off
  std::vector<uint8_t> expected = {
      'L', 'M', 'O', 'P', 'T', 'P', 'L', 'N',  // magic
      1, 0, 0, 0, 0, 0, 0, 0,                  // version 1.0
      0x40, 0, 0, 0, 0, 0, 0, 0,               // arena size
      1, 0, 0, 0,                              // tensor count
      1, 0, 0, 0, 't',                         // name
      9, 0, 0, 0,                              // dtype i32
      1, 0, 0, 0, 3, 0, 0, 0, 0, 0, 0, 0,      // rank, dims
      3, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,      // arena, offset 0
      0, 0, 0, 0,                              // no inputs
      1, 0, 0, 0, 1, 0, 0, 0, 'o', 0, 0, 0, 0, // output 'o' -> tensor 0
      1, 0, 0, 0,                              // step count
      5, 0, 0, 0, 1, 0, 0, 0, 'c',             // copy step 'c'
      0, 0, 0, 0,                              // no operands
      1, 0, 0, 0, 0, 0, 0, 0,                  // results: tensor 0
      1, 0, 0, 0, 1, 0, 0, 0, 'a', 1, 0, 0, 0, // attribute 'a', int
      7, 0, 0, 0, 0, 0, 0, 0,                  // = 7
  };
  // clang-format on
  EXPECT_EQ(serializeLegacyPlan(p), expected);
  Plan parsed;
  ASSERT_TRUE(parse(expected, parsed));
}

TEST(Plan, EveryTruncationFails) {
  std::vector<uint8_t> bytes = serializeLegacyPlan(samplePlan());
  for (size_t length = 0; length < bytes.size(); ++length) {
    std::vector<uint8_t> cut(bytes.begin(), bytes.begin() + length);
    Plan out;
    Status st = parse(cut, out);
    ASSERT_FALSE(st) << "length " << length;
    EXPECT_EQ(st.code(), StatusCode::InvalidFormat) << st.toString();
    EXPECT_THAT(st.message(), HasSubstr("plan section of 'm.lmopt'"));
    EXPECT_TRUE(out.tensors.empty() && out.steps.empty());
  }
}

TEST(Plan, EverySingleByteCorruptionIsHandled) {
  // Parsing either fails cleanly or yields a valid plan (a corrupted minor
  // version, name byte or value); nothing reads outside the buffer (ASan
  // checks).
  std::vector<uint8_t> bytes = serializeLegacyPlan(samplePlan());
  for (size_t i = 0; i < bytes.size(); ++i)
    for (uint8_t delta : {1, 0x80, 0xff}) {
      std::vector<uint8_t> corrupt = bytes;
      corrupt[i] = uint8_t(corrupt[i] + delta);
      Plan out;
      Status st = parse(corrupt, out);
      Plan again;
      if (st)
        EXPECT_TRUE(parse(serializeLegacyPlan(out), again)) << "byte " << i;
      else
        EXPECT_TRUE(out.tensors.empty() && out.steps.empty());
    }
}

TEST(Plan, HeaderErrors) {
  Plan out;
  EXPECT_STATUS(parse({'L', 'M', 'O'}, out), StatusCode::InvalidFormat,
                "plan section of 'm.lmopt' does not start with 'LMOPTPLN'");
  std::vector<uint8_t> bytes = serializeLegacyPlan(samplePlan());
  bytes[8] = 3; // major version
  EXPECT_STATUS(parse(bytes, out), StatusCode::VersionMismatch,
                "plan section of 'm.lmopt' at byte 8: plan encoding version "
                "3.0 is not this runtime's 2.0 (nor 1.0 or 1.1, which it also "
                "reads); recompile the model");
  bytes = serializeLegacyPlan(samplePlan());
  bytes[12] = 2; // minor version: 1.2 is neither 1.x nor 2.0
  EXPECT_STATUS(parse(bytes, out), StatusCode::VersionMismatch,
                "plan section of 'm.lmopt' at byte 8: plan encoding version "
                "1.2 is not this runtime's 2.0 (nor 1.0 or 1.1, which it also "
                "reads); recompile the model");
  bytes = serializeLegacyPlan(samplePlan());
  bytes.push_back(0);
  bytes.push_back(0);
  Status st = parse(bytes, out);
  EXPECT_EQ(st.code(), StatusCode::InvalidFormat);
  EXPECT_THAT(st.message(), HasSubstr(": 2 bytes follow the last step"));
}

TEST(Plan, TensorErrors) {
  Plan p = samplePlan();
  p.tensors[2].dtype = DType(99);
  EXPECT_THAT(parseError(p), HasSubstr("tensor 2 'w' has dtype 99, not one "
                                       "of lmoptDType's values"));
  p = samplePlan();
  p.tensors[2].dims.assign(17, 1);
  EXPECT_THAT(parseError(p),
              HasSubstr("tensor 2 'w' has rank 17, above the limit of 16"));
  p = samplePlan();
  p.tensors[2].dims = {3, -4};
  EXPECT_THAT(parseError(p), HasSubstr("tensor 2 'w' has dim 1 = -4"));
  p = samplePlan();
  p.tensors[4].dims = {int64_t(1) << 40, int64_t(1) << 40};
  EXPECT_THAT(parseError(p), HasSubstr("tensor 4 'y' has more elements than "
                                       "64-bit sizes hold"));
  p = samplePlan();
  p.tensors[4].storage = TensorStorage(9);
  EXPECT_THAT(parseError(p), HasSubstr("tensor 4 'y' has storage kind 9"));
  p = samplePlan();
  p.tensors[3].offset = 32;
  EXPECT_THAT(parseError(p), HasSubstr("tensor 3 'table' has weights section "
                                       "offset 32, not a multiple of 64"));
  p = samplePlan();
  p.tensors[3].offset = 256;
  EXPECT_THAT(parseError(p),
              HasSubstr("tensor 3 'table' needs bytes [256, 256 + 40) beyond "
                        "the 256-byte weights section"));
  p = samplePlan();
  p.tensors[5].offset = 128; // 16 bytes at 128 fit; 192 does not
  p.tensors[5].dims = {2, 64};
  EXPECT_THAT(parseError(p), HasSubstr("tensor 5 'e' needs bytes [128, 128 + "
                                       "256) beyond the 192-byte arena"));
  p = samplePlan();
  p.tensors[4].offset = std::numeric_limits<uint64_t>::max() - 63;
  EXPECT_THAT(parseError(p), HasSubstr("beyond the 192-byte arena"));
  p = samplePlan();
  p.tensors[0].name.assign(70000, 'n');
  EXPECT_THAT(parseError(p), HasSubstr("tensor name is 70000 bytes long, over "
                                       "the limit of 65536"));
  // A count that the remaining bytes cannot hold is refused before any
  // allocation.
  std::vector<uint8_t> bytes = serializeLegacyPlan(samplePlan());
  bytes[24] = 0xff;
  bytes[25] = 0xff;
  bytes[26] = 0xff;
  Plan out;
  Status st = parse(bytes, out);
  EXPECT_THAT(st.message(), HasSubstr("tensor count is 16777215, more than"));
}

TEST(Plan, ValueErrors) {
  Plan p = samplePlan();
  p.outputs[1].tensor = 7;
  EXPECT_THAT(parseError(p), HasSubstr("output 'e' refers to tensor 7 of 7"));
  p = samplePlan();
  p.outputs[1].name = "y";
  EXPECT_THAT(parseError(p), HasSubstr("output name 'y' appears twice"));
  p = samplePlan();
  p.outputs[1].tensor = p.outputs[0].tensor;
  EXPECT_THAT(parseError(p),
              HasSubstr("output 'e' shares its tensor with another"));
  p = samplePlan();
  std::swap(p.inputs[0], p.inputs[1]);
  EXPECT_THAT(parseError(p), HasSubstr("input 'ids' refers to tensor 'ids', "
                                       "which is not input number 0"));
  p = samplePlan();
  p.inputs.pop_back(); // 'ids' is an input tensor that no input names
  EXPECT_THAT(parseError(p), HasSubstr("tensor 'ids' claims to be input 1, "
                                       "which names another tensor"));
  p = samplePlan();
  p.inputs[1].tensor = 4; // an arena tensor
  EXPECT_THAT(parseError(p), HasSubstr("input 'ids' refers to tensor 'y', "
                                       "which is not input number 1"));
}

TEST(Plan, StepErrors) {
  Plan p = samplePlan();
  p.steps[1].kind = StepKind(42);
  EXPECT_THAT(parseError(p), HasSubstr("step 'embed' has kind 42, which this "
                                       "runtime does not know"));
  p = samplePlan();
  p.steps[1].operands[1] = 9;
  EXPECT_THAT(parseError(p),
              HasSubstr("gather step 'embed' refers to tensor 9 of 7"));
  p = samplePlan();
  p.steps[1].results[0] = 2;
  EXPECT_THAT(parseError(p),
              HasSubstr("gather step 'embed' writes tensor 2 'w', which is a "
                        "read-only weight"));
  p = samplePlan();
  p.steps[1].results[0] = 0;
  EXPECT_THAT(parseError(p), HasSubstr("gather step 'embed' writes tensor 0 "
                                       "'x', which is a read-only input"));
  p = samplePlan();
  p.steps[2].attrs[1].kind = PlanAttr::Kind(4);
  EXPECT_THAT(parseError(p), HasSubstr("kernel step 'fused_1' attribute "
                                       "'scale' has kind 4"));
  p = samplePlan();
  p.steps[2].attrs[1].name = "entry";
  EXPECT_THAT(parseError(p), HasSubstr("kernel step 'fused_1' has attribute "
                                       "'entry' twice"));
}

TEST(Plan, AttributeLookups) {
  Plan p = samplePlan();
  const PlanStep &kernel = p.steps[2];
  std::string entry;
  double scale = 0;
  int64_t value = 0;
  ASSERT_TRUE(kernel.getString("entry", entry));
  EXPECT_EQ(entry, "kernel_1");
  ASSERT_TRUE(kernel.getFloat("scale", scale));
  EXPECT_EQ(scale, -0.125);
  ASSERT_TRUE(kernel.getInt("missing", 5, value));
  EXPECT_EQ(value, 5);
  EXPECT_STATUS(kernel.getInt("entry", value), StatusCode::InvalidFormat,
                "kernel step 'fused_1' has a non-integer attribute 'entry'");
  EXPECT_STATUS(kernel.getInt("entry", 0, value), StatusCode::InvalidFormat,
                "kernel step 'fused_1' has a non-integer attribute 'entry'");
  EXPECT_STATUS(kernel.getFloat("entry", scale), StatusCode::InvalidFormat,
                "kernel step 'fused_1' has a non-float attribute 'entry'");
  EXPECT_STATUS(kernel.getString("scale", entry), StatusCode::InvalidFormat,
                "kernel step 'fused_1' has a non-string attribute 'scale'");
  EXPECT_STATUS(kernel.getInt("axis", value), StatusCode::InvalidFormat,
                "kernel step 'fused_1' lacks the integer attribute 'axis'");
  EXPECT_STREQ(stepKindName(StepKind::Attention), "attention");
  EXPECT_STREQ(stepKindName(StepKind(0)), "invalid");
  EXPECT_STREQ(tensorStorageName(TensorStorage::Weight), "weight");
}

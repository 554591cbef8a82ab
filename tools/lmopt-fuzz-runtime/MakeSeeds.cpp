//===- MakeSeeds.cpp - Seed corpora of the runtime fuzz targets -----------===//
//
// lmopt-fuzz-make-seeds ROOT writes small valid inputs of every runtime fuzz
// target under ROOT/<target>/ (test/fuzz in the source tree): bundles that
// reach a session and a run (library, copy and append steps, states, two
// entries, a 1.x plan, random weights), a CUDA kernel payload and an
// omitted-weights section. The .npy/.npz seeds are NumPy-written files
// from test/Runtime/Inputs.
//
//===----------------------------------------------------------------------===//

#include "../../test/Runtime/BundleBuilder.h"

#include "lmopt/Format/Bundle.h"
#include "lmopt/Format/CudaKernels.h"
#include "lmopt/Format/OmittedWeights.h"

#include <cstdio>
#include <cstring>
#include <sys/stat.h>

using namespace lmopt::runtime;
using namespace lmopt::runtime::test;

static bool check(const Status &st) {
  if (!st)
    std::fprintf(stderr, "lmopt-fuzz-make-seeds: %s\n", st.toString().c_str());
  return st.isOk();
}

static bool writeBytes(const std::string &path,
                       const std::vector<uint8_t> &bytes) {
  FILE *file = std::fopen(path.c_str(), "wb");
  bool ok = file && std::fwrite(bytes.data(), 1, bytes.size(), file) ==
                        bytes.size();
  ok = file && std::fclose(file) == 0 && ok;
  if (!ok)
    std::perror(path.c_str());
  return ok;
}

/// Linear, gather and matmul steps on inputs and weights.
static BundleBuilder libraryModel() {
  BundleBuilder b;
  uint32_t x = b.input("x", DType::F32, {2, 3});
  uint32_t ids = b.input("ids", DType::I64, {2});
  uint32_t w = b.weight<float>("w", DType::F32, {3, 4},
                               {1, 0, -1, 2, 0, 1, 1, -1, 1, 1, 0, 0.5f});
  uint32_t bias = b.weight<float>("b", DType::F32, {4}, {0.5f, -1, 0, 0});
  uint32_t table =
      b.weight<float>("table", DType::F32, {4, 3},
                      {0, 1, 2, 10, 11, 12, 20, 21, 22, 30, 31, 32});
  uint32_t y = b.arena("y", DType::F32, {2, 4});
  uint32_t emb = b.arena("emb", DType::F32, {2, 3});
  uint32_t m = b.arena("m", DType::F32, {2, 4});
  PlanStep &linear = b.step(StepKind::Linear, "dense", {x, w, bias}, {y});
  addInt(linear, "activation", 1);
  addInt(linear, "has_bias", 1);
  addInt(b.step(StepKind::Gather, "embed", {table, ids}, {emb}), "axis", 0);
  b.step(StepKind::MatMul, "mm", {x, w}, {m});
  b.output("y", y);
  b.output("emb", emb);
  b.output("m", m);
  b.meta = "{\"model\": \"fuzz seed\"}";
  return b;
}

/// Two entries sharing a state (as test/Runtime/SessionStateTest.cpp).
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

/// A copy of a 1x2048 f32 weight, written with --omit-weights' layout.
static bool writeOmitted(const std::string &path) {
  BundleBuilder b;
  std::vector<float> values(2048, 1.0f);
  uint32_t w = b.weight<float>("w", DType::F32, {1, 2048}, values);
  uint32_t y = b.arena("y", DType::F32, {1, 2048});
  b.step(StepKind::Copy, "copy", {w}, {y});
  b.output("y", y);
  OmittedWeights omitted{b.weights.size(), {{0, 8192, DType::F32}}};
  std::vector<uint8_t> kept = keptWeights(b.weights.data(), omitted);
  std::vector<uint8_t> plan = b.planBytes();
  std::vector<uint8_t> section = serializeOmittedWeights(omitted);
  BundleWriter writer;
  return check(writer.addSection("plan", SectionKind::Plan, plan)) &&
         check(writer.addSection("weights", SectionKind::Weights, kept)) &&
         check(writer.addSection("omitted-weights", SectionKind::OmittedWeights,
                                 section)) &&
         check(writer.write(path));
}

int main(int argc, char **argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: lmopt-fuzz-make-seeds ROOT\n");
    return 1;
  }
  std::string root = argv[1];
  for (const char *target : {"lmopt-fuzz-bundle", "lmopt-fuzz-cuda-payload",
                             "lmopt-fuzz-omitted-weights"})
    mkdir((root + "/" + target).c_str(), 0755);
  std::string bundles = root + "/lmopt-fuzz-bundle/";

  BundleBuilder legacy = libraryModel();
  legacy.legacy = true;
  legacy.meta.clear();
  bool ok = check(libraryModel().write(bundles + "library.lmopt")) &&
            check(cacheModel().write(bundles + "states.lmopt")) &&
            check(legacy.write(bundles + "legacy-plan.lmopt")) &&
            writeOmitted(bundles + "omitted-weights.lmopt");

  CudaKernelPayload payload;
  payload.smVersion = 90;
  payload.kernels.push_back({"add_relu_6", 2, 1, 0, 256, 2, 2, 1, 0});
  payload.kernels.push_back({"softmax_3", 1, 1, 2, 128, 0, 1, 4, 512});
  payload.image = {0x7f, 'E', 'L', 'F', 2, 1, 1, 0};
  ok = ok && writeBytes(root + "/lmopt-fuzz-cuda-payload/two-kernels.bin",
                        serializeCudaKernels(payload));

  // Inputs of lmopt-fuzz-omitted-weights: the kept size (u64) then the
  // section.
  OmittedWeights omitted{20000,
                         {{0, 4096, DType::F32},
                          {8192, 2048, DType::F16},
                          {12288, 4096, DType::BF16}}};
  std::vector<uint8_t> input(8);
  uint64_t kept = omitted.fullSize - omitted.omittedBytes();
  std::memcpy(input.data(), &kept, 8);
  std::vector<uint8_t> section = serializeOmittedWeights(omitted);
  input.insert(input.end(), section.begin(), section.end());
  ok = ok && writeBytes(root + "/lmopt-fuzz-omitted-weights/three-ranges.bin",
                        input);
  return ok ? 0 : 1;
}

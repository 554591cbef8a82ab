//===- MakeSeeds.cpp - Seed corpora of the runtime fuzz targets -----------===//
//
// lmopt-fuzz-make-seeds ROOT writes small valid inputs of every runtime fuzz
// target under ROOT/<target>/ (test/fuzz in the source tree): bundles that
// reach a session and a run (library, copy and append steps, states, two
// entries, a 1.x plan, random weights, 2:4 sparse weights), a CUDA kernel
// payload and an omitted-weights section, tokenizer.json files of a few
// tokens (WordPiece, BPE, Unigram) and token datasets. The .npy/.npz seeds
// are NumPy-written files from test/Runtime/Inputs.
//
//===----------------------------------------------------------------------===//

#include "../../test/Runtime/BundleBuilder.h"

#include "lmopt/Format/Bundle.h"
#include "lmopt/Format/CudaKernels.h"
#include "lmopt/Format/OmittedWeights.h"
#include "lmopt/Format/SparseWeights.h"
#include "lmopt/Format/TokenDataset.h"
#include "lmopt/Tokenizer/Tokenizer.h"

#include "llvm/Support/MemoryBuffer.h"

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

/// A copy of a 1x2048 f32 weight that is 2:4 sparse, written with
/// sparsity=2:4's layout: compressed weights and a sparse-weights section.
static bool writeSparse(const std::string &path) {
  BundleBuilder b;
  std::vector<float> values(2048, 0.0f);
  for (size_t i = 0; i < values.size(); i += 4) {
    values[i + (i / 4) % 4] = 1.0f + float(i);
    values[i + (i / 4 + 1) % 4] = -2.0f;
  }
  uint32_t w = b.weight<float>("w", DType::F32, {1, 2048}, values);
  uint32_t y = b.arena("y", DType::F32, {1, 2048});
  b.step(StepKind::Copy, "copy", {w}, {y});
  b.output("y", y);
  Program program;
  program.entries.push_back(b.plan);
  SparseWeights sparse =
      selectSparseWeights(program, b.weights.data(), b.weights.size());
  BundleWriter writer;
  return check(writer.addSection("plan", SectionKind::Plan, b.planBytes())) &&
         check(writer.addSection(
             "weights", SectionKind::Weights,
             compressSparseWeights(b.weights.data(), sparse))) &&
         check(writer.addSection("sparse-weights", SectionKind::SparseWeights,
                                 serializeSparseWeights(sparse))) &&
         check(writer.write(path));
}

/// Small tokenizer.json files, one per model, between them using every
/// normalizer, pre-tokenizer and post-processor type the library reads (the
/// committed test tokenizers run to 470 KB; libFuzzer mutates small seeds
/// best).
static const std::pair<const char *, const char *> kTokenizers[] = {
    {"wordpiece.json", R"({
 "added_tokens": [
  {"id": 0, "content": "[PAD]", "special": true, "normalized": false},
  {"id": 5, "content": "[MASK]", "special": true, "lstrip": true},
  {"id": 9, "content": "foo", "special": false, "rstrip": true}],
 "padding": {"pad_id": 0},
 "normalizer": {"type": "BertNormalizer", "clean_text": true,
  "handle_chinese_chars": true, "strip_accents": null, "lowercase": true},
 "pre_tokenizer": {"type": "BertPreTokenizer"},
 "post_processor": {"type": "TemplateProcessing",
  "single": [{"SpecialToken": {"id": "[CLS]", "type_id": 0}},
   {"Sequence": {"id": "A", "type_id": 0}},
   {"SpecialToken": {"id": "[SEP]", "type_id": 0}}],
  "pair": [{"SpecialToken": {"id": "[CLS]", "type_id": 0}},
   {"Sequence": {"id": "A", "type_id": 0}},
   {"SpecialToken": {"id": "[SEP]", "type_id": 0}},
   {"Sequence": {"id": "B", "type_id": 1}},
   {"SpecialToken": {"id": "[SEP]", "type_id": 1}}],
  "special_tokens": {"[CLS]": {"id": "[CLS]", "ids": [2], "tokens": ["[CLS]"]},
   "[SEP]": {"id": "[SEP]", "ids": [3], "tokens": ["[SEP]"]}}},
 "model": {"type": "WordPiece", "unk_token": "[UNK]",
  "continuing_subword_prefix": "##", "max_input_chars_per_word": 12,
  "vocab": {"[PAD]": 0, "[UNK]": 1, "[CLS]": 2, "[SEP]": 3, "hello": 4,
   "[MASK]": 5, "world": 6, "##s": 7, "!": 8, "foo": 9, "he": 10,
   "##llo": 11, ",": 12, "中": 13}}})"},
    {"bpe.json", R"({
 "added_tokens": [{"id": 0, "content": "<|endoftext|>", "special": true,
  "normalized": false}],
 "normalizer": {"type": "Sequence", "normalizers": [{"type": "NFC"},
  {"type": "Replace", "pattern": {"String": "\t"}, "content": " "},
  {"type": "Strip", "strip_left": false, "strip_right": true}]},
 "pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": true,
  "use_regex": true},
 "post_processor": {"type": "Sequence", "processors": [
  {"type": "ByteLevel", "trim_offsets": false},
  {"type": "RobertaProcessing", "sep": ["</s>", 2], "cls": ["<s>", 1]}]},
 "model": {"type": "BPE", "unk_token": null, "fuse_unk": false,
  "byte_fallback": false, "ignore_merges": false,
  "vocab": {"<|endoftext|>": 0, "<s>": 1, "</s>": 2, "h": 3, "e": 4,
   "l": 5, "o": 6, "Ġ": 7, "w": 8, "r": 9, "d": 10, "he": 11, "ll": 12,
   "hell": 13, "hello": 14, "Ġw": 15, "or": 16, "Ġwor": 17},
  "merges": [["h", "e"], ["l", "l"], ["he", "ll"], ["hell", "o"],
   ["Ġ", "w"], ["o", "r"], ["Ġw", "or"]]}})"},
    {"bpe-byte-fallback.json", R"({
 "normalizer": {"type": "Sequence", "normalizers": [
  {"type": "Prepend", "prepend": "▁"},
  {"type": "Replace", "pattern": {"String": " "}, "content": "▁"}]},
 "pre_tokenizer": null,
 "post_processor": {"type": "BertProcessing", "sep": ["</s>", 2],
  "cls": ["<s>", 1]},
 "model": {"type": "BPE", "unk_token": "<unk>", "fuse_unk": true,
  "byte_fallback": true, "end_of_word_suffix": null,
  "vocab": {"<unk>": 0, "<s>": 1, "</s>": 2, "<0x41>": 3, "<0xC3>": 4,
   "<0xA9>": 5, "▁": 6, "a": 7, "b": 8, "▁a": 9, "ab": 10},
  "merges": ["▁ a", "a b"]}})"},
    {"unigram.json", R"({
 "added_tokens": [{"id": 0, "content": "<unk>", "special": true,
  "normalized": false}],
 "normalizer": {"type": "Sequence", "normalizers": [{"type": "NFKD"},
  {"type": "StripAccents"}, {"type": "Lowercase"}]},
 "pre_tokenizer": {"type": "Sequence", "pretokenizers": [
  {"type": "WhitespaceSplit"},
  {"type": "Metaspace", "replacement": "▁", "prepend_scheme": "first",
   "split": true}]},
 "post_processor": {"type": "TemplateProcessing",
  "single": [{"Sequence": {"id": "A", "type_id": 0}},
   {"SpecialToken": {"id": "</s>", "type_id": 0}}],
  "pair": [{"Sequence": {"id": "A", "type_id": 0}},
   {"Sequence": {"id": "B", "type_id": 1}},
   {"SpecialToken": {"id": "</s>", "type_id": 1}}],
  "special_tokens": {"</s>": {"id": "</s>", "ids": [2], "tokens": ["</s>"]}}},
 "model": {"type": "Unigram", "unk_id": 0, "byte_fallback": true,
  "vocab": [["<unk>", 0.0], ["<s>", 0.0], ["</s>", 0.0], ["▁", -2.0],
   ["▁hello", -3.5], ["hel", -4.0], ["lo", -4.5], ["▁world", -3.0],
   ["s", -5.0], ["<0xE4>", -9.0], ["<0xB8>", -9.0], ["<0xAD>", -9.0]]}})"},
};

/// Writes one lmopt-fuzz-tokenizer seed once the library has parsed it.
static bool writeTokenizer(const std::string &dir, const char *name,
                           const char *json) {
  llvm::Expected<std::unique_ptr<lmopt::tokenizer::Tokenizer>> tok =
      lmopt::tokenizer::Tokenizer::parse(json);
  if (!tok) {
    std::fprintf(stderr, "lmopt-fuzz-make-seeds: %s: %s\n", name,
                 llvm::toString(tok.takeError()).c_str());
    return false;
  }
  return writeBytes(dir + name,
                    std::vector<uint8_t>(json, json + std::strlen(json)));
}

/// Writes a dataset with the library's writer and joins its files into an
/// lmopt-fuzz-token-dataset input: the .idx size (u32), .idx, .bin.
static bool writeDataset(const std::string &dir, const char *name,
                         int64_t vocabSize,
                         const lmopt::runtime::TokenDatasetContents &contents) {
  std::string prefix = dir + name;
  if (lmopt::runtime::Status st = lmopt::runtime::writeTokenDataset(
          prefix, 0x1234abcd5678ef90, vocabSize, contents);
      !st) {
    std::fprintf(stderr, "lmopt-fuzz-make-seeds: %s\n", st.message().c_str());
    return false;
  }
  std::vector<uint8_t> input(4);
  for (const char *suffix : {".idx", ".bin"}) {
    std::string path = prefix + suffix;
    auto buffer = llvm::MemoryBuffer::getFile(path);
    if (!buffer) {
      std::fprintf(stderr, "lmopt-fuzz-make-seeds: cannot read %s\n",
                   path.c_str());
      return false;
    }
    llvm::StringRef bytes = (*buffer)->getBuffer();
    if (input.size() == 4) {
      uint32_t idxSize = uint32_t(bytes.size());
      std::memcpy(input.data(), &idxSize, 4);
    }
    input.insert(input.end(), bytes.begin(), bytes.end());
    std::remove(path.c_str());
  }
  return writeBytes(prefix, input);
}

int main(int argc, char **argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: lmopt-fuzz-make-seeds ROOT\n");
    return 1;
  }
  std::string root = argv[1];
  for (const char *target :
       {"lmopt-fuzz-bundle", "lmopt-fuzz-cuda-payload",
        "lmopt-fuzz-omitted-weights", "lmopt-fuzz-tokenizer",
        "lmopt-fuzz-token-dataset"})
    mkdir((root + "/" + target).c_str(), 0755);
  std::string bundles = root + "/lmopt-fuzz-bundle/";

  BundleBuilder legacy = libraryModel();
  legacy.legacy = true;
  legacy.meta.clear();
  bool ok = check(libraryModel().write(bundles + "library.lmopt")) &&
            check(cacheModel().write(bundles + "states.lmopt")) &&
            check(legacy.write(bundles + "legacy-plan.lmopt")) &&
            writeOmitted(bundles + "omitted-weights.lmopt") &&
            writeSparse(bundles + "sparse-weights.lmopt");

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

  std::string tokenizers = root + "/lmopt-fuzz-tokenizer/";
  for (auto [name, json] : kTokenizers)
    ok = ok && writeTokenizer(tokenizers, name, json);

  // uint16 and uint32 ids (a vocabulary past 65,536), labels or none, an
  // empty example; type ids and sources (a reordered dataset).
  std::string datasets = root + "/lmopt-fuzz-token-dataset/";
  lmopt::runtime::TokenDatasetContents contents;
  contents.ids = {{2, 7, 9, 3}, {}, {2, 3}};
  ok = ok && writeDataset(datasets, "u16", 30522, contents);
  contents.labels = {1, 0, -1};
  ok = ok && writeDataset(datasets, "u16-labels", 30522, contents);
  contents.typeIds = {{0, 0, 1, 1}, {}, {0, 1}};
  contents.sources = {2, 0, 1};
  ok = ok && writeDataset(datasets, "u16-pairs-sorted", 30522, contents);
  contents = {};
  contents.ids = {{2, 7, 9, 3}, {}, {2, 3}, {70000, 5}};
  ok = ok && writeDataset(datasets, "u32", 70001, contents);
  contents.labels = {0, 1, 2, 3};
  ok = ok && writeDataset(datasets, "u32-labels", 70001, contents);
  return ok ? 0 : 1;
}

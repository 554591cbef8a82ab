//===- lmopt-tokenize.cpp - Pre-tokenize text with a tokenizer.json -------===//
//
// Encodes text (one example per line), JSON Lines or CSV with a Hugging Face
// tokenizer.json, on several threads, into the padded .npz that lmopt-run
// --inputs and lmopt-train --data read (input_ids, attention_mask, and
// token_type_ids and labels when there are any), or into a token dataset
// (.bin/.idx). --inspect-dataset reads a dataset back. Every failure is one
// line "lmopt-tokenize: error: ..." and exit status 1. docs/tokenizer.md.
//
//===----------------------------------------------------------------------===//

#include "lmopt/Format/Npy.h"
#include "lmopt/Format/TokenDataset.h"
#include "lmopt/Tokenizer/Batch.h"
#include "lmopt/Tokenizer/Tokenizer.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

#include <chrono>
#include <cstring>

using namespace lmopt::tokenizer;
using lmopt::runtime::TokenDatasetContents;
using lmopt::runtime::TokenDatasetReader;
using lmopt::runtime::TokenDType;
namespace cl = llvm::cl;

static cl::OptionCategory category("lmopt-tokenize options");
static cl::opt<std::string>
    tokenizerPath("tokenizer", cl::Required,
                  cl::desc("The Hugging Face tokenizer.json"),
                  cl::value_desc("tokenizer.json"), cl::cat(category));
static cl::opt<std::string> inputPath(
    "input",
    cl::desc("Examples: text (one per line), JSON Lines or CSV ('-': stdin)"),
    cl::value_desc("file"), cl::cat(category));
static cl::opt<std::string>
    inputFormat("input-format",
                cl::desc("text, jsonl or csv (default: from the extension: "
                         ".jsonl/.json/.ndjson, .csv, else text)"),
                cl::cat(category));
static cl::opt<std::string>
    textField("text-field",
              cl::desc("JSON/CSV field of the text (default 'text')"),
              cl::init("text"), cl::cat(category));
static cl::opt<std::string>
    pairField("pair-field",
              cl::desc("JSON/CSV field of the second sequence of a pair"),
              cl::cat(category));
static cl::opt<std::string>
    labelField("label-field", cl::desc("JSON/CSV field of an integer label"),
               cl::cat(category));
static cl::opt<unsigned> maxLength(
    "max-length",
    cl::desc(
        "Truncate to this many ids, special tokens included (0: no limit)"),
    cl::init(0), cl::cat(category));
static cl::opt<std::string> padding(
    "padding",
    cl::desc("npz: pad to max-length or to the longest example (default: "
             "max-length with --max-length, else longest)"),
    cl::cat(category));
static cl::opt<int64_t>
    padIdFlag("pad-id", cl::desc("Id of padding (default: the tokenizer's)"),
              cl::init(-1), cl::cat(category));
static cl::opt<std::string>
    outputFormat("format",
                 cl::desc("npz (padded arrays) or dataset (.bin/.idx)"),
                 cl::init("npz"), cl::cat(category));
static cl::opt<std::string>
    outputPath("o", cl::desc("Output .npz, or the dataset's prefix"),
               cl::value_desc("path"), cl::cat(category));
static cl::opt<unsigned>
    numThreads("num-threads", cl::desc("Encoding threads (0: one per core)"),
               cl::init(0), cl::cat(category));
static cl::opt<bool>
    noSpecialTokens("no-special-tokens",
                    cl::desc("Leave out the post-processor's special tokens"),
                    cl::cat(category));
static cl::opt<bool>
    skipEmpty("skip-empty", cl::desc("Leave out examples whose text is empty"),
              cl::cat(category));
static cl::opt<bool> quiet("quiet", cl::desc("No progress line or report"),
                           cl::cat(category));
static cl::opt<bool> sortByLength(
    "sort-by-length",
    cl::desc("dataset: store the examples sorted by length (stable), each "
             "with its position in the input, so that readers' batches in "
             "file order are length buckets"),
    cl::cat(category));
static cl::opt<std::string> inspectDataset(
    "inspect-dataset",
    cl::desc(
        "Read a token dataset back, checking it was written with --tokenizer, "
        "and print its summary"),
    cl::value_desc("prefix"), cl::cat(category));
static cl::opt<unsigned>
    dumpExamples("dump",
                 cl::desc("With --inspect-dataset: print the first N examples"),
                 cl::init(0), cl::cat(category));

[[noreturn]] static void fail(const llvm::Twine &message) {
  llvm::errs() << "lmopt-tokenize: error: " << message << "\n";
  std::exit(1);
}

template <typename T> static T check(llvm::Expected<T> value) {
  if (!value)
    fail(llvm::toString(value.takeError()));
  return std::move(*value);
}

static void check(const lmopt::runtime::Status &status) {
  if (!status)
    fail(status.message());
}

static int inspect(const Tokenizer &tokenizer) {
  std::unique_ptr<TokenDatasetReader> reader;
  check(TokenDatasetReader::open(inspectDataset, tokenizer.fingerprint(),
                                 reader));
  llvm::outs() << llvm::formatv(
      "examples: {0}\ntokens: {1}\ndtype: {2}\nlabels: {3}\n"
      "type ids: {4}\nsorted by length: {5}\ntokenizer hash: {6:x16}\n",
      reader->size(), reader->tokenCount(),
      reader->dtype() == TokenDType::U16 ? "uint16" : "uint32",
      reader->hasLabels() ? "yes" : "no", reader->hasTypeIds() ? "yes" : "no",
      reader->hasSources() ? "yes" : "no", reader->tokenizerHash());
  std::vector<int32_t> ids;
  std::vector<uint8_t> types;
  for (uint64_t i = 0; i < std::min<uint64_t>(dumpExamples, reader->size());
       ++i) {
    reader->example(i, ids);
    llvm::outs() << "example " << i << ":";
    if (reader->hasSources())
      llvm::outs() << " input " << reader->source(i) << ":";
    if (reader->hasLabels())
      llvm::outs() << " label " << reader->label(i) << ":";
    for (int32_t id : ids)
      llvm::outs() << " " << id;
    if (reader->hasTypeIds()) {
      reader->typeIds(i, types);
      llvm::outs() << " | types";
      for (uint8_t t : types)
        llvm::outs() << " " << unsigned(t);
    }
    llvm::outs() << "\n";
  }
  return 0;
}

/// The dataset's contents: the encodings (moved out), with type ids when
/// `typeIds`, in input order or sorted by length.
static TokenDatasetContents datasetContents(const Examples &examples,
                                            std::vector<Encoding> &encodings,
                                            bool typeIds) {
  std::vector<uint64_t> order(encodings.size());
  for (uint64_t i = 0; i < order.size(); ++i)
    order[i] = i;
  if (sortByLength)
    std::stable_sort(order.begin(), order.end(), [&](uint64_t a, uint64_t b) {
      return encodings[a].ids.size() < encodings[b].ids.size();
    });
  TokenDatasetContents c;
  for (uint64_t i : order) {
    Encoding &e = encodings[i];
    if (typeIds) {
      std::vector<uint8_t> types;
      for (int32_t t : e.typeIds) {
        if (t < 0 || t > 255)
          fail(llvm::formatv("example {0} has the type id {1}; a token "
                             "dataset stores type ids in [0, 255]",
                             i, t)
                   .str());
        types.push_back(uint8_t(t));
      }
      c.typeIds.push_back(std::move(types));
    }
    c.ids.push_back(std::move(e.ids));
    if (examples.hasLabels)
      c.labels.push_back(examples.items[i].label);
    if (sortByLength)
      c.sources.push_back(i);
  }
  return c;
}

static lmopt::runtime::NamedTensor int64Matrix(std::string name, size_t rows,
                                               size_t cols) {
  lmopt::runtime::NamedTensor t;
  t.name = std::move(name);
  t.tensor.dtype = lmopt::runtime::DType::I64;
  t.tensor.shape = {int64_t(rows), int64_t(cols)};
  t.tensor.data.assign(rows * cols * sizeof(int64_t), 0);
  return t;
}

static void writeNpz(const Tokenizer &tokenizer, const Examples &examples,
                     const std::vector<Encoding> &encodings, bool typeIds) {
  size_t width = 0;
  if (padding == "max-length") {
    width = maxLength;
  } else {
    for (const Encoding &e : encodings)
      width = std::max(width, e.ids.size());
  }
  size_t rows = encodings.size();
  int64_t pad = padIdFlag >= 0 ? padIdFlag : tokenizer.padId();
  std::vector<lmopt::runtime::NamedTensor> arrays;
  arrays.push_back(int64Matrix("input_ids", rows, width));
  arrays.push_back(int64Matrix("attention_mask", rows, width));
  if (typeIds)
    arrays.push_back(int64Matrix("token_type_ids", rows, width));
  int64_t *ids = arrays[0].tensor.as<int64_t>();
  int64_t *mask = arrays[1].tensor.as<int64_t>();
  int64_t *types = typeIds ? arrays[2].tensor.as<int64_t>() : nullptr;
  for (size_t r = 0; r < rows; ++r) {
    const Encoding &e = encodings[r];
    for (size_t c = 0; c < width; ++c) {
      bool real = c < e.ids.size();
      ids[r * width + c] = real ? e.ids[c] : pad;
      mask[r * width + c] = real;
      if (types)
        types[r * width + c] = real ? e.typeIds[c] : 0;
    }
  }
  if (examples.hasLabels) {
    lmopt::runtime::NamedTensor labels;
    labels.name = "labels";
    labels.tensor.dtype = lmopt::runtime::DType::I64;
    labels.tensor.shape = {int64_t(rows)};
    labels.tensor.data.resize(rows * sizeof(int64_t));
    for (size_t r = 0; r < rows; ++r)
      labels.tensor.as<int64_t>()[r] = examples.items[r].label;
    arrays.push_back(std::move(labels));
  }
  lmopt::runtime::Status status = lmopt::runtime::writeNpz(outputPath, arrays);
  if (!status)
    fail(status.message());
}

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  cl::HideUnrelatedOptions(category);
  cl::ParseCommandLineOptions(
      argc, argv,
      "lmopt-tokenize: encode text with a Hugging Face tokenizer.json\n");

  std::unique_ptr<Tokenizer> tokenizer =
      check(Tokenizer::loadFile(tokenizerPath));
  if (!inspectDataset.empty())
    return inspect(*tokenizer);

  if (inputPath.empty())
    fail("no --input given");
  if (outputPath.empty())
    fail("no output given (-o)");
  if (outputFormat != "npz" && outputFormat != "dataset")
    fail("unknown --format '" + outputFormat + "' (expected npz or dataset)");
  if (padding.empty())
    padding = maxLength ? "max-length" : "longest";
  if (padding != "max-length" && padding != "longest")
    fail("unknown --padding '" + padding +
         "' (expected max-length or longest)");
  if (padding == "max-length" && !maxLength)
    fail("--padding=max-length needs --max-length");
  InputFormat format = guessInputFormat(inputPath);
  if (inputFormat == "text")
    format = InputFormat::Text;
  else if (inputFormat == "jsonl")
    format = InputFormat::JsonLines;
  else if (inputFormat == "csv")
    format = InputFormat::Csv;
  else if (!inputFormat.empty())
    fail("unknown --input-format '" + inputFormat +
         "' (expected text, jsonl or csv)");
  if (format == InputFormat::Text &&
      (!pairField.empty() || !labelField.empty()))
    fail("--pair-field and --label-field need JSON Lines or CSV input");
  if (sortByLength && outputFormat != "dataset")
    fail("--sort-by-length orders a token dataset; it needs --format "
         "dataset");
  bool addSpecial = !noSpecialTokens;
  size_t special =
      addSpecial ? tokenizer->addedTokenCount(!pairField.empty()) : 0;
  if (maxLength && maxLength <= special)
    fail(
        llvm::formatv("--max-length {0} leaves no room: the tokenizer adds {1} "
                      "special tokens",
                      unsigned(maxLength), special)
            .str());
  if (padIdFlag >= tokenizer->vocabSize())
    fail(llvm::formatv("--pad-id {0} is outside the vocabulary ({1} ids)",
                       int64_t(padIdFlag), tokenizer->vocabSize())
             .str());

  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> input =
      llvm::MemoryBuffer::getFileOrSTDIN(inputPath, /*IsText=*/false,
                                         /*RequiresNullTerminator=*/false);
  if (!input)
    fail("cannot read '" + inputPath + "': " + input.getError().message());

  auto start = std::chrono::steady_clock::now();
  InputFields fields{textField, pairField, labelField};
  Examples examples = check(readExamples((*input)->getBuffer(), inputPath,
                                         format, fields, skipEmpty));

  EncodeOptions options;
  options.maxLength = maxLength;
  options.addSpecialTokens = addSpecial;
  BatchStats stats;
  bool displayed = llvm::errs().is_displayed();
  size_t total = examples.items.size();
  auto progress = [&](uint64_t done) {
    if (quiet)
      return;
    llvm::errs() << llvm::formatv("lmopt-tokenize: {0}/{1} examples ({2}%)",
                                  done, total, total ? done * 100 / total : 100)
                 << (displayed ? "\r" : "\n");
  };
  std::vector<Encoding> encodings = encodeExamples(
      *tokenizer, examples, options, numThreads, stats, progress);
  if (displayed && !quiet && total)
    llvm::errs() << "\n";

  if (outputFormat == "npz") {
    writeNpz(*tokenizer, examples, encodings,
             examples.hasPairs || tokenizer->usesTypeIds());
  } else {
    // A dataset stores type ids only when one is not 0 (readers give zeros
    // otherwise).
    bool typeIds = llvm::any_of(encodings, [](const Encoding &e) {
      return llvm::any_of(e.typeIds, [](int32_t t) { return t != 0; });
    });
    check(lmopt::runtime::writeTokenDataset(
        outputPath, tokenizer->fingerprint(), tokenizer->vocabSize(),
        datasetContents(examples, encodings, typeIds)));
  }

  double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  if (!quiet)
    llvm::errs() << llvm::formatv(
        "lmopt-tokenize: {0} examples, {1} tokens, {2} truncated, {3} invalid "
        "UTF-8 sequences replaced in {4} examples, {5:f3} s, {6:f2} MB/s, "
        "{7:f0} "
        "tokens/s\n",
        stats.examples, stats.tokens, stats.truncated,
        stats.invalidUtf8 + examples.invalidUtf8, stats.examplesWithInvalidUtf8,
        seconds, stats.inputBytes / 1e6 / std::max(seconds, 1e-9),
        stats.tokens / std::max(seconds, 1e-9));
  return 0;
}

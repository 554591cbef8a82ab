//===- FuzzExamples.cpp - libFuzzer target for lmopt-tokenize's inputs ----===//
//
// The first byte of an input picks the format (bits 0-1: text, JSON Lines,
// CSV), the fields (bit 2: a pair, bit 3: a label) and --skip-empty (bit
// 4); the rest is the file that
// lmopt-tokenize reads (readExamples), possibly invalid UTF-8. What reads
// is encoded (encodeExamples, one thread) with a small WordPiece
// tokenizer. Every text must be readable (ASan checks each byte), and the
// counts must agree; any crash, sanitizer report, leak or allocation past
// -rss_limit_mb is a bug.
//
//===----------------------------------------------------------------------===//

#include "FuzzUtil.h"

#include "lmopt/Tokenizer/Batch.h"

using namespace lmopt::tokenizer;
using llvm::StringRef;
using lmopt::fuzz::check;

static const Tokenizer &tokenizer() {
  static const Tokenizer *tok = [] {
    llvm::Expected<std::unique_ptr<Tokenizer>> parsed = Tokenizer::parse(R"({
 "normalizer": {"type": "BertNormalizer", "lowercase": true},
 "pre_tokenizer": {"type": "BertPreTokenizer"},
 "post_processor": {"type": "BertProcessing", "sep": ["[SEP]", 2],
  "cls": ["[CLS]", 1]},
 "model": {"type": "WordPiece", "unk_token": "[UNK]",
  "continuing_subword_prefix": "##",
  "vocab": {"[UNK]": 0, "[CLS]": 1, "[SEP]": 2, "hello": 3, "world": 4,
   "##s": 5, "a": 6, ",": 7}}})");
    check(bool(parsed), "the built-in tokenizer does not parse");
    return parsed->release();
  }();
  return *tok;
}

/// Sums every byte of `text` so that ASan sees each one read.
static unsigned touch(StringRef text) {
  unsigned sum = 0;
  for (char c : text)
    sum += static_cast<unsigned char>(c);
  return sum;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size == 0)
    return 0;
  uint8_t mode = data[0];
  StringRef input(reinterpret_cast<const char *>(data + 1), size - 1);
  InputFormat format = (mode & 3) == 0   ? InputFormat::Text
                       : (mode & 3) == 1 ? InputFormat::JsonLines
                                         : InputFormat::Csv;
  InputFields fields;
  if (mode & 0x04)
    fields.pair = "pair";
  if (mode & 0x08)
    fields.label = "label";
  bool skipEmpty = mode & 0x10;
  if (format == InputFormat::Text) {
    fields.pair.clear();
    fields.label.clear();
  }

  llvm::Expected<Examples> examples =
      readExamples(input, "input", format, fields, skipEmpty);
  if (!examples) {
    check(!llvm::toString(examples.takeError()).empty(), "empty error message");
    return 0;
  }
  check(examples->hasPairs == !fields.pair.empty() &&
            examples->hasLabels == !fields.label.empty(),
        "pairs or labels misreported");
  volatile unsigned sum = 0;
  for (const Example &e : examples->items) {
    check(e.pair.has_value() == examples->hasPairs, "pair missing");
    check(!skipEmpty || !e.text.empty(), "empty example kept");
    sum += touch(e.text) + (e.pair ? touch(*e.pair) : 0);
  }

  EncodeOptions options;
  options.maxLength = 16;
  BatchStats stats;
  std::vector<Encoding> encodings =
      encodeExamples(tokenizer(), *examples, options, 1, stats);
  check(encodings.size() == examples->items.size() &&
            stats.examples == encodings.size(),
        "example count differs");
  uint64_t tokens = 0;
  for (const Encoding &e : encodings) {
    check(e.ids.size() <= options.maxLength, "example past max length");
    check(e.ids.size() == e.typeIds.size(), "type ids and ids differ");
    tokens += e.ids.size();
  }
  check(stats.tokens == tokens, "token count differs");
  return 0;
}

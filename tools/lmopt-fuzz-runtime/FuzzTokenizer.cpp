//===- FuzzTokenizer.cpp - libFuzzer target for tokenizer.json ------------===//
//
// Each input is parsed as a tokenizer.json. A malformed or unsupported file
// must be an error; what parses encodes fixed texts (invalid UTF-8
// repaired first, as lmopt-tokenize does) and slices of the input itself,
// alone and as pairs, with and without special tokens and truncation.
// Padding and attention masks are lmopt-tokenize's, not the library's: here
// type ids must match ids in length. Any crash, sanitizer report, leak,
// allocation past -rss_limit_mb, hang or broken invariant is a bug.
//
//===----------------------------------------------------------------------===//

#include "FuzzUtil.h"

#include "lmopt/Tokenizer/Tokenizer.h"
#include "lmopt/Tokenizer/Unicode.h"

using namespace lmopt::tokenizer;
using llvm::StringRef;
using lmopt::fuzz::check;

/// Ids of the model and the added tokens lie in the vocabulary; the
/// post-processor's special tokens carry ids of their own.
static void checkInVocab(const std::vector<int32_t> &ids, int64_t vocab) {
  for (int32_t id : ids)
    check(id >= 0 && id < vocab, "id outside the vocabulary");
}

static void encodeAll(const Tokenizer &tok, StringRef a,
                      std::optional<StringRef> b) {
  int64_t vocab = tok.vocabSize();
  std::vector<int32_t> seqA, seqB;
  tok.encodeSequence(a, seqA);
  checkInVocab(seqA, vocab);
  if (b) {
    tok.encodeSequence(*b, seqB);
    checkInVocab(seqB, vocab);
  }
  size_t plain = seqA.size() + seqB.size();
  for (bool special : {true, false}) {
    size_t added = special ? tok.addedTokenCount(b.has_value()) : 0;
    for (size_t maxLength : {size_t(0), size_t(4), added + 1, size_t(64)}) {
      EncodeOptions options;
      options.maxLength = maxLength;
      options.addSpecialTokens = special;
      bool truncated = true;
      Encoding e = tok.encode(a, b, options, truncated);
      check(e.ids.size() == e.typeIds.size(),
            "type ids and ids differ in length");
      if (!special)
        checkInVocab(e.ids, vocab);
      size_t budget = maxLength > added ? maxLength - added : 0;
      bool fits = !maxLength || plain <= budget;
      check(truncated == !fits, "truncation misreported");
      size_t kept = fits ? plain : budget;
      check(e.ids.size() == kept + added, "unexpected number of ids");
      if (!special && fits) {
        std::vector<int32_t> expected = seqA;
        expected.insert(expected.end(), seqB.begin(), seqB.end());
        check(e.ids == expected, "encode differs from encodeSequence");
      }
      if (!b && !tok.usesTypeIds())
        for (int32_t t : e.typeIds)
          check(t == 0, "non-zero type id while none is used");
    }
  }
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  StringRef json(reinterpret_cast<const char *>(data), size);
  llvm::Expected<std::unique_ptr<Tokenizer>> parsed = Tokenizer::parse(json);
  if (!parsed) {
    check(!llvm::toString(parsed.takeError()).empty(), "empty error message");
    return 0;
  }
  const Tokenizer &tok = **parsed;
  check(tok.vocabSize() >= 0 && tok.padId() >= 0, "negative vocab or pad id");

  // Texts that reach every stage: accents, CJK, spaces, controls, an
  // emoji, special-token spellings and invalid UTF-8; then slices of the
  // input, which hold its tokens, merges and added tokens.
  static const char *const fixed[] = {
      "",
      " ",
      "Hello, world!",
      "  héllo\tWÖRLD  ",
      "[CLS] a [SEP] <s>",
      "中文字 and \xF0\x9F\x98\x80\xE2\x80\x8D!",
      "a\xC3\x28\xFF\xED\xA0\x80z",
      "\xCC\x81\xE2\x80\x8B\x01\r\n"};
  std::vector<std::string> texts;
  for (const char *text : fixed)
    repairUtf8(text, texts.emplace_back());
  size_t n = std::min<size_t>(size, 160);
  repairUtf8(json.take_front(n), texts.emplace_back());
  repairUtf8(json.take_back(n), texts.emplace_back());
  repairUtf8(json.substr(size / 2, n), texts.emplace_back());

  for (size_t i = 0; i < texts.size(); ++i) {
    encodeAll(tok, texts[i], std::nullopt);
    encodeAll(tok, texts[i], StringRef(texts[(i + 1) % texts.size()]));
  }
  return 0;
}

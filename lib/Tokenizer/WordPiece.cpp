//===- WordPiece.cpp - BERT's WordPiece model -----------------------------===//
//
// Greedy longest-match-first over the word, later pieces spelled with the
// continuation prefix ("##"); a word with a character no piece covers, or
// longer than max_input_chars_per_word characters, is one unknown token.
//
//===----------------------------------------------------------------------===//

#include "ModelParsers.h"

#include "lmopt/Tokenizer/Unicode.h"

using namespace lmopt::tokenizer;
using llvm::Expected;
using llvm::StringRef;

namespace {

class WordPiece : public Model {
public:
  std::string prefix = "##";
  int64_t maxChars = 100;
  int32_t unkId = 0;

  void tokenize(StringRef word, std::vector<int32_t> &ids) const override {
    if (int64_t(countChars(word)) > maxChars) {
      ids.push_back(unkId);
      return;
    }
    size_t first = ids.size();
    std::string candidate;
    for (size_t start = 0; start < word.size();) {
      size_t end = word.size();
      std::optional<int32_t> found;
      while (start < end) {
        candidate.clear();
        if (start > 0)
          candidate = prefix;
        candidate.append(word.data() + start, end - start);
        if ((found = tokenToId(candidate)))
          break;
        // Back off one character.
        do
          --end;
        while (end > start &&
               (static_cast<unsigned char>(word[end]) & 0xC0) == 0x80);
      }
      if (!found) {
        ids.resize(first);
        ids.push_back(unkId);
        return;
      }
      ids.push_back(*found);
      start = end;
    }
  }
};

} // namespace

Expected<std::unique_ptr<Model>>
lmopt::tokenizer::parseWordPiece(const Field &field) {
  auto model = std::make_unique<WordPiece>();
  if (llvm::Error err = parseVocabObject(member(field, "vocab"), *model))
    return std::move(err);
  Field unkField = member(field, "unk_token");
  Expected<StringRef> unk = asString(unkField);
  if (!unk)
    return unk.takeError();
  std::optional<int32_t> unkId = model->tokenToId(*unk);
  if (!unkId)
    return fieldError(unkField.path, "'" + *unk + "' is not in the vocabulary");
  model->unkId = *unkId;
  Field prefixField = member(field, "continuing_subword_prefix");
  if (!prefixField.isNull()) {
    Expected<StringRef> prefix = asString(prefixField);
    if (!prefix)
      return prefix.takeError();
    model->prefix = prefix->str();
  }
  Field maxField = member(field, "max_input_chars_per_word");
  if (!maxField.isNull()) {
    Expected<int64_t> maxChars = asInteger(maxField);
    if (!maxChars)
      return maxChars.takeError();
    model->maxChars = *maxChars;
  }
  return model;
}

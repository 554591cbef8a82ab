//===- Tokenizer.h - Hugging Face tokenizer.json in C++ ---------*- C++ -*-===//
//
// A tokenizer loaded from the `tokenizer.json` that Hugging Face
// `tokenizers` writes, encoding text to the same ids: added tokens are
// split off first, the rest is normalized, pre-tokenized and tokenized by
// the model (WordPiece, BPE, Unigram); then sequences are truncated and the
// post-processor adds special tokens and type ids. Encoding is const and
// thread-safe. A malformed or unsupported file is an error naming the field.
// docs/tokenizer.md lists what is supported.
//
//===----------------------------------------------------------------------===//

#ifndef LMOPT_TOKENIZER_TOKENIZER_H
#define LMOPT_TOKENIZER_TOKENIZER_H

#include "lmopt/Tokenizer/Model.h"
#include "lmopt/Tokenizer/Normalizer.h"
#include "lmopt/Tokenizer/PostProcessor.h"
#include "lmopt/Tokenizer/PreTokenizer.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace lmopt::tokenizer {

/// A token matched in the text before the model sees it ("added_tokens").
struct AddedToken {
  std::string content;
  int32_t id = 0;
  bool special = false;
  /// Matched in the normalized text rather than the raw text.
  bool normalized = false;
  /// Swallow white space on the left / right of a match.
  bool lstrip = false, rstrip = false;
};

struct EncodeOptions {
  /// Truncate to this many ids, special tokens included (0: no limit).
  size_t maxLength = 0;
  bool addSpecialTokens = true;
};

class Tokenizer {
public:
  /// Reads and parses a tokenizer.json file; errors name the file and field.
  static llvm::Expected<std::unique_ptr<Tokenizer>>
  loadFile(llvm::StringRef path);
  /// Parses tokenizer.json text; errors name the field.
  static llvm::Expected<std::unique_ptr<Tokenizer>> parse(llvm::StringRef json);

  /// Encodes `a` (and the pair `b`) given as valid UTF-8 (see repairUtf8),
  /// truncating the longest sequence first to fit options.maxLength; sets
  /// `truncated` when ids were dropped.
  Encoding encode(llvm::StringRef a, std::optional<llvm::StringRef> b,
                  const EncodeOptions &options, bool &truncated) const;
  /// The model's ids of one sequence, without special tokens.
  void encodeSequence(llvm::StringRef text, std::vector<int32_t> &ids) const;

  /// A 64-bit hash (XXH64) of the tokenizer.json bytes, which token datasets
  /// record (lmopt::runtime::tokenizerHash).
  uint64_t fingerprint() const { return hash; }
  std::optional<int32_t> tokenToId(llvm::StringRef token) const;
  /// One more than the largest id of the model and the added tokens.
  int64_t vocabSize() const;
  /// padding.pad_id, else the id of [PAD] or <pad>, else 0.
  int32_t padId() const { return pad; }
  /// Special tokens added to a single sequence or a pair.
  size_t addedTokenCount(bool pair) const { return post.addedTokens(pair); }
  /// Whether type ids distinguish anything (a pair, or a post-processor
  /// with a non-zero type id).
  bool usesTypeIds() const { return post.usesTypeIds(); }

private:
  std::unique_ptr<Normalizer> normalizer;
  std::unique_ptr<PreTokenizer> preTokenizer;
  std::unique_ptr<Model> model;
  PostProcessor post;
  std::vector<AddedToken> added;
  /// Indices into `added` of the raw-text and normalized-text tokens, and
  /// which first bytes may start a match of each.
  std::vector<size_t> rawTokens, normalizedTokens;
  std::array<bool, 256> rawFirst{}, normalizedFirst{};
  uint64_t hash = 0;
  int32_t pad = 0;

  void encodeSegment(llvm::StringRef text, bool atStart,
                     std::vector<int32_t> &ids) const;
  void tokenizeNormalized(llvm::StringRef text, bool atStart,
                          std::vector<int32_t> &ids) const;
};

} // namespace lmopt::tokenizer

#endif // LMOPT_TOKENIZER_TOKENIZER_H

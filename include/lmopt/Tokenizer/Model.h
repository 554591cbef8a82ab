//===- Model.h - tokenizer.json models --------------------------*- C++ -*-===//
//
// The models that turn a pre-tokenized word into ids: WordPiece (greedy
// longest match with a continuation prefix), BPE (merges by rank, byte
// fallback) and Unigram (Viterbi over piece scores, byte fallback).
//
//===----------------------------------------------------------------------===//

#ifndef LMOPT_TOKENIZER_MODEL_H
#define LMOPT_TOKENIZER_MODEL_H

#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/JSON.h"

#include <algorithm>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace lmopt::tokenizer {

class Model {
public:
  virtual ~Model() = default;
  /// Appends the ids of one word. Thread-safe.
  virtual void tokenize(llvm::StringRef word,
                        std::vector<int32_t> &ids) const = 0;

  std::optional<int32_t> tokenToId(llvm::StringRef token) const {
    auto it = vocab.find(token);
    if (it == vocab.end())
      return std::nullopt;
    return it->second;
  }
  /// One more than the largest id.
  int64_t vocabSize() const { return vocabEnd; }
  /// Maps `token` to `id`; a later spelling of a token replaces an earlier
  /// one, as in `tokenizers`.
  void addToken(llvm::StringRef token, int32_t id) {
    vocab[token] = id;
    vocabEnd = std::max<int64_t>(vocabEnd, int64_t(id) + 1);
  }

private:
  llvm::StringMap<int32_t> vocab;
  int64_t vocabEnd = 0;
};

/// Builds the model described at `path` ("model").
llvm::Expected<std::unique_ptr<Model>>
parseModel(const llvm::json::Value *value, const std::string &path);

} // namespace lmopt::tokenizer

#endif // LMOPT_TOKENIZER_MODEL_H

//===- Normalizer.h - tokenizer.json normalizers ----------------*- C++ -*-===//
//
// The normalizers of Hugging Face `tokenizers` that lmopt implements:
// BertNormalizer, NFC/NFD/NFKC/NFKD, Lowercase, StripAccents, Strip,
// Prepend, Replace (a string, or a regex LLVM's POSIX engine compiles),
// Precompiled (SentencePiece's charsmap) and Sequence. Others are refused
// with an error naming the field.
//
//===----------------------------------------------------------------------===//

#ifndef LMOPT_TOKENIZER_NORMALIZER_H
#define LMOPT_TOKENIZER_NORMALIZER_H

#include "llvm/Support/Error.h"
#include "llvm/Support/JSON.h"

#include <memory>
#include <string>

namespace lmopt::tokenizer {

class Normalizer {
public:
  virtual ~Normalizer() = default;
  /// Normalizes valid UTF-8 text in place.
  virtual void normalize(std::string &text) const = 0;
};

/// Builds the normalizer described at `path` ("normalizer"); null gives
/// nullptr.
llvm::Expected<std::unique_ptr<Normalizer>>
parseNormalizer(const llvm::json::Value *value, const std::string &path);

} // namespace lmopt::tokenizer

#endif // LMOPT_TOKENIZER_NORMALIZER_H

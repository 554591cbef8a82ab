//===- PreTokenizer.h - tokenizer.json pre-tokenizers -----------*- C++ -*-===//
//
// Pre-tokenizers split normalized text into the words a model tokenizes:
// BertPreTokenizer, ByteLevel (GPT-2's regex and byte-to-unicode map),
// Metaspace, WhitespaceSplit and Sequence.
//
//===----------------------------------------------------------------------===//

#ifndef LMOPT_TOKENIZER_PRETOKENIZER_H
#define LMOPT_TOKENIZER_PRETOKENIZER_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/JSON.h"

#include <memory>
#include <string>
#include <vector>

namespace lmopt::tokenizer {

class PreTokenizer {
public:
  virtual ~PreTokenizer() = default;
  /// Appends the words of valid UTF-8 `text` to `words`. `atStart` says
  /// that `text` begins the input (Metaspace's prepend_scheme "first").
  virtual void split(llvm::StringRef text, bool atStart,
                     std::vector<std::string> &words) const = 0;
};

/// Builds the pre-tokenizer described at `path`; null gives nullptr.
llvm::Expected<std::unique_ptr<PreTokenizer>>
parsePreTokenizer(const llvm::json::Value *value, const std::string &path);

/// The GPT-2 pre-tokenization regex
///   's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
/// matched by hand over code points; appends the pieces of `text`.
void splitGpt2(llvm::StringRef text, std::vector<llvm::StringRef> &pieces);

} // namespace lmopt::tokenizer

#endif // LMOPT_TOKENIZER_PRETOKENIZER_H

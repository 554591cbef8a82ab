//===- PostProcessor.h - Special tokens around encoded sequences -*- C++
//-*-===//
//
// Post-processors add the special tokens and token type ids of a single
// sequence or a pair: TemplateProcessing, BertProcessing, RobertaProcessing,
// ByteLevel (which changes no id) and Sequence.
//
//===----------------------------------------------------------------------===//

#ifndef LMOPT_TOKENIZER_POSTPROCESSOR_H
#define LMOPT_TOKENIZER_POSTPROCESSOR_H

#include "llvm/Support/Error.h"
#include "llvm/Support/JSON.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace lmopt::tokenizer {

/// The ids of one encoded example and the segment each belongs to.
struct Encoding {
  std::vector<int32_t> ids;
  std::vector<int32_t> typeIds;
};

/// One element of a template: a special token's ids, or sequence A or B.
struct TemplatePiece {
  enum class Kind { Special, SequenceA, SequenceB } kind;
  std::vector<int32_t> ids; // Special only
  int32_t typeId = 0;
};

/// Every supported post-processor, as the templates it amounts to (Bert's
/// and RoBERTa's are fixed templates). Without one, sequences are
/// concatenated with type ids 0 and 1.
class PostProcessor {
public:
  std::vector<TemplatePiece> single, pair;

  /// Special tokens added to a single sequence or a pair.
  size_t addedTokens(bool isPair) const;
  /// Whether any piece has a non-zero type id.
  bool usesTypeIds() const;
  /// Builds the example from the model's ids of A (and B).
  void process(const std::vector<int32_t> &a, const std::vector<int32_t> *b,
               bool addSpecialTokens, Encoding &out) const;
};

/// Builds the post-processor described at `path`; null gives the plain
/// concatenation.
llvm::Expected<PostProcessor> parsePostProcessor(const llvm::json::Value *value,
                                                 const std::string &path);

} // namespace lmopt::tokenizer

#endif // LMOPT_TOKENIZER_POSTPROCESSOR_H

//===- Model.cpp - tokenizer.json models ----------------------------------===//

#include "lmopt/Tokenizer/Model.h"

#include "ModelParsers.h"

#include "llvm/Support/FormatVariadic.h"

using namespace lmopt::tokenizer;

llvm::Expected<std::unique_ptr<Model>>
lmopt::tokenizer::parseModel(const llvm::json::Value *value,
                             const std::string &path) {
  Field field{value, path};
  if (llvm::Expected<const llvm::json::Object *> o = asObject(field); !o)
    return o.takeError();
  Field typeField = member(field, "type");
  // Files written by old versions leave out the type of a WordPiece model.
  if (typeField.isNull() &&
      !member(field, "continuing_subword_prefix").isNull())
    return parseWordPiece(field);
  llvm::Expected<llvm::StringRef> type = asString(typeField);
  if (!type)
    return type.takeError();
  if (*type == "WordPiece")
    return parseWordPiece(field);
  if (*type == "BPE")
    return parseBpe(field);
  if (*type == "Unigram")
    return parseUnigram(field);
  return fieldError(typeField.path,
                    "unsupported model '" + *type +
                        "' (supported: WordPiece, BPE, Unigram)");
}

llvm::Error lmopt::tokenizer::parseVocabObject(const Field &field,
                                               Model &model) {
  llvm::Expected<const llvm::json::Object *> vocab = asObject(field);
  if (!vocab)
    return vocab.takeError();
  for (const auto &[key, value] : **vocab) {
    llvm::Expected<int32_t> id = asId(field.child(key, &value));
    if (!id)
      return id.takeError();
    model.addToken(key, *id);
  }
  return llvm::Error::success();
}

std::optional<std::array<int32_t, 256>>
lmopt::tokenizer::byteTokenIds(const Model &model) {
  std::array<int32_t, 256> ids;
  for (int b = 0; b < 256; ++b) {
    std::optional<int32_t> id =
        model.tokenToId(llvm::formatv("<0x{0:X-2}>", b).str());
    if (!id)
      return std::nullopt;
    ids[b] = *id;
  }
  return ids;
}

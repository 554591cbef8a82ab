//===- ModelParsers.h - One parser per tokenizer model ----------*- C++ -*-===//

#ifndef LMOPT_LIB_TOKENIZER_MODELPARSERS_H
#define LMOPT_LIB_TOKENIZER_MODELPARSERS_H

#include "JsonFields.h"
#include "lmopt/Tokenizer/Model.h"

#include <array>

namespace lmopt::tokenizer {

/// Adds the {"token": id} object at `field` to `model`'s vocabulary.
llvm::Error parseVocabObject(const Field &field, Model &model);
/// The ids of the 256 byte tokens <0x00>..<0xFF>, or nullopt unless every
/// one is in the vocabulary (byte fallback needs them all).
std::optional<std::array<int32_t, 256>> byteTokenIds(const Model &model);

llvm::Expected<std::unique_ptr<Model>> parseWordPiece(const Field &field);
llvm::Expected<std::unique_ptr<Model>> parseBpe(const Field &field);
llvm::Expected<std::unique_ptr<Model>> parseUnigram(const Field &field);

} // namespace lmopt::tokenizer

#endif // LMOPT_LIB_TOKENIZER_MODELPARSERS_H

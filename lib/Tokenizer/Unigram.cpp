//===- Unigram.cpp - SentencePiece's unigram model ------------------------===//
//
// The best segmentation of a word by the sum of its pieces' log
// probabilities (Viterbi over byte positions, as `tokenizers`'
// encode_optimized): a character no piece starts with costs the lowest
// score minus 10 and becomes the unknown token; adjacent unknowns fuse; with
// byte fallback an unknown piece becomes its <0xXX> byte tokens.
//
//===----------------------------------------------------------------------===//

#include "ModelParsers.h"

#include "llvm/ADT/StringSet.h"
#include "llvm/Support/FormatVariadic.h"

#include <array>

using namespace lmopt::tokenizer;
using llvm::Expected;
using llvm::StringRef;

namespace {

class Unigram : public Model {
public:
  std::vector<double> scores;
  /// Every prefix of every piece, to stop the search for pieces early.
  llvm::StringSet<> prefixes;
  size_t maxPieceBytes = 0;
  std::optional<int32_t> unkId;
  double minScore = 0;
  bool byteFallback = false;
  std::array<int32_t, 256> byteIds{};
  bool haveByteIds = false;

  static constexpr double kUnkPenalty = 10.0;

  void tokenize(StringRef word, std::vector<int32_t> &ids) const override {
    struct Node {
      int32_t id = -1;
      double score = 0;
      int64_t start = -1;
    };
    size_t n = word.size();
    std::vector<Node> best(n + 1);
    best[0].start = 0;
    double unkScore = minScore - kUnkPenalty;
    for (size_t start = 0; start < n;) {
      size_t charLen = 1;
      while (start + charLen < n &&
             (static_cast<unsigned char>(word[start + charLen]) & 0xC0) == 0x80)
        ++charLen;
      double here = best[start].score;
      bool coversChar = false;
      for (size_t len = 1; len <= maxPieceBytes && start + len <= n; ++len) {
        StringRef piece = word.substr(start, len);
        if (!prefixes.contains(piece))
          break;
        std::optional<int32_t> id = tokenToId(piece);
        if (!id)
          continue;
        Node &target = best[start + len];
        double candidate = here + scores[*id];
        if (target.start < 0 || candidate > target.score)
          target = {*id, candidate, int64_t(start)};
        coversChar |= len == charLen;
      }
      if (!coversChar) {
        // Without an unknown token, `tokenizers` fails; lmopt's loader
        // refuses such a model, so unkId is set here.
        Node &target = best[start + charLen];
        double candidate = here + unkScore;
        if (target.start < 0 || candidate > target.score)
          target = {unkId.value_or(0), candidate, int64_t(start)};
      }
      start += charLen;
    }
    // Walk back, fusing runs of unknowns.
    std::vector<std::pair<size_t, size_t>> pieces;
    for (size_t end = n; end > 0;) {
      const Node &node = best[end];
      size_t start = size_t(node.start);
      if (unkId && node.id == *unkId && !pieces.empty() &&
          best[pieces.back().second].id == *unkId && pieces.back().first == end)
        pieces.back().first = start;
      else
        pieces.push_back({start, end});
      end = start;
    }
    for (auto it = pieces.rbegin(); it != pieces.rend(); ++it) {
      StringRef piece = word.slice(it->first, it->second);
      if (std::optional<int32_t> id = tokenToId(piece)) {
        ids.push_back(*id);
        continue;
      }
      if (byteFallback && haveByteIds) {
        for (char b : piece)
          ids.push_back(byteIds[static_cast<unsigned char>(b)]);
        continue;
      }
      ids.push_back(unkId.value_or(0));
    }
  }
};

} // namespace

Expected<std::unique_ptr<Model>>
lmopt::tokenizer::parseUnigram(const Field &field) {
  auto model = std::make_unique<Unigram>();
  Field vocabField = member(field, "vocab");
  Expected<const llvm::json::Array *> vocab = asArray(vocabField);
  if (!vocab)
    return vocab.takeError();
  if ((*vocab)->empty())
    return fieldError(vocabField.path, "the vocabulary is empty");
  if ((*vocab)->size() > size_t(INT32_MAX))
    return fieldError(vocabField.path, "too many pieces");
  model->minScore = INFINITY;
  for (size_t i = 0; i < (*vocab)->size(); ++i) {
    Field entry = vocabField.element(i, &(**vocab)[i]);
    const llvm::json::Array *pair = entry.value->getAsArray();
    if (!pair || pair->size() != 2)
      return fieldError(entry.path, "expected [piece, score]");
    Expected<StringRef> piece = asString(entry.element(0, &(*pair)[0]));
    if (!piece)
      return piece.takeError();
    Expected<double> score = asNumber(entry.element(1, &(*pair)[1]));
    if (!score)
      return score.takeError();
    if (piece->empty())
      return fieldError(entry.path, "empty piece");
    model->addToken(*piece, int32_t(i));
    model->scores.push_back(*score);
    model->minScore = std::min(model->minScore, *score);
    model->maxPieceBytes = std::max(model->maxPieceBytes, piece->size());
    for (size_t len = 1; len <= piece->size(); ++len)
      model->prefixes.insert(piece->substr(0, len));
  }
  Field unkField = member(field, "unk_id");
  if (unkField.isNull())
    return fieldError(unkField.path, "a Unigram model without an unknown "
                                     "token is not supported");
  Expected<int64_t> unk = asInteger(unkField);
  if (!unk)
    return unk.takeError();
  if (*unk < 0 || size_t(*unk) >= (*vocab)->size())
    return fieldError(unkField.path,
                      "id " + llvm::Twine(*unk) + " is outside the vocabulary");
  model->unkId = int32_t(*unk);
  Expected<bool> fallback = asBool(member(field, "byte_fallback"), false);
  if (!fallback)
    return fallback.takeError();
  model->byteFallback = *fallback;
  if (model->byteFallback) {
    if (std::optional<std::array<int32_t, 256>> ids = byteTokenIds(*model)) {
      model->haveByteIds = true;
      model->byteIds = *ids;
    }
  }
  return model;
}

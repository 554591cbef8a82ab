//===- Tokenizer.cpp - Hugging Face tokenizer.json in C++ -----------------===//

#include "lmopt/Tokenizer/Tokenizer.h"

#include "JsonFields.h"
#include "lmopt/Format/TokenDataset.h"
#include "lmopt/Tokenizer/Unicode.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/MemoryBuffer.h"

using namespace lmopt::tokenizer;
using llvm::Expected;
using llvm::StringRef;

namespace {

/// A match of an added token: [start, end) of the text, after lstrip and
/// rstrip widened it.
struct Match {
  size_t start, end;
  int32_t id;
};

} // namespace

/// Finds the leftmost-longest match of `tokens` in `text` at or after
/// `from` (what `tokenizers`' Aho-Corasick search with LeftmostLongest
/// returns).
static std::optional<Match> findAddedToken(StringRef text, size_t from,
                                           const std::vector<AddedToken> &added,
                                           const std::vector<size_t> &tokens,
                                           const std::array<bool, 256> &first) {
  for (size_t i = from; i < text.size(); ++i) {
    if (!first[static_cast<unsigned char>(text[i])])
      continue;
    const AddedToken *best = nullptr;
    for (size_t t : tokens) {
      const AddedToken &token = added[t];
      if ((!best || token.content.size() > best->content.size()) &&
          text.substr(i).starts_with(token.content))
        best = &token;
    }
    if (!best)
      continue;
    Match m{i, i + best->content.size(), best->id};
    if (best->lstrip)
      while (m.start > from) {
        size_t prev = m.start - 1;
        while (prev > from &&
               (static_cast<unsigned char>(text[prev]) & 0xC0) == 0x80)
          --prev;
        size_t pos = prev;
        if (!isWhitespace(decodeUtf8(text, pos)))
          break;
        m.start = prev;
      }
    if (best->rstrip)
      while (m.end < text.size()) {
        size_t pos = m.end;
        if (!isWhitespace(decodeUtf8(text, pos)))
          break;
        m.end = pos;
      }
    return m;
  }
  return std::nullopt;
}

void Tokenizer::tokenizeNormalized(StringRef text, bool atStart,
                                   std::vector<int32_t> &ids) const {
  if (text.empty())
    return;
  if (!preTokenizer) {
    model->tokenize(text, ids);
    return;
  }
  std::vector<std::string> words;
  preTokenizer->split(text, atStart, words);
  for (const std::string &word : words)
    model->tokenize(word, ids);
}

void Tokenizer::encodeSegment(StringRef text, bool atStart,
                              std::vector<int32_t> &ids) const {
  std::string normalized = text.str();
  if (normalizer)
    normalizer->normalize(normalized);
  StringRef rest = normalized;
  for (size_t from = 0;;) {
    std::optional<Match> m =
        normalizedTokens.empty()
            ? std::nullopt
            : findAddedToken(rest, from, added, normalizedTokens,
                             normalizedFirst);
    size_t end = m ? m->start : rest.size();
    tokenizeNormalized(rest.slice(from, end), atStart && from == 0, ids);
    if (!m)
      return;
    ids.push_back(m->id);
    from = m->end;
  }
}

void Tokenizer::encodeSequence(StringRef text,
                               std::vector<int32_t> &ids) const {
  for (size_t from = 0;;) {
    std::optional<Match> m =
        rawTokens.empty()
            ? std::nullopt
            : findAddedToken(text, from, added, rawTokens, rawFirst);
    size_t end = m ? m->start : text.size();
    if (end > from)
      encodeSegment(text.slice(from, end), from == 0, ids);
    if (!m)
      return;
    ids.push_back(m->id);
    from = m->end;
  }
}

/// `tokenizers`' LongestFirst strategy: the shorter sequence keeps its ids
/// if it fits in half the budget, else both get half (the longer one the
/// odd id).
static void truncatePair(std::vector<int32_t> &a, std::vector<int32_t> &b,
                         size_t budget) {
  size_t n1 = a.size(), n2 = b.size();
  bool swapped = n1 > n2;
  if (swapped)
    std::swap(n1, n2);
  if (n1 + n2 > budget) {
    if (n1 < budget / 2) {
      n2 = budget - n1;
    } else {
      n1 = budget / 2;
      n2 = n1 + budget % 2;
    }
  }
  if (swapped)
    std::swap(n1, n2);
  a.resize(std::min(a.size(), n1));
  b.resize(std::min(b.size(), n2));
}

Encoding Tokenizer::encode(StringRef a, std::optional<StringRef> b,
                           const EncodeOptions &options,
                           bool &truncated) const {
  std::vector<int32_t> idsA, idsB;
  encodeSequence(a, idsA);
  if (b)
    encodeSequence(*b, idsB);
  truncated = false;
  if (options.maxLength) {
    size_t special =
        options.addSpecialTokens ? post.addedTokens(b.has_value()) : 0;
    size_t budget =
        options.maxLength > special ? options.maxLength - special : 0;
    size_t before = idsA.size() + idsB.size();
    if (b)
      truncatePair(idsA, idsB, budget);
    else if (idsA.size() > budget)
      idsA.resize(budget);
    truncated = idsA.size() + idsB.size() < before;
  }
  Encoding out;
  post.process(idsA, b ? &idsB : nullptr, options.addSpecialTokens, out);
  return out;
}

std::optional<int32_t> Tokenizer::tokenToId(StringRef token) const {
  for (const AddedToken &t : added)
    if (t.content == token)
      return t.id;
  return model->tokenToId(token);
}

int64_t Tokenizer::vocabSize() const {
  int64_t size = model->vocabSize();
  for (const AddedToken &t : added)
    size = std::max<int64_t>(size, int64_t(t.id) + 1);
  return size;
}

static Expected<AddedToken> parseAddedToken(const Field &field) {
  if (Expected<const llvm::json::Object *> o = asObject(field); !o)
    return o.takeError();
  AddedToken token;
  Expected<int32_t> id = asId(member(field, "id"));
  if (!id)
    return id.takeError();
  token.id = *id;
  Expected<StringRef> content = asString(member(field, "content"));
  if (!content)
    return content.takeError();
  if (content->empty())
    return fieldError(field.path + ".content", "empty token");
  token.content = content->str();
  Field singleWord = member(field, "single_word");
  Expected<bool> single = asBool(singleWord, false);
  if (!single)
    return single.takeError();
  if (*single)
    return fieldError(singleWord.path,
                      "single_word added tokens are not supported");
  for (auto [name, flag] : {std::pair{"special", &token.special},
                            {"lstrip", &token.lstrip},
                            {"rstrip", &token.rstrip}}) {
    Expected<bool> v = asBool(member(field, name), false);
    if (!v)
      return v.takeError();
    *flag = *v;
  }
  // `tokenizers` defaults `normalized` to the opposite of `special`.
  Expected<bool> normalized =
      asBool(member(field, "normalized"), !token.special);
  if (!normalized)
    return normalized.takeError();
  token.normalized = *normalized;
  return token;
}

Expected<std::unique_ptr<Tokenizer>> Tokenizer::parse(StringRef json) {
  Expected<llvm::json::Value> root = parseJson(json);
  if (!root)
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "invalid JSON: " +
                                       llvm::toString(root.takeError()));
  Field top{&*root, ""};
  if (!root->getAsObject())
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "expected a JSON object at the top level");
  auto tok = std::unique_ptr<Tokenizer>(new Tokenizer());
  tok->hash = ::lmopt::runtime::tokenizerHash(json.data(), json.size());

  Expected<std::unique_ptr<Normalizer>> normalizer =
      parseNormalizer(member(top, "normalizer").value, "normalizer");
  if (!normalizer)
    return normalizer.takeError();
  tok->normalizer = std::move(*normalizer);
  Expected<std::unique_ptr<PreTokenizer>> pre =
      parsePreTokenizer(member(top, "pre_tokenizer").value, "pre_tokenizer");
  if (!pre)
    return pre.takeError();
  tok->preTokenizer = std::move(*pre);
  Field modelField = member(top, "model");
  if (modelField.isNull())
    return fieldError("model", "missing");
  Expected<std::unique_ptr<Model>> model =
      parseModel(modelField.value, "model");
  if (!model)
    return model.takeError();
  tok->model = std::move(*model);
  Expected<PostProcessor> post =
      parsePostProcessor(member(top, "post_processor").value, "post_processor");
  if (!post)
    return post.takeError();
  tok->post = std::move(*post);

  Field addedField = member(top, "added_tokens");
  if (!addedField.isNull()) {
    Expected<const llvm::json::Array *> list = asArray(addedField);
    if (!list)
      return list.takeError();
    for (size_t i = 0; i < (*list)->size(); ++i) {
      Expected<AddedToken> token =
          parseAddedToken(addedField.element(i, &(**list)[i]));
      if (!token)
        return token.takeError();
      // Normalized tokens are matched in normalized text, so their content
      // is normalized too.
      if (token->normalized && tok->normalizer)
        tok->normalizer->normalize(token->content);
      if (token->content.empty())
        continue;
      auto &indices =
          token->normalized ? tok->normalizedTokens : tok->rawTokens;
      auto &first = token->normalized ? tok->normalizedFirst : tok->rawFirst;
      indices.push_back(tok->added.size());
      first[static_cast<unsigned char>(token->content[0])] = true;
      tok->added.push_back(std::move(*token));
    }
  }

  // Padding: the file's pad id, else a conventional pad token.
  Field padId = member(member(top, "padding"), "pad_id");
  if (!padId.isNull()) {
    Expected<int32_t> id = asId(padId);
    if (!id)
      return id.takeError();
    tok->pad = *id;
  } else if (std::optional<int32_t> id = tok->tokenToId("[PAD]")) {
    tok->pad = *id;
  } else if (std::optional<int32_t> id = tok->tokenToId("<pad>")) {
    tok->pad = *id;
  }
  return tok;
}

Expected<std::unique_ptr<Tokenizer>> Tokenizer::loadFile(StringRef path) {
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> buffer =
      llvm::MemoryBuffer::getFile(path, /*IsText=*/false,
                                  /*RequiresNullTerminator=*/false);
  if (!buffer)
    return llvm::createStringError(buffer.getError(),
                                   "cannot read '" + path +
                                       "': " + buffer.getError().message());
  Expected<std::unique_ptr<Tokenizer>> tok = parse((*buffer)->getBuffer());
  if (!tok)
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   path + ": " +
                                       llvm::toString(tok.takeError()));
  return tok;
}

//===- Bpe.cpp - Byte-pair encoding model ---------------------------------===//
//
// A word starts as one symbol per character (with the continuation prefix
// and end-of-word suffix where configured; bytes as <0xXX> tokens with byte
// fallback, else the unknown token, fused when fuse_unk says so); then the
// adjacent pair with the lowest merge rank, leftmost first, is merged until
// no pair has a rank, as `tokenizers`' Word::merge_all does.
//
//===----------------------------------------------------------------------===//

#include "ModelParsers.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/Support/FormatVariadic.h"

#include <array>
#include <functional>
#include <queue>

using namespace lmopt::tokenizer;
using llvm::Expected;
using llvm::StringRef;

namespace {

class Bpe : public Model {
public:
  struct Merge {
    uint32_t rank;
    int32_t id;
  };
  llvm::DenseMap<uint64_t, Merge> merges;
  std::optional<int32_t> unkId;
  std::string prefix, suffix;
  bool fuseUnk = false, byteFallback = false, ignoreMerges = false;
  std::array<int32_t, 256> byteIds{};
  bool haveByteIds = false;

  static uint64_t key(int32_t a, int32_t b) {
    return (uint64_t(uint32_t(a)) << 32) | uint32_t(b);
  }

  void tokenize(StringRef word, std::vector<int32_t> &ids) const override {
    if (ignoreMerges)
      if (std::optional<int32_t> id = tokenToId(word)) {
        ids.push_back(*id);
        return;
      }
    std::vector<int32_t> symbols;
    initialSymbols(word, symbols);
    mergeAll(symbols);
    ids.insert(ids.end(), symbols.begin(), symbols.end());
  }

  void initialSymbols(StringRef word, std::vector<int32_t> &symbols) const {
    symbols.reserve(word.size());
    bool pendingUnk = false;
    std::string s;
    for (size_t i = 0; i < word.size();) {
      size_t end = i + 1;
      while (end < word.size() &&
             (static_cast<unsigned char>(word[end]) & 0xC0) == 0x80)
        ++end;
      s.clear();
      if (i > 0)
        s = prefix;
      s.append(word.data() + i, end - i);
      if (end == word.size())
        s += suffix;
      i = end;
      if (std::optional<int32_t> id = tokenToId(s)) {
        if (pendingUnk)
          symbols.push_back(*unkId);
        pendingUnk = false;
        symbols.push_back(*id);
        continue;
      }
      if (byteFallback && haveByteIds) {
        for (char b : s)
          symbols.push_back(byteIds[static_cast<unsigned char>(b)]);
        continue;
      }
      if (!unkId)
        continue; // Dropped, as `tokenizers` does without an unknown token.
      if (pendingUnk && !fuseUnk)
        symbols.push_back(*unkId);
      pendingUnk = true;
    }
    if (pendingUnk)
      symbols.push_back(*unkId);
  }

  /// Merges with a heap of candidate pairs ordered by (rank, position) over
  /// a linked list of symbols, as Word::merge_all: O(n log n) even for a
  /// word of a million bytes. A popped pair whose symbols have changed since
  /// it was pushed is stale and skipped.
  void mergeAll(std::vector<int32_t> &symbols) const {
    size_t n = symbols.size();
    if (n < 2)
      return;
    struct Candidate {
      uint32_t rank;
      size_t pos;
      int32_t left, right, id;
      bool operator>(const Candidate &o) const {
        return rank != o.rank ? rank > o.rank : pos > o.pos;
      }
    };
    std::vector<size_t> prev(n), next(n);
    std::vector<bool> alive(n, true);
    for (size_t i = 0; i < n; ++i) {
      prev[i] = i - 1; // wraps for the first, never read
      next[i] = i + 1;
    }
    std::priority_queue<Candidate, std::vector<Candidate>, std::greater<>> heap;
    auto push = [&](size_t pos) {
      if (pos >= n || next[pos] >= n)
        return;
      auto it = merges.find(key(symbols[pos], symbols[next[pos]]));
      if (it != merges.end())
        heap.push({it->second.rank, pos, symbols[pos], symbols[next[pos]],
                   it->second.id});
    };
    for (size_t i = 0; i + 1 < n; ++i)
      push(i);
    while (!heap.empty()) {
      Candidate c = heap.top();
      heap.pop();
      size_t right = next[c.pos];
      if (!alive[c.pos] || right >= n || symbols[c.pos] != c.left ||
          symbols[right] != c.right)
        continue;
      symbols[c.pos] = c.id;
      alive[right] = false;
      next[c.pos] = next[right];
      if (next[right] < n)
        prev[next[right]] = c.pos;
      if (prev[c.pos] < n)
        push(prev[c.pos]);
      push(c.pos);
    }
    size_t out = 0;
    for (size_t i = 0; i < n; ++i)
      if (alive[i])
        symbols[out++] = symbols[i];
    symbols.resize(out);
  }
};

} // namespace

/// A merge is "a b" (the format before 0.20) or ["a", "b"].
static Expected<std::pair<std::string, std::string>>
parseMerge(const Field &field) {
  if (std::optional<StringRef> s = field.value->getAsString()) {
    auto [a, b] = s->split(' ');
    if (a.empty() || b.empty() || b.contains(' '))
      return fieldError(field.path,
                        "expected two tokens separated by a space, got '" + *s +
                            "'");
    return std::make_pair(a.str(), b.str());
  }
  if (const llvm::json::Array *pair = field.value->getAsArray();
      pair && pair->size() == 2) {
    Expected<StringRef> a = asString(field.element(0, &(*pair)[0]));
    Expected<StringRef> b = asString(field.element(1, &(*pair)[1]));
    if (!a)
      return a.takeError();
    if (!b)
      return b.takeError();
    return std::make_pair(a->str(), b->str());
  }
  return fieldError(field.path, "expected \"a b\" or [\"a\", \"b\"]");
}

Expected<std::unique_ptr<Model>>
lmopt::tokenizer::parseBpe(const Field &field) {
  auto model = std::make_unique<Bpe>();
  if (llvm::Error err = parseVocabObject(member(field, "vocab"), *model))
    return std::move(err);
  Field dropout = member(field, "dropout");
  if (!dropout.isNull()) {
    Expected<double> p = asNumber(dropout);
    if (!p)
      return p.takeError();
    if (*p != 0.0)
      return fieldError(dropout.path, "BPE dropout is not supported (it makes "
                                      "tokenization random)");
  }
  for (const char *name : {"continuing_subword_prefix", "end_of_word_suffix"}) {
    Expected<std::optional<std::string>> s =
        asOptionalString(member(field, name));
    if (!s)
      return s.takeError();
    (StringRef(name) == "end_of_word_suffix" ? model->suffix : model->prefix) =
        s->value_or("");
  }
  Field unkField = member(field, "unk_token");
  Expected<std::optional<std::string>> unk = asOptionalString(unkField);
  if (!unk)
    return unk.takeError();
  if (*unk) {
    model->unkId = model->tokenToId(**unk);
    if (!model->unkId)
      return fieldError(unkField.path,
                        "'" + **unk + "' is not in the vocabulary");
  }
  Expected<bool> fuse = asBool(member(field, "fuse_unk"), false);
  Expected<bool> fallback = asBool(member(field, "byte_fallback"), false);
  Expected<bool> ignore = asBool(member(field, "ignore_merges"), false);
  if (!fuse)
    return fuse.takeError();
  if (!fallback)
    return fallback.takeError();
  if (!ignore)
    return ignore.takeError();
  model->fuseUnk = *fuse;
  model->byteFallback = *fallback;
  model->ignoreMerges = *ignore;
  if (model->byteFallback) {
    // Byte fallback applies only when every byte has its token.
    if (std::optional<std::array<int32_t, 256>> ids = byteTokenIds(*model)) {
      model->haveByteIds = true;
      model->byteIds = *ids;
    }
  }
  Field mergesField = member(field, "merges");
  Expected<const llvm::json::Array *> merges = asArray(mergesField);
  if (!merges)
    return merges.takeError();
  for (size_t i = 0; i < (*merges)->size(); ++i) {
    Field m = mergesField.element(i, &(**merges)[i]);
    Expected<std::pair<std::string, std::string>> pair = parseMerge(m);
    if (!pair)
      return pair.takeError();
    auto &[a, b] = *pair;
    std::optional<int32_t> aId = model->tokenToId(a), bId = model->tokenToId(b);
    if (!aId || !bId)
      return fieldError(m.path, "token '" + (aId ? b : a) +
                                    "' is not in the vocabulary");
    std::string merged = a + b.substr(std::min(model->prefix.size(), b.size()));
    std::optional<int32_t> id = model->tokenToId(merged);
    if (!id)
      return fieldError(m.path, "merged token '" + merged +
                                    "' is not in the vocabulary");
    // A repeated pair takes its last rank, as in `tokenizers`.
    model->merges[Bpe::key(*aId, *bId)] = Bpe::Merge{uint32_t(i), *id};
  }
  return model;
}

//===- Normalizer.cpp - tokenizer.json normalizers ------------------------===//
//
// Each normalizer follows the Rust code of `tokenizers` (normalizers/*.rs):
// the same steps in the same order, on whole strings (lmopt keeps no
// alignments, only ids).
//
//===----------------------------------------------------------------------===//

#include "lmopt/Tokenizer/Normalizer.h"

#include "JsonFields.h"
#include "lmopt/Tokenizer/Unicode.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Base64.h"
#include "llvm/Support/Regex.h"

#include <optional>
#include <vector>

using namespace lmopt::tokenizer;
using llvm::Expected;

namespace {

/// BERT's: clean text, space around CJK ideographs, strip accents, lowercase.
class BertNormalizer : public Normalizer {
public:
  bool cleanText = true, handleChinese = true, stripAccents = true,
       lower = true;

  void normalize(std::string &text) const override {
    if (cleanText || handleChinese) {
      std::string out;
      out.reserve(text.size() + text.size() / 4);
      for (size_t pos = 0; pos < text.size();) {
        char32_t c = decodeUtf8(text, pos);
        if (cleanText) {
          if (c == 0 || c == kReplacementChar || isBertControl(c))
            continue;
          if (isWhitespace(c))
            c = ' ';
        }
        if (handleChinese && isChineseChar(c)) {
          out.push_back(' ');
          appendUtf8(out, c);
          out.push_back(' ');
          continue;
        }
        appendUtf8(out, c);
      }
      text = std::move(out);
    }
    if (stripAccents) {
      lmopt::tokenizer::normalize(text, NormalForm::NFD);
      dropIf(text, isNonspacingMark);
    }
    if (lower)
      lowercase(text);
  }

  static void dropIf(std::string &text, bool (*pred)(char32_t)) {
    std::string out;
    out.reserve(text.size());
    for (size_t pos = 0; pos < text.size();) {
      size_t start = pos;
      char32_t c = decodeUtf8(text, pos);
      if (!pred(c))
        out.append(text, start, pos - start);
    }
    text = std::move(out);
  }
};

class UnicodeNormalizer : public Normalizer {
public:
  explicit UnicodeNormalizer(NormalForm form) : form(form) {}
  void normalize(std::string &text) const override {
    lmopt::tokenizer::normalize(text, form);
  }

private:
  NormalForm form;
};

class LowercaseNormalizer : public Normalizer {
public:
  void normalize(std::string &text) const override { lowercase(text); }
};

class StripAccentsNormalizer : public Normalizer {
public:
  void normalize(std::string &text) const override {
    BertNormalizer::dropIf(text, isMark);
  }
};

/// Removes leading and/or trailing white space.
class StripNormalizer : public Normalizer {
public:
  bool left = true, right = true;
  void normalize(std::string &text) const override {
    size_t begin = 0, end = text.size();
    if (left)
      while (begin < end) {
        size_t pos = begin;
        if (!isWhitespace(decodeUtf8(text, pos)))
          break;
        begin = pos;
      }
    if (right)
      while (end > begin) {
        size_t start = end - 1;
        while (start > begin &&
               (static_cast<unsigned char>(text[start]) & 0xC0) == 0x80)
          --start;
        size_t pos = start;
        if (!isWhitespace(decodeUtf8(text, pos)))
          break;
        end = start;
      }
    text = text.substr(begin, end - begin);
  }
};

class PrependNormalizer : public Normalizer {
public:
  std::string prefix;
  void normalize(std::string &text) const override {
    if (!text.empty())
      text.insert(0, prefix);
  }
};

class ReplaceNormalizer : public Normalizer {
public:
  std::string pattern, content;
  void normalize(std::string &text) const override {
    if (pattern.empty())
      return;
    std::string out;
    size_t pos = 0;
    for (size_t hit; (hit = text.find(pattern, pos)) != std::string::npos;
         pos = hit + pattern.size())
      out.append(text, pos, hit - pos).append(content);
    out.append(text, pos, std::string::npos);
    text = std::move(out);
  }
};

/// Replace with a Regex pattern, through LLVM's POSIX extended regular
/// expressions: the patterns converted tokenizers use (" {2,}") mean the
/// same there as in Oniguruma; one LLVM cannot compile is refused.
class RegexReplaceNormalizer : public Normalizer {
public:
  explicit RegexReplaceNormalizer(llvm::Regex regex, std::string content)
      : regex(std::move(regex)), content(std::move(content)) {}
  void normalize(std::string &text) const override {
    std::string out;
    llvm::StringRef rest = text;
    llvm::SmallVector<llvm::StringRef, 1> matches;
    while (!rest.empty() && regex.match(rest, &matches)) {
      size_t at = size_t(matches[0].data() - rest.data());
      size_t length = matches[0].size();
      out.append(rest.data(), at).append(content);
      if (length == 0) {
        // An empty match: keep one character and go on after it.
        size_t next = at;
        decodeUtf8(rest, next);
        out.append(rest.data() + at, next - at);
        length = next - at;
      }
      rest = rest.drop_front(at + length);
    }
    out.append(rest.data(), rest.size());
    text = std::move(out);
  }

private:
  llvm::Regex regex;
  std::string content;
};

/// SentencePiece's normalization rules as `tokenizers` applies them
/// (normalizers/precompiled.rs with spm_precompiled's trie): the charsmap is
/// a Darts double-array trie from UTF-8 strings to offsets of
/// NUL-terminated replacements. Each grapheme shorter than 6 bytes whose
/// bytes start with a key is replaced whole by the replacement of the
/// shortest such key; otherwise each character is looked up on its own.
class PrecompiledNormalizer : public Normalizer {
public:
  std::vector<uint32_t> trie;
  std::string replacements;

  void normalize(std::string &text) const override {
    std::string out;
    out.reserve(text.size());
    for (size_t pos = 0; pos < text.size();) {
      size_t end = graphemeEnd(text, pos);
      llvm::StringRef grapheme(text.data() + pos, end - pos);
      if (grapheme.size() < 6) {
        if (std::optional<llvm::StringRef> norm = transform(grapheme)) {
          out.append(norm->data(), norm->size());
          pos = end;
          continue;
        }
      }
      for (size_t at = pos; at < end;) {
        size_t next = at;
        decodeUtf8(text, next);
        llvm::StringRef part(text.data() + at, next - at);
        std::optional<llvm::StringRef> norm = transform(part);
        out.append(norm ? norm->data() : part.data(),
                   norm ? norm->size() : part.size());
        at = next;
      }
      pos = end;
    }
    text = std::move(out);
  }

private:
  static size_t offsetOf(uint32_t unit) {
    return size_t(unit >> 10) << ((unit & (1u << 9)) >> 6);
  }

  /// The replacement of the shortest key that `chunk` starts with.
  std::optional<llvm::StringRef> transform(llvm::StringRef chunk) const {
    if (trie.empty())
      return std::nullopt;
    size_t node = offsetOf(trie[0]);
    for (unsigned char c : chunk) {
      if (c == 0)
        break;
      node ^= c;
      if (node >= trie.size())
        return std::nullopt;
      uint32_t unit = trie[node];
      if ((unit & ((1u << 31) | 0xFF)) != c)
        return std::nullopt;
      node ^= offsetOf(unit);
      if ((unit >> 8) & 1) {
        if (node >= trie.size())
          return std::nullopt;
        size_t begin = trie[node] & ((1u << 31) - 1);
        if (begin > replacements.size())
          return std::nullopt;
        size_t stop = replacements.find('\0', begin);
        if (stop == std::string::npos)
          stop = replacements.size();
        return llvm::StringRef(replacements.data() + begin, stop - begin);
      }
    }
    return std::nullopt;
  }
};

class SequenceNormalizer : public Normalizer {
public:
  std::vector<std::unique_ptr<Normalizer>> steps;
  void normalize(std::string &text) const override {
    for (const auto &step : steps)
      step->normalize(text);
  }
};

} // namespace

static Expected<std::unique_ptr<Normalizer>> parseBert(const Field &field) {
  auto n = std::make_unique<BertNormalizer>();
  Expected<bool> clean = asBool(member(field, "clean_text"), true);
  Expected<bool> chinese = asBool(member(field, "handle_chinese_chars"), true);
  Expected<bool> lower = asBool(member(field, "lowercase"), true);
  if (!clean)
    return clean.takeError();
  if (!chinese)
    return chinese.takeError();
  if (!lower)
    return lower.takeError();
  // A null strip_accents follows lowercase, as in BERT's original code.
  Expected<bool> strip = asBool(member(field, "strip_accents"), *lower);
  if (!strip)
    return strip.takeError();
  n->cleanText = *clean;
  n->handleChinese = *chinese;
  n->lower = *lower;
  n->stripAccents = *strip;
  return n;
}

static Expected<std::unique_ptr<Normalizer>> parseReplace(const Field &field) {
  auto n = std::make_unique<ReplaceNormalizer>();
  Field pattern = member(field, "pattern");
  Field string = member(pattern, "String");
  Expected<llvm::StringRef> c = asString(member(field, "content"));
  if (!c)
    return c.takeError();
  if (string.isNull()) {
    Field regexField = member(pattern, "Regex");
    if (regexField.isNull())
      return fieldError(pattern.path, "expected a String or a Regex pattern");
    Expected<llvm::StringRef> source = asString(regexField);
    if (!source)
      return source.takeError();
    // Perl's escapes (\s, \d, \p{...}) mean something else, or nothing,
    // to a POSIX engine: refused rather than matched differently.
    for (size_t i = 0; i + 1 < source->size(); ++i)
      if ((*source)[i] == '\\') {
        char next = (*source)[i + 1];
        if (llvm::isAlnum(next))
          return fieldError(regexField.path,
                            "regex '" + source->str() + "' uses the escape '\\" +
                                std::string(1, next) +
                                "', which lmopt's POSIX regexes do not have");
        ++i;
      }
    llvm::Regex regex(*source);
    std::string why;
    if (source->empty() || !regex.isValid(why))
      return fieldError(regexField.path,
                        "regex '" + source->str() +
                            "' is not a POSIX extended regular expression "
                            "lmopt can compile" +
                            (why.empty() ? std::string() : ": " + why));
    return std::make_unique<RegexReplaceNormalizer>(std::move(regex),
                                                    c->str());
  }
  Expected<llvm::StringRef> p = asString(string);
  if (!p)
    return p.takeError();
  n->pattern = p->str();
  n->content = c->str();
  return n;
}

static Expected<std::unique_ptr<Normalizer>>
parsePrecompiled(const Field &field) {
  Field charsmapField = member(field, "precompiled_charsmap");
  Expected<llvm::StringRef> encoded = asString(charsmapField);
  if (!encoded)
    return encoded.takeError();
  std::vector<char> blob;
  if (llvm::Error error = llvm::decodeBase64(*encoded, blob)) {
    llvm::consumeError(std::move(error));
    return fieldError(charsmapField.path, "is not base64");
  }
  auto readU32 = [&](size_t at) {
    uint32_t v = 0;
    for (int i = 3; i >= 0; --i)
      v = (v << 8) | uint8_t(blob[at + size_t(i)]);
    return v;
  };
  if (blob.size() < 4)
    return fieldError(charsmapField.path, "holds no trie size");
  uint32_t trieBytes = readU32(0);
  if (trieBytes % 4 || trieBytes > blob.size() - 4)
    return fieldError(charsmapField.path,
                      "trie of " + std::to_string(trieBytes) +
                          " bytes does not fit in the " +
                          std::to_string(blob.size()) + "-byte charsmap");
  auto n = std::make_unique<PrecompiledNormalizer>();
  n->trie.resize(trieBytes / 4);
  for (size_t i = 0; i < n->trie.size(); ++i)
    n->trie[i] = readU32(4 + 4 * i);
  n->replacements.assign(blob.begin() + 4 + trieBytes, blob.end());
  std::string repaired;
  if (repairUtf8(n->replacements, repaired) != 0)
    return fieldError(charsmapField.path,
                      "replacement strings are not valid UTF-8");
  return n;
}

static Expected<std::unique_ptr<Normalizer>> parseField(const Field &field) {
  if (field.isNull())
    return nullptr;
  Field typeField = member(field, "type");
  Expected<llvm::StringRef> type = asTypedObject(field);
  if (!type)
    return type.takeError();
  if (*type == "BertNormalizer")
    return parseBert(field);
  if (*type == "NFC")
    return std::make_unique<UnicodeNormalizer>(NormalForm::NFC);
  if (*type == "NFD")
    return std::make_unique<UnicodeNormalizer>(NormalForm::NFD);
  if (*type == "NFKC")
    return std::make_unique<UnicodeNormalizer>(NormalForm::NFKC);
  if (*type == "NFKD")
    return std::make_unique<UnicodeNormalizer>(NormalForm::NFKD);
  if (*type == "Lowercase")
    return std::make_unique<LowercaseNormalizer>();
  if (*type == "StripAccents")
    return std::make_unique<StripAccentsNormalizer>();
  if (*type == "Strip") {
    auto n = std::make_unique<StripNormalizer>();
    Expected<bool> left = asBool(member(field, "strip_left"), true);
    Expected<bool> right = asBool(member(field, "strip_right"), true);
    if (!left)
      return left.takeError();
    if (!right)
      return right.takeError();
    n->left = *left;
    n->right = *right;
    return n;
  }
  if (*type == "Prepend") {
    auto n = std::make_unique<PrependNormalizer>();
    Expected<llvm::StringRef> p = asString(member(field, "prepend"));
    if (!p)
      return p.takeError();
    n->prefix = p->str();
    return n;
  }
  if (*type == "Replace")
    return parseReplace(field);
  if (*type == "Precompiled")
    return parsePrecompiled(field);
  if (*type == "Sequence") {
    auto n = std::make_unique<SequenceNormalizer>();
    Field list = member(field, "normalizers");
    Expected<const llvm::json::Array *> array = asArray(list);
    if (!array)
      return array.takeError();
    for (size_t i = 0; i < (*array)->size(); ++i) {
      Expected<std::unique_ptr<Normalizer>> step =
          parseField(list.element(i, &(**array)[i]));
      if (!step)
        return step.takeError();
      if (*step)
        n->steps.push_back(std::move(*step));
    }
    return n;
  }
  return fieldError(typeField.path,
                    "unsupported normalizer '" + *type +
                        "' (supported: BertNormalizer, NFC, NFD, NFKC, NFKD, "
                        "Lowercase, StripAccents, Strip, Prepend, Replace, "
                        "Precompiled, Sequence)");
}

Expected<std::unique_ptr<Normalizer>>
lmopt::tokenizer::parseNormalizer(const llvm::json::Value *value,
                                  const std::string &path) {
  return parseField(Field{value, path});
}

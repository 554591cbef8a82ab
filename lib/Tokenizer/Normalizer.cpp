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
  if (string.isNull())
    return fieldError(pattern.path,
                      "only a String pattern is supported (not a Regex)");
  Expected<llvm::StringRef> p = asString(string);
  if (!p)
    return p.takeError();
  Expected<llvm::StringRef> c = asString(member(field, "content"));
  if (!c)
    return c.takeError();
  n->pattern = p->str();
  n->content = c->str();
  return n;
}

static Expected<std::unique_ptr<Normalizer>> parseField(const Field &field) {
  if (field.isNull())
    return nullptr;
  if (Expected<const llvm::json::Object *> o = asObject(field); !o)
    return o.takeError();
  Field typeField = member(field, "type");
  Expected<llvm::StringRef> type = asString(typeField);
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
                        "Sequence)");
}

Expected<std::unique_ptr<Normalizer>>
lmopt::tokenizer::parseNormalizer(const llvm::json::Value *value,
                                  const std::string &path) {
  return parseField(Field{value, path});
}

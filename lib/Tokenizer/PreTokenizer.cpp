//===- PreTokenizer.cpp - tokenizer.json pre-tokenizers -------------------===//

#include "lmopt/Tokenizer/PreTokenizer.h"

#include "JsonFields.h"
#include "lmopt/Tokenizer/Unicode.h"

#include <array>

using namespace lmopt::tokenizer;
using llvm::Expected;
using llvm::StringRef;

namespace {

/// Splits `text` on white space (dropped) and, with `punctuation`, isolates
/// each of BERT's punctuation characters as a word of its own.
static void splitWords(StringRef text, bool punctuation,
                       std::vector<std::string> &words) {
  size_t wordStart = 0;
  for (size_t pos = 0; pos < text.size();) {
    size_t start = pos;
    char32_t c = decodeUtf8(text, pos);
    bool space = isWhitespace(c);
    if (!space && !(punctuation && isBertPunctuation(c)))
      continue;
    if (start > wordStart)
      words.emplace_back(text.substr(wordStart, start - wordStart));
    if (!space)
      words.emplace_back(text.substr(start, pos - start));
    wordStart = pos;
  }
  if (text.size() > wordStart)
    words.emplace_back(text.substr(wordStart));
}

/// Splits on white space (dropped) and isolates each punctuation character.
class BertPreTokenizer : public PreTokenizer {
public:
  void split(StringRef text, bool,
             std::vector<std::string> &words) const override {
    splitWords(text, /*punctuation=*/true, words);
  }
};

class WhitespaceSplit : public PreTokenizer {
public:
  void split(StringRef text, bool,
             std::vector<std::string> &words) const override {
    splitWords(text, /*punctuation=*/false, words);
  }
};

/// GPT-2's pre-tokenizer: the regex split, then each byte mapped to a
/// printable code point (bytes_to_unicode in GPT-2's encoder.py).
class ByteLevel : public PreTokenizer {
public:
  bool addPrefixSpace = true, useRegex = true;

  ByteLevel() {
    std::array<bool, 256> direct{};
    for (int b = '!'; b <= '~'; ++b)
      direct[b] = true;
    for (int b = 0xA1; b <= 0xAC; ++b)
      direct[b] = true;
    for (int b = 0xAE; b <= 0xFF; ++b)
      direct[b] = true;
    char32_t next = 256;
    for (int b = 0; b < 256; ++b) {
      char32_t c = direct[b] ? char32_t(b) : next++;
      appendUtf8(byteChars[b], c);
    }
  }

  void split(StringRef text, bool,
             std::vector<std::string> &words) const override {
    std::string prefixed;
    if (addPrefixSpace && !text.starts_with(" ")) {
      prefixed = " " + text.str();
      text = prefixed;
    }
    std::vector<StringRef> pieces;
    if (useRegex)
      splitGpt2(text, pieces);
    else if (!text.empty())
      pieces.push_back(text);
    for (StringRef piece : pieces) {
      std::string &word = words.emplace_back();
      word.reserve(piece.size() * 2);
      for (char b : piece)
        word += byteChars[static_cast<unsigned char>(b)];
    }
  }

private:
  std::array<std::string, 256> byteChars;
};

/// SentencePiece's: spaces become the replacement character, which starts
/// each word.
class Metaspace : public PreTokenizer {
public:
  std::string replacement = "\xE2\x96\x81"; // U+2581
  enum class Prepend { Always, First, Never } prepend = Prepend::Always;
  bool splitWords = true;

  void split(StringRef text, bool atStart,
             std::vector<std::string> &words) const override {
    std::string out;
    out.reserve(text.size() + replacement.size());
    for (char c : text) {
      if (c == ' ')
        out += replacement;
      else
        out.push_back(c);
    }
    bool prependHere =
        prepend == Prepend::Always || (prepend == Prepend::First && atStart);
    if (prependHere && !StringRef(out).starts_with(replacement))
      out.insert(0, replacement);
    if (!splitWords) {
      if (!out.empty())
        words.push_back(std::move(out));
      return;
    }
    // Each replacement begins a new word (merged with what follows it).
    size_t wordStart = 0;
    for (size_t hit = out.find(replacement, 1); hit != std::string::npos;
         hit = out.find(replacement, hit + replacement.size())) {
      if (hit > wordStart)
        words.emplace_back(out, wordStart, hit - wordStart);
      wordStart = hit;
    }
    if (out.size() > wordStart)
      words.emplace_back(out, wordStart, std::string::npos);
  }
};

class SequencePreTokenizer : public PreTokenizer {
public:
  std::vector<std::unique_ptr<PreTokenizer>> steps;
  void split(StringRef text, bool atStart,
             std::vector<std::string> &words) const override {
    std::vector<std::string> current{text.str()}, next;
    for (const auto &step : steps) {
      next.clear();
      for (size_t i = 0; i < current.size(); ++i)
        step->split(current[i], atStart && i == 0, next);
      std::swap(current, next);
    }
    for (std::string &w : current)
      words.push_back(std::move(w));
  }
};

} // namespace

void lmopt::tokenizer::splitGpt2(StringRef text,
                                 std::vector<StringRef> &pieces) {
  // Code points with their byte offsets; offsets[i + 1] ends chars[i].
  std::vector<char32_t> chars;
  std::vector<size_t> offsets{0};
  chars.reserve(text.size());
  offsets.reserve(text.size() + 1);
  for (size_t pos = 0; pos < text.size();) {
    chars.push_back(decodeUtf8(text, pos));
    offsets.push_back(pos);
  }
  size_t n = chars.size();
  for (size_t i = 0; i < n;) {
    size_t end = i;
    char32_t c = chars[i];
    // 's|'t|'re|'ve|'m|'ll|'d
    if (c == '\'' && i + 1 < n) {
      char32_t a = chars[i + 1], b = i + 2 < n ? chars[i + 2] : 0;
      if (a == 's' || a == 't' || a == 'm' || a == 'd')
        end = i + 2;
      else if ((a == 'r' && b == 'e') || (a == 'v' && b == 'e') ||
               (a == 'l' && b == 'l'))
        end = i + 3;
    }
    if (end == i) {
      // ` ?\p{L}+`, ` ?\p{N}+`, ` ?[^\s\p{L}\p{N}]+`
      size_t j = c == ' ' && i + 1 < n ? i + 1 : i;
      for (bool (*cls)(char32_t) : {+[](char32_t x) { return isLetter(x); },
                                    +[](char32_t x) { return isNumber(x); },
                                    +[](char32_t x) {
                                      return !isWhitespace(x) && !isLetter(x) &&
                                             !isNumber(x);
                                    }}) {
        if (!cls(chars[j]))
          continue;
        end = j + 1;
        while (end < n && cls(chars[end]))
          ++end;
        break;
      }
    }
    if (end == i && isWhitespace(c)) {
      // `\s+(?!\S)` backs off one character before a non-space; a single
      // space before one falls through to `\s+`.
      size_t runEnd = i + 1;
      while (runEnd < n && isWhitespace(chars[runEnd]))
        ++runEnd;
      end = runEnd;
      if (runEnd < n && runEnd - i > 1)
        end = runEnd - 1;
    }
    if (end == i) // Not reached: the alternatives cover every character.
      end = i + 1;
    pieces.push_back(text.slice(offsets[i], offsets[end]));
    i = end;
  }
}

static Expected<std::unique_ptr<PreTokenizer>> parseField(const Field &field) {
  if (field.isNull())
    return nullptr;
  Field typeField = member(field, "type");
  Expected<StringRef> type = asTypedObject(field);
  if (!type)
    return type.takeError();
  if (*type == "BertPreTokenizer")
    return std::make_unique<BertPreTokenizer>();
  if (*type == "WhitespaceSplit")
    return std::make_unique<WhitespaceSplit>();
  if (*type == "ByteLevel") {
    auto p = std::make_unique<ByteLevel>();
    Expected<bool> prefix = asBool(member(field, "add_prefix_space"), true);
    Expected<bool> regex = asBool(member(field, "use_regex"), true);
    if (!prefix)
      return prefix.takeError();
    if (!regex)
      return regex.takeError();
    p->addPrefixSpace = *prefix;
    p->useRegex = *regex;
    return p;
  }
  if (*type == "Metaspace") {
    auto p = std::make_unique<Metaspace>();
    Field rep = member(field, "replacement");
    Expected<StringRef> r = asString(rep);
    if (!r)
      return r.takeError();
    if (countChars(*r) != 1)
      return fieldError(rep.path, "expected one character, got '" + *r + "'");
    p->replacement = r->str();
    Field scheme = member(field, "prepend_scheme");
    if (!scheme.isNull()) {
      Expected<StringRef> s = asString(scheme);
      if (!s)
        return s.takeError();
      if (*s == "always")
        p->prepend = Metaspace::Prepend::Always;
      else if (*s == "first")
        p->prepend = Metaspace::Prepend::First;
      else if (*s == "never")
        p->prepend = Metaspace::Prepend::Never;
      else
        return fieldError(scheme.path,
                          "unknown prepend scheme '" + *s +
                              "' (expected always, first or never)");
    } else {
      // Files from before prepend_scheme say add_prefix_space.
      Expected<bool> prefix = asBool(member(field, "add_prefix_space"), true);
      if (!prefix)
        return prefix.takeError();
      p->prepend =
          *prefix ? Metaspace::Prepend::Always : Metaspace::Prepend::Never;
    }
    Expected<bool> split = asBool(member(field, "split"), true);
    if (!split)
      return split.takeError();
    p->splitWords = *split;
    return p;
  }
  if (*type == "Sequence") {
    auto p = std::make_unique<SequencePreTokenizer>();
    Field list = member(field, "pretokenizers");
    Expected<const llvm::json::Array *> array = asArray(list);
    if (!array)
      return array.takeError();
    for (size_t i = 0; i < (*array)->size(); ++i) {
      Expected<std::unique_ptr<PreTokenizer>> step =
          parseField(list.element(i, &(**array)[i]));
      if (!step)
        return step.takeError();
      if (*step)
        p->steps.push_back(std::move(*step));
    }
    return p;
  }
  return fieldError(typeField.path,
                    "unsupported pre-tokenizer '" + *type +
                        "' (supported: BertPreTokenizer, ByteLevel, "
                        "Metaspace, WhitespaceSplit, Sequence)");
}

Expected<std::unique_ptr<PreTokenizer>>
lmopt::tokenizer::parsePreTokenizer(const llvm::json::Value *value,
                                    const std::string &path) {
  return parseField(Field{value, path});
}

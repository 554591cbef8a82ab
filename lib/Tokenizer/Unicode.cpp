//===- Unicode.cpp - UTF-8 and Unicode properties for tokenizers ----------===//

#include "lmopt/Tokenizer/Unicode.h"

#include <cstdlib>
#include <utf8proc.h>

using namespace lmopt::tokenizer;

/// Length of the longest prefix of `s` (at most one code point) that begins
/// a well-formed sequence; `complete` says whether it is a whole one.
static size_t validPrefix(const unsigned char *s, size_t n, bool &complete) {
  complete = false;
  unsigned char b0 = s[0];
  size_t need;
  unsigned char lo = 0x80, hi = 0xBF;
  if (b0 < 0x80) {
    complete = true;
    return 1;
  }
  if (b0 >= 0xC2 && b0 <= 0xDF) {
    need = 2;
  } else if (b0 >= 0xE0 && b0 <= 0xEF) {
    need = 3;
    if (b0 == 0xE0)
      lo = 0xA0;
    else if (b0 == 0xED)
      hi = 0x9F;
  } else if (b0 >= 0xF0 && b0 <= 0xF4) {
    need = 4;
    if (b0 == 0xF0)
      lo = 0x90;
    else if (b0 == 0xF4)
      hi = 0x8F;
  } else {
    return 0;
  }
  size_t len = 1;
  for (; len < need && len < n; ++len) {
    unsigned char b = s[len];
    // Only the second byte has a narrowed range.
    unsigned char l = len == 1 ? lo : 0x80, h = len == 1 ? hi : 0xBF;
    if (b < l || b > h)
      return len;
  }
  complete = len == need;
  return len;
}

size_t lmopt::tokenizer::repairUtf8(llvm::StringRef bytes, std::string &out) {
  out.clear();
  out.reserve(bytes.size());
  const auto *s = reinterpret_cast<const unsigned char *>(bytes.data());
  size_t n = bytes.size(), replaced = 0;
  for (size_t i = 0; i < n;) {
    bool complete;
    size_t len = validPrefix(s + i, n - i, complete);
    if (complete) {
      out.append(bytes.data() + i, len);
      i += len;
      continue;
    }
    appendUtf8(out, kReplacementChar);
    ++replaced;
    i += len ? len : 1;
  }
  return replaced;
}

char32_t lmopt::tokenizer::decodeUtf8(llvm::StringRef text, size_t &pos) {
  const auto *s = reinterpret_cast<const unsigned char *>(text.data()) + pos;
  unsigned char b0 = s[0];
  if (b0 < 0x80) {
    pos += 1;
    return b0;
  }
  if (b0 < 0xE0) {
    pos += 2;
    return (char32_t(b0 & 0x1F) << 6) | (s[1] & 0x3F);
  }
  if (b0 < 0xF0) {
    pos += 3;
    return (char32_t(b0 & 0x0F) << 12) | (char32_t(s[1] & 0x3F) << 6) |
           (s[2] & 0x3F);
  }
  pos += 4;
  return (char32_t(b0 & 0x07) << 18) | (char32_t(s[1] & 0x3F) << 12) |
         (char32_t(s[2] & 0x3F) << 6) | (s[3] & 0x3F);
}

void lmopt::tokenizer::appendUtf8(std::string &out, char32_t c) {
  if (c < 0x80) {
    out.push_back(char(c));
  } else if (c < 0x800) {
    out.push_back(char(0xC0 | (c >> 6)));
    out.push_back(char(0x80 | (c & 0x3F)));
  } else if (c < 0x10000) {
    out.push_back(char(0xE0 | (c >> 12)));
    out.push_back(char(0x80 | ((c >> 6) & 0x3F)));
    out.push_back(char(0x80 | (c & 0x3F)));
  } else {
    out.push_back(char(0xF0 | (c >> 18)));
    out.push_back(char(0x80 | ((c >> 12) & 0x3F)));
    out.push_back(char(0x80 | ((c >> 6) & 0x3F)));
    out.push_back(char(0x80 | (c & 0x3F)));
  }
}

size_t lmopt::tokenizer::countChars(llvm::StringRef text) {
  size_t count = 0;
  for (char c : text)
    count += (static_cast<unsigned char>(c) & 0xC0) != 0x80;
  return count;
}

size_t lmopt::tokenizer::graphemeEnd(llvm::StringRef text, size_t pos) {
  utf8proc_int32_t state = 0;
  char32_t previous = decodeUtf8(text, pos);
  while (pos < text.size()) {
    size_t next = pos;
    char32_t c = decodeUtf8(text, next);
    if (utf8proc_grapheme_break_stateful(
            static_cast<utf8proc_int32_t>(previous),
            static_cast<utf8proc_int32_t>(c), &state))
      break;
    previous = c;
    pos = next;
  }
  return pos;
}

static utf8proc_category_t category(char32_t c) {
  return utf8proc_category(static_cast<utf8proc_int32_t>(c));
}

bool lmopt::tokenizer::isWhitespace(char32_t c) {
  if (c < 0x80)
    return c == ' ' || (c >= 0x09 && c <= 0x0D);
  if (c == 0x85)
    return true;
  utf8proc_category_t cat = category(c);
  return cat == UTF8PROC_CATEGORY_ZS || cat == UTF8PROC_CATEGORY_ZL ||
         cat == UTF8PROC_CATEGORY_ZP;
}

bool lmopt::tokenizer::isLetter(char32_t c) {
  if (c < 0x80)
    return (c | 0x20) >= 'a' && (c | 0x20) <= 'z';
  utf8proc_category_t cat = category(c);
  return cat >= UTF8PROC_CATEGORY_LU && cat <= UTF8PROC_CATEGORY_LO;
}

bool lmopt::tokenizer::isNumber(char32_t c) {
  if (c < 0x80)
    return c >= '0' && c <= '9';
  utf8proc_category_t cat = category(c);
  return cat >= UTF8PROC_CATEGORY_ND && cat <= UTF8PROC_CATEGORY_NO;
}

bool lmopt::tokenizer::isBertPunctuation(char32_t c) {
  if ((c >= 33 && c <= 47) || (c >= 58 && c <= 64) || (c >= 91 && c <= 96) ||
      (c >= 123 && c <= 126))
    return true;
  utf8proc_category_t cat = category(c);
  return cat >= UTF8PROC_CATEGORY_PC && cat <= UTF8PROC_CATEGORY_PO;
}

bool lmopt::tokenizer::isBertControl(char32_t c) {
  if (c == '\t' || c == '\n' || c == '\r')
    return false;
  utf8proc_category_t cat = category(c);
  return cat == UTF8PROC_CATEGORY_CC || cat == UTF8PROC_CATEGORY_CF ||
         cat == UTF8PROC_CATEGORY_CO || cat == UTF8PROC_CATEGORY_CS;
}

bool lmopt::tokenizer::isChineseChar(char32_t c) {
  return (c >= 0x4E00 && c <= 0x9FFF) || (c >= 0x3400 && c <= 0x4DBF) ||
         (c >= 0x20000 && c <= 0x2A6DF) || (c >= 0x2A700 && c <= 0x2B73F) ||
         (c >= 0x2B740 && c <= 0x2B81F) || (c >= 0x2B920 && c <= 0x2CEAF) ||
         (c >= 0xF900 && c <= 0xFAFF) || (c >= 0x2F800 && c <= 0x2FA1F);
}

bool lmopt::tokenizer::isNonspacingMark(char32_t c) {
  return c >= 0x300 && category(c) == UTF8PROC_CATEGORY_MN;
}

bool lmopt::tokenizer::isMark(char32_t c) {
  if (c < 0x300)
    return false;
  utf8proc_category_t cat = category(c);
  return cat >= UTF8PROC_CATEGORY_MN && cat <= UTF8PROC_CATEGORY_ME;
}

void lmopt::tokenizer::normalize(std::string &text, NormalForm form) {
  // ASCII is invariant under every form.
  bool ascii = true;
  for (char c : text)
    ascii &= static_cast<unsigned char>(c) < 0x80;
  if (ascii)
    return;
  int options = UTF8PROC_STABLE;
  switch (form) {
  case NormalForm::NFC:
    options |= UTF8PROC_COMPOSE;
    break;
  case NormalForm::NFD:
    options |= UTF8PROC_DECOMPOSE;
    break;
  case NormalForm::NFKC:
    options |= UTF8PROC_COMPOSE | UTF8PROC_COMPAT;
    break;
  case NormalForm::NFKD:
    options |= UTF8PROC_DECOMPOSE | UTF8PROC_COMPAT;
    break;
  }
  utf8proc_uint8_t *result = nullptr;
  utf8proc_ssize_t len =
      utf8proc_map(reinterpret_cast<const utf8proc_uint8_t *>(text.data()),
                   static_cast<utf8proc_ssize_t>(text.size()), &result,
                   static_cast<utf8proc_option_t>(options));
  // The text was repaired on entry, so utf8proc only fails without memory;
  // the text then stays as it was.
  if (len >= 0)
    text.assign(reinterpret_cast<const char *>(result), size_t(len));
  std::free(result);
}

void lmopt::tokenizer::lowercase(std::string &text) {
  std::string out;
  out.reserve(text.size());
  for (size_t pos = 0; pos < text.size();) {
    char32_t c = decodeUtf8(text, pos);
    if (c < 0x80) {
      out.push_back(char(c >= 'A' && c <= 'Z' ? c + 32 : c));
    } else if (c == 0x130) {
      // The one unconditional multi-character lowercase mapping.
      out.push_back('i');
      appendUtf8(out, 0x307);
    } else {
      appendUtf8(out, char32_t(utf8proc_tolower(utf8proc_int32_t(c))));
    }
  }
  text = std::move(out);
}

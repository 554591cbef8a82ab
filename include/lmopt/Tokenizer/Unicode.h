//===- Unicode.h - UTF-8 and Unicode properties for tokenizers --*- C++ -*-===//
//
// The character classes and normalization forms Hugging Face tokenizers
// use, answered by utf8proc (general categories, case mapping,
// normalization) rather than hand-written tables, and the repair of invalid
// UTF-8 that every text goes through before tokenization.
//
//===----------------------------------------------------------------------===//

#ifndef LMOPT_TOKENIZER_UNICODE_H
#define LMOPT_TOKENIZER_UNICODE_H

#include "llvm/ADT/StringRef.h"

#include <cstddef>
#include <string>

namespace lmopt::tokenizer {

/// U+FFFD, which replaces each maximal invalid subsequence.
inline constexpr char32_t kReplacementChar = 0xFFFD;

/// Copies `bytes` into `out`, replacing every maximal subpart of an invalid
/// UTF-8 sequence by U+FFFD (Unicode's recommended practice, which Python's
/// `bytes.decode(errors="replace")` also follows). Returns the number of
/// replacements.
size_t repairUtf8(llvm::StringRef bytes, std::string &out);

/// Decodes the code point at `pos` of valid UTF-8 text and advances `pos`.
char32_t decodeUtf8(llvm::StringRef text, size_t &pos);
/// Appends the UTF-8 encoding of `c`.
void appendUtf8(std::string &out, char32_t c);
/// Number of code points of valid UTF-8 text.
size_t countChars(llvm::StringRef text);

/// Unicode White_Space (Rust's `char::is_whitespace`, the regex `\s`).
bool isWhitespace(char32_t c);
/// Letters: general categories Lu, Ll, Lt, Lm, Lo (`\p{L}`).
bool isLetter(char32_t c);
/// Numbers: Nd, Nl, No (`\p{N}`).
bool isNumber(char32_t c);
/// Punctuation: the P* categories, or ASCII punctuation (BERT's rule).
bool isBertPunctuation(char32_t c);
/// What BERT's text cleaning removes: Cc, Cf, Co, Cs except tab, newline
/// and carriage return.
bool isBertControl(char32_t c);
/// The CJK ideograph blocks BERT surrounds with spaces.
bool isChineseChar(char32_t c);
/// Nonspacing marks (Mn), which BERT's accent stripping drops.
bool isNonspacingMark(char32_t c);
/// Any mark (Mn, Mc, Me), which the StripAccents normalizer drops.
bool isMark(char32_t c);

enum class NormalForm { NFC, NFD, NFKC, NFKD };
/// Normalizes valid UTF-8 text in place.
void normalize(std::string &text, NormalForm form);
/// Full lowercase mapping of each code point, as Rust's
/// `char::to_lowercase` (U+0130 becomes "i\u0307").
void lowercase(std::string &text);

/// The end of the extended grapheme cluster (UAX #29, utf8proc's rules)
/// that starts at byte `pos` of valid UTF-8 `text`.
size_t graphemeEnd(llvm::StringRef text, size_t pos);

} // namespace lmopt::tokenizer

#endif // LMOPT_TOKENIZER_UNICODE_H

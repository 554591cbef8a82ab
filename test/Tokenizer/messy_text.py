#!/usr/bin/env python3
"""Writes deterministic messy multilingual text, one example per line.

The lines mix scripts (accented Latin, Greek, Cyrillic, Arabic, Hebrew,
Devanagari, Thai, CJK, kana, Hangul), emoji (modifiers, ZWJ sequences,
flags), combining marks, fullwidth forms and ligatures (for NFKC), control
and format characters, whitespace runs (tabs, NBSP, ideographic space),
long words, digits and punctuation, literal special tokens, empty lines,
and invalid UTF-8 (stray continuation bytes, truncated sequences, overlong
forms, encoded surrogates, bytes never valid). Characters come from fixed
lists assigned long ago, so that the Unicode versions of utf8proc and of the
`tokenizers` library agree on them.

  messy_text.py --lines 10000 --seed 0 -o messy.txt
"""

import argparse
import os
import random

WORDS = [
    "the", "quick", "brown", "fox", "jumps", "over", "lazy", "dog", "Hello",
    "WORLD", "tokenizer", "compiler", "transformer", "don't", "I'LL", "we've",
    "they're", "it's", "o'clock", "rock'n'roll", "e-mail", "state-of-the-art",
    "naïve", "café", "Ångström", "Straße", "façade", "résumé", "Zürich",
    "İstanbul", "ǅemal", "ΣΟΦΙΑ", "λόγος", "Москва", "привет", "مرحبا",
    "שלום", "नमस्ते", "สวัสดี", "東京", "中文字符", "日本語", "ひらがな", "カタカナ",
    "한국어", "안녕하세요", "ＡＢＣ", "ｆｕｌｌｗｉｄｔｈ", "ﬁle", "ﬂow", "𝒳𝒴",
    "Ⅻ", "x²", "½", "①", "e\u0301te\u0301", "n\u0303", "a\u0308\u0304",
    "😀", "👍🏽", "🇫🇷", "👨\u200d👩\u200d👧", "❤️", "🙂🙃", "✨",
    "3.14159", "1,000,000", "42", "٣٤٥", "२०२६", "0x1F", "v1.2.3",
    "https://example.com/a?b=c&d=e", "user@example.org", "#hashtag",
    "@mention", "C++", "<tag>", "[CLS]", "[SEP]", "<s>", "</s>", "<unk>",
    "<|endoftext|>", "\u2581meta", "##sub",
]
PUNCT = list(".,;:!?-—–…'\"()[]{}«»“”‘’¿¡·、。，！？《》/\\|@#$%^&*_+=~`<>")
SPACES = [" ", "  ", "\t", "   ", "\u00a0", "\u3000", "\u2003", " \t ",
          "\u2028", "\u200b", "\ufeff"]
CONTROLS = ["\x00", "\x01", "\x07", "\x0b", "\x0c", "\x1b", "\x1f", "\x7f",
            "\u0085", "\u00ad", "\u200e", "\ue000", "\r"]
INVALID = [b"\xff", b"\xfe", b"\x80", b"\xbf\xbf", b"\xc3", b"\xe2\x82",
           b"\xf0\x9f\x98", b"\xc0\xaf", b"\xed\xa0\x80", b"\xf8\x88\x80\x80",
           b"\xf4\x90\x80\x80", b"\xe0\x80\xaf"]
LETTERS = "abcdefghijklmnopqrstuvwxyzéüøçñ"


def long_word(rng):
    n = rng.choice([60, 99, 100, 101, 150, 300])
    return "".join(rng.choice(LETTERS) for _ in range(n))


def line(rng):
    kind = rng.random()
    if kind < 0.02:
        return b""
    if kind < 0.04:
        return rng.choice(SPACES).encode() * rng.randint(1, 4)
    parts = []
    for _ in range(rng.randint(1, 40)):
        r = rng.random()
        if r < 0.55:
            parts.append(rng.choice(WORDS).encode())
        elif r < 0.70:
            parts.append(rng.choice(PUNCT).encode())
        elif r < 0.80:
            parts.append(rng.choice(SPACES).encode())
        elif r < 0.86:
            parts.append(rng.choice(CONTROLS).encode())
        elif r < 0.91:
            parts.append(INVALID[rng.randrange(len(INVALID))])
        elif r < 0.93:
            parts.append(long_word(rng).encode())
        else:
            parts.append(str(rng.randint(0, 10**rng.randint(1, 9))).encode())
        parts.append(b" " if rng.random() < 0.7 else b"")
    return b"".join(parts)


def generate(lines, seed):
    rng = random.Random(seed)
    return [line(rng) for _ in range(lines)]


def write_corpus(lines, seed, folder):
    """Generates the text, writes it to folder/text.txt one line per example,
    and returns (raw lines, the file's path, the lines as the decoded str a
    Python tokenizer is given: a trailing CR dropped, bad UTF-8 replaced)."""
    raw = generate(lines, seed)
    path = os.path.join(folder, "text.txt")
    with open(path, "wb") as f:
        f.write(b"\n".join(raw) + b"\n")
    texts = [(l[:-1] if l.endswith(b"\r") else l)
             .decode("utf-8", errors="replace") for l in raw]
    return raw, path, texts


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lines", type=int, default=10000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("-o", "--output", required=True)
    args = parser.parse_args()
    with open(args.output, "wb") as f:
        f.write(b"\n".join(generate(args.lines, args.seed)) + b"\n")


if __name__ == "__main__":
    main()

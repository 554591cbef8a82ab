#!/usr/bin/env python3
"""lmopt training steps against PyTorch eager on the same model and data.

Builds a Hugging Face BertForSequenceClassification from a config (random
weights, nothing downloaded; BERT-base by default), exports it to ONNX,
compiles a training bundle with `lmopt-compile --train` (AdamW, decay
groups, clipping 1.0, dropout off), and times optimizer steps of
`lmopt-train` and of PyTorch eager (torch.optim.AdamW with the same decay
groups, clip_grad_norm_ 1.0, model.eval() so dropout is off) at the same
batch, sequence and thread count, in one run. Prints seconds per step
(after one warm-up step), the ratio lmopt / PyTorch, each process's peak
resident memory (VmHWM, which does not count the bench's own memory the way
a child's ru_maxrss does), and both first-step losses (same weights and
batch).

With --dropout P: the model has dropout P (hidden and attention
probabilities) and is exported in training mode; lmopt runs it with dropout
on (Philox masks) and compiled with --disable-dropout, PyTorch in train()
and eval() mode: the seed's claim that turning dropout off speeds training
up, on both.

With --precision bf16: lmopt-compile --precision=bf16 (bf16 products into
f32, f32 parameters and optimizer) against PyTorch under
torch.autocast("cpu", dtype=torch.bfloat16) (the same split).

usage: bench/compare_train.py [--config base|small] [--batch 8] [--seq 128]
                              [--steps 5] [--threads 2] [--build build]
                              [--precision fp32|bf16] [--dropout P] [--keep]
"""
import argparse
import atexit
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
from classifier_onnx import export_classifier  # noqa: E402

CONFIGS = {
    # BERT-base: 110M parameters.
    "base": dict(hidden_size=768, num_hidden_layers=12, num_attention_heads=12,
                 intermediate_size=3072),
    # A quick check of the bench itself.
    "small": dict(hidden_size=256, num_hidden_layers=4, num_attention_heads=4,
                  intermediate_size=1024),
}

PYTORCH = r"""
import resource, sys, time, numpy as np, torch
from fnmatch import fnmatch
torch.set_num_threads(int(sys.argv[3]))
model = torch.load(sys.argv[1], weights_only=False)
dropout = sys.argv[7] == "on"
model.train(dropout)
data = np.load(sys.argv[2])
steps = int(sys.argv[4])
names = {n for n, _ in model.named_parameters()}
no_decay = [p for n, p in model.named_parameters() if n.endswith("bias") or "LayerNorm" in n]
decay = [p for n, p in model.named_parameters() if not (n.endswith("bias") or "LayerNorm" in n)]
opt = torch.optim.AdamW([{"params": decay, "weight_decay": 0.01},
                         {"params": no_decay, "weight_decay": 0.0}], lr=float(sys.argv[5]))
batch = {k: torch.from_numpy(data[k]) for k in data.files}
labels = batch.pop("labels")
times, losses = [], []
bf16 = sys.argv[6] == "bf16"
for step in range(steps + 1):
    start = time.perf_counter()
    opt.zero_grad(set_to_none=True)
    with torch.autocast("cpu", dtype=torch.bfloat16, enabled=bf16):
        logits = model(**batch).logits
        loss = torch.nn.functional.cross_entropy(logits.float(), labels)
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    opt.step()
    times.append(time.perf_counter() - start)
    losses.append(loss.item())
print("first_loss", losses[0])
print("step_seconds", sum(times[1:]) / steps)
# VmHWM starts anew at exec; ru_maxrss would count the bench's own memory,
# which a forked child inherits as its high-water mark.
print("peak_rss_kib", next(int(line.split()[1]) for line in open("/proc/self/status")
                           if line.startswith("VmHWM:")))
"""


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--config", default="base", choices=CONFIGS)
    parser.add_argument("--batch", type=int, default=8)
    parser.add_argument("--seq", type=int, default=128)
    parser.add_argument("--steps", type=int, default=5)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--lr", type=float, default=2e-5)
    parser.add_argument("--build", default=os.path.join(ROOT, "build"))
    parser.add_argument("--precision", default="fp32", choices=("fp32", "bf16"))
    parser.add_argument("--dropout", type=float, default=0.0)
    parser.add_argument("--keep", action="store_true",
                        help="keep the work folder (model, data, bundles; "
                             "1.3 GB for BERT-base) and print its path")
    args = parser.parse_args()

    import torch
    from transformers import BertConfig, BertForSequenceClassification

    work = tempfile.mkdtemp(prefix="lmopt-train-bench-")
    if args.keep:
        print(f"work folder: {work}")
    else:
        atexit.register(shutil.rmtree, work, ignore_errors=True)
    torch.manual_seed(0)
    config = BertConfig(vocab_size=30522, max_position_embeddings=512,
                        num_labels=2, hidden_dropout_prob=args.dropout,
                        attention_probs_dropout_prob=args.dropout,
                        attn_implementation="eager", **CONFIGS[args.config])
    model = BertForSequenceClassification(config).eval()
    rng = np.random.default_rng(0)
    b, s = args.batch, args.seq
    data = {
        "input_ids": rng.integers(1000, 30000, (b, s), dtype=np.int64),
        "attention_mask": np.ones((b, s), dtype=np.int64),
        "token_type_ids": np.zeros((b, s), dtype=np.int64),
        "labels": rng.integers(0, 2, (b,), dtype=np.int64),
    }
    data["attention_mask"][-1, s * 3 // 4:] = 0
    data_path = os.path.join(work, "data.npz")
    np.savez(data_path, **data)
    onnx_path = os.path.join(work, "model.onnx")

    # With dropout, a training-mode export keeps the Dropout nodes.
    export_classifier(model, data, onnx_path, training=bool(args.dropout))
    torch_path = os.path.join(work, "model.pt")
    torch.save(model, torch_path)

    bin_dir = os.path.join(args.build, "bin")
    shapes = [f"--input-shape={n}:{b}x{s}" for n in
              ("input_ids", "attention_mask", "token_type_ids")]
    env = dict(os.environ, OMP_NUM_THREADS=str(args.threads))

    def compile_bundle(name, dropout):
        bundle = os.path.join(work, name)
        start = time.perf_counter()
        subprocess.run([os.path.join(bin_dir, "lmopt-compile"), onnx_path,
                        "--train", "--loss=cross-entropy:logits,labels",
                        f"--lr={args.lr}", "--weight-decay=0.01",
                        "--clip-norm=1.0", "--lr-schedule=constant",
                        f"--precision={args.precision}", *shapes,
                        *([] if dropout else ["--disable-dropout"]),
                        "-o", bundle],
                       check=True, stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL)
        return bundle, time.perf_counter() - start

    def run_lmopt(bundle):
        losses = bundle + ".losses.txt"
        lm = subprocess.Popen([os.path.join(bin_dir, "lmopt-train"), bundle,
                               "--data", data_path, "--steps", str(args.steps + 1),
                               "--no-shuffle", f"--num-threads={args.threads}",
                               "--log-losses", losses, "--log-every=0"],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              text=True, env=env)
        lm.stdout.read()
        err = lm.stderr.read()
        if lm.wait() != 0:
            sys.exit(f"lmopt-train failed:\n{err}")
        match = re.search(r"\(([0-9.]+) s per step after the first\)", err)
        peak = re.search(r"peak memory: ([0-9]+) MiB", err)
        return (float(match.group(1)), float(open(losses).readline()),
                float(peak.group(1)))

    def run_pytorch(dropout):
        py = subprocess.run([sys.executable, "-c", PYTORCH, torch_path, data_path,
                             str(args.threads), str(args.steps), str(args.lr),
                             args.precision, "on" if dropout else "off"],
                            capture_output=True, text=True, env=env, check=True)
        fields = dict(line.split() for line in py.stdout.splitlines())
        return (float(fields["step_seconds"]), float(fields["first_loss"]),
                int(fields["peak_rss_kib"]) / 1024)

    runs = [False] + ([True] if args.dropout else [])
    print(f"model: BERT-{args.config} classifier, batch {b}, sequence {s}, "
          f"{args.threads} threads, {args.precision}, AdamW (decay groups), "
          f"clip 1.0; {args.steps} timed steps after one warm-up")
    for dropout in runs:
        bundle, compile_seconds = compile_bundle(
            "train-dropout.lmopt" if dropout else "train.lmopt", dropout)
        lm_step, lm_loss, lm_rss = run_lmopt(bundle)
        py_step, py_loss, py_rss = run_pytorch(dropout)
        label = f"dropout {args.dropout:g}" if dropout else "dropout off"
        print(f"[{label}] lmopt compile: {compile_seconds:.1f} s")
        print(f"[{label}] lmopt:   {lm_step:.3f} s/step   first loss {lm_loss:.6f}"
              f"   peak RSS {lm_rss:.0f} MiB")
        print(f"[{label}] PyTorch: {py_step:.3f} s/step   first loss {py_loss:.6f}"
              f"   peak RSS {py_rss:.0f} MiB")
        print(f"[{label}] ratio lmopt / PyTorch: {lm_step / py_step:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

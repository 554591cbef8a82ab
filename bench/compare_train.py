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
RSS, and both first-step losses (same weights and batch).

With --precision bf16: lmopt-compile --precision=bf16 (bf16 products into
f32, f32 parameters and optimizer) against PyTorch under
torch.autocast("cpu", dtype=torch.bfloat16) (the same split).

usage: bench/compare_train.py [--config base|small] [--batch 8] [--seq 128]
                              [--steps 5] [--threads 2] [--build build]
                              [--precision fp32|bf16]
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

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
model.eval()
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
print("peak_rss_kib", resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
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
    args = parser.parse_args()

    import torch
    from transformers import BertConfig, BertForSequenceClassification

    work = tempfile.mkdtemp(prefix="lmopt-train-bench-")
    torch.manual_seed(0)
    config = BertConfig(vocab_size=30522, max_position_embeddings=512,
                        num_labels=2, hidden_dropout_prob=0.0,
                        attention_probs_dropout_prob=0.0,
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

    class Logits(torch.nn.Module):
        def __init__(self, inner):
            super().__init__()
            self.inner = inner

        def forward(self, input_ids, attention_mask, token_type_ids):
            return self.inner(input_ids=input_ids, attention_mask=attention_mask,
                              token_type_ids=token_type_ids).logits

    inputs = tuple(torch.from_numpy(data[k]) for k in
                   ("input_ids", "attention_mask", "token_type_ids"))
    torch.onnx.export(Logits(model), inputs, onnx_path, dynamo=False,
                      opset_version=17,
                      input_names=["input_ids", "attention_mask", "token_type_ids"],
                      output_names=["logits"])
    torch_path = os.path.join(work, "model.pt")
    torch.save(model, torch_path)

    bin_dir = os.path.join(args.build, "bin")
    bundle = os.path.join(work, "train.lmopt")
    shapes = [f"--input-shape={n}:{b}x{s}" for n in
              ("input_ids", "attention_mask", "token_type_ids")]
    start = time.perf_counter()
    subprocess.run([os.path.join(bin_dir, "lmopt-compile"), onnx_path, "--train",
                    "--loss=cross-entropy:logits,labels", f"--lr={args.lr}",
                    "--weight-decay=0.01", "--clip-norm=1.0", "--disable-dropout",
                    "--lr-schedule=constant", f"--precision={args.precision}",
                    *shapes, "-o", bundle],
                   check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    compile_seconds = time.perf_counter() - start

    losses = os.path.join(work, "losses.txt")
    env = dict(os.environ, OMP_NUM_THREADS=str(args.threads))
    lm = subprocess.Popen([os.path.join(bin_dir, "lmopt-train"), bundle,
                           "--data", data_path, "--steps", str(args.steps + 1),
                           "--no-shuffle", f"--num-threads={args.threads}",
                           "--log-losses", losses, "--log-every=0"],
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          text=True, env=env)
    lm.stdout.read()
    err = lm.stderr.read()
    _, status, usage = os.wait4(lm.pid, 0)
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit(f"lmopt-train failed:\n{err}")
    lm_rss = usage.ru_maxrss
    match = re.search(r"\(([0-9.]+) s per step after the first\)", err)
    lm_step = float(match.group(1))
    lm_loss = float(open(losses).readline())

    py = subprocess.run([sys.executable, "-c", PYTORCH, torch_path, data_path,
                         str(args.threads), str(args.steps), str(args.lr),
                         args.precision],
                        capture_output=True, text=True, env=env, check=True)
    fields = dict(line.split() for line in py.stdout.splitlines())
    py_step = float(fields["step_seconds"])

    print(f"model: BERT-{args.config} classifier, batch {b}, sequence {s}, "
          f"{args.threads} threads, {args.precision}, dropout off, AdamW (decay groups), "
          f"clip 1.0; {args.steps} timed steps after one warm-up")
    print(f"lmopt compile: {compile_seconds:.1f} s")
    print(f"lmopt:   {lm_step:.3f} s/step   first loss {lm_loss:.6f}"
          f"   peak RSS {lm_rss / 1024:.0f} MiB")
    print(f"PyTorch: {py_step:.3f} s/step   first loss {float(fields['first_loss']):.6f}"
          f"   peak RSS {int(fields['peak_rss_kib']) / 1024:.0f} MiB")
    print(f"ratio lmopt / PyTorch: {lm_step / py_step:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

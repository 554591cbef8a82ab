#!/usr/bin/env python3
"""Fusion counts of lmopt's optimize pipeline next to ONNX Runtime's
transformer optimizer, on the same ONNX models.

For each model, both sides count the fused ops in their optimized graph:
ONNX Runtime through `optimize_model(...).get_fused_operator_statistics()`,
lmopt by importing the model (`lmopt-translate --import-onnx`), running
`lmopt-opt --lmopt-optimize-pipeline` and counting ops in the result. The
fusion report's near misses are printed for every kind where lmopt has fewer.

usage: bench/fusion_counts.py [--build build] [MODEL.onnx ...]
       (default: every fixture in test/models/onnx)
"""
import argparse
import collections
import json
import os
import re
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FIXTURES = os.path.join(ROOT, "test", "models", "onnx")

# Rows of the table: a name and how each side counts it. ONNX Runtime's
# EmbedLayerNormalization is an embedding sum + layer norm, which lmopt
# expresses as a skip_layer_norm; BiasGelu is a GELU in a linear's epilogue.
# The plain and skip layer norm rows are informative (the two tools draw the
# line between them differently); "all layer norms" is the comparison.
ROWS = [
    ("attention", ["Attention", "MultiHeadAttention"], ["attention"]),
    ("layer norm", ["LayerNormalization", "SimplifiedLayerNormalization"],
     ["layer_norm", "rms_norm"]),
    ("skip/embed layer norm",
     ["SkipLayerNormalization", "SkipSimplifiedLayerNormalization",
      "EmbedLayerNormalization"], ["skip_layer_norm"]),
    ("all layer norms",
     ["LayerNormalization", "SimplifiedLayerNormalization",
      "SkipLayerNormalization", "SkipSimplifiedLayerNormalization",
      "EmbedLayerNormalization"], ["layer_norm", "rms_norm", "skip_layer_norm"]),
    ("gelu (any)", ["Gelu", "FastGelu", "BiasGelu", "GemmFastGelu"],
     ["gelu", "linear+gelu"]),
    ("gelu in a linear", ["BiasGelu", "GemmFastGelu"], ["linear+gelu"]),
]

ORT_MODEL_TYPE = {"GPT2Config": "gpt2"}


def ort_counts(path, config_class, config):
    from onnxruntime.transformers import optimizer

    heads = config.get("num_attention_heads", config.get("n_head",
            config.get("n_heads", config.get("nhead", 0))))
    hidden = config.get("hidden_size", config.get("n_embd",
             config.get("dim", config.get("d_model", 0))))
    model = optimizer.optimize_model(
        path, model_type=ORT_MODEL_TYPE.get(config_class, "bert"),
        num_heads=heads, hidden_size=hidden, opt_level=0)
    return model.get_fused_operator_statistics()


def lmopt_counts(path, build):
    translate = os.path.join(build, "bin", "lmopt-translate")
    opt = os.path.join(build, "bin", "lmopt-opt")
    for tool in (translate, opt):
        if not os.path.exists(tool):
            sys.exit(f"error: {tool} not found; run scripts/setup.sh first")
    with tempfile.TemporaryDirectory() as tmp:
        imported = os.path.join(tmp, "model.mlir")
        report = os.path.join(tmp, "report.json")
        subprocess.run([translate, "--import-onnx", path, "--mlir-print-debuginfo",
                        "-o", imported],
                       check=True)
        result = subprocess.run(
            [opt, imported, "--lmopt-optimize-pipeline",
             f"--lmopt-report={report}", "--mlir-elide-elementsattrs-if-larger=4"],
            check=True, capture_output=True, text=True).stdout
        with open(report) as f:
            fusion_report = json.load(f)
    counts = collections.Counter(re.findall(r"= lmopt\.(\w+)", result))
    counts["linear+gelu"] = len(re.findall(
        r"lmopt\.linear[^\n]*activation = #lmopt\.activation<gelu", result))
    return counts, fusion_report


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("models", nargs="*")
    parser.add_argument("--build", default=os.path.join(ROOT, "build"))
    args = parser.parse_args()

    with open(os.path.join(FIXTURES, "manifest.json")) as f:
        manifest = json.load(f)["fixtures"]
    # By default the exported fp32 models; fixtures derived from them
    # (quantized, or already fused by ONNX Runtime) only when named.
    names = [os.path.splitext(os.path.basename(m))[0] for m in args.models] \
        or sorted(k for k, v in manifest.items() if "derived_from" not in v)

    print(f"{'model':<22}{'fusion':<24}{'onnxruntime':>12}{'lmopt':>8}")
    shortfalls = []
    for name in names:
        entry = manifest.get(name)
        if entry is None:
            sys.exit(f"error: '{name}' is not a fixture in {FIXTURES}")
        path = os.path.join(FIXTURES, name + ".onnx")
        base = manifest[entry.get("derived_from", name)]
        ort = ort_counts(path, base["config_class"], base["config"])
        ours, report = lmopt_counts(path, args.build)
        for row, ort_ops, our_ops in ROWS:
            a = sum(ort.get(op, 0) for op in ort_ops)
            b = sum(ours.get(op, 0) for op in our_ops)
            compared = row not in ("layer norm", "skip/embed layer norm")
            mark = "  <" if compared and b < a else ""
            print(f"{name:<22}{row:<24}{a:>12}{b:>8}{mark}")
            if mark:
                shortfalls.append((name, row))
        for kind, record in report.get("fusions", {}).items():
            for miss in record.get("near_misses", []):
                print(f"{'':<22}near miss {kind} at '{miss['node']}': "
                      f"{miss['reason']}")
    print(f"\n{len(shortfalls)} rows where lmopt fuses fewer than onnxruntime")
    return 0


if __name__ == "__main__":
    sys.exit(main())

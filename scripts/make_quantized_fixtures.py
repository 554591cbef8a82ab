#!/usr/bin/env python3
"""Derive quantized and ONNX Runtime-fused fixtures from the fp32 fixtures.

Needs only onnx, onnxruntime and numpy. From test/models/onnx/bert.onnx:

- bert_int8_dynamic: onnxruntime.quantization.quantize_dynamic
  (DynamicQuantizeLinear + MatMulInteger);
- bert_int8_qdq: quantize_static, QDQ format, per-channel weights, calibrated
  on bert.inputs.npz (QuantizeLinear / DequantizeLinear);
- bert_ort_fused: onnxruntime.transformers.optimizer.optimize_model
  (com.microsoft Attention, SkipLayerNormalization, BiasGelu, ...);
- bert_int4_nbits: MatMulNBitsQuantizer, 4 bits, block 32 (com.microsoft
  MatMulNBits).

From gpt2.onnx:

- gpt2_ort_fused: optimize_model(model_type='gpt2') (com.microsoft
  SkipLayerNormalization with its sum output, FastGelu with bias).

For each NAME it writes NAME.onnx, NAME.inputs.npz (a copy of the base
fixture's inputs) and NAME.ref.npz (ONNX Runtime's outputs, CPU provider,
graph optimizations disabled, one thread), and adds NAME to manifest.json.

    python3 scripts/make_quantized_fixtures.py [--out test/models/onnx]
"""

import argparse
import collections
import hashlib
import json
import os
import shutil
import sys
import tempfile

import numpy as np
import onnx
import onnxruntime as ort
from onnxruntime import quantization as ortq

DEFAULT_OUT = os.path.join(
    os.path.dirname(os.path.abspath(__file__)), "..", "test", "models", "onnx"
)
# Heads and hidden size of the base fixtures (scripts/make_fixtures.py).
SHAPES = {"bert": (2, 64), "gpt2": (4, 64)}


def session(path):
    opts = ort.SessionOptions()
    opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    opts.intra_op_num_threads = 1
    opts.inter_op_num_threads = 1
    return ort.InferenceSession(path, opts, providers=["CPUExecutionProvider"])


def load_npz(path):
    with np.load(path) as data:
        return {key: data[key] for key in data.files}


class NpzReader(ortq.CalibrationDataReader):
    """Calibration batches: the fixture inputs, one row at a time."""

    def __init__(self, inputs):
        rows = next(iter(inputs.values())).shape[0]
        self.batches = iter(
            [{k: v[i : i + 1] for k, v in inputs.items()} for i in range(rows)]
            + [inputs]
        )

    def get_next(self):
        return next(self.batches, None)


def make_dynamic(src, dst, inputs, base):
    ortq.quantize_dynamic(src, dst, weight_type=ortq.QuantType.QInt8)


def make_qdq(src, dst, inputs, base):
    ortq.quantize_static(
        src,
        dst,
        NpzReader(inputs),
        quant_format=ortq.QuantFormat.QDQ,
        per_channel=True,
        activation_type=ortq.QuantType.QUInt8,
        weight_type=ortq.QuantType.QInt8,
        op_types_to_quantize=["MatMul", "Gemm"],
    )


def make_fused(src, dst, inputs, base):
    from onnxruntime.transformers import optimizer
    from onnxruntime.transformers.fusion_options import FusionOptions

    options = FusionOptions(base)
    # EmbedLayerNormalization is left out: lmopt imports the embeddings as
    # Gather + Add + SkipLayerNormalization/LayerNormalization instead.
    options.enable_embed_layer_norm = False
    model = optimizer.optimize_model(
        src,
        model_type=base,
        num_heads=SHAPES[base][0],
        hidden_size=SHAPES[base][1],
        optimization_options=options,
        opt_level=0,
        only_onnxruntime=False,
    )
    model.save_model_to_file(dst)


def make_nbits(src, dst, inputs, base):
    from onnxruntime.quantization.matmul_nbits_quantizer import (
        MatMulNBitsQuantizer,
    )

    quantizer = MatMulNBitsQuantizer(
        onnx.load(src), bits=4, block_size=32, is_symmetric=False
    )
    quantizer.process()
    quantizer.model.save_model_to_file(dst)


FIXTURES = [
    (
        "bert_int8_dynamic",
        "bert",
        make_dynamic,
        "`bert` through onnxruntime.quantization.quantize_dynamic (int8 "
        "weights, DynamicQuantizeLinear + MatMulInteger)",
    ),
    (
        "bert_int8_qdq",
        "bert",
        make_qdq,
        "`bert` through quantize_static (QDQ format, per-channel int8 "
        "weights, uint8 activations, MinMax calibration on bert.inputs.npz)",
    ),
    (
        "bert_ort_fused",
        "bert",
        make_fused,
        "`bert` through onnxruntime.transformers.optimizer.optimize_model "
        "(model_type='bert', num_heads=2, hidden_size=64): com.microsoft fused ops",
    ),
    (
        "bert_int4_nbits",
        "bert",
        make_nbits,
        "`bert` through MatMulNBitsQuantizer (4 bits, block 32, asymmetric): "
        "com.microsoft MatMulNBits",
    ),
    (
        "gpt2_ort_fused",
        "gpt2",
        make_fused,
        "`gpt2` through onnxruntime.transformers.optimizer.optimize_model "
        "(model_type='gpt2', num_heads=4, hidden_size=64): com.microsoft "
        "SkipLayerNormalization and FastGelu",
    ),
]


def op_counts(model):
    counts = collections.Counter(
        (n.domain + "." if n.domain not in ("", "ai.onnx") else "") + n.op_type
        for n in model.graph.node
    )
    return dict(sorted(counts.items()))


def make_fixture(name, base, build, description, out_dir):
    inputs = load_npz(os.path.join(out_dir, base + ".inputs.npz"))
    src = os.path.join(out_dir, base + ".onnx")
    dst = os.path.join(out_dir, name + ".onnx")
    with tempfile.TemporaryDirectory() as tmp:
        tmp_dst = os.path.join(tmp, name + ".onnx")
        build(src, tmp_dst, inputs, base)
        model = onnx.load(tmp_dst)
        onnx.checker.check_model(model)
        onnx.save(model, dst)
    sess = session(dst)
    names = [o.name for o in sess.get_outputs()]
    outputs = dict(zip(names, sess.run(names, inputs)))
    np.savez(os.path.join(out_dir, name + ".ref.npz"), **outputs)
    shutil.copyfile(
        os.path.join(out_dir, base + ".inputs.npz"),
        os.path.join(out_dir, name + ".inputs.npz"),
    )
    fp32 = load_npz(os.path.join(out_dir, base + ".ref.npz"))
    drift = max(float(np.max(np.abs(outputs[k] - v))) for k, v in fp32.items())
    with open(dst, "rb") as fh:
        data = fh.read()
    return {
        "description": description,
        "derived_from": base,
        "generator": "scripts/make_quantized_fixtures.py",
        "opsets": {
            (o.domain or "ai.onnx"): o.version for o in model.opset_import
        },
        "inputs": [
            {"name": i.name, "dtype": str(v.dtype), "shape": list(v.shape)}
            for i, v in ((i, inputs[i.name]) for i in sess.get_inputs())
        ],
        "outputs": [
            {"name": k, "dtype": str(v.dtype), "shape": list(v.shape)}
            for k, v in outputs.items()
        ],
        "size_bytes": len(data),
        "sha256": hashlib.sha256(data).hexdigest(),
        "nodes": len(model.graph.node),
        "op_types": op_counts(model),
        "max_abs_diff_vs_fp32": drift,
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", default=os.path.normpath(DEFAULT_OUT))
    args = parser.parse_args()
    manifest_path = os.path.join(args.out, "manifest.json")
    with open(manifest_path) as fh:
        manifest = json.load(fh)
    failed = []
    for name, base, build, description in FIXTURES:
        try:
            entry = make_fixture(name, base, build, description, args.out)
        except Exception as exc:  # report every failing fixture, then fail
            failed.append(name)
            print(f"{name}: FAILED: {type(exc).__name__}: {exc}", file=sys.stderr)
            continue
        manifest["fixtures"][name] = entry
        print(
            f"{name}: {entry['size_bytes'] / 1024:.0f} KiB, {entry['nodes']} nodes, "
            f"max abs diff vs fp32 {entry['max_abs_diff_vs_fp32']:.3g}: "
            + ", ".join(f"{k} {v}" for k, v in entry["op_types"].items())
        )
    with open(manifest_path, "w") as fh:
        json.dump(manifest, fh, indent=2)
        fh.write("\n")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

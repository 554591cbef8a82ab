#!/usr/bin/env python3
"""Inputs and ONNX Runtime references at several shapes, for the bounded
dynamic shape tests (one bundle compiled with --max-shape, run at each).

Needs only onnx, onnxruntime and numpy. For each MODEL in SHAPES
(test/models/onnx/MODEL.onnx, whose inputs have dynamic batch and
sequence dims) and each (batch, seq) below, it writes
MODEL.dyn_BxS.inputs.npz (token ids drawn from a seeded generator within the
model's vocabulary, an attention mask with trailing padding on all but the
first row, token types 0/1) and MODEL.dyn_BxS.ref.npz (ONNX Runtime's
outputs, CPU provider, graph optimizations disabled, one thread).

    python3 scripts/make_dynamic_shape_fixtures.py [--out test/models/onnx]
"""

import argparse
import os

import numpy as np
import onnx
import onnxruntime as ort

# Two or more shapes per model, all within the bounds the tests compile with
# (4x32), none equal to them, so that every run exercises smaller dims.
SHAPES = {
    "bert": [(1, 7), (3, 20)],
    "distilbert": [(2, 5), (3, 17)],
    "gpt2": [(1, 9), (2, 16)],
    # Quantized by onnxruntime (dynamic int8, QDQ int8, MatMulNBits int4):
    # their folded quantized linears with run-time rows.
    "bert_int8_dynamic": [(1, 7), (3, 20)],
    "bert_int8_qdq": [(1, 7), (3, 20)],
    "bert_int4_nbits": [(1, 7), (3, 20)],
}


def vocabulary_size(model):
    """Rows of the word embedding table: the first 2-D initializer that a
    Gather reads."""
    initializers = {i.name: i for i in model.graph.initializer}
    for node in model.graph.node:
        if node.op_type == "Gather" and node.input[0] in initializers:
            dims = initializers[node.input[0]].dims
            if len(dims) == 2:
                return int(dims[0])
    raise SystemExit("no embedding table found")


def make_inputs(model, batch, seq, rng):
    vocab = vocabulary_size(model)
    inputs = {}
    for value in model.graph.input:
        name = value.name
        if name == "input_ids":
            inputs[name] = rng.integers(0, vocab, (batch, seq), dtype=np.int64)
        elif name == "attention_mask":
            mask = np.ones((batch, seq), dtype=np.int64)
            for row in range(1, batch):
                mask[row, seq - row:] = 0  # trailing padding
            inputs[name] = mask
        elif name == "token_type_ids":
            types = np.zeros((batch, seq), dtype=np.int64)
            types[:, seq // 2:] = 1
            inputs[name] = types
        else:
            raise SystemExit(f"unknown input '{name}'")
    return inputs


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    here = os.path.dirname(os.path.abspath(__file__))
    parser.add_argument("--out", default=os.path.join(here, "..", "test",
                                                      "models", "onnx"))
    args = parser.parse_args()
    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    options.intra_op_num_threads = 1
    rng = np.random.default_rng(20261202)
    for name, shapes in SHAPES.items():
        path = os.path.join(args.out, name + ".onnx")
        model = onnx.load(path)
        session = ort.InferenceSession(path, options,
                                       providers=["CPUExecutionProvider"])
        outputs = [o.name for o in session.get_outputs()]
        for batch, seq in shapes:
            inputs = make_inputs(model, batch, seq, rng)
            refs = dict(zip(outputs, session.run(outputs, inputs)))
            stem = os.path.join(args.out, f"{name}.dyn_{batch}x{seq}")
            np.savez(stem + ".inputs.npz", **inputs)
            np.savez(stem + ".ref.npz", **refs)
            print(f"{stem}: " + ", ".join(
                f"{k} {v.shape}" for k, v in refs.items()))


if __name__ == "__main__":
    main()

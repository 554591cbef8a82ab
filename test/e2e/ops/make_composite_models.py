#!/usr/bin/env python3
"""Regenerate the models of composite.test in test/e2e/ops/Inputs: the ONNX
operators the importer builds from simpler ones (activations, Clip, Sum,
Mean, IsInf, Xor, ArgMax/ArgMin, Einsum, Tile, the norm-like reductions),
with ONNX Runtime's outputs as references (see make_op_models.py):

    python3 test/e2e/ops/make_composite_models.py
"""

import numpy as np
from onnx import helper, TensorProto

from make_op_models import const_i64, node, randn, save

ACTIVATIONS = [
    ("Elu", {"alpha": 0.7}), ("Celu", {"alpha": 1.5}),
    ("LeakyRelu", {"alpha": 0.1}), ("HardSigmoid", {"alpha": 0.3, "beta": 0.4}),
    ("HardSwish", {}), ("Selu", {}), ("ThresholdedRelu", {"alpha": 0.5}),
    ("Softplus", {}), ("Softsign", {}), ("Mish", {}),
    ("Shrink", {"bias": 0.25, "lambd": 0.6}),
]


def main():
    # Values of both signs, some large enough to overflow exp(x) in f32
    # (softplus and mish must stay finite there).
    x = randn(3, 8) * 3
    x[0, :3] = [95.0, -95.0, 0.0]
    save("activations",
         [node(op, ["x"], [op.lower()], **attrs) for op, attrs in ACTIVATIONS]
         + [node("PRelu", ["x", "slope"], ["prelu"])],
         {"x": x, "slope": randn(8)},
         [op.lower() for op, _ in ACTIVATIONS] + ["prelu"])

    # Clip with both bounds as inputs, with only a max (min absent), and on
    # int32 data; Sum and Mean of three inputs that broadcast.
    ints = (randn(4, 5) * 10).astype(np.int32)
    save("clip_sum_mean",
         [node("Clip", ["x", "lo", "hi"], ["clip"]),
          node("Clip", ["x", "", "hi"], ["clip_max"]),
          node("Clip", ["i", "ilo", "ihi"], ["clip_int"]),
          node("Sum", ["x", "b", "c"], ["sum"]),
          node("Mean", ["x", "b", "c"], ["mean"])],
         {"x": randn(4, 5), "b": randn(5), "c": randn(4, 1), "i": ints},
         ["clip", "clip_max", "clip_int", "sum", "mean"],
         initializers=[helper.make_tensor("lo", TensorProto.FLOAT, [], [-0.5]),
                       helper.make_tensor("hi", TensorProto.FLOAT, [], [0.8]),
                       helper.make_tensor("ilo", TensorProto.INT32, [], [-4]),
                       helper.make_tensor("ihi", TensorProto.INT32, [], [6])])

    # IsInf in its three detecting forms; Xor broadcasting.
    y = randn(2, 6)
    y[0, 1], y[1, 2], y[1, 4] = np.inf, -np.inf, np.nan
    rng = np.random.default_rng(7)
    save("isinf_xor",
         [node("IsInf", ["y"], ["inf"]),
          node("IsInf", ["y"], ["pos"], detect_negative=0),
          node("IsInf", ["y"], ["neg"], detect_positive=0),
          node("Xor", ["p", "q"], ["xor"])],
         {"y": y, "p": rng.random((3, 4)) > 0.5, "q": rng.random(4) > 0.5},
         ["inf", "pos", "neg", "xor"])

    # The norm-like reductions over an axes input (opset 18), keeping and
    # dropping the reduced dims, and over every dim; LogSumExp of values
    # whose exp overflows f32.
    z = randn(2, 3, 4)
    big = randn(2, 3, 4) * 40 + 60
    nodes, outputs = [], []
    for op in ("ReduceL1", "ReduceL2", "ReduceSumSquare", "ReduceLogSumExp"):
        name = op[len("Reduce"):].lower()
        nodes += [node(op, ["z", "axes"], [name + "_keep"]),
                  node(op, ["z", "axes"], [name + "_drop"], keepdims=0),
                  node(op, ["z"], [name + "_all"], keepdims=0)]
        outputs += [name + "_keep", name + "_drop", name + "_all"]
    nodes += [node("ReduceLogSum", ["za", "axes"], ["logsum"]),
              node("ReduceLogSumExp", ["big", "axes"], ["logsumexp_big"],
                   keepdims=0)]
    outputs += ["logsum", "logsumexp_big"]
    save("norm_reductions", nodes,
         {"z": z, "za": np.abs(z) + 0.1, "big": big.astype(np.float32)},
         outputs, initializers=[const_i64("axes", [-1, 1])])

    # ArgMax and ArgMin: values rounded so that ties occur, first and last
    # index; keeping and dropping the axis; int32 data.
    t = np.round(randn(3, 5, 4) * 1.5).astype(np.float32)
    save("arg_extremes",
         [node("ArgMax", ["t"], ["argmax"], axis=1),
          node("ArgMax", ["t"], ["argmax_last"], axis=1, select_last_index=1),
          node("ArgMin", ["t"], ["argmin"], axis=-1, keepdims=0),
          node("ArgMin", ["t"], ["argmin_last"], axis=0, keepdims=0,
               select_last_index=1),
          node("ArgMax", ["n"], ["argmax_int"], axis=0, keepdims=0)],
         {"t": t, "n": (randn(4, 3) * 5).astype(np.int32)},
         ["argmax", "argmax_last", "argmin", "argmin_last", "argmax_int"])

    # Einsum in the forms exporters write (attention scores, batched and
    # broadcast products, projections), with contracted and free groups of
    # several labels, an implicit output, three operands, a sum and a
    # transpose.
    equations = [
        ("attention", "bhqd,bhkd->bhqk", [(2, 3, 4, 5), (2, 3, 6, 5)]),
        ("batch_matmul", "bij, bjk -> bik", [(5, 2, 3), (5, 3, 4)]),
        ("broadcast", "...ij,...jk->...ik", [(2, 1, 3, 4), (1, 5, 4, 2)]),
        ("projection", "bsh,hd->bsd", [(2, 3, 4), (4, 5)]),
        ("merged_groups", "abcd,cde->abe", [(2, 3, 4, 5), (4, 5, 6)]),
        ("outer", "i,j->ij", [(3,), (4,)]),
        ("inner", "i,i", [(5,), (5,)]),
        ("implicit", "ij,jk", [(3, 4), (4, 2)]),
        ("chain", "ij,jk,kl->il", [(2, 3), (3, 4), (4, 5)]),
        ("sum_out", "ijk,jl->il", [(2, 3, 4), (3, 5)]),
        ("reduce", "ij->i", [(3, 4)]),
        ("transpose", "ij->ji", [(3, 4)]),
    ]
    nodes, inputs, outputs = [], {}, []
    for name, equation, shapes in equations:
        names = [f"{name}_{i}" for i in range(len(shapes))]
        for n, shape in zip(names, shapes):
            inputs[n] = randn(*shape)
        nodes.append(node("Einsum", names, [name], equation=equation))
        outputs.append(name)
    save("einsum", nodes, inputs, outputs)

    # Rounding: halves (Round takes the even neighbour), negative values.
    r = np.array([[-2.5, -1.5, -0.5, 0.5, 1.5, 2.5],
                  [-1.7, -0.2, 0.0, 0.3, 1.2, 7.9]], np.float32)
    save("rounding",
         [node("Ceil", ["r"], ["ceil"]), node("Floor", ["r"], ["floor"]),
          node("Round", ["r"], ["round"])],
         {"r": r}, ["ceil", "floor", "round"])

    # Gemm with a run-time B, A transposed, alpha and beta other than 1: not
    # a linear, so it runs as a matmul and a kernel (lmopt-decompose-gemm).
    save("gemm",
         [node("Gemm", ["ga", "gb", "gc"], ["gemm"], alpha=0.5, beta=2.0,
               transA=1)],
         {"ga": randn(4, 3), "gb": randn(4, 5), "gc": randn(5)}, ["gemm"])

    # Integer Pow (the CPU computes it through f64).
    save("int_pow",
         [node("Pow", ["pi", "qi"], ["pow_i32"]),
          node("Pow", ["pl", "ql"], ["pow_i64"])],
         {"pi": np.array([[2, -3, 5], [7, 0, -1]], np.int32),
          "qi": np.array([[10, 3, 4], [2, 5, 7]], np.int32),
          "pl": np.array([3, -2, 10, 1], np.int64),
          "ql": np.array([30, 31, 15, 0], np.int64)},
         ["pow_i32", "pow_i64"])

    # Tile: by constant repeats (copies along each axis), and per batch by
    # repeats read from another input's symbolic shape, broadcasting a unit
    # axis or repeating an axis of size 2 (DeBERTa's position projections).
    save("tile",
         [node("Tile", ["w", "reps"], ["tiled"]),
          node("Shape", ["ids"], ["ids_shape"], start=0, end=1),
          node("Concat", ["ids_shape", "ones"], ["per_batch"], axis=0),
          node("Tile", ["table", "per_batch"], ["batched"]),
          node("Tile", ["heads", "per_batch"], ["heads_batched"])],
         {"w": randn(2, 3), "table": randn(1, 4, 5),
          "ids": np.zeros((3, 7), np.int64), "heads": randn(2, 4, 5)},
         ["tiled", "batched", "heads_batched"],
         initializers=[const_i64("reps", [2, 3]), const_i64("ones", [1, 1])],
         dims={"ids": ["batch", "seq"]})

    # Reductions over an empty axis: sums are 0, ReduceLogSumExp is -inf;
    # the empty input still passes through the kernel's calling convention.
    empty = np.zeros((2, 0, 4), np.float32)
    save("empty_reductions",
         [node("ReduceSum", ["e", "axes"], ["sum"]),
          node("ReduceL1", ["e", "axes"], ["l1"]),
          node("ReduceLogSumExp", ["e", "axes"], ["logsumexp"], keepdims=0)],
         {"e": empty}, ["sum", "l1", "logsumexp"],
         initializers=[const_i64("axes", [1])])


if __name__ == "__main__":
    main()

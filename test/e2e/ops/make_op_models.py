#!/usr/bin/env python3
"""Regenerate the single-operator models of the e2e suite in test/e2e/ops/Inputs.

Each model exercises the ONNX semantics that are easy to get wrong (numpy
broadcasting, negative indices, Slice clamping and negative steps, Reshape's 0
and -1, Cast truncation, Mod signs, reductions with keepdims and empty axes,
...). Operands the importer could fold are graph inputs, so the evaluator
computes them at run time. For each NAME the script writes NAME.onnx,
NAME.inputs.npz (seeded inputs) and NAME.ref.npz (ONNX Runtime's outputs,
CPUExecutionProvider, no graph optimization). Needs numpy, onnx and
onnxruntime:

    python3 test/e2e/ops/make_op_models.py
"""

import os

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "Inputs")
RNG = np.random.default_rng(1234)

F32, I64, BOOL = TensorProto.FLOAT, TensorProto.INT64, TensorProto.BOOL
NP_TO_ONNX = {np.float32: F32, np.int64: I64, np.bool_: BOOL,
              np.int8: TensorProto.INT8, np.int32: TensorProto.INT32}


def randn(*shape):
    return RNG.standard_normal(shape).astype(np.float32)


def value_info(name, array, dims=None):
    """`dims` replaces the array's shape (names for symbolic dims)."""
    return helper.make_tensor_value_info(
        name, NP_TO_ONNX[array.dtype.type],
        list(array.shape) if dims is None else dims)


def save(name, nodes, inputs, outputs, opset=18, initializers=(), dims=None):
    """Builds the model, runs ONNX Runtime and writes the three files;
    `dims` maps input names to declared shapes with symbolic dims."""
    def make_model(output_infos):
        graph = helper.make_graph(
            nodes, name,
            [value_info(k, v, (dims or {}).get(k)) for k, v in inputs.items()],
            output_infos, initializer=list(initializers))
        model = helper.make_model(
            graph, opset_imports=[helper.make_opsetid("", opset)],
            producer_name="make_op_models")
        model.ir_version = 9
        return model

    # ONNX infers the outputs' types on the graph without outputs; the model
    # then declares them.
    inferred = onnx.shape_inference.infer_shapes(make_model([]), strict_mode=True)
    infos = {v.name: v for v in inferred.graph.value_info}
    model = make_model([infos[o] for o in outputs])
    onnx.checker.check_model(model)
    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    options.intra_op_num_threads = 1
    session = ort.InferenceSession(model.SerializeToString(), options,
                                   providers=["CPUExecutionProvider"])
    results = session.run(outputs, inputs)
    onnx.save(model, os.path.join(OUT, name + ".onnx"))
    np.savez(os.path.join(OUT, name + ".inputs.npz"), **inputs)
    np.savez(os.path.join(OUT, name + ".ref.npz"), **dict(zip(outputs, results)))


def node(op, inputs, outputs, **attrs):
    return helper.make_node(op, inputs, outputs, **attrs)


def const_i64(name, values):
    return helper.make_tensor(name, I64, [len(values)], values)


def main():
    os.makedirs(OUT, exist_ok=True)

    # Broadcasting arithmetic: [2,3,4] with [3,1] and with a scalar.
    save("broadcast_arith",
         [node("Add", ["a", "b"], ["add"]), node("Sub", ["b", "a"], ["sub"]),
          node("Mul", ["a", "s"], ["mul"]), node("Div", ["a", "b"], ["div"]),
          node("Abs", ["a"], ["abs_a"]), node("Pow", ["abs_a", "b"], ["pow"]),
          node("Max", ["a", "b"], ["max"]), node("Min", ["a", "b"], ["min"])],
         {"a": randn(2, 3, 4), "b": randn(3, 1) + 2.0,
          "s": np.array(1.5, np.float32)},
         ["add", "sub", "mul", "div", "pow", "max", "min"])

    # Integer division truncates; Mod takes the divisor's sign, fmod the
    # dividend's.
    save("integer_arith",
         [node("Div", ["x", "y"], ["div"]), node("Mod", ["x", "y"], ["mod"]),
          node("Mod", ["fx", "fy"], ["fmod"], fmod=1),
          node("Mul", ["x", "y"], ["mul"]), node("Sub", ["x", "y"], ["sub"])],
         {"x": np.array([7, -7, 7, -7, 0, 5], np.int64),
          "y": np.array([2, 2, -2, -2, 3, 5], np.int64),
          "fx": np.array([5.5, -5.5, 5.5, -5.5], np.float32),
          "fy": np.array([2.0, 2.0, -2.0, -2.0], np.float32)},
         ["div", "mod", "fmod", "mul", "sub"])

    # Comparisons, logic and Where, with broadcasting.
    save("compare_where",
         [node("Equal", ["a", "b"], ["eq"]), node("Less", ["a", "b"], ["lt"]),
          node("Greater", ["a", "b"], ["gt"]),
          node("And", ["lt", "m"], ["and"]), node("Or", ["gt", "m"], ["or"]),
          node("Not", ["m"], ["not"]),
          node("Where", ["m", "a", "b"], ["where"])],
         {"a": np.round(randn(2, 3, 4)), "b": np.round(randn(4)),
          "m": RNG.random((3, 1)) > 0.5},
         ["eq", "lt", "gt", "and", "or", "not", "where"])

    # Unary math.
    x = randn(3, 5)
    save("unary",
         [node("Neg", ["x"], ["neg"]), node("Abs", ["x"], ["abs"]),
          node("Relu", ["x"], ["relu"]), node("Exp", ["x"], ["exp"]),
          node("Log", ["abs"], ["log"]), node("Sqrt", ["abs"], ["sqrt"]),
          node("Reciprocal", ["x"], ["reciprocal"]),
          node("Tanh", ["x"], ["tanh"]), node("Erf", ["x"], ["erf"]),
          node("Sigmoid", ["x"], ["sigmoid"]), node("Cos", ["x"], ["cos"]),
          node("Sin", ["x"], ["sin"])],
         {"x": x},
         ["neg", "abs", "relu", "exp", "log", "sqrt", "reciprocal", "tanh",
          "erf", "sigmoid", "cos", "sin"])

    # Cast: truncation toward zero, nonzero to true, rounding through f16.
    save("cast",
         [node("Cast", ["x"], ["to_i64"], to=I64),
          node("Cast", ["x"], ["to_i32"], to=TensorProto.INT32),
          node("Cast", ["x"], ["to_bool"], to=BOOL),
          node("Cast", ["x"], ["half"], to=TensorProto.FLOAT16),
          node("Cast", ["half"], ["through_f16"], to=F32),
          node("Cast", ["i"], ["i_to_f32"], to=F32),
          node("Cast", ["to_bool"], ["bool_to_f32"], to=F32)],
         {"x": np.array([-2.7, -0.5, 0.0, 0.4, 1.5, 2.5, 1000.123, -3.0],
                        np.float32),
          "i": np.array([-3, 0, 16777217, 5], np.int64)},
         ["to_i64", "to_i32", "to_bool", "through_f16", "i_to_f32",
          "bool_to_f32"])

    # Gather with negative indices along each axis; GatherElements; GatherND
    # with and without batch dims.
    save("gather",
         [node("Gather", ["data", "rows"], ["rows_out"], axis=0),
          node("Gather", ["data", "cols"], ["cols_out"], axis=-1),
          node("Gather", ["data", "scalar"], ["scalar_out"], axis=1),
          node("GatherElements", ["data", "elements"], ["elements_out"],
               axis=1),
          node("GatherND", ["data", "nd"], ["nd_out"]),
          node("GatherND", ["data3", "nd_batch"], ["nd_batch_out"],
               batch_dims=1)],
         {"data": randn(4, 3),
          "rows": np.array([[0, -1], [2, -4]], np.int64),
          "cols": np.array([-1, 0, 1, -3], np.int64),
          "scalar": np.array(-2, np.int64),
          "elements": np.array([[0, -1], [2, 1], [-3, 0], [1, 1]], np.int64),
          "nd": np.array([[0, 1], [-1, -1], [2, 0]], np.int64),
          "data3": randn(2, 3, 4),
          "nd_batch": np.array([[[1]], [[-1]]], np.int64)},
         ["rows_out", "cols_out", "scalar_out", "elements_out", "nd_out",
          "nd_batch_out"])

    # Slice: negative steps, out-of-range and negative bounds, INT64 limits.
    big = np.iinfo(np.int64).max
    save("slice",
         [node("Slice", ["x", "s1", "e1", "a1", "p1"], ["reverse"]),
          node("Slice", ["x", "s2", "e2", "a2", "p2"], ["clamped"]),
          node("Slice", ["x", "s3", "e3"], ["default_axes"])],
         {"x": randn(5, 6),
          "s1": np.array([-1, big], np.int64),
          "e1": np.array([-big, 0], np.int64),
          "a1": np.array([0, 1], np.int64),
          "p1": np.array([-1, -2], np.int64),
          "s2": np.array([-100, 1], np.int64),
          "e2": np.array([100, -1], np.int64),
          "a2": np.array([1, -2], np.int64),
          "p2": np.array([2, 3], np.int64),
          "s3": np.array([1], np.int64),
          "e3": np.array([-1], np.int64)},
         ["reverse", "clamped", "default_axes"])

    # Reshape with 0 and -1 in a run-time shape; Expand; Range; shapes.
    save("reshape_expand",
         [node("Reshape", ["x", "shape"], ["reshaped"]),
          node("Expand", ["y", "to"], ["expanded"]),
          node("Range", ["start", "limit", "delta"], ["range_f"]),
          node("Range", ["istart", "ilimit", "idelta"], ["range_i"]),
          node("Shape", ["x"], ["shape_mid"], start=1, end=-1),
          node("Size", ["x"], ["size"]),
          node("ConstantOfShape", ["to"], ["filled"],
               value=helper.make_tensor("v", F32, [1], [0.25]))],
         {"x": randn(2, 3, 4, 2),
          "shape": np.array([0, -1, 2], np.int64),
          "y": randn(3, 1),
          "to": np.array([2, 1, 4], np.int64),
          "start": np.array(1.0, np.float32),
          "limit": np.array(-2.0, np.float32),
          "delta": np.array(-0.7, np.float32),
          "istart": np.array(10, np.int64),
          "ilimit": np.array(1, np.int64),
          "idelta": np.array(-3, np.int64)},
         ["reshaped", "expanded", "range_f", "range_i", "shape_mid", "size",
          "filled"])

    # Data movement with constant attributes.
    save("data_movement",
         [node("Transpose", ["x"], ["transposed"], perm=[2, 0, 1]),
          node("Concat", ["x", "x"], ["concat"], axis=-2),
          node("Split", ["x", "sizes"], ["part0", "part1"], axis=2),
          node("Unsqueeze", ["x", "unsq_axes"], ["unsqueezed"]),
          node("Squeeze", ["unsqueezed", "sq_axes"], ["squeezed"]),
          node("CumSum", ["x", "axis"], ["cumsum"]),
          node("CumSum", ["x", "axis"], ["cumsum_rev_excl"], exclusive=1,
               reverse=1)],
         {"x": randn(2, 3, 4)},
         ["transposed", "concat", "part0", "part1", "unsqueezed", "squeezed",
          "cumsum", "cumsum_rev_excl"],
         initializers=[const_i64("sizes", [1, 3]),
                       const_i64("unsq_axes", [0, -1]),
                       const_i64("sq_axes", [0]),
                       helper.make_tensor("axis", I64, [], [1])])

    # Reductions with keepdims and with no axes (all dims).
    save("reduce",
         [node("ReduceMean", ["x", "axes"], ["mean"], keepdims=1),
          node("ReduceSum", ["x"], ["sum_all"], keepdims=0),
          node("ReduceMax", ["x", "last"], ["max"], keepdims=0),
          node("ReduceMin", ["x", "axes"], ["min"], keepdims=1),
          node("ReduceSum", ["i", "last"], ["isum"], keepdims=0)],
         {"x": randn(2, 3, 4), "i": RNG.integers(-5, 5, (2, 3), np.int64)},
         ["mean", "sum_all", "max", "min", "isum"],
         initializers=[const_i64("axes", [0, -1]), const_i64("last", [-1])])

    # Softmax and LogSoftmax over a middle axis; LayerNormalization over the
    # last two dims; Gemm with transposes and a broadcast C; MatMul with
    # batch broadcasting and rank-1 operands.
    save("normalize_matmul",
         [node("Softmax", ["x"], ["softmax"], axis=1),
          node("LogSoftmax", ["x"], ["log_softmax"], axis=1),
          node("LayerNormalization", ["x", "scale", "bias"], ["layer_norm"],
               axis=1, epsilon=1e-3),
          node("Gemm", ["a", "b", "c"], ["gemm"], alpha=0.5, beta=2.0,
               transA=1, transB=1),
          node("MatMul", ["batched", "x"], ["matmul"]),
          node("MatMul", ["vec", "b"], ["vec_mat"]),
          node("MatMul", ["a", "vec3"], ["mat_vec"])],
         {"x": randn(2, 3, 4), "scale": randn(3, 4), "bias": randn(3, 4),
          "a": randn(3, 2), "b": randn(5, 3), "c": randn(5),
          "batched": randn(3, 1, 5, 3), "vec": randn(5), "vec3": randn(2)},
         ["softmax", "log_softmax", "layer_norm", "gemm", "matmul", "vec_mat",
          "mat_vec"])

    # GELU, exact and tanh (opset 20).
    save("gelu",
         [node("Gelu", ["x"], ["exact"]),
          node("Gelu", ["x"], ["tanh"], approximate="tanh")],
         {"x": randn(4, 5) * 3.0},
         ["exact", "tanh"], opset=20)

    save_fused_references()
    save_integer_ops()
    save_integer_quantization()
    save_decomposed_layer_norm()
    save_masked_rows_attention()


def save_fused_references():
    """Decomposed ONNX graphs whose ONNX Runtime outputs are the reference
    for the hand-written fused ops in fused-ops.mlir (same inputs by name)."""
    # linear: activation(x W^T + b) + residual, PyTorch weight layout.
    save("fused_linear",
         [node("Transpose", ["w"], ["wt"], perm=[1, 0]),
          node("MatMul", ["x", "wt"], ["xw"]), node("Add", ["xw", "b"], ["h"]),
          node("Gelu", ["h"], ["g"], approximate="tanh"),
          node("Add", ["g", "r"], ["gelu_tanh_residual"]),
          node("Relu", ["h"], ["relu"]), node("Gelu", ["h"], ["gelu"]),
          node("MatMul", ["x", "w2"], ["plain"])],
         {"x": randn(2, 3, 4), "w": randn(5, 4), "b": randn(5),
          "r": randn(2, 3, 5), "w2": randn(4, 5)},
         ["gelu_tanh_residual", "relu", "gelu", "plain"], opset=20)

    # attention: 2 heads of size 4, 4 queries over 6 keys. One graph adds a
    # float mask and scales by the default 1/sqrt(4); the other keeps
    # positions where an i1 mask is true, hides the future (aligned to the
    # end of the keys) and scales by 0.3.
    lowest = np.finfo(np.float32).min
    keep = RNG.random((2, 1, 4, 6)) > 0.4
    keep[..., 0] = True  # no row is fully hidden
    causal = np.tril(np.ones((4, 6), bool), k=2)
    heads = [
        node("Reshape", ["q", "split_q"], ["qs"]),
        node("Transpose", ["qs"], ["qh"], perm=[0, 2, 1, 3]),
        node("Reshape", ["k", "split_k"], ["ks"]),
        node("Transpose", ["ks"], ["kt"], perm=[0, 2, 3, 1]),
        node("Reshape", ["v", "split_k"], ["vs"]),
        node("Transpose", ["vs"], ["vh"], perm=[0, 2, 1, 3]),
        node("MatMul", ["qh", "kt"], ["qk"]),
    ]

    def merge(probs, out):
        return [node("MatMul", [probs, "vh"], [out + "_h"]),
                node("Transpose", [out + "_h"], [out + "_t"],
                     perm=[0, 2, 1, 3]),
                node("Reshape", [out + "_t", "merge"], [out])]

    save("fused_attention",
         heads + [
             node("Mul", ["qk", "half"], ["scaled"]),
             node("Add", ["scaled", "float_mask"], ["masked"]),
             node("Softmax", ["masked"], ["p1"], axis=-1)] +
         merge("p1", "float_mask_out") + [
             node("Mul", ["qk", "point3"], ["scaled3"]),
             node("And", ["bool_mask", "causal"], ["visible"]),
             node("Where", ["visible", "scaled3", "lowest"], ["filled"]),
             node("Softmax", ["filled"], ["p2"], axis=-1)] +
         merge("p2", "bool_causal_out"),
         {"q": randn(2, 4, 8), "k": randn(2, 6, 8), "v": randn(2, 6, 8),
          "float_mask": np.where(RNG.random((2, 1, 1, 6)) > 0.3, 0.0,
                                 lowest).astype(np.float32),
          "bool_mask": keep},
         ["float_mask_out", "bool_causal_out"],
         initializers=[
             const_i64("split_q", [2, 4, 2, 4]),
             const_i64("split_k", [2, 6, 2, 4]),
             const_i64("merge", [2, 4, 8]),
             helper.make_tensor("half", F32, [], [0.5]),
             helper.make_tensor("point3", F32, [], [0.3]),
             helper.make_tensor("lowest", F32, [], [lowest]),
             helper.make_tensor("causal", BOOL, [4, 6],
                                causal.flatten().tolist())])

    # skip layer norm (output and sum), RMS norm, inference dropout.
    save("fused_norms",
         [node("Add", ["x", "skip"], ["skip_sum"]),
          node("LayerNormalization", ["skip_sum", "gamma", "beta"],
               ["skip_out"], axis=-1, epsilon=1e-5),
          node("Mul", ["x", "x"], ["square"]),
          node("ReduceMean", ["square", "last"], ["mean_square"]),
          node("Add", ["mean_square", "eps"], ["shifted"]),
          node("Sqrt", ["shifted"], ["rms"]),
          node("Div", ["x", "rms"], ["normalized"]),
          node("Mul", ["normalized", "gamma"], ["rms_out"]),
          node("Identity", ["x"], ["dropout_out"])],
         {"x": randn(2, 3, 8), "skip": randn(3, 8), "gamma": randn(8),
          "beta": randn(8)},
         ["skip_out", "skip_sum", "rms_out", "dropout_out"],
         initializers=[const_i64("last", [-1]),
                       helper.make_tensor("eps", F32, [], [1e-6])])

    # quantize then dequantize, per tensor and per axis (axis 1).
    save("quantize",
         [node("QuantizeLinear", ["x", "scale", "zero"], ["q"]),
          node("DequantizeLinear", ["q", "scale", "zero"], ["per_tensor"]),
          node("QuantizeLinear", ["x", "scales", "zeros"], ["qa"], axis=1),
          node("DequantizeLinear", ["qa", "scales", "zeros"], ["per_axis"],
               axis=1)],
         {"x": randn(4, 3) * 4.0},
         ["per_tensor", "per_axis"],
         initializers=[
             helper.make_tensor("scale", F32, [], [0.05]),
             helper.make_tensor("zero", TensorProto.INT8, [], [3]),
             helper.make_tensor("scales", F32, [3], [0.02, 0.05, 0.1]),
             helper.make_tensor("zeros", TensorProto.INT8, [3], [0, -3, 5])])


def save_integer_ops():
    """Integer and boolean paths of the elementwise, indexing and shape ops;
    Cast wraps to 32 bits; Squeeze without axes drops every dim of 1."""
    save("integer_ops",
         [node("Where", ["m", "x", "y"], ["where"]),
          node("Equal", ["x", "y"], ["eq"]), node("Less", ["x", "y"], ["lt"]),
          node("Greater", ["x", "y"], ["gt"]),
          node("Max", ["x", "y"], ["max"]), node("Min", ["x", "y"], ["min"]),
          node("Abs", ["x"], ["abs"]), node("Neg", ["x"], ["neg"]),
          node("Pow", ["abs", "two"], ["pow"]),
          node("Cast", ["big"], ["wrapped"], to=TensorProto.INT32),
          node("Cast", ["x"], ["nonzero"], to=BOOL),
          node("Concat", ["x", "y"], ["concat"], axis=0),
          node("Gather", ["x", "idx"], ["gathered"], axis=1),
          node("Squeeze", ["ones"], ["squeezed"]),
          node("ReduceMax", ["x"], ["rmax"], keepdims=0)],
         {"x": RNG.integers(-4, 5, (2, 3), np.int64),
          "y": RNG.integers(-4, 5, (1, 3), np.int64),
          "m": RNG.random((2, 1)) > 0.5,
          "two": np.array(2, np.int64),
          "big": np.array([2**32 + 5, -(2**31) - 1, 7], np.int64),
          "idx": np.array([-1, 0], np.int64),
          "ones": randn(1, 3, 1, 2)},
         ["where", "eq", "lt", "gt", "max", "min", "pow", "wrapped",
          "nonzero", "concat", "gathered", "squeezed", "rmax"])



def save_integer_quantization():
    """What onnxruntime.quantization.quantize_dynamic writes: a dynamically
    quantized input times an int8 weight with per-column zero points, the
    int32 product scaled back to float."""
    save("integer_quantization",
         [node("DynamicQuantizeLinear", ["x"], ["y", "scale", "zero_point"]),
          node("MatMulInteger", ["y", "w", "zero_point", "w_zero"],
               ["product"]),
          node("MatMulInteger", ["y", "w"], ["product_no_zero"]),
          node("Cast", ["product"], ["product_f"], to=F32),
          node("Mul", ["scale", "w_scale"], ["combined"]),
          node("Mul", ["product_f", "combined"], ["dequantized"])],
         {"x": randn(2, 3, 8) * 2.0,
          "w": RNG.integers(-128, 128, (8, 5)).astype(np.int8),
          "w_zero": RNG.integers(-3, 4, (5,)).astype(np.int8),
          "w_scale": np.array(0.02, np.float32)},
         ["y", "scale", "zero_point", "product", "product_no_zero",
          "dequantized"])



def save_decomposed_layer_norm():
    """Layer norm spelled out as exporters write it without
    LayerNormalization, the form lmopt-fuse-layer-norm rewrites."""
    save("decomposed_layer_norm",
         [node("ReduceMean", ["x", "last"], ["mean"]),
          node("Sub", ["x", "mean"], ["centered"]),
          node("Pow", ["centered", "two"], ["squared"]),
          node("ReduceMean", ["squared", "last"], ["variance"]),
          node("Add", ["variance", "eps"], ["shifted"]),
          node("Sqrt", ["shifted"], ["std"]),
          node("Div", ["centered", "std"], ["normalized"]),
          node("Mul", ["normalized", "gamma"], ["scaled"]),
          node("Add", ["scaled", "beta"], ["layer_norm"])],
         {"x": randn(2, 3, 16) * 3.0 + 1.0, "gamma": randn(16),
          "beta": randn(16)},
         ["layer_norm"],
         initializers=[const_i64("last", [-1]),
                       helper.make_tensor("two", F32, [], [2.0]),
                       helper.make_tensor("eps", F32, [], [1e-5])])



def save_masked_rows_attention():
    """Attention with query rows whose keys are all hidden, spelled as
    PyTorch's scaled_dot_product_attention exports it: -inf masks, and
    where(isnan(p), 0, p) on the probabilities, which turns those rows (NaN
    after softmax) into zeros. The reference for lmopt.attention with
    zero_masked_rows; a third graph pins the default (lowest-float fill, no
    guard: such a row averages the values uniformly)."""
    # 2 heads of size 4, 4 queries over 6 keys, scale 1/sqrt(4).
    keep = RNG.random((2, 1, 4, 6)) > 0.4
    keep[..., 0] = True
    keep[0, 0, 1, :] = False  # fully hidden by the mask
    keep[1, 0, 3, :] = False
    keep[1, 0, 0, :3] = False  # with causal, row 0 sees keys 0..2 only
    causal = np.tril(np.ones((4, 6), bool), k=2)
    minus_inf = np.where(keep, 0.0, -np.inf).astype(np.float32)
    heads = [
        node("Reshape", ["q", "split_q"], ["qs"]),
        node("Transpose", ["qs"], ["qh"], perm=[0, 2, 1, 3]),
        node("Reshape", ["k", "split_k"], ["ks"]),
        node("Transpose", ["ks"], ["kt"], perm=[0, 2, 3, 1]),
        node("Reshape", ["v", "split_k"], ["vs"]),
        node("Transpose", ["vs"], ["vh"], perm=[0, 2, 1, 3]),
        node("MatMul", ["qh", "kt"], ["qk"]),
        node("Mul", ["qk", "half"], ["scaled"]),
    ]

    def guard(probs):
        return [node("IsNaN", [probs], [probs + "_nan"]),
                node("Where", [probs + "_nan", "zero", probs],
                     [probs + "_guarded"])]

    def merge(probs, out):
        return [node("MatMul", [probs, "vh"], [out + "_h"]),
                node("Transpose", [out + "_h"], [out + "_t"],
                     perm=[0, 2, 1, 3]),
                node("Reshape", [out + "_t", "merge"], [out])]

    save("fused_attention_masked_rows",
         heads + [
             node("Add", ["scaled", "minus_inf_mask"], ["masked"]),
             node("Softmax", ["masked"], ["p1"], axis=-1)] +
         guard("p1") + merge("p1_guarded", "float_mask_zeroed") + [
             node("And", ["keep", "causal"], ["visible"]),
             node("Where", ["visible", "scaled", "minus_inf"], ["filled"]),
             node("Softmax", ["filled"], ["p2"], axis=-1)] +
         guard("p2") + merge("p2_guarded", "bool_causal_zeroed") + [
             node("Where", ["keep", "scaled", "lowest"], ["lowest_filled"]),
             node("Softmax", ["lowest_filled"], ["p3"], axis=-1)] +
         merge("p3", "bool_uniform"),
         {"q": randn(2, 4, 8), "k": randn(2, 6, 8), "v": randn(2, 6, 8),
          "minus_inf_mask": minus_inf, "keep": keep},
         ["float_mask_zeroed", "bool_causal_zeroed", "bool_uniform"],
         initializers=[
             const_i64("split_q", [2, 4, 2, 4]),
             const_i64("split_k", [2, 6, 2, 4]),
             const_i64("merge", [2, 4, 8]),
             helper.make_tensor("half", F32, [], [0.5]),
             helper.make_tensor("zero", F32, [], [0.0]),
             helper.make_tensor("minus_inf", F32, [], [-np.inf]),
             helper.make_tensor("lowest", F32, [],
                                [np.finfo(np.float32).min]),
             helper.make_tensor("causal", BOOL, [4, 6],
                                causal.flatten().tolist())])


if __name__ == "__main__":
    main()

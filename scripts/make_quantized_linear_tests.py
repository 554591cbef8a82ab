#!/usr/bin/env python3
"""Regenerate test/e2e/ops/quantized-linear.mlir and its inputs/outputs.

Each quantized or mixed-precision form of `lmopt.linear` (docs/dialect.md,
"Quantized and mixed-precision linears") is written by hand in one MLIR
function, with its integer weights and scales as constants, next to an
independent computation of the same numbers:

- dynamic per tensor: ONNX DynamicQuantizeLinear + MatMulInteger + scale
  Muls + bias Add, run by ONNX Runtime (u8 weight with a zero point, and an
  i8 weight per output channel);
- static int8: a QDQ graph (QuantizeLinear/DequantizeLinear on the
  activation, DequantizeLinear of an int8 per-axis weight, MatMul, Add, Relu)
  run by ONNX Runtime;
- int4 weight-only: com.microsoft MatMulNBits (4 bits, block 32, with and
  without zero points) run by ONNX Runtime;
- dynamic per token: NumPy implementing the rule stated in the doc;
- bf16 / fp16: NumPy (ml_dtypes for bf16) on the rounded operands.

Writes test/e2e/ops/quantized-linear.mlir and
test/e2e/ops/Inputs/quantized_linear.{inputs,ref}.npz. Needs numpy,
ml_dtypes, onnx and onnxruntime:

    python3 scripts/make_quantized_linear_tests.py
"""

import os

import ml_dtypes
import numpy as np
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TEST_DIR = os.path.join(ROOT, "test", "e2e", "ops")
RNG = np.random.default_rng(20261202)
K, N, K4 = 16, 8, 64
BLOCK = 32


def randn(*shape):
    return RNG.standard_normal(shape).astype(np.float32)


def f(value):
    """A float32 value printed exactly (as MLIR parses it into a double)."""
    return "%.17g" % float(np.float32(value))


def dense(array):
    """An MLIR dense literal of an integer or float array."""
    def fmt(a):
        if a.ndim == 0:
            return f(a) if a.dtype.kind == "f" else str(int(a))
        return "[" + ", ".join(fmt(x) for x in a) + "]"
    return "dense<" + fmt(array) + ">"


def run_ort(nodes, inputs, initializers, output, opset=21, ms=False):
    infos = [helper.make_tensor_value_info(name, TensorProto.FLOAT,
                                           list(value.shape))
             for name, value in inputs.items()]
    graph = helper.make_graph(
        nodes, "g", infos,
        [helper.make_tensor_value_info(output, TensorProto.FLOAT, None)],
        initializer=[numpy_helper.from_array(v, k)
                     for k, v in initializers.items()])
    opsets = [helper.make_opsetid("", opset)]
    if ms:
        opsets.append(helper.make_opsetid("com.microsoft", 1))
    model = helper.make_model(graph, opset_imports=opsets)
    model.ir_version = 10
    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    options.intra_op_num_threads = 1
    session = ort.InferenceSession(model.SerializeToString(), options,
                                   providers=["CPUExecutionProvider"])
    return session.run([output], inputs)[0]


def per_tensor_u8(x):
    """u8 weight with a zero point, per tensor."""
    wq = RNG.integers(0, 256, (K, N)).astype(np.uint8)
    wzp, ws, b = np.uint8(131), np.float32(0.0137), randn(N)
    nodes = [
        helper.make_node("DynamicQuantizeLinear", ["x"], ["xq", "xs", "xzp"]),
        helper.make_node("MatMulInteger", ["xq", "wq", "xzp", "wzp"], ["yi"]),
        helper.make_node("Cast", ["yi"], ["yf"], to=TensorProto.FLOAT),
        helper.make_node("Mul", ["xs", "ws"], ["s"]),
        helper.make_node("Mul", ["yf", "s"], ["ys"]),
        helper.make_node("Add", ["ys", "b"], ["out"])]
    ref = run_ort(nodes, {"x": x}, {"wq": wq, "wzp": np.array(wzp),
                                    "ws": np.array(ws), "b": b}, "out")
    qtype = f"!quant.uniform<u8:f32, {f(ws)}:{int(wzp)}>"
    body = f"""
  %wq = lmopt.constant {dense(wq.view(np.int8))} : tensor<{K}x{N}xi8>
  %w = quant.scast %wq : tensor<{K}x{N}xi8> to tensor<{K}x{N}x{qtype}>
  %b = lmopt.constant {dense(b)} : tensor<{N}xf32>
  %y = lmopt.linear %x, %w bias %b {{input_quantization = #lmopt.input_quantization<dynamic_per_tensor>}} : (tensor<2x3x{K}xf32>, tensor<{K}x{N}x{qtype}>, tensor<{N}xf32>) -> tensor<2x3x{N}xf32>"""
    return body, ref


def per_channel_i8(x):
    """i8 weight per output channel (per column of MatMulInteger's b)."""
    wq = RNG.integers(-127, 128, (K, N)).astype(np.int8)
    ws, b = (RNG.random(N) * 0.02 + 0.001).astype(np.float32), randn(N)
    nodes = [
        helper.make_node("DynamicQuantizeLinear", ["x"], ["xq", "xs", "xzp"]),
        helper.make_node("MatMulInteger", ["xq", "wq", "xzp", "wzp"], ["yi"]),
        helper.make_node("Cast", ["yi"], ["yf"], to=TensorProto.FLOAT),
        helper.make_node("Mul", ["xs", "ws"], ["s"]),
        helper.make_node("Mul", ["yf", "s"], ["ys"]),
        helper.make_node("Add", ["ys", "b"], ["out"])]
    ref = run_ort(nodes, {"x": x}, {"wq": wq, "wzp": np.zeros(N, np.int8),
                                    "ws": ws, "b": b}, "out")
    qtype = "!quant.uniform<i8:f32:1, {" + ", ".join(f(s) for s in ws) + "}>"
    body = f"""
  %wq = lmopt.constant {dense(wq)} : tensor<{K}x{N}xi8>
  %w = quant.scast %wq : tensor<{K}x{N}xi8> to tensor<{K}x{N}x{qtype}>
  %b = lmopt.constant {dense(b)} : tensor<{N}xf32>
  %y = lmopt.linear %x, %w bias %b {{input_quantization = #lmopt.input_quantization<dynamic_per_tensor>}} : (tensor<2x3x{K}xf32>, tensor<{K}x{N}x{qtype}>, tensor<{N}xf32>) -> tensor<2x3x{N}xf32>"""
    return body, ref


def static_qdq(x):
    """QDQ: u8 activation with a zero point, i8 weight per output channel,
    transposed ([N, K], Gemm-style), with a relu epilogue."""
    xs, xzp = np.float32(0.0231), np.uint8(121)
    wq = RNG.integers(-127, 128, (N, K)).astype(np.int8)
    ws, b = (RNG.random(N) * 0.02 + 0.001).astype(np.float32), randn(N)
    nodes = [
        helper.make_node("QuantizeLinear", ["x", "xs", "xzp"], ["xq"]),
        helper.make_node("DequantizeLinear", ["xq", "xs", "xzp"], ["xd"]),
        helper.make_node("DequantizeLinear", ["wq", "ws", "wzp"], ["wd"],
                         axis=0),
        helper.make_node("Transpose", ["wd"], ["wt"], perm=[1, 0]),
        helper.make_node("MatMul", ["xd", "wt"], ["y"]),
        helper.make_node("Add", ["y", "b"], ["yb"]),
        helper.make_node("Relu", ["yb"], ["out"])]
    ref = run_ort(nodes, {"x": x},
                  {"xs": np.array(xs), "xzp": np.array(xzp), "wq": wq,
                   "ws": ws, "wzp": np.zeros(N, np.int8), "b": b}, "out")
    xtype = f"!quant.uniform<u8:f32, {f(xs)}:{int(xzp)}>"
    wtype = "!quant.uniform<i8:f32:0, {" + ", ".join(f(s) for s in ws) + "}>"
    body = f"""
  %xq = lmopt.quantize %x : tensor<2x3x{K}xf32> -> tensor<2x3x{K}x{xtype}>
  %wq = lmopt.constant {dense(wq)} : tensor<{N}x{K}xi8>
  %w = quant.scast %wq : tensor<{N}x{K}xi8> to tensor<{N}x{K}x{wtype}>
  %b = lmopt.constant {dense(b)} : tensor<{N}xf32>
  %y = lmopt.linear %xq, %w bias %b {{activation = #lmopt.activation<relu>, transpose_weight = true}} : (tensor<2x3x{K}x{xtype}>, tensor<{N}x{K}x{wtype}>, tensor<{N}xf32>) -> tensor<2x3x{N}xf32>"""
    return body, ref


def nbits(x, with_zero_points):
    """MatMulNBits, 4 bits, block 32: u4 with a zero point per block, or,
    without zero points (ONNX Runtime's default 8), i4 with zero point 0."""
    blocks = K4 // BLOCK
    q = RNG.integers(0, 16, (N, K4)).astype(np.uint8)
    scales = (RNG.random((N, blocks)) * 0.05 + 0.005).astype(np.float32)
    zps = RNG.integers(0, 16, (N, blocks)).astype(np.uint8)
    b = randn(N)
    packed = (q[:, 0::2] | (q[:, 1::2] << 4)).reshape(N, blocks, BLOCK // 2)
    inits = {"B": packed, "scales": scales.reshape(-1), "bias": b}
    inputs = ["x", "B", "scales"]
    if with_zero_points:
        zp_bytes = (blocks + 1) // 2
        zp_packed = np.zeros((N, zp_bytes), np.uint8)
        for j in range(blocks):
            zp_packed[:, j // 2] |= zps[:, j] << (4 * (j % 2))
        inits["zp"] = zp_packed.reshape(-1)
        inputs.append("zp")
    nodes = [
        helper.make_node("MatMulNBits", inputs, ["y"], domain="com.microsoft",
                         K=K4, N=N, bits=4, block_size=BLOCK),
        helper.make_node("Add", ["y", "bias"], ["out"])]
    ref = run_ort(nodes, {"x": x}, inits, "out", ms=True)
    if with_zero_points:
        storage, values = "u4", q.astype(np.int64)
        params = [[f"{f(scales[n, j])}:{int(zps[n, j])}" for j in range(blocks)]
                  for n in range(N)]
    else:
        storage, values = "i4", q.astype(np.int64) - 8
        params = [[f(scales[n, j]) for j in range(blocks)] for n in range(N)]
    bits = np.where(values >= 8, values - 16, values)
    qtype = (f"!quant.uniform<{storage}:f32:{{0:1, 1:{BLOCK}}}, {{"
             + ", ".join("{" + ", ".join(row) + "}" for row in params) + "}>")
    body = f"""
  %wq = lmopt.constant {dense(bits)} : tensor<{N}x{K4}xi4>
  %w = quant.scast %wq : tensor<{N}x{K4}xi4> to tensor<{N}x{K4}x{qtype}>
  %b = lmopt.constant {dense(b)} : tensor<{N}xf32>
  %y = lmopt.linear %x64, %w bias %b {{transpose_weight = true}} : (tensor<2x3x{K4}xf32>, tensor<{N}x{K4}x{qtype}>, tensor<{N}xf32>) -> tensor<2x3x{N}xf32>"""
    return body, ref


def per_token(x):
    """The per-token rule of docs/dialect.md in NumPy: each row to i8 with
    scale max|row| / 127 (1 for a zero row), round half to even."""
    wq = RNG.integers(-127, 128, (N, K)).astype(np.int8)
    ws, b, r = (RNG.random(N) * 0.02 + 0.001).astype(np.float32), randn(N), \
        randn(2, 3, N)
    x = x.copy()
    x[1, 2, :] = 0.0  # a row of zeros
    rows = x.reshape(-1, K)
    scale = np.abs(rows).max(axis=1) / np.float32(127)
    scale = np.where(scale == 0, np.float32(1), scale).astype(np.float32)
    xq = np.clip(np.rint(rows / scale[:, None]), -127, 127)
    xd = xq.astype(np.float64) * scale[:, None].astype(np.float64)
    wd = wq.astype(np.float64) * ws[:, None].astype(np.float64)
    y = (xd @ wd.T + b).reshape(2, 3, N)
    gelu = 0.5 * y * (1.0 + np.tanh(np.sqrt(2 / np.pi) * (y + 0.044715 * y**3)))
    ref = (gelu + r).astype(np.float32)
    wtype = "!quant.uniform<i8:f32:0, {" + ", ".join(f(s) for s in ws) + "}>"
    body = f"""
  %wq = lmopt.constant {dense(wq)} : tensor<{N}x{K}xi8>
  %w = quant.scast %wq : tensor<{N}x{K}xi8> to tensor<{N}x{K}x{wtype}>
  %b = lmopt.constant {dense(b)} : tensor<{N}xf32>
  %r = lmopt.constant {dense(r)} : tensor<2x3x{N}xf32>
  %y = lmopt.linear %xz, %w bias %b residual %r {{activation = #lmopt.activation<gelu_tanh>, input_quantization = #lmopt.input_quantization<dynamic_per_token>, transpose_weight = true}} : (tensor<2x3x{K}xf32>, tensor<{N}x{K}x{wtype}>, tensor<{N}xf32>, tensor<2x3x{N}xf32>) -> tensor<2x3x{N}xf32>"""
    return body, ref, x


def half(x, dtype, name):
    """bf16 / fp16: input cast by lmopt.cast, weight constant of that type,
    products and sums exact (float64), f32 result."""
    w = randn(K, N).astype(dtype)
    b = randn(N)
    y = x.astype(dtype).astype(np.float64) @ w.astype(np.float64) + b
    ref = y.astype(np.float32)
    body = f"""
  %xh = lmopt.cast %x : tensor<2x3x{K}xf32> -> tensor<2x3x{K}x{name}>
  %w = lmopt.constant {dense(w.astype(np.float32))} : tensor<{K}x{N}x{name}>
  %b = lmopt.constant {dense(b)} : tensor<{N}xf32>
  %y = lmopt.linear %xh, %w bias %b : (tensor<2x3x{K}x{name}>, tensor<{K}x{N}x{name}>, tensor<{N}xf32>) -> tensor<2x3x{N}xf32>"""
    return body, ref


HEADER = """\
// Generated by scripts/make_quantized_linear_tests.py; do not edit.
//
// Each quantized and mixed-precision form of lmopt.linear, evaluated by
// lmopt-interpret, against outputs computed independently: ONNX Runtime on
// the ONNX graphs the forms stand for (DynamicQuantizeLinear +
// MatMulInteger, QDQ, com.microsoft MatMulNBits), NumPy for the per-token
// rule and for bf16/fp16.
"""


def main():
    x = randn(2, 3, K) * 2.0
    x64 = randn(2, 3, K4)
    cases = []  # (name, function body, reference, extra inputs)
    body, ref = per_tensor_u8(x)
    cases.append(("per_tensor_u8", body, ref))
    body, ref = per_channel_i8(x)
    cases.append(("per_channel_i8", body, ref))
    body, ref = static_qdq(x)
    cases.append(("static_qdq", body, ref))
    body, ref = nbits(x64, with_zero_points=True)
    cases.append(("int4_u4_zero_points", body, ref))
    body, ref = nbits(x64, with_zero_points=False)
    cases.append(("int4_i4_symmetric", body, ref))
    body, ref, xz = per_token(x)
    cases.append(("per_token", body, ref))
    body, ref = half(x, ml_dtypes.bfloat16, "bf16")
    cases.append(("bf16", body, ref))
    body, ref = half(x, np.float16, "f16")
    cases.append(("fp16", body, ref))

    inputs = {"x": x, "x64": x64, "xz": xz}
    os.makedirs(os.path.join(TEST_DIR, "Inputs"), exist_ok=True)
    np.savez(os.path.join(TEST_DIR, "Inputs", "quantized_linear.inputs.npz"),
             **inputs)
    lines = [HEADER]
    for name, body, ref in cases:
        np.savez(os.path.join(TEST_DIR, "Inputs",
                              f"quantized_linear_{name}.ref.npz"), out=ref)
        lines.append(
            f"// RUN: lmopt-interpret %s --function={name} "
            f"--inputs %S/Inputs/quantized_linear.inputs.npz "
            f"--compare %S/Inputs/quantized_linear_{name}.ref.npz %tolerance "
            f"| FileCheck %s --check-prefix={name.upper()}\n"
            f"// {name.upper()}: out: shape 2x3x{N}, {{{{.*}}}}: PASS\n"
            f"func.func @{name}(%x: tensor<2x3x{K}xf32>, "
            f"%x64: tensor<2x3x{K4}xf32>, %xz: tensor<2x3x{K}xf32>) "
            f"-> tensor<2x3x{N}xf32>\n"
            f"    attributes {{lmopt.input_names = [\"x\", \"x64\", \"xz\"], "
            f"lmopt.output_names = [\"out\"]}} {{"
            f"{body}\n  return %y : tensor<2x3x{N}xf32>\n}}\n")
    with open(os.path.join(TEST_DIR, "quantized-linear.mlir"), "w") as out:
        out.write("\n".join(lines))


if __name__ == "__main__":
    main()

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
test/e2e/ops/Inputs/quantized_linear*.npz.

It also writes test/e2e/ops/quantize-pass.mlir: float linears run through
`lmopt-quantize` in every mode, against NumPy applying the rules of
docs/quantization.md to the same weights (per-channel int8, int4 blocks
symmetric and not, the static input range from a calibration table
written next to it, bf16/fp16 rounding) and the input rules of
docs/dialect.md. Needs numpy, ml_dtypes, onnx and onnxruntime:

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


# --- lmopt-quantize against NumPy ----------------------------------------

F = np.float32


def q_int8_weight(w, axis):
    """Per output channel (`axis`), symmetric: scale max|w| / 127 in f32."""
    m = np.abs(w).max(axis=1 - axis, keepdims=True)
    scale = np.where(m == 0, F(1), m / F(127)).astype(F)
    q = np.clip(np.rint(w / scale), -127, 127)
    return q.astype(np.float64) * scale.astype(np.float64)


# Clip ratios the int4 search tries: 1.0 down to 0.5 in steps of 0.05.
CLIP = [F(20 - i) / F(20) for i in range(11)]


def f16(x):
    """Rounded to the nearest f16 (ties to even), as f32."""
    return np.asarray(x, F).astype(np.float16).astype(F)


def q_int4_block(v, symmetric):
    """One block: the clip ratio(s) whose f16 scale gives the least squared
    error (the first on ties); returns the dequantized values."""
    lo, hi = min(F(0), v.min()), max(F(0), v.max())
    best, best_err = (F(1), F(0)), np.inf
    if symmetric:
        m = max(-lo, hi)
        cands = [] if m == 0 else [(f16(a * m / F(7)), None) for a in CLIP]
    else:
        cands = [] if hi == lo else [
            (f16((b * hi - a * lo) / F(15)), a * lo) for a in CLIP for b in CLIP]
    for scale, clo in cands:
        if scale == 0:
            continue
        if symmetric:
            zp = F(0)
            q = np.clip(np.rint(v / scale), -7, 7)
        else:
            zp = F(np.clip(np.rint(-clo / scale), 0, 15))
            q = np.clip(np.rint(v / scale) + zp, 0, 15)
        d = v - (q - zp).astype(F) * scale
        err = float(np.sum(d.astype(np.float64) ** 2))
        if err < best_err:
            best, best_err = (scale, zp), err
    scale, zp = best
    if symmetric:
        q = np.clip(np.rint(v / scale), -7, 7)
    else:
        q = np.clip(np.rint(v / scale) + zp, 0, 15)
    return (q - zp).astype(np.float64) * np.float64(scale)


def q_int4_weight(w, symmetric):
    """[N, K] weight, blocks of BLOCK along K."""
    n, k = w.shape
    blocks = w.astype(F).reshape(n, k // BLOCK, BLOCK)
    d = np.stack([np.stack([q_int4_block(blocks[r, b], symmetric)
                            for b in range(k // BLOCK)])
                  for r in range(n)])
    return d.reshape(n, k)


def q_per_token(x):
    rows = x.reshape(-1, x.shape[-1])
    m = np.abs(rows).max(axis=1, keepdims=True)
    scale = np.where(m == 0, F(1), m / F(127)).astype(F)
    q = np.clip(np.rint(rows / scale), -127, 127)
    return (q.astype(np.float64) * scale.astype(np.float64)).reshape(x.shape)


def q_u8(x, lo, hi):
    """u8 with the range [lo, hi] widened to 0 (DynamicQuantizeLinear for
    the tensor's own range, static quantization for a calibrated one)."""
    lo, hi = min(F(0), F(lo)), max(F(0), F(hi))
    scale = F(1) if hi == lo else F((hi - lo) / F(255))
    zp = np.clip(np.rint(-lo / scale), 0, 255)
    q = np.clip(np.rint(x / scale) + zp, 0, 255)
    return (q - zp).astype(np.float64) * np.float64(scale)


def quantize_pass_tests():
    x = randn(2, 3, K4)
    w_t = randn(N, K4) * 0.1   # [N, K], transpose_weight
    w = randn(K4, N) * 0.1     # [K, N]
    b = randn(N)
    table = os.path.join(TEST_DIR, "Inputs", "quantize_pass.calibration.json")
    # The observed range, slightly narrower than x's so that saturation at
    # the range ends is exercised too.
    lo, hi = float(x.min()) * 0.9, float(x.max()) * 0.9
    with open(table, "w") as out:
        out.write('{"version": 1, "tensors": {"fc_t": {"min": %r, "max": %r}, '
                  '"fc": {"min": %r, "max": %r}}}\n' % (lo, hi, lo, hi))

    def linear(xd, wd_t, wd):
        return {"y_t": (xd @ wd_t.T + b).astype(F), "y": (xd @ wd + b).astype(F)}

    xf = x.astype(np.float64)
    refs = {
        "int8_dynamic": linear(q_per_token(x), q_int8_weight(w_t, 0),
                               q_int8_weight(w, 1)),
        "int8_dynamic_per_tensor": linear(q_u8(x, x.min(), x.max()),
                                          q_int8_weight(w_t, 0),
                                          q_int8_weight(w, 1)),
        "int8_static": linear(q_u8(x, lo, hi), q_int8_weight(w_t, 0),
                              q_int8_weight(w, 1)),
        "int4_symmetric": linear(xf, q_int4_weight(w_t, True),
                                 q_int4_weight(w.T, True).T),
        "int4_asymmetric": linear(xf, q_int4_weight(w_t, False),
                                  q_int4_weight(w.T, False).T),
    }
    for name, dtype in (("bf16", ml_dtypes.bfloat16), ("fp16", np.float16)):
        xh = x.astype(dtype).astype(np.float64)
        refs[name] = linear(xh, w_t.astype(dtype).astype(np.float64),
                            w.astype(dtype).astype(np.float64))
    options = {
        "int8_dynamic": "mode=int8-dynamic",
        "int8_dynamic_per_tensor": "mode=int8-dynamic-per-tensor",
        "int8_static": "mode=int8-static calibration-table="
                       "%S/Inputs/quantize_pass.calibration.json",
        "int4_symmetric": "mode=int4-weight",
        "int4_asymmetric": "mode=int4-weight symmetric=false",
        "bf16": "mode=bf16",
        "fp16": "mode=fp16",
    }
    np.savez(os.path.join(TEST_DIR, "Inputs", "quantize_pass.inputs.npz"), x=x)
    lines = [QUANTIZE_HEADER]
    for name, ref in refs.items():
        np.savez(os.path.join(TEST_DIR, "Inputs",
                              f"quantize_pass_{name}.ref.npz"), **ref)
        prefix = name.upper()
        lines.append(
            f"// RUN: lmopt-interpret %s --inputs %S/Inputs/quantize_pass.inputs.npz "
            f"--compare %S/Inputs/quantize_pass_{name}.ref.npz %tolerance "
            f"--pass-pipeline='builtin.module(func.func(lmopt-quantize{{{options[name]}}}))' "
            f"| FileCheck %s --check-prefix={prefix}\n"
            f"// {prefix}: y_t: shape 2x3x{N}, {{{{.*}}}}: PASS\n"
            f"// {prefix}-NEXT: y: shape 2x3x{N}, {{{{.*}}}}: PASS")
    lines.append(
        f"// The pass must have changed the numbers: the f32 linears alone do\n"
        f"// not match the int8 reference.\n"
        f"// RUN: not lmopt-interpret %s --inputs %S/Inputs/quantize_pass.inputs.npz "
        f"--compare %S/Inputs/quantize_pass_int8_dynamic.ref.npz %tolerance "
        f"| FileCheck %s --check-prefix=FLOAT\n"
        f"// FLOAT: y_t: shape 2x3x{N}, {{{{.*}}}}: FAIL\n")
    lines.append(
        f"func.func @main(%x: tensor<2x3x{K4}xf32>) -> (tensor<2x3x{N}xf32>, "
        f"tensor<2x3x{N}xf32>)\n"
        f"    attributes {{lmopt.input_names = [\"x\"], "
        f"lmopt.output_names = [\"y_t\", \"y\"]}} {{\n"
        f"  %w_t = lmopt.constant {dense(w_t)} : tensor<{N}x{K4}xf32>\n"
        f"  %w = lmopt.constant {dense(w)} : tensor<{K4}x{N}xf32>\n"
        f"  %b = lmopt.constant {dense(b)} : tensor<{N}xf32>\n"
        f"  %y_t = lmopt.linear %x, %w_t bias %b {{transpose_weight = true}} : "
        f"(tensor<2x3x{K4}xf32>, tensor<{N}x{K4}xf32>, tensor<{N}xf32>) -> "
        f"tensor<2x3x{N}xf32> loc(\"fc_t\")\n"
        f"  %y = lmopt.linear %x, %w bias %b : (tensor<2x3x{K4}xf32>, "
        f"tensor<{K4}x{N}xf32>, tensor<{N}xf32>) -> tensor<2x3x{N}xf32> "
        f"loc(\"fc\")\n"
        f"  return %y_t, %y : tensor<2x3x{N}xf32>, tensor<2x3x{N}xf32>\n}}\n")
    with open(os.path.join(TEST_DIR, "quantize-pass.mlir"), "w") as out:
        out.write("\n".join(lines))


QUANTIZE_HEADER = """\
// Generated by scripts/make_quantized_linear_tests.py; do not edit.
//
// lmopt-quantize in every mode on two float linears (a [N, K] weight with
// transpose_weight and a [K, N] one), evaluated by lmopt-interpret, against
// NumPy applying the quantization rules of docs/quantization.md and the
// input rules of docs/dialect.md to the same weights and inputs.
"""


if __name__ == "__main__":
    main()
    quantize_pass_tests()

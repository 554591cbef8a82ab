"""Prints an MLIR module for the fused-QKV attention tests
(test/tools/lmopt-compile/fused-bf16-attention-inputs.test and
fused-bf16-outputs.test): x [2, 32, 128] -> a linear to [2, 32, 384] (Q, K
and V side by side) -> split -> an attention of 2 heads of 64 (scale 1/8,
a power of two) -> a linear. Weights are sines, written out in full."""
import numpy as np, sys
def dense(a):
    return "dense<" + np.array2string(a, separator=", ", threshold=10**9, max_line_width=10**9, formatter={'float_kind': lambda v: f"{v:.4f}"}) + ">"
w = (np.sin(np.arange(128 * 384) * 0.37) * 0.1).reshape(128, 384).astype(np.float32)
b = (np.cos(np.arange(384) * 0.11) * 0.05).astype(np.float32)
wo = (np.sin(np.arange(128 * 128) * 0.23) * 0.1).reshape(128, 128).astype(np.float32)
T = "tensor<2x32x128xf32>"
print(f'''func.func @main(%x: {T}) -> {T}
    attributes {{lmopt.input_names = ["x"], lmopt.output_names = ["y"]}} {{
  %w = lmopt.constant {dense(w)} : tensor<128x384xf32>
  %b = lmopt.constant {dense(b)} : tensor<384xf32>
  %wo = lmopt.constant {dense(wo)} : tensor<128x128xf32>
  %qkv = lmopt.linear %x, %w bias %b : ({T}, tensor<128x384xf32>, tensor<384xf32>) -> tensor<2x32x384xf32> loc("qkv")
  %p:3 = lmopt.split %qkv {{axis = 2 : i64, split_sizes = array<i64: 128, 128, 128>}} : (tensor<2x32x384xf32>) -> ({T}, {T}, {T})
  %a = lmopt.attention %p#0, %p#1, %p#2 {{num_heads = 2 : i64}} : ({T}, {T}, {T}) -> {T} loc("attn")
  %y = lmopt.linear %a, %wo : ({T}, tensor<128x128xf32>) -> {T} loc("out")
  return %y : {T}
}}''')

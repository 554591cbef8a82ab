"""Writes a model that exercises the plan's features, its inputs, and the
outputs NumPy computes for it, into the folder given as argument:
model.mlir, inputs.npz and ref.npz.

The model has a linear whose residual dies at it (written in place), a
reshaped input (a copy), a static reshape of an intermediate (an alias), a
kernel, a gather, an input returned as an output and a value returned twice.
"""

import os
import sys

import numpy as np

out = sys.argv[1]
x = (np.arange(32, dtype=np.float32).reshape(4, 8) - 16) / 8
ids = np.array([[0, 3, 9], [9, 1, 2]], dtype=np.int64)
w1 = ((np.arange(64, dtype=np.float32) % 7) - 3).reshape(8, 8) / 10
b1 = np.arange(8, dtype=np.float32) / 4
w2 = ((np.arange(64, dtype=np.float32) % 5) - 2).reshape(8, 8) / 10
table = np.arange(40, dtype=np.float32).reshape(10, 4)


def literal(a):
    return np.array2string(a, separator=", ", threshold=1 << 20,
                           floatmode="unique").replace("\n", "")


def ty(a):
    dims = "x".join(str(d) for d in a.shape)
    return f"tensor<{dims}x{'f32' if a.dtype == np.float32 else 'i64'}>"


h = np.maximum(x @ w1 + b1, 0)               # fc1: bias, relu
r = x @ w2.T                                 # fc2: transposed weight
z = h @ w1 + b1 + r                          # fc3: residual r, in place
flat = np.exp(x.reshape(32))                 # copy of the input, kernel
z3 = z.reshape(4, 1, 8)                      # alias
emb = table[ids]                             # gather

model = f"""
func.func @main(%x: {ty(x)}, %ids: {ty(ids)})
    -> ({ty(z3)}, tensor<32xf32>, {ty(emb)}, {ty(emb)}, {ty(x)})
    attributes {{lmopt.input_names = ["x", "ids"],
                lmopt.output_names = ["z", "flat", "emb", "emb_again", "x_out"]}} {{
  %w1 = lmopt.constant dense<{literal(w1)}> : {ty(w1)}
  %b1 = lmopt.constant dense<{literal(b1)}> : {ty(b1)}
  %w2 = lmopt.constant dense<{literal(w2)}> : {ty(w2)}
  %table = lmopt.constant dense<{literal(table)}> : {ty(table)}
  %s32 = lmopt.constant dense<[32]> : tensor<1xi64>
  %s418 = lmopt.constant dense<[4, 1, 8]> : tensor<3xi64>
  %h = lmopt.linear %x, %w1 bias %b1 {{activation = #lmopt.activation<relu>}}
      : ({ty(x)}, {ty(w1)}, {ty(b1)}) -> {ty(h)}
  %r = lmopt.linear %x, %w2 {{transpose_weight = true}}
      : ({ty(x)}, {ty(w2)}) -> {ty(r)}
  %z = lmopt.linear %h, %w1 bias %b1 residual %r
      : ({ty(h)}, {ty(w1)}, {ty(b1)}, {ty(r)}) -> {ty(z)}
  %xf = lmopt.reshape %x, %s32 : ({ty(x)}, tensor<1xi64>) -> tensor<32xf32>
  %flat = lmopt.exp %xf : tensor<32xf32>
  %z3 = lmopt.reshape %z, %s418 : ({ty(z)}, tensor<3xi64>) -> {ty(z3)}
  %emb = lmopt.gather %table, %ids : ({ty(table)}, {ty(ids)}) -> {ty(emb)}
  return %z3, %flat, %emb, %emb, %x
      : {ty(z3)}, tensor<32xf32>, {ty(emb)}, {ty(emb)}, {ty(x)}
}}
"""
with open(os.path.join(out, "model.mlir"), "w") as f:
    f.write(model)
np.savez(os.path.join(out, "inputs.npz"), x=x, ids=ids)
np.savez(os.path.join(out, "ref.npz"), z=z3, flat=flat, emb=emb,
         emb_again=emb, x_out=x)

// RUN: not lmopt-opt %s -split-input-file -lmopt-quantize="mode=int8-static calibration-table=%S/Inputs/calibration.json" -o /dev/null 2>&1 | FileCheck %s --check-prefixes=CHECK,STATIC
// RUN: not lmopt-opt %s -split-input-file -lmopt-quantize=mode=int4-weight -o /dev/null 2>&1 | FileCheck %s --check-prefixes=CHECK,INT4

// The diagnostics of lmopt-quantize that name a linear (by its layer name,
// so the locations here are names and FileCheck reads stderr); the option
// and table errors are in quantize-options.mlir.

// CHECK: error: loc("layer0/fc"): weight of linear 'layer0/fc' has NaN at element 3; cannot quantize it
func.func @nan_weight(%x: tensor<2x4xf32>) -> tensor<2x2xf32> {
  %w = lmopt.constant dense<[[1.0, 0.0], [0.0, 0x7FC00000], [0.0, 0.0], [0.0, 0.0]]> : tensor<4x2xf32>
  %y = lmopt.linear %x, %w : (tensor<2x4xf32>, tensor<4x2xf32>) -> tensor<2x2xf32> loc("layer0/fc")
  return %y : tensor<2x2xf32>
}

// -----

// CHECK: error: loc("layer1/fc"): weight of linear 'layer1/fc' has -Inf at element 0; cannot quantize it
func.func @inf_weight(%x: tensor<2x32xf32>) -> tensor<2x2xf32> {
  %w = lmopt.constant dense<0xFF800000> : tensor<32x2xf32>
  %y = lmopt.linear %x, %w : (tensor<2x32xf32>, tensor<32x2xf32>) -> tensor<2x2xf32> loc("layer1/fc")
  return %y : tensor<2x2xf32>
}

// -----

// CHECK: remark: loc("layer5/fc"): linear 'layer5/fc' not quantized: its weight is not a constant f32
func.func @weight_not_constant(%x: tensor<2x4xf32>, %w: tensor<4x2xf32>) -> tensor<2x2xf32> {
  %y = lmopt.linear %x, %w : (tensor<2x4xf32>, tensor<4x2xf32>) -> tensor<2x2xf32> loc("layer5/fc")
  return %y : tensor<2x2xf32>
}

// -----

// int8-static: no entry for this layer in the table. int4: K = 48 is not a
// multiple of 32, so the layer stays f32 and the pass succeeds.
// STATIC: error: loc("layer9/fc"): no calibration table entry for linear 'layer9/fc'
// INT4: remark: loc("layer9/fc"): linear 'layer9/fc' not quantized: block size 32 does not divide its contraction dim 48
func.func @no_table_entry_or_block(%x: tensor<2x48xf32>) -> tensor<2x2xf32> {
  %w = lmopt.constant dense<0.5> : tensor<48x2xf32>
  %y = lmopt.linear %x, %w : (tensor<2x48xf32>, tensor<48x2xf32>) -> tensor<2x2xf32> loc("layer9/fc")
  return %y : tensor<2x2xf32>
}

// The fused ops written by hand, against ONNX Runtime's outputs for the
// decomposed ONNX graphs they stand for (make_op_models.py writes both
// from the same inputs, bound here by name).

// RUN: lmopt-interpret %s --function=linear --inputs %S/Inputs/fused_linear.inputs.npz --compare %S/Inputs/fused_linear.ref.npz %tolerance | FileCheck %s --check-prefix=LINEAR
// LINEAR: gelu_tanh_residual: shape 2x3x5, {{.*}}: PASS
// LINEAR-NEXT: relu: shape 2x3x5, {{.*}}: PASS
// LINEAR-NEXT: gelu: shape 2x3x5, {{.*}}: PASS
// LINEAR-NEXT: plain: shape 2x3x5, {{.*}}: PASS
func.func @linear(%x: tensor<2x3x4xf32>, %w: tensor<5x4xf32>,
                  %b: tensor<5xf32>, %r: tensor<2x3x5xf32>,
                  %w2: tensor<4x5xf32>)
    -> (tensor<2x3x5xf32>, tensor<2x3x5xf32>, tensor<2x3x5xf32>,
        tensor<2x3x5xf32>)
    attributes {lmopt.input_names = ["x", "w", "b", "r", "w2"],
                lmopt.output_names = ["gelu_tanh_residual", "relu", "gelu",
                                      "plain"]} {
  %0 = lmopt.linear %x, %w bias %b residual %r {activation = #lmopt.activation<gelu_tanh>, transpose_weight = true} : (tensor<2x3x4xf32>, tensor<5x4xf32>, tensor<5xf32>, tensor<2x3x5xf32>) -> tensor<2x3x5xf32>
  %1 = lmopt.linear %x, %w bias %b {activation = #lmopt.activation<relu>, transpose_weight = true} : (tensor<2x3x4xf32>, tensor<5x4xf32>, tensor<5xf32>) -> tensor<2x3x5xf32>
  %2 = lmopt.linear %x, %w bias %b {activation = #lmopt.activation<gelu>, transpose_weight = true} : (tensor<2x3x4xf32>, tensor<5x4xf32>, tensor<5xf32>) -> tensor<2x3x5xf32>
  %3 = lmopt.linear %x, %w2 : (tensor<2x3x4xf32>, tensor<4x5xf32>) -> tensor<2x3x5xf32>
  return %0, %1, %2, %3 : tensor<2x3x5xf32>, tensor<2x3x5xf32>, tensor<2x3x5xf32>, tensor<2x3x5xf32>
}

// RUN: lmopt-interpret %s --function=attention --inputs %S/Inputs/fused_attention.inputs.npz --compare %S/Inputs/fused_attention.ref.npz %tolerance | FileCheck %s --check-prefix=ATTENTION
// ATTENTION: float_mask_out: shape 2x4x8, {{.*}}: PASS
// ATTENTION-NEXT: bool_causal_out: shape 2x4x8, {{.*}}: PASS
func.func @attention(%q: tensor<2x4x8xf32>, %k: tensor<2x6x8xf32>,
                     %v: tensor<2x6x8xf32>, %float_mask: tensor<2x1x1x6xf32>,
                     %bool_mask: tensor<2x1x4x6xi1>)
    -> (tensor<2x4x8xf32>, tensor<2x4x8xf32>)
    attributes {lmopt.input_names = ["q", "k", "v", "float_mask",
                                     "bool_mask"],
                lmopt.output_names = ["float_mask_out", "bool_causal_out"]} {
  %0 = lmopt.attention %q, %k, %v mask %float_mask {num_heads = 2 : i64} : (tensor<2x4x8xf32>, tensor<2x6x8xf32>, tensor<2x6x8xf32>, tensor<2x1x1x6xf32>) -> tensor<2x4x8xf32>
  %1 = lmopt.attention %q, %k, %v mask %bool_mask {num_heads = 2 : i64, scale = 3.000000e-01 : f32, causal = true} : (tensor<2x4x8xf32>, tensor<2x6x8xf32>, tensor<2x6x8xf32>, tensor<2x1x4x6xi1>) -> tensor<2x4x8xf32>
  return %0, %1 : tensor<2x4x8xf32>, tensor<2x4x8xf32>
}

// Query rows whose keys are all hidden (by the mask, or by the mask and
// causal together): with zero_masked_rows they are zeros, as ONNX Runtime
// computes the SDPA export's where(isnan(softmax), 0, softmax); without it,
// an i1-masked row averages the values uniformly.
// RUN: lmopt-interpret %s --function=attention_masked_rows --inputs %S/Inputs/fused_attention_masked_rows.inputs.npz --compare %S/Inputs/fused_attention_masked_rows.ref.npz %tolerance | FileCheck %s --check-prefix=MASKED_ROWS
// MASKED_ROWS: float_mask_zeroed: shape 2x4x8, {{.*}}: PASS
// MASKED_ROWS-NEXT: bool_causal_zeroed: shape 2x4x8, {{.*}}: PASS
// MASKED_ROWS-NEXT: bool_uniform: shape 2x4x8, {{.*}}: PASS
func.func @attention_masked_rows(%q: tensor<2x4x8xf32>, %k: tensor<2x6x8xf32>,
                                 %v: tensor<2x6x8xf32>,
                                 %minus_inf_mask: tensor<2x1x4x6xf32>,
                                 %keep: tensor<2x1x4x6xi1>)
    -> (tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32>)
    attributes {lmopt.input_names = ["q", "k", "v", "minus_inf_mask", "keep"],
                lmopt.output_names = ["float_mask_zeroed", "bool_causal_zeroed",
                                      "bool_uniform"]} {
  %0 = lmopt.attention %q, %k, %v mask %minus_inf_mask {num_heads = 2 : i64, zero_masked_rows = true} : (tensor<2x4x8xf32>, tensor<2x6x8xf32>, tensor<2x6x8xf32>, tensor<2x1x4x6xf32>) -> tensor<2x4x8xf32>
  %1 = lmopt.attention %q, %k, %v mask %keep {num_heads = 2 : i64, causal = true, zero_masked_rows = true} : (tensor<2x4x8xf32>, tensor<2x6x8xf32>, tensor<2x6x8xf32>, tensor<2x1x4x6xi1>) -> tensor<2x4x8xf32>
  %2 = lmopt.attention %q, %k, %v mask %keep {num_heads = 2 : i64} : (tensor<2x4x8xf32>, tensor<2x6x8xf32>, tensor<2x6x8xf32>, tensor<2x1x4x6xi1>) -> tensor<2x4x8xf32>
  return %0, %1, %2 : tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32>
}

// RUN: lmopt-interpret %s --function=norms --inputs %S/Inputs/fused_norms.inputs.npz --compare %S/Inputs/fused_norms.ref.npz %tolerance | FileCheck %s --check-prefix=NORMS
// NORMS: skip_out: shape 2x3x8, {{.*}}: PASS
// NORMS-NEXT: skip_sum: shape 2x3x8, {{.*}}: PASS
// NORMS-NEXT: rms_out: shape 2x3x8, {{.*}}: PASS
// NORMS-NEXT: dropout_out: shape 2x3x8, {{.*}}: PASS
func.func @norms(%x: tensor<2x3x8xf32>, %skip: tensor<3x8xf32>,
                 %gamma: tensor<8xf32>, %beta: tensor<8xf32>)
    -> (tensor<2x3x8xf32>, tensor<2x3x8xf32>, tensor<2x3x8xf32>,
        tensor<2x3x8xf32>)
    attributes {lmopt.input_names = ["x", "skip", "gamma", "beta"],
                lmopt.output_names = ["skip_out", "skip_sum", "rms_out",
                                      "dropout_out"]} {
  %out, %sum = lmopt.skip_layer_norm %x, %skip, %gamma, %beta {epsilon = 1.000000e-05 : f32} : (tensor<2x3x8xf32>, tensor<3x8xf32>, tensor<8xf32>, tensor<8xf32>) -> (tensor<2x3x8xf32>, tensor<2x3x8xf32>)
  %rms = lmopt.rms_norm %x, %gamma {epsilon = 9.99999997E-7 : f32} : (tensor<2x3x8xf32>, tensor<8xf32>) -> tensor<2x3x8xf32>
  %kept, %mask = lmopt.dropout %x {ratio = 1.000000e-01 : f32} : (tensor<2x3x8xf32>) -> (tensor<2x3x8xf32>, tensor<2x3x8xi1>)
  return %out, %sum, %rms, %kept : tensor<2x3x8xf32>, tensor<2x3x8xf32>, tensor<2x3x8xf32>, tensor<2x3x8xf32>
}

// RUN: lmopt-interpret %s --function=quantize --inputs %S/Inputs/quantize.inputs.npz --compare %S/Inputs/quantize.ref.npz %tolerance | FileCheck %s --check-prefix=QUANTIZE
// QUANTIZE: per_tensor: shape 4x3, {{.*}}: PASS
// QUANTIZE-NEXT: per_axis: shape 4x3, {{.*}}: PASS
func.func @quantize(%x: tensor<4x3xf32>) -> (tensor<4x3xf32>, tensor<4x3xf32>)
    attributes {lmopt.input_names = ["x"],
                lmopt.output_names = ["per_tensor", "per_axis"]} {
  %q = lmopt.quantize %x : tensor<4x3xf32> -> tensor<4x3x!quant.uniform<i8:f32, 5.000000e-02:3>>
  %dq = lmopt.dequantize %q : tensor<4x3x!quant.uniform<i8:f32, 5.000000e-02:3>> -> tensor<4x3xf32>
  %qa = lmopt.quantize %x : tensor<4x3xf32> -> tensor<4x3x!quant.uniform<i8:f32:1, {2.000000e-02:0, 5.000000e-02:-3, 1.000000e-01:5}>>
  %dqa = lmopt.dequantize %qa : tensor<4x3x!quant.uniform<i8:f32:1, {2.000000e-02:0, 5.000000e-02:-3, 1.000000e-01:5}>> -> tensor<4x3xf32>
  return %dq, %dqa : tensor<4x3xf32>, tensor<4x3xf32>
}

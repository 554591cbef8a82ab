// How lmopt.linear writes its weight. A constant stored transposed
// (`transpose_weight`, PyTorch's [N, K]) is written once as the [K, N]
// initializer MatMul wants, its per-channel parameters moved to axis 1 (the
// output channel) and its block-wise ones transposed with it, so
// DequantizeLinear feeds MatMul directly; a computed weight keeps a
// Transpose node. The numerics of each
// form are checked by export-quantized-linear.test and export-fused-ops.test.

// RUN: rm -rf %t && mkdir -p %t
// DEFINE: %{export} = lmopt-translate --export-onnx %s -o %t/out.onnx --onnx-function-name
// DEFINE: %{print} = %lmopt_python %S/Inputs/print_graph.py %t/out.onnx

// RUN: %{export}=constant_float && %{print} | FileCheck %s --check-prefix=CONSTANT_FLOAT
// CONSTANT_FLOAT: initializer w_t: FLOAT 3x2
// CONSTANT_FLOAT-NOT: Transpose
// CONSTANT_FLOAT: node MatMul(x, w_t)
func.func @constant_float(%x: tensor<4x3xf32>) -> tensor<4x2xf32>
    attributes {lmopt.input_names = ["x"], lmopt.output_names = ["y"]} {
  %w = lmopt.constant dense<[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]> : tensor<2x3xf32> loc("w")
  %y = lmopt.linear %x, %w {transpose_weight = true} : (tensor<4x3xf32>, tensor<2x3xf32>) -> tensor<4x2xf32>
  return %y : tensor<4x2xf32>
}

// RUN: %{export}=negative_computed_float && %{print} | FileCheck %s --check-prefix=COMPUTED_FLOAT
// COMPUTED_FLOAT: node Transpose(w) {'perm': [1, 0]}
// COMPUTED_FLOAT-NEXT: node MatMul(x, {{.*}}Transpose)
func.func @negative_computed_float(%x: tensor<4x3xf32>, %w: tensor<2x3xf32>) -> tensor<4x2xf32>
    attributes {lmopt.input_names = ["x", "w"], lmopt.output_names = ["y"]} {
  %y = lmopt.linear %x, %w {transpose_weight = true} : (tensor<4x3xf32>, tensor<2x3xf32>) -> tensor<4x2xf32>
  return %y : tensor<4x2xf32>
}

// RUN: %{export}=per_channel_int8 && %{print} | FileCheck %s --check-prefix=PER_CHANNEL
// PER_CHANNEL-DAG: initializer wq_t: INT8 3x2
// PER_CHANNEL-DAG: initializer {{.*}}scale: FLOAT 2
// PER_CHANNEL-NOT: Transpose
// PER_CHANNEL: node MatMulInteger({{.*}}Cast, wq_t, , {{.*}}zero_point)
// PER_CHANNEL-NOT: Transpose
func.func @per_channel_int8(%x: tensor<4x3xf32>) -> tensor<4x2xf32>
    attributes {lmopt.input_names = ["x"], lmopt.output_names = ["y"]} {
  %wq = lmopt.constant dense<[[1, -2, 3], [-4, 5, -6]]> : tensor<2x3xi8> loc("wq")
  %w = quant.scast %wq : tensor<2x3xi8> to tensor<2x3x!quant.uniform<i8:f32:0, {0.5, 0.25}>>
  %y = lmopt.linear %x, %w {transpose_weight = true, input_quantization = #lmopt.input_quantization<dynamic_per_token>} : (tensor<4x3xf32>, tensor<2x3x!quant.uniform<i8:f32:0, {0.5, 0.25}>>) -> tensor<4x2xf32>
  return %y : tensor<4x2xf32>
}

// An unsigned weight stored as signless bits is written as UINT8.
// RUN: %{export}=unsigned_per_tensor && %{print} | FileCheck %s --check-prefix=UNSIGNED
// UNSIGNED-DAG: initializer wq: UINT8 3x2
// UNSIGNED-DAG: initializer {{.*}}zero_point: UINT8 scalar
// UNSIGNED: node DynamicQuantizeLinear(x)
// UNSIGNED-NEXT: node MatMulInteger({{.*}}x_quantized, wq, {{.*}}x_zero_point, {{.*}}zero_point)
func.func @unsigned_per_tensor(%x: tensor<4x3xf32>) -> tensor<4x2xf32>
    attributes {lmopt.input_names = ["x"], lmopt.output_names = ["y"]} {
  %wq = lmopt.constant dense<[[1, -2], [3, -4], [5, -6]]> : tensor<3x2xi8> loc("wq")
  %w = quant.scast %wq : tensor<3x2xi8> to tensor<3x2x!quant.uniform<u8:f32, 0.5:128>>
  %y = lmopt.linear %x, %w {input_quantization = #lmopt.input_quantization<dynamic_per_tensor>} : (tensor<4x3xf32>, tensor<3x2x!quant.uniform<u8:f32, 0.5:128>>) -> tensor<4x2xf32>
  return %y : tensor<4x2xf32>
}

// Block-wise parameters are transposed with the weight (blocks along K,
// now axis 0): DequantizeLinear (opset 21, packed INT4) feeds MatMul, the
// layout ONNX Runtime fuses into MatMulNBits.
// RUN: %{export}=blocked_int4 && %{print} | FileCheck %s --check-prefix=BLOCKED
// BLOCKED-DAG: initializer wq_t: INT4 4x2
// BLOCKED-DAG: initializer {{.*}}scale: FLOAT 2x2
// BLOCKED-NOT: Transpose
// BLOCKED: node DequantizeLinear(wq_t, {{.*}}) {'axis': 0, 'block_size': 2}
// BLOCKED-NEXT: node MatMul(x, {{.*}}DequantizeLinear)
// RUN: %{export}=blocked_int4 && %lmopt_python -c "import onnx, numpy as np; from onnx import numpy_helper as nh; m = onnx.load('%t/out.onnx'); t = {i.name: nh.to_array(i) for i in m.graph.initializer}; print(t['wq_t'].tolist(), t['q/scale'].tolist())" | FileCheck %s --check-prefix=BLOCKED_VALUES
// BLOCKED_VALUES: {{\[}}[1, 5], [-2, -6], [3, 7], [-4, -8]] {{\[}}[0.5, 0.125], [0.25, 1.0]]
func.func @blocked_int4(%x: tensor<4x4xf32>) -> tensor<4x2xf32>
    attributes {lmopt.input_names = ["x"], lmopt.output_names = ["y"]} {
  %wq = lmopt.constant dense<[[1, -2, 3, -4], [5, -6, 7, -8]]> : tensor<2x4xi4> loc("wq")
  %w = quant.scast %wq : tensor<2x4xi4> to tensor<2x4x!quant.uniform<i4:f32:{0:1, 1:2}, {{0.5, 0.25}, {0.125, 1.0}}>>
  %y = lmopt.linear %x, %w {transpose_weight = true} : (tensor<4x4xf32>, tensor<2x4x!quant.uniform<i4:f32:{0:1, 1:2}, {{0.5, 0.25}, {0.125, 1.0}}>>) -> tensor<4x2xf32>
  return %y : tensor<4x2xf32>
}

// A computed block-wise weight is dequantized as stored, then transposed.
// RUN: %{export}=negative_computed_int4 && %{print} | FileCheck %s --check-prefix=COMPUTED_INT4
// COMPUTED_INT4: node DequantizeLinear(wq, {{.*}}) {'axis': 1, 'block_size': 2}
// COMPUTED_INT4-NEXT: node Transpose({{.*}}DequantizeLinear) {'perm': [1, 0]}
func.func @negative_computed_int4(%x: tensor<4x4xf32>, %wq: tensor<2x4xi4>) -> tensor<4x2xf32>
    attributes {lmopt.input_names = ["x", "wq"], lmopt.output_names = ["y"]} {
  %w = quant.scast %wq : tensor<2x4xi4> to tensor<2x4x!quant.uniform<i4:f32:{0:1, 1:2}, {{0.5, 0.25}, {0.125, 1.0}}>>
  %y = lmopt.linear %x, %w {transpose_weight = true} : (tensor<4x4xf32>, tensor<2x4x!quant.uniform<i4:f32:{0:1, 1:2}, {{0.5, 0.25}, {0.125, 1.0}}>>) -> tensor<4x2xf32>
  return %y : tensor<4x2xf32>
}

// RUN: lmopt-opt %s -split-input-file -verify-diagnostics

// The quantized-table form of lmopt.gather (docs/dialect.md, "Quantized
// embedding tables"): a valid table, then one case per verifier message.

// Valid: per-row i8 and u8 (with zero points) tables, a dynamic row count,
// and a gather that moves quantized values into their own type (any axis,
// any quantized type: it only moves integers).
func.func @valid(%t: tensor<3x2x!quant.uniform<i8:f32:0, {0.5, 0.25, 1.0}>>, %u: tensor<?x2x!quant.uniform<u8:f32:0, {0.5:128, 0.25:3}>>, %i: tensor<2x4xi64>) -> (tensor<2x4x2xf32>, tensor<2x4x2xf32>) {
  %0 = lmopt.gather %t, %i : (tensor<3x2x!quant.uniform<i8:f32:0, {0.5, 0.25, 1.0}>>, tensor<2x4xi64>) -> tensor<2x4x2xf32>
  %1 = lmopt.gather %u, %i : (tensor<?x2x!quant.uniform<u8:f32:0, {0.5:128, 0.25:3}>>, tensor<2x4xi64>) -> tensor<2x4x2xf32>
  return %0, %1 : tensor<2x4x2xf32>, tensor<2x4x2xf32>
}

func.func @valid_moves(%t: tensor<3x2x!quant.uniform<u8:f32, 0.5:128>>, %i: tensor<4xi64>) -> tensor<3x4x!quant.uniform<u8:f32, 0.5:128>> {
  %0 = lmopt.gather %t, %i {axis = 1 : i64} : (tensor<3x2x!quant.uniform<u8:f32, 0.5:128>>, tensor<4xi64>) -> tensor<3x4x!quant.uniform<u8:f32, 0.5:128>>
  return %0 : tensor<3x4x!quant.uniform<u8:f32, 0.5:128>>
}

// -----

func.func @along_axis_1(%t: tensor<3x2x!quant.uniform<i8:f32:0, {0.5, 0.25, 1.0}>>, %i: tensor<4xi64>) -> tensor<3x4xf32> {
  // expected-error @+1 {{quantized data must be gathered along axis 0 (its rows), got axis 1}}
  %0 = lmopt.gather %t, %i {axis = 1 : i64} : (tensor<3x2x!quant.uniform<i8:f32:0, {0.5, 0.25, 1.0}>>, tensor<4xi64>) -> tensor<3x4xf32>
  return %0 : tensor<3x4xf32>
}

// -----

func.func @four_bit(%t: tensor<3x2x!quant.uniform<i4:f32:0, {0.5, 0.25, 1.0}>>, %i: tensor<4xi64>) -> tensor<4x2xf32> {
  // expected-error @+1 {{quantized data must have 8-bit storage expressing f32, got '!quant.uniform<i4:f32:0, {5.000000e-01,2.500000e-01,1.000000e+00}>'}}
  %0 = lmopt.gather %t, %i : (tensor<3x2x!quant.uniform<i4:f32:0, {0.5, 0.25, 1.0}>>, tensor<4xi64>) -> tensor<4x2xf32>
  return %0 : tensor<4x2xf32>
}

// -----

func.func @expresses_f16(%t: tensor<3x2x!quant.uniform<i8:f16:0, {0.5, 0.25, 1.0}>>, %i: tensor<4xi64>) -> tensor<4x2xf16> {
  // expected-error @+1 {{quantized data must have 8-bit storage expressing f32}}
  %0 = lmopt.gather %t, %i : (tensor<3x2x!quant.uniform<i8:f16:0, {0.5, 0.25, 1.0}>>, tensor<4xi64>) -> tensor<4x2xf16>
  return %0 : tensor<4x2xf16>
}

// -----

func.func @per_tensor(%t: tensor<3x2x!quant.uniform<i8:f32, 0.5>>, %i: tensor<4xi64>) -> tensor<4x2xf32> {
  // expected-error @+1 {{quantized data must be quantized per axis 0 (one scale per row), got '!quant.uniform<i8:f32, 5.000000e-01>'}}
  %0 = lmopt.gather %t, %i : (tensor<3x2x!quant.uniform<i8:f32, 0.5>>, tensor<4xi64>) -> tensor<4x2xf32>
  return %0 : tensor<4x2xf32>
}

// -----

func.func @per_column(%t: tensor<3x2x!quant.uniform<i8:f32:1, {0.5, 0.25}>>, %i: tensor<4xi64>) -> tensor<4x2xf32> {
  // expected-error @+1 {{quantized data must be quantized per axis 0 (one scale per row)}}
  %0 = lmopt.gather %t, %i : (tensor<3x2x!quant.uniform<i8:f32:1, {0.5, 0.25}>>, tensor<4xi64>) -> tensor<4x2xf32>
  return %0 : tensor<4x2xf32>
}

// -----

func.func @scale_count(%t: tensor<3x2x!quant.uniform<i8:f32:0, {0.5, 0.25}>>, %i: tensor<4xi64>) -> tensor<4x2xf32> {
  // expected-error @+1 {{quantized data has 2 row scales for 3 rows}}
  %0 = lmopt.gather %t, %i : (tensor<3x2x!quant.uniform<i8:f32:0, {0.5, 0.25}>>, tensor<4xi64>) -> tensor<4x2xf32>
  return %0 : tensor<4x2xf32>
}

// -----

func.func @f16_result(%t: tensor<3x2x!quant.uniform<i8:f32:0, {0.5, 0.25, 1.0}>>, %i: tensor<4xi64>) -> tensor<4x2xf16> {
  // expected-error @+1 {{result element type must be f32 (the dequantized rows) for quantized data, got 'f16'}}
  %0 = lmopt.gather %t, %i : (tensor<3x2x!quant.uniform<i8:f32:0, {0.5, 0.25, 1.0}>>, tensor<4xi64>) -> tensor<4x2xf16>
  return %0 : tensor<4x2xf16>
}

// -----

func.func @result_shape(%t: tensor<3x2x!quant.uniform<i8:f32:0, {0.5, 0.25, 1.0}>>, %i: tensor<4xi64>) -> tensor<4x3xf32> {
  // expected-error @+1 {{result shape 4x3 does not match expected shape 4x2}}
  %0 = lmopt.gather %t, %i : (tensor<3x2x!quant.uniform<i8:f32:0, {0.5, 0.25, 1.0}>>, tensor<4xi64>) -> tensor<4x3xf32>
  return %0 : tensor<4x3xf32>
}

// RUN: lmopt-opt %s -lmopt-fuse-layer-norm -split-input-file | FileCheck %s
// RUN: lmopt-opt %s -lmopt-fuse-layer-norm -split-input-file --lmopt-report=- -o /dev/null | FileCheck %s --check-prefix=REPORT

// nn.LayerNorm as the TorchScript exporter writes it below opset 17:
// ReduceMean, Sub, Pow 2, ReduceMean, Add eps, Sqrt, Div, Mul gamma, Add beta.
// CHECK-LABEL: func @layer_norm_pow_div
// CHECK-SAME: (%[[X:.*]]: tensor<?x16x64xf32>)
// CHECK-DAG: %[[GAMMA:.*]] = lmopt.constant dense<1.500000e+00> : tensor<64xf32>
// CHECK-DAG: %[[BETA:.*]] = lmopt.constant dense<2.500000e-01> : tensor<64xf32>
// CHECK: %[[LN:.*]] = lmopt.layer_norm %[[X]], %[[GAMMA]], %[[BETA]] {epsilon = 9.99999996E-13 : f32}
// CHECK-NOT: lmopt.reduce_mean
// CHECK-NOT: lmopt.sqrt
// CHECK: return %[[LN]]
// REPORT: layer_norm {{ *}}1 {{ *}}0
// REPORT: rms_norm {{ *}}0 {{ *}}0
func.func @layer_norm_pow_div(%x: tensor<?x16x64xf32>) -> tensor<?x16x64xf32> {
  %gamma = lmopt.constant dense<1.5> : tensor<64xf32>
  %beta = lmopt.constant dense<0.25> : tensor<64xf32>
  %two = lmopt.constant dense<2.0> : tensor<f32>
  %eps = lmopt.constant dense<1.0e-12> : tensor<f32>
  %mean = lmopt.reduce_mean %x {axes = array<i64: -1>} : tensor<?x16x64xf32> -> tensor<?x16x1xf32> loc("ln/ReduceMean")
  %cent = lmopt.sub %x, %mean : (tensor<?x16x64xf32>, tensor<?x16x1xf32>) -> tensor<?x16x64xf32> loc("ln/Sub")
  %sq = lmopt.pow %cent, %two : (tensor<?x16x64xf32>, tensor<f32>) -> tensor<?x16x64xf32> loc("ln/Pow")
  %var = lmopt.reduce_mean %sq {axes = array<i64: -1>} : tensor<?x16x64xf32> -> tensor<?x16x1xf32> loc("ln/ReduceMean_1")
  %vare = lmopt.add %var, %eps : (tensor<?x16x1xf32>, tensor<f32>) -> tensor<?x16x1xf32> loc("ln/Add")
  %std = lmopt.sqrt %vare : tensor<?x16x1xf32> loc("ln/Sqrt")
  %norm = lmopt.div %cent, %std : (tensor<?x16x64xf32>, tensor<?x16x1xf32>) -> tensor<?x16x64xf32> loc("ln/Div")
  %scaled = lmopt.mul %norm, %gamma : (tensor<?x16x64xf32>, tensor<64xf32>) -> tensor<?x16x64xf32> loc("ln/Mul")
  %out = lmopt.add %scaled, %beta : (tensor<?x16x64xf32>, tensor<64xf32>) -> tensor<?x16x64xf32> loc("ln/Add_1")
  return %out : tensor<?x16x64xf32>
}

// -----

// Square as Mul(d, d), division as Reciprocal then Mul, operands of the
// commutative ops in the other order, axes as a positive index; no beta.
// CHECK-LABEL: func @layer_norm_mul_reciprocal
// CHECK-SAME: (%[[X:.*]]: tensor<2x8x32xf32>, %[[GAMMA:.*]]: tensor<32xf32>)
// CHECK: %[[LN:.*]] = lmopt.layer_norm %[[X]], %[[GAMMA]] {epsilon = 9.99999997E-7 : f32}
// CHECK-NOT: lmopt.reciprocal
// CHECK: return %[[LN]]
// REPORT: layer_norm {{ *}}1 {{ *}}0
func.func @layer_norm_mul_reciprocal(%x: tensor<2x8x32xf32>, %gamma: tensor<32xf32>) -> tensor<2x8x32xf32> {
  %eps = lmopt.constant dense<1.0e-6> : tensor<1xf32>
  %mean = lmopt.reduce_mean %x {axes = array<i64: 2>} : tensor<2x8x32xf32> -> tensor<2x8x1xf32>
  %cent = lmopt.sub %x, %mean : (tensor<2x8x32xf32>, tensor<2x8x1xf32>) -> tensor<2x8x32xf32>
  %sq = lmopt.mul %cent, %cent : (tensor<2x8x32xf32>, tensor<2x8x32xf32>) -> tensor<2x8x32xf32>
  %var = lmopt.reduce_mean %sq {axes = array<i64: 2>} : tensor<2x8x32xf32> -> tensor<2x8x1xf32>
  %vare = lmopt.add %eps, %var : (tensor<1xf32>, tensor<2x8x1xf32>) -> tensor<2x8x1xf32>
  %std = lmopt.sqrt %vare : tensor<2x8x1xf32>
  %inv = lmopt.reciprocal %std : tensor<2x8x1xf32>
  %norm = lmopt.mul %inv, %cent : (tensor<2x8x1xf32>, tensor<2x8x32xf32>) -> tensor<2x8x32xf32>
  %out = lmopt.mul %gamma, %norm : (tensor<32xf32>, tensor<2x8x32xf32>) -> tensor<2x8x32xf32>
  return %out : tensor<2x8x32xf32>
}

// -----

// No gamma and no beta (elementwise_affine=False): the scale is ones; the
// division is Mul by Div(1, std). Normalizing two trailing dims gives axis -2.
// CHECK-LABEL: func @layer_norm_no_affine_two_dims
// CHECK-SAME: (%[[X:.*]]: tensor<?x8x32xf32>)
// CHECK: %[[ONES:.*]] = lmopt.constant dense<1.000000e+00> : tensor<8x32xf32>
// CHECK: %[[LN:.*]] = lmopt.layer_norm %[[X]], %[[ONES]] {axis = -2 : i64}
// CHECK: return %[[LN]]
// REPORT: layer_norm {{ *}}1 {{ *}}0
func.func @layer_norm_no_affine_two_dims(%x: tensor<?x8x32xf32>) -> tensor<?x8x32xf32> {
  %one = lmopt.constant dense<1.0> : tensor<f32>
  %two = lmopt.constant dense<2.0> : tensor<f32>
  %eps = lmopt.constant dense<1.0e-5> : tensor<f32>
  %mean = lmopt.reduce_mean %x {axes = array<i64: -2, -1>} : tensor<?x8x32xf32> -> tensor<?x1x1xf32>
  %cent = lmopt.sub %x, %mean : (tensor<?x8x32xf32>, tensor<?x1x1xf32>) -> tensor<?x8x32xf32>
  %sq = lmopt.pow %cent, %two : (tensor<?x8x32xf32>, tensor<f32>) -> tensor<?x8x32xf32>
  %var = lmopt.reduce_mean %sq {axes = array<i64: -1, -2>} : tensor<?x8x32xf32> -> tensor<?x1x1xf32>
  %vare = lmopt.add %var, %eps : (tensor<?x1x1xf32>, tensor<f32>) -> tensor<?x1x1xf32>
  %std = lmopt.sqrt %vare : tensor<?x1x1xf32>
  %inv = lmopt.div %one, %std : (tensor<f32>, tensor<?x1x1xf32>) -> tensor<?x1x1xf32>
  %norm = lmopt.mul %cent, %inv : (tensor<?x8x32xf32>, tensor<?x1x1xf32>) -> tensor<?x8x32xf32>
  return %norm : tensor<?x8x32xf32>
}

// -----

// An fp16 export that takes the statistics in f32: Cast in, layer norm, Cast
// back, then gamma and beta in f16. This is ONNX LayerNormalization on the
// f16 input with stash_type = 1.
// CHECK-LABEL: func @layer_norm_f16_cast_around
// CHECK-SAME: (%[[X:.*]]: tensor<?x16x64xf16>, %[[GAMMA:.*]]: tensor<64xf16>, %[[BETA:.*]]: tensor<64xf16>)
// CHECK: %[[LN:.*]] = lmopt.layer_norm %[[X]], %[[GAMMA]], %[[BETA]]{{.*}} : (tensor<?x16x64xf16>, tensor<64xf16>, tensor<64xf16>) -> tensor<?x16x64xf16>
// CHECK-NOT: lmopt.cast
// CHECK: return %[[LN]]
// REPORT: layer_norm {{ *}}1 {{ *}}0
func.func @layer_norm_f16_cast_around(%x: tensor<?x16x64xf16>, %gamma: tensor<64xf16>, %beta: tensor<64xf16>) -> tensor<?x16x64xf16> {
  %two = lmopt.constant dense<2.0> : tensor<f32>
  %eps = lmopt.constant dense<1.0e-5> : tensor<f32>
  %x32 = lmopt.cast %x : tensor<?x16x64xf16> -> tensor<?x16x64xf32>
  %mean = lmopt.reduce_mean %x32 {axes = array<i64: -1>} : tensor<?x16x64xf32> -> tensor<?x16x1xf32>
  %cent = lmopt.sub %x32, %mean : (tensor<?x16x64xf32>, tensor<?x16x1xf32>) -> tensor<?x16x64xf32>
  %sq = lmopt.pow %cent, %two : (tensor<?x16x64xf32>, tensor<f32>) -> tensor<?x16x64xf32>
  %var = lmopt.reduce_mean %sq {axes = array<i64: -1>} : tensor<?x16x64xf32> -> tensor<?x16x1xf32>
  %vare = lmopt.add %var, %eps : (tensor<?x16x1xf32>, tensor<f32>) -> tensor<?x16x1xf32>
  %std = lmopt.sqrt %vare : tensor<?x16x1xf32>
  %norm = lmopt.div %cent, %std : (tensor<?x16x64xf32>, tensor<?x16x1xf32>) -> tensor<?x16x64xf32>
  %norm16 = lmopt.cast %norm : tensor<?x16x64xf32> -> tensor<?x16x64xf16>
  %scaled = lmopt.mul %norm16, %gamma : (tensor<?x16x64xf16>, tensor<64xf16>) -> tensor<?x16x64xf16>
  %out = lmopt.add %scaled, %beta : (tensor<?x16x64xf16>, tensor<64xf16>) -> tensor<?x16x64xf16>
  return %out : tensor<?x16x64xf16>
}

// -----

// A Cast to f32 with no cast back: the layer norm runs on the f32 value.
// CHECK-LABEL: func @layer_norm_after_cast
// CHECK-SAME: (%[[X:.*]]: tensor<4x64xbf16>)
// CHECK: %[[X32:.*]] = lmopt.cast %[[X]]
// CHECK: %[[LN:.*]] = lmopt.layer_norm %[[X32]], %{{.*}} : (tensor<4x64xf32>, tensor<64xf32>) -> tensor<4x64xf32>
// CHECK: return %[[LN]]
// REPORT: layer_norm {{ *}}1 {{ *}}0
func.func @layer_norm_after_cast(%x: tensor<4x64xbf16>) -> tensor<4x64xf32> {
  %two = lmopt.constant dense<2.0> : tensor<f32>
  %eps = lmopt.constant dense<1.0e-5> : tensor<f32>
  %x32 = lmopt.cast %x : tensor<4x64xbf16> -> tensor<4x64xf32>
  %mean = lmopt.reduce_mean %x32 {axes = array<i64: -1>} : tensor<4x64xf32> -> tensor<4x1xf32>
  %cent = lmopt.sub %x32, %mean : (tensor<4x64xf32>, tensor<4x1xf32>) -> tensor<4x64xf32>
  %sq = lmopt.pow %cent, %two : (tensor<4x64xf32>, tensor<f32>) -> tensor<4x64xf32>
  %var = lmopt.reduce_mean %sq {axes = array<i64: -1>} : tensor<4x64xf32> -> tensor<4x1xf32>
  %vare = lmopt.add %var, %eps : (tensor<4x1xf32>, tensor<f32>) -> tensor<4x1xf32>
  %std = lmopt.sqrt %vare : tensor<4x1xf32>
  %norm = lmopt.div %cent, %std : (tensor<4x64xf32>, tensor<4x1xf32>) -> tensor<4x64xf32>
  return %norm : tensor<4x64xf32>
}

// -----

// A Mul by something that is not a per-feature scale ([16, 64] also spans the
// sequence dim) stays outside the layer norm.
// CHECK-LABEL: func @layer_norm_scale_not_absorbed
// CHECK-SAME: (%[[X:.*]]: tensor<?x16x64xf32>, %[[W:.*]]: tensor<16x64xf32>)
// CHECK: %[[ONES:.*]] = lmopt.constant dense<1.000000e+00> : tensor<64xf32>
// CHECK: %[[LN:.*]] = lmopt.layer_norm %[[X]], %[[ONES]] :
// CHECK: %[[Y:.*]] = lmopt.mul %[[LN]], %[[W]]
// CHECK: return %[[Y]]
// REPORT: layer_norm {{ *}}1 {{ *}}0
func.func @layer_norm_scale_not_absorbed(%x: tensor<?x16x64xf32>, %w: tensor<16x64xf32>) -> tensor<?x16x64xf32> {
  %two = lmopt.constant dense<2.0> : tensor<f32>
  %eps = lmopt.constant dense<1.0e-5> : tensor<f32>
  %mean = lmopt.reduce_mean %x {axes = array<i64: -1>} : tensor<?x16x64xf32> -> tensor<?x16x1xf32>
  %cent = lmopt.sub %x, %mean : (tensor<?x16x64xf32>, tensor<?x16x1xf32>) -> tensor<?x16x64xf32>
  %sq = lmopt.pow %cent, %two : (tensor<?x16x64xf32>, tensor<f32>) -> tensor<?x16x64xf32>
  %var = lmopt.reduce_mean %sq {axes = array<i64: -1>} : tensor<?x16x64xf32> -> tensor<?x16x1xf32>
  %vare = lmopt.add %var, %eps : (tensor<?x16x1xf32>, tensor<f32>) -> tensor<?x16x1xf32>
  %std = lmopt.sqrt %vare : tensor<?x16x1xf32>
  %norm = lmopt.div %cent, %std : (tensor<?x16x64xf32>, tensor<?x16x1xf32>) -> tensor<?x16x64xf32>
  %out = lmopt.mul %norm, %w : (tensor<?x16x64xf32>, tensor<16x64xf32>) -> tensor<?x16x64xf32>
  return %out : tensor<?x16x64xf32>
}

// -----

// CHECK-LABEL: func @negative_axis_not_last
// CHECK-NOT: lmopt.layer_norm
// CHECK: lmopt.reduce_mean %{{.*}} {axes = array<i64: 1>}
// REPORT: layer_norm {{ *}}0 {{ *}}1
// REPORT: near miss: layer_norm at 'axis/ReduceMean': reduction over axis 1 is not the last dim
func.func @negative_axis_not_last(%x: tensor<2x16x64xf32>) -> tensor<2x16x64xf32> {
  %two = lmopt.constant dense<2.0> : tensor<f32>
  %eps = lmopt.constant dense<1.0e-5> : tensor<f32>
  %mean = lmopt.reduce_mean %x {axes = array<i64: 1>} : tensor<2x16x64xf32> -> tensor<2x1x64xf32> loc("axis/ReduceMean")
  %cent = lmopt.sub %x, %mean : (tensor<2x16x64xf32>, tensor<2x1x64xf32>) -> tensor<2x16x64xf32>
  %sq = lmopt.pow %cent, %two : (tensor<2x16x64xf32>, tensor<f32>) -> tensor<2x16x64xf32>
  %var = lmopt.reduce_mean %sq {axes = array<i64: 1>} : tensor<2x16x64xf32> -> tensor<2x1x64xf32>
  %vare = lmopt.add %var, %eps : (tensor<2x1x64xf32>, tensor<f32>) -> tensor<2x1x64xf32>
  %std = lmopt.sqrt %vare : tensor<2x1x64xf32>
  %norm = lmopt.div %cent, %std : (tensor<2x16x64xf32>, tensor<2x1x64xf32>) -> tensor<2x16x64xf32>
  return %norm : tensor<2x16x64xf32>
}

// -----

// keepdims = 0 makes Sub broadcast the means along the wrong dim.
// CHECK-LABEL: func @negative_keepdims_false
// CHECK-NOT: lmopt.layer_norm
// CHECK: lmopt.reduce_mean %{{.*}} {axes = array<i64: -1>, keepdims = false}
// REPORT: near miss: layer_norm at 'keepdims/ReduceMean': reduction drops the reduced dims (keepdims = 0)
func.func @negative_keepdims_false(%x: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %two = lmopt.constant dense<2.0> : tensor<f32>
  %eps = lmopt.constant dense<1.0e-5> : tensor<f32>
  %mean = lmopt.reduce_mean %x {axes = array<i64: -1>, keepdims = false} : tensor<4x4xf32> -> tensor<4xf32> loc("keepdims/ReduceMean")
  %cent = lmopt.sub %x, %mean : (tensor<4x4xf32>, tensor<4xf32>) -> tensor<4x4xf32>
  %sq = lmopt.pow %cent, %two : (tensor<4x4xf32>, tensor<f32>) -> tensor<4x4xf32>
  %var = lmopt.reduce_mean %sq {axes = array<i64: -1>, keepdims = false} : tensor<4x4xf32> -> tensor<4xf32>
  %vare = lmopt.add %var, %eps : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %std = lmopt.sqrt %vare : tensor<4xf32>
  %norm = lmopt.div %cent, %std : (tensor<4x4xf32>, tensor<4xf32>) -> tensor<4x4xf32>
  return %norm : tensor<4x4xf32>
}

// -----

// CHECK-LABEL: func @negative_swapped_sub
// CHECK-NOT: lmopt.layer_norm
// CHECK: lmopt.sub %[[MEAN:.*]], %{{.*}}
// REPORT: near miss: layer_norm at 'swapped/ReduceMean': subtraction is mean - x, not x - mean
// REPORT-NOT: near miss: rms_norm
func.func @negative_swapped_sub(%x: tensor<4x64xf32>) -> tensor<4x64xf32> {
  %two = lmopt.constant dense<2.0> : tensor<f32>
  %eps = lmopt.constant dense<1.0e-5> : tensor<f32>
  %mean = lmopt.reduce_mean %x {axes = array<i64: -1>} : tensor<4x64xf32> -> tensor<4x1xf32> loc("swapped/ReduceMean")
  %cent = lmopt.sub %mean, %x : (tensor<4x1xf32>, tensor<4x64xf32>) -> tensor<4x64xf32>
  %sq = lmopt.pow %cent, %two : (tensor<4x64xf32>, tensor<f32>) -> tensor<4x64xf32>
  %var = lmopt.reduce_mean %sq {axes = array<i64: -1>} : tensor<4x64xf32> -> tensor<4x1xf32>
  %vare = lmopt.add %var, %eps : (tensor<4x1xf32>, tensor<f32>) -> tensor<4x1xf32>
  %std = lmopt.sqrt %vare : tensor<4x1xf32>
  %norm = lmopt.div %cent, %std : (tensor<4x64xf32>, tensor<4x1xf32>) -> tensor<4x64xf32>
  return %norm : tensor<4x64xf32>
}

// -----

// The variance is taken around the mean of another tensor.
// CHECK-LABEL: func @negative_variance_other_mean
// CHECK-NOT: lmopt.layer_norm
// CHECK: lmopt.sqrt
// REPORT: near miss: layer_norm at 'other/ReduceMean': variance is not computed from the centered value
// REPORT: near miss: layer_norm at 'other/ReduceMean_y': standard deviation divides a value other than x - mean
func.func @negative_variance_other_mean(%x: tensor<4x64xf32>, %y: tensor<4x64xf32>) -> tensor<4x64xf32> {
  %two = lmopt.constant dense<2.0> : tensor<f32>
  %eps = lmopt.constant dense<1.0e-5> : tensor<f32>
  %mean = lmopt.reduce_mean %x {axes = array<i64: -1>} : tensor<4x64xf32> -> tensor<4x1xf32> loc("other/ReduceMean")
  %cent = lmopt.sub %x, %mean : (tensor<4x64xf32>, tensor<4x1xf32>) -> tensor<4x64xf32>
  %ymean = lmopt.reduce_mean %y {axes = array<i64: -1>} : tensor<4x64xf32> -> tensor<4x1xf32> loc("other/ReduceMean_y")
  %ycent = lmopt.sub %y, %ymean : (tensor<4x64xf32>, tensor<4x1xf32>) -> tensor<4x64xf32>
  %sq = lmopt.pow %ycent, %two : (tensor<4x64xf32>, tensor<f32>) -> tensor<4x64xf32>
  %var = lmopt.reduce_mean %sq {axes = array<i64: -1>} : tensor<4x64xf32> -> tensor<4x1xf32>
  %vare = lmopt.add %var, %eps : (tensor<4x1xf32>, tensor<f32>) -> tensor<4x1xf32>
  %std = lmopt.sqrt %vare : tensor<4x1xf32>
  %norm = lmopt.div %cent, %std : (tensor<4x64xf32>, tensor<4x1xf32>) -> tensor<4x64xf32>
  return %norm : tensor<4x64xf32>
}

// -----

// CHECK-LABEL: func @negative_epsilon_not_constant
// CHECK-NOT: lmopt.layer_norm
// CHECK: lmopt.sqrt
// REPORT: near miss: layer_norm at 'eps/ReduceMean': epsilon is not a constant
func.func @negative_epsilon_not_constant(%x: tensor<4x64xf32>, %eps: tensor<f32>) -> tensor<4x64xf32> {
  %two = lmopt.constant dense<2.0> : tensor<f32>
  %mean = lmopt.reduce_mean %x {axes = array<i64: -1>} : tensor<4x64xf32> -> tensor<4x1xf32> loc("eps/ReduceMean")
  %cent = lmopt.sub %x, %mean : (tensor<4x64xf32>, tensor<4x1xf32>) -> tensor<4x64xf32>
  %sq = lmopt.pow %cent, %two : (tensor<4x64xf32>, tensor<f32>) -> tensor<4x64xf32>
  %var = lmopt.reduce_mean %sq {axes = array<i64: -1>} : tensor<4x64xf32> -> tensor<4x1xf32>
  %vare = lmopt.add %var, %eps : (tensor<4x1xf32>, tensor<f32>) -> tensor<4x1xf32>
  %std = lmopt.sqrt %vare : tensor<4x1xf32>
  %norm = lmopt.div %cent, %std : (tensor<4x64xf32>, tensor<4x1xf32>) -> tensor<4x64xf32>
  return %norm : tensor<4x64xf32>
}

// -----

// The variance of a reduction over two dims, the mean over one.
// CHECK-LABEL: func @negative_variance_other_dims
// CHECK-NOT: lmopt.layer_norm
// REPORT: near miss: layer_norm at 'dims/ReduceMean': variance is reduced over other dims than the mean
func.func @negative_variance_other_dims(%x: tensor<4x8x64xf32>) -> tensor<4x8x64xf32> {
  %two = lmopt.constant dense<2.0> : tensor<f32>
  %eps = lmopt.constant dense<1.0e-5> : tensor<f32>
  %mean = lmopt.reduce_mean %x {axes = array<i64: -1>} : tensor<4x8x64xf32> -> tensor<4x8x1xf32> loc("dims/ReduceMean")
  %cent = lmopt.sub %x, %mean : (tensor<4x8x64xf32>, tensor<4x8x1xf32>) -> tensor<4x8x64xf32>
  %sq = lmopt.pow %cent, %two : (tensor<4x8x64xf32>, tensor<f32>) -> tensor<4x8x64xf32>
  %var = lmopt.reduce_mean %sq {axes = array<i64: -2, -1>} : tensor<4x8x64xf32> -> tensor<4x1x1xf32>
  %vare = lmopt.add %var, %eps : (tensor<4x1x1xf32>, tensor<f32>) -> tensor<4x1x1xf32>
  %std = lmopt.sqrt %vare : tensor<4x1x1xf32>
  %norm = lmopt.div %cent, %std : (tensor<4x8x64xf32>, tensor<4x1x1xf32>) -> tensor<4x8x64xf32>
  return %norm : tensor<4x8x64xf32>
}

// -----

// CHECK-LABEL: func @negative_cube
// CHECK-NOT: lmopt.layer_norm
// REPORT: near miss: layer_norm at 'cube/ReduceMean': exponent 3 is not 2
func.func @negative_cube(%x: tensor<4x64xf32>) -> tensor<4x64xf32> {
  %three = lmopt.constant dense<3.0> : tensor<f32>
  %eps = lmopt.constant dense<1.0e-5> : tensor<f32>
  %mean = lmopt.reduce_mean %x {axes = array<i64: -1>} : tensor<4x64xf32> -> tensor<4x1xf32> loc("cube/ReduceMean")
  %cent = lmopt.sub %x, %mean : (tensor<4x64xf32>, tensor<4x1xf32>) -> tensor<4x64xf32>
  %sq = lmopt.pow %cent, %three : (tensor<4x64xf32>, tensor<f32>) -> tensor<4x64xf32>
  %var = lmopt.reduce_mean %sq {axes = array<i64: -1>} : tensor<4x64xf32> -> tensor<4x1xf32>
  %vare = lmopt.add %var, %eps : (tensor<4x1xf32>, tensor<f32>) -> tensor<4x1xf32>
  %std = lmopt.sqrt %vare : tensor<4x1xf32>
  %norm = lmopt.div %cent, %std : (tensor<4x64xf32>, tensor<4x1xf32>) -> tensor<4x64xf32>
  return %norm : tensor<4x64xf32>
}

// -----

// Epsilon outside the square root: (x - mean) / (sqrt(var) + eps).
// CHECK-LABEL: func @negative_epsilon_outside_sqrt
// CHECK-NOT: lmopt.layer_norm
// REPORT: near miss: layer_norm at 'outside/ReduceMean': variance is not followed by an add of epsilon
func.func @negative_epsilon_outside_sqrt(%x: tensor<4x64xf32>) -> tensor<4x64xf32> {
  %two = lmopt.constant dense<2.0> : tensor<f32>
  %eps = lmopt.constant dense<1.0e-5> : tensor<f32>
  %mean = lmopt.reduce_mean %x {axes = array<i64: -1>} : tensor<4x64xf32> -> tensor<4x1xf32> loc("outside/ReduceMean")
  %cent = lmopt.sub %x, %mean : (tensor<4x64xf32>, tensor<4x1xf32>) -> tensor<4x64xf32>
  %sq = lmopt.pow %cent, %two : (tensor<4x64xf32>, tensor<f32>) -> tensor<4x64xf32>
  %var = lmopt.reduce_mean %sq {axes = array<i64: -1>} : tensor<4x64xf32> -> tensor<4x1xf32>
  %std = lmopt.sqrt %var : tensor<4x1xf32>
  %stde = lmopt.add %std, %eps : (tensor<4x1xf32>, tensor<f32>) -> tensor<4x1xf32>
  %norm = lmopt.div %cent, %stde : (tensor<4x64xf32>, tensor<4x1xf32>) -> tensor<4x64xf32>
  return %norm : tensor<4x64xf32>
}

// -----

// Statistics in f16 (no Cast to f32): fusing would compute them in f32.
// CHECK-LABEL: func @negative_f16_statistics
// CHECK-NOT: lmopt.layer_norm
// REPORT: near miss: layer_norm at 'half/ReduceMean': mean is computed in f16; layer_norm computes statistics in f32 or wider
func.func @negative_f16_statistics(%x: tensor<4x64xf16>) -> tensor<4x64xf16> {
  %two = lmopt.constant dense<2.0> : tensor<f16>
  %eps = lmopt.constant dense<1.0e-5> : tensor<f16>
  %mean = lmopt.reduce_mean %x {axes = array<i64: -1>} : tensor<4x64xf16> -> tensor<4x1xf16> loc("half/ReduceMean")
  %cent = lmopt.sub %x, %mean : (tensor<4x64xf16>, tensor<4x1xf16>) -> tensor<4x64xf16>
  %sq = lmopt.pow %cent, %two : (tensor<4x64xf16>, tensor<f16>) -> tensor<4x64xf16>
  %var = lmopt.reduce_mean %sq {axes = array<i64: -1>} : tensor<4x64xf16> -> tensor<4x1xf16>
  %vare = lmopt.add %var, %eps : (tensor<4x1xf16>, tensor<f16>) -> tensor<4x1xf16>
  %std = lmopt.sqrt %vare : tensor<4x1xf16>
  %norm = lmopt.div %cent, %std : (tensor<4x64xf16>, tensor<4x1xf16>) -> tensor<4x64xf16>
  return %norm : tensor<4x64xf16>
}

// -----

// The centered value is also returned: fusing would not remove its work.
// CHECK-LABEL: func @negative_centered_escapes
// CHECK-NOT: lmopt.layer_norm
// REPORT: near miss: layer_norm at 'escape/ReduceMean': the centered value has a use outside the layer norm
func.func @negative_centered_escapes(%x: tensor<4x64xf32>) -> (tensor<4x64xf32>, tensor<4x64xf32>) {
  %two = lmopt.constant dense<2.0> : tensor<f32>
  %eps = lmopt.constant dense<1.0e-5> : tensor<f32>
  %mean = lmopt.reduce_mean %x {axes = array<i64: -1>} : tensor<4x64xf32> -> tensor<4x1xf32> loc("escape/ReduceMean")
  %cent = lmopt.sub %x, %mean : (tensor<4x64xf32>, tensor<4x1xf32>) -> tensor<4x64xf32>
  %sq = lmopt.pow %cent, %two : (tensor<4x64xf32>, tensor<f32>) -> tensor<4x64xf32>
  %var = lmopt.reduce_mean %sq {axes = array<i64: -1>} : tensor<4x64xf32> -> tensor<4x1xf32>
  %vare = lmopt.add %var, %eps : (tensor<4x1xf32>, tensor<f32>) -> tensor<4x1xf32>
  %std = lmopt.sqrt %vare : tensor<4x1xf32>
  %norm = lmopt.div %cent, %std : (tensor<4x64xf32>, tensor<4x1xf32>) -> tensor<4x64xf32>
  return %norm, %cent : tensor<4x64xf32>, tensor<4x64xf32>
}

// -----

// A mean that is not followed by a subtraction is not a candidate.
// CHECK-LABEL: func @negative_plain_mean
// CHECK: lmopt.reduce_mean
// REPORT: layer_norm {{ *}}0 {{ *}}0
// REPORT: rms_norm {{ *}}0 {{ *}}0
func.func @negative_plain_mean(%x: tensor<4x64xf32>) -> tensor<4x1xf32> {
  %mean = lmopt.reduce_mean %x {axes = array<i64: -1>} : tensor<4x64xf32> -> tensor<4x1xf32>
  return %mean : tensor<4x1xf32>
}

// -----

// RMSNorm (T5, LLaMA in f32): x * 1/sqrt(mean(x^2) + eps) * gamma.
// CHECK-LABEL: func @rms_norm_pow_reciprocal
// CHECK-SAME: (%[[X:.*]]: tensor<?x16x64xf32>, %[[GAMMA:.*]]: tensor<64xf32>)
// CHECK: %[[RMS:.*]] = lmopt.rms_norm %[[X]], %[[GAMMA]] {epsilon = 9.99999997E-7 : f32}
// CHECK-NOT: lmopt.reduce_mean
// CHECK: return %[[RMS]]
// REPORT: layer_norm {{ *}}0 {{ *}}0
// REPORT: rms_norm {{ *}}1 {{ *}}0
func.func @rms_norm_pow_reciprocal(%x: tensor<?x16x64xf32>, %gamma: tensor<64xf32>) -> tensor<?x16x64xf32> {
  %two = lmopt.constant dense<2.0> : tensor<f32>
  %eps = lmopt.constant dense<1.0e-6> : tensor<f32>
  %sq = lmopt.pow %x, %two : (tensor<?x16x64xf32>, tensor<f32>) -> tensor<?x16x64xf32>
  %ms = lmopt.reduce_mean %sq {axes = array<i64: -1>} : tensor<?x16x64xf32> -> tensor<?x16x1xf32>
  %mse = lmopt.add %ms, %eps : (tensor<?x16x1xf32>, tensor<f32>) -> tensor<?x16x1xf32>
  %rms = lmopt.sqrt %mse : tensor<?x16x1xf32>
  %inv = lmopt.reciprocal %rms : tensor<?x16x1xf32>
  %norm = lmopt.mul %x, %inv : (tensor<?x16x64xf32>, tensor<?x16x1xf32>) -> tensor<?x16x64xf32>
  %out = lmopt.mul %gamma, %norm : (tensor<64xf32>, tensor<?x16x64xf32>) -> tensor<?x16x64xf32>
  return %out : tensor<?x16x64xf32>
}

// -----

// LLaMA's RMSNorm in fp16: Cast to f32, statistics, Cast back, then the
// weight in f16.
// CHECK-LABEL: func @rms_norm_f16_cast_around
// CHECK-SAME: (%[[X:.*]]: tensor<?x16x64xf16>, %[[GAMMA:.*]]: tensor<64xf16>)
// CHECK: %[[RMS:.*]] = lmopt.rms_norm %[[X]], %[[GAMMA]]{{.*}} : (tensor<?x16x64xf16>, tensor<64xf16>) -> tensor<?x16x64xf16>
// CHECK-NOT: lmopt.cast
// CHECK: return %[[RMS]]
// REPORT: rms_norm {{ *}}1 {{ *}}0
func.func @rms_norm_f16_cast_around(%x: tensor<?x16x64xf16>, %gamma: tensor<64xf16>) -> tensor<?x16x64xf16> {
  %eps = lmopt.constant dense<1.0e-6> : tensor<f32>
  %x32 = lmopt.cast %x : tensor<?x16x64xf16> -> tensor<?x16x64xf32>
  %sq = lmopt.mul %x32, %x32 : (tensor<?x16x64xf32>, tensor<?x16x64xf32>) -> tensor<?x16x64xf32>
  %ms = lmopt.reduce_mean %sq {axes = array<i64: -1>} : tensor<?x16x64xf32> -> tensor<?x16x1xf32>
  %mse = lmopt.add %ms, %eps : (tensor<?x16x1xf32>, tensor<f32>) -> tensor<?x16x1xf32>
  %rms = lmopt.sqrt %mse : tensor<?x16x1xf32>
  %norm = lmopt.div %x32, %rms : (tensor<?x16x64xf32>, tensor<?x16x1xf32>) -> tensor<?x16x64xf32>
  %norm16 = lmopt.cast %norm : tensor<?x16x64xf32> -> tensor<?x16x64xf16>
  %out = lmopt.mul %gamma, %norm16 : (tensor<64xf16>, tensor<?x16x64xf16>) -> tensor<?x16x64xf16>
  return %out : tensor<?x16x64xf16>
}

// -----

// Without a weight the scale is ones; a following Add is not absorbed (RMS
// norm has no bias).
// CHECK-LABEL: func @rms_norm_no_weight
// CHECK-SAME: (%[[X:.*]]: tensor<4x64xf32>, %[[B:.*]]: tensor<64xf32>)
// CHECK: %[[ONES:.*]] = lmopt.constant dense<1.000000e+00> : tensor<64xf32>
// CHECK: %[[RMS:.*]] = lmopt.rms_norm %[[X]], %[[ONES]]
// CHECK: %[[Y:.*]] = lmopt.add %[[RMS]], %[[B]]
// CHECK: return %[[Y]]
// REPORT: rms_norm {{ *}}1 {{ *}}0
func.func @rms_norm_no_weight(%x: tensor<4x64xf32>, %b: tensor<64xf32>) -> tensor<4x64xf32> {
  %two = lmopt.constant dense<2.0> : tensor<f32>
  %eps = lmopt.constant dense<1.0e-6> : tensor<f32>
  %sq = lmopt.pow %x, %two : (tensor<4x64xf32>, tensor<f32>) -> tensor<4x64xf32>
  %ms = lmopt.reduce_mean %sq {axes = array<i64: 1>} : tensor<4x64xf32> -> tensor<4x1xf32>
  %mse = lmopt.add %ms, %eps : (tensor<4x1xf32>, tensor<f32>) -> tensor<4x1xf32>
  %rms = lmopt.sqrt %mse : tensor<4x1xf32>
  %norm = lmopt.div %x, %rms : (tensor<4x64xf32>, tensor<4x1xf32>) -> tensor<4x64xf32>
  %out = lmopt.add %norm, %b : (tensor<4x64xf32>, tensor<64xf32>) -> tensor<4x64xf32>
  return %out : tensor<4x64xf32>
}

// -----

// CHECK-LABEL: func @negative_rms_epsilon_not_constant
// CHECK-NOT: lmopt.rms_norm
// CHECK: lmopt.sqrt
// REPORT: rms_norm {{ *}}0 {{ *}}1
// REPORT: near miss: rms_norm at 'rms/ReduceMean': epsilon is not a constant
func.func @negative_rms_epsilon_not_constant(%x: tensor<4x64xf32>, %eps: tensor<f32>) -> tensor<4x64xf32> {
  %two = lmopt.constant dense<2.0> : tensor<f32>
  %sq = lmopt.pow %x, %two : (tensor<4x64xf32>, tensor<f32>) -> tensor<4x64xf32>
  %ms = lmopt.reduce_mean %sq {axes = array<i64: -1>} : tensor<4x64xf32> -> tensor<4x1xf32> loc("rms/ReduceMean")
  %mse = lmopt.add %ms, %eps : (tensor<4x1xf32>, tensor<f32>) -> tensor<4x1xf32>
  %rms = lmopt.sqrt %mse : tensor<4x1xf32>
  %norm = lmopt.div %x, %rms : (tensor<4x64xf32>, tensor<4x1xf32>) -> tensor<4x64xf32>
  return %norm : tensor<4x64xf32>
}

// -----

// T5 computes the statistics on Cast(x) but normalizes x itself.
// CHECK-LABEL: func @negative_rms_divides_other_value
// CHECK-NOT: lmopt.rms_norm
// REPORT: near miss: rms_norm at 'rms_other/ReduceMean': root mean square divides a value other than the one squared
func.func @negative_rms_divides_other_value(%x: tensor<4x64xbf16>) -> tensor<4x64xf32> {
  %two = lmopt.constant dense<2.0> : tensor<f32>
  %eps = lmopt.constant dense<1.0e-6> : tensor<f32>
  %x32 = lmopt.cast %x : tensor<4x64xbf16> -> tensor<4x64xf32>
  %other = lmopt.cast %x : tensor<4x64xbf16> -> tensor<4x64xf32>
  %sq = lmopt.pow %x32, %two : (tensor<4x64xf32>, tensor<f32>) -> tensor<4x64xf32>
  %ms = lmopt.reduce_mean %sq {axes = array<i64: -1>} : tensor<4x64xf32> -> tensor<4x1xf32> loc("rms_other/ReduceMean")
  %mse = lmopt.add %ms, %eps : (tensor<4x1xf32>, tensor<f32>) -> tensor<4x1xf32>
  %rms = lmopt.sqrt %mse : tensor<4x1xf32>
  %norm = lmopt.div %other, %rms : (tensor<4x64xf32>, tensor<4x1xf32>) -> tensor<4x64xf32>
  return %norm : tensor<4x64xf32>
}

// -----

// CHECK-LABEL: func @negative_rms_axis_not_last
// CHECK-NOT: lmopt.rms_norm
// REPORT: near miss: rms_norm at 'rms_axis/ReduceMean': reduction over axes [0, 1] is not the trailing dims
func.func @negative_rms_axis_not_last(%x: tensor<4x8x64xf32>) -> tensor<4x8x64xf32> {
  %two = lmopt.constant dense<2.0> : tensor<f32>
  %eps = lmopt.constant dense<1.0e-6> : tensor<f32>
  %sq = lmopt.pow %x, %two : (tensor<4x8x64xf32>, tensor<f32>) -> tensor<4x8x64xf32>
  %ms = lmopt.reduce_mean %sq {axes = array<i64: 1, 0>} : tensor<4x8x64xf32> -> tensor<1x1x64xf32> loc("rms_axis/ReduceMean")
  %mse = lmopt.add %ms, %eps : (tensor<1x1x64xf32>, tensor<f32>) -> tensor<1x1x64xf32>
  %rms = lmopt.sqrt %mse : tensor<1x1x64xf32>
  %norm = lmopt.div %x, %rms : (tensor<4x8x64xf32>, tensor<1x1x64xf32>) -> tensor<4x8x64xf32>
  return %norm : tensor<4x8x64xf32>
}

// @neox_interleaved of fuse-attention-interleaved-qkv.mlir as @main (lmopt-interpret
// evaluates @main).
func.func @main(%x: tensor<2x3x4xf32>, %cos: tensor<1x1x3x2xf32>, %sin: tensor<1x1x3x2xf32>, %mask: tensor<2x1x3x3xf32>) -> tensor<2x3x4xf32>
    attributes {lmopt.input_names = ["x", "cos", "sin", "mask"],
                lmopt.output_names = ["context"]} {
  %w = lmopt.constant dense<[[0.0, 0.015625, 0.03125, 0.046875, 0.0625, 0.078125, 0.09375, 0.109375, 0.125, 0.140625, 0.15625, 0.171875], [0.1875, 0.203125, 0.21875, 0.234375, 0.25, 0.265625, 0.28125, 0.296875, 0.3125, 0.328125, 0.34375, 0.359375], [0.375, 0.390625, 0.40625, 0.421875, 0.4375, 0.453125, 0.46875, 0.484375, 0.5, 0.515625, 0.53125, 0.546875], [0.5625, 0.578125, 0.59375, 0.609375, 0.625, 0.640625, 0.65625, 0.671875, 0.6875, 0.703125, 0.71875, 0.734375]]> : tensor<4x12xf32>
  %b = lmopt.constant dense<[1.5625, 1.578125, 1.59375, 1.609375, 1.625, 1.640625, 1.65625, 1.671875, 1.6875, 1.703125, 1.71875, 1.734375]> : tensor<12xf32>
  %hs = lmopt.constant dense<[2, 3, 2, 6]> : tensor<4xi64>
  %merged = lmopt.constant dense<[2, 3, 4]> : tensor<3xi64>
  %scale = lmopt.constant dense<0.5> : tensor<f32>
  %p0 = lmopt.matmul %x, %w : (tensor<2x3x4xf32>, tensor<4x12xf32>) -> tensor<2x3x12xf32>
  %p = lmopt.add %p0, %b : (tensor<2x3x12xf32>, tensor<12xf32>) -> tensor<2x3x12xf32>
  %g = lmopt.reshape %p, %hs : (tensor<2x3x12xf32>, tensor<4xi64>) -> tensor<2x3x2x6xf32>
  %t = lmopt.transpose %g {perm = array<i64: 0, 2, 1, 3>} : tensor<2x3x2x6xf32> -> tensor<2x2x3x6xf32>
  %parts:3 = lmopt.split %t {axis = 3 : i64, split_sizes = array<i64: 2, 2, 2>} : (tensor<2x2x3x6xf32>) -> (tensor<2x2x3x2xf32>, tensor<2x2x3x2xf32>, tensor<2x2x3x2xf32>)
  %q = lmopt.rotary %parts#0, %cos, %sin : (tensor<2x2x3x2xf32>, tensor<1x1x3x2xf32>, tensor<1x1x3x2xf32>) -> tensor<2x2x3x2xf32>
  %k = lmopt.rotary %parts#1, %cos, %sin : (tensor<2x2x3x2xf32>, tensor<1x1x3x2xf32>, tensor<1x1x3x2xf32>) -> tensor<2x2x3x2xf32>
  %kt = lmopt.transpose %k {perm = array<i64: 0, 1, 3, 2>} : tensor<2x2x3x2xf32> -> tensor<2x2x2x3xf32>
  %s0 = lmopt.matmul %q, %kt : (tensor<2x2x3x2xf32>, tensor<2x2x2x3xf32>) -> tensor<2x2x3x3xf32>
  %s1 = lmopt.mul %s0, %scale : (tensor<2x2x3x3xf32>, tensor<f32>) -> tensor<2x2x3x3xf32>
  %s2 = lmopt.add %s1, %mask : (tensor<2x2x3x3xf32>, tensor<2x1x3x3xf32>) -> tensor<2x2x3x3xf32>
  %pr = lmopt.softmax %s2 {axis = -1 : i64} : tensor<2x2x3x3xf32> loc("neox_interleaved")
  %c0 = lmopt.matmul %pr, %parts#2 : (tensor<2x2x3x3xf32>, tensor<2x2x3x2xf32>) -> tensor<2x2x3x2xf32>
  %c1 = lmopt.transpose %c0 {perm = array<i64: 0, 2, 1, 3>} : tensor<2x2x3x2xf32> -> tensor<2x3x2x2xf32>
  %c2 = lmopt.reshape %c1, %merged : (tensor<2x3x2x2xf32>, tensor<3xi64>) -> tensor<2x3x4xf32>
  return %c2 : tensor<2x3x4xf32>
}

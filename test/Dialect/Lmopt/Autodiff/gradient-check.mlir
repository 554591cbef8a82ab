// Every gradient rule against central differences of the reference
// evaluator, in double precision (lmopt-test-gradient-check).
// RUN: lmopt-opt %s --split-input-file --lmopt-test-gradient-check 2>&1 | FileCheck %s
// The check can fail: no difference quotient is exact.
// RUN: lmopt-opt %s --split-input-file --lmopt-test-gradient-check=tolerance=1e-300 2>&1 | FileCheck %s --check-prefix=STRICT
// STRICT: gradient check @gelus: {{.*}}: FAIL

// CHECK: gradient check @elementwise: 17 elements, max error {{.*}}: PASS
func.func @elementwise(%x: tensor<2x3xf64> {lmopt.trainable = "x"},
                       %y: tensor<3xf64> {lmopt.trainable = "y"},
                       %z: tensor<2x1xf64> {lmopt.trainable = "z"},
                       %w: tensor<2x3xf64> {lmopt.trainable = "w"}) -> tensor<f64> {
  %c = lmopt.constant dense<1.5> : tensor<f64>
  %0 = lmopt.mul %x, %y : (tensor<2x3xf64>, tensor<3xf64>) -> tensor<2x3xf64>
  %1 = lmopt.sub %0, %z : (tensor<2x3xf64>, tensor<2x1xf64>) -> tensor<2x3xf64>
  %2 = lmopt.add %z, %c : (tensor<2x1xf64>, tensor<f64>) -> tensor<2x1xf64>
  %3 = lmopt.div %1, %2 : (tensor<2x3xf64>, tensor<2x1xf64>) -> tensor<2x3xf64>
  %4 = lmopt.tanh %3 : tensor<2x3xf64>
  %5 = lmopt.exp %w : tensor<2x3xf64>
  %6 = lmopt.log %5 : tensor<2x3xf64>
  %7 = lmopt.sigmoid %6 : tensor<2x3xf64>
  %8 = lmopt.erf %4 : tensor<2x3xf64>
  %9 = lmopt.mul %7, %8 : (tensor<2x3xf64>, tensor<2x3xf64>) -> tensor<2x3xf64>
  %10 = lmopt.neg %9 : tensor<2x3xf64>
  %11 = lmopt.mul %10, %10 : (tensor<2x3xf64>, tensor<2x3xf64>) -> tensor<2x3xf64>
  %12 = lmopt.add %11, %c : (tensor<2x3xf64>, tensor<f64>) -> tensor<2x3xf64>
  %13 = lmopt.sqrt %12 : tensor<2x3xf64>
  %14 = lmopt.reciprocal %13 : tensor<2x3xf64>
  %15 = lmopt.relu %x : tensor<2x3xf64>
  %16 = lmopt.add %14, %15 : (tensor<2x3xf64>, tensor<2x3xf64>) -> tensor<2x3xf64>
  %two = lmopt.constant dense<2.0> : tensor<f64>
  %17 = lmopt.pow %16, %two : (tensor<2x3xf64>, tensor<f64>) -> tensor<2x3xf64>
  %18 = lmopt.reduce_sum %17 {keepdims = false} : tensor<2x3xf64> -> tensor<f64>
  return %18 : tensor<f64>
}

// -----

// CHECK: gradient check @gelus: 12 elements, max error {{.*}}: PASS
func.func @gelus(%x: tensor<2x3xf64> {lmopt.trainable = "x"},
                 %y: tensor<2x3xf64> {lmopt.trainable = "y"}) -> tensor<f64> {
  %0 = lmopt.gelu %x : tensor<2x3xf64>
  %1 = lmopt.gelu %y {approximate = #lmopt.gelu_approximation<tanh>} : tensor<2x3xf64>
  %2 = lmopt.mul %0, %1 : (tensor<2x3xf64>, tensor<2x3xf64>) -> tensor<2x3xf64>
  %3 = lmopt.reduce_sum %2 {keepdims = false} : tensor<2x3xf64> -> tensor<f64>
  return %3 : tensor<f64>
}

// -----

// CHECK: gradient check @reductions: 24 elements, max error {{.*}}: PASS
func.func @reductions(%x: tensor<2x3x4xf64> {lmopt.trainable = "x"}) -> tensor<f64> {
  %0 = lmopt.reduce_mean %x {axes = array<i64: 1>, keepdims = true} : tensor<2x3x4xf64> -> tensor<2x1x4xf64>
  %1 = lmopt.sub %x, %0 : (tensor<2x3x4xf64>, tensor<2x1x4xf64>) -> tensor<2x3x4xf64>
  %2 = lmopt.softmax %1 {axis = -1 : i64} : tensor<2x3x4xf64>
  %3 = lmopt.log_softmax %x {axis = 1 : i64} : tensor<2x3x4xf64>
  %4 = lmopt.mul %2, %3 : (tensor<2x3x4xf64>, tensor<2x3x4xf64>) -> tensor<2x3x4xf64>
  %5 = lmopt.reduce_sum %4 {axes = array<i64: 0, 2>, keepdims = false} : tensor<2x3x4xf64> -> tensor<3xf64>
  %6 = lmopt.mul %5, %5 : (tensor<3xf64>, tensor<3xf64>) -> tensor<3xf64>
  %7 = lmopt.reduce_mean %6 {keepdims = false} : tensor<3xf64> -> tensor<f64>
  return %7 : tensor<f64>
}

// -----

// CHECK: gradient check @products: 44 elements, max error {{.*}}: PASS
func.func @products(%a: tensor<2x3x4xf64> {lmopt.trainable = "a"},
                    %w: tensor<4x2xf64> {lmopt.trainable = "w"},
                    %b: tensor<2x2x3xf64> {lmopt.trainable = "b"}) -> tensor<f64> {
  %0 = lmopt.matmul %a, %w : (tensor<2x3x4xf64>, tensor<4x2xf64>) -> tensor<2x3x2xf64>
  %1 = lmopt.matmul %0, %b : (tensor<2x3x2xf64>, tensor<2x2x3xf64>) -> tensor<2x3x3xf64>
  %2 = lmopt.transpose %1 {perm = array<i64: 2, 0, 1>} : tensor<2x3x3xf64> -> tensor<3x2x3xf64>
  %s = lmopt.constant dense<[6, 3]> : tensor<2xi64>
  %3 = lmopt.reshape %2, %s : (tensor<3x2x3xf64>, tensor<2xi64>) -> tensor<6x3xf64>
  %4 = lmopt.tanh %3 : tensor<6x3xf64>
  %5 = lmopt.reduce_sum %4 {keepdims = false} : tensor<6x3xf64> -> tensor<f64>
  return %5 : tensor<f64>
}

// -----

// A linear with every epilogue, both weight layouts.
// CHECK: gradient check @linears: 97 elements, max error {{.*}}: PASS
func.func @linears(%x: tensor<2x3x4xf64> {lmopt.trainable = "x"},
                   %w: tensor<4x5xf64> {lmopt.trainable = "w"},
                   %b: tensor<5xf64> {lmopt.trainable = "b"},
                   %r: tensor<2x3x5xf64> {lmopt.trainable = "r"},
                   %wt: tensor<3x5xf64> {lmopt.trainable = "wt"},
                   %bt: tensor<3xf64> {lmopt.trainable = "bt"}) -> tensor<f64> {
  %0 = lmopt.linear %x, %w bias %b residual %r {activation = #lmopt.activation<gelu>} : (tensor<2x3x4xf64>, tensor<4x5xf64>, tensor<5xf64>, tensor<2x3x5xf64>) -> tensor<2x3x5xf64>
  %1 = lmopt.linear %0, %wt bias %bt {transpose_weight = true, activation = #lmopt.activation<gelu_tanh>} : (tensor<2x3x5xf64>, tensor<3x5xf64>, tensor<3xf64>) -> tensor<2x3x3xf64>
  %2 = lmopt.linear %1, %wt {activation = #lmopt.activation<relu>} : (tensor<2x3x3xf64>, tensor<3x5xf64>) -> tensor<2x3x5xf64>
  %3 = lmopt.tanh %2 : tensor<2x3x5xf64>
  %4 = lmopt.reduce_sum %3 {keepdims = false} : tensor<2x3x5xf64> -> tensor<f64>
  return %4 : tensor<f64>
}

// -----

// CHECK: gradient check @norms: 52 elements, max error {{.*}}: PASS
func.func @norms(%x: tensor<2x3x4xf64> {lmopt.trainable = "x"},
                 %skip: tensor<1x3x4xf64> {lmopt.trainable = "skip"},
                 %g: tensor<4xf64> {lmopt.trainable = "g"},
                 %b: tensor<4xf64> {lmopt.trainable = "b"},
                 %g2: tensor<4xf64> {lmopt.trainable = "g2"},
                 %g3: tensor<4xf64> {lmopt.trainable = "g3"}) -> tensor<f64> {
  %out, %sum = lmopt.skip_layer_norm %x, %skip, %g, %b {epsilon = 1.0e-5 : f32} : (tensor<2x3x4xf64>, tensor<1x3x4xf64>, tensor<4xf64>, tensor<4xf64>) -> (tensor<2x3x4xf64>, tensor<2x3x4xf64>)
  %0 = lmopt.layer_norm %sum, %g2, %b {epsilon = 1.0e-5 : f32} : (tensor<2x3x4xf64>, tensor<4xf64>, tensor<4xf64>) -> tensor<2x3x4xf64>
  %1 = lmopt.rms_norm %out, %g3 {epsilon = 1.0e-6 : f32} : (tensor<2x3x4xf64>, tensor<4xf64>) -> tensor<2x3x4xf64>
  %c = lmopt.constant dense<[0.5, -1.0, 2.0, 0.25]> : tensor<4xf64>
  %2 = lmopt.mul %0, %c : (tensor<2x3x4xf64>, tensor<4xf64>) -> tensor<2x3x4xf64>
  %3 = lmopt.mul %1, %2 : (tensor<2x3x4xf64>, tensor<2x3x4xf64>) -> tensor<2x3x4xf64>
  %4 = lmopt.add %3, %1 : (tensor<2x3x4xf64>, tensor<2x3x4xf64>) -> tensor<2x3x4xf64>
  %5 = lmopt.reduce_sum %4 {keepdims = false} : tensor<2x3x4xf64> -> tensor<f64>
  return %5 : tensor<f64>
}

// -----

// Attention with a boolean key mask (the last key of batch 1 hidden), then
// causal with an additive mask.
// CHECK: gradient check @attention: 144 elements, max error {{.*}}: PASS
func.func @attention(%q: tensor<2x3x8xf64> {lmopt.trainable = "q"},
                     %k: tensor<2x3x8xf64> {lmopt.trainable = "k"},
                     %v: tensor<2x3x8xf64> {lmopt.trainable = "v"},
                     %m: tensor<2x1x1x3xi1> {lmopt.test_values = dense<[true, true, true, true, true, false]> : tensor<6xi1>}) -> tensor<f64> {
  %0 = lmopt.attention %q, %k, %v mask %m {num_heads = 2 : i64} : (tensor<2x3x8xf64>, tensor<2x3x8xf64>, tensor<2x3x8xf64>, tensor<2x1x1x3xi1>) -> tensor<2x3x8xf64>
  %add = lmopt.constant dense<[[0.0, -0.5, 0.25], [0.1, 0.0, -1.0], [0.0, 0.0, 0.0]]> : tensor<3x3xf64>
  %1 = lmopt.attention %0, %k, %q mask %add {num_heads = 4 : i64, causal = true, scale = 0.5 : f32} : (tensor<2x3x8xf64>, tensor<2x3x8xf64>, tensor<2x3x8xf64>, tensor<3x3xf64>) -> tensor<2x3x8xf64>
  %2 = lmopt.tanh %1 : tensor<2x3x8xf64>
  %3 = lmopt.mul %2, %0 : (tensor<2x3x8xf64>, tensor<2x3x8xf64>) -> tensor<2x3x8xf64>
  %4 = lmopt.reduce_sum %3 {keepdims = false} : tensor<2x3x8xf64> -> tensor<f64>
  return %4 : tensor<f64>
}

// -----

// Attention with a trainable score bias [1, H, Sq, Sk] (a relative-position
// bias, broadcast over the batch: its gradient sums over it) under a boolean
// key mask, and a bias broadcast over heads and rows with scale 1.
// CHECK: gradient check @attention_bias: 168 elements, max error {{.*}}: PASS
func.func @attention_bias(%q: tensor<2x3x8xf64> {lmopt.trainable = "q"},
                          %k: tensor<2x3x8xf64> {lmopt.trainable = "k"},
                          %v: tensor<2x3x8xf64> {lmopt.trainable = "v"},
                          %b: tensor<1x2x3x3xf64> {lmopt.trainable = "b"},
                          %c: tensor<2x1x1x3xf64> {lmopt.trainable = "c"},
                          %m: tensor<2x1x1x3xi1> {lmopt.test_values = dense<[true, true, true, true, true, false]> : tensor<6xi1>}) -> tensor<f64> {
  %0 = lmopt.attention %q, %k, %v mask %m bias %b {num_heads = 2 : i64} : (tensor<2x3x8xf64>, tensor<2x3x8xf64>, tensor<2x3x8xf64>, tensor<2x1x1x3xi1>, tensor<1x2x3x3xf64>) -> tensor<2x3x8xf64>
  %1 = lmopt.attention %0, %k, %q bias %c {num_heads = 4 : i64, scale = 1.0 : f32} : (tensor<2x3x8xf64>, tensor<2x3x8xf64>, tensor<2x3x8xf64>, tensor<2x1x1x3xf64>) -> tensor<2x3x8xf64>
  %2 = lmopt.tanh %1 : tensor<2x3x8xf64>
  %3 = lmopt.mul %2, %0 : (tensor<2x3x8xf64>, tensor<2x3x8xf64>) -> tensor<2x3x8xf64>
  %4 = lmopt.reduce_sum %3 {keepdims = false} : tensor<2x3x8xf64> -> tensor<f64>
  return %4 : tensor<f64>
}

// -----

// Embedding rows (a repeated index), one index along axis 1, concat, split,
// where, expand, unsqueeze and identity (a cast through f32 would round
// below the difference quotient's resolution).
// CHECK: gradient check @indexing: 32 elements, max error {{.*}}: PASS
func.func @indexing(%t: tensor<5x4xf64> {lmopt.trainable = "t"},
                    %ids: tensor<2x3xi64> {lmopt.test_values = dense<[1, 4, 1, 0, 3, 1]> : tensor<6xi64>},
                    %p: tensor<1x3x4xf64> {lmopt.trainable = "p"},
                    %c: tensor<2x3x4xi1> {lmopt.test_values = dense<[true, false, true, true, false, false, true, true, true, false, true, false, false, true, true, true, false, true, true, false, true, true, false, true]> : tensor<24xi1>}) -> tensor<f64> {
  %0 = lmopt.gather %t, %ids : (tensor<5x4xf64>, tensor<2x3xi64>) -> tensor<2x3x4xf64>
  %1 = lmopt.add %0, %p : (tensor<2x3x4xf64>, tensor<1x3x4xf64>) -> tensor<2x3x4xf64>
  %i = lmopt.constant dense<-1> : tensor<i64>
  %2 = lmopt.gather %1, %i {axis = 1 : i64} : (tensor<2x3x4xf64>, tensor<i64>) -> tensor<2x4xf64>
  %3 = lmopt.concat %1, %0 {axis = 2 : i64} : (tensor<2x3x4xf64>, tensor<2x3x4xf64>) -> tensor<2x3x8xf64>
  %4:2 = lmopt.split %3 {axis = 2 : i64, split_sizes = array<i64: 3, 5>} : (tensor<2x3x8xf64>) -> (tensor<2x3x3xf64>, tensor<2x3x5xf64>)
  %5 = lmopt.where %c, %1, %0 : (tensor<2x3x4xi1>, tensor<2x3x4xf64>, tensor<2x3x4xf64>) -> tensor<2x3x4xf64>
  %6 = lmopt.unsqueeze %2 {axes = array<i64: 1>} : tensor<2x4xf64> -> tensor<2x1x4xf64>
  %s = lmopt.constant dense<[2, 3, 4]> : tensor<3xi64>
  %7 = lmopt.expand %6, %s : (tensor<2x1x4xf64>, tensor<3xi64>) -> tensor<2x3x4xf64>
  %8 = lmopt.mul %5, %7 : (tensor<2x3x4xf64>, tensor<2x3x4xf64>) -> tensor<2x3x4xf64>
  %11 = lmopt.identity %8 : tensor<2x3x4xf64>
  %12 = lmopt.reduce_sum %11 {keepdims = false} : tensor<2x3x4xf64> -> tensor<f64>
  %13 = lmopt.tanh %4#1 : tensor<2x3x5xf64>
  %14 = lmopt.reduce_sum %13 {keepdims = false} : tensor<2x3x5xf64> -> tensor<f64>
  %15 = lmopt.add %12, %14 : (tensor<f64>, tensor<f64>) -> tensor<f64>
  return %15 : tensor<f64>
}

// -----

// A training-mode dropout as the training compiler writes it: the mask is a
// function of the seed alone, so with the seed fixed the product is a
// differentiable function and its gradient passes only the kept elements.
// CHECK: gradient check @dropout: 24 elements, max error {{.*}}: PASS
func.func @dropout(%x: tensor<4x6xf64> {lmopt.trainable = "x"},
                   %seed: tensor<i64> {lmopt.test_values = dense<81985529216486895> : tensor<1xi64>}) -> tensor<f64> {
  %m = lmopt.dropout_mask %x, %seed {ratio = 0.5 : f32, stream = 1 : i64} : (tensor<4x6xf64>, tensor<i64>) -> tensor<4x6xi1>
  %k = lmopt.cast %m : tensor<4x6xi1> -> tensor<4x6xf64>
  %0 = lmopt.tanh %x : tensor<4x6xf64>
  %1 = lmopt.mul %0, %k : (tensor<4x6xf64>, tensor<4x6xf64>) -> tensor<4x6xf64>
  %two = lmopt.constant dense<2.0> : tensor<f64>
  %2 = lmopt.mul %1, %two : (tensor<4x6xf64>, tensor<f64>) -> tensor<4x6xf64>
  %3 = lmopt.mul %2, %x : (tensor<4x6xf64>, tensor<4x6xf64>) -> tensor<4x6xf64>
  %4 = lmopt.reduce_sum %3 {keepdims = false} : tensor<4x6xf64> -> tensor<f64>
  return %4 : tensor<f64>
}

// -----

// Cos and Sin as rotary embeddings use them: x * cos(a) + y * sin(a), with the
// angles trainable too.
// CHECK: gradient check @trig: 15 elements, max error {{.*}}: PASS
func.func @trig(%x: tensor<2x3xf64> {lmopt.trainable = "x"},
                %y: tensor<2x3xf64> {lmopt.trainable = "y"},
                %a: tensor<3xf64> {lmopt.trainable = "a"}) -> tensor<f64> {
  %c = lmopt.cos %a : tensor<3xf64>
  %s = lmopt.sin %a : tensor<3xf64>
  %0 = lmopt.mul %x, %c : (tensor<2x3xf64>, tensor<3xf64>) -> tensor<2x3xf64>
  %1 = lmopt.mul %y, %s : (tensor<2x3xf64>, tensor<3xf64>) -> tensor<2x3xf64>
  %2 = lmopt.add %0, %1 : (tensor<2x3xf64>, tensor<2x3xf64>) -> tensor<2x3xf64>
  %3 = lmopt.mul %2, %2 : (tensor<2x3xf64>, tensor<2x3xf64>) -> tensor<2x3xf64>
  %4 = lmopt.reduce_sum %3 {keepdims = false} : tensor<2x3xf64> -> tensor<f64>
  return %4 : tensor<f64>
}

// -----

// Rotary embedding: the input and both tables (broadcast over the batch)
// trainable.
// CHECK: gradient check @rotary: 32 elements, max error {{.*}}: PASS
func.func @rotary(%x: tensor<2x3x4xf64> {lmopt.trainable = "x"},
                  %c: tensor<4xf64> {lmopt.trainable = "c"},
                  %s: tensor<4xf64> {lmopt.trainable = "s"}) -> tensor<f64> {
  %0 = lmopt.rotary %x, %c, %s : (tensor<2x3x4xf64>, tensor<4xf64>, tensor<4xf64>) -> tensor<2x3x4xf64>
  %w = lmopt.constant dense<[1.0, -2.0, 0.5, 3.0]> : tensor<4xf64>
  %1 = lmopt.mul %0, %w : (tensor<2x3x4xf64>, tensor<4xf64>) -> tensor<2x3x4xf64>
  %2 = lmopt.mul %1, %0 : (tensor<2x3x4xf64>, tensor<2x3x4xf64>) -> tensor<2x3x4xf64>
  %3 = lmopt.reduce_sum %2 {keepdims = false} : tensor<2x3x4xf64> -> tensor<f64>
  return %3 : tensor<f64>
}

// -----

// The distillation objective's KL term as lmopt-compile --distill-from
// builds it (Distillation.cpp): T^2 * sum(p_t * (log p_t - log p_s)) over
// the batch, with p = softmax(logits / T), T = 2; the teacher's logits are
// a constant.
// CHECK: gradient check @distill_kl: 8 elements, max error {{.*}}: PASS
func.func @distill_kl(%s: tensor<2x4xf64> {lmopt.trainable = "s"}) -> tensor<f64> {
  %t = lmopt.constant dense<[[0.5, -1.0, 2.0, 0.25], [1.5, 0.0, -0.5, -2.0]]> : tensor<2x4xf64>
  %inv = lmopt.constant dense<0.5> : tensor<f64>
  %t2 = lmopt.constant dense<4.0> : tensor<f64>
  %0 = lmopt.mul %s, %inv : (tensor<2x4xf64>, tensor<f64>) -> tensor<2x4xf64>
  %1 = lmopt.mul %t, %inv : (tensor<2x4xf64>, tensor<f64>) -> tensor<2x4xf64>
  %2 = lmopt.log_softmax %0 {axis = -1 : i64} : tensor<2x4xf64>
  %3 = lmopt.log_softmax %1 {axis = -1 : i64} : tensor<2x4xf64>
  %4 = lmopt.exp %3 : tensor<2x4xf64>
  %5 = lmopt.sub %3, %2 : (tensor<2x4xf64>, tensor<2x4xf64>) -> tensor<2x4xf64>
  %6 = lmopt.mul %4, %5 : (tensor<2x4xf64>, tensor<2x4xf64>) -> tensor<2x4xf64>
  %7 = lmopt.reduce_sum %6 {axes = array<i64: 1>, keepdims = false} : tensor<2x4xf64> -> tensor<2xf64>
  %8 = lmopt.reduce_mean %7 {keepdims = false} : tensor<2xf64> -> tensor<f64>
  %9 = lmopt.mul %8, %t2 : (tensor<f64>, tensor<f64>) -> tensor<f64>
  return %9 : tensor<f64>
}

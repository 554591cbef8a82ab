// RUN: lmopt-opt %s -lmopt-narrow-precision=dtype=f16 -split-input-file | FileCheck %s --check-prefixes=CHECK,F16
// RUN: lmopt-opt %s -lmopt-narrow-precision=dtype=bf16 -split-input-file | FileCheck %s --check-prefixes=CHECK,BF16
// RUN: lmopt-opt %s -lmopt-narrow-precision -lmopt-report=- -o /dev/null | FileCheck %s --check-prefix=REPORT

// A linear island: the activations (input, residual) are cast, the constant
// weight and bias are converted here (round to nearest even, so no cast is
// left for run time), the linear runs in half precision and its result is
// widened back. Weight bits, little-endian after the blob's alignment word:
// 1.0, 0.1, -2.5, 65504 (f16's largest; 65536 in bf16), 1 + 2^-11 (a tie:
// to even, 1.0) and 1 + 3 * 2^-11 (a tie: to even, 1 + 2^-9; 1.0 in bf16).
// CHECK-LABEL: func @linear_island
// CHECK-SAME: (%[[X:.*]]: tensor<2x3xf32>, %[[R:.*]]: tensor<2x2xf32>)
// F16-DAG: %[[B:.*]] = lmopt.constant dense_resource<[[BBLOB:.*]]> : tensor<2xf16>
// F16-DAG: %[[W:.*]] = lmopt.constant dense_resource<[[WBLOB:.*]]> : tensor<3x2xf16>
// F16-DAG: %[[RH:.*]] = lmopt.cast %[[R]] : tensor<2x2xf32> -> tensor<2x2xf16>
// F16-DAG: %[[XH:.*]] = lmopt.cast %[[X]] : tensor<2x3xf32> -> tensor<2x3xf16>
// F16: %[[Y:.*]] = lmopt.linear %[[XH]], %[[W]] bias %[[B]] residual %[[RH]] : (tensor<2x3xf16>, tensor<3x2xf16>, tensor<2xf16>, tensor<2x2xf16>) -> tensor<2x2xf16>
// F16: %[[OUT:.*]] = lmopt.cast %[[Y]] : tensor<2x2xf16> -> tensor<2x2xf32>
// F16: return %[[OUT]]
// BF16-DAG: %[[W:.*]] = lmopt.constant dense_resource<[[WBLOB:.*]]> : tensor<3x2xbf16>
// BF16: lmopt.linear %{{.*}}, %[[W]] bias %{{.*}} residual %{{.*}} : (tensor<2x3xbf16>, tensor<3x2xbf16>, tensor<2xbf16>, tensor<2x2xbf16>) -> tensor<2x2xbf16>
// BF16: lmopt.cast %{{.*}} : tensor<2x2xbf16> -> tensor<2x2xf32>
// CHECK-NOT: tensor<3x2xf32>
// F16: [[BBLOB]]: "0x02000000003800B8"
// F16: [[WBLOB]]: "0x02000000003C662E00C1FF7B003C023C"
// BF16: [[WBLOB]]: "0x02000000803FCD3D20C08047803F803F"
func.func @linear_island(%x: tensor<2x3xf32>, %r: tensor<2x2xf32>) -> tensor<2x2xf32> {
  %w = lmopt.constant dense<[[1.0, 0.1], [-2.5, 65504.0], [1.00048828125, 1.00146484375]]> : tensor<3x2xf32>
  %b = lmopt.constant dense<[0.5, -0.5]> : tensor<2xf32>
  %y = lmopt.linear %x, %w bias %b residual %r : (tensor<2x3xf32>, tensor<3x2xf32>, tensor<2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>
  return %y : tensor<2x2xf32>
}

// -----

// Linear -> split -> attention: the widening cast after the fused QKV
// projection sinks below the split and cancels against the attention's
// narrowing casts, so the half-precision projection feeds attention
// directly; the additive mask stays f32 (the attention steps read it so).
// CHECK-LABEL: func @qkv_attention
// CHECK-SAME: %[[MASK:[^:]*]]: tensor<1x1x4x4xf32>
// CHECK: %[[QKV:.*]] = lmopt.linear {{.*}} -> tensor<1x4x24x[[H:b?f16]]>
// CHECK-NEXT: %[[S:.*]]:3 = lmopt.split %[[QKV]] {{.*}} : (tensor<1x4x24x[[H]]>) -> (tensor<1x4x8x[[H]]>, tensor<1x4x8x[[H]]>, tensor<1x4x8x[[H]]>)
// CHECK-NEXT: %[[A:.*]] = lmopt.attention %[[S]]#0, %[[S]]#1, %[[S]]#2 mask %[[MASK]] {num_heads = 2 : i64} : (tensor<1x4x8x[[H]]>, tensor<1x4x8x[[H]]>, tensor<1x4x8x[[H]]>, tensor<1x1x4x4xf32>) -> tensor<1x4x8x[[H]]>
// CHECK-NEXT: %[[OUT:.*]] = lmopt.cast %[[A]] : tensor<1x4x8x[[H]]> -> tensor<1x4x8xf32>
// CHECK-NEXT: return %[[OUT]]
func.func @qkv_attention(%x: tensor<1x4x8xf32>, %w: tensor<8x24xf32>, %mask: tensor<1x1x4x4xf32>) -> tensor<1x4x8xf32> {
  %qkv = lmopt.linear %x, %w : (tensor<1x4x8xf32>, tensor<8x24xf32>) -> tensor<1x4x24xf32>
  %s:3 = lmopt.split %qkv {axis = 2 : i64, split_sizes = array<i64: 8, 8, 8>} : (tensor<1x4x24xf32>) -> (tensor<1x4x8xf32>, tensor<1x4x8xf32>, tensor<1x4x8xf32>)
  %a = lmopt.attention %s#0, %s#1, %s#2 mask %mask {num_heads = 2 : i64} : (tensor<1x4x8xf32>, tensor<1x4x8xf32>, tensor<1x4x8xf32>, tensor<1x1x4x4xf32>) -> tensor<1x4x8xf32>
  return %a : tensor<1x4x8xf32>
}

// -----

// Attention -> reshape -> linear: the same through a reshape; the boolean
// mask stays i1. Both linears read %x through one shared cast.
// CHECK-LABEL: func @attention_reshape_linear
// CHECK-SAME: (%[[X:[^:]*]]: tensor<1x4x8xf32>, %{{[^:]*}}: tensor<1x4x4xi1>
// CHECK: %[[XH:.*]] = lmopt.cast %[[X]] : tensor<1x4x8xf32> -> tensor<1x4x8x[[H:b?f16]]>
// CHECK-NOT: lmopt.cast %[[X]]
// CHECK: %[[A:.*]] = lmopt.attention %[[XH]], %[[XH]], %[[XH]] mask %{{.*}} {{.*}} -> tensor<1x4x8x[[H]]>
// CHECK-NEXT: %[[R:.*]] = lmopt.reshape %[[A]], %{{.*}} : (tensor<1x4x8x[[H]]>, tensor<2xi64>) -> tensor<4x8x[[H]]>
// CHECK-NEXT: %[[Y:.*]] = lmopt.linear %[[R]], %{{.*}} : (tensor<4x8x[[H]]>, tensor<8x8x[[H]]>) -> tensor<4x8x[[H]]>
// CHECK-NEXT: lmopt.cast %[[Y]] : tensor<4x8x[[H]]> -> tensor<4x8xf32>
func.func @attention_reshape_linear(%x: tensor<1x4x8xf32>, %mask: tensor<1x4x4xi1>, %w: tensor<8x8xf32>) -> tensor<4x8xf32> {
  %shape = lmopt.constant dense<[4, 8]> : tensor<2xi64>
  %a = lmopt.attention %x, %x, %x mask %mask {num_heads = 2 : i64} : (tensor<1x4x8xf32>, tensor<1x4x8xf32>, tensor<1x4x8xf32>, tensor<1x4x4xi1>) -> tensor<1x4x8xf32>
  %r = lmopt.reshape %a, %shape : (tensor<1x4x8xf32>, tensor<2xi64>) -> tensor<4x8xf32>
  %y = lmopt.linear %r, %w : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

// A matmul of two activations: both cast. The layer norm between two
// islands stays f32, reading the widened product.
// CHECK-LABEL: func @matmul_then_norm
// CHECK: %[[P:.*]] = lmopt.matmul %{{.*}}, %{{.*}} : (tensor<2x4x[[H:b?f16]]>, tensor<4x4x[[H]]>) -> tensor<2x4x[[H]]>
// CHECK-NEXT: %[[PF:.*]] = lmopt.cast %[[P]] : tensor<2x4x[[H]]> -> tensor<2x4xf32>
// CHECK-NEXT: %[[N:.*]] = lmopt.layer_norm %[[PF]], {{.*}} -> tensor<2x4xf32>
// CHECK-NEXT: %[[NH:.*]] = lmopt.cast %[[N]] : tensor<2x4xf32> -> tensor<2x4x[[H]]>
// CHECK-NEXT: lmopt.matmul %[[NH]]
func.func @matmul_then_norm(%a: tensor<2x4xf32>, %b: tensor<4x4xf32>, %g: tensor<4xf32>) -> tensor<2x4xf32> {
  %p = lmopt.matmul %a, %b : (tensor<2x4xf32>, tensor<4x4xf32>) -> tensor<2x4xf32>
  %n = lmopt.layer_norm %p, %g : (tensor<2x4xf32>, tensor<4xf32>) -> tensor<2x4xf32>
  %q = lmopt.matmul %n, %b : (tensor<2x4xf32>, tensor<4x4xf32>) -> tensor<2x4xf32>
  return %q : tensor<2x4xf32>
}

// -----

// Ops that are not f32 are left as they are: a linear already in half
// precision, an int8 linear, an integer matmul. A round trip that narrows
// first (f32 -> f16 -> f32) loses bits and is not folded.
// CHECK-LABEL: func @negative_not_f32
// CHECK: lmopt.linear %{{.*}}, %{{.*}} : (tensor<2x4xf16>, tensor<4x4xf16>) -> tensor<2x4xf16>
// CHECK: lmopt.linear {{.*}}input_quantization = #lmopt.input_quantization<dynamic_per_token>{{.*}} -> tensor<2x4xf32>
// CHECK: lmopt.matmul %{{.*}}, %{{.*}} : (tensor<2x4xi64>, tensor<4x4xi64>) -> tensor<2x4xi64>
// CHECK: %[[N:.*]] = lmopt.cast %{{.*}} : tensor<2x4xf32> -> tensor<2x4xf16>
// CHECK: lmopt.cast %[[N]] : tensor<2x4xf16> -> tensor<2x4xf32>
func.func @negative_not_f32(%h: tensor<2x4xf16>, %wh: tensor<4x4xf16>, %x: tensor<2x4xf32>, %i: tensor<2x4xi64>, %wi: tensor<4x4xi64>) -> (tensor<2x4xf16>, tensor<2x4xf32>, tensor<2x4xi64>, tensor<2x4xf32>) {
  %0 = lmopt.linear %h, %wh : (tensor<2x4xf16>, tensor<4x4xf16>) -> tensor<2x4xf16>
  %bits = lmopt.constant dense<1> : tensor<4x4xi8>
  %q = quant.scast %bits : tensor<4x4xi8> to tensor<4x4x!quant.uniform<i8:f32:1, {1.0,1.0,1.0,1.0}>>
  %1 = lmopt.linear %x, %q {input_quantization = #lmopt.input_quantization<dynamic_per_token>} : (tensor<2x4xf32>, tensor<4x4x!quant.uniform<i8:f32:1, {1.0,1.0,1.0,1.0}>>) -> tensor<2x4xf32>
  %2 = lmopt.matmul %i, %wi : (tensor<2x4xi64>, tensor<4x4xi64>) -> tensor<2x4xi64>
  %n = lmopt.cast %x : tensor<2x4xf32> -> tensor<2x4xf16>
  %3 = lmopt.cast %n : tensor<2x4xf16> -> tensor<2x4xf32>
  return %0, %1, %2, %3 : tensor<2x4xf16>, tensor<2x4xf32>, tensor<2x4xi64>, tensor<2x4xf32>
}

// REPORT: half_precision 8 0

// -----

// kv_heads_split attention (a decoder reading its key/value cache) is an
// island unless keep-kv-cache-attention leaves it f32 for an f32 cache.
// RUN: lmopt-opt %s -lmopt-narrow-precision="keep-kv-cache-attention=true" -split-input-file | FileCheck %s --check-prefix=KV
// CHECK-LABEL: func @kv_split_attention
// CHECK: lmopt.attention {{.*}} -> tensor<1x1x8x{{b?}}f16>
// KV-LABEL: func @kv_split_attention
// KV: lmopt.attention {{.*}} : (tensor<1x1x8xf32>, tensor<1x2x5x4xf32>, tensor<1x2x5x4xf32>) -> tensor<1x1x8xf32>
func.func @kv_split_attention(%q: tensor<1x1x8xf32>, %k: tensor<1x2x5x4xf32>, %v: tensor<1x2x5x4xf32>) -> tensor<1x1x8xf32> {
  %a = lmopt.attention %q, %k, %v {num_heads = 2 : i64, kv_heads_split = true, causal = true} : (tensor<1x1x8xf32>, tensor<1x2x5x4xf32>, tensor<1x2x5x4xf32>) -> tensor<1x1x8xf32>
  return %a : tensor<1x1x8xf32>
}

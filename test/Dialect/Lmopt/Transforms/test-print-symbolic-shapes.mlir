// RUN: lmopt-opt %s --split-input-file --lmopt-test-print-symbolic-shapes -verify-diagnostics -o /dev/null

// Broadcasting: equal expressions merge, a static 1 stretches.
func.func @broadcast(%a: tensor<?x1xf32>, %b: tensor<?xf32>) -> tensor<?x?xf32>
    attributes {lmopt.input_names = ["a", "b"]} {
  // expected-remark @below {{dims [a.0, b.0]}}
  %0 = lmopt.add %a, %b : (tensor<?x1xf32>, tensor<?xf32>) -> tensor<?x?xf32>
  // expected-remark @below {{dims [a.0, b.0]}}
  %1 = lmopt.mul %0, %0 : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
  // expected-remark @below {{dims [a.0, b.0]}}
  %2 = lmopt.gelu %1 : tensor<?x?xf32>
  return %2 : tensor<?x?xf32>
}

// -----

// Two different symbols: either could be 1, so the result is unknown.
func.func @negative_broadcast(%a: tensor<?xf32>, %b: tensor<?xf32>) -> tensor<?xf32>
    attributes {lmopt.input_names = ["a", "b"]} {
  // expected-remark @below {{dims [?0]}}
  %0 = lmopt.add %a, %b : (tensor<?xf32>, tensor<?xf32>) -> tensor<?xf32>
  return %0 : tensor<?xf32>
}

// -----

// Shape vectors: Shape, Gather, Mul, Unsqueeze, Concat carry their elements.
func.func @shape_vector(%x: tensor<?x?x64xf32>) -> tensor<2xi64>
    attributes {lmopt.input_names = ["x"]} {
  %c1 = lmopt.constant dense<1> : tensor<i64>
  %c12 = lmopt.constant dense<12> : tensor<i64>
  %c0v = lmopt.constant dense<0> : tensor<1xi64>
  %c1v = lmopt.constant dense<1> : tensor<1xi64>
  // expected-remark @below {{dims [3] values [x.0, x.1, 64]}}
  %s = lmopt.shape %x : tensor<?x?x64xf32> -> tensor<3xi64>
  // expected-remark @below {{dims [] values [x.1]}}
  %d1 = lmopt.gather %s, %c1 : (tensor<3xi64>, tensor<i64>) -> tensor<i64>
  // expected-remark @below {{dims [] values [x.1 * 12]}}
  %m = lmopt.mul %d1, %c12 : (tensor<i64>, tensor<i64>) -> tensor<i64>
  // expected-remark @below {{dims [1] values [x.1 * 12]}}
  %u = lmopt.unsqueeze %m {axes = array<i64: 0>} : tensor<i64> -> tensor<1xi64>
  // expected-remark @below {{dims [1] values [x.0]}}
  %head = lmopt.slice %s, %c0v, %c1v : (tensor<3xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<1xi64>
  // expected-remark @below {{dims [2] values [x.0, x.1 * 12]}}
  %c = lmopt.concat %head, %u {axis = 0 : i64} : (tensor<1xi64>, tensor<1xi64>) -> tensor<2xi64>
  // expected-remark @below {{dims [] values [x.0 * x.1 * 64]}}
  %n = lmopt.size %x : tensor<?x?x64xf32> -> tensor<i64>
  // expected-remark @below {{dims [] values [x.0 * x.1 * 64 + 12]}}
  %n2 = lmopt.add %n, %c12 : (tensor<i64>, tensor<i64>) -> tensor<i64>
  // expected-remark @below {{dims [] values [x.0 * x.1 * 64 + 12]}}
  %n3 = lmopt.cast %n2 : tensor<i64> -> tensor<i32>
  return %c : tensor<2xi64>
}

// -----

// Reshape: 0 copies the input dim, -1 is the exact quotient, and symbolic
// elements of the shape operand become the dims.
func.func @reshape(%x: tensor<?x?x64xf32>) -> tensor<?x?xf32>
    attributes {lmopt.input_names = ["x"]} {
  %keep = lmopt.constant dense<[0, 0, 2, 32]> : tensor<4xi64>
  %flat = lmopt.constant dense<[-1, 64]> : tensor<2xi64>
  %c0 = lmopt.constant dense<0> : tensor<1xi64>
  %cm1 = lmopt.constant dense<-1> : tensor<1xi64>
  %i0 = lmopt.constant dense<0> : tensor<i64>
  // expected-remark @below {{dims [x.0, x.1, 2, 32]}}
  %0 = lmopt.reshape %x, %keep : (tensor<?x?x64xf32>, tensor<4xi64>) -> tensor<?x?x2x32xf32>
  // expected-remark @below {{dims [x.0 * x.1, 64]}}
  %1 = lmopt.reshape %x, %flat : (tensor<?x?x64xf32>, tensor<2xi64>) -> tensor<?x64xf32>
  // expected-remark @below {{dims [3] values [x.0, x.1, 64]}}
  %s = lmopt.shape %x : tensor<?x?x64xf32> -> tensor<3xi64>
  // expected-remark @below {{dims [] values [x.0]}}
  %d0 = lmopt.gather %s, %i0 : (tensor<3xi64>, tensor<i64>) -> tensor<i64>
  // expected-remark @below {{dims [1] values [x.0]}}
  %u = lmopt.unsqueeze %d0 {axes = array<i64: 0>} : tensor<i64> -> tensor<1xi64>
  // expected-remark @below {{dims [2] values [x.0, -1]}}
  %t = lmopt.concat %u, %cm1 {axis = 0 : i64} : (tensor<1xi64>, tensor<1xi64>) -> tensor<2xi64>
  // expected-remark @below {{dims [x.0, x.1 * 64]}}
  %2 = lmopt.reshape %x, %t : (tensor<?x?x64xf32>, tensor<2xi64>) -> tensor<?x?xf32>
  return %2 : tensor<?x?xf32>
}

// -----

// -1 where the input's element count is not provably divisible.
func.func @negative_reshape(%x: tensor<?x?xf32>) -> tensor<?x3xf32>
    attributes {lmopt.input_names = ["x"]} {
  %shape = lmopt.constant dense<[-1, 3]> : tensor<2xi64>
  // expected-remark @below {{dims [?0, 3]}}
  %0 = lmopt.reshape %x, %shape : (tensor<?x?xf32>, tensor<2xi64>) -> tensor<?x3xf32>
  return %0 : tensor<?x3xf32>
}

// -----

// Expand broadcasts with its shape operand, after the where(equal(s, -1))
// idiom that turns -1 into 1.
func.func @expand(%x: tensor<?x?xf32>, %y: tensor<1x?xf32>) -> tensor<?x?xf32>
    attributes {lmopt.input_names = ["x", "y"]} {
  %i0 = lmopt.constant dense<0> : tensor<i64>
  %cm1 = lmopt.constant dense<-1> : tensor<1xi64>
  %m1 = lmopt.constant dense<-1> : tensor<2xi64>
  %ones = lmopt.constant dense<1> : tensor<2xi64>
  // expected-remark @below {{dims [2] values [x.0, x.1]}}
  %s = lmopt.shape %x : tensor<?x?xf32> -> tensor<2xi64>
  // expected-remark @below {{dims [1] values [x.1]}}
  %d0 = lmopt.gather %s, %cm1 : (tensor<2xi64>, tensor<1xi64>) -> tensor<1xi64>
  // expected-remark @below {{dims [2] values [x.1, -1]}}
  %t = lmopt.concat %d0, %cm1 {axis = 0 : i64} : (tensor<1xi64>, tensor<1xi64>) -> tensor<2xi64>
  // expected-remark @below {{dims [2] values [0, 1]}}
  %isNeg = lmopt.equal %t, %m1 : (tensor<2xi64>, tensor<2xi64>) -> tensor<2xi1>
  // expected-remark @below {{dims [2] values [x.1, 1]}}
  %fixed = lmopt.where %isNeg, %ones, %t : (tensor<2xi1>, tensor<2xi64>, tensor<2xi64>) -> tensor<2xi64>
  // expected-remark @below {{dims [x.1, y.1]}}
  %0 = lmopt.expand %y, %fixed : (tensor<1x?xf32>, tensor<2xi64>) -> tensor<?x?xf32>
  return %0 : tensor<?x?xf32>
}

// -----

// Layout ops: transpose permutes, split sets its sizes, concat sums.
func.func @layout(%a: tensor<?x?x8xf32>, %b: tensor<?x?x8xf32>) -> tensor<?x?x8xf32>
    attributes {lmopt.input_names = ["a", "b"]} {
  // expected-remark @below {{dims [a.1, 8, a.0]}}
  %0 = lmopt.transpose %a {perm = array<i64: 1, 2, 0>} : tensor<?x?x8xf32> -> tensor<?x8x?xf32>
  // expected-remark @below {{result 0 dims [a.0, a.1, 3]}}
  // expected-remark @below {{result 1 dims [a.0, a.1, 5]}}
  %1:2 = lmopt.split %a {axis = 2 : i64, split_sizes = array<i64: 3, 5>} : (tensor<?x?x8xf32>) -> (tensor<?x?x3xf32>, tensor<?x?x5xf32>)
  // expected-remark @below {{dims [a.0, a.1 * 2, 8]}}
  %2 = lmopt.concat %a, %a {axis = 1 : i64} : (tensor<?x?x8xf32>, tensor<?x?x8xf32>) -> tensor<?x?x8xf32>
  // expected-remark @below {{dims [a.0, a.1 * 4, 8]}}
  %3 = lmopt.concat %2, %a, %a {axis = -2 : i64} : (tensor<?x?x8xf32>, tensor<?x?x8xf32>, tensor<?x?x8xf32>) -> tensor<?x?x8xf32>
  return %3 : tensor<?x?x8xf32>
}

// -----

// Concat of different symbols along another axis: the other dims do not
// merge.
func.func @negative_concat(%a: tensor<?x4xf32>, %b: tensor<?x4xf32>) -> tensor<?x8xf32>
    attributes {lmopt.input_names = ["a", "b"]} {
  // expected-remark @below {{dims [?0, 8]}}
  %0 = lmopt.concat %a, %b {axis = 1 : i64} : (tensor<?x4xf32>, tensor<?x4xf32>) -> tensor<?x8xf32>
  return %0 : tensor<?x8xf32>
}

// -----

// Slice: constant bounds on a static dim, the whole of a symbolic dim, and an
// end read from the dim itself.
func.func @slice(%x: tensor<?x?xf32>, %y: tensor<10xf32>) -> tensor<?x?xf32>
    attributes {lmopt.input_names = ["x", "y"]} {
  %c0 = lmopt.constant dense<0> : tensor<1xi64>
  %c1 = lmopt.constant dense<1> : tensor<1xi64>
  %c2 = lmopt.constant dense<2> : tensor<1xi64>
  %c5 = lmopt.constant dense<5> : tensor<1xi64>
  %cmax = lmopt.constant dense<9223372036854775807> : tensor<1xi64>
  // expected-remark @below {{dims [3]}}
  %0 = lmopt.slice %y, %c2, %c5 : (tensor<10xf32>, tensor<1xi64>, tensor<1xi64>) -> tensor<?xf32>
  // expected-remark @below {{dims [x.0, x.1]}}
  %1 = lmopt.slice %x, %c0, %cmax axes %c1 : (tensor<?x?xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<?x?xf32>
  // expected-remark @below {{dims [2] values [x.0, x.1]}}
  %s = lmopt.shape %x : tensor<?x?xf32> -> tensor<2xi64>
  // expected-remark @below {{dims [1] values [x.1]}}
  %e = lmopt.slice %s, %c1, %c2 : (tensor<2xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<1xi64>
  // expected-remark @below {{dims [x.0, x.1]}}
  %2 = lmopt.slice %x, %c0, %e axes %c1 steps %c1 : (tensor<?x?xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<?x?xf32>
  return %2 : tensor<?x?xf32>
}

// -----

// A slice whose extent depends on how the symbol compares with a bound:
// min(x.0 - 1, ...) or min(10, x.0) are not polynomials.
func.func @negative_slice(%x: tensor<?xf32>, %y: tensor<10xf32>) -> tensor<?xf32>
    attributes {lmopt.input_names = ["x", "y"]} {
  %c0 = lmopt.constant dense<0> : tensor<1xi64>
  %c1 = lmopt.constant dense<1> : tensor<1xi64>
  %cmax = lmopt.constant dense<9223372036854775807> : tensor<1xi64>
  // expected-remark @below {{dims [?0]}}
  %0 = lmopt.slice %x, %c1, %cmax : (tensor<?xf32>, tensor<1xi64>, tensor<1xi64>) -> tensor<?xf32>
  // expected-remark @below {{dims [1] values [x.0]}}
  %s = lmopt.shape %x : tensor<?xf32> -> tensor<1xi64>
  // expected-remark @below {{dims [?1]}}
  %1 = lmopt.slice %y, %c0, %s : (tensor<10xf32>, tensor<1xi64>, tensor<1xi64>) -> tensor<?xf32>
  return %1 : tensor<?xf32>
}

// -----

// Matrix products take rows from the left operand and columns from the right.
func.func @products(%x: tensor<?x?x64xf32>, %m: tensor<?x64xf32>) -> tensor<?x?x64xf32>
    attributes {lmopt.input_names = ["x", "m"]} {
  %w = lmopt.constant dense<1.0> : tensor<64x32xf32>
  %wt = lmopt.constant dense<1.0> : tensor<32x64xf32>
  // expected-remark @below {{dims [x.0, x.1, 32]}}
  %0 = lmopt.matmul %x, %w : (tensor<?x?x64xf32>, tensor<64x32xf32>) -> tensor<?x?x32xf32>
  // expected-remark @below {{dims [m.0, 32]}}
  %1 = lmopt.gemm %m, %wt {trans_b = true} : (tensor<?x64xf32>, tensor<32x64xf32>) -> tensor<?x32xf32>
  // expected-remark @below {{dims [x.0, x.1, 32]}}
  %2 = lmopt.linear %x, %wt {transpose_weight = true} : (tensor<?x?x64xf32>, tensor<32x64xf32>) -> tensor<?x?x32xf32>
  // expected-remark @below {{dims [x.0, x.1, 64]}}
  %3 = lmopt.attention %x, %x, %x {num_heads = 2 : i64} : (tensor<?x?x64xf32>, tensor<?x?x64xf32>, tensor<?x?x64xf32>) -> tensor<?x?x64xf32>
  return %3 : tensor<?x?x64xf32>
}

// -----

// Normalizations keep the input's dims; reductions keep or drop theirs.
func.func @norms_and_reductions(%x: tensor<?x?x64xf32>) -> tensor<?x?xf32>
    attributes {lmopt.input_names = ["x"]} {
  %g = lmopt.constant dense<1.0> : tensor<64xf32>
  // expected-remark @below {{dims [x.0, x.1, 64]}}
  %0 = lmopt.softmax %x : tensor<?x?x64xf32>
  // expected-remark @below {{dims [x.0, x.1, 64]}}
  %1 = lmopt.layer_norm %0, %g, %g : (tensor<?x?x64xf32>, tensor<64xf32>, tensor<64xf32>) -> tensor<?x?x64xf32>
  // expected-remark @below {{result 0 dims [x.0, x.1, 64]}}
  // expected-remark @below {{result 1 dims [x.0, x.1, 64]}}
  %2:2 = lmopt.skip_layer_norm %1, %x, %g, %g : (tensor<?x?x64xf32>, tensor<?x?x64xf32>, tensor<64xf32>, tensor<64xf32>) -> (tensor<?x?x64xf32>, tensor<?x?x64xf32>)
  // expected-remark @below {{dims [x.0, 1, 64]}}
  %3 = lmopt.reduce_mean %2#0 {axes = array<i64: 1>} : tensor<?x?x64xf32> -> tensor<?x1x64xf32>
  // expected-remark @below {{dims [x.0, x.1]}}
  %4 = lmopt.reduce_sum %2#1 {axes = array<i64: -1>, keepdims = false} : tensor<?x?x64xf32> -> tensor<?x?xf32>
  return %4 : tensor<?x?xf32>
}

// -----

// Gather splices the indices' dims in place of the gathered axis; Range from
// 0 by 1 has the limit's length.
func.func @gather_range(%ids: tensor<?x?xi64>) -> tensor<?xi64>
    attributes {lmopt.input_names = ["ids"]} {
  %table = lmopt.constant dense<1.0> : tensor<100x64xf32>
  %i0 = lmopt.constant dense<0> : tensor<i64>
  %i1 = lmopt.constant dense<1> : tensor<i64>
  // expected-remark @below {{dims [ids.0, ids.1, 64]}}
  %0 = lmopt.gather %table, %ids : (tensor<100x64xf32>, tensor<?x?xi64>) -> tensor<?x?x64xf32>
  // expected-remark @below {{dims [2] values [ids.0, ids.1]}}
  %s = lmopt.shape %ids : tensor<?x?xi64> -> tensor<2xi64>
  // expected-remark @below {{dims [] values [ids.1]}}
  %n = lmopt.gather %s, %i1 : (tensor<2xi64>, tensor<i64>) -> tensor<i64>
  // expected-remark @below {{dims [ids.1]}}
  %1 = lmopt.range %i0, %n, %i1 : (tensor<i64>, tensor<i64>, tensor<i64>) -> tensor<?xi64>
  return %1 : tensor<?xi64>
}

// -----

// Range by 2 has length ceil(n / 2), and an op without a rule knows nothing.
func.func @negative_range_and_unknown(%ids: tensor<?xi64>, %nd: tensor<?x1xi64>) -> tensor<?xi64>
    attributes {lmopt.input_names = ["ids", "nd"]} {
  %data = lmopt.constant dense<1.0> : tensor<4x5xf32>
  %i0 = lmopt.constant dense<0> : tensor<i64>
  %i2 = lmopt.constant dense<2> : tensor<i64>
  // expected-remark @below {{dims [] values [ids.0]}}
  %n = lmopt.size %ids : tensor<?xi64> -> tensor<i64>
  // expected-remark @below {{dims [?0]}}
  %0 = lmopt.range %i0, %n, %i2 : (tensor<i64>, tensor<i64>, tensor<i64>) -> tensor<?xi64>
  // expected-remark @below {{dims [nd.0, 5]}}
  %1 = lmopt.gather_nd %data, %nd : (tensor<4x5xf32>, tensor<?x1xi64>) -> tensor<?x5xf32>
  return %0 : tensor<?xi64>
}

// -----

// Same-shape ops keep the dims but not the contents: neg changes them, and a
// cast to i1 compares with zero.
func.func @negative_contents(%x: tensor<?xf32>) -> tensor<i1>
    attributes {lmopt.input_names = ["x"]} {
  // expected-remark @below {{dims [] values [x.0]}}
  %n = lmopt.size %x : tensor<?xf32> -> tensor<i64>
  // expected-remark-re @below {{dims []{{$}}}}
  %neg = lmopt.neg %n : tensor<i64>
  // expected-remark-re @below {{dims []{{$}}}}
  %b = lmopt.cast %n : tensor<i64> -> tensor<i1>
  return %b : tensor<i1>
}

// -----

// Shape arithmetic that overflows int64 (constants come from the file) is
// dropped rather than wrapped.
func.func @negative_overflow(%x: tensor<?xf32>) -> tensor<i64>
    attributes {lmopt.input_names = ["x"]} {
  %big = lmopt.constant dense<9223372036854775807> : tensor<i64>
  // expected-remark @below {{dims [] values [x.0]}}
  %n = lmopt.size %x : tensor<?xf32> -> tensor<i64>
  // expected-remark @below {{dims [] values [x.0 * 2]}}
  %n2 = lmopt.add %n, %n : (tensor<i64>, tensor<i64>) -> tensor<i64>
  // expected-remark-re @below {{dims []{{$}}}}
  %0 = lmopt.mul %n2, %big : (tensor<i64>, tensor<i64>) -> tensor<i64>
  // expected-remark-re @below {{dims []{{$}}}}
  %1 = lmopt.add %big, %big : (tensor<i64>, tensor<i64>) -> tensor<i64>
  return %1 : tensor<i64>
}

// -----

// Dynamic quantization keeps the dims; its scale and zero point are scalars.
func.func @dynamic_quantize(%x: tensor<?x64xf32>) -> tensor<?x64xui8>
    attributes {lmopt.input_names = ["x"]} {
  // expected-remark @below {{result 0 dims [x.0, 64]}}
  // expected-remark-re @below {{result 1 dims []{{$}}}}
  // expected-remark-re @below {{result 2 dims []{{$}}}}
  %q:3 = lmopt.dynamic_quantize_linear %x : tensor<?x64xf32> -> (tensor<?x64xui8>, tensor<f32>, tensor<ui8>)
  return %q#0 : tensor<?x64xui8>
}

// -----

// Symbols take the inputs' names, and an input the attribute does not name
// (an empty entry, or none) is called `input<N>`, as in the bundle.
func.func @unnamed_inputs(%a: tensor<?x4xf32>, %b: tensor<?x4xf32>, %c: tensor<?x4xf32>) -> tensor<?x4xf32>
    attributes {lmopt.input_names = ["a", ""]} {
  // expected-remark @below {{dims [a.0, 4]}}
  %0 = lmopt.gelu %a : tensor<?x4xf32>
  // expected-remark @below {{dims [input1.0, 4]}}
  %1 = lmopt.gelu %b : tensor<?x4xf32>
  // expected-remark @below {{dims [input2.0, 4]}}
  %2 = lmopt.gelu %c : tensor<?x4xf32>
  return %2 : tensor<?x4xf32>
}

// -----

// GatherND: the indices' dims but the tuple, then the data's dims past the
// batch dims and the tuple.
func.func @gather_nd(%data: tensor<?x?x8xf32>, %nd: tensor<?x3x1xi64>) -> tensor<?x3x8xf32>
    attributes {lmopt.input_names = ["data", "nd"]} {
  // expected-remark @below {{dims [nd.0, 3, 8]}}
  %0 = lmopt.gather_nd %data, %nd {batch_dims = 1 : i64} : (tensor<?x?x8xf32>, tensor<?x3x1xi64>) -> tensor<?x3x8xf32>
  return %0 : tensor<?x3x8xf32>
}

// -----

// The attention backward's gradients take the dims of query, key and value
// (keys of their own length).
func.func @attention_grad(%q: tensor<?x?x64xf32>, %kv: tensor<?x?x64xf32>) -> tensor<?x?x64xf32>
    attributes {lmopt.input_names = ["q", "kv"]} {
  // expected-remark @below {{result 0 dims [q.0, q.1, 64]}}
  // expected-remark @below {{result 1 dims [kv.0, kv.1, 64]}}
  // expected-remark @below {{result 2 dims [kv.0, kv.1, 64]}}
  %0:3 = lmopt.attention_grad %q, %kv, %kv, %q {num_heads = 4 : i64} : (tensor<?x?x64xf32>, tensor<?x?x64xf32>, tensor<?x?x64xf32>, tensor<?x?x64xf32>) -> (tensor<?x?x64xf32>, tensor<?x?x64xf32>, tensor<?x?x64xf32>)
  return %0#1 : tensor<?x?x64xf32>
}

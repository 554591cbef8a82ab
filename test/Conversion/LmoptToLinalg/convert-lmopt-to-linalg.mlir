// RUN: lmopt-opt %s --convert-lmopt-to-linalg --split-input-file | FileCheck %s

// CHECK-DAG: #[[ID2:.*]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-LABEL: func.func @unary_neg_float
// CHECK-SAME: %[[X:.*]]: tensor<2x?xf32>
// CHECK: %[[C1:.*]] = arith.constant 1 : index
// CHECK: %[[D1:.*]] = tensor.dim %[[X]], %[[C1]]
// CHECK: %[[E:.*]] = tensor.empty(%[[D1]]) : tensor<2x?xf32>
// CHECK: %[[R:.*]] = linalg.generic {indexing_maps = [#[[ID2]], #[[ID2]]], iterator_types = ["parallel", "parallel"]} ins(%[[X]] : tensor<2x?xf32>) outs(%[[E]] : tensor<2x?xf32>)
// CHECK: ^bb0(%[[IN:.*]]: f32, %{{.*}}: f32):
// CHECK: %[[N:.*]] = arith.negf %[[IN]] : f32
// CHECK: linalg.yield %[[N]]
// CHECK: return %[[R]]
func.func @unary_neg_float(%x: tensor<2x?xf32>) -> tensor<2x?xf32> {
  %0 = lmopt.neg %x : tensor<2x?xf32>
  return %0 : tensor<2x?xf32>
}

// -----

// CHECK-LABEL: func.func @unary_integer
// CHECK: linalg.generic
// CHECK: ^bb0(%[[A:.*]]: i64, %{{.*}}: i64):
// CHECK: %[[NA:.*]] = arith.subi %{{.*}}, %[[A]] : i64
// CHECK: %[[V:.*]] = arith.maxsi %[[A]], %[[NA]] : i64
// CHECK: linalg.yield %[[V]]
// CHECK: linalg.generic
// CHECK: ^bb0(%[[B:.*]]: i64, %{{.*}}: i64):
// CHECK: %[[M:.*]] = arith.maxsi %[[B]], %{{.*}} : i64
// CHECK: linalg.yield %[[M]]
// CHECK: linalg.generic
// CHECK: ^bb0(%[[C:.*]]: i64, %{{.*}}: i64):
// CHECK: %[[S:.*]] = arith.subi %{{.*}}, %[[C]] : i64
// CHECK: linalg.yield %[[S]]
func.func @unary_integer(%x: tensor<4xi64>) -> (tensor<4xi64>, tensor<4xi64>, tensor<4xi64>) {
  %0 = lmopt.abs %x : tensor<4xi64>
  %1 = lmopt.relu %x : tensor<4xi64>
  %2 = lmopt.neg %x : tensor<4xi64>
  return %0, %1, %2 : tensor<4xi64>, tensor<4xi64>, tensor<4xi64>
}

// -----

// Relu keeps `x > 0 ? x : 0` so NaN gives 0, as the reference evaluator does.
// CHECK-LABEL: func.func @unary_relu_float
// CHECK: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK: ^bb0(%[[A:.*]]: f32, %{{.*}}: f32):
// CHECK: %[[P:.*]] = arith.cmpf ogt, %[[A]], %[[ZERO]] : f32
// CHECK: %[[S:.*]] = arith.select %[[P]], %[[A]], %[[ZERO]] : f32
// CHECK: linalg.yield %[[S]]
func.func @unary_relu_float(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = lmopt.relu %x : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// Transcendental math on f16 runs in f32.
// CHECK-LABEL: func.func @unary_math_f16
// CHECK: ^bb0(%[[A:.*]]: f16, %{{.*}}: f16):
// CHECK: %[[W:.*]] = arith.extf %[[A]] : f16 to f32
// CHECK: %[[E:.*]] = math.exp %[[W]] : f32
// CHECK: %[[T:.*]] = arith.truncf %[[E]] : f32 to f16
// CHECK: linalg.yield %[[T]] : f16
// CHECK: math.log
// CHECK: math.sqrt
// CHECK: math.tanh
// CHECK: math.erf
// CHECK: arith.divf
// CHECK: math.exp
// CHECK: arith.divf
// CHECK: math.cos
// CHECK: math.sin
func.func @unary_math_f16(%x: tensor<4xf16>) -> (tensor<4xf16>, tensor<4xf16>, tensor<4xf16>, tensor<4xf16>, tensor<4xf16>, tensor<4xf16>, tensor<4xf16>, tensor<4xf16>, tensor<4xf16>) {
  %0 = lmopt.exp %x : tensor<4xf16>
  %1 = lmopt.log %x : tensor<4xf16>
  %2 = lmopt.sqrt %x : tensor<4xf16>
  %3 = lmopt.tanh %x : tensor<4xf16>
  %4 = lmopt.erf %x : tensor<4xf16>
  %5 = lmopt.reciprocal %x : tensor<4xf16>
  %6 = lmopt.sigmoid %x : tensor<4xf16>
  %7 = lmopt.cos %x : tensor<4xf16>
  %8 = lmopt.sin %x : tensor<4xf16>
  return %0, %1, %2, %3, %4, %5, %6, %7, %8 : tensor<4xf16>, tensor<4xf16>, tensor<4xf16>, tensor<4xf16>, tensor<4xf16>, tensor<4xf16>, tensor<4xf16>, tensor<4xf16>, tensor<4xf16>
}

// -----

// CHECK-LABEL: func.func @unary_not
// CHECK: %[[TRUE:.*]] = arith.constant true
// CHECK: ^bb0(%[[A:.*]]: i1, %{{.*}}: i1):
// CHECK: %[[N:.*]] = arith.xori %[[A]], %[[TRUE]] : i1
// CHECK: linalg.yield %[[N]]
func.func @unary_not(%x: tensor<4xi1>) -> tensor<4xi1> {
  %0 = lmopt.not %x : tensor<4xi1>
  return %0 : tensor<4xi1>
}

// -----

// CHECK-LABEL: func.func @unary_gelu
// CHECK: ^bb0(%[[A:.*]]: f32, %{{.*}}: f32):
// CHECK: %[[S:.*]] = arith.mulf %[[A]], %{{.*}} : f32
// CHECK: %[[E:.*]] = math.erf %[[S]] : f32
// CHECK: linalg.yield
// CHECK: ^bb0(%[[B:.*]]: f32, %{{.*}}: f32):
// CHECK: %[[SQ:.*]] = arith.mulf %[[B]], %[[B]] : f32
// CHECK: %[[CUBE:.*]] = arith.mulf %[[SQ]], %[[B]] : f32
// CHECK: math.tanh
// CHECK: linalg.yield
func.func @unary_gelu(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %0 = lmopt.gelu %x : tensor<4xf32>
  %1 = lmopt.gelu %x {approximate = #lmopt.gelu_approximation<tanh>} : tensor<4xf32>
  return %0, %1 : tensor<4xf32>, tensor<4xf32>
}

// -----

// ONNX Cast: truncation toward zero, nonzero to true, booleans as 0/1.
// CHECK-LABEL: func.func @cast
// CHECK: ^bb0(%[[A:.*]]: f32, %{{.*}}: i32):
// CHECK: arith.fptosi %[[A]] : f32 to i32
// CHECK: ^bb0(%[[B:.*]]: f32, %{{.*}}: i1):
// CHECK: arith.cmpf une, %[[B]], %{{.*}} : f32
// CHECK: ^bb0(%[[C:.*]]: i1, %{{.*}}: f32):
// CHECK: arith.uitofp %[[C]] : i1 to f32
// CHECK: ^bb0(%[[D:.*]]: i64, %{{.*}}: i32):
// CHECK: arith.trunci %[[D]] : i64 to i32
// CHECK: ^bb0(%[[E:.*]]: f32, %{{.*}}: f16):
// CHECK: arith.truncf %[[E]] : f32 to f16
func.func @cast(%f: tensor<4xf32>, %b: tensor<4xi1>, %i: tensor<4xi64>) -> (tensor<4xi32>, tensor<4xi1>, tensor<4xf32>, tensor<4xi32>, tensor<4xf16>) {
  %0 = lmopt.cast %f : tensor<4xf32> -> tensor<4xi32>
  %1 = lmopt.cast %f : tensor<4xf32> -> tensor<4xi1>
  %2 = lmopt.cast %b : tensor<4xi1> -> tensor<4xf32>
  %3 = lmopt.cast %i : tensor<4xi64> -> tensor<4xi32>
  %4 = lmopt.cast %f : tensor<4xf32> -> tensor<4xf16>
  return %0, %1, %2, %3, %4 : tensor<4xi32>, tensor<4xi1>, tensor<4xf32>, tensor<4xi32>, tensor<4xf16>
}

// -----

// A dim of static size 1 reads index 0; a missing leading dim is not read.
// CHECK-DAG: #[[ID:.*]] = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
// CHECK-DAG: #[[ROW:.*]] = affine_map<(d0, d1, d2) -> (0, d1, d2)>
// CHECK-DAG: #[[LAST:.*]] = affine_map<(d0, d1, d2) -> (d2)>
// CHECK-LABEL: func.func @binary_broadcast
// CHECK-SAME: %[[A:[^:]*]]: tensor<?x3x4xf32>, %[[B:[^:]*]]: tensor<1x3x4xf32>, %[[C:[^:]*]]: tensor<4xf32>
// CHECK: %[[C0:.*]] = arith.constant 0 : index
// CHECK: %[[D0:.*]] = tensor.dim %[[A]], %[[C0]]
// CHECK: %[[E:.*]] = tensor.empty(%[[D0]]) : tensor<?x3x4xf32>
// CHECK: %[[ADD:.*]] = linalg.generic {indexing_maps = [#[[ID]], #[[ROW]], #[[ID]]], iterator_types = ["parallel", "parallel", "parallel"]} ins(%[[A]], %[[B]] : {{.*}}) outs(%[[E]] : tensor<?x3x4xf32>)
// CHECK: arith.addf
// CHECK: linalg.generic {indexing_maps = [#[[ID]], #[[LAST]], #[[ID]]], {{.*}} ins(%[[ADD]], %[[C]] : {{.*}})
// CHECK: ^bb0(%[[L:.*]]: f32, %[[R:.*]]: f32, %{{.*}}: i1):
// CHECK: arith.cmpf olt, %[[L]], %[[R]] : f32
func.func @binary_broadcast(%a: tensor<?x3x4xf32>, %b: tensor<1x3x4xf32>, %c: tensor<4xf32>) -> tensor<?x3x4xi1> {
  %0 = lmopt.add %a, %b : (tensor<?x3x4xf32>, tensor<1x3x4xf32>) -> tensor<?x3x4xf32>
  %1 = lmopt.less %0, %c : (tensor<?x3x4xf32>, tensor<4xf32>) -> tensor<?x3x4xi1>
  return %1 : tensor<?x3x4xi1>
}

// -----

// Equal dynamic dims are assumed equal and checked at run time.
// CHECK-LABEL: func.func @binary_dynamic_dims
// CHECK-SAME: %[[A:[^:]*]]: tensor<?x8xi64>, %[[B:[^:]*]]: tensor<?x8xi64>
// CHECK: %[[DA:.*]] = tensor.dim %[[A]], %[[C0:.*]] :
// CHECK: %[[DB:.*]] = tensor.dim %[[B]], %[[C0]] :
// CHECK: %[[EQ:.*]] = arith.cmpi eq, %[[DA]], %[[DB]] : index
// CHECK: cf.assert %[[EQ]], "dynamic dims that meet in a broadcast must be equal (dim 0)"
// CHECK: tensor.empty
// CHECK: arith.divsi
// CHECK: arith.maxsi
// CHECK: arith.cmpi sgt
func.func @binary_dynamic_dims(%a: tensor<?x8xi64>, %b: tensor<?x8xi64>) -> (tensor<?x8xi64>, tensor<?x8xi64>, tensor<?x8xi1>) {
  %0 = lmopt.div %a, %b : (tensor<?x8xi64>, tensor<?x8xi64>) -> tensor<?x8xi64>
  %1 = lmopt.max %a, %b : (tensor<?x8xi64>, tensor<?x8xi64>) -> tensor<?x8xi64>
  %2 = lmopt.greater %a, %b : (tensor<?x8xi64>, tensor<?x8xi64>) -> tensor<?x8xi1>
  return %0, %1, %2 : tensor<?x8xi64>, tensor<?x8xi64>, tensor<?x8xi1>
}

// -----

// CHECK-LABEL: func.func @binary_float_table
// CHECK: arith.subf
// CHECK: arith.mulf
// CHECK: math.powf
// CHECK: arith.maximumf
// CHECK: arith.minimumf
// CHECK: arith.cmpf oeq
func.func @binary_float_table(%a: tensor<4xf32>, %b: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xi1>) {
  %0 = lmopt.sub %a, %b : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %1 = lmopt.mul %a, %b : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %2 = lmopt.pow %a, %b : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %3 = lmopt.max %a, %b : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %4 = lmopt.min %a, %b : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %5 = lmopt.equal %a, %b : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>
  return %0, %1, %2, %3, %4, %5 : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xi1>
}

// -----

// CHECK-LABEL: func.func @binary_logic
// CHECK: arith.andi
// CHECK: arith.ori
// CHECK: arith.cmpi eq
func.func @binary_logic(%a: tensor<4xi1>, %b: tensor<1xi1>) -> (tensor<4xi1>, tensor<4xi1>, tensor<4xi1>) {
  %0 = lmopt.and %a, %b : (tensor<4xi1>, tensor<1xi1>) -> tensor<4xi1>
  %1 = lmopt.or %a, %b : (tensor<4xi1>, tensor<1xi1>) -> tensor<4xi1>
  %2 = lmopt.equal %a, %b : (tensor<4xi1>, tensor<1xi1>) -> tensor<4xi1>
  return %0, %1, %2 : tensor<4xi1>, tensor<4xi1>, tensor<4xi1>
}

// -----

// CHECK-DAG: #[[ID:.*]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG: #[[COL:.*]] = affine_map<(d0, d1) -> (d0, 0)>
// CHECK-DAG: #[[LAST:.*]] = affine_map<(d0, d1) -> (d1)>
// CHECK-LABEL: func.func @where
// CHECK-SAME: %[[C:[^:]*]]: tensor<2x1xi1>, %[[X:[^:]*]]: tensor<2x3xf32>, %[[Y:[^:]*]]: tensor<3xf32>
// CHECK: linalg.generic {indexing_maps = [#[[COL]], #[[ID]], #[[LAST]], #[[ID]]], {{.*}} ins(%[[C]], %[[X]], %[[Y]] :
// CHECK: ^bb0(%[[P:.*]]: i1, %[[A:.*]]: f32, %[[B:.*]]: f32, %{{.*}}: f32):
// CHECK: %[[S:.*]] = arith.select %[[P]], %[[A]], %[[B]] : f32
// CHECK: linalg.yield %[[S]]
func.func @where(%c: tensor<2x1xi1>, %x: tensor<2x3xf32>, %y: tensor<3xf32>) -> tensor<2x3xf32> {
  %0 = lmopt.where %c, %x, %y : (tensor<2x1xi1>, tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

// CHECK-DAG: #[[ID:.*]] = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
// CHECK-DAG: #[[KEEP02:.*]] = affine_map<(d0, d1, d2) -> (d0, d2)>
// CHECK-LABEL: func.func @reduce_sum_keepdims
// CHECK-SAME: %[[X:.*]]: tensor<?x4x5xf32>
// CHECK: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK: %[[D0:.*]] = tensor.dim %[[X]], %{{.*}}
// CHECK: %[[E:.*]] = tensor.empty(%[[D0]]) : tensor<?x5xf32>
// CHECK: %[[F:.*]] = linalg.fill ins(%[[ZERO]] : f32) outs(%[[E]] : tensor<?x5xf32>)
// CHECK: %[[S:.*]] = linalg.generic {indexing_maps = [#[[ID]], #[[KEEP02]]], iterator_types = ["parallel", "reduction", "parallel"]} ins(%[[X]] : tensor<?x4x5xf32>) outs(%[[F]] : tensor<?x5xf32>)
// CHECK: ^bb0(%[[IN:.*]]: f32, %[[OUT:.*]]: f32):
// CHECK: %[[ADD:.*]] = arith.addf %[[IN]], %[[OUT]] : f32
// CHECK: linalg.yield %[[ADD]]
// CHECK: %[[R:.*]] = tensor.empty(%{{.*}}) : tensor<?x1x5xf32>
// CHECK: linalg.generic {{.*}} ins(%[[S]] : tensor<?x5xf32>) outs(%[[R]] : tensor<?x1x5xf32>)
func.func @reduce_sum_keepdims(%x: tensor<?x4x5xf32>) -> tensor<?x1x5xf32> {
  %0 = lmopt.reduce_sum %x {axes = array<i64: 1>} : tensor<?x4x5xf32> -> tensor<?x1x5xf32>
  return %0 : tensor<?x1x5xf32>
}

// -----

// A mean of f16 accumulates in f32 and divides by the dynamic count.
// CHECK-LABEL: func.func @reduce_mean_f16
// CHECK-SAME: %[[X:.*]]: tensor<3x?xf16>
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]
// CHECK: ^bb0(%[[IN:.*]]: f16, %[[OUT:.*]]: f32):
// CHECK: %[[W:.*]] = arith.extf %[[IN]] : f16 to f32
// CHECK: arith.addf %[[W]], %[[OUT]] : f32
// CHECK: %[[D1:.*]] = tensor.dim %[[X]], %{{.*}} : tensor<3x?xf16>
// CHECK: %[[N:.*]] = arith.muli %{{.*}}, %[[D1]] : index
// CHECK: %[[NI:.*]] = arith.index_cast %[[N]] : index to i64
// CHECK: %[[NF:.*]] = arith.sitofp %[[NI]] : i64 to f32
// CHECK: ^bb0(%[[S:.*]]: f32, %{{.*}}: f16):
// CHECK: %[[M:.*]] = arith.divf %[[S]], %[[NF]] : f32
// CHECK: arith.truncf %[[M]] : f32 to f16
func.func @reduce_mean_f16(%x: tensor<3x?xf16>) -> tensor<3xf16> {
  %0 = lmopt.reduce_mean %x {axes = array<i64: -1>, keepdims = false} : tensor<3x?xf16> -> tensor<3xf16>
  return %0 : tensor<3xf16>
}

// -----

// Empty axes reduce every dim.
// CHECK-LABEL: func.func @reduce_max_min_all
// CHECK-DAG: %[[INF:.*]] = arith.constant 0x7F800000 : f32
// CHECK-DAG: %[[IMIN:.*]] = arith.constant -9223372036854775808 : i64
// CHECK: linalg.fill ins(%[[IMIN]] : i64) outs(%{{.*}} : tensor<i64>)
// CHECK: linalg.generic {{.*}} iterator_types = ["reduction", "reduction"]
// CHECK: arith.maxsi
// CHECK: tensor.empty() : tensor<1x1xi64>
// CHECK: linalg.fill ins(%[[INF]] : f32) outs(%{{.*}} : tensor<f32>)
// CHECK: linalg.generic {{.*}} iterator_types = ["reduction", "reduction"]
// CHECK: arith.minimumf
func.func @reduce_max_min_all(%x: tensor<2x3xi64>, %y: tensor<2x3xf32>) -> (tensor<1x1xi64>, tensor<f32>) {
  %0 = lmopt.reduce_max %x : tensor<2x3xi64> -> tensor<1x1xi64>
  %1 = lmopt.reduce_min %y {keepdims = false} : tensor<2x3xf32> -> tensor<f32>
  return %0, %1 : tensor<1x1xi64>, tensor<f32>
}

// -----

// CHECK-DAG: #[[ID:.*]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG: #[[ROW:.*]] = affine_map<(d0, d1) -> (d1)>
// CHECK-LABEL: func.func @softmax_axis0
// CHECK-SAME: %[[X:.*]]: tensor<4x?xf32>
// CHECK: %[[NEGINF:.*]] = arith.constant 0xFF800000 : f32
// CHECK: %[[MAXINIT:.*]] = linalg.fill ins(%[[NEGINF]] : f32)
// CHECK: %[[MAX:.*]] = linalg.generic {indexing_maps = [#[[ID]], #[[ROW]]], iterator_types = ["reduction", "parallel"]} ins(%[[X]] : {{.*}}) outs(%[[MAXINIT]] :
// CHECK: arith.maximumf
// CHECK: %[[SUM:.*]] = linalg.generic {indexing_maps = [#[[ID]], #[[ROW]], #[[ROW]]], iterator_types = ["reduction", "parallel"]} ins(%[[X]], %[[MAX]] :
// CHECK: ^bb0(%[[A:.*]]: f32, %[[M:.*]]: f32, %[[ACC:.*]]: f32):
// CHECK: %[[SH:.*]] = arith.subf %[[A]], %[[M]] : f32
// CHECK: %[[EX:.*]] = math.exp %[[SH]] : f32
// CHECK: arith.addf %[[EX]], %[[ACC]] : f32
// CHECK: linalg.generic {indexing_maps = [#[[ID]], #[[ROW]], #[[ROW]], #[[ID]]], iterator_types = ["parallel", "parallel"]} ins(%[[X]], %[[MAX]], %[[SUM]] :
// CHECK: ^bb0(%[[B:.*]]: f32, %[[M2:.*]]: f32, %[[S2:.*]]: f32, %{{.*}}: f32):
// CHECK: %[[SH2:.*]] = arith.subf %[[B]], %[[M2]] : f32
// CHECK: %[[EX2:.*]] = math.exp %[[SH2]] : f32
// CHECK: %[[Q:.*]] = arith.divf %[[EX2]], %[[S2]] : f32
// CHECK: linalg.yield %[[Q]]
func.func @softmax_axis0(%x: tensor<4x?xf32>) -> tensor<4x?xf32> {
  %0 = lmopt.softmax %x {axis = 0 : i64} : tensor<4x?xf32>
  return %0 : tensor<4x?xf32>
}

// -----

// CHECK-LABEL: func.func @log_softmax
// CHECK: ^bb0(%[[B:.*]]: f32, %[[M:.*]]: f32, %[[S:.*]]: f32, %{{.*}}: f32):
// CHECK: %[[SH:.*]] = arith.subf %[[B]], %[[M]] : f32
// CHECK: %[[L:.*]] = math.log %[[S]] : f32
// CHECK: %[[R:.*]] = arith.subf %[[SH]], %[[L]] : f32
// CHECK: linalg.yield %[[R]]
func.func @log_softmax(%x: tensor<2x8xf32>) -> tensor<2x8xf32> {
  %0 = lmopt.log_softmax %x : tensor<2x8xf32>
  return %0 : tensor<2x8xf32>
}

// -----

// Layer norm over the last two dims: sum, the mean per row, centered
// squares, rstd = 1 / sqrt(var + eps) per row, then the normalized output
// reading scale and bias through right-aligned maps and multiplying by rstd
// (no division or square root per element).
// CHECK-DAG: #[[ID:.*]] = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
// CHECK-DAG: #[[ROWS:.*]] = affine_map<(d0, d1, d2) -> (d0)>
// CHECK-DAG: #[[PARAM:.*]] = affine_map<(d0, d1, d2) -> (d1, d2)>
// CHECK-DAG: #[[ROW:.*]] = affine_map<(d0) -> (d0)>
// CHECK-LABEL: func.func @layer_norm
// CHECK-SAME: %[[X:[^:]*]]: tensor<?x4x8xf32>, %[[S:[^:]*]]: tensor<4x8xf32>, %[[B:[^:]*]]: tensor<4x8xf32>
// CHECK: %[[N:.*]] = arith.constant 32 : index
// CHECK: %[[NI:.*]] = arith.index_cast %[[N]] : index to i64
// CHECK: %[[NF:.*]] = arith.sitofp %[[NI]] : i64 to f32
// CHECK: %[[SUM:.*]] = linalg.generic {indexing_maps = [#[[ID]], #[[ROWS]]], iterator_types = ["parallel", "reduction", "reduction"]} ins(%[[X]] :
// CHECK: %[[MEAN:.*]] = linalg.generic {indexing_maps = [#[[ROW]], #[[ROW]]], iterator_types = ["parallel"]} ins(%[[SUM]] :
// CHECK: arith.divf %{{.*}}, %[[NF]] : f32
// CHECK: %[[SQ:.*]] = linalg.generic {indexing_maps = [#[[ID]], #[[ROWS]], #[[ROWS]]], iterator_types = ["parallel", "reduction", "reduction"]} ins(%[[X]], %[[MEAN]] :
// CHECK: ^bb0(%[[A:.*]]: f32, %[[M:.*]]: f32, %[[ACC:.*]]: f32):
// CHECK: %[[C:.*]] = arith.subf %[[A]], %[[M]] : f32
// CHECK: %[[C2:.*]] = arith.mulf %[[C]], %[[C]] : f32
// CHECK: arith.addf %[[C2]], %[[ACC]] : f32
// CHECK: %[[RSTD:.*]] = linalg.generic {indexing_maps = [#[[ROW]], #[[ROW]]], iterator_types = ["parallel"]} ins(%[[SQ]] :
// CHECK: ^bb0(%[[V:.*]]: f32, %{{.*}}: f32):
// CHECK: %[[VAR:.*]] = arith.divf %[[V]], %[[NF]] : f32
// CHECK: %[[VE:.*]] = arith.addf %[[VAR]], %{{.*}} : f32
// CHECK: %[[SD:.*]] = math.sqrt %[[VE]] : f32
// CHECK: arith.divf %{{.*}}, %[[SD]] : f32
// CHECK: linalg.generic {indexing_maps = [#[[ID]], #[[ROWS]], #[[PARAM]], #[[PARAM]], #[[ROWS]], #[[ID]]], iterator_types = ["parallel", "parallel", "parallel"]} ins(%[[X]], %[[RSTD]], %[[S]], %[[B]], %[[MEAN]] :
// CHECK: ^bb0(%[[X1:.*]]: f32, %[[R:.*]]: f32, %[[G:.*]]: f32, %[[BE:.*]]: f32, %[[M1:.*]]: f32, %{{.*}}: f32):
// CHECK: %[[C1:.*]] = arith.subf %[[X1]], %[[M1]] : f32
// CHECK: %[[NORM:.*]] = arith.mulf %[[C1]], %[[R]] : f32
// CHECK-NOT: math.sqrt
// CHECK: %[[SC:.*]] = arith.mulf %[[NORM]], %[[G]] : f32
// CHECK: %[[OUT:.*]] = arith.addf %[[SC]], %[[BE]] : f32
// CHECK: linalg.yield %[[OUT]]
func.func @layer_norm(%x: tensor<?x4x8xf32>, %s: tensor<4x8xf32>, %b: tensor<4x8xf32>) -> tensor<?x4x8xf32> {
  %0 = lmopt.layer_norm %x, %s, %b {axis = 1 : i64} : (tensor<?x4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<?x4x8xf32>
  return %0 : tensor<?x4x8xf32>
}

// -----

// RMS norm has no mean: one reduction of squares.
// CHECK-LABEL: func.func @rms_norm_bf16
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]
// CHECK: ^bb0(%[[A:.*]]: bf16, %[[ACC:.*]]: f32):
// CHECK: %[[W:.*]] = arith.extf %[[A]] : bf16 to f32
// CHECK: %[[SQ:.*]] = arith.mulf %[[W]], %[[W]] : f32
// CHECK: arith.addf %[[SQ]], %[[ACC]] : f32
// CHECK-NOT: iterator_types = ["parallel", "reduction"]
// CHECK: math.sqrt
// CHECK: iterator_types = ["parallel", "parallel"]
// CHECK: arith.truncf %{{.*}} : f32 to bf16
func.func @rms_norm_bf16(%x: tensor<2x8xbf16>, %s: tensor<8xbf16>) -> tensor<2x8xbf16> {
  %0 = lmopt.rms_norm %x, %s : (tensor<2x8xbf16>, tensor<8xbf16>) -> tensor<2x8xbf16>
  return %0 : tensor<2x8xbf16>
}

// -----

// Both results: the broadcast sum, and the layer norm of the sum.
// CHECK-DAG: #[[POS:.*]] = affine_map<(d0, d1, d2) -> (0, d1, d2)>
// CHECK-LABEL: func.func @skip_layer_norm
// CHECK-SAME: %[[X:[^:]*]]: tensor<?x16x8xf32>, %[[P:[^:]*]]: tensor<1x16x8xf32>, %[[S:[^:]*]]: tensor<8xf32>
// CHECK: %[[SUM:.*]] = linalg.generic {indexing_maps = [#{{.*}}, #[[POS]], #{{.*}}], {{.*}} ins(%[[X]], %[[P]] :
// CHECK: arith.addf
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "reduction"]} ins(%[[SUM]] :
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "reduction"]} ins(%[[SUM]], %{{.*}} :
// CHECK: %[[OUT:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "parallel"]} ins(%[[SUM]], %{{.*}}, %[[S]], %{{.*}} :
// CHECK: return %[[OUT]], %[[SUM]]
func.func @skip_layer_norm(%x: tensor<?x16x8xf32>, %p: tensor<1x16x8xf32>, %s: tensor<8xf32>) -> (tensor<?x16x8xf32>, tensor<?x16x8xf32>) {
  %0, %1 = lmopt.skip_layer_norm %x, %p, %s : (tensor<?x16x8xf32>, tensor<1x16x8xf32>, tensor<8xf32>) -> (tensor<?x16x8xf32>, tensor<?x16x8xf32>)
  return %0, %1 : tensor<?x16x8xf32>, tensor<?x16x8xf32>
}

// -----

// A `?` facing a static 3 may be a run-time 1: not lowered.
// CHECK-LABEL: func.func @negative_dynamic_dim_may_broadcast
// CHECK: lmopt.add
// CHECK-NOT: linalg.generic
func.func @negative_dynamic_dim_may_broadcast(%a: tensor<?x4xf32>, %b: tensor<3x4xf32>) -> tensor<3x4xf32> {
  %0 = lmopt.add %a, %b : (tensor<?x4xf32>, tensor<3x4xf32>) -> tensor<3x4xf32>
  return %0 : tensor<3x4xf32>
}

// -----

// Integer pow has no upstream lowering to LLVM (math.ipowi): it goes
// through f64, exact while the result fits 53 bits, and is truncated back.
// CHECK-LABEL: func.func @pow_integer
// CHECK: linalg.generic
// CHECK: %[[B:.*]] = arith.sitofp %{{.*}} : i32 to f64
// CHECK: %[[E:.*]] = arith.sitofp %{{.*}} : i32 to f64
// CHECK: %[[P:.*]] = math.powf %[[B]], %[[E]] : f64
// CHECK: arith.fptosi %[[P]] : f64 to i32
// CHECK-NOT: lmopt.pow
func.func @pow_integer(%a: tensor<4xi32>, %b: tensor<4xi32>) -> tensor<4xi32> {
  %0 = lmopt.pow %a, %b : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
  return %0 : tensor<4xi32>
}

// -----

// arith works on signless integers only: a cast to ONNX uint8 stays
// instead of building invalid IR (casts from ui8 lower with the quantization
// patterns, convert-lmopt-to-linalg-quantization.mlir).
// CHECK-LABEL: func.func @negative_cast_unsigned
// CHECK: lmopt.cast
// CHECK-NOT: linalg.generic
func.func @negative_cast_unsigned(%a: tensor<4xf32>) -> tensor<4xui8> {
  %0 = lmopt.cast %a : tensor<4xf32> -> tensor<4xui8>
  return %0 : tensor<4xui8>
}

// -----

// Matrix products and attention become library calls; the pass leaves them
// and says nothing.
// CHECK-LABEL: func.func @negative_library_ops
// CHECK: lmopt.matmul
// CHECK: lmopt.attention
// CHECK-NOT: linalg.generic
func.func @negative_library_ops(%a: tensor<2x8x16xf32>, %b: tensor<16x16xf32>) -> tensor<2x8x16xf32> {
  %0 = lmopt.matmul %a, %b : (tensor<2x8x16xf32>, tensor<16x16xf32>) -> tensor<2x8x16xf32>
  %1 = lmopt.attention %0, %0, %0 {num_heads = 2 : i64} : (tensor<2x8x16xf32>, tensor<2x8x16xf32>, tensor<2x8x16xf32>) -> tensor<2x8x16xf32>
  return %1 : tensor<2x8x16xf32>
}

// -----

// A lowered op feeding one that stays: the kept op reads the generic's result.
// CHECK-LABEL: func.func @negative_mixed
// CHECK: %[[G:.*]] = linalg.generic
// CHECK: math.exp
// CHECK: lmopt.matmul %[[G]],
func.func @negative_mixed(%a: tensor<8x16xf32>, %b: tensor<16x16xf32>) -> tensor<8x16xf32> {
  %0 = lmopt.exp %a : tensor<8x16xf32>
  %1 = lmopt.matmul %0, %b : (tensor<8x16xf32>, tensor<16x16xf32>) -> tensor<8x16xf32>
  return %1 : tensor<8x16xf32>
}

// -----

// Signed integer arithmetic would read `i1` true as -1: only not, equal, and,
// or and where lower for booleans.
// CHECK-LABEL: func.func @negative_bool_arithmetic
// CHECK: lmopt.less
// CHECK: lmopt.relu
// CHECK: lmopt.reduce_sum
// CHECK-NOT: linalg.generic
func.func @negative_bool_arithmetic(%a: tensor<4xi1>, %b: tensor<4xi1>) -> (tensor<4xi1>, tensor<4xi1>, tensor<1xi1>) {
  %0 = lmopt.less %a, %b : (tensor<4xi1>, tensor<4xi1>) -> tensor<4xi1>
  %1 = lmopt.relu %a : tensor<4xi1>
  %2 = lmopt.reduce_sum %a : tensor<4xi1> -> tensor<1xi1>
  return %0, %1, %2 : tensor<4xi1>, tensor<4xi1>, tensor<1xi1>
}

// -----

// A dynamic scale facing a static normalized dim could be a run-time 1.
// CHECK-LABEL: func.func @negative_layer_norm_dynamic_scale
// CHECK: lmopt.layer_norm
// CHECK-NOT: linalg.generic
func.func @negative_layer_norm_dynamic_scale(%x: tensor<2x8xf32>, %s: tensor<?xf32>) -> tensor<2x8xf32> {
  %0 = lmopt.layer_norm %x, %s : (tensor<2x8xf32>, tensor<?xf32>) -> tensor<2x8xf32>
  return %0 : tensor<2x8xf32>
}

// -----

// Rotary: the halves swapped by two slice copies, then one generic reading
// the input, the swapped copy and the broadcast tables, negating the first
// half of the swapped copy by its column index.
// CHECK-LABEL: func.func @rotary
// CHECK-SAME: (%[[X:.*]]: tensor<?x6x16xf32>, %[[C:.*]]: tensor<6x16xf32>, %[[S:.*]]: tensor<6x16xf32>)
// CHECK: %[[HI:.*]] = tensor.extract_slice %[[X]][0, 0, 8] [%{{.*}}, 6, 8] [1, 1, 1]
// CHECK: %[[A:.*]] = tensor.insert_slice %[[HI]] into %{{.*}}[0, 0, 0] [%{{.*}}, 6, 8] [1, 1, 1]
// CHECK: %[[LO:.*]] = tensor.extract_slice %[[X]][0, 0, 0] [%{{.*}}, 6, 8] [1, 1, 1]
// CHECK: %[[SW:.*]] = tensor.insert_slice %[[LO]] into %[[A]][0, 0, 8]
// CHECK-NOT: tensor.cast
// CHECK: linalg.generic {{.*}} ins(%[[X]], %[[SW]], %[[C]], %[[S]] :
// CHECK: %[[D:.*]] = linalg.index 2 : index
// CHECK: %[[FIRST:.*]] = arith.cmpi ult, %[[D]], %{{.*}} : index
// CHECK: arith.negf
// CHECK: arith.select %[[FIRST]]
func.func @rotary(%x: tensor<?x6x16xf32>, %c: tensor<6x16xf32>, %s: tensor<6x16xf32>) -> tensor<?x6x16xf32> {
  %0 = lmopt.rotary %x, %c, %s : (tensor<?x6x16xf32>, tensor<6x16xf32>, tensor<6x16xf32>) -> tensor<?x6x16xf32>
  return %0 : tensor<?x6x16xf32>
}

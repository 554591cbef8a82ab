// RUN: lmopt-opt %s --convert-lmopt-to-linalg --split-input-file | FileCheck %s

// Per axis (dim 1): the storage cast becomes a reinterpretation that the
// pass folds, and each element reads its column's scale and zero point.
// CHECK-LABEL: func.func @dequantize_per_axis
// CHECK-SAME: %[[W:[^:]*]]: tensor<4x3xi8>
// CHECK-DAG: %[[ZP:.*]] = arith.constant dense<[1, -2, 3]> : tensor<3xi32>
// CHECK-DAG: %[[SC:.*]] = arith.constant dense<[5.000000e-01, 2.500000e-01, 1.250000e-01]> : tensor<3xf32>
// CHECK-NOT: quant.scast
// CHECK-NOT: unrealized_conversion_cast
// CHECK: linalg.generic
// CHECK-SAME: ins(%[[W]] : tensor<4x3xi8>)
// CHECK: %[[COL:.*]] = linalg.index 1 : index
// CHECK: %[[S:.*]] = tensor.extract %[[SC]][%[[COL]]]
// CHECK: %[[Z:.*]] = tensor.extract %[[ZP]][%[[COL]]]
// CHECK: %[[Q:.*]] = arith.extsi %{{.*}} : i8 to i32
// CHECK: %[[C:.*]] = arith.subi %[[Q]], %[[Z]] : i32
// CHECK: %[[F:.*]] = arith.sitofp %[[C]] : i32 to f32
// CHECK: %[[R:.*]] = arith.mulf %[[F]], %[[S]] : f32
// CHECK: linalg.yield %[[R]]
// CHECK-NOT: lmopt.dequantize
func.func @dequantize_per_axis(%w: tensor<4x3xi8>) -> tensor<4x3xf32> {
  %q = quant.scast %w : tensor<4x3xi8> to tensor<4x3x!quant.uniform<i8:f32:1, {0.5:1, 0.25:-2, 0.125:3}>>
  %0 = lmopt.dequantize %q : tensor<4x3x!quant.uniform<i8:f32:1, {0.5:1, 0.25:-2, 0.125:3}>> -> tensor<4x3xf32>
  return %0 : tensor<4x3xf32>
}

// -----

// Block-wise u4 (blocks of 32 along dim 1), one value per byte: the block
// index divides the column, the low four bits are read unsigned.
// CHECK-LABEL: func.func @dequantize_blockwise_u4
// CHECK-DAG: %[[FOUR:.*]] = arith.constant 4 : i8
// CHECK-DAG: %[[B:.*]] = arith.constant 32 : index
// CHECK-DAG: %[[ZP:.*]] = arith.constant dense<{{\[}}[8, 9], [3, 0]]> : tensor<2x2xi32>
// CHECK-DAG: %[[SC:.*]] = arith.constant dense<{{\[}}[5.000000e-01, 2.500000e-01], [1.250000e-01, 1.000000e+00]]> : tensor<2x2xf32>
// CHECK: %[[BITS:.*]] = builtin.unrealized_conversion_cast %{{.*}} to tensor<2x64xi8>
// CHECK: linalg.generic
// CHECK-SAME: ins(%[[BITS]] : tensor<2x64xi8>)
// CHECK: %[[ROW:.*]] = linalg.index 0 : index
// CHECK: %[[COL:.*]] = linalg.index 1 : index
// CHECK: %[[BLK:.*]] = arith.divui %[[COL]], %[[B]] : index
// CHECK: tensor.extract %[[SC]][%[[ROW]], %[[BLK]]]
// CHECK: tensor.extract %[[ZP]][%[[ROW]], %[[BLK]]]
// CHECK: %[[HI:.*]] = arith.shli %{{.*}}, %[[FOUR]] : i8
// CHECK: %[[LO:.*]] = arith.shrui %[[HI]], %[[FOUR]] : i8
// CHECK: arith.extui %[[LO]] : i8 to i32
// CHECK-NOT: lmopt.dequantize
func.func @dequantize_blockwise_u4(%q: tensor<2x64x!quant.uniform<u4:f32:{0:1, 1:32}, {{0.5:8, 0.25:9}, {0.125:3, 1.0:0}}>>) -> tensor<2x64xf32> {
  %0 = lmopt.dequantize %q : tensor<2x64x!quant.uniform<u4:f32:{0:1, 1:32}, {{0.5:8, 0.25:9}, {0.125:3, 1.0:0}}>> -> tensor<2x64xf32>
  return %0 : tensor<2x64xf32>
}

// -----

// The int32 bias of a QDQ model: storage already 32 bits, no extension.
// CHECK-LABEL: func.func @dequantize_i32
// CHECK: linalg.generic
// CHECK-NOT: arith.ext
// CHECK: arith.subi
// CHECK-NOT: lmopt.dequantize
func.func @dequantize_i32(%b: tensor<4xi32>) -> tensor<4xf32> {
  %q = quant.scast %b : tensor<4xi32> to tensor<4x!quant.uniform<i32:f32, 0.5>>
  %0 = lmopt.dequantize %q : tensor<4x!quant.uniform<i32:f32, 0.5>> -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// Per tensor u8: divide, round half to even, add the zero point, saturate
// to [0, 255], store the byte; the storage cast back to i8 folds.
// CHECK-LABEL: func.func @quantize_per_tensor
// CHECK-DAG: %[[LO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-DAG: %[[HI:.*]] = arith.constant 2.550000e+02 : f32
// CHECK-DAG: %[[ZP:.*]] = arith.constant 128 : i32
// CHECK-DAG: %[[S:.*]] = arith.constant 5.000000e-01 : f32
// CHECK: %[[G:.*]] = linalg.generic
// CHECK: %[[D:.*]] = arith.divf %{{.*}}, %[[S]] : f32
// CHECK: %[[R:.*]] = math.roundeven %[[D]] : f32
// CHECK: %[[Z:.*]] = arith.sitofp %[[ZP]] : i32 to f32
// CHECK: %[[A:.*]] = arith.addf %[[R]], %[[Z]] : f32
// CHECK: %[[M:.*]] = arith.maximumf %[[A]], %[[LO]] : f32
// CHECK: %[[N:.*]] = arith.minimumf %[[M]], %[[HI]] : f32
// CHECK: %[[I:.*]] = arith.fptosi %[[N]] : f32 to i64
// CHECK: %[[T:.*]] = arith.trunci %[[I]] : i64 to i8
// CHECK: linalg.yield %[[T]]
// CHECK-NOT: unrealized_conversion_cast
// CHECK: return %[[G]]
func.func @quantize_per_tensor(%x: tensor<8xf32>) -> tensor<8xi8> {
  %q = lmopt.quantize %x : tensor<8xf32> -> tensor<8x!quant.uniform<u8:f32, 0.5:128>>
  %s = quant.scast %q : tensor<8x!quant.uniform<u8:f32, 0.5:128>> to tensor<8xi8>
  return %s : tensor<8xi8>
}

// -----

// DynamicQuantizeLinear: min and max from 0 in one reduction, scale and
// zero point as scalars (a zero scale guarded), then the elementwise
// quantization; ui8 results are the i8 bytes reinterpreted.
// CHECK-LABEL: func.func @dynamic_quantize_linear
// CHECK: %[[RANGE:.*]]:2 = linalg.generic
// CHECK-SAME: iterator_types = ["reduction", "reduction"]
// CHECK: arith.minimumf
// CHECK: arith.maximumf
// CHECK: %[[MIN:.*]] = tensor.extract %[[RANGE]]#0[]
// CHECK: %[[MAX:.*]] = tensor.extract %[[RANGE]]#1[]
// CHECK: %[[SPAN:.*]] = arith.subf %[[MAX]], %[[MIN]]
// CHECK: %[[SCALE:.*]] = arith.divf %[[SPAN]]
// CHECK: %[[Q:.*]] = linalg.generic
// CHECK: math.roundeven
// CHECK: arith.fptoui %{{.*}} : f32 to i8
// CHECK: %[[ST:.*]] = tensor.from_elements %[[SCALE]] : tensor<f32>
// CHECK: %[[Y:.*]] = builtin.unrealized_conversion_cast %[[Q]] : tensor<2x4xi8> to tensor<2x4xui8>
// CHECK: return %[[Y]], %[[ST]]
func.func @dynamic_quantize_linear(%x: tensor<2x4xf32>) -> (tensor<2x4xui8>, tensor<f32>, tensor<ui8>) {
  %q, %s, %z = lmopt.dynamic_quantize_linear %x : tensor<2x4xf32> -> (tensor<2x4xui8>, tensor<f32>, tensor<ui8>)
  return %q, %s, %z : tensor<2x4xui8>, tensor<f32>, tensor<ui8>
}

// -----

// MatMulInteger with a batch dim on a, a matrix b, a scalar ui8 zero point
// for a and one i8 zero point per column of b: i32 accumulation over k.
// CHECK-DAG: #[[A:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>
// CHECK-DAG: #[[B:.*]] = affine_map<(d0, d1, d2, d3) -> (d3, d2)>
// CHECK-DAG: #[[SCALAR:.*]] = affine_map<(d0, d1, d2, d3) -> ()>
// CHECK-DAG: #[[COL:.*]] = affine_map<(d0, d1, d2, d3) -> (d2)>
// CHECK-LABEL: func.func @matmul_integer
// CHECK: %[[FILL:.*]] = linalg.fill
// CHECK: linalg.generic
// CHECK-SAME: indexing_maps = [#[[A]], #[[B]], #[[SCALAR]], #[[COL]], #{{[a-z0-9]+}}]
// CHECK-SAME: iterator_types = ["parallel", "parallel", "parallel", "reduction"]
// CHECK-SAME: outs(%[[FILL]] : tensor<2x3x5xi32>)
// CHECK: %[[AV:.*]] = arith.extui %{{.*}} : i8 to i32
// CHECK: %[[BV:.*]] = arith.extsi %{{.*}} : i8 to i32
// CHECK: %[[AZ:.*]] = arith.extui %{{.*}} : i8 to i32
// CHECK: %[[AC:.*]] = arith.subi %[[AV]], %[[AZ]]
// CHECK: %[[BZ:.*]] = arith.extsi %{{.*}} : i8 to i32
// CHECK: %[[BC:.*]] = arith.subi %[[BV]], %[[BZ]]
// CHECK: %[[P:.*]] = arith.muli %[[AC]], %[[BC]]
// CHECK: arith.addi %{{.*}}, %[[P]]
// CHECK-NOT: lmopt.matmul_integer
func.func @matmul_integer(%a: tensor<2x3x4xui8>, %b: tensor<4x5xi8>, %az: tensor<ui8>, %bz: tensor<5xi8>) -> tensor<2x3x5xi32> {
  %0 = lmopt.matmul_integer %a, %b a_zero_point %az b_zero_point %bz : (tensor<2x3x4xui8>, tensor<4x5xi8>, tensor<ui8>, tensor<5xi8>) -> tensor<2x3x5xi32>
  return %0 : tensor<2x3x5xi32>
}

// -----

// Gathered uint8 embedding rows widen unsigned.
// CHECK-LABEL: func.func @cast_unsigned
// CHECK: linalg.generic
// CHECK: arith.uitofp %{{.*}} : i8 to f32
// CHECK-NOT: lmopt.cast
func.func @cast_unsigned(%a: tensor<4xui8>) -> tensor<4xf32> {
  %0 = lmopt.cast %a : tensor<4xui8> -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// Dynamic dims (bounded dynamic shapes) take their sizes from the operand.
// CHECK-LABEL: func.func @dequantize_dynamic
// CHECK: %[[D:.*]] = tensor.dim %{{.*}}, %c0
// CHECK: tensor.empty(%[[D]]) : tensor<?x3xf32>
// CHECK: linalg.generic
// CHECK-NOT: lmopt.dequantize
func.func @dequantize_dynamic(%q: tensor<?x3x!quant.uniform<i8:f32, 0.5:1>>) -> tensor<?x3xf32> {
  %0 = lmopt.dequantize %q : tensor<?x3x!quant.uniform<i8:f32, 0.5:1>> -> tensor<?x3xf32>
  return %0 : tensor<?x3xf32>
}

// -----

// CHECK-LABEL: func.func @quantize_dynamic
// CHECK: %[[D:.*]] = tensor.dim %{{.*}}, %c0
// CHECK: tensor.empty(%[[D]]) : tensor<?xi8>
// CHECK: linalg.generic
// CHECK-NOT: lmopt.quantize
func.func @quantize_dynamic(%x: tensor<?xf32>) -> tensor<?x!quant.uniform<i8:f32, 0.5>> {
  %0 = lmopt.quantize %x : tensor<?xf32> -> tensor<?x!quant.uniform<i8:f32, 0.5>>
  return %0 : tensor<?x!quant.uniform<i8:f32, 0.5>>
}

// -----

// CHECK-LABEL: func.func @negative_dynamic_quantize_linear_dynamic
// CHECK: lmopt.dynamic_quantize_linear
// CHECK-NOT: linalg.generic
func.func @negative_dynamic_quantize_linear_dynamic(%x: tensor<?x4xf32>) -> (tensor<?x4xui8>, tensor<f32>, tensor<ui8>) {
  %q, %s, %z = lmopt.dynamic_quantize_linear %x : tensor<?x4xf32> -> (tensor<?x4xui8>, tensor<f32>, tensor<ui8>)
  return %q, %s, %z : tensor<?x4xui8>, tensor<f32>, tensor<ui8>
}

// -----

// b's batch dim broadcasts against a's: not expressed yet, left.
// CHECK-LABEL: func.func @negative_matmul_integer_broadcast_batch
// CHECK: lmopt.matmul_integer
// CHECK-NOT: linalg.generic
func.func @negative_matmul_integer_broadcast_batch(%a: tensor<2x3x4xi8>, %b: tensor<1x4x5xi8>) -> tensor<2x3x5xi32> {
  %0 = lmopt.matmul_integer %a, %b : (tensor<2x3x4xi8>, tensor<1x4x5xi8>) -> tensor<2x3x5xi32>
  return %0 : tensor<2x3x5xi32>
}

// -----

// i4 to u4 changes the bits' width: the plan builder stores such weights
// one per byte, the kernel never sees the cast.
// CHECK-LABEL: func.func @negative_storage_cast_i4
// CHECK: quant.scast
// CHECK-NOT: unrealized_conversion_cast
func.func @negative_storage_cast_i4(%w: tensor<4xi4>) -> tensor<4x!quant.uniform<u4:f32, 0.5:8>> {
  %0 = quant.scast %w : tensor<4xi4> to tensor<4x!quant.uniform<u4:f32, 0.5:8>>
  return %0 : tensor<4x!quant.uniform<u4:f32, 0.5:8>>
}

// -----

// A cast from uint8 to bool compares with zero in the elementwise family;
// this pattern leaves it.
// CHECK-LABEL: func.func @negative_cast_unsigned_to_bool
// CHECK: lmopt.cast
// CHECK-NOT: linalg.generic
func.func @negative_cast_unsigned_to_bool(%a: tensor<4xui8>) -> tensor<4xi1> {
  %0 = lmopt.cast %a : tensor<4xui8> -> tensor<4xi1>
  return %0 : tensor<4xi1>
}

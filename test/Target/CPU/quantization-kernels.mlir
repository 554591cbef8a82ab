// Dequantize per axis and block-wise, quantize's rounding and saturation,
// and dynamic quantization feeding an integer product, generated as kernels on the storage integers and run against
// the reference evaluator.
// RUN: %lmopt_python %S/Inputs/make-inputs.py %t.npz input0=8x64:int8:-128:127 input1=8x64:int8:-8:7 input2=8x64:int8:0:15 input3=8x64:float32
// RUN: lmopt-interpret %s --function=dequantize --inputs=%t.npz --output=%t.ref.npz
// RUN: lmopt-kernel-test %s --kernel=dequantize --inputs=%t.npz --compare=%t.ref.npz | FileCheck %s
// RUN: lmopt-interpret %s --function=quantize --inputs=%t.npz --output=%t.q.ref.npz
// RUN: lmopt-kernel-test %s --kernel=quantize --inputs=%t.npz --compare=%t.q.ref.npz | FileCheck %s --check-prefix=QUANT
// RUN: %lmopt_python %S/Inputs/make-inputs.py %t.d.npz input0=2x6x64:float32 input1=64x16:int8:-128:127 input2=16:int8:-8:7
// RUN: lmopt-interpret %s --function=dynamic_int8 --inputs=%t.d.npz --output=%t.d.ref.npz
// RUN: lmopt-kernel-test %s --kernel=dynamic_int8 --inputs=%t.d.npz --compare=%t.d.ref.npz | FileCheck %s --check-prefix=DYNAMIC

// Per axis on dim 0 (i8), blocks of 32 along dim 1 (i8 storage, signed),
// per tensor u8 read from the same bytes.
// CHECK: output0: shape [8, 64], {{.*}}: PASS
// CHECK-NEXT: output1: shape [8, 64], {{.*}}: PASS
// CHECK-NEXT: output2: shape [8, 64], {{.*}}: PASS
func.func @dequantize(%a: tensor<8x64xi8>, %b: tensor<8x64xi8>, %c: tensor<8x64xi8>, %x: tensor<8x64xf32>) -> (tensor<8x64xf32>, tensor<8x64xf32>, tensor<8x64xf32>) {
  %qa = quant.scast %a : tensor<8x64xi8> to tensor<8x64x!quant.uniform<i8:f32:0, {0.5:1, 0.25:-2, 0.125:3, 1.0:0, 0.0625:-128, 2.0:127, 0.75:5, 0.3:-7}>>
  %da = lmopt.dequantize %qa : tensor<8x64x!quant.uniform<i8:f32:0, {0.5:1, 0.25:-2, 0.125:3, 1.0:0, 0.0625:-128, 2.0:127, 0.75:5, 0.3:-7}>> -> tensor<8x64xf32>
  %qb = quant.scast %b : tensor<8x64xi8> to tensor<8x64x!quant.uniform<i8:f32:{0:1, 1:32}, {{0.5:1, 0.25:-2}, {0.125:3, 1.0:0}, {0.0625:-8, 2.0:7}, {0.75:5, 0.3:-7}, {0.5:0, 0.5:1}, {0.1:2, 0.2:-3}, {1.5:4, 0.01:-5}, {0.7:6, 0.9:-6}}>>
  %db = lmopt.dequantize %qb : tensor<8x64x!quant.uniform<i8:f32:{0:1, 1:32}, {{0.5:1, 0.25:-2}, {0.125:3, 1.0:0}, {0.0625:-8, 2.0:7}, {0.75:5, 0.3:-7}, {0.5:0, 0.5:1}, {0.1:2, 0.2:-3}, {1.5:4, 0.01:-5}, {0.7:6, 0.9:-6}}>> -> tensor<8x64xf32>
  %qc = quant.scast %c : tensor<8x64xi8> to tensor<8x64x!quant.uniform<u8:f32, 0.02:9>>
  %dc = lmopt.dequantize %qc : tensor<8x64x!quant.uniform<u8:f32, 0.02:9>> -> tensor<8x64xf32>
  return %da, %db, %dc : tensor<8x64xf32>, tensor<8x64xf32>, tensor<8x64xf32>
}

// Exact halves round to even (0.5 -> 0, 1.5 -> 2, -2.5 -> -2) and values
// past the range saturate (i8 to [-128, 127], u8 to [0, 255]); the random
// input at scale 0.01 saturates often.
// QUANT: output0: shape [8], {{.*}}: PASS
// QUANT-NEXT: output1: shape [8], {{.*}}: PASS
// QUANT-NEXT: output2: shape [8, 64], {{.*}}: PASS
// QUANT-NEXT: output3: shape [8, 64], {{.*}}: PASS
func.func @quantize(%a: tensor<8x64xi8>, %b: tensor<8x64xi8>, %c: tensor<8x64xi8>, %x: tensor<8x64xf32>) -> (tensor<8xi8>, tensor<8xi8>, tensor<8x64xi8>, tensor<8x64xi8>) {
  %ties = lmopt.constant dense<[0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 300.0, -300.0]> : tensor<8xf32>
  %qs = lmopt.quantize %ties : tensor<8xf32> -> tensor<8x!quant.uniform<i8:f32, 1.0>>
  %s = quant.scast %qs : tensor<8x!quant.uniform<i8:f32, 1.0>> to tensor<8xi8>
  %qu = lmopt.quantize %ties : tensor<8xf32> -> tensor<8x!quant.uniform<u8:f32, 1.0:3>>
  %u = quant.scast %qu : tensor<8x!quant.uniform<u8:f32, 1.0:3>> to tensor<8xi8>
  %qx = lmopt.quantize %x : tensor<8x64xf32> -> tensor<8x64x!quant.uniform<i8:f32, 0.01:-3>>
  %sx = quant.scast %qx : tensor<8x64x!quant.uniform<i8:f32, 0.01:-3>> to tensor<8x64xi8>
  %qb = lmopt.quantize %x : tensor<8x64xf32> -> tensor<8x64x!quant.uniform<u8:f32:{0:1, 1:32}, {{0.5:1, 0.25:2}, {0.125:3, 1.0:0}, {0.0625:8, 2.0:7}, {0.75:5, 0.3:7}, {0.5:0, 0.5:1}, {0.1:2, 0.2:3}, {1.5:4, 0.01:5}, {0.7:6, 0.9:6}}>>
  %sb = quant.scast %qb : tensor<8x64x!quant.uniform<u8:f32:{0:1, 1:32}, {{0.5:1, 0.25:2}, {0.125:3, 1.0:0}, {0.0625:8, 2.0:7}, {0.75:5, 0.3:7}, {0.5:0, 0.5:1}, {0.1:2, 0.2:3}, {1.5:4, 0.01:5}, {0.7:6, 0.9:6}}>> to tensor<8x64xi8>
  return %s, %u, %sx, %sb : tensor<8xi8>, tensor<8xi8>, tensor<8x64xi8>, tensor<8x64xi8>
}

// onnxruntime's dynamic int8 product: DynamicQuantizeLinear of the
// activations, MatMulInteger against i8 weights with a zero point per
// column, the ui8 results widened for the comparison.
// DYNAMIC: output0: shape [2, 6, 64], {{.*}}: PASS
// DYNAMIC-NEXT: output1: shape [], {{.*}}: PASS
// DYNAMIC-NEXT: output2: shape [], {{.*}}: PASS
// DYNAMIC-NEXT: output3: shape [2, 6, 16], {{.*}}: PASS
func.func @dynamic_int8(%x: tensor<2x6x64xf32>, %w: tensor<64x16xi8>, %wz: tensor<16xi8>) -> (tensor<2x6x64xi32>, tensor<f32>, tensor<i32>, tensor<2x6x16xi32>) {
  %q, %scale, %zp = lmopt.dynamic_quantize_linear %x : tensor<2x6x64xf32> -> (tensor<2x6x64xui8>, tensor<f32>, tensor<ui8>)
  %p = lmopt.matmul_integer %q, %w a_zero_point %zp b_zero_point %wz : (tensor<2x6x64xui8>, tensor<64x16xi8>, tensor<ui8>, tensor<16xi8>) -> tensor<2x6x16xi32>
  %qi = lmopt.cast %q : tensor<2x6x64xui8> -> tensor<2x6x64xi32>
  %zi = lmopt.cast %zp : tensor<ui8> -> tensor<i32>
  return %qi, %scale, %zi, %p : tensor<2x6x64xi32>, tensor<f32>, tensor<i32>, tensor<2x6x16xi32>
}

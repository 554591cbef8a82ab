// RUN: lmopt-compile %s --dump-plan --dump-kernels 2>/dev/null | FileCheck %s
// RUN: %lmopt_python %S/Inputs/make-inputs.py %t.npz x=2x80:float32
// RUN: lmopt-interpret %s --function=main --inputs=%t.npz --output=%t.ref.npz
// RUN: lmopt-compile %s -o %t.lmopt 2>/dev/null
// RUN: lmopt-run %t.lmopt --inputs %t.npz --compare %t.ref.npz | FileCheck %s --check-prefix=MATCH

// Quantized values in a plan are their storage integers: the i4 constant
// under its storage cast is a u8 weight of one value per byte (no f32
// copy), the quantized result of one kernel is a u8 arena tensor that a
// gather step moves and another kernel dequantizes. Kernel signatures take
// and return the signless bytes.

// CHECK-DAG: tensor %[[W:[0-9]+]] = weight @0 'w4_cast' u8 [2, 80]
// CHECK-DAG: tensor %[[Q:[0-9]+]] = arena @{{[0-9]+}} 'q' u8 [2, 80]
// CHECK-DAG: tensor %[[G:[0-9]+]] = arena @{{[0-9]+}} 'g' u8 [2, 80]
// CHECK-NOT: weight @{{[0-9]+}} '{{[^']*}}' f32
// CHECK: step 0: kernel 'w4_dq' (%[[W]], %{{[0-9]+}}) -> (%{{[0-9]+}}, %[[Q]])
// CHECK: step 1: gather 'g' (%[[Q]], %{{[0-9]+}}) -> (%[[G]])
// CHECK: step 2: kernel 'dq' (%[[G]])
// CHECK: func.func @k0(%[[BITS:.*]]: tensor<2x80xi8>, %{{.*}}: tensor<2x80xf32>) -> (tensor<2x80xf32>, tensor<2x80xi8>)
// CHECK: %[[W4:.*]] = builtin.unrealized_conversion_cast %[[BITS]] : tensor<2x80xi8> to tensor<2x80x!quant.uniform<u4
// CHECK: lmopt.dequantize %[[W4]]
// CHECK: %[[QV:.*]] = lmopt.quantize
// CHECK: %[[QB:.*]] = builtin.unrealized_conversion_cast %[[QV]] : {{.*}} to tensor<2x80xi8>
// CHECK: return %{{.*}}, %[[QB]]
// CHECK: func.func @k1(%{{.*}}: tensor<2x80xi8>) -> tensor<2x80xf32>

// MATCH: y: max abs error {{.*}}: PASS
// MATCH-NEXT: z: max abs error {{.*}}: PASS

func.func @main(%x: tensor<2x80xf32>) -> (tensor<2x80xf32>, tensor<2x80xf32>)
    attributes {lmopt.input_names = ["x"], lmopt.output_names = ["y", "z"]} {
  %bits4 = lmopt.constant dense<9> : tensor<2x80xi4> loc("w4")
  %q4 = quant.scast %bits4 : tensor<2x80xi4> to tensor<2x80x!quant.uniform<u4:f32:{0:1, 1:40}, {{0.5:8, 0.25:9}, {0.125:3, 1.0:0}}>> loc("w4_cast")
  %w4 = lmopt.dequantize %q4 : tensor<2x80x!quant.uniform<u4:f32:{0:1, 1:40}, {{0.5:8, 0.25:9}, {0.125:3, 1.0:0}}>> -> tensor<2x80xf32> loc("w4_dq")
  %y = lmopt.add %x, %w4 : (tensor<2x80xf32>, tensor<2x80xf32>) -> tensor<2x80xf32> loc("y")
  %q = lmopt.quantize %y : tensor<2x80xf32> -> tensor<2x80x!quant.uniform<u8:f32, 0.05:128>> loc("q")
  %idx = lmopt.constant dense<[1, 0]> : tensor<2xi64> loc("idx")
  %g = lmopt.gather %q, %idx : (tensor<2x80x!quant.uniform<u8:f32, 0.05:128>>, tensor<2xi64>) -> tensor<2x80x!quant.uniform<u8:f32, 0.05:128>> loc("g")
  %z = lmopt.dequantize %g : tensor<2x80x!quant.uniform<u8:f32, 0.05:128>> -> tensor<2x80xf32> loc("dq")
  return %y, %z : tensor<2x80xf32>, tensor<2x80xf32>
}

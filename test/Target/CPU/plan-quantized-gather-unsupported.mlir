// RUN: rm -f %t.lmopt
// RUN: not lmopt-compile %s -o %t.lmopt 2>&1 | FileCheck %s
// RUN: not test -e %t.lmopt

// A row-quantized table the gather step cannot run (u8 with zero points)
// is a compile error naming the node; no bundle is written.

// CHECK: error: no CPU lowering for a gather from quantized table '!quant.uniform<u8:f32:0, {5.000000e-01:128,2.500000e-01:3}>' (node 'embed'): the gather step dequantizes signed i8 rows with zero points 0

func.func @main(%ids: tensor<2xi64>) -> tensor<2x3xf32>
    attributes {lmopt.input_names = ["ids"], lmopt.output_names = ["out"]} {
  %bits = lmopt.constant dense<[[1, 2, 3], [4, 5, 6]]> : tensor<2x3xi8>
  %q = quant.scast %bits : tensor<2x3xi8> to tensor<2x3x!quant.uniform<u8:f32:0, {0.5:128, 0.25:3}>>
  %e = lmopt.gather %q, %ids : (tensor<2x3x!quant.uniform<u8:f32:0, {0.5:128, 0.25:3}>>, tensor<2xi64>) -> tensor<2x3xf32> loc("embed")
  return %e : tensor<2x3xf32>
}

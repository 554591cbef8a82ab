// Export diagnostics: each names what cannot be written and where, exits 1,
// and leaves no output file (or the previous one untouched).

// RUN: rm -rf %t && mkdir -p %t

// Every op without an ONNX form is reported, by op and node name.
// RUN: not lmopt-translate --export-onnx %s --onnx-function-name=unsupported -o %t/unsupported.onnx 2>&1 | FileCheck %s --check-prefix=NO_FORM
// RUN: not ls %t/unsupported.onnx
// NO_FORM: error: {{.*}}cannot export op 'func.call' in node 'first_call' to ONNX: it has no ONNX form
// NO_FORM: error: {{.*}}cannot export op 'func.call' in node 'second_call' to ONNX: it has no ONNX form
func.func private @helper(tensor<2xf32>) -> tensor<2xf32>
func.func @unsupported(%x: tensor<2xf32>) -> tensor<2xf32> {
  %0 = func.call @helper(%x) : (tensor<2xf32>) -> tensor<2xf32> loc("first_call")
  %1 = lmopt.add %0, %x : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32> loc("sum")
  %2 = func.call @helper(%1) : (tensor<2xf32>) -> tensor<2xf32> loc("second_call")
  return %2 : tensor<2xf32>
}

// A failed export leaves an existing output as it was (temp file + rename).
// RUN: echo previous > %t/keep.onnx
// RUN: not lmopt-translate --export-onnx %s --onnx-function-name=unsupported -o %t/keep.onnx 2>/dev/null
// RUN: FileCheck %s --check-prefix=KEEP < %t/keep.onnx
// KEEP: previous

// RUN: not lmopt-translate --export-onnx %s --onnx-function-name=nowhere -o %t/nowhere.onnx 2>&1 | FileCheck %s --check-prefix=NO_FUNCTION
// NO_FUNCTION: error: module has no function 'nowhere' to export

// RUN: not lmopt-translate --export-onnx %s --onnx-function-name=ok -o %t/missing/folder/ok.onnx 2>&1 | FileCheck %s --check-prefix=UNWRITABLE
// UNWRITABLE: error: cannot write '{{.*}}missing/folder/ok.onnx': {{.*}}
// RUN: lmopt-translate --export-onnx %s --onnx-function-name=ok -o %t/ok.onnx
func.func @ok(%x: tensor<2xf32>) -> tensor<2xf32> {
  %0 = lmopt.relu %x : tensor<2xf32>
  return %0 : tensor<2xf32>
}

// RUN: not lmopt-translate --export-onnx %s --onnx-function-name=ok --onnx-opset=24 -o %t/opset.onnx 2>&1 | FileCheck %s --check-prefix=OPSET
// OPSET: error: cannot write opset 24: the exporter writes opsets 17 to 21

// External data stays in the output's folder.
// RUN: not lmopt-translate --export-onnx %s --onnx-function-name=ok --external-data=../escape.data -o %t/escape.onnx 2>&1 | FileCheck %s --check-prefix=ESCAPE
// RUN: not ls %t/escape.onnx %t/../escape.data
// ESCAPE: error: external data file '../escape.data' must be a plain file name in the output's folder (no folder, no '..')
// RUN: not lmopt-translate --export-onnx %s --onnx-function-name=ok --external-data=/tmp/abs.data -o %t/abs.onnx 2>&1 | FileCheck %s --check-prefix=ABSOLUTE
// ABSOLUTE: error: external data file '/tmp/abs.data' must be a plain file name
// RUN: not lmopt-translate --export-onnx %s --onnx-function-name=ok --external-data -o - 2>&1 | FileCheck %s --check-prefix=STDOUT
// STDOUT: error: external data needs an output file; the model cannot go to standard output

// A computed integer tensor cannot change signedness in ONNX.
// RUN: not lmopt-translate --export-onnx %s --onnx-function-name=computed_cast -o %t/computed_cast.onnx 2>&1 | FileCheck %s --check-prefix=COMPUTED_CAST
// RUN: not ls %t/computed_cast.onnx
// COMPUTED_CAST: error: cannot export a storage cast from 'i8' to '!quant.uniform<u8:f32, 1.000000e-01:3>' of a computed value: ONNX has no bit cast between them
func.func @computed_cast(%x: tensor<4xi8>) -> tensor<4xf32> {
  %q = quant.scast %x : tensor<4xi8> to tensor<4x!quant.uniform<u8:f32, 0.1:3>>
  %0 = lmopt.dequantize %q : tensor<4x!quant.uniform<u8:f32, 0.1:3>> -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// ONNX blocks along one axis only.
// RUN: not lmopt-translate --export-onnx %s --onnx-function-name=two_block_axes -o %t/two_block_axes.onnx 2>&1 | FileCheck %s --check-prefix=BLOCKS
// BLOCKS: error: quantized type {{.*}} has blocks along dims 0 and 1; ONNX blocks along one axis only
func.func @two_block_axes() -> tensor<4x4xf32> {
  %w = lmopt.constant dense<1> : tensor<4x4xi8>
  %q = quant.scast %w : tensor<4x4xi8> to tensor<4x4x!quant.uniform<i8:f32:{0:2, 1:2}, {{0.1:0, 0.2:0}, {0.3:0, 0.4:0}}>>
  %0 = lmopt.dequantize %q : tensor<4x4x!quant.uniform<i8:f32:{0:2, 1:2}, {{0.1:0, 0.2:0}, {0.3:0, 0.4:0}}>> -> tensor<4x4xf32>
  return %0 : tensor<4x4xf32>
}

// RUN: not lmopt-translate --export-onnx %S/does-not-exist.mlir -o %t/none.onnx 2>&1 | FileCheck %s --check-prefix=NO_INPUT
// NO_INPUT: error: {{.*}}does-not-exist.mlir

// Attention splits heads with a static head dim.
// RUN: not lmopt-translate --export-onnx %s --onnx-function-name=dynamic_heads -o %t/dynamic_heads.onnx 2>&1 | FileCheck %s --check-prefix=HEADS
// HEADS: error: {{.*}}cannot export attention whose query has a dynamic or indivisible last dim ('tensor<2x4x?xf32>', 2 heads)
func.func @dynamic_heads(%q: tensor<2x4x?xf32>, %k: tensor<2x4x?xf32>, %v: tensor<2x4x?xf32>) -> tensor<2x4x?xf32> {
  %0 = lmopt.attention %q, %k, %v {num_heads = 2 : i64} : (tensor<2x4x?xf32>, tensor<2x4x?xf32>, tensor<2x4x?xf32>) -> tensor<2x4x?xf32>
  return %0 : tensor<2x4x?xf32>
}

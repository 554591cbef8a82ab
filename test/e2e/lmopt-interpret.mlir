// lmopt-interpret itself: the pass pipeline really runs before evaluation,
// and failures of the tool and the reference evaluator are each a diagnostic
// naming the op or the input, and a nonzero exit.

// RUN: lmopt-interpret %fixtures/bert.onnx --inputs %fixtures/bert.inputs.npz --compare %fixtures/bert.ref.npz --pass-pipeline='builtin.module(func.func(lmopt-fuse-attention))' --mlir-print-ir-after-all 2>&1 | FileCheck %s --check-prefix=RAN
// RAN: IR Dump After FuseAttentionPass
// RAN: lmopt.attention
// RAN: last_hidden_state: shape 2x12x64, {{.*}}: PASS

// Graph names and dense_resource weights survive printing: import, optimize
// with lmopt-opt, and evaluate the printed IR.
// RUN: lmopt-translate --import-onnx %fixtures/gpt2_past.onnx -o %t.imported.mlir
// RUN: lmopt-opt --pass-pipeline='builtin.module(lmopt-optimize-pipeline)' %t.imported.mlir -o %t.optimized.mlir
// RUN: lmopt-interpret %t.optimized.mlir --inputs %fixtures/gpt2_past.inputs.npz --compare %fixtures/gpt2_past.ref.npz | FileCheck %s --check-prefix=PRINTED
// PRINTED: last_hidden_state: shape 2x8x64, {{.*}}: PASS
// PRINTED-NEXT: present_key_0: shape 2x4x14x16, {{.*}}: PASS
// PRINTED-NEXT: present_value_0: shape 2x4x14x16, {{.*}}: PASS
// PRINTED-NEXT: present_key_1: shape 2x4x14x16, {{.*}}: PASS
// PRINTED-NEXT: present_value_1: shape 2x4x14x16, {{.*}}: PASS

// RUN: not lmopt-interpret %fixtures/bert.onnx --inputs %fixtures/bert.inputs.npz --pass-pipeline='func.func(cse)' 2>&1 | FileCheck %s --check-prefix=ANCHOR
// ANCHOR: lmopt-interpret: error: --pass-pipeline must be anchored on 'builtin.module', not 'func.func'

// RUN: not lmopt-interpret %s --function=unsupported 2>&1 | FileCheck %s --check-prefix=NOTSUPPORTED
// NOTSUPPORTED: error: reference evaluator does not support 'arith.addf'
func.func @unsupported() -> tensor<2xf32> {
  %a = lmopt.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %b = arith.addf %a, %a : tensor<2xf32>
  return %b : tensor<2xf32>
}

// RUN: not lmopt-interpret %s --function=gather_out_of_range 2>&1 | FileCheck %s --check-prefix=GATHER
// GATHER: error: index 3 is out of range for dim 0 of size 3
func.func @gather_out_of_range() -> tensor<1xf32> {
  %data = lmopt.constant dense<[1.0, 2.0, 3.0]> : tensor<3xf32>
  %indices = lmopt.constant dense<[3]> : tensor<1xi64>
  %out = lmopt.gather %data, %indices : (tensor<3xf32>, tensor<1xi64>) -> tensor<1xf32>
  return %out : tensor<1xf32>
}

// A dense_resource constant whose blob the file does not define.
// RUN: not lmopt-interpret %s --function=missing_blob 2>&1 | FileCheck %s --check-prefix=BLOB
// BLOB: error: constant's dense_resource blob 'missing' has no data
func.func @missing_blob() -> tensor<2xf32> {
  %a = lmopt.constant dense_resource<missing> : tensor<2xf32>
  return %a : tensor<2xf32>
}

// A result whose computed shape contradicts its declared type: the
// reshape's shape operand is only known at run time.
// RUN: not lmopt-interpret %s --function=declared_shape 2>&1 | FileCheck %s --check-prefix=SHAPE
// SHAPE: error: result #0 has shape 3x2, which does not match its declared type 'tensor<2x3xf32>'
func.func @declared_shape() -> tensor<2x3xf32> {
  %data = lmopt.constant dense<[1.0, 2.0, 3.0, 4.0, 5.0, 6.0]> : tensor<6xf32>
  %shape = lmopt.constant dense<[3, 2]> : tensor<2xi64>
  %dynamic = lmopt.reshape %data, %shape : (tensor<6xf32>, tensor<2xi64>) -> tensor<?x?xf32>
  %out = lmopt.identity %dynamic : tensor<?x?xf32>
  %cast = lmopt.reshape %out, %shape : (tensor<?x?xf32>, tensor<2xi64>) -> tensor<2x3xf32>
  return %cast : tensor<2x3xf32>
}

// Split sizes are checked against the run-time dim.
// RUN: not lmopt-interpret %s --function=split_mismatch 2>&1 | FileCheck %s --check-prefix=SPLIT
// SPLIT: error: split sizes sum to 4, but dim 0 has size 5
func.func @split_mismatch() -> tensor<2xf32> {
  %data = lmopt.constant dense<[1.0, 2.0, 3.0, 4.0, 5.0]> : tensor<5xf32>
  %shape = lmopt.constant dense<[5]> : tensor<1xi64>
  %dynamic = lmopt.reshape %data, %shape : (tensor<5xf32>, tensor<1xi64>) -> tensor<?xf32>
  %a, %b = lmopt.split %dynamic {axis = 0 : i64, split_sizes = array<i64: 2, 2>} : (tensor<?xf32>) -> (tensor<2xf32>, tensor<2xf32>)
  return %a : tensor<2xf32>
}

// RUN: not lmopt-interpret %s --function=training_dropout 2>&1 | FileCheck %s --check-prefix=DROPOUT
// DROPOUT: error: reference evaluator cannot run training-mode dropout with ratio 1.000000e-01 (it is random)
func.func @training_dropout() -> tensor<2xf32> {
  %a = lmopt.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %out, %mask = lmopt.dropout %a {ratio = 0.1 : f32, training = true} : (tensor<2xf32>) -> (tensor<2xf32>, tensor<2xi1>)
  return %out : tensor<2xf32>
}

// --output writes every output by name with its NumPy dtype; on the
// integer model its values equal ONNX Runtime's exactly.
// RUN: lmopt-interpret %S/ops/Inputs/integer_ops.onnx --inputs %S/ops/Inputs/integer_ops.inputs.npz --output %t.npz
// RUN: %lmopt_python -c "import numpy as np, sys; a = np.load(sys.argv[1]); r = np.load(sys.argv[2]); assert list(a) == list(r); assert all(a[k].dtype == r[k].dtype and a[k].shape == r[k].shape and (a[k] == r[k]).all() for k in r); print('outputs written:', len(a))" %t.npz %S/ops/Inputs/integer_ops.ref.npz | FileCheck %s --check-prefix=OUTPUT
// OUTPUT: outputs written: 13

// Shapes read from values are bounded instead of allocated.
// RUN: not lmopt-interpret %s --function=huge_shape 2>&1 | FileCheck %s --check-prefix=HUGE
// HUGE: error: shape 100000x100000x100000 has more than 4294967296 elements
func.func @huge_shape() -> tensor<?x?x?xf32> {
  %shape = lmopt.constant dense<[100000, 100000, 100000]> : tensor<3xi64>
  %out = lmopt.constant_of_shape %shape, 1.0 : f32 : tensor<3xi64> -> tensor<?x?x?xf32>
  return %out : tensor<?x?x?xf32>
}

// RUN: not lmopt-interpret %s --function=missing 2>&1 | FileCheck %s --check-prefix=MISSING
// MISSING: lmopt-interpret: error: no function 'missing'

// Inputs are bound by graph input name; the DistilBERT inputs lack BERT's
// token_type_ids.
// RUN: not lmopt-interpret %fixtures/bert.onnx --inputs %fixtures/distilbert.inputs.npz 2>&1 | FileCheck %s --check-prefix=NOINPUT
// NOINPUT: lmopt-interpret: error: no value for input 'token_type_ids'

// RUN: not lmopt-interpret %fixtures/bert.onnx --inputs %s 2>&1 | FileCheck %s --check-prefix=BADNPZ
// BADNPZ: lmopt-interpret: error: invalid format: '{{.*}}lmopt-interpret.mlir' is not a .npz (zip) archive

// A comparison can fail: with no tolerance at all, the last bits of float
// rounding differ from ONNX Runtime's.
// RUN: not lmopt-interpret %fixtures/bert.onnx --inputs %fixtures/bert.inputs.npz --compare %fixtures/bert.ref.npz --rtol 0 --atol 0 | FileCheck %s --check-prefix=EXACT
// EXACT: last_hidden_state: shape 2x12x64, max abs error {{.*}}: FAIL

// Reference outputs are matched by name, and shapes must agree.
// RUN: not lmopt-interpret %fixtures/bert.onnx --inputs %fixtures/bert.inputs.npz --compare %fixtures/minilm.ref.npz | FileCheck %s --check-prefix=OTHER
// OTHER: last_hidden_state: shape 2x12x64, expected 2x16x128: FAIL

// RUN: not lmopt-interpret %fixtures/bert.onnx --inputs %fixtures/bert.inputs.npz --compare %fixtures/distilbert.ref.npz | FileCheck %s --check-prefix=NOREF
// NOREF: pooler_output: no reference value: FAIL

// RUN: not lmopt-interpret %fixtures/bert.onnx --inputs %fixtures/bert.inputs.npz --pass-pipeline='builtin.module(no-such-pass)' 2>&1 | FileCheck %s --check-prefix=PIPELINE
// PIPELINE: lmopt-interpret: error: bad --pass-pipeline 'builtin.module(no-such-pass)'

// layer_norm, skip_layer_norm (both results), rms_norm and softmax compiled
// with compileKernels and run against the reference evaluator (the norms
// also through their partitioned entry, docs/cpu-backend.md "Row loops and
// threads").
// RUN: %lmopt_python %S/Inputs/make-inputs.py %t.npz input0=6x96:float32 input1=6x96:float32 input2=96:float32 input3=96:float32
// RUN: lmopt-interpret %s --function=layer_norm --inputs=%t.npz --output=%t.ln.npz
// RUN: lmopt-kernel-test %s --kernel=layer_norm --inputs=%t.npz --compare=%t.ln.npz | FileCheck %s --check-prefix=LN
// RUN: lmopt-interpret %s --function=skip_layer_norm --inputs=%t.npz --output=%t.sln.npz
// RUN: lmopt-kernel-test %s --kernel=skip_layer_norm --inputs=%t.npz --compare=%t.sln.npz | FileCheck %s --check-prefix=SLN
// RUN: lmopt-interpret %s --function=rms_norm --inputs=%t.npz --output=%t.rms.npz
// RUN: lmopt-kernel-test %s --kernel=rms_norm --inputs=%t.npz --compare=%t.rms.npz | FileCheck %s --check-prefix=RMS
// The same kernels through their partitioned entry, as 3 shares of rows:
// RUN: lmopt-kernel-test %s --kernel=layer_norm --parts=3 --inputs=%t.npz --compare=%t.ln.npz | FileCheck %s --check-prefix=LN
// RUN: lmopt-kernel-test %s --kernel=skip_layer_norm --parts=3 --inputs=%t.npz --compare=%t.sln.npz | FileCheck %s --check-prefix=SLN
// RUN: lmopt-kernel-test %s --kernel=rms_norm --parts=3 --inputs=%t.npz --compare=%t.rms.npz | FileCheck %s --check-prefix=RMS
// RUN: lmopt-interpret %s --function=softmax --inputs=%t.npz --output=%t.sm.npz
// RUN: lmopt-kernel-test %s --kernel=softmax --inputs=%t.npz --compare=%t.sm.npz | FileCheck %s --check-prefix=SM

// LN: output0: shape [6, 96], {{.*}}: PASS
func.func @layer_norm(%x: tensor<6x96xf32>, %unused: tensor<6x96xf32>, %s: tensor<96xf32>, %b: tensor<96xf32>) -> tensor<6x96xf32> {
  %0 = lmopt.layer_norm %x, %s, %b {epsilon = 1.0e-5 : f32} : (tensor<6x96xf32>, tensor<96xf32>, tensor<96xf32>) -> tensor<6x96xf32>
  return %0 : tensor<6x96xf32>
}

// SLN: output0: shape [6, 96], {{.*}}: PASS
// SLN-NEXT: output1: shape [6, 96], {{.*}}: PASS
func.func @skip_layer_norm(%x: tensor<6x96xf32>, %skip: tensor<6x96xf32>, %s: tensor<96xf32>, %b: tensor<96xf32>) -> (tensor<6x96xf32>, tensor<6x96xf32>) {
  %0, %1 = lmopt.skip_layer_norm %x, %skip, %s, %b : (tensor<6x96xf32>, tensor<6x96xf32>, tensor<96xf32>, tensor<96xf32>) -> (tensor<6x96xf32>, tensor<6x96xf32>)
  return %0, %1 : tensor<6x96xf32>, tensor<6x96xf32>
}

// RMS: output0: shape [6, 96], {{.*}}: PASS
func.func @rms_norm(%x: tensor<6x96xf32>, %unused: tensor<6x96xf32>, %s: tensor<96xf32>, %unused2: tensor<96xf32>) -> tensor<6x96xf32> {
  %0 = lmopt.rms_norm %x, %s : (tensor<6x96xf32>, tensor<96xf32>) -> tensor<6x96xf32>
  return %0 : tensor<6x96xf32>
}

// SM: output0: shape [6, 96], {{.*}}: PASS
// SM-NEXT: output1: shape [6, 96], {{.*}}: PASS
func.func @softmax(%x: tensor<6x96xf32>, %y: tensor<6x96xf32>, %unused: tensor<96xf32>, %unused2: tensor<96xf32>) -> (tensor<6x96xf32>, tensor<6x96xf32>) {
  %0 = lmopt.softmax %x : tensor<6x96xf32>
  %1 = lmopt.softmax %y {axis = 0 : i64} : tensor<6x96xf32>
  return %0, %1 : tensor<6x96xf32>, tensor<6x96xf32>
}

// gelu (erf and tanh forms), tanh, exp, log and broadcasting add compiled
// with compileKernels and run against the reference evaluator.
// RUN: %lmopt_python %S/Inputs/make-inputs.py %t.npz input0=5x80:float32 input1=80:float32 input2=5x1:float32
// RUN: lmopt-interpret %s --function=gelu --inputs=%t.npz --output=%t.gelu.npz
// RUN: lmopt-kernel-test %s --kernel=gelu --inputs=%t.npz --compare=%t.gelu.npz | FileCheck %s --check-prefix=GELU
// RUN: lmopt-interpret %s --function=transcendental --inputs=%t.npz --output=%t.tr.npz
// RUN: lmopt-kernel-test %s --kernel=transcendental --inputs=%t.npz --compare=%t.tr.npz | FileCheck %s --check-prefix=TR
// RUN: lmopt-interpret %s --function=broadcast_add --inputs=%t.npz --output=%t.add.npz
// RUN: lmopt-kernel-test %s --kernel=broadcast_add --inputs=%t.npz --compare=%t.add.npz | FileCheck %s --check-prefix=ADD
// RUN: lmopt-interpret %s --function=rotary --inputs=%t.npz --output=%t.rotary.npz
// RUN: lmopt-kernel-test %s --kernel=rotary --inputs=%t.npz --compare=%t.rotary.npz | FileCheck %s --check-prefix=ROTARY

// GELU: output0: shape [5, 80], {{.*}}: PASS
// GELU-NEXT: output1: shape [5, 80], {{.*}}: PASS
func.func @gelu(%x: tensor<5x80xf32>, %unused: tensor<80xf32>, %unused2: tensor<5x1xf32>) -> (tensor<5x80xf32>, tensor<5x80xf32>) {
  %0 = lmopt.gelu %x : tensor<5x80xf32>
  %1 = lmopt.gelu %x {approximate = #lmopt.gelu_approximation<tanh>} : tensor<5x80xf32>
  return %0, %1 : tensor<5x80xf32>, tensor<5x80xf32>
}

// TR: output0: shape [5, 80], {{.*}}: PASS
// TR-NEXT: output1: shape [5, 80], {{.*}}: PASS
// TR-NEXT: output2: shape [5, 80], {{.*}}: PASS
// TR-NEXT: output3: shape [5, 80], {{.*}}: PASS
func.func @transcendental(%x: tensor<5x80xf32>, %unused: tensor<80xf32>, %unused2: tensor<5x1xf32>) -> (tensor<5x80xf32>, tensor<5x80xf32>, tensor<5x80xf32>, tensor<5x80xf32>) {
  %0 = lmopt.tanh %x : tensor<5x80xf32>
  %1 = lmopt.exp %x : tensor<5x80xf32>
  %a = lmopt.abs %x : tensor<5x80xf32>
  %2 = lmopt.log %a : tensor<5x80xf32>
  %3 = lmopt.erf %x : tensor<5x80xf32>
  return %0, %1, %2, %3 : tensor<5x80xf32>, tensor<5x80xf32>, tensor<5x80xf32>, tensor<5x80xf32>
}

// ADD: output0: shape [5, 80], {{.*}}: PASS
// ADD-NEXT: output1: shape [5, 80], {{.*}}: PASS
func.func @broadcast_add(%x: tensor<5x80xf32>, %row: tensor<80xf32>, %col: tensor<5x1xf32>) -> (tensor<5x80xf32>, tensor<5x80xf32>) {
  %0 = lmopt.add %x, %row : (tensor<5x80xf32>, tensor<80xf32>) -> tensor<5x80xf32>
  %1 = lmopt.add %col, %row : (tensor<5x1xf32>, tensor<80xf32>) -> tensor<5x80xf32>
  return %0, %1 : tensor<5x80xf32>, tensor<5x80xf32>
}

// Rotary embedding with tables computed in the kernel (cos, sin of the
// broadcast row), rotate-half over the 80 columns.
// ROTARY: output0: shape [5, 80], {{.*}}: PASS
func.func @rotary(%x: tensor<5x80xf32>, %angles: tensor<80xf32>, %unused: tensor<5x1xf32>) -> tensor<5x80xf32> {
  %c = lmopt.cos %angles : tensor<80xf32>
  %s = lmopt.sin %angles : tensor<80xf32>
  %0 = lmopt.rotary %x, %c, %s : (tensor<5x80xf32>, tensor<80xf32>, tensor<80xf32>) -> tensor<5x80xf32>
  return %0 : tensor<5x80xf32>
}

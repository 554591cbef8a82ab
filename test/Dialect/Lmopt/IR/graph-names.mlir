// Inputs and outputs that lmopt.input_names / lmopt.output_names leave
// unnamed (an empty entry, or none) are input<N> / output<N> to every reader
// (GraphNames.h): lmopt-interpret, the bundle and lmopt-run, and the
// exported ONNX graph. A function without the attributes is named likewise.

// RUN: rm -rf %t && mkdir -p %t
// RUN: %lmopt_python -c "import numpy as np; r = np.random.default_rng(1); f = lambda: r.standard_normal((2, 3)).astype(np.float32); np.savez('%t/in.npz', x=f(), input1=f(), input2=f()); np.savez('%t/unnamed.in.npz', input0=f())"
// RUN: lmopt-interpret %s --inputs %t/in.npz --output %t/ref.npz
// RUN: %lmopt_python -c "import numpy as np; print('interpret', *sorted(np.load('%t/ref.npz')))" | FileCheck %s --check-prefix=INTERPRET
// INTERPRET: interpret output1 output2 sum

// RUN: lmopt-compile %s -o %t/model.lmopt 2>/dev/null
// RUN: lmopt-run %t/model.lmopt --inputs %t/in.npz --compare %t/ref.npz | FileCheck %s --check-prefix=BUNDLE
// BUNDLE-DAG: sum: {{.*}}: PASS
// BUNDLE-DAG: output1: {{.*}}: PASS
// BUNDLE-DAG: output2: {{.*}}: PASS
// BUNDLE: PASS: 3 outputs

// RUN: lmopt-translate --export-onnx %s -o %t/model.onnx
// RUN: %lmopt_python -c "import onnx; g = onnx.load('%t/model.onnx').graph; print('inputs', *[v.name for v in g.input]); print('outputs', *[v.name for v in g.output])" | FileCheck %s --check-prefix=ONNX
// ONNX: inputs x input1 input2
// ONNX: outputs sum output1 output2

// RUN: lmopt-interpret %s --function=unnamed --inputs %t/unnamed.in.npz --output %t/unnamed.npz
// RUN: %lmopt_python -c "import numpy as np; print('unnamed', *sorted(np.load('%t/unnamed.npz')))" | FileCheck %s --check-prefix=UNNAMED
// UNNAMED: unnamed output0

func.func @main(%a: tensor<2x3xf32>, %b: tensor<2x3xf32>, %c: tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>)
    attributes {lmopt.input_names = ["x", ""], lmopt.output_names = ["sum"]} {
  %0 = lmopt.add %a, %b : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %1 = lmopt.mul %b, %c : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %2 = lmopt.tanh %a : tensor<2x3xf32>
  return %0, %1, %2 : tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>
}

func.func @unnamed(%a: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = lmopt.tanh %a : tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

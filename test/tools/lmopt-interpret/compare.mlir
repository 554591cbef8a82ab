// --compare matches NaN with NaN and an infinity with the same infinity, and
// nothing else with either.

// RUN: rm -rf %t && mkdir -p %t
// RUN: %lmopt_python -c "import numpy as np; x = np.array([1.5, np.nan, np.inf, -np.inf], np.float16); np.savez('%t/in.npz', x=x); np.savez('%t/same.npz', y=x.astype(np.float32)); np.savez('%t/number.npz', y=np.array([1.5, 2.0, np.inf, -np.inf], np.float32)); np.savez('%t/inf.npz', y=np.array([1.5, np.nan, -np.inf, -np.inf], np.float32))"
// RUN: lmopt-interpret %s --inputs %t/in.npz --compare %t/same.npz | FileCheck %s --check-prefix=SAME
// SAME: y: shape 4, max abs error 0.000e+00, max rel error 0.000e+00, 0.00 of tolerance: PASS
// RUN: not lmopt-interpret %s --inputs %t/in.npz --compare %t/number.npz | FileCheck %s --check-prefix=NAN
// NAN: y: shape 4, {{.*}} of tolerance: FAIL
// RUN: not lmopt-interpret %s --inputs %t/in.npz --compare %t/inf.npz | FileCheck %s --check-prefix=INF
// INF: y: shape 4, max abs error inf, {{.*}} of tolerance: FAIL

func.func @main(%x: tensor<4xf16>) -> tensor<4xf32>
    attributes {lmopt.input_names = ["x"], lmopt.output_names = ["y"]} {
  %0 = lmopt.cast %x : tensor<4xf16> -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// RUN: lmopt-compile %s --dump-plan 2>/dev/null | FileCheck %s
// RUN: lmopt-compile %s --dump-plan 2>/dev/null | %lmopt_python %S/Inputs/check_plan.py | FileCheck %s --check-prefix=VALID

// Weights are stored once each, at multiples of 64: `flat` and `square` hold
// the same 400 bytes and share them; `mask` (i1, one byte per element) starts
// at the next multiple of 64 after them (448), the dense_resource blob after
// it (448 + 100 rounded up: 576), so the section is 576 + 16 bytes. CSE
// makes `g4` the same value as `g0`; returned twice, it gets a copy so each
// output has its own tensor.

// CHECK: plan: {{.*}} weights 592 bytes
// CHECK-DAG: tensor %[[FLAT:[0-9]+]] = weight @0 'flat' f32 [100]
// CHECK-DAG: tensor %[[SQUARE:[0-9]+]] = weight @0 'square' f32 [10, 10]
// CHECK-DAG: tensor %[[MASK:[0-9]+]] = weight @448 'mask' bool [100]
// CHECK-DAG: tensor %[[BLOB:[0-9]+]] = weight @576 'blob' f32 [2, 2]
// CHECK: step 0: gather 'g0' (%[[FLAT]], %{{[0-9]+}}) -> (%[[A:[0-9]+]])
// CHECK: step 1: gather 'g1' (%[[SQUARE]], %{{[0-9]+}})
// CHECK: step 2: gather 'g2' (%[[MASK]], %{{[0-9]+}})
// CHECK: step 3: gather 'g3' (%[[BLOB]], %{{[0-9]+}})
// CHECK: step 4: copy 'e' (%[[A]]) -> (%{{[0-9]+}})

// VALID: plan ok

func.func @main(%ids: tensor<2xi64>)
    -> (tensor<2xf32>, tensor<2x10xf32>, tensor<2xi1>, tensor<2x2xf32>, tensor<2xf32>)
    attributes {lmopt.input_names = ["ids"],
                lmopt.output_names = ["a", "b", "c", "d", "e"]} {
  %flat = lmopt.constant dense<[0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 11.0, 12.0, 13.0, 14.0, 15.0, 16.0, 17.0, 18.0, 19.0, 20.0, 21.0, 22.0, 23.0, 24.0, 25.0, 26.0, 27.0, 28.0, 29.0, 30.0, 31.0, 32.0, 33.0, 34.0, 35.0, 36.0, 37.0, 38.0, 39.0, 40.0, 41.0, 42.0, 43.0, 44.0, 45.0, 46.0, 47.0, 48.0, 49.0, 50.0, 51.0, 52.0, 53.0, 54.0, 55.0, 56.0, 57.0, 58.0, 59.0, 60.0, 61.0, 62.0, 63.0, 64.0, 65.0, 66.0, 67.0, 68.0, 69.0, 70.0, 71.0, 72.0, 73.0, 74.0, 75.0, 76.0, 77.0, 78.0, 79.0, 80.0, 81.0, 82.0, 83.0, 84.0, 85.0, 86.0, 87.0, 88.0, 89.0, 90.0, 91.0, 92.0, 93.0, 94.0, 95.0, 96.0, 97.0, 98.0, 99.0]> : tensor<100xf32> loc("flat")
  %square = lmopt.constant dense<[[0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0], [10.0, 11.0, 12.0, 13.0, 14.0, 15.0, 16.0, 17.0, 18.0, 19.0], [20.0, 21.0, 22.0, 23.0, 24.0, 25.0, 26.0, 27.0, 28.0, 29.0], [30.0, 31.0, 32.0, 33.0, 34.0, 35.0, 36.0, 37.0, 38.0, 39.0], [40.0, 41.0, 42.0, 43.0, 44.0, 45.0, 46.0, 47.0, 48.0, 49.0], [50.0, 51.0, 52.0, 53.0, 54.0, 55.0, 56.0, 57.0, 58.0, 59.0], [60.0, 61.0, 62.0, 63.0, 64.0, 65.0, 66.0, 67.0, 68.0, 69.0], [70.0, 71.0, 72.0, 73.0, 74.0, 75.0, 76.0, 77.0, 78.0, 79.0], [80.0, 81.0, 82.0, 83.0, 84.0, 85.0, 86.0, 87.0, 88.0, 89.0], [90.0, 91.0, 92.0, 93.0, 94.0, 95.0, 96.0, 97.0, 98.0, 99.0]]> : tensor<10x10xf32> loc("square")
  %mask = lmopt.constant dense<[true, false, false, true, false, false, true, false, false, true, false, false, true, false, false, true, false, false, true, false, false, true, false, false, true, false, false, true, false, false, true, false, false, true, false, false, true, false, false, true, false, false, true, false, false, true, false, false, true, false, false, true, false, false, true, false, false, true, false, false, true, false, false, true, false, false, true, false, false, true, false, false, true, false, false, true, false, false, true, false, false, true, false, false, true, false, false, true, false, false, true, false, false, true, false, false, true, false, false, true]> : tensor<100xi1> loc("mask")
  %blob = lmopt.constant dense_resource<blob> : tensor<2x2xf32> loc("blob_op")
  %a = lmopt.gather %flat, %ids : (tensor<100xf32>, tensor<2xi64>) -> tensor<2xf32> loc("g0")
  %b = lmopt.gather %square, %ids : (tensor<10x10xf32>, tensor<2xi64>) -> tensor<2x10xf32> loc("g1")
  %c = lmopt.gather %mask, %ids : (tensor<100xi1>, tensor<2xi64>) -> tensor<2xi1> loc("g2")
  %d = lmopt.gather %blob, %ids : (tensor<2x2xf32>, tensor<2xi64>) -> tensor<2x2xf32> loc("g3")
  %e = lmopt.gather %flat, %ids : (tensor<100xf32>, tensor<2xi64>) -> tensor<2xf32> loc("g4")
  return %a, %b, %c, %d, %e : tensor<2xf32>, tensor<2x10xf32>, tensor<2xi1>, tensor<2x2xf32>, tensor<2xf32>
}

{-#
  dialect_resources: {
    builtin: {
      blob: "0x040000000000803F000000400000404000008040"
    }
  }
#-}

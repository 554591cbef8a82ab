// RUN: not lmopt-compile %s --dump-plan 2>&1 | FileCheck %s

// A dense_resource blob whose size does not match its type is an error at
// the constant, not a read past the blob.

// CHECK: error: constant's dense_resource blob 'short_blob' has 8 bytes, expected 32 for 'tensor<4x2xf32>'
// CHECK-NOT: plan:

func.func @main(%x: tensor<1x4xf32>) -> tensor<1x2xf32> {
  %w = lmopt.constant dense_resource<short_blob> : tensor<4x2xf32>
  %y = lmopt.linear %x, %w : (tensor<1x4xf32>, tensor<4x2xf32>) -> tensor<1x2xf32>
  return %y : tensor<1x2xf32>
}

{-#
  dialect_resources: {
    builtin: {
      short_blob: "0x040000000000803F00000040"
    }
  }
#-}

// RUN: not lmopt-opt %s -lmopt-quantize="quantize-embeddings=true embedding-min-elements=8" -o %t.out 2>&1 | FileCheck %s --check-prefix=DIAG
// RUN: rm -f %t.out
// RUN: not lmopt-opt %s -lmopt-quantize="quantize-embeddings=true embedding-min-elements=8" -o %t.out 2>/dev/null
// RUN: not test -s %t.out
// RUN: not lmopt-opt %s -lmopt-quantize="quantize-embeddings=true embedding-min-elements=0" 2>&1 | FileCheck %s --check-prefix=MINERR

// The diagnostics of lmopt-quantize's quantize-embeddings: a table with NaN
// or Inf fails the pass naming the gather and the element, and no output is
// written; a bad option is an error at the pass.

// DIAG: error: loc("embeddings/bad"): table of gather 'embeddings/bad' has NaN at element 5; cannot quantize it
// MINERR: error: embedding-min-elements must be positive, got 0
func.func @nan_table(%ids: tensor<3xi64>) -> tensor<3x2xf32> {
  %t = lmopt.constant dense<[[1.0, 0.0], [0.0, 0.0], [0.0, 0x7FC00000], [0.0, 0.0]]> : tensor<4x2xf32>
  %y = lmopt.gather %t, %ids : (tensor<4x2xf32>, tensor<3xi64>) -> tensor<3x2xf32> loc("embeddings/bad")
  return %y : tensor<3x2xf32>
}

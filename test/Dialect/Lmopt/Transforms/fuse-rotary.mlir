// RUN: lmopt-opt %s -lmopt-fuse-rotary -split-input-file | FileCheck %s
// RUN: lmopt-opt %s -lmopt-fuse-rotary -split-input-file --lmopt-report=- -o /dev/null | FileCheck %s --check-prefix=REPORT

// Llama's apply_rotary_pos_emb as the TorchScript exporter writes it, after
// canonicalization: x * cos + concat(-x[..., 8:], x[..., :8]) * sin, the
// tables [1, 1, S, D] broadcast over batch and heads.
// CHECK-LABEL: func @llama_query
// CHECK-SAME: (%[[X:.*]]: tensor<2x4x6x16xf32>, %[[COS:.*]]: tensor<1x1x6x16xf32>, %[[SIN:.*]]: tensor<1x1x6x16xf32>)
// CHECK: %[[R:.*]] = lmopt.rotary %[[X]], %[[COS]], %[[SIN]] : (tensor<2x4x6x16xf32>, tensor<1x1x6x16xf32>, tensor<1x1x6x16xf32>) -> tensor<2x4x6x16xf32>
// CHECK-NOT: lmopt.concat
// CHECK-NOT: lmopt.neg
// CHECK: return %[[R]]
// REPORT: rotary {{ *}}1 {{ *}}0
func.func @llama_query(%x: tensor<2x4x6x16xf32>, %cos: tensor<1x1x6x16xf32>, %sin: tensor<1x1x6x16xf32>) -> tensor<2x4x6x16xf32> {
  %zero = lmopt.constant dense<0> : tensor<1xi64>
  %half = lmopt.constant dense<8> : tensor<1xi64>
  %end = lmopt.constant dense<9223372036854775807> : tensor<1xi64>
  %axis = lmopt.constant dense<3> : tensor<1xi64>
  %one = lmopt.constant dense<1> : tensor<1xi64>
  %0 = lmopt.mul %x, %cos : (tensor<2x4x6x16xf32>, tensor<1x1x6x16xf32>) -> tensor<2x4x6x16xf32>
  %1 = lmopt.slice %x, %zero, %half axes %axis steps %one : (tensor<2x4x6x16xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<2x4x6x8xf32>
  %2 = lmopt.slice %x, %half, %end axes %axis steps %one : (tensor<2x4x6x16xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<2x4x6x8xf32>
  %3 = lmopt.neg %2 : tensor<2x4x6x8xf32>
  %4 = lmopt.concat %3, %1 {axis = 3 : i64} : (tensor<2x4x6x8xf32>, tensor<2x4x6x8xf32>) -> tensor<2x4x6x16xf32>
  %5 = lmopt.mul %4, %sin : (tensor<2x4x6x16xf32>, tensor<1x1x6x16xf32>) -> tensor<2x4x6x16xf32>
  %6 = lmopt.add %0, %5 : (tensor<2x4x6x16xf32>, tensor<2x4x6x16xf32>) -> tensor<2x4x6x16xf32>
  return %6 : tensor<2x4x6x16xf32>
}

// -----

// Products and sum with their operands the other way round, negative axes
// and no steps; a query and a key sharing the tables fuse separately.
// CHECK-LABEL: func @swapped_operands
// CHECK-SAME: (%[[Q:[^:]*]]: tensor<2x4x6x16xf32>, %[[K:[^:]*]]: tensor<2x4x6x16xf32>, %[[COS:[^:]*]]: tensor<1x1x6x16xf32>, %[[SIN:[^:]*]]: tensor<1x1x6x16xf32>)
// CHECK-DAG: %[[RQ:.*]] = lmopt.rotary %[[Q]], %[[COS]], %[[SIN]]
// CHECK-DAG: %[[RK:.*]] = lmopt.rotary %[[K]], %[[COS]], %[[SIN]]
// CHECK: return %[[RQ]], %[[RK]]
// REPORT: rotary {{ *}}2 {{ *}}0
func.func @swapped_operands(%q: tensor<2x4x6x16xf32>, %k: tensor<2x4x6x16xf32>, %cos: tensor<1x1x6x16xf32>, %sin: tensor<1x1x6x16xf32>) -> (tensor<2x4x6x16xf32>, tensor<2x4x6x16xf32>) {
  %zero = lmopt.constant dense<0> : tensor<1xi64>
  %half = lmopt.constant dense<8> : tensor<1xi64>
  %end = lmopt.constant dense<16> : tensor<1xi64>
  %axis = lmopt.constant dense<-1> : tensor<1xi64>
  %q0 = lmopt.mul %cos, %q : (tensor<1x1x6x16xf32>, tensor<2x4x6x16xf32>) -> tensor<2x4x6x16xf32>
  %q1 = lmopt.slice %q, %zero, %half axes %axis : (tensor<2x4x6x16xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<2x4x6x8xf32>
  %q2 = lmopt.slice %q, %half, %end axes %axis : (tensor<2x4x6x16xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<2x4x6x8xf32>
  %q3 = lmopt.neg %q2 : tensor<2x4x6x8xf32>
  %q4 = lmopt.concat %q3, %q1 {axis = -1 : i64} : (tensor<2x4x6x8xf32>, tensor<2x4x6x8xf32>) -> tensor<2x4x6x16xf32>
  %q5 = lmopt.mul %sin, %q4 : (tensor<1x1x6x16xf32>, tensor<2x4x6x16xf32>) -> tensor<2x4x6x16xf32>
  %q6 = lmopt.add %q5, %q0 : (tensor<2x4x6x16xf32>, tensor<2x4x6x16xf32>) -> tensor<2x4x6x16xf32>
  %k0 = lmopt.mul %k, %cos : (tensor<2x4x6x16xf32>, tensor<1x1x6x16xf32>) -> tensor<2x4x6x16xf32>
  %k1 = lmopt.slice %k, %zero, %half axes %axis : (tensor<2x4x6x16xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<2x4x6x8xf32>
  %k2 = lmopt.slice %k, %half, %end axes %axis : (tensor<2x4x6x16xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<2x4x6x8xf32>
  %k3 = lmopt.neg %k2 : tensor<2x4x6x8xf32>
  %k4 = lmopt.concat %k3, %k1 {axis = 3 : i64} : (tensor<2x4x6x8xf32>, tensor<2x4x6x8xf32>) -> tensor<2x4x6x16xf32>
  %k5 = lmopt.mul %k4, %sin : (tensor<2x4x6x16xf32>, tensor<1x1x6x16xf32>) -> tensor<2x4x6x16xf32>
  %k6 = lmopt.add %k0, %k5 : (tensor<2x4x6x16xf32>, tensor<2x4x6x16xf32>) -> tensor<2x4x6x16xf32>
  return %q6, %k6 : tensor<2x4x6x16xf32>, tensor<2x4x6x16xf32>
}

// -----

// Halves swapped the other way (concat(x1, -x2)) is another rotation: not
// rotate_half, not a candidate.
// CHECK-LABEL: func @negative_other_rotation
// CHECK-NOT: lmopt.rotary
// REPORT: rotary {{ *}}0 {{ *}}0
func.func @negative_other_rotation(%x: tensor<2x4x6x16xf32>, %cos: tensor<1x1x6x16xf32>, %sin: tensor<1x1x6x16xf32>) -> tensor<2x4x6x16xf32> {
  %zero = lmopt.constant dense<0> : tensor<1xi64>
  %half = lmopt.constant dense<8> : tensor<1xi64>
  %end = lmopt.constant dense<16> : tensor<1xi64>
  %axis = lmopt.constant dense<3> : tensor<1xi64>
  %0 = lmopt.mul %x, %cos : (tensor<2x4x6x16xf32>, tensor<1x1x6x16xf32>) -> tensor<2x4x6x16xf32>
  %1 = lmopt.slice %x, %zero, %half axes %axis : (tensor<2x4x6x16xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<2x4x6x8xf32>
  %2 = lmopt.slice %x, %half, %end axes %axis : (tensor<2x4x6x16xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<2x4x6x8xf32>
  %3 = lmopt.neg %1 : tensor<2x4x6x8xf32>
  %4 = lmopt.concat %3, %2 {axis = 3 : i64} : (tensor<2x4x6x8xf32>, tensor<2x4x6x8xf32>) -> tensor<2x4x6x16xf32>
  %5 = lmopt.mul %4, %sin : (tensor<2x4x6x16xf32>, tensor<1x1x6x16xf32>) -> tensor<2x4x6x16xf32>
  %6 = lmopt.add %0, %5 : (tensor<2x4x6x16xf32>, tensor<2x4x6x16xf32>) -> tensor<2x4x6x16xf32>
  return %6 : tensor<2x4x6x16xf32>
}

// -----

// rotate_half(x) * sin added to y * cos for another y: a near miss.
// CHECK-LABEL: func @negative_other_cos_operand
// CHECK-NOT: lmopt.rotary
// REPORT: rotary {{ *}}0 {{ *}}1
// REPORT: near miss: rotary at 'rotate_half': rotate_half(x) * sin is added to something other than x times a cos table
func.func @negative_other_cos_operand(%x: tensor<2x4x6x16xf32>, %y: tensor<2x4x6x16xf32>, %cos: tensor<1x1x6x16xf32>, %sin: tensor<1x1x6x16xf32>) -> tensor<2x4x6x16xf32> {
  %zero = lmopt.constant dense<0> : tensor<1xi64>
  %half = lmopt.constant dense<8> : tensor<1xi64>
  %end = lmopt.constant dense<16> : tensor<1xi64>
  %axis = lmopt.constant dense<3> : tensor<1xi64>
  %0 = lmopt.mul %y, %cos : (tensor<2x4x6x16xf32>, tensor<1x1x6x16xf32>) -> tensor<2x4x6x16xf32>
  %1 = lmopt.slice %x, %zero, %half axes %axis : (tensor<2x4x6x16xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<2x4x6x8xf32>
  %2 = lmopt.slice %x, %half, %end axes %axis : (tensor<2x4x6x16xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<2x4x6x8xf32>
  %3 = lmopt.neg %2 : tensor<2x4x6x8xf32>
  %4 = lmopt.concat %3, %1 {axis = 3 : i64} : (tensor<2x4x6x8xf32>, tensor<2x4x6x8xf32>) -> tensor<2x4x6x16xf32> loc("rotate_half")
  %5 = lmopt.mul %4, %sin : (tensor<2x4x6x16xf32>, tensor<1x1x6x16xf32>) -> tensor<2x4x6x16xf32>
  %6 = lmopt.add %0, %5 : (tensor<2x4x6x16xf32>, tensor<2x4x6x16xf32>) -> tensor<2x4x6x16xf32>
  return %6 : tensor<2x4x6x16xf32>
}

// -----

// rotate_half(x) also read elsewhere: fusing would keep it alive; a near miss.
// CHECK-LABEL: func @negative_rotate_half_escapes
// CHECK-NOT: lmopt.rotary
// REPORT: near miss: rotary at 'rotate_half': rotate_half has more than one user
func.func @negative_rotate_half_escapes(%x: tensor<2x4x6x16xf32>, %cos: tensor<1x1x6x16xf32>, %sin: tensor<1x1x6x16xf32>) -> (tensor<2x4x6x16xf32>, tensor<2x4x6x16xf32>) {
  %zero = lmopt.constant dense<0> : tensor<1xi64>
  %half = lmopt.constant dense<8> : tensor<1xi64>
  %end = lmopt.constant dense<16> : tensor<1xi64>
  %axis = lmopt.constant dense<3> : tensor<1xi64>
  %0 = lmopt.mul %x, %cos : (tensor<2x4x6x16xf32>, tensor<1x1x6x16xf32>) -> tensor<2x4x6x16xf32>
  %1 = lmopt.slice %x, %zero, %half axes %axis : (tensor<2x4x6x16xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<2x4x6x8xf32>
  %2 = lmopt.slice %x, %half, %end axes %axis : (tensor<2x4x6x16xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<2x4x6x8xf32>
  %3 = lmopt.neg %2 : tensor<2x4x6x8xf32>
  %4 = lmopt.concat %3, %1 {axis = 3 : i64} : (tensor<2x4x6x8xf32>, tensor<2x4x6x8xf32>) -> tensor<2x4x6x16xf32> loc("rotate_half")
  %5 = lmopt.mul %4, %sin : (tensor<2x4x6x16xf32>, tensor<1x1x6x16xf32>) -> tensor<2x4x6x16xf32>
  %6 = lmopt.add %0, %5 : (tensor<2x4x6x16xf32>, tensor<2x4x6x16xf32>) -> tensor<2x4x6x16xf32>
  return %6, %4 : tensor<2x4x6x16xf32>, tensor<2x4x6x16xf32>
}

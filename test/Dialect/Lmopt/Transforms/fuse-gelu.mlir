// RUN: lmopt-opt %s -lmopt-fuse-gelu -split-input-file | FileCheck %s
// RUN: lmopt-opt %s -lmopt-fuse-gelu -split-input-file --lmopt-report=- -o /dev/null | FileCheck %s --check-prefix=REPORT

// The erf form as PyTorch's TorchScript exporter writes nn.GELU():
// Div(x, 1.4142135) -> Erf -> Add 1 -> Mul x -> Mul 0.5.
// CHECK-LABEL: func @erf_x_then_half
// CHECK-SAME: (%[[X:.*]]: tensor<?x16x256xf32>)
// CHECK: %[[G:.*]] = lmopt.gelu %[[X]] : tensor<?x16x256xf32>
// CHECK-NOT: lmopt.erf
// CHECK: return %[[G]]
// REPORT: gelu {{ *}}1 {{ *}}0
func.func @erf_x_then_half(%x: tensor<?x16x256xf32>) -> tensor<?x16x256xf32> {
  %sqrt2 = lmopt.constant dense<1.41421354> : tensor<f32>
  %one = lmopt.constant dense<1.0> : tensor<f32>
  %half = lmopt.constant dense<0.5> : tensor<f32>
  %0 = lmopt.div %x, %sqrt2 : (tensor<?x16x256xf32>, tensor<f32>) -> tensor<?x16x256xf32>
  %1 = lmopt.erf %0 : tensor<?x16x256xf32>
  %2 = lmopt.add %1, %one : (tensor<?x16x256xf32>, tensor<f32>) -> tensor<?x16x256xf32>
  %3 = lmopt.mul %x, %2 : (tensor<?x16x256xf32>, tensor<?x16x256xf32>) -> tensor<?x16x256xf32>
  %4 = lmopt.mul %3, %half : (tensor<?x16x256xf32>, tensor<f32>) -> tensor<?x16x256xf32>
  return %4 : tensor<?x16x256xf32>
}

// -----

// Hugging Face's gelu written as x * 0.5 * (1.0 + erf(x * (1/sqrt 2))).
// CHECK-LABEL: func @erf_half_x_first
// CHECK-SAME: (%[[X:.*]]: tensor<2x8xf32>)
// CHECK: %[[G:.*]] = lmopt.gelu %[[X]] : tensor<2x8xf32>
// CHECK: return %[[G]]
// REPORT: gelu {{ *}}1 {{ *}}0
func.func @erf_half_x_first(%x: tensor<2x8xf32>) -> tensor<2x8xf32> {
  %rsqrt2 = lmopt.constant dense<0.707106769> : tensor<f32>
  %one = lmopt.constant dense<1.0> : tensor<f32>
  %half = lmopt.constant dense<0.5> : tensor<f32>
  %0 = lmopt.mul %x, %half : (tensor<2x8xf32>, tensor<f32>) -> tensor<2x8xf32>
  %1 = lmopt.mul %x, %rsqrt2 : (tensor<2x8xf32>, tensor<f32>) -> tensor<2x8xf32>
  %2 = lmopt.erf %1 : tensor<2x8xf32>
  %3 = lmopt.add %one, %2 : (tensor<f32>, tensor<2x8xf32>) -> tensor<2x8xf32>
  %4 = lmopt.mul %0, %3 : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32>
  return %4 : tensor<2x8xf32>
}

// -----

// x * ((1 + erf) * 0.5)
// CHECK-LABEL: func @erf_half_inner
// CHECK-SAME: (%[[X:.*]]: tensor<2x8xf32>)
// CHECK: %[[G:.*]] = lmopt.gelu %[[X]] : tensor<2x8xf32>
// CHECK: return %[[G]]
func.func @erf_half_inner(%x: tensor<2x8xf32>) -> tensor<2x8xf32> {
  %sqrt2 = lmopt.constant dense<1.41421354> : tensor<f32>
  %one = lmopt.constant dense<1.0> : tensor<f32>
  %half = lmopt.constant dense<0.5> : tensor<f32>
  %0 = lmopt.div %x, %sqrt2 : (tensor<2x8xf32>, tensor<f32>) -> tensor<2x8xf32>
  %1 = lmopt.erf %0 : tensor<2x8xf32>
  %2 = lmopt.add %1, %one : (tensor<2x8xf32>, tensor<f32>) -> tensor<2x8xf32>
  %3 = lmopt.mul %2, %half : (tensor<2x8xf32>, tensor<f32>) -> tensor<2x8xf32>
  %4 = lmopt.mul %x, %3 : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32>
  return %4 : tensor<2x8xf32>
}

// -----

// GPT-2's NewGELU as the TorchScript exporter writes it:
// 0.5 * x * (1 + tanh(0.7978845608 * (x + 0.044715 * pow(x, 3)))).
// CHECK-LABEL: func @tanh_pow
// CHECK-SAME: (%[[X:.*]]: tensor<?x?x256xf32>)
// CHECK: %[[G:.*]] = lmopt.gelu %[[X]] {approximate = #lmopt.gelu_approximation<tanh>} : tensor<?x?x256xf32>
// CHECK-NOT: lmopt.tanh
// CHECK: return %[[G]]
// REPORT: gelu {{ *}}1 {{ *}}0
func.func @tanh_pow(%x: tensor<?x?x256xf32>) -> tensor<?x?x256xf32> {
  %half = lmopt.constant dense<0.5> : tensor<f32>
  %three = lmopt.constant dense<3.0> : tensor<f32>
  %c = lmopt.constant dense<0.044715> : tensor<f32>
  %s = lmopt.constant dense<0.797884583> : tensor<f32>
  %one = lmopt.constant dense<1.0> : tensor<f32>
  %0 = lmopt.mul %half, %x : (tensor<f32>, tensor<?x?x256xf32>) -> tensor<?x?x256xf32>
  %1 = lmopt.pow %x, %three : (tensor<?x?x256xf32>, tensor<f32>) -> tensor<?x?x256xf32>
  %2 = lmopt.mul %c, %1 : (tensor<f32>, tensor<?x?x256xf32>) -> tensor<?x?x256xf32>
  %3 = lmopt.add %x, %2 : (tensor<?x?x256xf32>, tensor<?x?x256xf32>) -> tensor<?x?x256xf32>
  %4 = lmopt.mul %s, %3 : (tensor<f32>, tensor<?x?x256xf32>) -> tensor<?x?x256xf32>
  %5 = lmopt.tanh %4 : tensor<?x?x256xf32>
  %6 = lmopt.add %one, %5 : (tensor<f32>, tensor<?x?x256xf32>) -> tensor<?x?x256xf32>
  %7 = lmopt.mul %0, %6 : (tensor<?x?x256xf32>, tensor<?x?x256xf32>) -> tensor<?x?x256xf32>
  return %7 : tensor<?x?x256xf32>
}

// -----

// The cube written as x * (x * x).
// CHECK-LABEL: func @tanh_mul_cube
// CHECK-SAME: (%[[X:.*]]: tensor<4x8xf32>)
// CHECK: %[[G:.*]] = lmopt.gelu %[[X]] {approximate = #lmopt.gelu_approximation<tanh>}
// CHECK: return %[[G]]
func.func @tanh_mul_cube(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %half = lmopt.constant dense<0.5> : tensor<f32>
  %c = lmopt.constant dense<0.044715> : tensor<f32>
  %s = lmopt.constant dense<0.797884583> : tensor<f32>
  %one = lmopt.constant dense<1.0> : tensor<f32>
  %sq = lmopt.mul %x, %x : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %cube = lmopt.mul %x, %sq : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %2 = lmopt.mul %cube, %c : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
  %3 = lmopt.add %2, %x : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %4 = lmopt.mul %3, %s : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
  %5 = lmopt.tanh %4 : tensor<4x8xf32>
  %6 = lmopt.add %5, %one : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
  %7 = lmopt.mul %x, %6 : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %8 = lmopt.mul %7, %half : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
  return %8 : tensor<4x8xf32>
}

// -----

// Dividing by 2 instead of sqrt(2) is another function.
// CHECK-LABEL: func @negative_erf_wrong_divisor
// CHECK-NOT: lmopt.gelu
// CHECK: lmopt.erf
// REPORT: gelu {{ *}}0 {{ *}}1
// REPORT: near miss: gelu at 'erf_wrong_divisor': erf input is not divided by sqrt(2)
func.func @negative_erf_wrong_divisor(%x: tensor<2x8xf32>) -> tensor<2x8xf32> {
  %two = lmopt.constant dense<2.0> : tensor<f32>
  %one = lmopt.constant dense<1.0> : tensor<f32>
  %half = lmopt.constant dense<0.5> : tensor<f32>
  %0 = lmopt.div %x, %two : (tensor<2x8xf32>, tensor<f32>) -> tensor<2x8xf32>
  %1 = lmopt.erf %0 : tensor<2x8xf32> loc("erf_wrong_divisor")
  %2 = lmopt.add %1, %one : (tensor<2x8xf32>, tensor<f32>) -> tensor<2x8xf32>
  %3 = lmopt.mul %x, %2 : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32>
  %4 = lmopt.mul %3, %half : (tensor<2x8xf32>, tensor<f32>) -> tensor<2x8xf32>
  return %4 : tensor<2x8xf32>
}

// -----

// The erf value escapes: fusing would have to keep it alive anyway.
// CHECK-LABEL: func @negative_erf_second_user
// CHECK-NOT: lmopt.gelu
// REPORT: near miss: gelu at 'erf_escapes': the result is not only used by an add of 1
func.func @negative_erf_second_user(%x: tensor<2x8xf32>) -> (tensor<2x8xf32>, tensor<2x8xf32>) {
  %sqrt2 = lmopt.constant dense<1.41421354> : tensor<f32>
  %one = lmopt.constant dense<1.0> : tensor<f32>
  %half = lmopt.constant dense<0.5> : tensor<f32>
  %0 = lmopt.div %x, %sqrt2 : (tensor<2x8xf32>, tensor<f32>) -> tensor<2x8xf32>
  %1 = lmopt.erf %0 : tensor<2x8xf32> loc("erf_escapes")
  %2 = lmopt.add %1, %one : (tensor<2x8xf32>, tensor<f32>) -> tensor<2x8xf32>
  %3 = lmopt.mul %x, %2 : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32>
  %4 = lmopt.mul %3, %half : (tensor<2x8xf32>, tensor<f32>) -> tensor<2x8xf32>
  return %4, %1 : tensor<2x8xf32>, tensor<2x8xf32>
}

// -----

// (1 + erf(x/sqrt2)) * y for another y is not a GELU of x.
// CHECK-LABEL: func @negative_erf_other_operand
// CHECK-NOT: lmopt.gelu
// REPORT: near miss: gelu at 'erf_other': (1 + erf/tanh) is multiplied by neither x nor 0.5
func.func @negative_erf_other_operand(%x: tensor<2x8xf32>, %y: tensor<2x8xf32>) -> tensor<2x8xf32> {
  %sqrt2 = lmopt.constant dense<1.41421354> : tensor<f32>
  %one = lmopt.constant dense<1.0> : tensor<f32>
  %half = lmopt.constant dense<0.5> : tensor<f32>
  %0 = lmopt.div %x, %sqrt2 : (tensor<2x8xf32>, tensor<f32>) -> tensor<2x8xf32>
  %1 = lmopt.erf %0 : tensor<2x8xf32> loc("erf_other")
  %2 = lmopt.add %1, %one : (tensor<2x8xf32>, tensor<f32>) -> tensor<2x8xf32>
  %3 = lmopt.mul %y, %2 : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32>
  %4 = lmopt.mul %3, %half : (tensor<2x8xf32>, tensor<f32>) -> tensor<2x8xf32>
  return %4 : tensor<2x8xf32>
}

// -----

// A wrong cubic coefficient.
// CHECK-LABEL: func @negative_tanh_coefficient
// CHECK-NOT: lmopt.gelu
// REPORT: near miss: gelu at 'tanh_coefficient': tanh argument is not sqrt(2/pi) * (x + 0.044715 * x^3)
func.func @negative_tanh_coefficient(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %half = lmopt.constant dense<0.5> : tensor<f32>
  %three = lmopt.constant dense<3.0> : tensor<f32>
  %c = lmopt.constant dense<0.05> : tensor<f32>
  %s = lmopt.constant dense<0.797884583> : tensor<f32>
  %one = lmopt.constant dense<1.0> : tensor<f32>
  %1 = lmopt.pow %x, %three : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
  %2 = lmopt.mul %c, %1 : (tensor<f32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %3 = lmopt.add %x, %2 : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %4 = lmopt.mul %s, %3 : (tensor<f32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %5 = lmopt.tanh %4 : tensor<4x8xf32> loc("tanh_coefficient")
  %6 = lmopt.add %one, %5 : (tensor<f32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %7 = lmopt.mul %x, %6 : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %8 = lmopt.mul %7, %half : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
  return %8 : tensor<4x8xf32>
}

// -----

// A plain tanh (not scaled by sqrt(2/pi)) is not a candidate: no near miss.
// CHECK-LABEL: func @negative_plain_tanh
// CHECK: lmopt.tanh
// REPORT: gelu {{ *}}0 {{ *}}0
// REPORT-NOT: near miss
func.func @negative_plain_tanh(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = lmopt.tanh %x : tensor<4xf32>
  return %0 : tensor<4xf32>
}

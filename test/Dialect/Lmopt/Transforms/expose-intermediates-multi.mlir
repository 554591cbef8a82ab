// lmopt-expose-intermediates on an op with several results.
// Of an op with several results, the ones read: a skip_layer_norm whose sum
// nothing reads exposes its output under the plain name.
// RUN: lmopt-opt %s -lmopt-expose-intermediates="values=norm" | FileCheck %s --check-prefix=MULTI
// MULTI: lmopt.output_names = ["y", "norm"]
// MULTI: %[[N:[a-z0-9_]+]], %{{.*}} = lmopt.skip_layer_norm
// MULTI: return %{{.*}}, %[[N]] :
func.func @main(%x: tensor<3x2xf32>, %r: tensor<3x2xf32>) -> tensor<3x2xf32> attributes {lmopt.output_names = ["y"]} {
  %g = lmopt.constant dense<1.0> : tensor<2xf32>
  %n, %sum = lmopt.skip_layer_norm %x, %r, %g : (tensor<3x2xf32>, tensor<3x2xf32>, tensor<2xf32>) -> (tensor<3x2xf32>, tensor<3x2xf32>) loc("norm")
  %y = lmopt.add %n, %x : (tensor<3x2xf32>, tensor<3x2xf32>) -> tensor<3x2xf32>
  return %y : tensor<3x2xf32>
}

// A model whose output length is data: the value of input 'n'.
func.func @main(%x: tensor<?xf32>, %n: tensor<i64>) -> (tensor<?xf32>, tensor<?xi64>)
    attributes {lmopt.input_names = ["x", "n"], lmopt.output_names = ["y", "r"]} {
  %zero = lmopt.constant dense<0> : tensor<i64>
  %one = lmopt.constant dense<1> : tensor<i64>
  %y = lmopt.relu %x : tensor<?xf32> loc("act")
  %r = lmopt.range %zero, %n, %one : (tensor<i64>, tensor<i64>, tensor<i64>) -> tensor<?xi64> loc("steps")
  return %y, %r : tensor<?xf32>, tensor<?xi64>
}

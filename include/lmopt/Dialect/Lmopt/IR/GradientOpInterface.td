//===- GradientOpInterface.td - an op's reverse-mode rule --*- tablegen -*-===//
//
// Each differentiable op says how the gradients of its results become the
// gradients of its operands, as Enzyme-MLIR's AutoDiffOpInterface and ONNX
// Runtime's gradient builder do; `lmopt-autodiff` (Autodiff.h) walks a
// function backwards and asks each op for its rule. The rules themselves are
// attached as external models (lib/Dialect/Lmopt/Autodiff), so the IR
// library carries only the interface.
//
//===----------------------------------------------------------------------===//

#ifndef LMOPT_DIALECT_LMOPT_IR_GRADIENTOPINTERFACE_TD
#define LMOPT_DIALECT_LMOPT_IR_GRADIENTOPINTERFACE_TD

include "mlir/IR/OpBase.td"

def Lmopt_GradientOpInterface : OpInterface<"GradientOpInterface"> {
  let cppNamespace = "::mlir::lmopt";
  let description = [{
    The reverse-mode rule of an op. `buildGradients` is called with the
    builder placed after every forward op, `resultGrads` holding one value
    per result of the op's type (null where no gradient reaches that
    result), and fills `operandGrads` with one entry per operand: a value of
    the operand's type, or null for an operand that takes no gradient
    (indices, masks, shapes) or whose gradient is zero. A rule that cannot
    differentiate this instance (an unsupported attribute, a shape it
    cannot reduce to) emits an error at the op naming why and fails.
  }];
  let methods = [
    InterfaceMethod<
      "Builds the operands' gradients from the results' gradients.",
      "::llvm::LogicalResult", "buildGradients",
      (ins "::mlir::OpBuilder &":$builder,
           "::llvm::ArrayRef<::mlir::Value>":$resultGrads,
           "::llvm::SmallVectorImpl<::mlir::Value> &":$operandGrads)>,
  ];
}

#endif // LMOPT_DIALECT_LMOPT_IR_GRADIENTOPINTERFACE_TD

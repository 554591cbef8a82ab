//===- LmoptBase.td - lmopt dialect definition -------------*- tablegen -*-===//
//
// The lmopt dialect: ONNX-level tensor ops as imported from transformer exports,
// and the fused ops the optimizer produces from them. All ops work on builtin
// ranked tensors; quantized tensors carry `quant` dialect element types.
//
//===----------------------------------------------------------------------===//

#ifndef LMOPT_DIALECT_LMOPT_IR_LMOPTBASE_TD
#define LMOPT_DIALECT_LMOPT_IR_LMOPTBASE_TD

include "mlir/IR/OpBase.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/EnumAttr.td"

def Lmopt_Dialect : Dialect {
  let name = "lmopt";
  let cppNamespace = "::mlir::lmopt";
  let summary = "Transformer graph dialect of the lmopt compiler";
  let description = [{
    The `lmopt` dialect holds a transformer model between import and lowering.
    It has two layers of ops on builtin `tensor` types:

    * ONNX-level ops (`lmopt.add`, `lmopt.matmul`, `lmopt.softmax`, ...) with the
      semantics of the ONNX operator of the same name, so that the importer maps
      nodes one to one and the ONNX specification is the reference for numerics;
    * fused ops (`lmopt.linear`, `lmopt.attention`, `lmopt.skip_layer_norm`, ...)
      that graph passes produce and that lowering maps to library calls or
      generated kernels.

    Quantized tensors use the upstream `quant` dialect's element types
    (`!quant.uniform<i8:f32, 0.1:3>`); training-only behaviour is carried by
    attributes on the few ops whose semantics differ between modes (`dropout`).
  }];
  let dependentDialects = ["::mlir::quant::QuantDialect"];
  let useDefaultAttributePrinterParser = 1;
  let hasConstantMaterializer = 1;
  let extraClassDeclaration = [{
    /// What the graph passes fused in this context, and their near misses.
    FusionReport &getFusionReport() { return *fusionReport; }

  private:
    std::unique_ptr<FusionReport> fusionReport;
  }];
}

//===----------------------------------------------------------------------===//
// Enums
//===----------------------------------------------------------------------===//

def Lmopt_GeluApproximation : I32EnumAttr<"GeluApproximation",
    "how GELU is computed", [
      I32EnumAttrCase<"none", 0>,
      I32EnumAttrCase<"tanh", 1>
    ]> {
  let cppNamespace = "::mlir::lmopt";
  let genSpecializedAttr = 0;
}
def Lmopt_GeluApproximationAttr
    : EnumAttr<Lmopt_Dialect, Lmopt_GeluApproximation, "gelu_approximation"> {
  let assemblyFormat = "`<` $value `>`";
}

def Lmopt_Activation : I32EnumAttr<"Activation",
    "elementwise activation fused into the epilogue of a linear", [
      I32EnumAttrCase<"none", 0>,
      I32EnumAttrCase<"relu", 1>,
      I32EnumAttrCase<"gelu", 2>,
      I32EnumAttrCase<"gelu_tanh", 3>
    ]> {
  let cppNamespace = "::mlir::lmopt";
  let genSpecializedAttr = 0;
}
def Lmopt_ActivationAttr
    : EnumAttr<Lmopt_Dialect, Lmopt_Activation, "activation"> {
  let assemblyFormat = "`<` $value `>`";
}

def Lmopt_InputQuantization : I32EnumAttr<"InputQuantization",
    "how a linear quantizes its float input at run time", [
      I32EnumAttrCase<"none", 0>,
      I32EnumAttrCase<"dynamic_per_token", 1>,
      I32EnumAttrCase<"dynamic_per_tensor", 2>
    ]> {
  let cppNamespace = "::mlir::lmopt";
  let genSpecializedAttr = 0;
}
def Lmopt_InputQuantizationAttr
    : EnumAttr<Lmopt_Dialect, Lmopt_InputQuantization, "input_quantization"> {
  let assemblyFormat = "`<` $value `>`";
}

def Lmopt_ScatterReduction : I32EnumAttr<"ScatterReduction",
    "how a scatter combines an update with the element it lands on", [
      I32EnumAttrCase<"none", 0>,
      I32EnumAttrCase<"add", 1>,
      I32EnumAttrCase<"mul", 2>,
      I32EnumAttrCase<"max", 3>,
      I32EnumAttrCase<"min", 4>
    ]> {
  let cppNamespace = "::mlir::lmopt";
  let genSpecializedAttr = 0;
}
def Lmopt_ScatterReductionAttr
    : EnumAttr<Lmopt_Dialect, Lmopt_ScatterReduction, "scatter_reduction"> {
  let assemblyFormat = "`<` $value `>`";
}

//===----------------------------------------------------------------------===//
// Type constraints
//===----------------------------------------------------------------------===//

def Lmopt_Tensor : RankedTensorOf<[AnyType]>;
def Lmopt_FloatTensor : RankedTensorOf<[AnyFloat]>;
def Lmopt_NumericTensor : RankedTensorOf<[AnyFloat, AnySignlessInteger]>;
def Lmopt_IntTensor : RankedTensorOf<[AnySignlessInteger]>;
def Lmopt_BoolTensor : RankedTensorOf<[I1]>;
def Lmopt_ShapeTensor : 1DTensorOf<[I64]>;
def Lmopt_IndexTensor : RankedTensorOf<[I32, I64]>;

//===----------------------------------------------------------------------===//
// Base op
//===----------------------------------------------------------------------===//

class Lmopt_Op<string mnemonic, list<Trait> traits = []>
    : Op<Lmopt_Dialect, mnemonic, traits>;

#endif // LMOPT_DIALECT_LMOPT_IR_LMOPTBASE_TD

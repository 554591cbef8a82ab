//===- LmoptOnnxOps.td - ONNX-level lmopt ops --------------*- tablegen -*-===//
//
// Ops that mirror ONNX operators one to one. Each description names the ONNX
// operator whose semantics it follows; differences (inputs that must be
// constant and are therefore attributes) are stated.
//
//===----------------------------------------------------------------------===//

#ifndef LMOPT_DIALECT_LMOPT_IR_LMOPTONNXOPS_TD
#define LMOPT_DIALECT_LMOPT_IR_LMOPTONNXOPS_TD

include "lmopt/Dialect/Lmopt/IR/LmoptBase.td"
include "mlir/IR/BuiltinAttributeInterfaces.td"
include "mlir/Interfaces/InferTypeOpInterface.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

//===----------------------------------------------------------------------===//
// Constants and shape ops
//===----------------------------------------------------------------------===//

def Lmopt_ConstantOp : Lmopt_Op<"constant",
    [ConstantLike, Pure, AllTypesMatch<["value", "output"]>]> {
  let summary = "constant tensor (ONNX Constant and initializers)";
  let description = [{
    A tensor literal. Model weights are `dense_resource` attributes so that they
    are stored once, outside the printed IR.

    ```mlir
    %w = lmopt.constant dense<1.0> : tensor<4x4xf32>
    ```
  }];
  let arguments = (ins ElementsAttr:$value);
  let results = (outs Lmopt_Tensor:$output);
  let assemblyFormat = "attr-dict $value";
  let hasFolder = 1;
}

def Lmopt_ShapeOp : Lmopt_Op<"shape", [Pure]> {
  let summary = "shape of a tensor as a 1-D i64 tensor (ONNX Shape)";
  let description = [{
    Returns dims `[start, end)` of the input's shape, with ONNX's clamping of
    negative and out-of-range `start`/`end`.
  }];
  let arguments = (ins Lmopt_Tensor:$input,
                       DefaultValuedAttr<I64Attr, "0">:$start,
                       OptionalAttr<I64Attr>:$end);
  let results = (outs Lmopt_ShapeTensor:$output);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($output)";
  let hasVerifier = 1;
  let hasFolder = 1;
}

def Lmopt_SizeOp : Lmopt_Op<"size", [Pure]> {
  let summary = "number of elements of a tensor (ONNX Size)";
  let arguments = (ins Lmopt_Tensor:$input);
  let results = (outs 0DTensorOf<[I64]>:$output);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($output)";
}

def Lmopt_ConstantOfShapeOp : Lmopt_Op<"constant_of_shape", [Pure]> {
  let summary = "tensor of a given shape filled with one value (ONNX ConstantOfShape)";
  let arguments = (ins Lmopt_ShapeTensor:$shape, TypedAttrInterface:$value);
  let results = (outs Lmopt_Tensor:$output);
  let assemblyFormat = "$shape `,` $value attr-dict `:` type($shape) `->` type($output)";
  let hasVerifier = 1;
}

def Lmopt_RangeOp : Lmopt_Op<"range", [Pure]> {
  let summary = "1-D sequence start, start+delta, ... below limit (ONNX Range)";
  let arguments = (ins Lmopt_NumericTensor:$start, Lmopt_NumericTensor:$limit,
                       Lmopt_NumericTensor:$delta);
  let results = (outs Lmopt_NumericTensor:$output);
  let assemblyFormat = [{
    $start `,` $limit `,` $delta attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Elementwise
//===----------------------------------------------------------------------===//

// Elementwise ops on constant operands fold when the result has at most
// kMaxFoldElements elements (ConstantFolding.cpp), so computed scales and
// shape-derived constants reach the fusion patterns as constants.
class Lmopt_UnaryOp<string mnemonic, string onnxName, list<Trait> traits = []>
    : Lmopt_Op<mnemonic, !listconcat(traits, [Pure, SameOperandsAndResultType])> {
  let summary = "elementwise " # mnemonic # " (ONNX " # onnxName # ")";
  let arguments = (ins Lmopt_NumericTensor:$input);
  let results = (outs Lmopt_NumericTensor:$output);
  let assemblyFormat = "$input attr-dict `:` type($output)";
  let hasFolder = 1;
}

def Lmopt_NegOp : Lmopt_UnaryOp<"neg", "Neg">;
def Lmopt_AbsOp : Lmopt_UnaryOp<"abs", "Abs">;
def Lmopt_ReluOp : Lmopt_UnaryOp<"relu", "Relu">;
// 1, -1 or the element itself where it is 0 or NaN (DeBERTa-v2's relative
// position buckets).
def Lmopt_SignOp : Lmopt_UnaryOp<"sign", "Sign">;

class Lmopt_FloatUnaryOp<string mnemonic, string onnxName>
    : Lmopt_Op<mnemonic, [Pure, SameOperandsAndResultType]> {
  let summary = "elementwise " # mnemonic # " (ONNX " # onnxName # ")";
  let arguments = (ins Lmopt_FloatTensor:$input);
  let results = (outs Lmopt_FloatTensor:$output);
  let assemblyFormat = "$input attr-dict `:` type($output)";
  let hasFolder = 1;
}

def Lmopt_ExpOp : Lmopt_FloatUnaryOp<"exp", "Exp">;
def Lmopt_LogOp : Lmopt_FloatUnaryOp<"log", "Log">;
def Lmopt_SqrtOp : Lmopt_FloatUnaryOp<"sqrt", "Sqrt">;
def Lmopt_ReciprocalOp : Lmopt_FloatUnaryOp<"reciprocal", "Reciprocal">;
def Lmopt_TanhOp : Lmopt_FloatUnaryOp<"tanh", "Tanh">;
def Lmopt_ErfOp : Lmopt_FloatUnaryOp<"erf", "Erf">;
def Lmopt_SigmoidOp : Lmopt_FloatUnaryOp<"sigmoid", "Sigmoid">;
// Rotary position embeddings (Llama and its kin) compute their tables with these.
def Lmopt_CosOp : Lmopt_FloatUnaryOp<"cos", "Cos">;
def Lmopt_SinOp : Lmopt_FloatUnaryOp<"sin", "Sin">;
// Rounding (fake-quantization graphs round to the integer grid); Round is
// to nearest, ties to even.
def Lmopt_CeilOp : Lmopt_FloatUnaryOp<"ceil", "Ceil">;
def Lmopt_FloorOp : Lmopt_FloatUnaryOp<"floor", "Floor">;
def Lmopt_RoundOp : Lmopt_FloatUnaryOp<"round", "Round">;

def Lmopt_NotOp : Lmopt_Op<"not", [Pure, SameOperandsAndResultType]> {
  let summary = "logical not (ONNX Not)";
  let arguments = (ins Lmopt_BoolTensor:$input);
  let results = (outs Lmopt_BoolTensor:$output);
  let assemblyFormat = "$input attr-dict `:` type($output)";
}

def Lmopt_IsNaNOp : Lmopt_Op<"is_nan", [Pure, SameOperandsAndResultShape]> {
  let summary = "true where an element is NaN (ONNX IsNaN)";
  let description = [{
    PyTorch's export of `scaled_dot_product_attention` (Hugging Face's default
    attention implementation) uses it to zero the probabilities of rows whose
    keys are all masked.
  }];
  let arguments = (ins Lmopt_FloatTensor:$input);
  let results = (outs Lmopt_BoolTensor:$output);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($output)";
}

def Lmopt_IdentityOp : Lmopt_Op<"identity", [Pure, SameOperandsAndResultType]> {
  let summary = "returns its input (ONNX Identity)";
  let arguments = (ins Lmopt_Tensor:$input);
  let results = (outs Lmopt_Tensor:$output);
  let assemblyFormat = "$input attr-dict `:` type($output)";
  let hasFolder = 1;
}

def Lmopt_CastOp : Lmopt_Op<"cast", [Pure, SameOperandsAndResultShape]> {
  let summary = "element type conversion (ONNX Cast)";
  let description = [{
    Converts each element to the result's element type with ONNX Cast
    semantics (round to nearest even for float narrowing, truncation toward
    zero for float to integer, nonzero to true for bool).
  }];
  let arguments = (ins Lmopt_Tensor:$input);
  let results = (outs Lmopt_Tensor:$output);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($output)";
  let hasFolder = 1;
}

class Lmopt_BroadcastBinaryOp<string mnemonic, string onnxName,
                              Type operandType, Type resultType,
                              list<Trait> traits = [], bit folds = 0>
    : Lmopt_Op<mnemonic, !listconcat(traits, [Pure])> {
  let summary = "elementwise " # mnemonic #
                " with multidirectional broadcasting (ONNX " # onnxName # ")";
  let description = [{
    Operands broadcast numpy-style: shapes are aligned on the right and a dim
    of 1 stretches to the other operand's dim. Operands share one element type.
  }];
  let arguments = (ins operandType:$lhs, operandType:$rhs);
  let results = (outs resultType:$output);
  let assemblyFormat = [{
    $lhs `,` $rhs attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
  let hasFolder = folds;
}

def Lmopt_AddOp : Lmopt_BroadcastBinaryOp<"add", "Add", Lmopt_NumericTensor,
                                          Lmopt_NumericTensor, [Commutative], 1>;
def Lmopt_SubOp : Lmopt_BroadcastBinaryOp<"sub", "Sub", Lmopt_NumericTensor,
                                          Lmopt_NumericTensor, [], 1>;
def Lmopt_MulOp : Lmopt_BroadcastBinaryOp<"mul", "Mul", Lmopt_NumericTensor,
                                          Lmopt_NumericTensor, [Commutative], 1>;
def Lmopt_DivOp : Lmopt_BroadcastBinaryOp<"div", "Div", Lmopt_NumericTensor,
                                          Lmopt_NumericTensor, [], 1>;
def Lmopt_PowOp : Lmopt_BroadcastBinaryOp<"pow", "Pow", Lmopt_NumericTensor,
                                          Lmopt_NumericTensor, [], 1>;
def Lmopt_MaxOp : Lmopt_BroadcastBinaryOp<"max", "Max", Lmopt_NumericTensor,
                                          Lmopt_NumericTensor, [Commutative], 1>;
def Lmopt_MinOp : Lmopt_BroadcastBinaryOp<"min", "Min", Lmopt_NumericTensor,
                                          Lmopt_NumericTensor, [Commutative], 1>;
def Lmopt_EqualOp : Lmopt_BroadcastBinaryOp<"equal", "Equal", Lmopt_Tensor,
                                            Lmopt_BoolTensor, [Commutative]>;
def Lmopt_LessOp : Lmopt_BroadcastBinaryOp<"less", "Less", Lmopt_NumericTensor,
                                           Lmopt_BoolTensor>;
def Lmopt_GreaterOp : Lmopt_BroadcastBinaryOp<"greater", "Greater",
                                              Lmopt_NumericTensor,
                                              Lmopt_BoolTensor>;
def Lmopt_AndOp : Lmopt_BroadcastBinaryOp<"and", "And", Lmopt_BoolTensor,
                                          Lmopt_BoolTensor, [Commutative]>;
def Lmopt_OrOp : Lmopt_BroadcastBinaryOp<"or", "Or", Lmopt_BoolTensor,
                                         Lmopt_BoolTensor, [Commutative]>;

def Lmopt_WhereOp : Lmopt_Op<"where", [Pure]> {
  let summary = "elementwise select with broadcasting (ONNX Where)";
  let arguments = (ins Lmopt_BoolTensor:$condition, Lmopt_Tensor:$x,
                       Lmopt_Tensor:$y);
  let results = (outs Lmopt_Tensor:$output);
  let assemblyFormat = [{
    $condition `,` $x `,` $y attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Matrix products
//===----------------------------------------------------------------------===//

def Lmopt_MatMulOp : Lmopt_Op<"matmul", [Pure]> {
  let summary = "matrix product with numpy semantics (ONNX MatMul)";
  let description = [{
    Rank-1 operands are promoted as numpy does; batch dims broadcast.
  }];
  let arguments = (ins Lmopt_NumericTensor:$lhs, Lmopt_NumericTensor:$rhs);
  let results = (outs Lmopt_NumericTensor:$output);
  let assemblyFormat = [{
    $lhs `,` $rhs attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Lmopt_GemmOp : Lmopt_Op<"gemm", [Pure]> {
  let summary = "alpha * op(A) * op(B) + beta * C (ONNX Gemm)";
  let arguments = (ins Lmopt_FloatTensor:$a, Lmopt_FloatTensor:$b,
                       Optional<Lmopt_FloatTensor>:$c,
                       DefaultValuedAttr<F32Attr, "1.0">:$alpha,
                       DefaultValuedAttr<F32Attr, "1.0">:$beta,
                       DefaultValuedAttr<BoolAttr, "false">:$trans_a,
                       DefaultValuedAttr<BoolAttr, "false">:$trans_b);
  let results = (outs Lmopt_FloatTensor:$output);
  let assemblyFormat = [{
    $a `,` $b (`,` $c^)? attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Reductions and normalizations
//===----------------------------------------------------------------------===//

class Lmopt_ReduceOp<string mnemonic, string onnxName>
    : Lmopt_Op<mnemonic, [Pure]> {
  let summary = "reduction over `axes` (ONNX " # onnxName # ")";
  let description = [{
    Axes are an attribute (ONNX 18 makes them an input; the importer requires
    it to be constant). Empty `axes` reduces over every dim.
  }];
  let arguments = (ins Lmopt_NumericTensor:$input,
                       DefaultValuedAttr<DenseI64ArrayAttr, "{}">:$axes,
                       DefaultValuedAttr<BoolAttr, "true">:$keepdims);
  let results = (outs Lmopt_NumericTensor:$output);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($output)";
  let hasVerifier = 1;
}

def Lmopt_ReduceMeanOp : Lmopt_ReduceOp<"reduce_mean", "ReduceMean">;
def Lmopt_ReduceSumOp : Lmopt_ReduceOp<"reduce_sum", "ReduceSum">;
def Lmopt_ReduceMaxOp : Lmopt_ReduceOp<"reduce_max", "ReduceMax">;
def Lmopt_ReduceMinOp : Lmopt_ReduceOp<"reduce_min", "ReduceMin">;

class Lmopt_SoftmaxLikeOp<string mnemonic, string onnxName>
    : Lmopt_Op<mnemonic, [Pure, SameOperandsAndResultType]> {
  let summary = mnemonic # " along one axis (ONNX " # onnxName # ", opset 13+)";
  let arguments = (ins Lmopt_FloatTensor:$input,
                       DefaultValuedAttr<I64Attr, "-1">:$axis);
  let results = (outs Lmopt_FloatTensor:$output);
  let assemblyFormat = "$input attr-dict `:` type($output)";
  let hasVerifier = 1;
}

def Lmopt_SoftmaxOp : Lmopt_SoftmaxLikeOp<"softmax", "Softmax">;
def Lmopt_LogSoftmaxOp : Lmopt_SoftmaxLikeOp<"log_softmax", "LogSoftmax">;

def Lmopt_LayerNormOp : Lmopt_Op<"layer_norm", [Pure]> {
  let summary = "layer normalization (ONNX LayerNormalization)";
  let description = [{
    Normalizes over dims `[axis, rank)`: `(x - mean) / sqrt(var + epsilon) *
    scale + bias`, with statistics in at least fp32. `scale` and `bias` have
    the normalized dims' shape. The importer maps ONNX LayerNormalization here
    and `lmopt-fuse-layer-norm` rewrites decomposed forms into it.
  }];
  let arguments = (ins Lmopt_FloatTensor:$input, Lmopt_FloatTensor:$scale,
                       Optional<Lmopt_FloatTensor>:$bias,
                       DefaultValuedAttr<I64Attr, "-1">:$axis,
                       DefaultValuedAttr<F32Attr, "1.0e-5">:$epsilon);
  let results = (outs Lmopt_FloatTensor:$output);
  let assemblyFormat = [{
    $input `,` $scale (`,` $bias^)? attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Data movement
//===----------------------------------------------------------------------===//

def Lmopt_GatherOp : Lmopt_Op<"gather", [Pure]> {
  let summary = "gathers slices along an axis (ONNX Gather)";
  let description = [{
    Output shape is `data.shape[:axis] + indices.shape + data.shape[axis+1:]`.
    Negative indices count from the end of the axis.

    A quantized `data` gathered into the same element type moves its
    integers. Gathered into `f32`, it is a row-quantized table (an embedding
    table quantized by `lmopt-quantize` with `quantize-embeddings`): 8-bit
    storage expressing `f32`, quantized per axis 0 (one scale and zero point
    per row), gathered along axis 0, each gathered row dequantized,
    `(q - zero_point[row]) * f32(scale[row])` (docs/dialect.md, "Quantized
    embedding tables").
  }];
  let arguments = (ins Lmopt_Tensor:$data, Lmopt_IndexTensor:$indices,
                       DefaultValuedAttr<I64Attr, "0">:$axis);
  let results = (outs Lmopt_Tensor:$output);
  let assemblyFormat = [{
    $data `,` $indices attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Lmopt_ReshapeOp : Lmopt_Op<"reshape", [Pure]> {
  let summary = "reshape to a shape given as a tensor (ONNX Reshape)";
  let description = [{
    `shape` follows ONNX: `-1` infers one dim, `0` copies the input dim unless
    `allowzero` is set. The result type records what is known statically.
  }];
  let arguments = (ins Lmopt_Tensor:$input, Lmopt_ShapeTensor:$shape,
                       DefaultValuedAttr<BoolAttr, "false">:$allowzero);
  let results = (outs Lmopt_Tensor:$output);
  let assemblyFormat = [{
    $input `,` $shape attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
  let hasFolder = 1;
  let hasCanonicalizer = 1;
}

def Lmopt_TransposeOp : Lmopt_Op<"transpose", [Pure]> {
  let summary = "permutes dims (ONNX Transpose)";
  let description = [{
    Output dim `i` is input dim `perm[i]`.
  }];
  let arguments = (ins Lmopt_Tensor:$input, DenseI64ArrayAttr:$perm);
  let results = (outs Lmopt_Tensor:$output);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($output)";
  let hasVerifier = 1;
  let hasFolder = 1;
  let hasCanonicalizer = 1;
}

def Lmopt_SliceOp : Lmopt_Op<"slice", [Pure, AttrSizedOperandSegments]> {
  let summary = "strided slice (ONNX Slice, opset 10+)";
  let arguments = (ins Lmopt_Tensor:$input, Lmopt_IndexTensor:$starts,
                       Lmopt_IndexTensor:$ends,
                       Optional<Lmopt_IndexTensor>:$axes,
                       Optional<Lmopt_IndexTensor>:$steps);
  let results = (outs Lmopt_Tensor:$output);
  let assemblyFormat = [{
    $input `,` $starts `,` $ends (`axes` $axes^)? (`steps` $steps^)? attr-dict
    `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Lmopt_ConcatOp : Lmopt_Op<"concat", [Pure]> {
  let summary = "joins tensors along an axis (ONNX Concat)";
  let arguments = (ins Variadic<Lmopt_Tensor>:$inputs, I64Attr:$axis);
  let results = (outs Lmopt_Tensor:$output);
  let assemblyFormat = [{
    $inputs attr-dict `:` functional-type($inputs, results)
  }];
  let hasVerifier = 1;
  let hasFolder = 1;
}

def Lmopt_SplitOp : Lmopt_Op<"split", [Pure]> {
  let summary = "splits a tensor along an axis (ONNX Split)";
  let description = [{
    Result `i` takes the next `split_sizes[i]` entries along `axis`. The ONNX
    `split` input must be constant and becomes this attribute.
  }];
  let arguments = (ins Lmopt_Tensor:$input, I64Attr:$axis,
                       DenseI64ArrayAttr:$split_sizes);
  let results = (outs Variadic<Lmopt_Tensor>:$outputs);
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def Lmopt_ExpandOp : Lmopt_Op<"expand", [Pure]> {
  let summary = "broadcasts to a shape given as a tensor (ONNX Expand)";
  let arguments = (ins Lmopt_Tensor:$input, Lmopt_ShapeTensor:$shape);
  let results = (outs Lmopt_Tensor:$output);
  let assemblyFormat = [{
    $input `,` $shape attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
  let hasFolder = 1;
}

def Lmopt_SqueezeOp : Lmopt_Op<"squeeze", [Pure]> {
  let summary = "removes dims of size 1 (ONNX Squeeze)";
  let description = [{
    `axes` is an attribute (a constant input since opset 13); empty removes
    every static dim of size 1.
  }];
  let arguments = (ins Lmopt_Tensor:$input,
                       DefaultValuedAttr<DenseI64ArrayAttr, "{}">:$axes);
  let results = (outs Lmopt_Tensor:$output);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($output)";
  let hasVerifier = 1;
}

def Lmopt_UnsqueezeOp : Lmopt_Op<"unsqueeze", [Pure]> {
  let summary = "inserts dims of size 1 (ONNX Unsqueeze)";
  let description = [{
    `axes` index the output; negative values count from the output's end.
  }];
  let arguments = (ins Lmopt_Tensor:$input, DenseI64ArrayAttr:$axes);
  let results = (outs Lmopt_Tensor:$output);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($output)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Indexing, scans and integer arithmetic
//===----------------------------------------------------------------------===//

def Lmopt_ModOp : Lmopt_Op<"mod", [Pure]> {
  let summary = "elementwise remainder with broadcasting (ONNX Mod)";
  let description = [{
    With `fmod = false` (integers only) the result takes the sign of the
    divisor, like Python's `%`; with `fmod = true` it takes the sign of the
    dividend, like C's `fmod`.
  }];
  let arguments = (ins Lmopt_NumericTensor:$lhs, Lmopt_NumericTensor:$rhs,
                       DefaultValuedAttr<BoolAttr, "false">:$fmod);
  let results = (outs Lmopt_NumericTensor:$output);
  let assemblyFormat = [{
    $lhs `,` $rhs attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Lmopt_CumSumOp : Lmopt_Op<"cumsum", [Pure, SameOperandsAndResultType]> {
  let summary = "cumulative sum along an axis (ONNX CumSum)";
  let description = [{
    The ONNX `axis` input must be constant and becomes this attribute.
    `exclusive` leaves out the current element; `reverse` sums from the end.
  }];
  let arguments = (ins Lmopt_NumericTensor:$input, I64Attr:$axis,
                       DefaultValuedAttr<BoolAttr, "false">:$exclusive,
                       DefaultValuedAttr<BoolAttr, "false">:$reverse);
  let results = (outs Lmopt_NumericTensor:$output);
  let assemblyFormat = "$input attr-dict `:` type($output)";
  let hasVerifier = 1;
}

def Lmopt_GatherElementsOp : Lmopt_Op<"gather_elements", [Pure]> {
  let summary = "gathers single elements along an axis (ONNX GatherElements)";
  let description = [{
    `output[i][j][k] = data[index][j][k]` for `axis = 0` with
    `index = indices[i][j][k]`, and likewise for other axes. `indices` has the
    rank of `data`, and the output has the shape of `indices`.
  }];
  let arguments = (ins Lmopt_Tensor:$data, Lmopt_IndexTensor:$indices,
                       DefaultValuedAttr<I64Attr, "0">:$axis);
  let results = (outs Lmopt_Tensor:$output);
  let assemblyFormat = [{
    $data `,` $indices attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Lmopt_GatherNDOp : Lmopt_Op<"gather_nd", [Pure]> {
  let summary = "gathers slices by multi-dimensional index (ONNX GatherND)";
  let description = [{
    The last dim of `indices` (static) holds index tuples of length `r` into
    the dims `[batch_dims, batch_dims + r)` of `data`. Output shape:
    `indices.shape[:-1] + data.shape[batch_dims + r:]`, the first
    `batch_dims` dims being shared by `data` and `indices`.
  }];
  let arguments = (ins Lmopt_Tensor:$data, RankedTensorOf<[I64]>:$indices,
                       DefaultValuedAttr<I64Attr, "0">:$batch_dims);
  let results = (outs Lmopt_Tensor:$output);
  let assemblyFormat = [{
    $data `,` $indices attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Lmopt_ScatterNDOp : Lmopt_Op<"scatter_nd", [Pure]> {
  let summary = "writes slices at multi-dimensional indices (ONNX ScatterND)";
  let description = [{
    The output is `data` with the slices of `updates` written over it: the
    last dim of `indices` (static, `k` at most the rank of `data`) holds
    index tuples into the leading `k` dims of `data`, and
    `updates.shape = indices.shape[:-1] + data.shape[k:]`. With `reduction`
    other than `none`, each slice is combined with what it lands on (sum,
    product, maximum or minimum), in the order of the index tuples. Negative
    indices count from the end. Indices out of range are an error where the
    op runs (the CPU's scatter_nd step checks them before writing).
  }];
  let arguments = (ins Lmopt_Tensor:$data, Lmopt_IndexTensor:$indices,
                       Lmopt_Tensor:$updates,
                       DefaultValuedAttr<Lmopt_ScatterReductionAttr,
                           "ScatterReduction::none">:$reduction);
  let results = (outs Lmopt_Tensor:$output);
  let assemblyFormat = [{
    $data `,` $indices `,` $updates attr-dict `:`
    functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Integer quantization with parameters computed at run time
//===----------------------------------------------------------------------===//

def Lmopt_DynamicQuantizeLinearOp : Lmopt_Op<"dynamic_quantize_linear", [Pure]> {
  let summary = "quantizes to uint8 with a scale computed from the input "
                "(ONNX DynamicQuantizeLinear)";
  let description = [{
    Follows ONNX DynamicQuantizeLinear (opset 11): the range
    `[min(0, min(x)), max(0, max(x))]` maps to `[0, 255]`;
    `y_scale = (max - min) / 255`, `y_zero_point = saturate(round(-min /
    y_scale))` and `y = saturate(round(x / y_scale) + y_zero_point)`, rounding
    half to even. `y` has the input's shape; scale and zero point are scalars.
    Their values are only known at run time, so they cannot live in a `quant`
    type: this is what `onnxruntime.quantization.quantize_dynamic` writes in
    front of every `MatMulInteger`.

    ```mlir
    %y, %scale, %zp = lmopt.dynamic_quantize_linear %x
        : tensor<?x?x64xf32> -> (tensor<?x?x64xui8>, tensor<f32>, tensor<ui8>)
    ```
  }];
  let arguments = (ins RankedTensorOf<[F32]>:$input);
  let results = (outs RankedTensorOf<[UI8]>:$output,
                      0DTensorOf<[F32]>:$scale,
                      0DTensorOf<[UI8]>:$zero_point);
  let assemblyFormat = [{
    $input attr-dict `:` type($input) `->` `(` type($output) `,` type($scale)
    `,` type($zero_point) `)`
  }];
  let hasVerifier = 1;
}

def Lmopt_MatMulIntegerOp : Lmopt_Op<"matmul_integer",
    [Pure, AttrSizedOperandSegments]> {
  let summary = "8-bit integer matrix product accumulated in int32 "
                "(ONNX MatMulInteger)";
  let description = [{
    Follows ONNX MatMulInteger (opset 10): `(a - a_zero_point) x (b -
    b_zero_point)` with numpy matmul semantics, accumulated in `i32`. `a` and
    `b` are `i8` or `ui8` tensors; each zero point has its matrix's element
    type and is a scalar, or for 2-D or higher operands a 1-D tensor of one
    entry per row of `a` (`[M]`) or per column of `b` (`[N]`). Absent zero
    points are 0.

    ```mlir
    %y = lmopt.matmul_integer %a, %b a_zero_point %azp b_zero_point %bzp
        : (tensor<?x?x64xui8>, tensor<64x64xi8>, tensor<ui8>, tensor<i8>)
        -> tensor<?x?x64xi32>
    ```
  }];
  let arguments = (ins RankedTensorOf<[I8, UI8]>:$a,
                       RankedTensorOf<[I8, UI8]>:$b,
                       Optional<RankedTensorOf<[I8, UI8]>>:$a_zero_point,
                       Optional<RankedTensorOf<[I8, UI8]>>:$b_zero_point);
  let results = (outs RankedTensorOf<[I32]>:$output);
  let assemblyFormat = [{
    $a `,` $b (`a_zero_point` $a_zero_point^)? (`b_zero_point` $b_zero_point^)?
    attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

#endif // LMOPT_DIALECT_LMOPT_IR_LMOPTONNXOPS_TD

//===- LmoptFusedOps.td - fused and compression lmopt ops --*- tablegen -*-===//
//
// Ops produced by lmopt's graph passes: fused transformer building blocks,
// dropout (whose meaning depends on training vs inference), and the
// quantize/dequantize pair that carries `quant` dialect types.
//
//===----------------------------------------------------------------------===//

#ifndef LMOPT_DIALECT_LMOPT_IR_LMOPTFUSEDOPS_TD
#define LMOPT_DIALECT_LMOPT_IR_LMOPTFUSEDOPS_TD

include "lmopt/Dialect/Lmopt/IR/LmoptBase.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

def Lmopt_LinearOp : Lmopt_Op<"linear", [Pure, AttrSizedOperandSegments]> {
  let summary = "fully connected layer with fused epilogue";
  let description = [{
    `output = activation(input x W + bias) + residual`, where `W` is `weight`
    (`[K, N]`) or its transpose when `transpose_weight` is set (`weight` is then
    `[N, K]`, PyTorch's `nn.Linear` layout). `input` is `[..., K]`; `bias` is
    `[N]`; `residual` has the output's shape. Produced by `lmopt-fuse-linear`
    from MatMul + Add and Gemm; lowered to one GEMM with post-ops.

    With `transpose_input`, `input` is a rank-2 `[K, M]` and the product
    reads its transpose (`output = input^T x W`, `[M, N]`): a weight
    gradient `x^T dy` reads the activations as stored instead of a
    transposed copy (`lmopt-fold-linear-transpose`). Unquantized only.

    ```mlir
    %y = lmopt.linear %x, %w bias %b {activation = #lmopt.activation<gelu>,
                                      transpose_weight = true}
        : (tensor<?x128x768xf32>, tensor<3072x768xf32>, tensor<3072xf32>)
        -> tensor<?x128x3072xf32>
    ```

    Quantized and mixed-precision forms (docs/dialect.md, "Quantized and
    mixed-precision linears"): the operand types and `input_quantization`
    select the mode, and the result, bias and residual are `f32`.

    | mode | `input` | `weight` | `input_quantization` |
    | --- | --- | --- | --- |
    | int8 dynamic per token | `f32` | `i8` per output channel, zero points 0 | `dynamic_per_token` |
    | int8 dynamic per tensor | `f32` | `i8`/`u8` per tensor or per output channel | `dynamic_per_tensor` |
    | int8 static | per-tensor `i8`/`u8` quantized `f32` | `i8` per tensor or per output channel, zero points 0 | `none` |
    | int4 weight-only | `f32` | `i4`/`u4` blocks along K (sub-channel type) | `none` |
    | bf16 / fp16 | `bf16` / `f16` | the same type | `none` |

    `dynamic_per_token` quantizes each input row (all dims but the last) to
    `i8` with scale `max|row| / 127`, zero point 0, rounding half to even (a
    row of zeros gets scale 1); `dynamic_per_tensor` quantizes the whole
    input to `u8` as ONNX DynamicQuantizeLinear does. The output is
    `activation(dequantize(q(input)) x dequantize(W) + bias) + residual`.
    An unquantized linear whose input, weight and result share one float
    type (a half-precision model imported as is) is also accepted.
  }];
  let arguments = (ins Lmopt_Tensor:$input, Lmopt_Tensor:$weight,
                       Optional<Lmopt_Tensor>:$bias,
                       Optional<Lmopt_Tensor>:$residual,
                       DefaultValuedAttr<BoolAttr, "false">:$transpose_weight,
                       DefaultValuedAttr<Lmopt_ActivationAttr,
                                         "::mlir::lmopt::Activation::none">:$activation,
                       DefaultValuedAttr<Lmopt_InputQuantizationAttr,
                           "::mlir::lmopt::InputQuantization::none">:$input_quantization,
                       DefaultValuedAttr<BoolAttr, "false">:$transpose_input);
  let results = (outs Lmopt_Tensor:$output);
  let assemblyFormat = [{
    $input `,` $weight (`bias` $bias^)? (`residual` $residual^)? attr-dict
    `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Lmopt_GeluOp : Lmopt_Op<"gelu", [Pure, SameOperandsAndResultType]> {
  let summary = "Gaussian error linear unit (ONNX Gelu, opset 20)";
  let description = [{
    `approximate = none`: `0.5 x (1 + erf(x / sqrt(2)))`;
    `approximate = tanh`: `0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))`.
  }];
  let arguments = (ins Lmopt_FloatTensor:$input,
                       DefaultValuedAttr<Lmopt_GeluApproximationAttr,
                           "::mlir::lmopt::GeluApproximation::none">:$approximate);
  let results = (outs Lmopt_FloatTensor:$output);
  let assemblyFormat = "$input attr-dict `:` type($output)";
}

def Lmopt_AttentionOp : Lmopt_Op<"attention", [Pure, AttrSizedOperandSegments]> {
  let summary = "multi-head scaled dot-product attention";
  let description = [{
    `query` is `[B, Sq, H*D]`, `key` and `value` are `[B, Sk, H*D]` with heads
    packed in the last dim; `H = num_heads`. Per head:
    `softmax(Q K^T * scale + mask) V`, heads merged back to `[B, Sq, H*D]`.
    `scale` defaults to `1/sqrt(D)`. An optional `mask` broadcasts to
    `[B, H, Sq, Sk]`: a float mask is added to the scores, an `i1` mask keeps
    positions where it is true. `causal` additionally hides keys after the
    query position (aligned to the end when `Sk > Sq`).

    An optional `bias` is a float score bias added after the scale and
    before the mask: `softmax(Q K^T * scale + bias + mask) V`, the
    relative-position bias of T5 and MPNet (which use `scale` 1 and
    `1/sqrt(D)`). It is rank 4, `[1|B, 1|H, 1|Sq, Sk]`: it broadcasts over
    batch, heads and query rows but has one element per key (a bias that is
    constant along the keys would not change the softmax). A `-inf` bias
    hides its key as a `-inf` float mask does.

    With `kv_heads_split`, `key` and `value` are instead `[B, H, Sk, D]`,
    already split into heads (e.g. a KV cache concatenated with the new keys
    on the sequence axis); `query` and the output stay packed.

    Grouped-query attention: with `num_kv_heads` = G (a divisor of H, default
    H) `key` and `value` have G heads (`[B, Sk, G*D]`, or `[B, G, Sk, D]` with
    `kv_heads_split`) and query head h reads key/value head `h / (H / G)`,
    as Llama's `repeat_kv` spells it.

    A query row in which every key is hidden (`i1` mask false, `causal`, or
    an additive mask of `-inf`) has no softmax. By default positions hidden
    by the `i1` mask or `causal` score the lowest finite float, so such a row
    averages the values uniformly, and a row hidden entirely by `-inf` in a
    float mask is NaN, as softmax is. With `zero_masked_rows` such a row
    (hidden by any mix of the three) yields zeros, as ONNX exports of
    PyTorch's `scaled_dot_product_attention` compute with
    `where(isnan(p), 0, p)` on the probabilities.
  }];
  let arguments = (ins Lmopt_FloatTensor:$query, Lmopt_FloatTensor:$key,
                       Lmopt_FloatTensor:$value, Optional<Lmopt_Tensor>:$mask,
                       Optional<Lmopt_FloatTensor>:$bias,
                       ConfinedAttr<I64Attr, [IntPositive]>:$num_heads,
                       OptionalAttr<F32Attr>:$scale,
                       DefaultValuedAttr<BoolAttr, "false">:$causal,
                       DefaultValuedAttr<BoolAttr, "false">:$kv_heads_split,
                       DefaultValuedAttr<BoolAttr, "false">:$zero_masked_rows,
                       OptionalAttr<ConfinedAttr<I64Attr, [IntPositive]>>:$num_kv_heads);
  let results = (outs Lmopt_FloatTensor:$output);
  let assemblyFormat = [{
    $query `,` $key `,` $value (`mask` $mask^)? (`bias` $bias^)? attr-dict
    `:` functional-type(operands, results)
  }];
  let extraClassDeclaration = [{
    /// Key/value heads: `num_kv_heads`, else `num_heads`.
    int64_t getKvHeads() {
      return getNumKvHeads() ? int64_t(*getNumKvHeads()) : getNumHeads();
    }
  }];
  let hasVerifier = 1;
}

def Lmopt_AttentionGradOp : Lmopt_Op<"attention_grad", [Pure]> {
  let summary = "fused backward of multi-head attention";
  let description = [{
    The gradients of `lmopt.attention %query, %key, %value mask %mask` (same
    `num_heads`, `scale`, `causal` and `zero_masked_rows`) with respect to
    query, key and value, given `output_grad`, the gradient of its output.
    Flash attention's backward: per head the probabilities `P` are recomputed
    from the queries and keys with the forward's softmax (so nothing of the
    size of the scores is saved between forward and backward), then
    `dV = P^T dO`, `dP = dO V^T`, `dS = P * (dP - rowsum(dP * P)) * scale`,
    `dQ = dS K`, `dK = dS^T Q`.

    `query` and `output_grad` are `[B, Sq, H*D]`, `key` and `value`
    `[B, Sk, H*D]` (one head size D for all four), heads packed in the last
    dim; the results have the shapes of query, key and value. The mask
    broadcasts to `[B, H, Sq, Sk]` as the forward's does. There is no score
    bias, grouped-query or head-split form: `lmopt-autodiff` keeps the
    decomposed gradient for those. A row that `zero_masked_rows` zeroes in
    the forward (every key hidden) has zero gradient.

    ```mlir
    %dq, %dk, %dv = lmopt.attention_grad %q, %k, %v, %dy mask %m {num_heads = 12 : i64}
        : (tensor<8x128x768xf32>, tensor<8x128x768xf32>, tensor<8x128x768xf32>,
           tensor<8x128x768xf32>, tensor<8x1x1x128xi1>)
        -> (tensor<8x128x768xf32>, tensor<8x128x768xf32>, tensor<8x128x768xf32>)
    ```
  }];
  let arguments = (ins Lmopt_FloatTensor:$query, Lmopt_FloatTensor:$key,
                       Lmopt_FloatTensor:$value, Lmopt_FloatTensor:$output_grad,
                       Optional<Lmopt_Tensor>:$mask,
                       ConfinedAttr<I64Attr, [IntPositive]>:$num_heads,
                       OptionalAttr<F32Attr>:$scale,
                       DefaultValuedAttr<BoolAttr, "false">:$causal,
                       DefaultValuedAttr<BoolAttr, "false">:$zero_masked_rows);
  let results = (outs Lmopt_FloatTensor:$query_grad,
                      Lmopt_FloatTensor:$key_grad,
                      Lmopt_FloatTensor:$value_grad);
  let assemblyFormat = [{
    $query `,` $key `,` $value `,` $output_grad (`mask` $mask^)? attr-dict
    `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Lmopt_SkipLayerNormOp : Lmopt_Op<"skip_layer_norm", [Pure]> {
  let summary = "residual add followed by layer normalization";
  let description = [{
    `sum = input + skip`; `output = layer_norm(sum, scale, bias)` over the last
    dim. `skip` has the input's shape or broadcasts to it (numpy rules; e.g. a
    `[1, S, H]` position embedding added to `[B, S, H]` token embeddings), and
    both results have the input's type. Both are returned because the sum
    usually feeds the next residual connection. Same semantics as ONNX
    Runtime's `com.microsoft.SkipLayerNormalization` without its optional bias
    input.
  }];
  let arguments = (ins Lmopt_FloatTensor:$input, Lmopt_FloatTensor:$skip,
                       Lmopt_FloatTensor:$scale, Optional<Lmopt_FloatTensor>:$bias,
                       DefaultValuedAttr<F32Attr, "1.0e-5">:$epsilon);
  let results = (outs Lmopt_FloatTensor:$output, Lmopt_FloatTensor:$sum);
  let assemblyFormat = [{
    $input `,` $skip `,` $scale (`,` $bias^)? attr-dict
    `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Lmopt_RmsNormOp : Lmopt_Op<"rms_norm", [Pure]> {
  let summary = "root-mean-square normalization (ONNX RMSNormalization, opset 23)";
  let description = [{
    `x / sqrt(mean(x^2 over [axis, rank)) + epsilon) * scale`.
  }];
  let arguments = (ins Lmopt_FloatTensor:$input, Lmopt_FloatTensor:$scale,
                       DefaultValuedAttr<I64Attr, "-1">:$axis,
                       DefaultValuedAttr<F32Attr, "1.0e-5">:$epsilon);
  let results = (outs Lmopt_FloatTensor:$output);
  let assemblyFormat = [{
    $input `,` $scale attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Lmopt_RotaryOp : Lmopt_Op<"rotary", [Pure]> {
  let summary = "rotary position embedding, rotate-half form";
  let description = [{
    `input * cos + rotate_half(input) * sin`, where `rotate_half` of the last
    dim `[x1, x2]` (two halves) is `[-x2, x1]`: the form of Llama, Mistral,
    Qwen2 and GPT-NeoX in Hugging Face transformers. `cos` and `sin` share
    one type and broadcast (numpy rules) to `input`, whose last dim is
    static and even; the result has the input's type.
    `lmopt-fuse-rotary` produces it.

    ```mlir
    %q = lmopt.rotary %x, %cos, %sin : (tensor<?x4x?x16xf32>, tensor<1x1x?x16xf32>, tensor<1x1x?x16xf32>) -> tensor<?x4x?x16xf32>
    ```
  }];
  let arguments = (ins Lmopt_FloatTensor:$input, Lmopt_FloatTensor:$cos,
                       Lmopt_FloatTensor:$sin);
  let results = (outs Lmopt_FloatTensor:$output);
  let assemblyFormat = [{
    $input `,` $cos `,` $sin attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Lmopt_DropoutOp : Lmopt_Op<"dropout"> {
  let summary = "dropout (ONNX Dropout, opset 12+)";
  let description = [{
    In training (`training = true`) each element is zeroed with probability
    `ratio` and the rest scaled by `1/(1-ratio)`; `mask` is true where kept.
    Otherwise the op is the identity and `mask` is all true. Because it draws
    random numbers in training it is not `Pure`; canonicalization removes it
    when `training` is false or `ratio` is 0.
  }];
  let arguments = (ins Lmopt_FloatTensor:$input,
                       DefaultValuedAttr<F32Attr, "0.5">:$ratio,
                       DefaultValuedAttr<BoolAttr, "false">:$training,
                       OptionalAttr<I64Attr>:$seed);
  let results = (outs Lmopt_FloatTensor:$output, Lmopt_BoolTensor:$mask);
  let assemblyFormat = [{
    $input attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
  let hasCanonicalizer = 1;
}

//===----------------------------------------------------------------------===//
// Quantization
//===----------------------------------------------------------------------===//

def Lmopt_QuantizeOp : Lmopt_Op<"quantize", [Pure, SameOperandsAndResultShape]> {
  let summary = "quantizes a float tensor to a `quant` element type";
  let description = [{
    The result's element type is a `!quant.uniform` (per tensor or per axis)
    whose expressed type is the input's element type; scale and zero point live
    in that type (ONNX QuantizeLinear with constant parameters).
  }];
  let arguments = (ins Lmopt_FloatTensor:$input);
  let results = (outs Lmopt_Tensor:$output);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($output)";
  let hasVerifier = 1;
  let hasFolder = 1;
}

def Lmopt_DequantizeOp : Lmopt_Op<"dequantize", [Pure, SameOperandsAndResultShape]> {
  let summary = "dequantizes a `quant` element type back to its float type";
  let arguments = (ins Lmopt_Tensor:$input);
  let results = (outs Lmopt_FloatTensor:$output);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($output)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Training
//===----------------------------------------------------------------------===//

def Lmopt_AdamWOp : Lmopt_Op<"adamw", [Pure,
    AllTypesMatch<["param", "grad", "m", "v", "new_param", "new_m",
                   "new_v"]>,
    AllTypesMatch<["lr", "step_size", "bias_correction2_sqrt", "grad_scale",
                   "clip_coef"]>]> {
  let summary = "one AdamW update of a parameter and its moments";
  let description = [{
    torch.optim.AdamW's update of one parameter, in float32 and in the order
    of its operations (`include/lmopt/Format/AdamW.h`): with
    `g = grad * grad_scale * clip_coef`, the parameter decays by
    `1 - lr * weight_decay`, `new_m = m + (g - m) * (1 - beta1)`,
    `new_v = v * beta2 + g * g * (1 - beta2)` and
    `new_param = param - step_size * new_m / (sqrt(new_v) /
    bias_correction2_sqrt + epsilon)`. The host computes the step's
    scalars (`step_size = lr / (1 - beta1^t)`,
    `bias_correction2_sqrt = sqrt(1 - beta2^t)`). The training compiler
    writes one per parameter in `optimizer_step`; the CPU runs it as one
    multi-threaded pass that updates the states in place.

    ```mlir
    %p2, %m2, %v2 = lmopt.adamw %p, %g, %m, %v, %lr, %step, %bc2, %scale, %coef
        {beta1 = 0.9, beta2 = 0.999, epsilon = 1.0e-8, weight_decay = 0.01}
        : tensor<768x768xf32>, tensor<f32>
    ```
  }];
  let arguments = (ins F32Tensor:$param, F32Tensor:$grad, F32Tensor:$m,
                       F32Tensor:$v, 0DTensorOf<[F32]>:$lr,
                       0DTensorOf<[F32]>:$step_size,
                       0DTensorOf<[F32]>:$bias_correction2_sqrt,
                       0DTensorOf<[F32]>:$grad_scale,
                       0DTensorOf<[F32]>:$clip_coef, F64Attr:$beta1,
                       F64Attr:$beta2, F64Attr:$epsilon,
                       F64Attr:$weight_decay);
  let results = (outs F32Tensor:$new_param, F32Tensor:$new_m,
                      F32Tensor:$new_v);
  let assemblyFormat = [{
    $param `,` $grad `,` $m `,` $v `,` $lr `,` $step_size `,`
    $bias_correction2_sqrt `,` $grad_scale `,` $clip_coef attr-dict `:`
    type($param) `,` type($lr)
  }];
  let hasVerifier = 1;
}

def Lmopt_DropoutMaskOp : Lmopt_Op<"dropout_mask", [Pure]> {
  let summary = "a dropout keep-mask from a counter-based generator";
  let description = [{
    True where element `i` (row-major) of a tensor shaped like `like` is
    kept: `uniform(seed, stream, i) >= ratio`, with `uniform` the top 24
    bits of the first output of Philox4x32-10 on counter `(i mod 2^32,
    i / 2^32, stream, 0)` and key `(seed mod 2^32, seed / 2^32)`, over 2^24
    (`include/lmopt/Format/Philox.h`). A pure function of its operands, so
    the backward pass, a replay and every device see the same mask. The
    training compiler writes one per training-mode dropout, each with its
    own `stream`, and the seed as an input of the step.
  }];
  let arguments = (ins Lmopt_Tensor:$like, 0DTensorOf<[I64]>:$seed,
                       F32Attr:$ratio, I64Attr:$stream);
  let results = (outs Lmopt_BoolTensor:$mask);
  let assemblyFormat = [{
    $like `,` $seed attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Lmopt_GatherGradOp : Lmopt_Op<"gather_grad", [Pure]> {
  let summary = "gradient of a row gather: rows scatter-added into zeros";
  let description = [{
    The gradient of `lmopt.gather %table, %indices` along axis 0 with respect
    to the table (an embedding's): `output` starts as zeros of its static
    shape `[N, D...]`, then for each position `p` of `indices`,
    `output[indices[p]] += grad[p]`. `grad` has shape
    `indices.shape ++ [D...]`; a negative index counts from the end, as in
    Gather. Written by `lmopt-autodiff`.

    ```mlir
    %g = lmopt.gather_grad %dy, %ids
        : (tensor<?x?x64xf32>, tensor<?x?xi64>) -> tensor<1000x64xf32>
    ```
  }];
  let arguments = (ins Lmopt_FloatTensor:$grad, Lmopt_IndexTensor:$indices);
  let results = (outs Lmopt_FloatTensor:$output);
  let assemblyFormat = [{
    $grad `,` $indices attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

#endif // LMOPT_DIALECT_LMOPT_IR_LMOPTFUSEDOPS_TD

//===- Passes.td - lmopt graph passes ----------------------*- tablegen -*-===//

#ifndef LMOPT_DIALECT_LMOPT_TRANSFORMS_PASSES_TD
#define LMOPT_DIALECT_LMOPT_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def FoldConstantsPass : Pass<"lmopt-fold-constants"> {
  let summary = "Compute at compile time what depends on constants only";
  let description = [{
    Replaces an op whose operands are all constants by the constant it
    computes, when its results are static f32 tensors no larger than its
    distinct operands together and at most 16M elements, and every operand
    above 64 KiB dies with the fold (read by that op only, or computed by an
    earlier fold): a fold never grows the model, and a reshape of a weight
    stays a view of it. Linears (bias and transposed weight included, no activation
    or residual) are computed in f32 with f32 accumulation; every other op
    through the reference evaluator, in double rounded to f32. DeBERTa's
    relative-position projections (the layer's Q and K projections of the
    layer-normed position embeddings, `[2k, hidden]` rows per layer) are
    such linears: computed once here instead of on every run.

    Statistics: the ops folded, and the linears among them.
  }];
  let dependentDialects = ["::mlir::lmopt::LmoptDialect"];
  let statistics = [
    Statistic<"numFolded", "folded", "Number of ops replaced by constants">,
    Statistic<"numLinears", "linears", "Number of linears among them">
  ];
}

def EliminateDropoutPass : Pass<"lmopt-eliminate-dropout"> {
  let summary = "Remove dropout that is inert at inference";
  let description = [{
    Replaces every `lmopt.dropout` that is not in training mode (or whose
    ratio is 0) by its input. A used `mask` result becomes an all-true tensor:
    a constant when its shape is static, `constant_of_shape(shape(input))`
    otherwise, so the pass succeeds on dynamic batch and sequence dims.
    Training dropouts with a nonzero ratio are left alone; use
    `lmopt-disable-dropout` to turn those off first.

    Precondition: none. Runs on any op, so it applies to every function of a
    module.
  }];
  let dependentDialects = ["::mlir::lmopt::LmoptDialect"];
  let statistics = [
    Statistic<"numRemoved", "removed", "Number of dropouts removed">,
    Statistic<"numKept", "kept", "Number of training dropouts kept">
  ];
}

def DisableDropoutPass : Pass<"lmopt-disable-dropout"> {
  let summary = "Set the ratio of every dropout to 0, except those kept";
  let description = [{
    For training graphs: turns dropout off (ratio 0, so canonicalization
    removes it) while keeping training mode for the rest of the graph, the
    graph-level equivalent of setting `p = 0` on every `nn.Dropout` of a
    PyTorch model. `keep=name1,name2` lists dropouts (by node name, as the
    importer's locations carry them) to leave unchanged; a name that matches
    no dropout is an error.
  }];
  let options = [
    ListOption<"keep", "keep", "std::string",
               "Node names of dropouts to leave unchanged">
  ];
}

def FuseGeluPass : Pass<"lmopt-fuse-gelu"> {
  let summary = "Fuse decomposed GELU subgraphs into lmopt.gelu";
  let description = [{
    Recognizes the erf form `x * 0.5 * (1 + erf(x / sqrt(2)))` and the tanh
    approximation `x * 0.5 * (1 + tanh(sqrt(2/pi) * (x + 0.044715 x^3)))`, with
    the products in any order, `x / sqrt(2)` or `x * (1/sqrt(2))`, and the cube
    as `Pow(x, 3)` or `x * x * x`. Constants must match to 1e-4.

    Records each fusion as `gelu` in the fusion report, and each erf or tanh
    that starts like a GELU but does not complete one as a near miss.
  }];
  let dependentDialects = ["::mlir::lmopt::LmoptDialect"];
}

def FuseRotaryPass : Pass<"lmopt-fuse-rotary"> {
  let summary = "Fuse rotate-half rotary position embeddings into lmopt.rotary";
  let description = [{
    Recognizes `x * cos + rotate_half(x) * sin` with
    `rotate_half(x) = concat(-x[..., D/2:], x[..., :D/2])` along the last dim
    (static and even), as Hugging Face's Llama, Mistral, Qwen2 and GPT-NeoX
    apply rotary embeddings to the queries and keys of each layer. The
    products and the sum may take their operands in either order; the halves
    must be unit-step slices with constant bounds, and the tables must
    broadcast to `x` without widening it. Run after canonicalization, which
    folds the exporters' shape arithmetic into those constants.

    Records each fusion as `rotary` in the fusion report, and each
    rotate_half that does not complete the pattern as a near miss.
  }];
  let dependentDialects = ["::mlir::lmopt::LmoptDialect"];
}

def FuseLinearPass : Pass<"lmopt-fuse-linear"> {
  let summary = "Fuse matrix products and their epilogues into lmopt.linear";
  let description = [{
    Rewrites `matmul(x, W)` with a rank-2 `W` (or `transpose(Wt)`, giving
    `transpose_weight`) and ONNX `Gemm` with alpha = beta = 1 into
    `lmopt.linear`, then folds into it, one step at a time: a following add
    of a 1-D bias, a following `gelu` or `relu` (the activation epilogue), and
    a following add of a same-shaped residual. A value is only folded when
    the linear is its single producer and has no other user; a residual add
    whose sum feeds a layer norm is left for `lmopt-fuse-skip-layer-norm`.
    Run `lmopt-fuse-gelu` first so decomposed GELUs reach the epilogue.

    Fusion report kinds: `linear`, `linear_bias`, `linear_activation`,
    `linear_residual`.
  }];
  let dependentDialects = ["::mlir::lmopt::LmoptDialect"];
}

def DecomposeGemmPass : Pass<"lmopt-decompose-gemm"> {
  let summary = "Rewrite the Gemms left after linear fusion as matmuls";
  let description = [{
    `gemm(A, B, C)` becomes `matmul(op(A), op(B))`, times `alpha` when it is
    not 1, plus `beta * C` when there is a C and beta is not 0 (`op` a
    `[1, 0]` transpose where `trans_a`/`trans_b` ask for one). Run after
    `lmopt-fuse-linear`, which turns the Gemms of Linear layers (constant B,
    alpha = beta = 1) into linears; the compiler runs it before planning,
    so a Gemm with a run-time B or scalings other than 1 runs as a matrix
    product and a kernel instead of being refused.
  }];
  let dependentDialects = ["::mlir::lmopt::LmoptDialect"];
}

def FoldLinearTransposePass : Pass<"lmopt-fold-linear-transpose"> {
  let summary = "Let a matrix product read its transposed input in place";
  let description = [{
    Rewrites a product whose left operand is a rank-2 `transpose` (perm
    `[1, 0]`) so that it reads the transpose's input as stored:
    `matmul(transpose(x), W)` and `linear(transpose(x), W)` with a rank-2,
    statically shaped `x` and `W` become `linear(x, W) {transpose_input}`.
    The backward pass's weight gradients (`x^T dy`) have this form; the
    library then reads `x` through its strides instead of a transposed copy
    that a generated kernel would write. Quantized linears, integer
    products, dynamic dims (the step needs the contraction length when it is
    built) and other permutations are left alone. The transpose stays while
    another op reads it.

    `lmopt-compile --train` runs it after differentiation (and after the
    bf16 narrowing). Fusion report kind: `linear_transposed_input`.
  }];
  let dependentDialects = ["::mlir::lmopt::LmoptDialect"];
}

def ExposeIntermediatesPass : Pass<"lmopt-expose-intermediates"> {
  let summary = "Return chosen intermediate values from @main as extra results";
  let description = [{
    Makes values inside @main extra results, after its own, so a bundle
    outputs them (activations for distillation, or to compare with a
    reference); `lmopt.output_names` gets their names.

    * `values=a,b`: the results of the ops whose location names `a`, `b`
      (the ONNX node's name the importer records, or its first output's
      when the node has none), each returned under that name; of an op
      with several results, those that have readers (all when none has),
      as `a:0`, `a:1`, ... when more than one. The names are the
      ones left after the graph pipeline: a fused node's name may be gone.
    * `hidden-states`: for a stack of post-norm encoder layers (BERT,
      RoBERTa, MiniLM, DistilBERT), the input of each layer and the last
      layer's output, `hidden_state.0` to `hidden_state.L`, as Hugging
      Face's `output_hidden_states` returns them.

    A name no op carries, a model without post-norm encoder layers for
    `hidden-states`, and a function other than @main are errors naming
    them; nothing is changed then.
  }];
  let dependentDialects = ["::mlir::lmopt::LmoptDialect"];
  let options = [
    ListOption<"values", "values", "std::string",
               "Location names of the ops whose results to return">,
    Option<"hiddenStates", "hidden-states", "bool", "false",
           "Return each encoder layer's input and the last one's output">,
  ];
}

def PrunePass : Pass<"lmopt-prune"> {
  let summary = "Remove attention heads and FFN neurons, shrinking the matrices";
  let description = [{
    Structured pruning that makes the model smaller, not masked: the
    weights of the removed units are cut out of the matrices, so every
    product, the attention's head count and the bundle shrink.

    * `ffn=R`: in each feed-forward pair `linear(linear(x, W1, b1,
      act), W2, b2 [, residual])`, the inner linear's only reader being the
      outer one and its activation elementwise (none, relu, gelu), removes
      `floor(R * F)` of the `F` intermediate neurons: columns of `W1`
      (rows when `transpose_weight`), entries of `b1`, rows of `W2`
      (columns when transposed).
    * `heads=R`: in each `lmopt.attention` whose query, key and value are
      the three equal parts of one `lmopt.split` of a linear's output along
      the last dim (`lmopt-fuse-qkv`'s form) and whose output only a linear
      reads, removes `floor(R * H)` of the `H` heads: their columns in each
      of the QKV linear's three parts and bias, their rows of the output
      projection; `num_heads` drops. A mask with a head dim other than 1
      is left alone (near miss).

    * `keep-layers=i,j,...`: keeps only these encoder layers (numbered from
      0 in the order of their attentions) and drops the others whole, the
      layer reduction a DistilBERT-style student starts from. A dropped
      layer must be a post-norm encoder layer: `attention` on projections
      of the layer input `x`, an output linear, `skip_layer_norm` with
      residual `x`, a two-linear FFN and a second `skip_layer_norm` with the
      first's output as residual; its output's readers then read `x`. An
      index out of range, a repeated or unsorted list, or a layer of
      another shape is an error naming it.
    * `layers=N` (or a fraction `layers=F`, 0 < F < 1, keeping
      `ceil(F * L)` of the `L` layers): keeps the `N` encoder layers of
      highest block importance (ShortGPT's Block Influence: 1 - the mean
      cosine between a layer's input and output hidden states over the
      calibration tokens), ties to the lower index, and drops the others as
      `keep-layers` would. Each layer's attention must carry the score as
      `lmopt.block_importance` (a calibration run, `lmopt-compile
      --calibration`, attaches it); one without it is an error naming the
      layer. Each layer gets a remark with its score and whether it stays.
      Not together with `keep-layers`.

    Importance (`criterion=`): `magnitude` (the default), the L2 norm
    of the weights that go away with the unit (a neuron's `W1` column and
    `W2` row; a head's Q, K and V columns and output rows; biases not
    counted); `wanda`, the sum over those weights of `|W|` times the L2
    norm over the calibration tokens of the input feature each multiplies;
    `activation` (Minitron), a neuron's mean `|a|` over the tokens, a
    head's mean L2 norm of its slice of the attention output; `gradient`
    (Michel et al.), the sum over labelled calibration samples of
    `|dL/dm|`, `m` a mask of ones on the neuron's activation or the head's
    slice of the attention output and `L` the training loss. The last
    three read the statistics a calibration run attaches to each linear as
    `lmopt.activation_stats` (`lmopt-compile --calibration`); a linear
    without them is an error naming it. The attribute is removed. The most
    important units stay, ties to the lower index, in their original
    order. `multiple=M` rounds the kept count up to a
    multiple of `M` (at most the original count), for GEMM-friendly sizes.

    `sparsity=N:M` (2:4, the pattern sparse tensor cores use; M 4, 8 or
    16) then keeps, in every group of M consecutive input features of each
    output of every linear, the N weights of highest importance (`|W|`
    for `magnitude`, `|W|·‖X_k‖` for `wanda`; other criteria are an error)
    and zeroes the others, storing the weight as `[N, K]`
    (`transpose_weight`) so that each group is contiguous; the bundle
    stores such weights compressed (`transpose-sparse=false` keeps the
    layout, as training does so that the trained weights export to the
    source model's initializers). Each new weight constant carries
    `lmopt.sparsity = "N:M"`: a training step keeps its zeros. A linear whose weight is shared, not
    f32, or whose K is not whole groups is a near miss; report kind
    `sparse_linears`, one remark per linear.

    The weights must be constant `f32` with static shapes: run it after
    `lmopt-optimize-pipeline` and before quantization. Each pruned layer
    gets a remark (units kept, parameters removed); fusion report kinds
    `pruned_ffn` and `pruned_heads` count the layers (`dropped_layers` the
    dropped ones), with near misses for
    candidates left alone. Ratios outside [0, 1) are errors.
  }];
  let dependentDialects = ["::mlir::lmopt::LmoptDialect"];
  let options = [
    Option<"ffn", "ffn", "double", "0.0",
           "Fraction of each FFN's intermediate neurons to remove, in [0, 1)">,
    Option<"heads", "heads", "double", "0.0",
           "Fraction of each attention's heads to remove, in [0, 1)">,
    Option<"criterion", "criterion", "std::string", "\"magnitude\"",
           "Importance of a unit: magnitude, wanda, activation or gradient">,
    Option<"multiple", "multiple", "int64_t", "1",
           "Round each kept count up to a multiple of this">,
    Option<"sparsity", "sparsity", "std::string", "\"\"",
           "N:M semi-structured sparsity of every linear's weight (2:4)">,
    Option<"transposeSparse", "transpose-sparse", "bool", "true",
           "Store sparsified weights as [N, K] (contiguous groups, what the "
           "bundle compresses); false keeps their layout (training)">,
    ListOption<"keepLayers", "keep-layers", "int64_t",
               "Encoder layers to keep, ascending (default: all)">,
    Option<"layers", "layers", "double", "0.0",
           "Encoder layers to keep by block importance: a count, or a "
           "fraction in (0, 1) (default: all)">,
  ];
}

def EmitReportPass : Pass<"lmopt-emit-report", "::mlir::ModuleOp"> {
  let summary = "Write the fusion report collected by the graph passes";
  let description = [{
    Writes what the fusion passes that ran before it applied, per fusion kind,
    and each near miss (a subgraph that matched partially) with its node name
    and the reason it was rejected. `output=-` prints a table to standard
    output; a path ending in `.json` gets JSON, any other path the table.
    `lmopt-opt --lmopt-report=<file|->` appends this pass to the pipeline.
  }];
  let options = [
    Option<"output", "output", "std::string", /*default=*/"\"-\"",
           "Where to write the report: '-' or a file path">
  ];
}

def FuseAttentionPass : Pass<"lmopt-fuse-attention"> {
  let summary = "Fuse the scaled-dot-product attention subgraph into attention";
  let description = [{
    Anchors on each `lmopt.softmax` over the last axis of rank-4 scores and
    walks the exported subgraph: head-split reshapes and transposes of Q, K
    and V (`[B, S, H*D]` packed, constant or run-time shape operands), the
    `Q x K^T` matmul, a scale by constant (`Mul`/`Div` on the scores, or on
    Q and/or K before the matmul), an additive float mask, a boolean mask
    through `where(cond, scores, -inf or lowest)` (a slice of a constant
    lower-triangular buffer becomes `causal`), the context matmul, and the
    head-merge transpose and reshape, which becomes one `lmopt.attention`.
    When both K and V are a cache `[B, H, P, D]` concatenated on the sequence
    axis with proven new heads (past key/values), the concats stay and feed
    the op as head-split key and value (`kv_heads_split`).
    `where(is_nan(p), 0, p)` on the probabilities (PyTorch's SDPA export)
    becomes `zero_masked_rows`, provided no mask fills the scores with the
    lowest float instead of -inf; an additive mask `where(cond, 0, fill)`
    becomes the boolean `cond` where both give fully masked rows the same
    value, and a reshape of the context heads to their own shape is looked
    through.
    Anything not provably equivalent is left alone and recorded as a near
    miss with the reason in the fusion report (kind "attention").

    Precondition: dropout on the probabilities was removed
    (`lmopt-eliminate-dropout`); Q, K and V projections may already be
    fused linears.
  }];
  let dependentDialects = ["::mlir::lmopt::LmoptDialect"];
}

def FuseQkvPass : Pass<"lmopt-fuse-qkv"> {
  let summary = "Merge linears that share an input into one linear and a split";
  let description = [{
    Two or more `lmopt.linear` ops reading the same value, with constant
    weights of the same layout, no activation and no residual, become one
    `lmopt.linear` whose weight (and bias, zeros where one was missing) is
    the concatenation along the output dim, followed by `lmopt.split` on the
    last axis. Inputs still read by several linears are recorded as near
    misses in the fusion report (kind "qkv").

    Precondition: projections were fused by `lmopt-fuse-linear`.
  }];
  let dependentDialects = ["::mlir::lmopt::LmoptDialect"];
}

def FuseLayerNormPass : Pass<"lmopt-fuse-layer-norm"> {
  let summary = "Fuse decomposed layer and RMS normalizations";
  let description = [{
    Rewrites `(x - mean(x)) / sqrt(mean((x - mean(x))^2) + eps) * gamma + beta`
    into `lmopt.layer_norm`, and `x / sqrt(mean(x^2) + eps) * gamma` into
    `lmopt.rms_norm`: squares as `Pow(v, 2)` or `Mul(v, v)`, the division as
    `Div` or as `Mul` by `Reciprocal` (or `1 / sqrt`), gamma and beta
    optional (a missing scale becomes ones). Statistics taken in f32 around a
    narrower input, `Cast(x -> f32) ... Cast(-> type of x)`, fuse on `x`.

    Preconditions for an exact rewrite, each a near miss otherwise: both
    means reduce the same trailing dims with keepdims; epsilon is a constant;
    statistics are at least f32; gamma and beta broadcast to the normalized
    dims; no intermediate value has other users. Records `layer_norm` and
    `rms_norm` in the fusion report, with the ReduceMean that starts the
    subgraph as the node.
  }];
  let dependentDialects = ["::mlir::lmopt::LmoptDialect"];
}

def FuseSkipLayerNormPass : Pass<"lmopt-fuse-skip-layer-norm"> {
  let summary = "Fuse a residual or embedding add into the layer norm after it";
  let description = [{
    Rewrites `layer_norm(add(a, b))` over the last dim with 1-D scale and bias
    into `lmopt.skip_layer_norm(a, b)`; other users of the add use its `sum`
    result. For an embedding sum `add(add(word, position), token_type)` the
    inner add becomes the input and the outer add is absorbed. Both operands
    must have the sum's shape: an operand that broadcasts is a near miss.
    Dynamic dims count as equal unless the operand's producers (Gather
    indices, unsliced Slice dims, same-shape ops) show a static 1.
    Records `skip_layer_norm` in the fusion report, with the layer norm as the
    node.

    Precondition: layer norms are fused (`lmopt-fuse-layer-norm`).
  }];
  let dependentDialects = ["::mlir::lmopt::LmoptDialect"];
}

def QuantizePass : Pass<"lmopt-quantize"> {
  let summary = "Quantize the weights of lmopt.linear (int8, int4, bf16, fp16)";
  let description = [{
    Rewrites every `lmopt.linear` with an `f32` input and a constant `f32`
    weight (`dense` or `dense_resource`) into the quantized form of `mode`
    (docs/dialect.md, "Quantized and mixed-precision linears"):

    * `int8-dynamic`: `i8` weight per output channel, symmetric (scale
      `max|w| / 127`), input quantized per token at run time;
    * `int8-dynamic-per-tensor`: the same weight, input quantized per tensor
      as ONNX DynamicQuantizeLinear does;
    * `int8-static`: the same weight, input quantized by `lmopt.quantize` to
      the `u8` scale and zero point of its range in `calibration-table`;
    * `int4-weight`: `i4` (symmetric, scale `max|w| / 7`) or `u4` (with a
      zero point) blocks of `block-size` along K, input unchanged;
    * `bf16`, `fp16`: weight converted, input cast by `lmopt.cast`.

    With `attention=bf16`, or `auto` (the default) in mode `bf16`, each
    `lmopt.attention` also gets the unit attribute `bf16_products`: its two
    products may run in bf16 with f32 accumulation, the softmax staying
    f32. `attention=f32` leaves every attention as it is.

    Integer weights become an integer `lmopt.constant` and `quant.scast`;
    rounding is half to even. `exclude` lists globs matched against each
    linear's layer name (the first name in its location); such linears, and
    linears whose weight is not a constant `f32`, are left as they are (with
    a remark for the latter), as are int4 linears whose K the block size does
    not divide; in `bf16`, an attention whose name an `exclude` glob
    matches keeps f32 products. NaN or Inf in a weight, and a linear
    without an entry in the
    calibration table, are errors. Format of the table, and the summary in
    the statistics: docs/quantization.md.

    With `quantize-embeddings`, every `lmopt.gather` along axis 0 whose
    data is a constant `f32` table of rank >= 2 and at least
    `embedding-min-elements` (default 4096) elements (word and position
    embeddings, not token-type ones) also gets an `i8`
    table with one symmetric scale per row (`max|row| / 127`, 1 for a zero
    row) and gathers dequantized rows; `exclude` globs match the gather's
    name. This holds in every mode.

    Precondition: `lmopt-fuse-linear` (products that are not linears stay
    float).
  }];
  let dependentDialects = ["::mlir::lmopt::LmoptDialect",
                           "::mlir::quant::QuantDialect"];
  let options = [
    Option<"mode", "mode", "std::string", "\"int8-dynamic\"",
           "int8-dynamic, int8-dynamic-per-tensor, int8-static, int4-weight, "
           "bf16 or fp16">,
    Option<"blockSize", "block-size", "int64_t", "32",
           "int4: block length along K (32, 64 or 128)">,
    Option<"symmetric", "symmetric", "bool", "true",
           "int4: signed blocks with zero point 0 (else u4 with zero points)">,
    Option<"perTensorWeights", "per-tensor-weights", "bool", "false",
           "int8: one weight scale per matrix instead of per output channel">,
    ListOption<"exclude", "exclude", "std::string",
               "Globs of layer names to leave in f32">,
    Option<"calibrationTable", "calibration-table", "std::string", "\"\"",
           "int8-static: JSON file of input ranges per layer name">,
    Option<"quantizeEmbeddings", "quantize-embeddings", "bool", "false",
           "Also quantize constant f32 gather tables of at least "
           "embedding-min-elements elements to i8 with one scale per row">,
    Option<"embeddingMinElements", "embedding-min-elements", "int64_t",
           "4096", "quantize-embeddings: smaller tables stay f32">,
    Option<"attention", "attention", "std::string", "\"auto\"",
           "bf16 products in lmopt.attention: auto (in mode bf16), bf16 "
           "(in every mode) or f32 (never)">
  ];
  let statistics = [
    Statistic<"numQuantized", "quantized", "Linears quantized">,
    Statistic<"numNotConstant", "skipped-not-constant",
              "Linears skipped: weight not a constant f32">,
    Statistic<"numExcluded", "skipped-excluded",
              "Linears skipped: name matched by exclude">,
    Statistic<"numBlockSize", "skipped-block-size",
              "Linears skipped: block size does not divide K">,
    Statistic<"weightBytesBefore", "weight-bytes-before",
              "Bytes of the quantized weights before (f32)">,
    Statistic<"weightBytesAfter", "weight-bytes-after",
              "Bytes of the quantized weights after, parameters included">,
    Statistic<"numEmbeddings", "embeddings-quantized",
              "Gather tables quantized (quantize-embeddings)">,
    Statistic<"numEmbeddingsSmall", "embeddings-skipped-small",
              "Gather tables left f32: fewer than embedding-min-elements">,
    Statistic<"numAttentionBf16", "attention-bf16",
              "Attentions given bf16 products">
  ];
}

def FoldQuantizedLinearPass : Pass<"lmopt-fold-quantized-linear"> {
  let summary = "Fold imported quantized subgraphs into quantized lmopt.linear";
  let description = [{
    Rewrites the quantized subgraphs of models quantized by other tools onto
    the forms of docs/dialect.md, "Quantized and mixed-precision linears":

    * ONNX Runtime `quantize_dynamic`: `dynamic_quantize_linear`,
      `matmul_integer` with a constant weight, the cast to f32, the multiply
      by both scales and a bias add become a linear with
      `input_quantization = dynamic_per_tensor`;
    * QDQ: a linear whose input is `dequantize(quantize(x))` per tensor and
      whose weight is `dequantize(quant.scast(constant))` with `i8` zero
      points 0 becomes a static int8 linear on `quantize(x)`;
    * MatMulNBits: a linear whose weight is the `dequantize` of a block-wise
      4-bit `quant.scast` becomes an int4 weight-only linear.

    Subgraphs the forms cannot express are left as they are, with a near
    miss in the fusion report (kind `quantized_linear`).

    Precondition: `lmopt-fuse-linear`.
  }];
  let dependentDialects = ["::mlir::lmopt::LmoptDialect",
                           "::mlir::quant::QuantDialect"];
}

def NarrowPrecisionPass : Pass<"lmopt-narrow-precision"> {
  let summary = "Run f32 linears, matmuls and attention in f16 or bf16";
  let description = [{
    Turns every `lmopt.linear`, `lmopt.matmul` and `lmopt.attention` whose
    float operands and results are all `f32` into a half-precision island:
    those operands become `dtype` (attention's mask keeps its type: the
    attention steps read an f32 or `i1` mask with any query type), the op
    computes in `dtype` (a linear's bias and residual included, as the GPU's
    matrix products take them), and each result is cast back to `f32`.
    Everything else stays `f32`; the casts are elementwise ops that kernel
    generation fuses into the neighbouring kernels.

    * Constant operands (`dense` or `dense_resource` f32) are converted here,
      rounding to nearest even, into a new `dense_resource` constant; no cast
      of a weight is left for run time. A constant with a finite value
      beyond `dtype`'s range (65504 for f16) would become infinite: its op
      stays `f32`, with a warning naming the element (fusion report: a near
      miss of kind `half_precision`).
    * Each value is cast to `dtype` once, right after its definition, so
      every island reading it shares the cast.
    * Between islands the casts cancel: a widening cast from f16/bf16 sinks
      below the ops that only move elements (`reshape`, `squeeze`,
      `unsqueeze`, `transpose`, `slice`, `split`), and `cast(cast(x : f16 ->
      f32) : f32 -> f16)` is `x` (exact: f32 holds every f16 and bf16 value).
    * With `keep-kv-cache-attention`, attention with `kv_heads_split` (a
      decoder reading its key/value cache) stays `f32`.
    * Ops with a non-f32 float operand or result (quantized linears, models
      already in half precision, integer matmuls) are left as they are.

    With `wide-results` (mixed-precision training on the CPU, whose oneDNN
    products read bf16 and write f32) only the matrix operands narrow: a
    linear keeps its f32 bias, residual and result, a matmul whose right
    operand has rank 2 becomes such a linear (a weight gradient `x^T dy`),
    and attention and batched matmuls stay f32.

    Each island is recorded as `half_precision` in the fusion report.
    Precondition: the fusion passes (`lmopt-fuse-linear`,
    `lmopt-fuse-attention`): what has not fused stays f32 except matmuls.
    The result runs on `lmopt-compile --target=cuda` (`--precision`).
  }];
  let dependentDialects = ["::mlir::lmopt::LmoptDialect"];
  let options = [
    Option<"dtype", "dtype", "std::string", "\"f16\"",
           "The islands' element type: f16 or bf16">,
    Option<"wideResults", "wide-results", "bool", "false",
           "Mixed precision the CPU way: linears, and matmuls with a rank-2 "
           "right operand (as linears), multiply half-precision operands "
           "into f32 results; bias, residual and attention stay f32 and no "
           "result is narrowed (lmopt-compile --train --precision=bf16)">,
    Option<"keepKvCacheAttention", "keep-kv-cache-attention", "bool",
           "false",
           "Leave attention with kv_heads_split f32: lmopt-compile "
           "--kv-cache keeps its key/value cache as f32 state, which the "
           "attention step reads in place">
  ];
  let statistics = [
    Statistic<"numLinears", "linears", "Linears narrowed">,
    Statistic<"numMatmuls", "matmuls", "Matmuls narrowed">,
    Statistic<"numAttentions", "attentions", "Attentions narrowed">,
    Statistic<"numOutOfRange", "kept-out-of-range",
              "Ops kept f32: a constant operand beyond the type's range">,
    Statistic<"numConstants", "constants-converted",
              "Constant operands converted at compile time">
  ];
}

def TestPrintSymbolicShapesPass
    : Pass<"lmopt-test-print-symbolic-shapes", "::mlir::func::FuncOp"> {
  let summary = "Print the symbolic dims of every op result, as remarks";
  let description = [{
    Test pass for the `SymbolicShapes` analysis: on each op result with a
    ranked tensor type, emits a remark `dims [e0, e1, ...]`, where each dim is
    a polynomial over the function's dynamic input dims (`input_ids.1`, named
    after `lmopt.input_names`) and `?N` is a fresh symbol for a dim the
    analysis could not prove. Small integer tensors whose contents are known
    add `values [...]`. Constants are not printed. Changes nothing.

    Precondition: none; meaningful on an imported model's `@main`.
  }];
}

#endif // LMOPT_DIALECT_LMOPT_TRANSFORMS_PASSES_TD

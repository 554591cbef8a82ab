//===- Passes.td - CPU kernel code generation passes -------*- tablegen -*-===//
//
// The steps of the CPU kernel pipeline (lib/Target/CPU/KernelPipeline.cpp)
// that upstream MLIR lacks. Listed in pipeline order; each states the IR it
// expects, which is what the pipeline gives it at that point.
//
//===----------------------------------------------------------------------===//

#ifndef LMOPT_TARGET_CPU_PASSES_TD
#define LMOPT_TARGET_CPU_PASSES_TD

include "mlir/Pass/PassBase.td"

//===----------------------------------------------------------------------===//
// linalg on tensors
//===----------------------------------------------------------------------===//

def FuseKernelOpsPass : Pass<"lmopt-fuse-kernel-ops", "::mlir::func::FuncOp"> {
  let summary = "Fuse elementwise generics into their consumers, computing "
                "nothing twice";
  let description = [{
    Applies linalg's elementwise fusion patterns, fusing a producer into its
    consumer only when the producer has no other use and the consumer reads
    it through a permutation map (each element once, not through a
    broadcast). A chain of elementwise ops becomes one `linalg.generic` that
    makes one pass over memory, while a per-row statistic or a `[B, 1, 1, S]`
    mask bias stays one value per row or key instead of being recomputed per
    element. The canonicalizations of `linalg.generic` and `tensor.empty`
    run with it (dead operands and results of the fused generics go).

    Precondition: linalg on tensors, as `convert-lmopt-to-linalg` produces
    it. Generics that do not qualify are left unchanged.
  }];
  let dependentDialects = [
    "::mlir::linalg::LinalgDialect",
    "::mlir::tensor::TensorDialect",
  ];
}

def RelaxKernelFloatsPass
    : Pass<"lmopt-relax-kernel-floats", "::mlir::func::FuncOp"> {
  let summary = "Allow FMA contraction, and reassociation of reduction "
                "combiners, in generics";
  let description = [{
    Adds `contract` to the fast-math flags of every float arithmetic op in a
    `linalg.generic` body, and `reassoc` to the ops whose values the body of
    a generic with reduction loops yields (its combiners): what lets LLVM
    fuse multiply-adds and vectorize a sum or a max. Flags already present
    are kept. `arith.extf` and `arith.truncf` get no flags, since `contract`
    on such a pair lets arith fold away the rounding a narrow result needs.
    Nothing else is relaxed (no `nnan`/`ninf`: masks use -inf and max
    propagates NaN).

    Precondition: none; only `linalg.generic` bodies (on tensors or buffers)
    change, and only their fast-math attributes.
  }];
}

def TileKernelRowsPass
    : Pass<"lmopt-tile-kernel-rows", "::mlir::func::FuncOp"> {
  let summary = "One loop over rows for a kernel that reads a reduction";
  let description = [{
    A normalization or softmax lowers to several generics (sum, mean,
    squares, output), each a pass over the whole tensor. This pass picks the
    root: the last returned linalg op that (transitively) reads a generic
    with reduction loops. It tiles the root with `scf.forall` over every
    parallel loop but the innermost with tile size 1 (a rank-1 parallel root,
    a reduction's result, in blocks of `rank1-row-tile` rows, 8 by
    default), and fuses its linalg
    producers into the loop where the producer's slice follows every index of
    the loop and nothing outside the loop, except the return and
    `tensor.dim`, reads the producer. A fused producer whose value is also
    returned becomes a result of the loop; the other intermediates shrink to
    one tile. The kernel then makes one loop whose iteration carries a row
    through every generic, and its rows can be split between threads
    (`lmopt-lower-kernel-row-loops`).

    With `independent-roots`, every returned linalg op that no other
    returned op reads is a root of its own loop, with or without a
    reduction: an elementwise root is tiled like a row root (a rank-1 one in
    blocks of `flat-tile` elements), a root whose innermost loop is parallel
    and that reduces over outer loops (a column sum) or reads such a
    reduction is tiled in blocks of `column-tile` columns; a static size
    below two blocks takes two smaller ones, so that no loop of one
    iteration is inlined. The roots read
    one another's values through no loop, so when any is tiled the
    function gets the unit attribute `lmopt.independent_row_loops`, which
    lets `lmopt-lower-kernel-row-loops` split every loop between threads
    (it still refuses where shared work stays outside the loops). Each
    result then starts from a `bufferization.alloc_tensor` instead of a
    `tensor.empty`, so that no temporary CSE merges with it is computed in
    the result's buffer, which the runtime may share with an operand.

    Precondition: linalg on tensors after `lmopt-fuse-kernel-ops`. The pass
    registers linalg's TilingInterface models itself. A function without
    such a root, or whose root does not tile, is left unchanged.
  }];
  let options = [
    Option<"rank1RowTile", "rank1-row-tile", "int64_t", /*default=*/"8",
           "Rows per iteration of a rank-1 parallel root (the CUDA target "
           "maps one row to a block and uses 1)">,
    Option<"independentRoots", "independent-roots", "bool",
           /*default=*/"false",
           "One loop per returned linalg op that no other returned op reads, "
           "elementwise ones included (the CPU target; the CUDA target "
           "launches one grid per kernel and leaves it off)">,
    Option<"columnTile", "column-tile", "int64_t", /*default=*/"64",
           "Columns per iteration of a root that reduces over its outer "
           "loops (independent-roots)">,
    Option<"flatTile", "flat-tile", "int64_t", /*default=*/"4096",
           "Elements per iteration of a rank-1 elementwise root "
           "(independent-roots)">,
  ];
  let dependentDialects = [
    "::mlir::affine::AffineDialect",
    "::mlir::arith::ArithDialect",
    "::mlir::bufferization::BufferizationDialect",
    "::mlir::linalg::LinalgDialect",
    "::mlir::scf::SCFDialect",
    "::mlir::tensor::TensorDialect",
  ];
}

//===----------------------------------------------------------------------===//
// Buffers
//===----------------------------------------------------------------------===//

def CopyRepeatedResultsPass
    : Pass<"lmopt-copy-repeated-results", "::mlir::func::FuncOp"> {
  let summary = "Give a buffer returned more than once one copy per repeat";
  let description = [{
    A kernel may return one value twice, but each result is a separate
    buffer of the caller's (`buffer-results-to-out-params` would otherwise
    hoist one allocation into two out-params). Every `func.return` operand
    that is a memref already returned by an earlier operand of the same
    return becomes a `memref.copy` into a new 64-byte aligned `memref.alloc`
    (sized by `memref.dim` of the returned buffer where its dims are
    dynamic).

    Precondition: after one-shot bufferization across function boundaries,
    before `buffer-results-to-out-params`.
  }];
  let dependentDialects = ["::mlir::memref::MemRefDialect"];
}

def AnnotateKernelArgsPass
    : Pass<"lmopt-annotate-kernel-args", "::mlir::ModuleOp"> {
  let summary = "Mark kernel buffers noalias and 64-byte aligned";
  let description = [{
    Sets `llvm.noalias` and `llvm.align = 64` on every memref argument of
    every `func.func` with a body, so that LLVM keeps accumulators in
    registers and uses aligned vector accesses. The arguments a function's
    `lmopt.in_place_args` lists (an operand and the result written in its
    buffer, which the plan builder records for a step with `in_place`) get
    the alignment only.

    Precondition: after `buffer-results-to-out-params`, on kernels whose
    callers follow the kernel ABI (docs/cpu-backend.md): buffers 64-byte
    aligned and results never aliasing operands but for those pairs. The
    pass does not check this; it states it.
  }];
}

def LowerKernelRowLoopsPass
    : Pass<"lmopt-lower-kernel-row-loops", "::mlir::func::FuncOp"> {
  let summary = "Row loops to scf.for; a kernel that is one such loop runs "
                "a share of the rows";
  let description = [{
    Each `scf.forall` of `lmopt-tile-kernel-rows` becomes one `scf.for` over
    its linearized iterations, each delinearized back into the forall's
    indices. When the function body is that single loop plus work private to
    the call (ops without memory effects, allocations, deallocations,
    `memref.get_global`, `cf.assert`), two `index` arguments are appended,
    `part` and `parts`, the loop runs iterations
    `[total * part / parts, total * (part + 1) / parts)`, and the function
    gets the unit attribute `lmopt.partitioned`: calls for different parts
    may run on different threads at once. A function with the attribute
    `lmopt.independent_row_loops` (its loops read nothing another loop
    writes) is partitioned the same way when its body is several such
    loops plus private work: each loop runs its share of its iterations.
    A linalg op of at most 64 iterations that writes only the call's own
    allocations and reads no argument the function writes (an operand
    that `lmopt.in_place_args` pairs with a written result included) is
    private work too: each share computes it again.
    The pass removes that attribute either way.

    Precondition: after bufferization, and before
    `lmopt-pass-dynamic-sizes`, whose size arguments follow `part` and
    `parts`. A forall that still has tensor results is an error.
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::scf::SCFDialect",
  ];
}

//===----------------------------------------------------------------------===//
// Toward the LLVM dialect
//===----------------------------------------------------------------------===//

def PassDynamicSizesPass
    : Pass<"lmopt-pass-dynamic-sizes", "::mlir::ModuleOp"> {
  let summary = "Pass the run-time sizes of dynamic buffers as index "
                "arguments";
  let description = [{
    A bare pointer carries no sizes. Each memref argument with dynamic dims
    of a `func.func` with a body becomes a rank-0 memref of its element type
    (a bare pointer under `use-bare-ptr-memref-call-conv`), and one `index`
    argument per dynamic dim is appended, in argument then dim order (the
    runtime's sizes array, docs/cpu-backend.md). At the function's entry a
    `memref.reinterpret_cast` rebuilds the original type from the pointer
    with those sizes and dense row-major strides. A static memref argument
    of zero elements (which MLIR's bare-pointer lowering refuses) becomes a
    rank-0 memref rebuilt the same way from its constant sizes.

    Precondition: arguments in the identity layout (dense, row-major), as
    bufferization with `IdentityLayoutMap` function boundaries gives them; a
    dynamic argument in another layout is an error. Arguments of static
    shape are left unchanged.
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::memref::MemRefDialect",
  ];
}

def LowerStridedCopiesPass
    : Pass<"lmopt-lower-strided-copies", "::mlir::func::FuncOp"> {
  let summary = "Turn copies between strided views into linalg.copy";
  let description = [{
    A `memref.copy` whose source or target has a non-identity layout (a
    slice, a part of a concatenation) would lower to a call into MLIR's
    runtime library, which kernels do not link; as `linalg.copy` it becomes
    loops like everything else. Copies between identity layouts stay: they
    lower to `llvm.memcpy`. Copies of unranked memrefs stay too.

    Precondition: buffers, before `convert-linalg-to-loops`.
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect"];
}

def ExpandKernelMathPass
    : Pass<"lmopt-expand-kernel-math", "::mlir::func::FuncOp"> {
  let summary = "Polynomial math and integer bf16 conversions";
  let description = [{
    Replaces `math.erf`, `exp`, `expm1`, `log`, `log1p`, `log2` and `tanh`
    on f32 by polynomial approximations (f16 and bf16 ones are computed in
    f32 and truncated back), so that the math vectorizes with the loop
    around it instead of calling libm. bf16 `arith.extf`/`arith.truncf`
    become integer arithmetic: without AVX-512 BF16, LLVM would call
    `__truncsfbf2`, which older libgcc lacks. Other math ops, and f64 math,
    are left for `convert-math-to-llvm` and `convert-math-to-libm`.

    Precondition: none; the pipeline runs it on scalar loops, after
    `convert-linalg-to-loops` and `lower-affine`.
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::math::MathDialect",
    "::mlir::vector::VectorDialect",
  ];
}

#endif // LMOPT_TARGET_CPU_PASSES_TD

//===- Prune.cpp - structured pruning of heads and FFN neurons ------------===//
//
// Cuts whole units out of the weight matrices, so the bundle and its
// products shrink (docs/compression.md, "Structured pruning"):
//
//   linear(linear(x, W1, b1, act), W2, b2)   FFN neurons: W1 columns, b1
//                                            entries, W2 rows
//   attention(split(linear(x, Wqkv, bqkv)))  heads: Q, K and V columns and
//     -> linear(., Wo, bo)                   bias entries, Wo rows
//
// (transposed weights: rows and columns swapped). Units are ranked by
// their weights or by calibration statistics (PruneScores.cpp); the kept
// ones stay in their original order.
//
//===----------------------------------------------------------------------===//

#include "lmopt/Dialect/Lmopt/Transforms/Passes.h"

#include "PruneScores.h"
#include "QuantizeWeights.h"

#include "lmopt/Dialect/Lmopt/IR/LmoptOps.h"
#include "lmopt/Dialect/Lmopt/Transforms/PatternUtils.h"
#include "lmopt/Dialect/Lmopt/Transforms/PruneImportance.h"
#include "lmopt/Dialect/Lmopt/Transforms/Quantize.h"
#include "lmopt/Support/FusionReport.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace mlir::lmopt {
#define GEN_PASS_DEF_PRUNEPASS
#include "lmopt/Dialect/Lmopt/Transforms/Passes.h.inc"
} // namespace mlir::lmopt

using namespace mlir;
using namespace mlir::lmopt;

static constexpr llvm::StringLiteral kFfnKind = "pruned_ffn";
static constexpr llvm::StringLiteral kHeadsKind = "pruned_heads";
static constexpr llvm::StringLiteral kLayersKind = "dropped_layers";

using prune::Criterion;
using prune::Matrix;

/// Why `linear` cannot have its weight cut, or nothing.
static std::optional<std::string> unprunable(LinearOp linear) {
  if (linear.getTransposeInput())
    return "a linear reads a transposed input";
  if (linear.getInputQuantization() != InputQuantization::none ||
      !getElementTypeOrSelf(linear.getWeight().getType()).isF32() ||
      !getElementTypeOrSelf(linear.getInput().getType()).isF32())
    return "a linear is not f32 (prune before quantizing)";
  if (llvm::cast<ShapedType>(linear.getWeight().getType()).getRank() != 2)
    return "a linear's weight is not rank 2";
  return std::nullopt;
}

/// The `keep` most important of `scores.size()` units (ties to the lower
/// index), in ascending order.
static SmallVector<int64_t> selectUnits(ArrayRef<double> scores,
                                        int64_t keep) {
  SmallVector<int64_t> order(scores.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
    return scores[a] > scores[b];
  });
  order.resize(keep);
  llvm::sort(order);
  return order;
}

/// How many of `total` units stay when `ratio` of them go.
static int64_t keptCount(int64_t total, double ratio, int64_t multiple) {
  int64_t removed = int64_t(std::floor(double(total) * ratio + 1e-9));
  int64_t keep = std::max<int64_t>(total - removed, 1);
  if (multiple > 1)
    keep = std::min(total, (keep + multiple - 1) / multiple * multiple);
  return keep;
}

/// `type` with its last dim set to `width`.
static RankedTensorType withLastDim(Type type, int64_t width) {
  auto ranked = llvm::cast<RankedTensorType>(type);
  SmallVector<int64_t> shape(ranked.getShape());
  shape.back() = width;
  return RankedTensorType::get(shape, ranked.getElementType());
}

/// A copy of `linear` reading `input` and the given weight and bias, its
/// result `width` wide.
static LinearOp rebuildLinear(OpBuilder &builder, LinearOp linear, Value input,
                              Value weight, Value bias, int64_t width) {
  builder.setInsertionPoint(linear);
  auto rebuilt = LinearOp::create(
      builder, linear.getLoc(), withLastDim(linear.getOutput().getType(), width),
      input, weight, bias, linear.getResidual(), linear.getTransposeWeight(),
      linear.getActivation(), linear.getInputQuantization(),
      linear.getTransposeInput());
  rebuilt->setDiscardableAttrs(linear->getDiscardableAttrDictionary());
  return rebuilt;
}

using prune::EncoderLayer;

/// The single reader of `value` when it is an `OpTy`, else null.
template <typename OpTy> static OpTy soleReader(Value value) {
  if (!value.hasOneUse())
    return nullptr;
  return llvm::dyn_cast<OpTy>(*value.user_begin());
}

/// The skip_layer_norm that adds `residual` to `value`, its only reader.
static SkipLayerNormOp residualNorm(Value value, Value residual) {
  auto norm = soleReader<SkipLayerNormOp>(value);
  if (!norm || norm.getInput() != value || norm.getSkip() != residual ||
      !norm.getSum().use_empty())
    return nullptr;
  return norm;
}

/// The post-norm encoder layer around `attention`, or why not.
FailureOr<EncoderLayer> prune::matchEncoderLayer(AttentionOp attention,
                                                std::string &why) {
  Operation *source = attention.getQuery().getDefiningOp();
  if (auto split = llvm::dyn_cast_or_null<SplitOp>(source))
    source = split.getInput().getDefiningOp();
  auto projection = llvm::dyn_cast_or_null<LinearOp>(source);
  if (!projection) {
    why = "its query is not a linear projection";
    return failure();
  }
  Value input = projection.getInput();
  // With dynamic dims, the export's reshape of the heads back to [B, S, H]
  // stays (its shape is computed); it is part of the layer.
  Value heads = attention.getOutput();
  if (auto reshape = soleReader<ReshapeOp>(heads))
    heads = reshape.getOutput();
  auto out = soleReader<LinearOp>(heads);
  SkipLayerNormOp first =
      out && !out.getResidual() ? residualNorm(out.getOutput(), input)
                                : nullptr;
  if (!first) {
    why = "the attention's output projection is not added to the layer "
          "input by a skip_layer_norm";
    return failure();
  }
  LinearOp up, down;
  for (Operation *user : first.getOutput().getUsers())
    if (auto linear = llvm::dyn_cast<LinearOp>(user))
      if (!up && !linear.getResidual())
        up = linear;
  if (up)
    down = soleReader<LinearOp>(up.getOutput());
  SkipLayerNormOp second =
      down && !down.getResidual()
          ? residualNorm(down.getOutput(), first.getOutput())
          : nullptr;
  if (!second || !llvm::hasNItems(first.getOutput().getUsers(), 2)) {
    why = "no two-linear FFN whose output a skip_layer_norm adds to the "
          "attention block's output";
    return failure();
  }
  return EncoderLayer{input, second.getOutput()};
}

/// Erases the region-free ops under `root` that no longer have a reader,
/// readers first.
static void eraseDeadOps(Operation *root) {
  SmallVector<Operation *> ops;
  root->walk([&](Operation *op) {
    if (op->getNumRegions() == 0)
      ops.push_back(op);
  });
  for (Operation *op : llvm::reverse(ops))
    if (isOpTriviallyDead(op))
      op->erase();
}

namespace {

struct PrunePass : lmopt::impl::PrunePassBase<PrunePass> {
  using PrunePassBase::PrunePassBase;

  /// True for an op of a function marked `lmopt.frozen`: a distillation
  /// teacher compiled beside the student (Target/Common/Distillation.h),
  /// which keeps every unit.
  static bool isFrozen(Operation *op) {
    for (Operation *parent = op->getParentOp(); parent;
         parent = parent->getParentOp())
      if (parent->hasAttr("lmopt.frozen"))
        return true;
    return false;
  }

  void runOnOperation() override {
    FusionReport &report = getFusionReport(&getContext());
    for (auto [name, ratio] : {std::pair<StringRef, double>{"ffn", ffn},
                               {"heads", heads}})
      if (!(ratio >= 0.0 && ratio < 1.0)) {
        getOperation()->emitError()
            << "lmopt-prune: " << name << "=" << llvm::formatv("{0}", ratio).str()
            << " is not a fraction in [0, 1)";
        return signalPassFailure();
      }
    std::optional<Criterion> parsed = prune::parseCriterion(criterion);
    if (!parsed) {
      getOperation()->emitError()
          << "lmopt-prune: unknown criterion '" << criterion
          << "' (known: magnitude, wanda, activation, gradient)";
      return signalPassFailure();
    }
    ranking = *parsed;
    if (multiple < 1) {
      getOperation()->emitError()
          << "lmopt-prune: multiple=" << multiple << " must be at least 1";
      return signalPassFailure();
    }
    if (layers != 0.0) {
      FailureOr<SmallVector<int64_t>> chosen = chooseLayers();
      if (failed(chosen) || failed(dropLayers(*chosen, report)))
        return signalPassFailure();
    } else if (!keepLayers.empty()) {
      SmallVector<int64_t> keep(keepLayers.begin(), keepLayers.end());
      if (failed(dropLayers(keep, report)))
        return signalPassFailure();
    }
    if (ffn > 0.0) {
      report.registerKind(kFfnKind);
      SmallVector<LinearOp> downs;
      getOperation()->walk([&](LinearOp op) {
        if (!isFrozen(op))
          downs.push_back(op);
      });
      for (LinearOp down : downs)
        if (failed(pruneFfn(down, report)))
          return signalPassFailure();
    }
    if (heads > 0.0) {
      report.registerKind(kHeadsKind);
      SmallVector<AttentionOp> attentions;
      getOperation()->walk([&](AttentionOp op) {
        if (!isFrozen(op))
          attentions.push_back(op);
      });
      for (AttentionOp attention : attentions)
        if (failed(pruneHeads(attention, report)))
          return signalPassFailure();
    }
    if (!sparsity.empty()) {
      unsigned n = 0, m = 0;
      if (std::optional<std::string> why =
              prune::parseSparsity(sparsity, n, m)) {
        getOperation()->emitError() << "lmopt-prune: " << *why;
        return signalPassFailure();
      }
      SmallVector<LinearOp> linears;
      getOperation()->walk([&](LinearOp op) {
        if (!isFrozen(op))
          linears.push_back(op);
      });
      SmallVector<Operation *> old;
      if (failed(prune::sparsifyLinears(linears, n, m, ranking, transposeSparse,
                                        report, old)))
        return signalPassFailure();
      replaced.insert(old.begin(), old.end());
    }
    // The statistics describe the uncut inputs.
    getOperation()->walk(
        [](LinearOp op) { op->removeAttr(kActivationStatsAttr); });
    getOperation()->walk(
        [](AttentionOp op) { op->removeAttr(kBlockImportanceAttr); });
    // The uncut matrices, once nothing reads them.
    for (Operation *constant : replaced)
      if (constant->use_empty())
        constant->erase();
  }

  /// The attentions of the layers that may be dropped, in program order.
  SmallVector<AttentionOp> layerAttentions() {
    SmallVector<AttentionOp> attentions;
    getOperation()->walk([&](AttentionOp op) {
      if (!isFrozen(op))
        attentions.push_back(op);
    });
    return attentions;
  }

  /// The layers `layers=` keeps: the most important by the block
  /// importance each attention carries, ascending.
  FailureOr<SmallVector<int64_t>> chooseLayers() {
    Operation *root = getOperation();
    std::string value;
    llvm::raw_string_ostream(value) << llvm::format("%g", double(layers));
    if (!keepLayers.empty())
      return root->emitError()
             << "lmopt-prune: give keep-layers or layers=" << value
             << ", not both";
    if (!(layers > 0.0) || (layers >= 1.0 && layers != std::floor(layers)))
      return root->emitError()
             << "lmopt-prune: layers=" << value
             << " is neither a whole number of layers to keep nor a "
                "fraction in (0, 1)";
    SmallVector<AttentionOp> attentions = layerAttentions();
    int64_t count = int64_t(attentions.size());
    if (count == 0)
      return root->emitError() << "lmopt-prune: layers=" << value
                               << " ranks encoder layers; the model has none";
    int64_t keep =
        layers < 1.0
            ? std::max<int64_t>(1, int64_t(std::ceil(layers * count - 1e-9)))
            : int64_t(layers);
    if (keep > count)
      return root->emitError()
             << "lmopt-prune: layers=" << value << " keeps more layers than "
             << "the model's " << count;
    SmallVector<double> scores;
    for (auto [index, attention] : llvm::enumerate(attentions)) {
      auto score = attention->getAttrOfType<FloatAttr>(kBlockImportanceAttr);
      if (!score)
        return attention.emitError()
               << "lmopt-prune: layers=" << value << " ranks layers by "
               << "block importance; layer " << index << " ('"
               << getLayerName(attention) << "') has no "
               << kBlockImportanceAttr << " (lmopt-compile --calibration "
               << "measures it)";
      scores.push_back(score.getValueAsDouble());
    }
    SmallVector<int64_t> kept = selectUnits(scores, keep);
    for (auto [index, attention] : llvm::enumerate(attentions))
      attention.emitRemark()
          << "layer " << index << " ('" << getLayerName(attention)
          << "'): block importance "
          << llvm::formatv("{0:f6}", scores[index]).str() << ", "
          << (llvm::is_contained(kept, int64_t(index)) ? "kept" : "dropped");
    return kept;
  }

  /// Drops the layers `keep` does not list.
  LogicalResult dropLayers(ArrayRef<int64_t> keep, FusionReport &report) {
    report.registerKind(kLayersKind);
    SmallVector<AttentionOp> attentions = layerAttentions();
    int64_t count = int64_t(attentions.size());
    for (auto [i, index] : llvm::enumerate(keep)) {
      if (index < 0 || index >= count) {
        InFlightDiagnostic diag = getOperation()->emitError()
                                  << "lmopt-prune: keep-layers names layer "
                                  << index << "; the model has ";
        if (count == 0)
          return diag << "no encoder layers";
        return diag << count << " layers (0 to " << count - 1 << ")";
      }
      if (i > 0 && index <= keep[i - 1])
        return getOperation()->emitError()
               << "lmopt-prune: keep-layers must list layers once each, in "
                  "ascending order ("
               << keep[i - 1] << " then " << index << ")";
    }
    SmallVector<EncoderLayer> dropped;
    for (auto [index, attention] : llvm::enumerate(attentions)) {
      if (llvm::is_contained(keep, int64_t(index)))
        continue;
      std::string why;
      FailureOr<EncoderLayer> layer =
          prune::matchEncoderLayer(attention, why);
      if (failed(layer))
        return attention.emitError()
               << "lmopt-prune: cannot drop layer " << index << " ('"
               << getLayerName(attention) << "'): " << why;
      dropped.push_back(*layer);
      report.recordFused(kLayersKind, attention.getLoc());
    }
    // The last first: a dropped layer's input may be the next one's output.
    for (EncoderLayer &layer : llvm::reverse(dropped))
      layer.output.replaceAllUsesWith(layer.input);
    eraseDeadOps(getOperation());
    getOperation()->emitRemark()
        << "kept " << keep.size() << " of " << count << " encoder layers";
    return success();
  }

  /// Remembers the constant behind `value` (if any) for removal.
  void retire(Value value) {
    if (value)
      if (auto constant = value.getDefiningOp<ConstantOp>())
        replaced.insert(constant);
  }

  llvm::SetVector<Operation *> replaced;
  Criterion ranking = Criterion::Magnitude;

  /// `down` is the FFN's second linear when its input is a linear that
  /// only it reads.
  LogicalResult pruneFfn(LinearOp down, FusionReport &report) {
    auto up = down.getInput().getDefiningOp<LinearOp>();
    if (!up)
      return success();
    auto nearMiss = [&](const Twine &why) {
      report.recordNearMiss(kFfnKind, up.getLoc(), why);
      return success();
    };
    if (!up.getOutput().hasOneUse())
      return nearMiss("the inner linear's output has another reader");
    if (up.getResidual())
      return nearMiss("the inner linear adds a residual");
    for (LinearOp linear : {up, down})
      if (std::optional<std::string> why = unprunable(linear))
        return nearMiss(*why);
    std::string why;
    FailureOr<Matrix> w1 =
        readMatrix(up.getWeight(), up.getTransposeWeight(), why);
    FailureOr<Matrix> w2 =
        readMatrix(down.getWeight(), down.getTransposeWeight(), why);
    FailureOr<Matrix> b1 = Matrix{};
    if (up.getBias())
      b1 = readMatrix(up.getBias(), false, why);
    if (failed(w1) || failed(w2) || failed(b1))
      return nearMiss(why);
    int64_t width = w1->outWidth();
    if (w2->inWidth() != width)
      return nearMiss("the linears' widths disagree");
    int64_t keep = keptCount(width, ffn, multiple);
    if (keep == width)
      return success();

    FailureOr<SmallVector<double>> scores =
        prune::scoreNeurons(ranking, up, down, *w1, *w2, width);
    if (failed(scores))
      return failure();
    SmallVector<int64_t> kept = selectUnits(*scores, keep);

    OpBuilder builder(up);
    Value weight1 = cutConstant(builder, up.getWeight(), *w1, w1->inWidth(),
                                keep, keepOutputs(*w1, kept), "pruned_weight");
    Value bias1;
    if (up.getBias())
      bias1 = cutConstant(builder, up.getBias(), *b1, 1, keep,
                          keepOutputs(*b1, kept), "pruned_bias");
    Value weight2 = cutConstant(builder, down.getWeight(), *w2, keep,
                                w2->outWidth(), keepInputs(*w2, kept),
                                "pruned_weight");
    LinearOp newUp =
        rebuildLinear(builder, up, up.getInput(), weight1, bias1, keep);
    LinearOp newDown = rebuildLinear(builder, down, newUp.getOutput(), weight2,
                                     down.getBias(), w2->outWidth());
    for (Value value : {up.getWeight(), up.getBias(), down.getWeight()})
      retire(value);
    down.getOutput().replaceAllUsesWith(newDown.getOutput());
    down.erase();
    up.erase();
    int64_t removed = (width - keep) * (w1->inWidth() + w2->outWidth() +
                                        (bias1 ? 1 : 0));
    newUp.emitRemark() << "pruned FFN '" << getLayerName(newUp) << "': " << keep << " of " << width
                       << " neurons kept, " << removed
                       << " parameters removed";
    report.recordFused(kFfnKind, newUp.getLoc());
    return success();
  }

  LogicalResult pruneHeads(AttentionOp attention, FusionReport &report) {
    auto nearMiss = [&](const Twine &why) {
      report.recordNearMiss(kHeadsKind, attention.getLoc(), why);
      return success();
    };
    if (attention.getKvHeadsSplit())
      return nearMiss("key and value are split into heads already");
    if (attention.getKvHeads() != attention.getNumHeads())
      return nearMiss("grouped-query attention: key and value have fewer "
                      "heads than the query");
    auto split = attention.getQuery().getDefiningOp<SplitOp>();
    int64_t rank =
        llvm::cast<ShapedType>(attention.getQuery().getType()).getRank();
    if (!split || split->getNumResults() != 3 ||
        attention.getQuery() != split->getResult(0) ||
        attention.getKey() != split->getResult(1) ||
        attention.getValue() != split->getResult(2) ||
        (int64_t(split.getAxis()) != rank - 1 && int64_t(split.getAxis()) != -1))
      return nearMiss("query, key and value are not the three parts of one "
                      "split of a QKV linear (lmopt-fuse-qkv)");
    auto qkv = split.getInput().getDefiningOp<LinearOp>();
    if (!qkv || !qkv.getOutput().hasOneUse() ||
        llvm::any_of(split->getResults(),
                     [](Value part) { return !part.hasOneUse(); }))
      return nearMiss("the QKV linear or its parts have other readers");
    if (!attention.getOutput().hasOneUse())
      return nearMiss("the attention's output has another reader");
    auto out = llvm::dyn_cast<LinearOp>(*attention.getOutput().user_begin());
    if (!out || out.getInput() != attention.getOutput())
      return nearMiss("no output projection reads the attention");
    // A score bias has a dim per head; slicing it is not done yet.
    if (attention.getBias())
      return nearMiss("the attention has a score bias (relative-position "
                      "bias)");
    if (Value mask = attention.getMask()) {
      auto type = llvm::cast<ShapedType>(mask.getType());
      if (type.getRank() >= 3 && type.getDimSize(type.getRank() - 3) != 1)
        return nearMiss("the mask has a head dim");
    }
    for (LinearOp linear : {qkv, out})
      if (std::optional<std::string> why = unprunable(linear))
        return nearMiss(*why);
    std::string why;
    FailureOr<Matrix> wqkv =
        readMatrix(qkv.getWeight(), qkv.getTransposeWeight(), why);
    FailureOr<Matrix> wo =
        readMatrix(out.getWeight(), out.getTransposeWeight(), why);
    FailureOr<Matrix> bqkv = Matrix{};
    if (qkv.getBias())
      bqkv = readMatrix(qkv.getBias(), false, why);
    if (failed(wqkv) || failed(wo) || failed(bqkv))
      return nearMiss(why);
    ArrayRef<int64_t> sizes = split.getSplitSizes();
    int64_t numHeads = attention.getNumHeads();
    int64_t hidden = sizes[0];
    if (sizes[1] != hidden || sizes[2] != hidden ||
        wqkv->outWidth() != 3 * hidden || wo->inWidth() != hidden ||
        hidden % numHeads != 0)
      return nearMiss("the QKV parts are not three equal widths of whole heads");
    int64_t headDim = hidden / numHeads;
    int64_t keep = keptCount(numHeads, heads, multiple);
    if (keep == numHeads)
      return success();

    FailureOr<SmallVector<double>> scores =
        prune::scoreHeads(ranking, qkv, out, *wqkv, *wo, numHeads, hidden);
    if (failed(scores))
      return failure();
    SmallVector<int64_t> keptHeads = selectUnits(*scores, keep);
    SmallVector<int64_t> rows, cols;
    for (int64_t h : keptHeads)
      for (int64_t d = h * headDim; d < (h + 1) * headDim; ++d)
        rows.push_back(d);
    for (int64_t part = 0; part < 3; ++part)
      for (int64_t d : rows)
        cols.push_back(part * hidden + d);
    int64_t newHidden = keep * headDim;

    OpBuilder builder(qkv);
    Value weight = cutConstant(builder, qkv.getWeight(), *wqkv,
                               wqkv->inWidth(), 3 * newHidden,
                               keepOutputs(*wqkv, cols), "pruned_weight");
    Value bias;
    if (qkv.getBias())
      bias = cutConstant(builder, qkv.getBias(), *bqkv, 1, 3 * newHidden,
                         keepOutputs(*bqkv, cols), "pruned_bias");
    Value outWeight = cutConstant(builder, out.getWeight(), *wo, newHidden,
                                  wo->outWidth(), keepInputs(*wo, rows),
                                  "pruned_weight");
    LinearOp newQkv = rebuildLinear(builder, qkv, qkv.getInput(), weight,
                                    bias, 3 * newHidden);
    auto partType = withLastDim(split->getResult(0).getType(), newHidden);
    auto newSplit = SplitOp::create(
        builder, split.getLoc(), TypeRange{partType, partType, partType},
        newQkv.getOutput(), split.getAxisAttr(),
        builder.getDenseI64ArrayAttr({newHidden, newHidden, newHidden}));
    builder.setInsertionPoint(attention);
    auto newAttention = AttentionOp::create(
        builder, attention.getLoc(),
        withLastDim(attention.getOutput().getType(), newHidden),
        newSplit->getResult(0), newSplit->getResult(1), newSplit->getResult(2),
        attention.getMask(), /*bias=*/Value(), builder.getI64IntegerAttr(keep),
        attention.getScaleAttr(), attention.getCausalAttr(),
        attention.getKvHeadsSplitAttr(), attention.getZeroMaskedRowsAttr(),
        IntegerAttr());
    // Without an explicit scale, 1/sqrt(D) is unchanged: D stays.
    LinearOp newOut = rebuildLinear(builder, out, newAttention.getOutput(),
                                    outWeight, out.getBias(), wo->outWidth());
    for (Value value : {qkv.getWeight(), qkv.getBias(), out.getWeight()})
      retire(value);
    out.getOutput().replaceAllUsesWith(newOut.getOutput());
    out.erase();
    attention.erase();
    split.erase();
    qkv.erase();
    int64_t removed = (numHeads - keep) * headDim *
                      (3 * wqkv->inWidth() + wo->outWidth() +
                       (bias ? 3 : 0));
    newAttention.emitRemark()
        << "pruned attention '" << getLayerName(newAttention) << "': " << keep << " of " << numHeads
        << " heads kept, " << removed << " parameters removed";
    report.recordFused(kHeadsKind, newAttention.getLoc());
    return success();
  }
};

} // namespace

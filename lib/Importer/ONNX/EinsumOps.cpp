//===- EinsumOps.cpp - ONNX Einsum as transposes, sums and matmuls --------===//
//
// Einsum becomes the ops a matrix-product backend already runs: labels that
// only one operand carries and the result does not are summed first
// (`reduce_sum`); two operands are then one batched `matmul` after
// transposing each to [batch..., free..., contracted...] (lhs) and
// [batch..., contracted..., free...] (rhs), with `reshape` where a group has
// several labels; a final `transpose` gives the output order. More than two
// operands contract left to right, each intermediate keeping the labels that
// later operands or the output need. A label repeated within one operand (a
// diagonal) is refused.
//
//===----------------------------------------------------------------------===//

#include "lmopt/Importer/ONNX/OpConverter.h"

#include "lmopt/Dialect/Lmopt/IR/LmoptOps.h"
#include "lmopt/Dialect/Lmopt/IR/ShapeUtils.h"

#include "llvm/ADT/STLExtras.h"

#include <map>

using namespace mlir;
using namespace mlir::lmopt;
using namespace mlir::lmopt::onnx_import;

namespace {

/// A tensor and the label of each of its dims.
struct Labeled {
  Value value;
  std::string labels;

  RankedTensorType type() const {
    return llvm::cast<RankedTensorType>(value.getType());
  }
  int64_t dimOf(char label) const {
    return type().getDimSize(int64_t(labels.find(label)));
  }
};

/// Parses the equation into one label string per operand and the output's.
/// Each `...` becomes as many digits (never labels) as the operand's rank
/// leaves, right-aligned across operands as numpy broadcasts them.
struct Equation {
  SmallVector<std::string> inputs;
  std::string output;
};

} // namespace

static FailureOr<Equation> parseEquation(NodeContext &ctx, StringRef text,
                                         ArrayRef<int64_t> ranks) {
  std::string compact;
  for (char c : text)
    if (!std::isspace(static_cast<unsigned char>(c)))
      compact.push_back(c);
  StringRef eq(compact);
  auto [lhs, rhs] = eq.split("->");
  bool explicitOutput = eq.contains("->");
  SmallVector<StringRef> terms;
  lhs.split(terms, ',');
  if (terms.size() != ranks.size())
    return ctx.emitError() << "equation '" << text << "' names "
                           << terms.size() << " operands; the node has "
                           << ranks.size();
  Equation result;
  int64_t ellipsisRank = 0;
  SmallVector<int64_t> ellipsisRanks;
  for (auto [term, rank] : llvm::zip(terms, ranks)) {
    size_t dots = term.find("...");
    std::string labels = (dots == StringRef::npos)
                             ? term.str()
                             : (term.substr(0, dots) + term.substr(dots + 3))
                                   .str();
    for (char c : labels)
      if (!std::isalpha(static_cast<unsigned char>(c)))
        return ctx.emitError() << "equation '" << text << "': '" << term
                               << "' is not letters with at most one '...'";
    int64_t extra = rank - int64_t(labels.size());
    if (extra < 0 || (dots == StringRef::npos && extra != 0))
      return ctx.emitError()
             << "equation '" << text << "': term '" << term << "' has "
             << labels.size() << " labels for an operand of rank " << rank;
    ellipsisRanks.push_back(dots == StringRef::npos ? -1 : extra);
    ellipsisRank = std::max(ellipsisRank, extra);
    result.inputs.push_back(labels);
  }
  if (ellipsisRank > 10)
    return ctx.emitError() << "equation '" << text
                           << "': '...' spans more than 10 dims";
  // Digits name ellipsis dims, right-aligned.
  auto ellipsisLabels = [&](int64_t count) {
    std::string digits;
    for (int64_t i = ellipsisRank - count; i < ellipsisRank; ++i)
      digits.push_back(char('0' + i));
    return digits;
  };
  for (auto [i, term] : llvm::enumerate(terms)) {
    if (ellipsisRanks[i] < 0)
      continue;
    size_t dots = term.find("...");
    result.inputs[i] = (term.substr(0, dots) + ellipsisLabels(ellipsisRanks[i]) +
                        term.substr(dots + 3))
                           .str();
  }
  if (explicitOutput) {
    size_t dots = rhs.find("...");
    result.output = dots == StringRef::npos
                        ? rhs.str()
                        : (rhs.substr(0, dots) + ellipsisLabels(ellipsisRank) +
                           rhs.substr(dots + 3))
                              .str();
    for (char c : result.output) {
      if (std::isdigit(static_cast<unsigned char>(c)))
        continue;
      if (!std::isalpha(static_cast<unsigned char>(c)) ||
          llvm::none_of(result.inputs, [&](const std::string &in) {
            return in.find(c) != std::string::npos;
          }))
        return ctx.emitError() << "equation '" << text << "': output label '"
                               << c << "' is in no operand";
    }
  } else {
    // Implicit output: the ellipsis dims, then the labels used once, in
    // alphabetical order.
    std::map<char, int> uses;
    for (const std::string &in : result.inputs)
      for (char c : in)
        if (std::isalpha(static_cast<unsigned char>(c)))
          ++uses[c];
    result.output = ellipsisLabels(ellipsisRank);
    for (auto [c, n] : uses)
      if (n == 1)
        result.output.push_back(c);
  }
  for (const std::string &in : llvm::concat<const std::string>(
           result.inputs, ArrayRef<std::string>(result.output)))
    for (auto [i, c] : llvm::enumerate(in))
      if (in.find(c, i + 1) != std::string::npos)
        return ctx.emitError()
               << "equation '" << text << "': label '" << c
               << "' repeats within one term (a diagonal), which lmopt does "
                  "not support";
  return result;
}

static Value transposeTo(NodeContext &ctx, const Labeled &in,
                         StringRef order) {
  if (in.labels == order)
    return in.value;
  SmallVector<int64_t> perm, shape;
  for (char c : order) {
    perm.push_back(int64_t(in.labels.find(c)));
    shape.push_back(in.dimOf(c));
  }
  auto type = RankedTensorType::get(shape, in.type().getElementType());
  return ctx.createOp<TransposeOp>(type, in.value, perm).getOutput();
}

/// Sums away the labels of `in` outside `keep`.
static Labeled sumOut(NodeContext &ctx, Labeled in, StringRef keep) {
  SmallVector<int64_t> axes, shape;
  std::string kept;
  for (auto [i, c] : llvm::enumerate(in.labels)) {
    if (keep.contains(c)) {
      kept.push_back(c);
      shape.push_back(in.type().getDimSize(i));
    } else {
      axes.push_back(int64_t(i));
    }
  }
  if (axes.empty())
    return in;
  auto type = RankedTensorType::get(shape, in.type().getElementType());
  return {ctx.createOp<ReduceSumOp>(type, in.value, axes, false).getOutput(),
          kept};
}

/// Reshapes `value` (static dims only) to `shape`.
static FailureOr<Value> reshapeTo(NodeContext &ctx, Value value,
                                  ArrayRef<int64_t> shape) {
  auto type = llvm::cast<RankedTensorType>(value.getType());
  if (type.getShape() == shape)
    return value;
  if (!type.hasStaticShape())
    return ctx.emitError() << "merging the dims of an operand of shape "
                           << formatShape(type.getShape())
                           << " needs static sizes";
  Value target = ctx.createConstant(KnownInts::vector(shape),
                                    ctx.getBuilder().getI64Type());
  return ctx
      .createOp<ReshapeOp>(RankedTensorType::get(shape, type.getElementType()),
                           value, target, ctx.getBuilder().getBoolAttr(false))
      .getOutput();
}

/// The product of the dims of `labels` in `in`; dynamic if any is.
static int64_t groupSize(const Labeled &in, StringRef labels) {
  int64_t size = 1;
  for (char c : labels) {
    int64_t dim = in.dimOf(c);
    if (ShapedType::isDynamic(dim))
      return ShapedType::kDynamic;
    size *= dim;
  }
  return size;
}

/// Contracts `a` and `b`, keeping the labels in `need` (and summing the
/// others): the result is labelled batch, a's free labels, b's free labels.
static FailureOr<Labeled> contract(NodeContext &ctx, Labeled a, Labeled b,
                                   StringRef need) {
  a = sumOut(ctx, a, (need + b.labels).str());
  b = sumOut(ctx, b, (need + a.labels).str());
  std::string batch, contracted, aFree, bFree;
  for (char c : a.labels) {
    bool inB = b.labels.find(c) != std::string::npos;
    if (inB && need.contains(c))
      batch.push_back(c);
    else if (inB)
      contracted.push_back(c);
    else
      aFree.push_back(c);
  }
  for (char c : b.labels)
    if (a.labels.find(c) == std::string::npos)
      bFree.push_back(c);
  for (char c : batch + contracted) {
    int64_t da = a.dimOf(c), db = b.dimOf(c);
    bool contracting = contracted.find(c) != std::string::npos;
    if (!ShapedType::isDynamic(da) && !ShapedType::isDynamic(db) && da != db &&
        (contracting || (da != 1 && db != 1)))
      return ctx.emitError() << "label '" << c << "' has size " << da
                             << " in one operand and " << db
                             << " in the other";
  }
  Value lhs = transposeTo(ctx, a, batch + aFree + contracted);
  Value rhs = transposeTo(ctx, b, batch + contracted + bFree);
  // Batch dims stay separate (matmul broadcasts them); each other group
  // becomes one dim, merged or inserted.
  SmallVector<int64_t> batchA, batchB;
  for (char c : batch) {
    batchA.push_back(a.dimOf(c));
    batchB.push_back(b.dimOf(c));
  }
  int64_t m = groupSize(a, aFree), k = groupSize(a, contracted),
          n = groupSize(b, bFree);
  auto withGroups = [](SmallVector<int64_t> shape, int64_t x, int64_t y) {
    shape.push_back(x);
    shape.push_back(y);
    return shape;
  };
  auto regroup = [&](Value v, StringRef first, StringRef second,
                     SmallVector<int64_t> batchDims, int64_t x,
                     int64_t y) -> FailureOr<Value> {
    if (first.size() == 1 && second.size() == 1)
      return v;
    return reshapeTo(ctx, v, withGroups(std::move(batchDims), x, y));
  };
  FailureOr<Value> left = regroup(lhs, aFree, contracted, batchA, m, k);
  FailureOr<Value> right = regroup(rhs, contracted, bFree, batchB, k, n);
  if (failed(left) || failed(right))
    return failure();
  RankedTensorType leftType = llvm::cast<RankedTensorType>(left->getType()),
                   rightType = llvm::cast<RankedTensorType>(right->getType());
  std::optional<SmallVector<int64_t>> productShape =
      matmulShape(leftType.getShape(), rightType.getShape());
  if (!productShape)
    return ctx.emitError() << "cannot multiply shapes "
                           << formatShape(leftType.getShape()) << " and "
                           << formatShape(rightType.getShape());
  Value product =
      ctx.createOp<MatMulOp>(
             RankedTensorType::get(*productShape, leftType.getElementType()),
             *left, *right)
          .getOutput();
  // Split the merged groups back into their labels.
  std::string labels = batch + aFree + bFree;
  SmallVector<int64_t> shape(productShape->begin(),
                             productShape->begin() + batch.size());
  for (char c : aFree)
    shape.push_back(a.dimOf(c));
  for (char c : bFree)
    shape.push_back(b.dimOf(c));
  if (aFree.size() != 1 || bFree.size() != 1) {
    FailureOr<Value> split = reshapeTo(ctx, product, shape);
    if (failed(split))
      return failure();
    product = *split;
  }
  return Labeled{product, labels};
}

static LogicalResult convertEinsum(NodeContext &ctx) {
  size_t count = ctx.getNumInputs();
  if (failed(ctx.checkInputs(1, std::max<size_t>(count, 1))))
    return failure();
  FailureOr<std::string> text = ctx.getString("equation");
  if (failed(text))
    return failure();
  SmallVector<int64_t> ranks;
  Type element = ctx.getInputType(0).getElementType();
  for (size_t i = 0; i < count; ++i) {
    ranks.push_back(ctx.getInputType(i).getRank());
    if (ctx.getInputType(i).getElementType() != element)
      return ctx.emitError() << "operand element types " << element << " and "
                             << ctx.getInputType(i).getElementType()
                             << " differ";
  }
  FailureOr<Equation> eq = parseEquation(ctx, *text, ranks);
  if (failed(eq))
    return failure();
  Labeled acc{ctx.getInput(0), eq->inputs[0]};
  for (size_t i = 1; i < count; ++i) {
    // Labels the rest of the equation still needs.
    std::string need = eq->output;
    for (size_t j = i + 1; j < count; ++j)
      need += eq->inputs[j];
    FailureOr<Labeled> next =
        contract(ctx, acc, {ctx.getInput(i), eq->inputs[i]}, need);
    if (failed(next))
      return failure();
    acc = *next;
  }
  acc = sumOut(ctx, acc, eq->output);
  ctx.setOutput(0, transposeTo(ctx, acc, eq->output));
  return success();
}

static constexpr int64_t kMax = kMaxSupportedOpset;

ArrayRef<ConverterEntry> mlir::lmopt::onnx_import::getEinsumConverters() {
  static const ConverterEntry entries[] = {
      {"", "Einsum", 12, kMax, convertEinsum},
  };
  return entries;
}

//===- FuseAttentionMask.cpp - masks around the softmax -------------------===//
//
// The attention matcher's view of masking: on the scores side, which operand
// of an add is the scores, which fill value hides a position, and whether a
// boolean condition is the causal (lower-triangular) mask sliced to the
// scores; on the probabilities side, the guard that zeroes fully masked rows.
//
//===----------------------------------------------------------------------===//

#include "FuseAttentionMatch.h"

#include "lmopt/Dialect/Lmopt/IR/LmoptOps.h"
#include "lmopt/Dialect/Lmopt/IR/ShapeUtils.h"
#include "lmopt/Dialect/Lmopt/Transforms/PatternUtils.h"

#include "mlir/IR/BuiltinAttributes.h"

#include <algorithm>
#include <cmath>

using namespace mlir;
using namespace mlir::lmopt;

FailureOr<bool> mlir::lmopt::isCausalCondition(Value cond, int64_t sq,
                                               int64_t sk,
                                               std::string &reason) {
  while (auto cast = cond.getDefiningOp<CastOp>())
    cond = cast.getInput();
  int64_t rowBegin = 0, colBegin = 0;
  SmallVector<SliceOp> slices;
  while (auto slice = cond.getDefiningOp<SliceOp>()) {
    slices.push_back(slice);
    cond = slice.getInput();
    while (auto cast = cond.getDefiningOp<CastOp>())
      cond = cast.getInput();
  }
  auto constant = cond.getDefiningOp<ConstantOp>();
  if (slices.empty() || !constant)
    return false;
  auto dense = llvm::dyn_cast<DenseElementsAttr>(constant.getValue());
  ArrayRef<int64_t> shape = shapeOf(constant);
  if (!dense || shape.size() < 2 || shape.end()[-1] != shape.end()[-2])
    return false;
  int64_t size = shape.back();
  if (dense.getNumElements() != size * size ||
      !dense.getElementType().isSignlessInteger())
    return false;
  // Lower-triangular: element (i, j) is nonzero exactly when j <= i.
  int64_t index = 0;
  for (const APInt &element : dense.getValues<APInt>()) {
    int64_t i = index / size, j = index % size;
    ++index;
    if (element.isZero() == (j <= i))
      return false;
  }
  if (ShapedType::isDynamic(sq) || ShapedType::isDynamic(sk)) {
    reason = "causal mask is sliced at run-time sequence lengths; cannot "
             "prove it selects rows [Sk-Sq, Sk)";
    return failure();
  }
  int64_t rank = shape.size();
  int64_t rowEnd = size, colEnd = size;
  for (SliceOp slice : llvm::reverse(slices)) {
    auto read = [](Value v) -> std::optional<SmallVector<int64_t>> {
      if (!v)
        return std::nullopt;
      auto c = v.getDefiningOp<ConstantOp>();
      auto d = c ? llvm::dyn_cast<DenseIntElementsAttr>(c.getValue())
                 : DenseIntElementsAttr();
      if (!d)
        return std::nullopt;
      SmallVector<int64_t> out;
      for (const APInt &x : d.getValues<APInt>())
        out.push_back(x.getSExtValue());
      return out;
    };
    auto starts = read(slice.getStarts()), ends = read(slice.getEnds());
    auto axes = read(slice.getAxes());
    if (!axes) {
      axes.emplace();
      for (int64_t a = 0; starts && a < (int64_t)starts->size(); ++a)
        axes->push_back(a);
    }
    std::optional<SmallVector<int64_t>> steps = SmallVector<int64_t>();
    if (slice.getSteps())
      steps = read(slice.getSteps());
    if (!starts || !ends || !steps || starts->size() != ends->size() ||
        axes->size() != starts->size()) {
      reason = "causal mask is sliced at run-time bounds; cannot prove it "
               "selects rows [Sk-Sq, Sk)";
      return failure();
    }
    for (auto [i, axis] : llvm::enumerate(*axes)) {
      std::optional<int64_t> a = normalizeAxis(axis, rank);
      if (!steps->empty() && (*steps)[i] != 1)
        return false;
      if (!a || *a < rank - 2)
        continue;
      int64_t &begin = *a == rank - 2 ? rowBegin : colBegin;
      int64_t &end = *a == rank - 2 ? rowEnd : colEnd;
      int64_t extent = end - begin;
      auto clamp = [&](int64_t x) {
        x = x < 0 ? x + extent : x;
        return std::clamp<int64_t>(x, 0, extent);
      };
      int64_t newBegin = begin + clamp((*starts)[i]);
      int64_t newEnd = begin + clamp((*ends)[i]);
      begin = newBegin;
      end = std::max(newBegin, newEnd);
    }
  }
  if (rowBegin != sk - sq || rowEnd != sk || colBegin != 0 || colEnd != sk) {
    reason = "lower-triangular mask slice selects rows [" +
             std::to_string(rowBegin) + ", " + std::to_string(rowEnd) +
             ") and cols [" + std::to_string(colBegin) + ", " +
             std::to_string(colEnd) + "), not a causal mask for scores " +
             std::to_string(sq) + "x" + std::to_string(sk);
    return failure();
  }
  return true;
}

bool mlir::lmopt::reachesScoresMatMul(Value value) {
  SmallVector<Value> worklist = {value};
  for (int steps = 0; !worklist.empty() && steps < 16; ++steps) {
    Operation *op = worklist.pop_back_val().getDefiningOp();
    if (!op)
      continue;
    if (llvm::isa<MatMulOp>(op) && shapeOf(op->getResult(0)).size() == 4)
      return true;
    if (llvm::isa<MulOp, DivOp, AddOp, CastOp>(op))
      llvm::append_range(worklist, op->getOperands());
    else if (auto where = llvm::dyn_cast<WhereOp>(op))
      worklist.append({where.getX(), where.getY()});
  }
  return false;
}

bool mlir::lmopt::isMaskedFill(Value value) {
  std::optional<double> fill = getSplatValue(value);
  return fill && *fill <= -1.0e30;
}

bool mlir::lmopt::isMinusInfFill(Value value) {
  std::optional<double> fill = getSplatValue(value);
  return fill && std::isinf(*fill) && *fill < 0.0;
}

std::optional<SelectedMask> mlir::lmopt::matchSelectedMask(Value mask) {
  auto where = mask.getDefiningOp<WhereOp>();
  if (!where)
    return std::nullopt;
  auto isZero = [](Value v) {
    std::optional<double> splat = getSplatValue(v);
    return splat && *splat == 0.0;
  };
  bool hiddenWhereTrue = isMaskedFill(where.getX());
  Value zero = hiddenWhereTrue ? where.getY() : where.getX();
  Value fill = hiddenWhereTrue ? where.getX() : where.getY();
  if (!isZero(zero) || !isMaskedFill(fill))
    return std::nullopt;
  return SelectedMask{where.getCondition(), hiddenWhereTrue,
                      isMinusInfFill(fill)};
}

FailureOr<Value> mlir::lmopt::matchNanGuard(Value probs, std::string &reason) {
  auto isNanUser = llvm::find_if(probs.getUsers(), [](Operation *user) {
    return llvm::isa<IsNaNOp>(user);
  });
  if (isNanUser == probs.getUsers().end())
    return Value();
  auto isNan = llvm::cast<IsNaNOp>(*isNanUser);
  auto where = isNan.getOutput().hasOneUse()
                   ? llvm::dyn_cast<WhereOp>(*isNan->getUsers().begin())
                   : WhereOp();
  if (!where || where.getCondition() != isNan.getOutput()) {
    reason = "NaN test of the attention probabilities is not only the "
             "condition of a where";
    return failure();
  }
  if (where.getY() != probs) {
    reason = "where on the NaN test of the attention probabilities does not "
             "keep the probabilities where they are not NaN";
    return failure();
  }
  std::optional<double> fill = getSplatValue(where.getX());
  if (!fill || *fill != 0.0) {
    reason = "NaN attention probabilities are replaced with " +
             (fill ? std::to_string(*fill) : std::string("a tensor")) +
             ", not 0";
    return failure();
  }
  if (where.getType() != probs.getType()) {
    reason = "NaN guard broadcasts the attention probabilities";
    return failure();
  }
  for (Operation *user : probs.getUsers()) {
    if (user != isNan && user != where) {
      reason = "attention probabilities have other users";
      return failure();
    }
  }
  return where.getOutput();
}

//===- SymbolicShapeRules.cpp - per-op rules of the symbolic shapes -------===//
//
// How each op's result dims (and, for small integer vectors, values) follow
// from its operands' as polynomials over the input dims; the analysis
// (SymbolicShapes.cpp) applies them in dominance order.
//
//===----------------------------------------------------------------------===//

#include "SymbolicShapeRules.h"

#include "lmopt/Dialect/Lmopt/IR/LmoptOps.h"
#include "lmopt/Dialect/Lmopt/IR/ShapeUtils.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "llvm/ADT/STLExtras.h"

#include <algorithm>
#include <functional>
#include <limits>

using namespace mlir;
using namespace mlir::lmopt;

//===----------------------------------------------------------------------===//
// Rules
//===----------------------------------------------------------------------===//

/// Shape vectors longer than this are not tracked element by element.
static constexpr int64_t kMaxTrackedElements = 16;

using Exprs = SmallVector<SymExpr>;

static bool isTrackableInteger(Value value) {
  auto type = llvm::dyn_cast<RankedTensorType>(value.getType());
  return type && type.getElementType().isInteger() && type.getRank() <= 1 &&
         type.hasStaticShape() && type.getNumElements() <= kMaxTrackedElements;
}

static Exprs allDims(SymbolicShapes &shapes, Value value) {
  Exprs out;
  auto type = llvm::dyn_cast<RankedTensorType>(value.getType());
  if (!type)
    return out;
  for (int64_t dim = 0; dim < type.getRank(); ++dim)
    out.push_back(shapes.dimOf(value, dim));
  return out;
}

static std::optional<Exprs> valuesOf(SymbolicShapes &shapes, Value value) {
  if (std::optional<ArrayRef<SymExpr>> known = shapes.getValues(value))
    return llvm::map_to_vector(
        *known, [&](const SymExpr &v) { return shapes.canonical(v); });
  return std::nullopt;
}

/// The elements of `value` when all are integer constants.
static std::optional<SmallVector<int64_t>> constantsOf(SymbolicShapes &shapes,
                                                       Value value) {
  std::optional<Exprs> exprs = valuesOf(shapes, value);
  if (!exprs)
    return std::nullopt;
  SmallVector<int64_t> out;
  for (const SymExpr &expr : *exprs) {
    std::optional<int64_t> constant = expr.getConstant();
    if (!constant)
      return std::nullopt;
    out.push_back(*constant);
  }
  return out;
}

/// Numpy broadcast of one pair of dims: equal expressions merge and a
/// constant 1 stretches; with bounds, two other symbolic dims are assumed
/// equal; anything else is unproven.
static SymExpr broadcastDim(SymbolicShapes &shapes, const SymExpr &lhs,
                            const SymExpr &rhs, Operation *op) {
  if (lhs == rhs || rhs.isConstant(1))
    return lhs;
  if (lhs.isConstant(1))
    return rhs;
  if (op && !lhs.getConstant() && !rhs.getConstant() &&
      shapes.assumeEqual(lhs, rhs, op))
    return lhs;
  return shapes.fresh();
}

static Exprs broadcast(SymbolicShapes &shapes, ArrayRef<SymExpr> lhs,
                       ArrayRef<SymExpr> rhs, Operation *op = nullptr) {
  size_t rank = std::max(lhs.size(), rhs.size());
  Exprs out;
  for (size_t i = 0; i < rank; ++i) {
    size_t fromEnd = rank - i;
    SymExpr one = SymExpr::constant(1);
    const SymExpr &l = fromEnd <= lhs.size() ? lhs[lhs.size() - fromEnd] : one;
    const SymExpr &r = fromEnd <= rhs.size() ? rhs[rhs.size() - fromEnd] : one;
    out.push_back(broadcastDim(shapes, l, r, op));
  }
  return out;
}

static void setSameAsFirstOperand(Operation *op, SymbolicShapes &shapes) {
  Exprs dims = allDims(shapes, op->getOperand(0));
  for (Value result : op->getResults())
    if (auto type = llvm::dyn_cast<RankedTensorType>(result.getType()))
      if (type.getRank() == static_cast<int64_t>(dims.size()))
        shapes.setDims(result, dims);
}

/// Result i shaped like operand i (the gradients of attention_grad, one
/// per query, key and value).
static void setResultsAsOperands(Operation *op, SymbolicShapes &shapes) {
  for (auto [operand, result] : llvm::zip(op->getOperands(), op->getResults()))
    if (auto type = llvm::dyn_cast<RankedTensorType>(result.getType()))
      if (type.getRank() ==
          llvm::cast<RankedTensorType>(operand.getType()).getRank())
        shapes.setDims(result, allDims(shapes, operand));
}

/// Identity and integer casts keep the contents; a cast to i1 does not (it
/// compares with zero), nor does one to a float.
static void setCopy(Operation *op, SymbolicShapes &shapes) {
  setSameAsFirstOperand(op, shapes);
  Value result = op->getResult(0);
  if (!isTrackableInteger(result) ||
      llvm::cast<RankedTensorType>(result.getType())
              .getElementType()
              .getIntOrFloatBitWidth() < 32)
    return;
  if (std::optional<Exprs> values = valuesOf(shapes, op->getOperand(0)))
    shapes.setValues(result, *values);
}

/// Two dims that a valid program requires to be equal (concat's other
/// axes): a known constant wins, different symbols stay unproven.
static SymExpr mergeEqualDims(SymbolicShapes &shapes, const SymExpr &lhs,
                              const SymExpr &rhs, Operation *op) {
  if (lhs == rhs || lhs.getConstant())
    return lhs;
  if (rhs.getConstant())
    return rhs;
  if (shapes.assumeEqual(lhs, rhs, op))
    return lhs;
  return shapes.fresh();
}

/// Elementwise arithmetic on tracked integer contents.
static std::optional<SymExpr> combine(Operation *op, const SymExpr &lhs,
                                      const SymExpr &rhs) {
  if (isa<AddOp>(op))
    return lhs + rhs;
  if (isa<SubOp>(op))
    return lhs - rhs;
  if (isa<MulOp>(op))
    return lhs * rhs;
  if (isa<DivOp>(op))
    return lhs.divideExactly(rhs);
  if (isa<EqualOp>(op)) {
    // Symbols stand for dims, so a difference with positive coefficients and
    // a positive constant term is never zero.
    SymExpr difference = lhs - rhs;
    if (difference.isConstant(0))
      return SymExpr::constant(1);
    if (difference.isPositive() || (rhs - lhs).isPositive())
      return SymExpr::constant(0);
  }
  return std::nullopt;
}

/// Element `index` of tracked contents that broadcast along one 1-D dim.
static const SymExpr &elementAt(ArrayRef<SymExpr> values, int64_t index) {
  return values[values.size() == 1 ? 0 : index];
}

static void setBroadcast(Operation *op, SymbolicShapes &shapes) {
  Exprs dims = allDims(shapes, op->getOperand(0));
  for (Value operand : op->getOperands().drop_front())
    dims = broadcast(shapes, dims, allDims(shapes, operand), op);
  shapes.setDims(op->getResult(0), dims);

  Value result = op->getResult(0);
  if (!isTrackableInteger(result))
    return;
  SmallVector<Exprs> operands;
  for (Value operand : op->getOperands()) {
    std::optional<Exprs> values = valuesOf(shapes, operand);
    if (!values)
      return;
    operands.push_back(std::move(*values));
  }
  auto count = llvm::cast<RankedTensorType>(result.getType()).getNumElements();
  for (const Exprs &values : operands)
    if (values.size() != 1 && static_cast<int64_t>(values.size()) != count)
      return;
  Exprs out;
  for (int64_t i = 0; i < count; ++i) {
    std::optional<SymExpr> element;
    if (isa<WhereOp>(op)) {
      // where(cond, x, y) with a decided condition, the idiom that turns the
      // -1 of a shape vector into 1 before Expand.
      std::optional<int64_t> cond = elementAt(operands[0], i).getConstant();
      if (cond)
        element = elementAt(operands[*cond ? 1 : 2], i);
    } else if (operands.size() == 2) {
      element =
          combine(op, elementAt(operands[0], i), elementAt(operands[1], i));
    }
    if (!element)
      return;
    out.push_back(*element);
  }
  shapes.setValues(result, out);
}

static void setConstant(ConstantOp op, SymbolicShapes &shapes) {
  shapes.setDims(op, allDims(shapes, op));
  if (!isTrackableInteger(op))
    return;
  auto elements = op.getValue().tryGetValues<APInt>();
  if (!elements)
    return;
  Exprs out;
  for (const APInt &element : *elements)
    out.push_back(SymExpr::constant(element.getSExtValue()));
  shapes.setValues(op, out);
}

static void setShape(ShapeOp op, SymbolicShapes &shapes) {
  Exprs inputDims = allDims(shapes, op.getInput());
  int64_t rank = inputDims.size();
  auto clamp = [&](int64_t index) {
    if (index < 0)
      index += rank;
    return std::clamp<int64_t>(index, 0, rank);
  };
  int64_t start = clamp(op.getStart());
  int64_t end = op.getEnd() ? clamp(*op.getEnd()) : rank;
  Exprs out;
  for (int64_t i = start; i < end; ++i)
    out.push_back(inputDims[i]);
  shapes.setDims(op, {SymExpr::constant(out.size())});
  if (isTrackableInteger(op))
    shapes.setValues(op, out);
}

static void setSize(SizeOp op, SymbolicShapes &shapes) {
  SymExpr product = SymExpr::constant(1);
  for (const SymExpr &dim : allDims(shapes, op.getInput()))
    product = product * dim;
  shapes.setDims(op, {});
  shapes.setValues(op, {product});
}

static void setConstantOfShape(ConstantOfShapeOp op, SymbolicShapes &shapes) {
  if (std::optional<Exprs> values = valuesOf(shapes, op.getShape()))
    shapes.setDims(op, *values);
}

static void setRange(RangeOp op, SymbolicShapes &shapes) {
  // The length max(ceil((limit - start) / delta), 0) is `limit - start` when
  // delta is 1 and that difference is provably non-negative.
  std::optional<Exprs> start = valuesOf(shapes, op.getStart());
  std::optional<Exprs> limit = valuesOf(shapes, op.getLimit());
  std::optional<SmallVector<int64_t>> delta =
      constantsOf(shapes, op.getDelta());
  if (!start || !limit || !delta || start->size() != 1 || limit->size() != 1 ||
      delta->size() != 1 || (*delta)[0] != 1)
    return;
  SymExpr length = (*limit)[0] - (*start)[0];
  if (length.isNonNegative())
    shapes.setDims(op, {length});
}

static void setMatMul(Operation *op, SymbolicShapes &shapes) {
  Exprs lhs = allDims(shapes, op->getOperand(0));
  Exprs rhs = allDims(shapes, op->getOperand(1));
  if (lhs.empty() || rhs.empty())
    return;
  bool lhsVector = lhs.size() == 1, rhsVector = rhs.size() == 1;
  if (lhsVector)
    lhs.insert(lhs.begin(), SymExpr::constant(1));
  if (rhsVector)
    rhs.push_back(SymExpr::constant(1));
  Exprs out = broadcast(shapes, ArrayRef(lhs).drop_back(2),
                        ArrayRef(rhs).drop_back(2), op);
  if (!lhsVector)
    out.push_back(lhs[lhs.size() - 2]);
  if (!rhsVector)
    out.push_back(rhs.back());
  shapes.setDims(op->getResult(0), out);
}

static void setGemm(GemmOp op, SymbolicShapes &shapes) {
  Exprs a = allDims(shapes, op.getA());
  Exprs b = allDims(shapes, op.getB());
  if (a.size() != 2 || b.size() != 2)
    return;
  shapes.setDims(op, {a[op.getTransA() ? 1 : 0], b[op.getTransB() ? 0 : 1]});
}

static void setLinear(LinearOp op, SymbolicShapes &shapes) {
  Exprs out = allDims(shapes, op.getInput());
  Exprs weight = allDims(shapes, op.getWeight());
  if (out.empty() || weight.size() != 2)
    return;
  if (op.getTransposeInput()) {
    if (out.size() != 2)
      return;
    std::swap(out[0], out[1]);
  }
  out.back() = weight[op.getTransposeWeight() ? 0 : 1];
  shapes.setDims(op, out);
}

template <typename ReduceOpT>
static void setReduce(ReduceOpT op, SymbolicShapes &shapes) {
  Exprs dims = allDims(shapes, op.getInput());
  int64_t rank = dims.size();
  SmallVector<bool> reduced(rank, op.getAxes().empty());
  for (int64_t axis : op.getAxes()) {
    std::optional<int64_t> normalized = normalizeAxis(axis, rank);
    if (!normalized)
      return;
    reduced[*normalized] = true;
  }
  Exprs out;
  for (int64_t i = 0; i < rank; ++i) {
    if (!reduced[i])
      out.push_back(dims[i]);
    else if (op.getKeepdims())
      out.push_back(SymExpr::constant(1));
  }
  shapes.setDims(op, out);
}

static void setGather(GatherOp op, SymbolicShapes &shapes) {
  Exprs data = allDims(shapes, op.getData());
  std::optional<int64_t> axis = normalizeAxis(op.getAxis(), data.size());
  if (!axis)
    return;
  Exprs out(data.begin(), data.begin() + *axis);
  llvm::append_range(out, allDims(shapes, op.getIndices()));
  out.append(data.begin() + *axis + 1, data.end());
  shapes.setDims(op, out);

  // A gather from a shape vector picks its elements.
  std::optional<Exprs> values = valuesOf(shapes, op.getData());
  std::optional<SmallVector<int64_t>> indices =
      constantsOf(shapes, op.getIndices());
  if (!values || !indices || data.size() != 1 || !isTrackableInteger(op))
    return;
  Exprs picked;
  for (int64_t index : *indices) {
    if (index < 0)
      index += values->size();
    if (index < 0 || index >= static_cast<int64_t>(values->size()))
      return;
    picked.push_back((*values)[index]);
  }
  shapes.setValues(op, picked);
}

static void setReshape(ReshapeOp op, SymbolicShapes &shapes) {
  Exprs input = allDims(shapes, op.getInput());
  std::optional<Exprs> target = valuesOf(shapes, op.getShape());
  if (!target)
    return;
  Exprs out;
  std::optional<size_t> inferred;
  for (auto [i, element] : llvm::enumerate(*target)) {
    if (element.isConstant(-1) && !inferred) {
      inferred = i;
      out.push_back(SymExpr::constant(1));
    } else if (element.isConstant(0) && !op.getAllowzero()) {
      if (i >= input.size())
        return;
      out.push_back(input[i]);
    } else {
      out.push_back(element);
    }
  }
  if (inferred) {
    SymExpr total = SymExpr::constant(1), known = SymExpr::constant(1);
    for (const SymExpr &dim : input)
      total = total * dim;
    for (const SymExpr &dim : out)
      known = known * dim;
    std::optional<SymExpr> quotient = total.divideExactly(known);
    // With bounds, a symbolic target dim facing a different symbolic input
    // dim at the same position (a mask reshaped to the ids' batch) is
    // assumed to be that dim, which can make the division exact.
    SmallVector<size_t> facing;
    for (size_t i = 0; !quotient && i < input.size() && i < out.size(); ++i)
      if (i != *inferred && input[i] != out[i] && !input[i].getConstant() &&
          !out[i].getConstant())
        facing.push_back(i);
    if (!quotient && !facing.empty() && shapes.hasBounds()) {
      SymExpr assumed = SymExpr::constant(1);
      for (auto [i, dim] : llvm::enumerate(input))
        assumed = assumed * (llvm::is_contained(facing, i) ? out[i] : dim);
      quotient = assumed.divideExactly(known);
      if (quotient)
        for (size_t i : facing)
          shapes.assumeEqual(input[i], out[i], op);
    }
    out[*inferred] = quotient ? *quotient : shapes.fresh();
  } else {
    // Every target dim given: the element counts must agree. Where they
    // differ only for some sizes within the bounds (a length the exporter
    // baked in as a constant), they are assumed equal, so that a run with
    // other sizes is refused instead of reading the tensor as another shape.
    SymExpr total = SymExpr::constant(1), known = SymExpr::constant(1);
    for (const SymExpr &dim : input)
      total = total * dim;
    for (const SymExpr &dim : out)
      known = known * dim;
    if (total != known && !(total.getConstant() && known.getConstant()))
      shapes.assumeEqual(total, known, op);
  }
  shapes.setDims(op, out);
  if (isTrackableInteger(op))
    if (std::optional<Exprs> values = valuesOf(shapes, op.getInput()))
      shapes.setValues(op, *values);
}

static void setExpand(ExpandOp op, SymbolicShapes &shapes) {
  if (std::optional<Exprs> target = valuesOf(shapes, op.getShape()))
    shapes.setDims(op, broadcast(shapes, allDims(shapes, op.getInput()),
                                 *target, op.getOperation()));
}

static void setTranspose(TransposeOp op, SymbolicShapes &shapes) {
  Exprs input = allDims(shapes, op.getInput());
  Exprs out;
  for (int64_t index : op.getPerm())
    out.push_back(input[index]);
  shapes.setDims(op, out);
}

static void setSplit(SplitOp op, SymbolicShapes &shapes) {
  Exprs input = allDims(shapes, op.getInput());
  std::optional<int64_t> axis = normalizeAxis(op.getAxis(), input.size());
  if (!axis || op.getSplitSizes().size() != op.getNumResults())
    return;
  for (auto [result, size] :
       llvm::zip_equal(op.getResults(), op.getSplitSizes())) {
    Exprs out = input;
    out[*axis] = SymExpr::constant(size);
    shapes.setDims(result, out);
  }
}

static void setConcat(ConcatOp op, SymbolicShapes &shapes) {
  Exprs out = allDims(shapes, op.getInputs().front());
  std::optional<int64_t> axis = normalizeAxis(op.getAxis(), out.size());
  if (!axis)
    return;
  for (Value input : op.getInputs().drop_front()) {
    Exprs dims = allDims(shapes, input);
    for (size_t i = 0; i < out.size(); ++i)
      out[i] = static_cast<int64_t>(i) == *axis
                   ? out[i] + dims[i]
                   : mergeEqualDims(shapes, out[i], dims[i], op);
  }
  shapes.setDims(op, out);

  if (!isTrackableInteger(op))
    return;
  Exprs values;
  for (Value input : op.getInputs()) {
    std::optional<Exprs> part = valuesOf(shapes, input);
    if (!part)
      return;
    llvm::append_range(values, *part);
  }
  shapes.setValues(op, values);
}

/// The extent of `[start, end)` with unit step over a dim of size `dim`,
/// when provable: ONNX clamps both bounds into [0, dim].
static std::optional<SymExpr> sliceExtent(const SymbolicShapes &shapes,
                                          const SymExpr &dim,
                                          const SymExpr &start,
                                          const SymExpr &end) {
  std::optional<int64_t> size = dim.getConstant();
  std::optional<int64_t> first = start.getConstant();
  std::optional<int64_t> last = end.getConstant();
  if (size && first && last) {
    auto clamp = [&](int64_t index) {
      return std::clamp<int64_t>(index < 0 ? index + *size : index, 0, *size);
    };
    return SymExpr::constant(
        std::max<int64_t>(clamp(*last) - clamp(*first), 0));
  }
  // A prefix [0, end) of a constant dim with a symbolic end that the
  // bounds keep within the dim: min(size, end) is end.
  if (size && first == 0 && end.isNonNegative())
    if (std::optional<int64_t> most = shapes.getUpperBound(end);
        most && *most <= *size)
      return end;
  // Symbolic dim: only the whole-dim forms are provable without bounds.
  if (first != 0)
    return std::nullopt;
  if (end == dim || (last && *last >= std::numeric_limits<int32_t>::max()))
    return dim;
  return std::nullopt;
}

static void setSlice(SliceOp op, SymbolicShapes &shapes) {
  Exprs out = allDims(shapes, op.getInput());
  std::optional<Exprs> starts = valuesOf(shapes, op.getStarts());
  std::optional<Exprs> ends = valuesOf(shapes, op.getEnds());
  if (!starts || !ends || starts->size() != ends->size())
    return;
  SmallVector<int64_t> axes, steps(starts->size(), 1);
  if (op.getAxes()) {
    std::optional<SmallVector<int64_t>> known =
        constantsOf(shapes, op.getAxes());
    if (!known)
      return;
    axes = *known;
  } else {
    axes = llvm::to_vector(llvm::seq<int64_t>(0, starts->size()));
  }
  if (op.getSteps()) {
    std::optional<SmallVector<int64_t>> known =
        constantsOf(shapes, op.getSteps());
    if (!known)
      return;
    steps = *known;
  }
  if (axes.size() != starts->size() || steps.size() != starts->size())
    return;
  Exprs values;
  std::optional<Exprs> inputValues = valuesOf(shapes, op.getInput());
  for (size_t i = 0; i < axes.size(); ++i) {
    std::optional<int64_t> axis = normalizeAxis(axes[i], out.size());
    if (!axis)
      return;
    std::optional<SymExpr> extent =
        steps[i] == 1
            ? sliceExtent(shapes, out[*axis], (*starts)[i], (*ends)[i])
            : std::nullopt;
    out[*axis] = extent ? *extent : shapes.fresh();
  }
  shapes.setDims(op, out);

  // Unit-step slices of a tracked 1-D vector keep their elements.
  std::optional<int64_t> first =
      starts->size() == 1 ? (*starts)[0].getConstant() : std::nullopt;
  if (!inputValues || !first || steps[0] != 1 || out.size() != 1 ||
      !out[0].getConstant() || !isTrackableInteger(op))
    return;
  int64_t begin = *first < 0 ? *first + inputValues->size() : *first;
  begin = std::clamp<int64_t>(begin, 0, inputValues->size());
  int64_t count = *out[0].getConstant();
  if (begin + count > static_cast<int64_t>(inputValues->size()))
    return;
  shapes.setValues(op, Exprs(inputValues->begin() + begin,
                             inputValues->begin() + begin + count));
}

static void setSqueeze(SqueezeOp op, SymbolicShapes &shapes) {
  Exprs input = allDims(shapes, op.getInput());
  SmallVector<bool> dropped(input.size(), false);
  for (int64_t axis : op.getAxes()) {
    std::optional<int64_t> normalized = normalizeAxis(axis, input.size());
    if (!normalized)
      return;
    dropped[*normalized] = true;
  }
  if (op.getAxes().empty())
    for (auto [i, dim] : llvm::enumerate(input))
      dropped[i] = dim.isConstant(1);
  Exprs out;
  for (auto [i, dim] : llvm::enumerate(input))
    if (!dropped[i])
      out.push_back(dim);
  shapes.setDims(op, out);
  if (isTrackableInteger(op))
    if (std::optional<Exprs> values = valuesOf(shapes, op.getInput()))
      shapes.setValues(op, *values);
}

static void setUnsqueeze(UnsqueezeOp op, SymbolicShapes &shapes) {
  Exprs input = allDims(shapes, op.getInput());
  int64_t rank = input.size() + op.getAxes().size();
  SmallVector<bool> inserted(rank, false);
  for (int64_t axis : op.getAxes()) {
    std::optional<int64_t> normalized = normalizeAxis(axis, rank);
    if (!normalized)
      return;
    inserted[*normalized] = true;
  }
  Exprs out;
  auto next = input.begin();
  for (int64_t i = 0; i < rank; ++i) {
    if (inserted[i])
      out.push_back(SymExpr::constant(1));
    else if (next != input.end())
      out.push_back(*next++);
  }
  shapes.setDims(op, out);
  if (isTrackableInteger(op))
    if (std::optional<Exprs> values = valuesOf(shapes, op.getInput()))
      shapes.setValues(op, *values);
}

static void setGatherElements(GatherElementsOp op, SymbolicShapes &shapes) {
  shapes.setDims(op, allDims(shapes, op.getIndices()));
}

/// indices.shape[:-1] + data.shape[batch_dims + r:], r the last dim of the
/// indices, static by the verifier (the dynamo exporter's mask lookups).
static void setGatherND(GatherNDOp op, SymbolicShapes &shapes) {
  Exprs data = allDims(shapes, op.getData());
  Exprs indices = allDims(shapes, op.getIndices());
  int64_t tuple =
      llvm::cast<RankedTensorType>(op.getIndices().getType()).getShape().back();
  int64_t from = op.getBatchDims() + tuple;
  if (indices.empty() || from > static_cast<int64_t>(data.size()))
    return;
  Exprs out(indices.begin(), indices.end() - 1);
  out.append(data.begin() + from, data.end());
  shapes.setDims(op, out);
}

/// The data's dims (the updates' are checked where the op runs).
static void setScatterND(ScatterNDOp op, SymbolicShapes &shapes) {
  shapes.setDims(op, allDims(shapes, op.getData()));
}

namespace {
/// The rules, keyed by op type; ops with a same-shape trait need no entry.
class RuleTable {
public:
  using Rule = std::function<void(Operation *, SymbolicShapes &)>;

  RuleTable() {
    addTyped<ConstantOp>(setConstant);
    addTyped<ShapeOp>(setShape);
    addTyped<SizeOp>(setSize);
    addTyped<ConstantOfShapeOp>(setConstantOfShape);
    addTyped<RangeOp>(setRange);
    addTyped<GemmOp>(setGemm);
    addTyped<LinearOp>(setLinear);
    addTyped<ReduceMeanOp>(setReduce<ReduceMeanOp>);
    addTyped<ReduceSumOp>(setReduce<ReduceSumOp>);
    addTyped<ReduceMaxOp>(setReduce<ReduceMaxOp>);
    addTyped<ReduceMinOp>(setReduce<ReduceMinOp>);
    addTyped<GatherOp>(setGather);
    addTyped<GatherElementsOp>(setGatherElements);
    addTyped<GatherNDOp>(setGatherND);
    addTyped<ScatterNDOp>(setScatterND);
    addTyped<ReshapeOp>(setReshape);
    addTyped<ExpandOp>(setExpand);
    addTyped<TransposeOp>(setTranspose);
    addTyped<SplitOp>(setSplit);
    addTyped<ConcatOp>(setConcat);
    addTyped<SliceOp>(setSlice);
    addTyped<SqueezeOp>(setSqueeze);
    addTyped<UnsqueezeOp>(setUnsqueeze);
    add<MatMulOp, MatMulIntegerOp>(setMatMul);
    add<CastOp, IdentityOp>(setCopy);
    add<AddOp, SubOp, MulOp, DivOp, PowOp, MaxOp, MinOp, EqualOp, LessOp,
        GreaterOp, AndOp, OrOp, ModOp, WhereOp>(setBroadcast);
    // Results shaped like the first operand (the attention query, the
    // normalized input, the quantized tensor).
    add<LayerNormOp, SkipLayerNormOp, RmsNormOp, DropoutOp, AttentionOp,
        RotaryOp, QuantizeOp, DequantizeOp, DynamicQuantizeLinearOp>(
        setSameAsFirstOperand);
    add<AttentionGradOp>(setResultsAsOperands);
  }

  const Rule *lookup(Operation *op) const {
    auto it = rules.find(op->getName().getTypeID());
    return it == rules.end() ? nullptr : &it->second;
  }

private:
  template <typename... OpTs>
  void add(void (*rule)(Operation *, SymbolicShapes &)) {
    (rules.try_emplace(TypeID::get<OpTs>(), rule), ...);
  }
  template <typename OpT> void addTyped(void (*rule)(OpT, SymbolicShapes &)) {
    rules.try_emplace(TypeID::get<OpT>(),
                      [rule](Operation *op, SymbolicShapes &shapes) {
                        rule(llvm::cast<OpT>(op), shapes);
                      });
  }

  llvm::DenseMap<TypeID, Rule> rules;
};
} // namespace

void mlir::lmopt::applySymbolicShapeRule(Operation *op,
                                         SymbolicShapes &shapes) {
  static const RuleTable table;
  if (const RuleTable::Rule *rule = table.lookup(op))
    (*rule)(op, shapes);
  else if (op->getNumOperands() != 0 &&
           (op->hasTrait<OpTrait::SameOperandsAndResultShape>() ||
            op->hasTrait<OpTrait::SameOperandsAndResultType>()))
    setSameAsFirstOperand(op, shapes);
}

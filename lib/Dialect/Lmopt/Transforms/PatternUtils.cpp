//===- PatternUtils.cpp - matching helpers for fusion patterns ------------===//

#include "lmopt/Dialect/Lmopt/Transforms/PatternUtils.h"

#include "lmopt/Dialect/Lmopt/IR/LmoptOps.h"
#include "lmopt/Dialect/Lmopt/IR/ShapeUtils.h"

#include "mlir/IR/AsmState.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "llvm/ADT/TypeSwitch.h"

#include <cmath>

using namespace mlir;
using namespace mlir::lmopt;

std::optional<double> lmopt::getSplatValue(Value value) {
  auto constant = value.getDefiningOp<ConstantOp>();
  if (!constant)
    return std::nullopt;
  auto dense = llvm::dyn_cast<DenseElementsAttr>(constant.getValue());
  if (!dense || (!dense.isSplat() && dense.getNumElements() != 1))
    return std::nullopt;
  Type elementType = dense.getElementType();
  if (llvm::isa<FloatType>(elementType))
    return (*dense.getValues<APFloat>().begin()).convertToDouble();
  if (elementType.isSignlessInteger() && !elementType.isInteger(1))
    return static_cast<double>(
        (*dense.getValues<APInt>().begin()).getSExtValue());
  return std::nullopt;
}

bool lmopt::isSplatNear(Value value, double expected, double tolerance) {
  std::optional<double> actual = getSplatValue(value);
  if (!actual)
    return false;
  double scale = std::max(1.0, std::fabs(expected));
  return std::fabs(*actual - expected) <= tolerance * scale;
}

bool lmopt::isConstant(Value value) {
  return static_cast<bool>(value.getDefiningOp<ConstantOp>());
}

std::optional<SingleAxisSlice> lmopt::getSingleAxisSlice(SliceOp slice) {
  return getSingleAxisSlice(slice.getInput(), slice.getStarts(),
                            slice.getEnds(), slice.getAxes(), slice.getSteps());
}

Value lmopt::sliceOfLastDim(Value value, int64_t start, bool toEnd,
                            int64_t count) {
  auto slice = value.getDefiningOp<SliceOp>();
  if (!slice)
    return {};
  ArrayRef<int64_t> shape = shapeOf(slice.getInput());
  std::optional<SingleAxisSlice> sliced = getSingleAxisSlice(slice);
  if (!sliced || sliced->axis != int64_t(shape.size()) - 1)
    return {};
  const SliceAxis &resolved = sliced->range;
  if (resolved.step != 1 || resolved.start != start ||
      (toEnd ? resolved.start + resolved.count != shape.back()
             : resolved.count != count))
    return {};
  return slice.getInput();
}

Value lmopt::buildI64Vector(OpBuilder &builder, Location loc,
                            ArrayRef<int64_t> values) {
  auto type =
      RankedTensorType::get({int64_t(values.size())}, builder.getI64Type());
  return ConstantOp::create(builder, loc,
                            DenseIntElementsAttr::get(type, values));
}

Value lmopt::buildConstant(OpBuilder &builder, Location loc,
                          RankedTensorType type, ArrayRef<char> bytes,
                          StringRef resourceName, bool asResource) {
  int64_t elementBytes =
      std::max<int64_t>(1, type.getElementTypeBitWidth() / 8);
  ElementsAttr value;
  if (asResource)
    value = DenseResourceElementsAttr::get(
        type, resourceName,
        HeapAsmResourceBlob::allocateAndCopyWithAlign(bytes, elementBytes));
  else
    value = DenseElementsAttr::getFromRawBuffer(type, bytes);
  return ConstantOp::create(builder, loc, value);
}

using DimRef = std::pair<Value, int64_t>;

/// The first dim a Shape op reads, with ONNX's negative start resolved.
static int64_t shapeStart(ShapeOp op) {
  auto start = static_cast<int64_t>(op.getStart());
  int64_t rank = shapeOf(op.getInput()).size();
  return std::clamp<int64_t>(start < 0 ? start + rank : start, 0, rank);
}

/// The value of a one-element integer constant.
static std::optional<double> getScalarIndex(Value value) {
  auto type = llvm::dyn_cast<ShapedType>(value.getType());
  if (!type || !type.hasStaticShape() || type.getNumElements() != 1)
    return std::nullopt;
  return lmopt::getSplatValue(value);
}

/// The first element a unit-step Slice of a static 1-D tensor keeps, with
/// ONNX's clamping of negative and out-of-range starts.
static std::optional<int64_t> getSliceStart(SliceOp slice) {
  ArrayRef<int64_t> inputShape = shapeOf(slice.getInput());
  if (inputShape.size() != 1 || ShapedType::isDynamic(inputShape[0]))
    return std::nullopt;
  auto isZero = [](Value v) {
    std::optional<double> x = v ? getScalarIndex(v) : std::optional<double>();
    return x && *x == 0;
  };
  auto isOne = [](Value v) {
    std::optional<double> x = v ? getScalarIndex(v) : std::optional<double>();
    return x && *x == 1;
  };
  if ((slice.getAxes() && !isZero(slice.getAxes())) ||
      (slice.getSteps() && !isOne(slice.getSteps())))
    return std::nullopt;
  auto starts = slice.getStarts().getDefiningOp<ConstantOp>();
  auto dense = starts ? llvm::dyn_cast<DenseIntElementsAttr>(starts.getValue())
                      : DenseIntElementsAttr();
  if (!dense || dense.getNumElements() != 1)
    return std::nullopt;
  int64_t size = inputShape[0];
  int64_t start = (*dense.getValues<APInt>().begin()).getSExtValue();
  if (start < 0)
    start = start < -size ? 0 : start + size;
  return std::min(start, size);
}

/// Element `index` of a 1-D i64 shape tensor, followed through Concat,
/// Unsqueeze, Squeeze, Cast, Slice and Gather of a Shape.
std::optional<lmopt::ShapeElement> lmopt::getShapeElement(Value shape,
                                                          int64_t index) {
  for (int step = 0; step < 16; ++step) {
    Operation *op = shape.getDefiningOp();
    if (!op)
      return std::nullopt;
    if (auto constant = llvm::dyn_cast<ConstantOp>(op)) {
      auto dense = llvm::dyn_cast<DenseIntElementsAttr>(constant.getValue());
      if (!dense || index >= dense.getNumElements())
        return std::nullopt;
      return ShapeElement{
          (*std::next(dense.getValues<APInt>().begin(), index)).getSExtValue(),
          {},
          0};
    }
    if (auto concat = llvm::dyn_cast<ConcatOp>(op)) {
      Value next;
      for (Value input : concat.getInputs()) {
        ArrayRef<int64_t> inputShape = shapeOf(input);
        int64_t size = inputShape.empty() ? 1 : inputShape[0];
        if (inputShape.size() > 1 || ShapedType::isDynamic(size))
          return std::nullopt;
        if (index < size) {
          next = input;
          break;
        }
        index -= size;
      }
      if (!next)
        return std::nullopt;
      shape = next;
      continue;
    }
    if (auto unsqueeze = llvm::dyn_cast<UnsqueezeOp>(op)) {
      if (!shapeOf(unsqueeze.getInput()).empty() || index != 0)
        return std::nullopt;
      shape = unsqueeze.getInput();
      continue;
    }
    if (auto cast = llvm::dyn_cast<CastOp>(op)) {
      shape = cast.getInput();
      continue;
    }
    // A scalar squeezed out of a one-element vector (Slice + Squeeze).
    if (auto squeeze = llvm::dyn_cast<SqueezeOp>(op)) {
      if (shapeOf(squeeze.getInput()) != ArrayRef<int64_t>{1} || index != 0)
        return std::nullopt;
      shape = squeeze.getInput();
      continue;
    }
    if (auto slice = llvm::dyn_cast<SliceOp>(op)) {
      std::optional<int64_t> start = getSliceStart(slice);
      if (!start)
        return std::nullopt;
      index += *start;
      shape = slice.getInput();
      continue;
    }
    if (auto shapeOp = llvm::dyn_cast<ShapeOp>(op))
      return ShapeElement{std::nullopt, shapeOp.getInput(),
                          shapeStart(shapeOp) + index};
    if (auto gather = llvm::dyn_cast<GatherOp>(op)) {
      auto source = gather.getData().getDefiningOp<ShapeOp>();
      std::optional<double> at = getScalarIndex(gather.getIndices());
      if (!source || !at || gather.getAxis() != 0 || *at < 0)
        return std::nullopt;
      return ShapeElement{std::nullopt, source.getInput(),
                          shapeStart(source) + static_cast<int64_t>(*at)};
    }
    return std::nullopt;
  }
  return std::nullopt;
}

/// The (value, dim) pairs whose size equals dim `dim` of `value`, found by
/// walking producers that carry that dim through. Where two operands of an
/// elementwise op both have the dim and neither is statically 1, both are
/// followed: a dynamic dim broadcast from 1 against a larger one is the one
/// case this does not rule out, and exporters never produce it in attention.
static SmallVector<DimRef> traceDim(Value value, int64_t dim) {
  SmallVector<DimRef> seen = {{value, dim}};
  SmallVector<DimRef> worklist = {{value, dim}};
  auto push = [&](Value v, int64_t d) {
    if (seen.size() < 64 && !llvm::is_contained(seen, DimRef{v, d})) {
      seen.push_back({v, d});
      worklist.push_back({v, d});
    }
  };
  while (!worklist.empty()) {
    auto [current, d] = worklist.pop_back_val();
    Operation *op = current.getDefiningOp();
    if (!op)
      continue;
    int64_t rank = shapeOf(current).size();
    llvm::TypeSwitch<Operation *>(op)
        .Case([&](TransposeOp t) { push(t.getInput(), t.getPerm()[d]); })
        .Case<AddOp, SubOp, MulOp, DivOp>([&](auto binary) {
          for (Value operand : {binary.getLhs(), binary.getRhs()}) {
            ArrayRef<int64_t> shape = shapeOf(operand);
            if (shape.size() == static_cast<size_t>(rank) && shape[d] != 1)
              push(operand, d);
          }
        })
        .Case([&](WhereOp w) {
          for (Value operand : {w.getCondition(), w.getX(), w.getY()}) {
            ArrayRef<int64_t> shape = shapeOf(operand);
            if (shape.size() == static_cast<size_t>(rank) && shape[d] != 1)
              push(operand, d);
          }
        })
        .Case([&](MatMulOp m) {
          if (shapeOf(m.getLhs()).size() == static_cast<size_t>(rank) &&
              d < rank - 1 &&
              (d == rank - 2 || shapeOf(m.getRhs()).size() <= 2))
            push(m.getLhs(), d);
          // The columns are the right operand's.
          int64_t rhsRank = shapeOf(m.getRhs()).size();
          if (d == rank - 1 && rhsRank >= 2)
            push(m.getRhs(), rhsRank - 1);
          // Batch dims broadcast as an elementwise op's do.
          if (d < rank - 2 && shapeOf(m.getRhs()).size() > 2)
            for (Value operand : {m.getLhs(), m.getRhs()}) {
              ArrayRef<int64_t> shape = shapeOf(operand);
              if (shape.size() == static_cast<size_t>(rank) && shape[d] != 1)
                push(operand, d);
            }
        })
        .Case([&](LinearOp l) {
          if (d < rank - 1)
            push(l.getInput(), d);
        })
        .Case([&](GatherOp g) {
          int64_t indicesRank = shapeOf(g.getIndices()).size();
          std::optional<int64_t> axis =
              normalizeAxis(g.getAxis(), shapeOf(g.getData()).size());
          if (!axis)
            return;
          if (*axis == 0 && d < indicesRank)
            push(g.getIndices(), d);
          if (d < *axis)
            push(g.getData(), d);
          else if (d >= *axis + indicesRank)
            push(g.getData(), d - indicesRank + 1);
        })
        .Case([&](SqueezeOp s) {
          ArrayRef<int64_t> in = shapeOf(s.getInput());
          SmallVector<bool> removed(in.size(), false);
          for (int64_t axis : s.getAxes())
            if (std::optional<int64_t> a = normalizeAxis(axis, in.size()))
              removed[*a] = true;
          for (auto [i, size] : llvm::enumerate(in))
            removed[i] = removed[i] || (s.getAxes().empty() && size == 1);
          for (int64_t i = 0, kept = 0; i < (int64_t)in.size(); ++i) {
            if (removed[i])
              continue;
            if (kept++ == d)
              push(s.getInput(), i);
          }
        })
        .Case([&](UnsqueezeOp u) {
          SmallVector<bool> inserted(rank, false);
          for (int64_t axis : u.getAxes())
            if (std::optional<int64_t> a = normalizeAxis(axis, rank))
              inserted[*a] = true;
          if (inserted[d])
            return;
          push(u.getInput(),
               llvm::count(ArrayRef<bool>(inserted).take_front(d), false));
        })
        .Case([&](SplitOp s) {
          if (normalizeAxis(s.getAxis(), rank) != d)
            push(s.getInput(), d);
        })
        .Case([&](ConcatOp c) {
          // Every input has the result's size on the other axes.
          if (normalizeAxis(c.getAxis(), rank) != d)
            for (Value input : c.getInputs())
              push(input, d);
        })
        .Case([&](SliceOp s) {
          // Dims the slice does not name keep their size.
          std::optional<SmallVector<int64_t>> axes;
          if (s.getAxes()) {
            axes = getConstantInts(s.getAxes());
          } else if (std::optional<SmallVector<int64_t>> starts =
                         getConstantInts(s.getStarts())) {
            axes = llvm::to_vector(llvm::seq<int64_t>(0, starts->size()));
          }
          if (axes && llvm::none_of(*axes, [&](int64_t axis) {
                return normalizeAxis(axis, rank) == d;
              }))
            push(s.getInput(), d);
        })
        .Case<LayerNormOp, SkipLayerNormOp, RmsNormOp, SoftmaxOp, CastOp,
              IdentityOp, GeluOp, DropoutOp, RotaryOp>(
            [&](Operation *same) { push(same->getOperand(0), d); })
        .Case([&](ReshapeOp r) {
          std::optional<ShapeElement> element =
              getShapeElement(r.getShape(), d);
          if (!element)
            return;
          if (element->constant == 0 && !r.getAllowzero())
            push(r.getInput(), d);
          else if (element->source && element->dim >= 0 &&
                   element->dim <
                       static_cast<int64_t>(shapeOf(element->source).size()))
            push(element->source, element->dim);
        });
  }
  return seen;
}

/// True when dim `ad` of `a` provably equals dim `bd` of `b`.
bool lmopt::dimsEqual(Value a, int64_t ad, Value b, int64_t bd) {
  int64_t sa = shapeOf(a)[ad], sb = shapeOf(b)[bd];
  if (!ShapedType::isDynamic(sa) && sa == sb)
    return true;
  SmallVector<DimRef> ta = traceDim(a, ad), tb = traceDim(b, bd);
  return llvm::any_of(ta, [&](DimRef r) { return llvm::is_contained(tb, r); });
}

/// The size the -1 entry (`dim`) of `reshape` stands for, when every other
/// entry is a constant or cancels a dim of the input and the input's
/// remaining dims are static.
static std::optional<int64_t> inferredReshapeDim(ReshapeOp reshape,
                                                 int64_t dim) {
  Value input = reshape.getInput();
  ArrayRef<int64_t> in = shapeOf(input);
  SmallVector<bool> cancelled(in.size(), false);
  int64_t outFactor = 1;
  for (int64_t j = 0, e = shapeOf(reshape).size(); j < e; ++j) {
    if (j == dim)
      continue;
    std::optional<ShapeElement> element =
        getShapeElement(reshape.getShape(), j);
    if (!element)
      return std::nullopt;
    if (element->constant) {
      int64_t c = *element->constant;
      if (c == 0 && !reshape.getAllowzero() && j < (int64_t)in.size() &&
          !cancelled[j]) {
        cancelled[j] = true;
        continue;
      }
      if (c <= 0)
        return std::nullopt;
      outFactor *= c;
      continue;
    }
    if (element->dim < 0 ||
        element->dim >= (int64_t)shapeOf(element->source).size())
      return std::nullopt;
    bool matched = false;
    for (size_t i = 0; i < in.size() && !matched; ++i)
      if (!cancelled[i] &&
          dimsEqual(element->source, element->dim, input, int64_t(i)))
        cancelled[i] = matched = true;
    if (matched)
      continue;
    int64_t size = shapeOf(element->source)[element->dim];
    if (ShapedType::isDynamic(size))
      return std::nullopt;
    outFactor *= size;
  }
  int64_t inFactor = 1;
  for (size_t i = 0; i < in.size(); ++i) {
    if (cancelled[i])
      continue;
    if (ShapedType::isDynamic(in[i]))
      return std::nullopt;
    inFactor *= in[i];
  }
  if (outFactor == 0 || inFactor % outFactor != 0)
    return std::nullopt;
  return inFactor / outFactor;
}

std::optional<int64_t> lmopt::getStaticDim(Value value, int64_t dim) {
  ArrayRef<int64_t> shape = shapeOf(value);
  if (dim < 0 || dim >= (int64_t)shape.size())
    return std::nullopt;
  if (!ShapedType::isDynamic(shape[dim]))
    return shape[dim];
  for (auto [v, d] : traceDim(value, dim)) {
    int64_t size = shapeOf(v)[d];
    if (!ShapedType::isDynamic(size))
      return size;
    auto reshape = v.getDefiningOp<ReshapeOp>();
    if (!reshape)
      continue;
    std::optional<ShapeElement> element =
        getShapeElement(reshape.getShape(), d);
    if (element && element->constant == -1)
      if (std::optional<int64_t> inferred = inferredReshapeDim(reshape, d))
        return inferred;
  }
  return std::nullopt;
}

/// True when output dim `i` of `reshape` provably copies dim `i` of its
/// input, or of one of `equivalents` (values known to share that dim).
bool lmopt::reshapeKeepsDim(ReshapeOp reshape, int64_t i,
                            ArrayRef<Value> equivalents) {
  Value input = reshape.getInput();
  int64_t in = shapeOf(input)[i], out = shapeOf(reshape)[i];
  if (!ShapedType::isDynamic(in) && in == out)
    return true;
  std::optional<ShapeElement> element = getShapeElement(reshape.getShape(), i);
  if (!element)
    return false;
  if (element->constant)
    return (*element->constant == 0 && !reshape.getAllowzero()) ||
           (!ShapedType::isDynamic(in) && *element->constant == in);
  if (element->dim < 0 ||
      element->dim >= (int64_t)shapeOf(element->source).size())
    return false;
  if (dimsEqual(element->source, element->dim, input, i))
    return true;
  return llvm::any_of(equivalents, [&](Value v) {
    return dimsEqual(element->source, element->dim, v, i);
  });
}

//===----------------------------------------------------------------------===//
// DimLayout
//===----------------------------------------------------------------------===//

/// What a reshape's output dim is known to hold: a static size, the product
/// of some atoms, or nothing provable (solved from the element count).
struct DimLayout::DimSize {
  enum Kind { Static, Atoms, Unknown } kind = Unknown;
  int64_t value = 0;
  SmallVector<int64_t> atoms;
  /// Atoms: other groups proven of the same size (a self-attention's query
  /// and key lengths, both read from one input dim); a reshape keeps the
  /// order, so the one at the dim's position is the one it takes.
  SmallVector<SmallVector<int64_t>, 1> alternatives;
};

DimLayout::DimLayout(Value source) : current(source) {
  ArrayRef<int64_t> shape = shapeOf(source);
  for (auto [i, size] : llvm::enumerate(shape)) {
    // A dim the type leaves dynamic may still be a proven constant (a head
    // size from a reshape's -1).
    int64_t known = size;
    if (ShapedType::isDynamic(size))
      known = getStaticDim(source, i).value_or(size);
    atoms.push_back({known, {{source, static_cast<int64_t>(i)}}});
    groups.push_back({static_cast<int64_t>(i)});
  }
  if (!atoms.empty() && !ShapedType::isDynamic(atoms.back().size))
    splittable = shape.size() - 1;
}

void DimLayout::recordSingletons(Value result) {
  for (auto [i, group] : llvm::enumerate(groups))
    if (group.size() == 1)
      atoms[group.front()].reps.push_back({result, static_cast<int64_t>(i)});
}

DimLayout::DimSize DimLayout::sizeOfReshapeDim(Operation *op,
                                               int64_t dim) const {
  auto reshape = llvm::cast<ReshapeOp>(op);
  Value input = reshape.getInput();
  int64_t fromType = shapeOf(reshape)[dim];
  DimSize known;
  if (!ShapedType::isDynamic(fromType))
    known = {DimSize::Static, fromType, {}};
  std::optional<ShapeElement> element =
      getShapeElement(reshape.getShape(), dim);
  if (!element)
    return known;
  if (element->constant) {
    if (*element->constant > 0)
      return {DimSize::Static, *element->constant, {}};
    if (*element->constant == 0 && !reshape.getAllowzero() &&
        dim < static_cast<int64_t>(groups.size()))
      return {DimSize::Atoms, 0, groups[dim]};
    return known;
  }
  if (element->dim < 0 ||
      element->dim >= static_cast<int64_t>(shapeOf(element->source).size()))
    return known;
  DimSize matched;
  for (auto [j, group] : llvm::enumerate(groups)) {
    if (!dimsEqual(element->source, element->dim, input, j))
      continue;
    if (matched.kind == DimSize::Atoms)
      matched.alternatives.push_back(group);
    else
      matched = {DimSize::Atoms, 0, group, {}};
  }
  if (matched.kind == DimSize::Atoms)
    return matched;
  for (auto [a, atom] : llvm::enumerate(atoms))
    for (auto [value, d] : atom.reps)
      if (dimsEqual(element->source, element->dim, value, d))
        return {DimSize::Atoms, 0, {static_cast<int64_t>(a)}};
  if (std::optional<int64_t> fromSource =
          getStaticDim(element->source, element->dim))
    return {DimSize::Static, *fromSource, {}};
  return known;
}

void DimLayout::splitLastAtom(SmallVector<int64_t> &queue, size_t at,
                              int64_t first) {
  int64_t second = atoms[splittable].size / first;
  atoms[splittable] = {first, {}};
  atoms.push_back({second, {}});
  queue.insert(queue.begin() + at + 1, atoms.size() - 1);
  splittable = -1;
}

/// Takes the atoms of one output dim of `size` from the front (or back) of
/// `queue[begin, end)`.
bool DimLayout::take(const DimSize &size, SmallVector<int64_t> &queue,
                     size_t &begin, size_t &end, bool fromBack,
                     SmallVector<int64_t> &group) {
  if (size.kind == DimSize::Atoms) {
    SmallVector<ArrayRef<int64_t>, 2> choices = {size.atoms};
    for (const SmallVector<int64_t> &alternative : size.alternatives)
      choices.push_back(alternative);
    for (ArrayRef<int64_t> atoms : choices) {
      if (end - begin < atoms.size())
        continue;
      size_t at = fromBack ? end - atoms.size() : begin;
      group.assign(queue.begin() + at, queue.begin() + at + atoms.size());
      if (!std::is_permutation(group.begin(), group.end(), atoms.begin())) {
        group.clear();
        continue;
      }
      (fromBack ? end : begin) = fromBack ? at : at + atoms.size();
      return true;
    }
    return false;
  }
  // A static 1 (a batch of one) takes one unit atom if the next one is a
  // unit, else none (a new unit dim); the loop below would otherwise fold
  // the unit into the following dim's group.
  if (size.value == 1) {
    if (begin == end)
      return true;
    size_t at = fromBack ? end - 1 : begin;
    if (atoms[queue[at]].size != 1)
      return true;
    group.push_back(queue[at]);
    (fromBack ? end : begin) = fromBack ? at : at + 1;
    return true;
  }
  int64_t product = 1;
  while (product < size.value) {
    if (begin == end)
      return false;
    size_t at = fromBack ? end - 1 : begin;
    int64_t atomSize = atoms[queue[at]].size;
    if (ShapedType::isDynamic(atomSize))
      return false;
    int64_t wanted = size.value / product;
    if (size.value % product == 0 && wanted < atomSize &&
        queue[at] == splittable && atomSize % wanted == 0) {
      splitLastAtom(queue, at, fromBack ? atomSize / wanted : wanted);
      ++end;
      if (fromBack)
        ++at;
    } else if (size.value % (product * atomSize) != 0) {
      return false;
    }
    product *= atoms[queue[at]].size;
    if (fromBack) {
      group.insert(group.begin(), queue[at]);
      --end;
    } else {
      group.push_back(queue[at]);
      ++begin;
    }
  }
  return product == size.value;
}

LogicalResult DimLayout::apply(Operation *op) {
  staticMismatch = false;
  // Scalar scales between the steps keep the type and the layout.
  if (op->getNumOperands() == 0 ||
      op->getOperand(0).getType() != current.getType())
    return failure();
  Value result = op->getResult(0);
  if (auto transpose = llvm::dyn_cast<TransposeOp>(op)) {
    SmallVector<SmallVector<int64_t>> permuted;
    for (int64_t p : transpose.getPerm())
      permuted.push_back(groups[p]);
    groups = std::move(permuted);
  } else if (llvm::isa<ReshapeOp>(op)) {
    SmallVector<int64_t> queue;
    for (ArrayRef<int64_t> group : groups)
      llvm::append_range(queue, group);
    int64_t rank = shapeOf(result).size();
    SmallVector<DimSize> sizes;
    for (int64_t i = 0; i < rank; ++i)
      sizes.push_back(sizeOfReshapeDim(op, i));
    SmallVector<SmallVector<int64_t>> out(rank);
    size_t begin = 0, end = queue.size();
    int64_t front = 0, back = rank - 1;
    for (; front < rank && sizes[front].kind != DimSize::Unknown; ++front)
      if (!take(sizes[front], queue, begin, end, false, out[front])) {
        staticMismatch = sizes[front].kind == DimSize::Static;
        return failure();
      }
    for (; back > front; --back) {
      if (sizes[back].kind == DimSize::Unknown)
        return failure(); // two dims that only the element count could give
      if (!take(sizes[back], queue, begin, end, true, out[back])) {
        staticMismatch = sizes[back].kind == DimSize::Static;
        return failure();
      }
    }
    // The one unproven dim holds whatever the others leave.
    if (front < rank)
      out[front].assign(queue.begin() + begin, queue.begin() + end);
    else if (begin != end)
      return failure();
    groups = std::move(out);
  } else {
    return failure();
  }
  current = result;
  recordSingletons(result);
  return success();
}

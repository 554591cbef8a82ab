//===- AttentionPlan.cpp - lmopt.attention to an attention step -----------===//
//
// Views: only the last axis is sliced, so a view's rows are the source's rows:
// the attention step takes the source's buffer, an element offset and the
// source's row length as the GEMMs' leading dimension. Everything else (a
// dynamic last dim, non-constant or strided bounds, a slice of other axes,
// a user that is neither an attention operand nor a reader of dims) keeps
// the copying kernel.
//
//===----------------------------------------------------------------------===//

#include "lmopt/Target/Common/AttentionPlan.h"

#include "lmopt/Dialect/Lmopt/IR/LmoptOps.h"
#include "lmopt/Dialect/Lmopt/IR/ShapeUtils.h"
#include "lmopt/Dialect/Lmopt/Transforms/PatternUtils.h"
#include "lmopt/Dialect/Lmopt/Transforms/Quantize.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Matchers.h"

#include <algorithm>
#include <cmath>

using namespace mlir;
using namespace mlir::lmopt;

/// The first element a unit-step slice of `width` elements of a rank-3
/// tensor's last axis keeps, or nullopt.
static std::optional<int64_t> getSliceOffset(SliceOp op, int64_t width) {
  std::optional<SingleAxisSlice> sliced = getSingleAxisSlice(op);
  if (!sliced || sliced->axis != 2 || sliced->range.step != 1 ||
      sliced->range.count != width)
    return std::nullopt;
  return sliced->range.start;
}

/// An op that reads only its operand's dims (the shape arithmetic of a
/// dynamic export asks for the query's).
static bool readsOnlyShape(Operation *op) { return isa<ShapeOp, SizeOp>(op); }

/// True when every use of `value` is a query, key or value an attention
/// step can read through a view, or reads only its dims, and one of them
/// is an attention's.
static bool onlyAttentionOperands(Value value) {
  bool attentionUse = false;
  for (OpOperand &use : value.getUses()) {
    if (readsOnlyShape(use.getOwner()))
      continue;
    auto attention = dyn_cast<AttentionOp>(use.getOwner());
    if (!attention || use.get() == attention.getMask())
      return false;
    bool isQuery = use.getOperandNumber() == 0;
    if (!isQuery && attention.getKvHeadsSplit())
      return false;
    attentionUse = true;
  }
  return attentionUse;
}

std::optional<AttentionView> mlir::lmopt::getAttentionView(Value value) {
  auto result = llvm::dyn_cast<OpResult>(value);
  if (!result || !isa<SplitOp, SliceOp>(result.getOwner()))
    return std::nullopt;
  Operation *op = result.getOwner();
  Value source = op->getOperand(0);
  auto sourceType = llvm::dyn_cast<RankedTensorType>(source.getType());
  auto viewType = llvm::dyn_cast<RankedTensorType>(value.getType());
  if (!sourceType || !viewType || sourceType.getRank() != 3 ||
      viewType.getRank() != 3 ||
      sourceType.getElementType() != viewType.getElementType() ||
      !llvm::isa<FloatType>(sourceType.getElementType()) ||
      ShapedType::isDynamic(sourceType.getShape()[2]) ||
      ShapedType::isDynamic(viewType.getShape()[2]))
    return std::nullopt;
  const int64_t rowStride = sourceType.getShape()[2];
  const int64_t width = viewType.getShape()[2];
  // The leading dims are the source's (only the last axis is sliced).
  if (!isCompatibleShape(viewType.getShape().take_front(2),
                         sourceType.getShape().take_front(2)))
    return std::nullopt;
  std::optional<int64_t> offset;
  if (auto split = dyn_cast<SplitOp>(op)) {
    if (normalizeAxis(split.getAxis(), 3) != 2)
      return std::nullopt;
    ArrayRef<int64_t> sizes = split.getSplitSizes();
    unsigned index = result.getResultNumber();
    if (index >= sizes.size() || sizes[index] != width)
      return std::nullopt;
    offset = 0;
    for (unsigned i = 0; i < index; ++i)
      *offset += sizes[i];
  } else {
    offset = getSliceOffset(cast<SliceOp>(op), width);
  }
  if (!offset || *offset < 0 || *offset + width > rowStride ||
      !onlyAttentionOperands(value))
    return std::nullopt;
  return AttentionView{source, *offset, rowStride};
}

bool mlir::lmopt::isAttentionViewOp(Operation *op) {
  if (!isa<SplitOp, SliceOp>(op) || op->getNumResults() == 0)
    return false;
  return llvm::all_of(op->getResults(), [](Value value) {
    return getAttentionView(value) &&
           llvm::all_of(value.getUsers(),
                        [](Operation *user) { return isa<AttentionOp>(user); });
  });
}

static void addAttr(std::vector<::lmopt::runtime::PlanAttr> &attrs,
                    std::string name, int64_t value) {
  ::lmopt::runtime::PlanAttr attr;
  attr.name = std::move(name);
  attr.intValue = value;
  attrs.push_back(std::move(attr));
}

AttentionLowering mlir::lmopt::lowerAttention(AttentionOp op) {
  AttentionLowering lowering;
  lowering.operands.assign(op->operand_begin(), op->operand_end());
  std::vector<::lmopt::runtime::PlanAttr> &attrs = lowering.attrs;
  int64_t numHeads = op.getNumHeads();
  int64_t hidden =
      llvm::cast<RankedTensorType>(op.getQuery().getType()).getShape().back();
  double scale = op.getScale() ? double(op.getScale()->convertToFloat())
                               : 1.0 / std::sqrt(double(hidden / numHeads));
  addAttr(attrs, "num_heads", numHeads);
  // Grouped-query attention only: plans without it read num_heads.
  if (op.getKvHeads() != numHeads)
    addAttr(attrs, "num_kv_heads", op.getKvHeads());
  ::lmopt::runtime::PlanAttr scaleAttr;
  scaleAttr.name = "scale";
  scaleAttr.kind = ::lmopt::runtime::PlanAttr::Kind::Float;
  scaleAttr.floatValue = scale;
  attrs.push_back(std::move(scaleAttr));
  addAttr(attrs, "causal", op.getCausal());
  addAttr(attrs, "kv_heads_split", op.getKvHeadsSplit());
  // Read by name: the attribute is newer than some builds of the op.
  auto zeroRows = op->getAttrOfType<BoolAttr>("zero_masked_rows");
  addAttr(attrs, "zero_masked_rows", zeroRows && zeroRows.getValue());
  // The score bias is the last operand, after the mask when there is one;
  // plans without it have no bias.
  if (op.getBias())
    addAttr(attrs, "score_bias", 1);
  // --quantize=bf16 (Quantize.h); plans without it run f32 products.
  if (op->hasAttr(kBf16ProductsAttr))
    addAttr(attrs, "bf16_products", 1);
  // Query, key and value that are views read their source's buffer.
  static const char *const kRoles[] = {"query", "key", "value"};
  for (auto [index, role] : llvm::enumerate(kRoles)) {
    std::optional<AttentionView> view =
        getAttentionView(lowering.operands[index]);
    if (!view)
      continue;
    lowering.operands[index] = view->source;
    addAttr(attrs, std::string(role) + "_offset", view->offset);
    addAttr(attrs, std::string(role) + "_row_stride", view->rowStride);
  }
  return lowering;
}

//===- ShapeUtils.cpp - ONNX shape rules ----------------------------------===//

#include "lmopt/Dialect/Lmopt/IR/ShapeUtils.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Matchers.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>

using namespace mlir;

ArrayRef<int64_t> lmopt::shapeOf(Value value) {
  return llvm::cast<RankedTensorType>(value.getType()).getShape();
}

std::optional<SmallVector<int64_t>>
lmopt::broadcastShapes(ArrayRef<int64_t> lhs, ArrayRef<int64_t> rhs) {
  size_t rank = std::max(lhs.size(), rhs.size());
  SmallVector<int64_t> result(rank);
  for (size_t i = 0; i < rank; ++i) {
    // Align from the right; missing leading dims act as 1.
    int64_t l = i < rank - lhs.size() ? 1 : lhs[i - (rank - lhs.size())];
    int64_t r = i < rank - rhs.size() ? 1 : rhs[i - (rank - rhs.size())];
    if (l == 1) {
      result[i] = r;
    } else if (r == 1) {
      result[i] = l;
    } else if (ShapedType::isDynamic(l)) {
      result[i] = r;
    } else if (ShapedType::isDynamic(r) || l == r) {
      result[i] = l;
    } else {
      return std::nullopt;
    }
  }
  return result;
}

bool lmopt::isCompatibleShape(ArrayRef<int64_t> actual,
                              ArrayRef<int64_t> expected) {
  if (actual.size() != expected.size())
    return false;
  return llvm::all_of(llvm::zip(actual, expected), [](auto pair) {
    auto [a, e] = pair;
    return a == e || ShapedType::isDynamic(a) || ShapedType::isDynamic(e);
  });
}

std::optional<int64_t> lmopt::normalizeAxis(int64_t axis, int64_t rank) {
  if (axis < -rank || axis >= rank)
    return std::nullopt;
  return axis < 0 ? axis + rank : axis;
}

std::optional<SmallVector<int64_t>>
lmopt::matmulShape(ArrayRef<int64_t> lhs, ArrayRef<int64_t> rhs) {
  if (lhs.empty() || rhs.empty())
    return std::nullopt;
  SmallVector<int64_t> a(lhs), b(rhs);
  bool lhsVector = a.size() == 1, rhsVector = b.size() == 1;
  if (lhsVector)
    a.insert(a.begin(), 1);
  if (rhsVector)
    b.push_back(1);
  int64_t k1 = a.back(), k2 = b[b.size() - 2];
  if (!ShapedType::isDynamic(k1) && !ShapedType::isDynamic(k2) && k1 != k2)
    return std::nullopt;
  auto batch = broadcastShapes(ArrayRef(a).drop_back(2), ArrayRef(b).drop_back(2));
  if (!batch)
    return std::nullopt;
  SmallVector<int64_t> result(*batch);
  if (!lhsVector)
    result.push_back(a[a.size() - 2]);
  if (!rhsVector)
    result.push_back(b.back());
  return result;
}

std::string lmopt::formatShape(ArrayRef<int64_t> shape) {
  if (shape.empty())
    return "scalar";
  std::string text;
  llvm::raw_string_ostream os(text);
  llvm::interleave(
      shape, os,
      [&](int64_t dim) {
        if (ShapedType::isDynamic(dim))
          os << '?';
        else
          os << dim;
      },
      "x");
  return text;
}

lmopt::SliceAxis mlir::lmopt::resolveSliceAxis(int64_t dim, int64_t start,
                                        int64_t end, int64_t step) {
  if (start < 0)
    start += dim;
  if (end < 0)
    end += dim;
  int64_t longest = std::max<int64_t>(dim, 1);
  step = std::clamp(step, -longest, longest);
  SliceAxis axis;
  axis.step = step;
  if (dim == 0)
    return axis;
  if (step > 0) {
    start = std::clamp<int64_t>(start, 0, dim);
    end = std::clamp<int64_t>(end, 0, dim);
    axis.count = end > start ? (end - start + step - 1) / step : 0;
  } else {
    start = std::clamp<int64_t>(start, 0, dim - 1);
    end = std::clamp<int64_t>(end, -1, dim - 1);
    axis.count = start > end ? (start - end - step - 1) / -step : 0;
  }
  axis.start = start;
  return axis;
}

std::optional<SmallVector<int64_t>> mlir::lmopt::getConstantInts(Value value) {
  DenseIntElementsAttr attr;
  if (!value || !matchPattern(value, m_Constant(&attr)))
    return std::nullopt;
  SmallVector<int64_t> ints;
  for (const APInt &entry : attr.getValues<APInt>())
    ints.push_back(entry.getSExtValue());
  return ints;
}

std::optional<lmopt::SingleAxisSlice>
mlir::lmopt::getSingleAxisSlice(Value input, Value starts, Value ends,
                                Value axes, Value steps) {
  std::optional<SmallVector<int64_t>> s = getConstantInts(starts);
  std::optional<SmallVector<int64_t>> e = getConstantInts(ends);
  std::optional<SmallVector<int64_t>> a =
      axes ? getConstantInts(axes) : SmallVector<int64_t>{0};
  std::optional<SmallVector<int64_t>> t =
      steps ? getConstantInts(steps) : SmallVector<int64_t>{1};
  if (!s || !e || !a || !t || s->size() != 1 || e->size() != 1 ||
      a->size() != 1 || t->size() != 1 || (*t)[0] == 0)
    return std::nullopt;
  ArrayRef<int64_t> shape = shapeOf(input);
  std::optional<int64_t> axis = normalizeAxis((*a)[0], shape.size());
  if (!axis || ShapedType::isDynamic(shape[*axis]))
    return std::nullopt;
  return SingleAxisSlice{
      *axis, resolveSliceAxis(shape[*axis], (*s)[0], (*e)[0], (*t)[0])};
}

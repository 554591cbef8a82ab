//===- PatternUtils.h - matching helpers for fusion patterns ----*- C++ -*-===//
//
// Small predicates shared by the fusion patterns, so that each pattern reads
// as the subgraph it matches.
//
//===----------------------------------------------------------------------===//

#ifndef LMOPT_DIALECT_LMOPT_TRANSFORMS_PATTERNUTILS_H
#define LMOPT_DIALECT_LMOPT_TRANSFORMS_PATTERNUTILS_H

#include "lmopt/Dialect/Lmopt/IR/ShapeUtils.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Value.h"
#include "mlir/Support/LogicalResult.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/ADT/Twine.h"

#include <cassert>
#include <optional>
#include <string>
#include <utility>

namespace mlir::lmopt {

class SliceOp;

/// The value of `value` when it is a constant whose elements are all equal
/// (a splat or a one-element tensor) of float or integer type.
std::optional<double> getSplatValue(Value value);

/// True when `value` is such a constant within `tolerance` of `expected`
/// (relative to |expected| when that exceeds 1).
bool isSplatNear(Value value, double expected, double tolerance = 1e-5);

/// True when `value` is produced by a constant op (any contents).
bool isConstant(Value value);

/// A new `lmopt.constant` of `type` holding `bytes` (row-major): a
/// `dense_resource` blob named after `resourceName` when `asResource` (what
/// the weights it replaces were, so large ones stay out of printed IR),
/// else `dense`.
Value buildConstant(OpBuilder &builder, Location loc, RankedTensorType type,
                    ArrayRef<char> bytes, llvm::StringRef resourceName,
                    bool asResource);

/// `slice` as a Slice of one axis by constants (ShapeUtils.h), when it is.
std::optional<SingleAxisSlice> getSingleAxisSlice(SliceOp slice);

/// The input of `value` when it is a unit-step slice of the last dim of a
/// tensor with a static last dim, from `start` to its end (`toEnd`) or to
/// `start + count`.
Value sliceOfLastDim(Value value, int64_t start, bool toEnd, int64_t count);

/// A new 1-D i64 `lmopt.constant` of `values` (shape vectors, slice bounds).
Value buildI64Vector(OpBuilder &builder, Location loc,
                     ArrayRef<int64_t> values);

/// Why a fusion candidate did not match. An empty reason means the anchor is
/// not a candidate at all (nothing to report); otherwise it is a near miss.
struct FusionMismatch {
  std::string reason;
};

/// A subgraph that does not start like the fusion: not worth a report line.
inline FusionMismatch notCandidate() { return {}; }

/// A subgraph that matched partially and was rejected for `reason`.
inline FusionMismatch nearMiss(const llvm::Twine &reason) {
  return {reason.str()};
}

/// What a fusion matcher returns: the match, or the mismatch. One matcher
/// serves both the rewrite pattern and the near-miss report, so that a reason
/// is written once.
template <typename T> class FusionMatch {
public:
  FusionMatch(T match) : match(std::move(match)) {}
  FusionMatch(FusionMismatch mismatch) : mismatch(std::move(mismatch)) {}

  bool succeeded() const { return match.has_value(); }
  /// True for a match or a near miss.
  bool isCandidate() const { return match || !mismatch.reason.empty(); }
  bool isNearMiss() const { return !match && !mismatch.reason.empty(); }

  T &operator*() {
    assert(match && "no match");
    return *match;
  }
  T *operator->() { return &**this; }

  /// The mismatch, to return from a matcher of another type.
  const FusionMismatch &getMismatch() const {
    assert(!match && "matched");
    return mismatch;
  }
  llvm::StringRef getReason() const { return getMismatch().reason; }

private:
  std::optional<T> match;
  FusionMismatch mismatch;
};

/// The operand of the binary `op` other than `value`, or null.
template <typename OpTy> Value otherOperand(OpTy op, Value value) {
  if (op.getLhs() == value)
    return op.getRhs();
  if (op.getRhs() == value)
    return op.getLhs();
  return {};
}

class ReshapeOp;

/// One element of a shape operand: a constant, or dim `dim` of `source` read
/// at run time through Shape, Gather, Concat, Unsqueeze and Cast.
struct ShapeElement {
  std::optional<int64_t> constant;
  Value source;
  int64_t dim = 0;
};

/// Element `index` of the 1-D i64 shape tensor `shape`, when it is a
/// constant or a dim of some tensor; nullopt when it is computed otherwise.
std::optional<ShapeElement> getShapeElement(Value shape, int64_t index);

/// True when dim `lhsDim` of `lhs` provably equals dim `rhsDim` of `rhs`:
/// equal static sizes, or both traced to one tensor dim through ops that
/// carry it (transposes, elementwise ops, matmul rows, reshapes that copy
/// it, ...).
bool dimsEqual(Value lhs, int64_t lhsDim, Value rhs, int64_t rhsDim);

/// The size of dim `dim` of `value` when it is provably a constant though
/// the type may not say so: a dim traced (as dimsEqual traces it) to a
/// static one, or to the -1 entry of a reshape whose other entries are
/// constants or dims of its input, which fixes it by the element count
/// (DeBERTa's head size, `view(B, S, H, -1)` of a `[?, ?, H*D]` tensor).
std::optional<int64_t> getStaticDim(Value value, int64_t dim);

/// True when output dim `dim` of `reshape` provably equals dim `dim` of its
/// input or of one of `equivalents`.
bool reshapeKeepsDim(ReshapeOp reshape, int64_t dim,
                     ArrayRef<Value> equivalents);

/// How each dim of a tensor, derived from a rank-`r` `source` by transposes
/// and reshapes (and ops that keep type and layout), is made of the source's
/// dims ("atoms"): dim `i` is the row-major product of `getGroups()[i]`. The
/// source's static last dim may be split once into two atoms (ids `r - 1`
/// and `r`); nothing else is split. Each step is applied only when every
/// group is proven (static sizes, dimsEqual, or the element count), so a
/// layout that reaches the end describes exactly where each element went.
class DimLayout {
public:
  explicit DimLayout(Value source);

  /// Applies a transpose or reshape `op`, whose input must be the tensor
  /// this layout describes or one of its type computed from it elementwise.
  /// Fails, leaving the layout unusable, when the result's layout cannot be
  /// proven; `failedOnStaticSize()` then says whether a static size did not
  /// fit the atoms (rather than a dim that could not be traced).
  LogicalResult apply(Operation *op);

  ArrayRef<SmallVector<int64_t>> getGroups() const { return groups; }
  int64_t getNumAtoms() const { return atoms.size(); }
  int64_t getAtomSize(int64_t atom) const { return atoms[atom].size; }
  bool failedOnStaticSize() const { return staticMismatch; }

private:
  struct Atom {
    int64_t size;
    SmallVector<std::pair<Value, int64_t>> reps; // dims known to be this atom
  };
  struct DimSize;

  DimSize sizeOfReshapeDim(Operation *reshape, int64_t dim) const;
  bool take(const DimSize &size, SmallVector<int64_t> &queue, size_t &begin,
            size_t &end, bool fromBack, SmallVector<int64_t> &group);
  void splitLastAtom(SmallVector<int64_t> &queue, size_t at, int64_t first);
  void recordSingletons(Value result);

  Value current;
  SmallVector<Atom> atoms;
  SmallVector<SmallVector<int64_t>> groups;
  int64_t splittable = -1; // the source's last-dim atom while unsplit
  bool staticMismatch = false;
};

} // namespace mlir::lmopt

#endif // LMOPT_DIALECT_LMOPT_TRANSFORMS_PATTERNUTILS_H

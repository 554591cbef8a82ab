//===- AttentionPlan.h - lmopt.attention to an attention step ---*- C++ -*-===//
//
// The plan builder's part for `lmopt.attention`: the step's operands and
// attributes (docs/bundle-format.md), and the rule for a query, key or value
// that is a slice of a wider [B, S, W] tensor along its last axis (the split
// after a fused QKV projection): no kernel copies it out; the attention step
// reads it in the source's buffer at an element offset with row stride W
// (docs/cpu-backend.md, "Attention operands as views"). Every target's
// attention step reads these operands and attributes.
//
//===----------------------------------------------------------------------===//

#ifndef LMOPT_TARGET_COMMON_ATTENTIONPLAN_H
#define LMOPT_TARGET_COMMON_ATTENTIONPLAN_H

#include "lmopt/Dialect/Lmopt/IR/LmoptOps.h"
#include "lmopt/Format/Plan.h"

#include "mlir/IR/Operation.h"
#include "mlir/IR/Value.h"

#include <cstdint>
#include <optional>
#include <vector>

namespace mlir::lmopt {

/// A [B, S, width] value that is the elements [offset, offset + width) of
/// every row of `source` ([B, S, rowStride], f32, rowStride static).
struct AttentionView {
  Value source;
  int64_t offset = 0;
  int64_t rowStride = 0;
};

/// The view `value` is, when it is a result of `lmopt.split` or a unit-step
/// `lmopt.slice` with constant bounds, both along the last axis of a rank-3
/// float tensor (f32, f16 or bf16, the view's own type) whose last dim is
/// static, and every use of it is the query,
/// key or value of an `lmopt.attention` (key and value only without
/// kv_heads_split) or an op that reads only its dims (`lmopt.shape`,
/// `lmopt.size`). Otherwise nullopt: a kernel copies the slice out.
std::optional<AttentionView> getAttentionView(Value value);

/// True when every result of `op` is an attention view read by attention
/// steps only: the op needs no step at all. (A view whose dims are also
/// read stays in its kernel group, which writes it only for readers in
/// later groups.)
bool isAttentionViewOp(Operation *op);

struct AttentionLowering {
  /// Query, key, value (each view replaced by its source), [mask], [bias]
  /// (with the attribute `score_bias` = 1).
  SmallVector<Value> operands;
  std::vector<::lmopt::runtime::PlanAttr> attrs;
};

/// The attention step for `op`: its operands, and its attributes with each
/// view's `<role>_offset` and `<role>_row_stride`.
AttentionLowering lowerAttention(AttentionOp op);

} // namespace mlir::lmopt

#endif // LMOPT_TARGET_COMMON_ATTENTIONPLAN_H

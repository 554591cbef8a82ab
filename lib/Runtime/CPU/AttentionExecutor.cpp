//===- AttentionExecutor.cpp - The attention step on the CPU --------------===//
//
// Checks an attention step (heads, scale, flags, views into a fused
// projection, key and value read at a state's capacity, the mask) and
// builds its AttentionStep.
//
//===----------------------------------------------------------------------===//

#include "StepChecker.h"

#include "lmopt/Runtime/CPU/AttentionStep.h"

using namespace lmopt::runtime;

namespace {
class AttentionExecutor : public StepExecutor {
public:
  Status run(void *const *tensors) const override {
    return step->run(static_cast<const float *>(tensors[query]),
                     static_cast<const float *>(tensors[key]),
                     static_cast<const float *>(tensors[value]),
                     mask < 0 ? nullptr : tensors[mask],
                     static_cast<float *>(tensors[output]));
  }

  std::unique_ptr<AttentionStep> step;
  int64_t query = 0, key = 0, value = 0, mask = -1, output = 0;
};
} // namespace

/// Reads `<role>_offset` and `<role>_row_stride` (absent: the dense layout).
/// A viewed operand is its whole buffer, [B, S, row_stride], whose rows hold
/// the view's `width` elements from `offset` on.
static Status getAttentionView(const StepChecker &c, const std::string &role,
                               AttentionOperandView &view) {
  std::string offsetName = role + "_offset", strideName = role + "_row_stride";
  bool hasOffset = c.step.findAttr(offsetName) != nullptr;
  bool hasStride = c.step.findAttr(strideName) != nullptr;
  if (hasOffset != hasStride)
    return c.error("has attribute '" + (hasOffset ? offsetName : strideName) +
                   "' without '" + (hasOffset ? strideName : offsetName) + "'");
  if (!hasOffset)
    return Status::ok();
  if (Status st = c.getInt(offsetName.c_str(), view.offset); !st)
    return st;
  if (Status st = c.getInt(strideName.c_str(), view.rowStride); !st)
    return st;
  if (view.rowStride <= 0 || view.offset < 0)
    return c.error("attribute '" + strideName + "' is " +
                   std::to_string(view.rowStride) + " and '" + offsetName +
                   "' is " + std::to_string(view.offset) +
                   "; expected a positive stride and an offset >= 0");
  return Status::ok();
}

/// Checks a [B, S, H*D] operand (`width` = H*D), or the buffer [B, S,
/// row_stride] a view of it reads, with the view's rows inside the buffer's.
static Status expectAttentionRows(const StepChecker &c, const char *role,
                                  const PlanTensor &t,
                                  const AttentionOperandView &view,
                                  int64_t batch, int64_t length,
                                  int64_t width) {
  if (!view.rowStride)
    return c.expectDims(role, t, {batch, length, width},
                        std::string(role) == "query" ? "[B, Sq, H*D]"
                                                     : "[B, Sk, H*D]");
  if (Status st = c.expectDims(role, t, {batch, length, view.rowStride},
                               "the buffer [B, S, " + std::string(role) +
                                   "_row_stride] its view reads");
      !st)
    return st;
  if (view.offset > view.rowStride - width)
    return c.error(std::string(role) + " view at offset " +
                   std::to_string(view.offset) + " of " +
                   std::to_string(width) + " elements (H*D) ends past its " +
                   "row stride " + std::to_string(view.rowStride));
  return Status::ok();
}

/// A key or value that is a view of a state (a key/value cache) is read
/// with the state's strides: its rows per sequence are the state's capacity
/// along `axis` (the key length's). Every other dim but the batch must then
/// be the state's own. 0 for a dense operand.
static Status getKvCapacity(const StepChecker &c, const char *role,
                            const PlanTensor &t, size_t axis,
                            int64_t &capacity) {
  capacity = 0;
  if (t.storage != TensorStorage::State)
    return Status::ok();
  const PlanState &state = c.context.program.states[size_t(t.offset)];
  for (size_t d = 1; d < t.dims.size(); ++d)
    if (d != axis && t.dims[d] != state.dims[d])
      return c.error(std::string(role) + " " + describe(t) +
                     " is a view of state '" + state.name + "' " +
                     formatDims(state.dims) + " that differs from it in dim " +
                     std::to_string(d) +
                     "; only the batch and key length may be shorter");
  if (c.step.findAttr(std::string(role) + "_row_stride"))
    return c.error(std::string(role) + " is a view of state '" + state.name +
                   "' and of a wider buffer at once");
  capacity = state.dims[axis];
  return Status::ok();
}

Status
lmopt::runtime::buildAttentionExecutor(const StepChecker &c,
                                       std::unique_ptr<StepExecutor> &out) {
  if (Status st = c.expectAttrs(
          {"num_heads", "scale", "causal", "kv_heads_split", "zero_masked_rows",
           "query_offset", "query_row_stride", "key_offset", "key_row_stride",
           "value_offset", "value_row_stride"});
      !st)
    return st;
  AttentionStepDesc desc;
  desc.name = c.step.name;
  double scale = 0;
  if (Status st = c.getInt("num_heads", desc.numHeads); !st)
    return st;
  if (Status st = c.step.getFloat("scale", scale); !st)
    return c.withSource(st);
  desc.scale = float(scale);
  if (Status st = c.getFlag("causal", desc.causal); !st)
    return st;
  if (Status st = c.getFlag("kv_heads_split", desc.kvHeadsSplit); !st)
    return st;
  if (Status st = c.getFlag("zero_masked_rows", desc.zeroMaskedRows); !st)
    return st;
  for (auto [role, view] : {std::pair<const char *, AttentionOperandView *>{
                                "query", &desc.queryView},
                            {"key", &desc.keyView},
                            {"value", &desc.valueView}})
    if (Status st = getAttentionView(c, role, *view); !st)
      return st;
  if (desc.kvHeadsSplit && (desc.keyView.rowStride || desc.valueView.rowStride))
    return c.error(std::string(desc.keyView.rowStride ? "key" : "value") +
                   " is a view, which kv_heads_split does not allow (key "
                   "and value are dense [B, H, Sk, D])");
  bool hasMask = c.step.operands.size() == 4;
  if (Status st = c.expectCounts(
          hasMask ? 4 : 3,
          hasMask ? "query, key, value, mask" : "query, key, value", 1);
      !st)
    return st;

  const PlanTensor &query = c.operand(0), &key = c.operand(1),
                   &value = c.operand(2), &output = c.result(0);
  for (auto [role, t] :
       {std::pair<const char *, const PlanTensor *>{"query", &query},
        {"key", &key},
        {"value", &value},
        {"output", &output}})
    if (Status st = c.expectDType(role, *t, DType::F32); !st)
      return st;
  if (Status st = c.expectRank("query", query, 3); !st)
    return st;
  // H*D is the query's last dim, or the output's when the query is a view.
  const bool queryView = desc.queryView.rowStride != 0;
  if (queryView)
    if (Status st = c.expectRank("output", output, 3); !st)
      return st;
  const PlanTensor &rows = queryView ? output : query;
  const int64_t width = rows.dims[2];
  if (desc.numHeads <= 0 || width % desc.numHeads != 0)
    return c.error((queryView ? "output " : "query ") + describe(rows) +
                   " has " + std::to_string(width) +
                   " features, not a positive multiple of num_heads = " +
                   std::to_string(desc.numHeads));
  desc.batch = query.dims[0];
  desc.queryLength = query.dims[1];
  desc.headDim = width / desc.numHeads;
  if (Status st = expectAttentionRows(c, "query", query, desc.queryView,
                                      desc.batch, desc.queryLength, width);
      !st)
    return st;
  if (Status st = c.expectRank("key", key, desc.kvHeadsSplit ? 4 : 3); !st)
    return st;
  desc.keyLength = key.dims[desc.kvHeadsSplit ? 2 : 1];
  if (desc.kvHeadsSplit) {
    std::vector<int64_t> kvDims = {desc.batch, desc.numHeads, desc.keyLength,
                                   desc.headDim};
    const char *kvLayout = "[B, H, Sk, D] with kv_heads_split";
    if (Status st = c.expectDims("key", key, kvDims, kvLayout); !st)
      return st;
    if (Status st = c.expectDims("value", value, kvDims, kvLayout); !st)
      return st;
  } else {
    if (Status st = expectAttentionRows(c, "key", key, desc.keyView, desc.batch,
                                        desc.keyLength, width);
        !st)
      return st;
    if (Status st = expectAttentionRows(c, "value", value, desc.valueView,
                                        desc.batch, desc.keyLength, width);
        !st)
      return st;
  }
  if (Status st =
          c.expectDims("output", output, {desc.batch, desc.queryLength, width},
                       "[B, Sq, H*D], the query's rows");
      !st)
    return st;
  size_t kvAxis = desc.kvHeadsSplit ? 2 : 1;
  if (Status st = getKvCapacity(c, "key", key, kvAxis, desc.keyCapacity); !st)
    return st;
  if (Status st = getKvCapacity(c, "value", value, kvAxis, desc.valueCapacity);
      !st)
    return st;

  auto exec = std::make_unique<AttentionExecutor>();
  if (hasMask) {
    const PlanTensor &mask = c.operand(3);
    if (mask.dtype == DType::F32)
      desc.mask = AttentionMask::Additive;
    else if (mask.dtype == DType::Bool)
      desc.mask = AttentionMask::Bool;
    else
      return c.error("mask " + describe(mask) + " has dtype " +
                     dtypeName(mask.dtype) +
                     "; expected f32 (additive) or bool");
    desc.maskDims = mask.dims;
    exec->mask = c.step.operands[3];
  }
  exec->query = c.step.operands[0];
  exec->key = c.step.operands[1];
  exec->value = c.step.operands[2];
  exec->output = c.step.results[0];
  if (Status st = AttentionStep::create(c.context.cpu, desc, exec->step); !st)
    return c.withSource(st);
  out = std::move(exec);
  return Status::ok();
}

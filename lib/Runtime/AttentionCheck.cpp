//===- AttentionCheck.cpp - Checking an attention step --------------------===//

#include "lmopt/Runtime/AttentionCheck.h"

using namespace lmopt::runtime;

/// Reads `<role>_offset` and `<role>_row_stride` (absent: the dense layout).
static Status getView(const StepCheck &c, const std::string &role,
                      AttentionView &view) {
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

/// Checks a [B, S, H*D] operand (`width` = H*D, G*D for key and value), or
/// the buffer [B, S, row_stride] a view of it reads, with the view's rows
/// inside the buffer's.
static Status expectRows(const StepCheck &c, const char *role,
                         const PlanTensor &t, const AttentionView &view,
                         int64_t batch, int64_t length, int64_t width) {
  if (!view.rowStride)
    return c.expectDims(role, t, {batch, length, width},
                        std::string(role) == "query" ? "[B, Sq, H*D]"
                                                     : "[B, Sk, G*D]");
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
static Status getCapacity(const StepCheck &c, const char *role,
                          const PlanTensor &t, size_t axis, int64_t &capacity) {
  capacity = 0;
  if (t.storage != TensorStorage::State)
    return Status::ok();
  const PlanState &state = c.program.states[size_t(t.offset)];
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

/// The attributes and the operand count.
static Status readAttributes(const StepCheck &c, AttentionShape &s) {
  if (Status st = c.expectAttrs(
          {"num_heads", "num_kv_heads", "scale", "causal", "kv_heads_split",
           "zero_masked_rows", "score_bias", "query_offset", "query_row_stride",
           "key_offset", "key_row_stride", "value_offset", "value_row_stride",
           "bf16_products", "output_static", "output_scale",
           "output_zero_point", "output_bf16", "input_bf16"});
      !st)
    return st;
  if (Status st = c.getInt("num_heads", s.heads); !st)
    return st;
  s.kvHeads = s.heads;
  if (c.step.findAttr("num_kv_heads"))
    if (Status st = c.getInt("num_kv_heads", s.kvHeads); !st)
      return st;
  if (s.kvHeads <= 0 || s.heads % s.kvHeads != 0)
    return c.error("num_kv_heads = " + std::to_string(s.kvHeads) +
                   " does not divide num_heads = " + std::to_string(s.heads));
  if (Status st = c.step.getFloat("scale", s.scale); !st)
    return c.withSource(st);
  if (Status st = c.getFlags({{"causal", &s.causal},
                              {"kv_heads_split", &s.kvHeadsSplit},
                              {"zero_masked_rows", &s.zeroMaskedRows},
                              {"score_bias", &s.scoreBias},
                              {"bf16_products", &s.bf16Products},
                              {"output_static", &s.outputStatic},
                              {"output_bf16", &s.outputBf16},
                              {"input_bf16", &s.inputBf16}});
      !st)
    return st;
  if (s.outputStatic && s.outputBf16)
    return c.error("has both output_static and output_bf16");
  if (s.outputStatic) {
    if (Status st = c.step.getFloat("output_scale", s.outputScale); !st)
      return c.withSource(st);
    if (c.step.findAttr("output_zero_point"))
      if (Status st = c.getInt("output_zero_point", s.outputZeroPoint); !st)
        return st;
  }
  for (auto [role, view] :
       {std::pair<const char *, AttentionView *>{"query", &s.queryView},
        {"key", &s.keyView},
        {"value", &s.valueView}})
    if (Status st = getView(c, role, *view); !st)
      return st;
  if (s.kvHeadsSplit && (s.keyView.rowStride || s.valueView.rowStride))
    return c.error(std::string(s.keyView.rowStride ? "key" : "value") +
                   " is a view, which kv_heads_split does not allow (key "
                   "and value are dense [B, H, Sk, D])");
  size_t fixed = s.scoreBias ? 4 : 3;
  bool hasMask = c.step.operands.size() == fixed + 1;
  std::string roles = std::string("query, key, value") +
                      (hasMask ? ", mask" : "") + (s.scoreBias ? ", bias" : "");
  return c.expectCounts(hasMask ? fixed + 1 : fixed, roles, 1);
}

Status lmopt::runtime::checkAttentionStep(const StepCheck &c,
                                          AttentionDTypeRule dtypes,
                                          AttentionShape &s) {
  if (Status st = readAttributes(c, s); !st)
    return st;
  if (Status st = dtypes(c); !st)
    return st;
  const PlanTensor &query = c.operand(0), &key = c.operand(1),
                   &value = c.operand(2), &output = c.result(0);
  if (Status st = c.expectRank("query", query, 3); !st)
    return st;
  // H*D is the query's last dim, or the output's when the query is a view.
  const bool queryView = s.queryView.rowStride != 0;
  if (queryView)
    if (Status st = c.expectRank("output", output, 3); !st)
      return st;
  const PlanTensor &rows = queryView ? output : query;
  const int64_t width = rows.dims[2];
  if (s.heads <= 0 || width % s.heads != 0)
    return c.error((queryView ? "output " : "query ") + describe(rows) +
                   " has " + std::to_string(width) +
                   " features, not a positive multiple of num_heads = " +
                   std::to_string(s.heads));
  s.batch = query.dims[0];
  s.queryLength = query.dims[1];
  s.headDim = width / s.heads;
  if (Status st = expectRows(c, "query", query, s.queryView, s.batch,
                             s.queryLength, width);
      !st)
    return st;
  if (Status st = c.expectRank("key", key, s.kvHeadsSplit ? 4 : 3); !st)
    return st;
  s.keyLength = key.dims[s.kvHeadsSplit ? 2 : 1];
  if (s.kvHeadsSplit) {
    std::vector<int64_t> kvDims = {s.batch, s.kvHeads, s.keyLength, s.headDim};
    const char *layout = "[B, G, Sk, D] with kv_heads_split";
    if (Status st = c.expectDims("key", key, kvDims, layout); !st)
      return st;
    if (Status st = c.expectDims("value", value, kvDims, layout); !st)
      return st;
  } else {
    const int64_t kvWidth = s.kvHeads * s.headDim;
    if (Status st =
            expectRows(c, "key", key, s.keyView, s.batch, s.keyLength, kvWidth);
        !st)
      return st;
    if (Status st = expectRows(c, "value", value, s.valueView, s.batch,
                               s.keyLength, kvWidth);
        !st)
      return st;
  }
  if (Status st =
          c.expectDims("output", output, {s.batch, s.queryLength, width},
                       "[B, Sq, H*D], the query's rows");
      !st)
    return st;
  size_t kvAxis = s.kvHeadsSplit ? 2 : 1;
  if (Status st = getCapacity(c, "key", key, kvAxis, s.keyCapacity); !st)
    return st;
  return getCapacity(c, "value", value, kvAxis, s.valueCapacity);
}

/// The kind of the mask, operand `index`, by its dtype.
static Status getMaskKind(const StepCheck &c, size_t index,
                          AttentionMaskKind &kind) {
  const PlanTensor &mask = c.operand(index);
  if (mask.dtype == DType::F32)
    kind = AttentionMaskKind::Additive;
  else if (mask.dtype == DType::Bool)
    kind = AttentionMaskKind::Bool;
  else
    return c.error("mask " + describe(mask) + " has dtype " +
                   dtypeName(mask.dtype) + "; expected f32 (additive) or bool");
  return Status::ok();
}

Status lmopt::runtime::checkAttentionMask(const StepCheck &c,
                                          AttentionShape &s) {
  s.mask = AttentionMaskKind::None;
  if (c.step.operands.size() != (s.scoreBias ? 5u : 4u))
    return Status::ok();
  return getMaskKind(c, 3, s.mask);
}

Status lmopt::runtime::checkAttentionGradStep(const StepCheck &c,
                                              AttentionShape &s) {
  if (Status st =
          c.expectAttrs({"num_heads", "scale", "causal", "zero_masked_rows"});
      !st)
    return st;
  if (Status st = c.getInt("num_heads", s.heads); !st)
    return st;
  s.kvHeads = s.heads;
  if (Status st = c.step.getFloat("scale", s.scale); !st)
    return c.withSource(st);
  if (Status st = c.getFlags(
          {{"causal", &s.causal}, {"zero_masked_rows", &s.zeroMaskedRows}});
      !st)
    return st;
  bool hasMask = c.step.operands.size() == 5;
  if (Status st = c.expectCounts(hasMask ? 5 : 4,
                                 std::string("query, key, value, output_grad") +
                                     (hasMask ? ", mask" : ""),
                                 3);
      !st)
    return st;
  const PlanTensor &query = c.operand(0), &key = c.operand(1);
  if (Status st = c.expectRank("query", query, 3); !st)
    return st;
  if (Status st = c.expectRank("key", key, 3); !st)
    return st;
  const int64_t width = query.dims[2];
  if (s.heads <= 0 || width % s.heads != 0)
    return c.error("query " + describe(query) + " has " +
                   std::to_string(width) +
                   " features, not a positive multiple of num_heads = " +
                   std::to_string(s.heads));
  s.batch = query.dims[0];
  s.queryLength = query.dims[1];
  s.keyLength = key.dims[1];
  s.headDim = width / s.heads;
  const std::vector<int64_t> rows = {s.batch, s.queryLength, width},
                             keys = {s.batch, s.keyLength, width};
  const struct {
    const char *role;
    const PlanTensor &t;
    const std::vector<int64_t> &dims;
  } expected[] = {{"key", key, keys},
                  {"value", c.operand(2), keys},
                  {"output_grad", c.operand(3), rows},
                  {"query_grad", c.result(0), rows},
                  {"key_grad", c.result(1), keys},
                  {"value_grad", c.result(2), keys}};
  for (const auto &e : expected)
    if (Status st = c.expectDims(e.role, e.t, e.dims,
                                 &e.dims == &rows ? "[B, Sq, H*D], the query's"
                                                  : "[B, Sk, H*D], the key's");
        !st)
      return st;
  s.mask = AttentionMaskKind::None;
  return hasMask ? getMaskKind(c, 4, s.mask) : Status::ok();
}

Status lmopt::runtime::checkAttentionBias(const StepCheck &c,
                                          const AttentionShape &s) {
  if (!s.scoreBias)
    return Status::ok();
  const PlanTensor &bias = c.operand(c.step.operands.size() - 1);
  if (Status st = c.expectDType("bias", bias, DType::F32); !st)
    return st;
  if (Status st = c.expectRank("bias", bias, 4); !st)
    return st;
  const int64_t scores[4] = {s.batch, s.heads, s.queryLength, s.keyLength};
  for (size_t d = 0; d < 4; ++d)
    if (bias.dims[d] != scores[d] && (d == 3 || bias.dims[d] != 1))
      return c.error(
          "bias " + describe(bias) +
          " is not [1|B, 1|H, 1|Sq, Sk] for scores " +
          formatDims({s.batch, s.heads, s.queryLength, s.keyLength}));
  return Status::ok();
}

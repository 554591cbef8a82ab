//===- StepCheck.cpp - Checking a plan step for any device ---------------===//

#include "lmopt/Runtime/StepCheck.h"

#include "lmopt/Runtime/Device.h"

#include <algorithm>

using namespace lmopt::runtime;

std::string lmopt::runtime::describe(const PlanTensor &t) {
  return "'" + t.name + "' (" + dtypeName(t.dtype) + " " + formatDims(t.dims) +
         ")";
}

Status StepCheck::error(const std::string &what, StatusCode code) const {
  return Status::error(code, "bundle '" + source +
                                 "': " + stepKindName(step.kind) + " step '" +
                                 step.name + "': " + what);
}

Status StepCheck::withSource(const Status &st) const {
  return Status::error(st.code(), "bundle '" + source + "': " + st.message());
}

Status StepCheck::expectCounts(size_t operandCount, const std::string &operands,
                               size_t resultCount) const {
  if (step.operands.size() != operandCount)
    return error("has " + std::to_string(step.operands.size()) +
                 " operands; expected " + std::to_string(operandCount) + " (" +
                 operands + ")");
  if (step.results.size() != resultCount)
    return error("has " + std::to_string(step.results.size()) +
                 " results; expected " + std::to_string(resultCount));
  return Status::ok();
}

Status StepCheck::expectDType(const std::string &role, const PlanTensor &t,
                              DType dtype) const {
  if (t.dtype == dtype)
    return Status::ok();
  return error(role + " " + describe(t) + " has dtype " + dtypeName(t.dtype) +
               "; expected " + dtypeName(dtype));
}

Status StepCheck::expectDims(const std::string &role, const PlanTensor &t,
                             const std::vector<int64_t> &dims,
                             const std::string &why) const {
  if (t.dims == dims)
    return Status::ok();
  return error(role + " " + describe(t) + " should have dims " +
               formatDims(dims) + " (" + why + ")");
}

Status StepCheck::expectRank(const std::string &role, const PlanTensor &t,
                             size_t rank) const {
  if (t.dims.size() == rank)
    return Status::ok();
  return error(role + " " + describe(t) + " has rank " +
               std::to_string(t.dims.size()) + "; expected " +
               std::to_string(rank));
}

Status StepCheck::expectAttrs(std::initializer_list<const char *> known) const {
  for (const PlanAttr &attr : step.attrs)
    if (std::none_of(known.begin(), known.end(),
                     [&](const char *name) { return attr.name == name; }))
      return error("has attribute '" + attr.name +
                       "', which this runtime does not know",
                   StatusCode::Unsupported);
  return Status::ok();
}

Status StepCheck::getFlag(const char *name, bool &out) const {
  int64_t value = 0;
  if (Status st = step.getInt(name, 0, value); !st)
    return withSource(st);
  if (value != 0 && value != 1)
    return error("attribute '" + std::string(name) + "' is " +
                 std::to_string(value) + "; expected 0 or 1");
  out = value == 1;
  return Status::ok();
}

Status StepCheck::getFlags(
    std::initializer_list<std::pair<const char *, bool *>> flags) const {
  for (auto [name, out] : flags)
    if (Status st = getFlag(name, *out); !st)
      return st;
  return Status::ok();
}

Status StepCheck::getInt(const char *name, int64_t &out) const {
  if (Status st = step.getInt(name, out); !st)
    return withSource(st);
  return Status::ok();
}

/// Parses a kernel step's 'in_place' attribute: "r:o,r:o" pairs of a result
/// written where an operand (a state view) lies.
static bool parseInPlacePairs(const std::string &list,
                              std::vector<std::pair<size_t, size_t>> &pairs) {
  size_t start = 0;
  while (start <= list.size()) {
    size_t end = list.find(',', start);
    if (end == std::string::npos)
      end = list.size();
    std::string item = list.substr(start, end - start);
    size_t colon = item.find(':');
    if (colon == std::string::npos || colon == 0 || colon + 1 == item.size() ||
        item.find_first_not_of("0123456789:") != std::string::npos ||
        item.find(':', colon + 1) != std::string::npos || item.size() > 18)
      return false;
    pairs.emplace_back(std::stoull(item.substr(0, colon)),
                       std::stoull(item.substr(colon + 1)));
    start = end + 1;
  }
  return !pairs.empty();
}

Status StepCheck::getInPlacePairs(
    std::vector<std::pair<size_t, size_t>> &pairs) const {
  pairs.clear();
  if (!step.findAttr("in_place"))
    return Status::ok();
  std::string list;
  if (Status st = step.getString("in_place", list); !st)
    return withSource(st);
  if (!parseInPlacePairs(list, pairs))
    return error("has attribute 'in_place' = '" + list +
                 "', which is not a list of result:operand numbers");
  for (auto [r, o] : pairs) {
    if (r >= step.results.size() || o >= step.operands.size())
      return error("has attribute 'in_place' = '" + list +
                   "', which names a result or operand it does not have");
    const PlanTensor &a = plan.tensors[step.results[r]];
    const PlanTensor &b = plan.tensors[step.operands[o]];
    if (a.storage != TensorStorage::State || b.storage != a.storage ||
        a.offset != b.offset || a.dims != b.dims || a.dtype != b.dtype)
      return error("in-place result " + std::to_string(r) + " " +
                   describe(a) + " is not the state view operand " +
                   std::to_string(o) + " " + describe(b) + " is");
  }
  return Status::ok();
}

Status StepCheck::checkKernelStep(std::string &entry,
                                  std::vector<uint32_t> &ids,
                                  std::vector<int64_t> &sizes) const {
  if (Status st = expectAttrs({"entry", "dims_only", "in_place"}); !st)
    return st;
  if (Status st = step.getString("entry", entry); !st)
    return withSource(st);
  std::vector<std::pair<size_t, size_t>> inPlace;
  if (Status st = getInPlacePairs(inPlace); !st)
    return st;
  ids = step.operands;
  ids.insert(ids.end(), step.results.begin(), step.results.end());
  sizes.clear();
  for (uint32_t id : ids) {
    const PlanTensor &t = plan.tensors[id];
    for (size_t d = 0; d < t.dimExprs.size(); ++d)
      if (t.dimExprs[d] >= 0)
        sizes.push_back(t.dims[d]);
  }
  if (!step.findAttr("dims_only"))
    return Status::ok();
  std::string list;
  if (Status st = step.getString("dims_only", list); !st)
    return withSource(st);
  // Each item an operand number, so that readsStateAtCapacity matches what
  // the compiler meant.
  size_t listed = 0;
  for (size_t i = 0; i < step.operands.size(); ++i)
    listed += readsStateAtCapacity(step, false, i);
  size_t items = size_t(std::count(list.begin(), list.end(), ',')) + 1;
  if (list.empty() || listed != items)
    return error("has attribute 'dims_only' = '" + list +
                 "', which is not a list of its operand numbers");
  return Status::ok();
}

/// True when two arena tensors share a byte, or two views of one state hold
/// elements.
static bool overlap(const PlanTensor &a, const PlanTensor &b) {
  if (a.storage == TensorStorage::State && b.storage == TensorStorage::State)
    return a.offset == b.offset && a.elementCount() && b.elementCount();
  if (a.storage != TensorStorage::Arena || b.storage != TensorStorage::Arena ||
      a.device != b.device)
    return false;
  uint64_t aSize = a.byteSize(), bSize = b.byteSize();
  return aSize && bSize && a.offset < b.offset + bSize &&
         b.offset < a.offset + aSize;
}

Status StepCheck::checkAliasing() const {
  auto inPlaceResidual = [&](size_t operand, size_t result) {
    if ((step.kind != StepKind::Linear && step.kind != StepKind::QuantLinear) ||
        operand + 1 != step.operands.size() || operand < 2 || result != 0)
      return false;
    int64_t hasResidual = 0;
    if (!step.getInt("has_residual", 0, hasResidual) || hasResidual != 1)
      return false;
    const PlanTensor &a = plan.tensors[step.operands[operand]];
    const PlanTensor &b = plan.tensors[step.results[result]];
    return a.offset == b.offset && a.byteSize() == b.byteSize();
  };
  // States a step updates elementwise where they lie (the step's
  // 'in_place' pairs, each one state view).
  std::vector<std::pair<size_t, size_t>> inPlacePairs;
  if (Status st = getInPlacePairs(inPlacePairs); !st)
    return st;
  auto inPlace = [&](size_t operand, size_t result) {
    return std::find(inPlacePairs.begin(), inPlacePairs.end(),
                     std::make_pair(result, operand)) != inPlacePairs.end();
  };
  for (size_t r = 0; r < step.results.size(); ++r) {
    const PlanTensor &result = plan.tensors[step.results[r]];
    for (size_t o = 0; o < step.operands.size(); ++o) {
      const PlanTensor &operand = plan.tensors[step.operands[o]];
      if (overlap(result, operand) && !inPlaceResidual(o, r) &&
          !inPlace(o, r))
        return error("result " + std::to_string(r) + " " + describe(result) +
                     " at arena offset " + std::to_string(result.offset) +
                     " overlaps operand " + std::to_string(o) + " " +
                     describe(operand) + " at arena offset " +
                     std::to_string(operand.offset));
    }
    for (size_t other = 0; other < r; ++other) {
      const PlanTensor &earlier = plan.tensors[step.results[other]];
      if (overlap(result, earlier))
        return error("results " + std::to_string(other) + " " +
                     describe(earlier) + " and " + std::to_string(r) + " " +
                     describe(result) + " overlap in the arena");
    }
  }
  return Status::ok();
}

Status StepCheck::checkStateViews() const {
  for (const auto *ids : {&step.operands, &step.results})
    for (size_t i = 0; i < ids->size(); ++i) {
      const PlanTensor &t = plan.tensors[(*ids)[i]];
      if (t.storage != TensorStorage::State)
        continue;
      bool isResult = ids == &step.results;
      if (readsStateAtCapacity(step, isResult, i))
        continue;
      const PlanState &state = program.states[size_t(t.offset)];
      if (!isDenseStateView(t.dims, state.dims))
        return error(std::string(isResult ? "result " : "operand ") +
                     std::to_string(i) + " " + describe(t) +
                     " is a view of state '" + state.name + "' " +
                     formatDims(state.dims) +
                     " that is not one dense block, which this step "
                     "cannot read");
    }
  return Status::ok();
}

//===----------------------------------------------------------------------===//
// Gather and append
//===----------------------------------------------------------------------===//

/// The rules both gathers share: an `axis` in [0, rank(data)) and integer
/// indices.
/// Indices of a gather-like step are i32 or i64.
static Status checkIndexDType(const StepCheck &c, const PlanTensor &indices) {
  if (indices.dtype == DType::I32 || indices.dtype == DType::I64)
    return Status::ok();
  return c.error("indices " + describe(indices) + " have dtype " +
                 dtypeName(indices.dtype) + "; expected i32 or i64");
}

static Status checkGatherAxisAndIndices(const StepCheck &c, int64_t axis) {
  const PlanTensor &data = c.operand(0), &indices = c.operand(1);
  if (data.dims.empty())
    return c.error("data " + describe(data) + " is a scalar");
  if (axis < 0 || axis >= int64_t(data.dims.size()))
    return c.error("attribute 'axis' is " + std::to_string(axis) +
                   "; expected a value in [0, " +
                   std::to_string(data.dims.size()) + ")");
  if (Status st = checkIndexDType(c, indices); !st)
    return st;
  return Status::ok();
}

Status lmopt::runtime::checkGatherStep(const StepCheck &c, GatherShape &out) {
  if (Status st = c.expectAttrs({"axis", "row_scales"}); !st)
    return st;
  bool &rowScales = out.rowScales;
  if (Status st = c.getFlag("row_scales", rowScales); !st)
    return st;
  if (Status st = rowScales ? c.expectCounts(3, "data, indices, scales", 1)
                            : c.expectCounts(2, "data, indices", 1);
      !st)
    return st;
  const PlanTensor &data = c.operand(0), &indices = c.operand(1),
                   &output = c.result(0);
  int64_t &axis = out.axis;
  if (Status st = c.getInt("axis", axis); !st)
    return st;
  if (Status st = checkGatherAxisAndIndices(c, axis); !st)
    return st;
  if (rowScales) {
    // An int8 table, one f32 scale per row, dequantized into an f32 output.
    if (axis != 0)
      return c.error("a row-quantized table is gathered along axis 0, got "
                     "attribute 'axis' " +
                     std::to_string(axis));
    if (Status st = c.expectDType("data", data, DType::I8); !st)
      return st;
    const PlanTensor &scales = c.operand(2);
    if (Status st = c.expectDType("scales", scales, DType::F32); !st)
      return st;
    if (Status st = c.expectDims("scales", scales, {data.dims[0]},
                                 "one per row of data");
        !st)
      return st;
  }
  if (Status st =
          c.expectDType("output", output, rowScales ? DType::F32 : data.dtype);
      !st)
    return st;
  std::vector<int64_t> outDims(data.dims.begin(), data.dims.begin() + axis);
  outDims.insert(outDims.end(), indices.dims.begin(), indices.dims.end());
  outDims.insert(outDims.end(), data.dims.begin() + axis + 1, data.dims.end());
  return c.expectDims("output", output, outDims,
                      "data[:axis] + indices + data[axis+1:]");
}

Status lmopt::runtime::checkGatherElementsStep(const StepCheck &c,
                                               int64_t &axis) {
  if (Status st = c.expectAttrs({"axis"}); !st)
    return st;
  if (Status st = c.expectCounts(2, "data, indices", 1); !st)
    return st;
  if (Status st = c.getInt("axis", axis); !st)
    return st;
  if (Status st = checkGatherAxisAndIndices(c, axis); !st)
    return st;
  const PlanTensor &data = c.operand(0), &indices = c.operand(1),
                   &output = c.result(0);
  if (Status st = c.expectRank("indices", indices, data.dims.size()); !st)
    return st;
  if (Status st = c.expectDType("output", output, data.dtype); !st)
    return st;
  // Off the axis the indices may not exceed data; that is checked on each
  // run (GatherElementsStep::run), where symbolic dims have their values.
  return c.expectDims("output", output, indices.dims, "the indices' dims");
}

Status lmopt::runtime::checkScatterNDStep(const StepCheck &c,
                                          int64_t &reduction) {
  if (Status st = c.expectAttrs({"reduction"}); !st)
    return st;
  if (Status st = c.expectCounts(3, "data, indices, updates", 1); !st)
    return st;
  reduction = 0;
  if (c.step.findAttr("reduction"))
    if (Status st = c.getInt("reduction", reduction); !st)
      return st;
  if (reduction < 0 || reduction > 4)
    return c.error("attribute 'reduction' is " + std::to_string(reduction) +
                   "; expected 0 (none), 1 (add), 2 (mul), 3 (max) or 4 "
                   "(min)");
  const PlanTensor &data = c.operand(0), &indices = c.operand(1),
                   &updates = c.operand(2), &output = c.result(0);
  if (data.dims.empty())
    return c.error("data " + describe(data) + " is a scalar");
  if (Status st = checkIndexDType(c, indices); !st)
    return st;
  if (indices.dims.empty() || indices.dims.back() < 1 ||
      indices.dims.back() > int64_t(data.dims.size()))
    return c.error("indices " + describe(indices) +
                   " must end in a tuple length from 1 to data's rank " +
                   std::to_string(data.dims.size()));
  if (Status st = c.expectDType("updates", updates, data.dtype); !st)
    return st;
  if (Status st = c.expectDType("output", output, data.dtype); !st)
    return st;
  // The updates' dims must be indices.dims[:-1] + data.dims[k:]; with
  // symbolic dims that depends on the run's inputs, so it is checked on each
  // run (ScatterNDStep::run), as an error in them rather than in the bundle.
  size_t tuple = size_t(indices.dims.back());
  if (Status st =
          c.expectRank("updates", updates,
                       indices.dims.size() - 1 + data.dims.size() - tuple);
      !st)
    return st;
  return c.expectDims("output", output, data.dims, "data's dims");
}

Status lmopt::runtime::checkGatherGradStep(const StepCheck &c, int64_t &rows,
                                          int64_t &rowSize) {
  if (Status st = c.expectAttrs({}); !st)
    return st;
  if (Status st = c.expectCounts(2, "grad, indices", 1); !st)
    return st;
  const PlanTensor &grad = c.operand(0), &indices = c.operand(1),
                   &output = c.result(0);
  if (Status st = c.expectDType("grad", grad, DType::F32); !st)
    return st;
  if (Status st = c.expectDType("output", output, DType::F32); !st)
    return st;
  if (Status st = checkIndexDType(c, indices); !st)
    return st;
  if (output.dims.empty())
    return c.error("output " + describe(output) + " is a scalar");
  std::vector<int64_t> gradDims = indices.dims;
  gradDims.insert(gradDims.end(), output.dims.begin() + 1, output.dims.end());
  if (Status st = c.expectDims("grad", grad, gradDims,
                               "indices + output[1:]");
      !st)
    return st;
  rows = output.dims[0];
  if (!dimsProduct(output.dims, 1, output.dims.size(), rowSize))
    return c.error("output " + describe(output) + " is too large");
  return Status::ok();
}

Status lmopt::runtime::checkAdamWStep(const StepCheck &c, int64_t &count,
                                     double &beta1, double &beta2,
                                     double &epsilon, double &weightDecay) {
  if (Status st =
          c.expectAttrs(
              {"beta1", "beta2", "epsilon", "weight_decay", "in_place"});
      !st)
    return st;
  if (Status st = c.expectCounts(9,
                                 "param, grad, m, v, lr, step_size, "
                                 "bias_correction2_sqrt, grad_scale, "
                                 "clip_coef",
                                 3);
      !st)
    return st;
  const PlanTensor &param = c.operand(0);
  static const char *const kRoles[] = {
      "param", "grad",     "m",          "v",         "lr",
      "step_size", "bias_correction2_sqrt", "grad_scale", "clip_coef"};
  for (size_t i = 0; i < 9; ++i) {
    const PlanTensor &t = c.operand(i);
    if (Status st = c.expectDType(kRoles[i], t, DType::F32); !st)
      return st;
    if (i < 4) {
      if (Status st = c.expectDims(kRoles[i], t, param.dims, "the param's");
          !st)
        return st;
    } else if (!t.dims.empty()) {
      return c.error(std::string(kRoles[i]) + " " + describe(t) +
                     " is not a scalar");
    }
  }
  static const char *const kResults[] = {"new param", "new m", "new v"};
  for (size_t i = 0; i < 3; ++i) {
    if (Status st = c.expectDType(kResults[i], c.result(i), DType::F32); !st)
      return st;
    if (Status st =
            c.expectDims(kResults[i], c.result(i), param.dims, "the param's");
        !st)
      return st;
  }
  for (auto [name, out] : {std::pair<const char *, double *>{"beta1", &beta1},
                           {"beta2", &beta2},
                           {"epsilon", &epsilon},
                           {"weight_decay", &weightDecay}})
    if (Status st = c.step.getFloat(name, *out); !st)
      return c.withSource(st);
  if (!dimsProduct(param.dims, 0, param.dims.size(), count))
    return c.error("param " + describe(param) + " is too large");
  return Status::ok();
}

bool lmopt::runtime::dimsProduct(const std::vector<int64_t> &dims, size_t begin,
                                 size_t end, int64_t &out) {
  out = 1;
  for (size_t i = begin; i < end; ++i)
    if (__builtin_mul_overflow(out, dims[i], &out))
      return false;
  return true;
}

Status lmopt::runtime::checkAppendStep(const StepCheck &c, int64_t &axis) {
  if (Status st = c.expectAttrs({"axis"}); !st)
    return st;
  if (Status st = c.expectCounts(1, "value", 1); !st)
    return st;
  if (Status st = c.getInt("axis", axis); !st)
    return st;
  const PlanTensor &value = c.operand(0), &dest = c.result(0);
  if (dest.storage != TensorStorage::State)
    return c.error("writes " + describe(dest) + ", which is not a state view");
  if (Status st = c.expectDType("value", value, dest.dtype); !st)
    return st;
  if (Status st = c.expectRank("value", value, dest.dims.size()); !st)
    return st;
  if (axis < 0 || size_t(axis) >= dest.dims.size())
    return c.error("has axis " + std::to_string(axis) + " for rank " +
                   std::to_string(dest.dims.size()));
  std::vector<int64_t> expected = dest.dims;
  expected[size_t(axis)] = value.dims[size_t(axis)];
  if (value.dims[size_t(axis)] > dest.dims[size_t(axis)] ||
      value.dims != expected)
    return c.error("value " + describe(value) +
                   " does not fit the last rows of " + describe(dest) +
                   " along axis " + std::to_string(axis));
  return Status::ok();
}

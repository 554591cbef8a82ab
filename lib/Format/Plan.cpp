//===- Plan.cpp - The execution plan and its encoding ---------------------===//
//
// The plan's data model and its encoding (docs/bundle-format.md, "plan
// section"); PlanParser.cpp decodes and validates it.
//
//===----------------------------------------------------------------------===//

#include "lmopt/Format/Plan.h"

#include <algorithm>
#include <cstring>

using namespace lmopt::runtime;

static constexpr char kMagic[8] = {'L', 'M', 'O', 'P', 'T', 'P', 'L', 'N'};

const char *lmopt::runtime::tensorStorageName(TensorStorage storage) {
  switch (storage) {
  case TensorStorage::Input:
    return "input";
  case TensorStorage::Weight:
    return "weight";
  case TensorStorage::Arena:
    return "arena";
  case TensorStorage::State:
    return "state";
  }
  return "invalid";
}

const char *lmopt::runtime::planStateInitName(PlanState::Init init) {
  switch (init) {
  case PlanState::Init::None:
    return "none";
  case PlanState::Init::Zero:
    return "zero";
  case PlanState::Init::Weight:
    return "weight";
  }
  return "invalid";
}

const char *lmopt::runtime::stepKindName(StepKind kind) {
  switch (kind) {
  case StepKind::Kernel:
    return "kernel";
  case StepKind::Linear:
    return "linear";
  case StepKind::Attention:
    return "attention";
  case StepKind::Gather:
    return "gather";
  case StepKind::Copy:
    return "copy";
  case StepKind::MatMul:
    return "matmul";
  case StepKind::QuantLinear:
    return "quant_linear";
  case StepKind::Append:
    return "append";
  case StepKind::GatherGrad:
    return "gather_grad";
  case StepKind::AdamW:
    return "adamw";
  case StepKind::GatherElements:
    return "gather_elements";
  case StepKind::AttentionGrad:
    return "attention_grad";
  case StepKind::ScatterND:
    return "scatter_nd";
  }
  return "invalid";
}

uint64_t PlanTensor::elementCount() const {
  uint64_t count = 1;
  for (int64_t dim : dims)
    count *= uint64_t(dim);
  return count;
}

uint64_t PlanTensor::byteSize() const {
  return elementCount() * dtypeSize(dtype);
}

uint64_t PlanState::elementCount() const {
  uint64_t count = 1;
  for (int64_t dim : dims)
    count *= uint64_t(dim);
  return count;
}

uint64_t PlanState::byteSize() const {
  return elementCount() * dtypeSize(dtype);
}

const Plan *Program::findEntry(std::string_view name) const {
  for (const Plan &entry : entries)
    if (entry.name == name)
      return &entry;
  return nullptr;
}

long Program::findState(std::string_view name) const {
  for (size_t i = 0; i < states.size(); ++i)
    if (states[i].name == name)
      return long(i);
  return -1;
}

const PlanAttr *PlanStep::findAttr(std::string_view attrName) const {
  for (const PlanAttr &attr : attrs)
    if (attr.name == attrName)
      return &attr;
  return nullptr;
}

static Status attrError(const PlanStep &step, std::string_view attrName,
                        const char *what) {
  return Status::error(StatusCode::InvalidFormat,
                       std::string(stepKindName(step.kind)) + " step '" +
                           step.name + "' " + what + " attribute '" +
                           std::string(attrName) + "'");
}

Status PlanStep::getInt(std::string_view attrName, int64_t &out) const {
  const PlanAttr *attr = findAttr(attrName);
  if (!attr)
    return attrError(*this, attrName, "lacks the integer");
  if (attr->kind != PlanAttr::Kind::Int)
    return attrError(*this, attrName, "has a non-integer");
  out = attr->intValue;
  return Status::ok();
}

Status PlanStep::getInt(std::string_view attrName, int64_t fallback,
                        int64_t &out) const {
  if (!findAttr(attrName)) {
    out = fallback;
    return Status::ok();
  }
  return getInt(attrName, out);
}

Status PlanStep::getFloat(std::string_view attrName, double &out) const {
  const PlanAttr *attr = findAttr(attrName);
  if (!attr)
    return attrError(*this, attrName, "lacks the float");
  if (attr->kind != PlanAttr::Kind::Float)
    return attrError(*this, attrName, "has a non-float");
  out = attr->floatValue;
  return Status::ok();
}

Status PlanStep::getString(std::string_view attrName, std::string &out) const {
  const PlanAttr *attr = findAttr(attrName);
  if (!attr)
    return attrError(*this, attrName, "lacks the string");
  if (attr->kind != PlanAttr::Kind::String)
    return attrError(*this, attrName, "has a non-string");
  out = attr->stringValue;
  return Status::ok();
}

bool lmopt::runtime::readsStateAtCapacity(const PlanStep &step, bool result,
                                          size_t index) {
  switch (step.kind) {
  case StepKind::Attention:
    return !result && (index == 1 || index == 2);
  case StepKind::Append:
    return result;
  case StepKind::Kernel: {
    const PlanAttr *attr = step.findAttr("dims_only");
    if (result || !attr || attr->kind != PlanAttr::Kind::String)
      return false;
    std::string_view list = attr->stringValue;
    std::string number = std::to_string(index);
    for (size_t start = 0; start <= list.size();) {
      size_t end = list.find(',', start);
      if (end == std::string_view::npos)
        end = list.size();
      if (list.substr(start, end - start) == number)
        return true;
      start = end + 1;
    }
    return false;
  }
  default:
    return false;
  }
}

uint32_t Plan::addTensor(PlanTensor tensor) {
  tensors.push_back(std::move(tensor));
  return uint32_t(tensors.size() - 1);
}

PlanStep &Plan::addStep(StepKind kind, std::string name) {
  steps.emplace_back();
  steps.back().kind = kind;
  steps.back().name = std::move(name);
  return steps.back();
}

uint32_t Plan::addExpr(DimExpr expr) {
  for (size_t i = 0; i < exprs.size(); ++i) {
    if (exprs[i].ops == expr.ops)
      return uint32_t(i);
  }
  exprs.push_back(std::move(expr));
  return uint32_t(exprs.size() - 1);
}

//===----------------------------------------------------------------------===//
// Encoding
//===----------------------------------------------------------------------===//

namespace {
class ByteWriter {
public:
  void u32(uint32_t v) { put(v, 4); }
  void u64(uint64_t v) { put(v, 8); }
  void f64(double v) {
    uint64_t bits;
    std::memcpy(&bits, &v, 8);
    put(bits, 8);
  }
  void str(const std::string &s) {
    u32(uint32_t(s.size()));
    bytes.insert(bytes.end(), s.begin(), s.end());
  }
  std::vector<uint8_t> bytes;

private:
  void put(uint64_t v, int n) {
    for (int i = 0; i < n; ++i)
      bytes.push_back(uint8_t(v >> (8 * i)));
  }
};

} // namespace

static void writeDims(ByteWriter &w, const std::vector<int64_t> &dims,
                      const std::vector<int32_t> &dimExprs = {}) {
  w.u32(uint32_t(dims.size()));
  for (size_t d = 0; d < dims.size(); ++d)
    w.u64(!dimExprs.empty() && dimExprs[d] >= 0
              ? uint64_t(-int64_t(dimExprs[d]) - 1)
              : uint64_t(dims[d]));
}

/// The symbol tables; version 2.0 writes each symbol's source.
static void writeSymbols(ByteWriter &w, const Plan &plan, bool legacy) {
  w.u32(uint32_t(plan.symbols.size()));
  for (const PlanSymbol &symbol : plan.symbols) {
    w.str(symbol.name);
    if (!legacy)
      w.u32(uint32_t(symbol.source));
    w.u32(symbol.index);
    w.u32(symbol.dim);
    w.u64(uint64_t(symbol.bound));
  }
  w.u32(uint32_t(plan.exprs.size()));
  for (const DimExpr &expr : plan.exprs) {
    w.u32(uint32_t(expr.ops.size()));
    for (const DimOp &op : expr.ops) {
      w.u32(uint32_t(op.kind));
      w.u64(uint64_t(op.value));
    }
  }
  w.u32(uint32_t(plan.assumptions.size()));
  for (const PlanAssumption &a : plan.assumptions) {
    w.u32(uint32_t(a.kind));
    w.u32(a.lhs);
    w.u32(a.rhs);
  }
}

static void writeAttr(ByteWriter &w, const PlanAttr &a) {
  w.str(a.name);
  w.u32(uint32_t(a.kind));
  switch (a.kind) {
  case PlanAttr::Kind::Int:
    w.u64(uint64_t(a.intValue));
    break;
  case PlanAttr::Kind::Float:
    w.f64(a.floatValue);
    break;
  case PlanAttr::Kind::String:
    w.str(a.stringValue);
    break;
  }
}

/// Tensors, inputs, outputs and steps; version 2.0 adds devices.
static void writeBody(ByteWriter &w, const Plan &plan, bool legacy) {
  w.u32(uint32_t(plan.tensors.size()));
  for (const PlanTensor &t : plan.tensors) {
    w.str(t.name);
    w.u32(uint32_t(t.dtype));
    writeDims(w, t.dims, t.dimExprs);
    w.u32(uint32_t(t.storage));
    w.u64(t.offset);
    if (!legacy)
      w.u32(t.device);
  }
  for (const auto *values : {&plan.inputs, &plan.outputs}) {
    w.u32(uint32_t(values->size()));
    for (const PlanValue &v : *values) {
      w.str(v.name);
      w.u32(v.tensor);
    }
  }
  if (!legacy)
    for (const auto *uses : {&plan.stateReads, &plan.stateWrites}) {
      w.u32(uint32_t(uses->size()));
      for (const PlanStateUse &use : *uses) {
        w.u32(use.state);
        w.u32(use.tensor);
      }
    }
  w.u32(uint32_t(plan.steps.size()));
  for (const PlanStep &s : plan.steps) {
    w.u32(uint32_t(s.kind));
    w.str(s.name);
    if (!legacy)
      w.u32(s.device);
    for (const auto *ids : {&s.operands, &s.results}) {
      w.u32(uint32_t(ids->size()));
      for (uint32_t id : *ids)
        w.u32(id);
    }
    w.u32(uint32_t(s.attrs.size()));
    for (const PlanAttr &a : s.attrs)
      writeAttr(w, a);
  }
}

std::vector<uint8_t> lmopt::runtime::serializeLegacyPlan(const Plan &plan) {
  ByteWriter w;
  w.bytes.insert(w.bytes.end(), kMagic, kMagic + 8);
  bool symbolic = plan.isSymbolic();
  w.u32(1);
  w.u32(symbolic ? kLegacyPlanVersionMinor : 0);
  w.u64(plan.arenaSize(0));
  if (symbolic)
    writeSymbols(w, plan, /*legacy=*/true);
  writeBody(w, plan, /*legacy=*/true);
  return std::move(w.bytes);
}

std::vector<uint8_t> lmopt::runtime::serializeProgram(const Program &program) {
  ByteWriter w;
  w.bytes.insert(w.bytes.end(), kMagic, kMagic + 8);
  w.u32(kPlanVersionMajor);
  w.u32(kPlanVersionMinor);
  w.u32(uint32_t(program.devices.size()));
  for (const PlanDevice &device : program.devices) {
    w.str(device.name);
    w.str(device.kernels);
  }
  w.u32(uint32_t(program.states.size()));
  for (const PlanState &state : program.states) {
    w.str(state.name);
    w.u32(uint32_t(state.dtype));
    writeDims(w, state.dims);
    w.u32(state.device);
    w.u32(uint32_t(state.init));
    w.u64(state.offset);
  }
  w.u32(uint32_t(program.entries.size()));
  for (const Plan &plan : program.entries) {
    w.str(plan.name);
    w.u32(uint32_t(plan.arenaSizes.size()));
    for (uint64_t size : plan.arenaSizes)
      w.u64(size);
    writeSymbols(w, plan, /*legacy=*/false);
    writeBody(w, plan, /*legacy=*/false);
  }
  return std::move(w.bytes);
}

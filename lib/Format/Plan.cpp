//===- Plan.cpp - Encoding and validation of the execution plan ----------===//
//
// Encoding: docs/bundle-format.md, "plan section". The parser trusts nothing:
// every count and length is checked against the bytes left before anything
// is allocated for it, and every reference and size is validated before the
// plan is handed to an executor.
//
//===----------------------------------------------------------------------===//

#include "lmopt/Format/Plan.h"
#include "lmopt/Format/PlanShapes.h"

#include <algorithm>
#include <cstring>
#include <limits>
#include <set>

using namespace lmopt::runtime;

static constexpr char kMagic[8] = {'L', 'M', 'O', 'P', 'T', 'P', 'L', 'N'};
static constexpr uint64_t kMaxNameLength = 65536;
static constexpr uint32_t kMaxPlanRank = 16;
static constexpr uint64_t kOffsetAlignment = 64;

const char *lmopt::runtime::tensorStorageName(TensorStorage storage) {
  switch (storage) {
  case TensorStorage::Input:
    return "input";
  case TensorStorage::Weight:
    return "weight";
  case TensorStorage::Arena:
    return "arena";
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
    const std::vector<DimOp> &ops = exprs[i].ops;
    if (ops.size() == expr.ops.size() &&
        std::equal(ops.begin(), ops.end(), expr.ops.begin(),
                   [](const DimOp &a, const DimOp &b) {
                     return a.kind == b.kind && a.value == b.value;
                   }))
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

class ByteReader {
public:
  ByteReader(const uint8_t *data, size_t size, std::string_view source)
      : data(data), size(size), source(source) {}

  bool u32(uint32_t &v, const char *what) {
    uint64_t w = 0;
    if (!get(w, 4, what))
      return false;
    v = uint32_t(w);
    return true;
  }
  bool u64(uint64_t &v, const char *what) { return get(v, 8, what); }
  bool i64(int64_t &v, const char *what) {
    uint64_t w = 0;
    if (!get(w, 8, what))
      return false;
    std::memcpy(&v, &w, 8);
    return true;
  }
  bool f64(double &v, const char *what) {
    uint64_t w = 0;
    if (!get(w, 8, what))
      return false;
    std::memcpy(&v, &w, 8);
    return true;
  }
  bool str(std::string &s, const char *what) {
    uint32_t length;
    if (!u32(length, what))
      return false;
    if (length > kMaxNameLength)
      return fail(std::string(what) + " is " + std::to_string(length) +
                  " bytes long, over the limit of " +
                  std::to_string(kMaxNameLength));
    if (length > size - pos)
      return truncated(what);
    s.assign(reinterpret_cast<const char *>(data + pos), length);
    pos += length;
    return true;
  }
  /// A count of records at least `minRecordBytes` each; refuses counts the
  /// remaining bytes cannot hold, before anything is allocated.
  bool count(uint32_t &n, uint64_t minRecordBytes, const char *what) {
    if (!u32(n, what))
      return false;
    if (uint64_t(n) * minRecordBytes > size - pos)
      return fail(std::string(what) + " is " + std::to_string(n) +
                  ", more than the " + std::to_string(size - pos) +
                  " remaining bytes can hold");
    return true;
  }
  bool fail(std::string message) {
    if (error.empty())
      error = "plan section of '" + std::string(source) + "' at byte " +
              std::to_string(pos) + ": " + std::move(message);
    return false;
  }
  size_t remaining() const { return size - pos; }
  std::string error;

private:
  bool truncated(const char *what) {
    return fail(std::string("truncated while reading ") + what);
  }
  bool get(uint64_t &v, int n, const char *what) {
    if (size_t(n) > size - pos)
      return truncated(what);
    v = 0;
    for (int i = 0; i < n; ++i)
      v |= uint64_t(data[pos + i]) << (8 * i);
    pos += n;
    return true;
  }
  const uint8_t *data;
  size_t size;
  size_t pos = 0;
  std::string_view source;
};
} // namespace

std::vector<uint8_t> lmopt::runtime::serializePlan(const Plan &plan) {
  ByteWriter w;
  w.bytes.insert(w.bytes.end(), kMagic, kMagic + 8);
  bool symbolic = plan.isSymbolic();
  w.u32(kPlanVersionMajor);
  w.u32(symbolic ? kPlanVersionMinor : 0);
  w.u64(plan.arenaSize);
  if (symbolic) {
    w.u32(uint32_t(plan.symbols.size()));
    for (const PlanSymbol &symbol : plan.symbols) {
      w.str(symbol.name);
      w.u32(symbol.input);
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
  w.u32(uint32_t(plan.tensors.size()));
  for (const PlanTensor &t : plan.tensors) {
    w.str(t.name);
    w.u32(uint32_t(t.dtype));
    w.u32(uint32_t(t.dims.size()));
    for (size_t d = 0; d < t.dims.size(); ++d)
      w.u64(t.isSymbolic() && t.dimExprs[d] >= 0
                ? uint64_t(-int64_t(t.dimExprs[d]) - 1)
                : uint64_t(t.dims[d]));
    w.u32(uint32_t(t.storage));
    w.u64(t.offset);
  }
  for (const auto *values : {&plan.inputs, &plan.outputs}) {
    w.u32(uint32_t(values->size()));
    for (const PlanValue &v : *values) {
      w.str(v.name);
      w.u32(v.tensor);
    }
  }
  w.u32(uint32_t(plan.steps.size()));
  for (const PlanStep &s : plan.steps) {
    w.u32(uint32_t(s.kind));
    w.str(s.name);
    for (const auto *ids : {&s.operands, &s.results}) {
      w.u32(uint32_t(ids->size()));
      for (uint32_t id : *ids)
        w.u32(id);
    }
    w.u32(uint32_t(s.attrs.size()));
    for (const PlanAttr &a : s.attrs) {
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
  }
  return std::move(w.bytes);
}

//===----------------------------------------------------------------------===//
// Decoding and validation
//===----------------------------------------------------------------------===//

/// `exprBounds[i]`: expression i at the symbols' bounds.
static bool readTensor(ByteReader &r, uint64_t arenaSize, uint64_t weightsSize,
                       const std::vector<int64_t> &exprBounds, size_t index,
                       PlanTensor &t) {
  uint32_t dtype, rank, storage;
  if (!r.str(t.name, "tensor name") || !r.u32(dtype, "tensor dtype") ||
      !r.u32(rank, "tensor rank"))
    return false;
  std::string what = "tensor " + std::to_string(index) + " '" + t.name + "'";
  if (!isValidDType(int(dtype)))
    return r.fail(what + " has dtype " + std::to_string(dtype) +
                  ", not one of lmoptDType's values");
  t.dtype = DType(dtype);
  if (rank > kMaxPlanRank)
    return r.fail(what + " has rank " + std::to_string(rank) +
                  ", above the limit of " + std::to_string(kMaxPlanRank));
  uint64_t elements = 1;
  const uint64_t limit = std::numeric_limits<uint64_t>::max() / 16;
  for (uint32_t i = 0; i < rank; ++i) {
    int64_t dim;
    if (!r.i64(dim, "tensor dim"))
      return false;
    if (dim < 0) {
      // -(e + 1): expression e, which holds its value at the bounds.
      uint64_t expr = uint64_t(-(dim + 1));
      if (expr >= exprBounds.size())
        return r.fail(what + " has dim " + std::to_string(i) + " = " +
                      std::to_string(dim) + ", which names expression " +
                      std::to_string(expr) + " of " +
                      std::to_string(exprBounds.size()));
      t.dimExprs.resize(rank, -1);
      t.dimExprs[i] = int32_t(expr);
      dim = exprBounds[expr];
    }
    if (dim != 0 && elements > limit / uint64_t(dim))
      return r.fail(what + " has more elements than 64-bit sizes hold");
    elements *= uint64_t(dim);
    t.dims.push_back(dim);
  }
  if (!r.u32(storage, "tensor storage") || !r.u64(t.offset, "tensor offset"))
    return false;
  t.storage = TensorStorage(storage);
  uint64_t bytes = t.byteSize();
  auto checkRange = [&](uint64_t regionSize, const char *region) {
    if (t.offset % kOffsetAlignment != 0)
      return r.fail(what + " has " + region + " offset " +
                    std::to_string(t.offset) + ", not a multiple of 64");
    if (t.offset > regionSize || bytes > regionSize - t.offset)
      return r.fail(what + " needs bytes [" + std::to_string(t.offset) +
                    ", " + std::to_string(t.offset) + " + " +
                    std::to_string(bytes) + ") beyond the " +
                    std::to_string(regionSize) + "-byte " + region);
    return true;
  };
  switch (t.storage) {
  case TensorStorage::Input:
    return true; // checked against the inputs list later
  case TensorStorage::Weight:
    return checkRange(weightsSize, "weights section");
  case TensorStorage::Arena:
    return checkRange(arenaSize, "arena");
  }
  return r.fail(what + " has storage kind " + std::to_string(storage));
}

static bool readValues(ByteReader &r, const Plan &plan, const char *what,
                       std::vector<PlanValue> &values) {
  uint32_t n;
  if (!r.count(n, 8, what))
    return false;
  std::set<std::string> names;
  std::set<uint32_t> tensors;
  for (uint32_t i = 0; i < n; ++i) {
    PlanValue v;
    if (!r.str(v.name, "value name") || !r.u32(v.tensor, "value tensor"))
      return false;
    if (v.tensor >= plan.tensors.size())
      return r.fail(std::string(what) + " '" + v.name + "' refers to tensor " +
                    std::to_string(v.tensor) + " of " +
                    std::to_string(plan.tensors.size()));
    if (!names.insert(v.name).second)
      return r.fail(std::string(what) + " name '" + v.name +
                    "' appears twice");
    if (!tensors.insert(v.tensor).second)
      return r.fail(std::string(what) + " '" + v.name +
                    "' shares its tensor with another");
    values.push_back(std::move(v));
  }
  return true;
}

static bool readIds(ByteReader &r, const Plan &plan, const std::string &step,
                    const char *what, std::vector<uint32_t> &ids) {
  uint32_t n;
  if (!r.count(n, 4, what))
    return false;
  for (uint32_t i = 0; i < n; ++i) {
    uint32_t id;
    if (!r.u32(id, what))
      return false;
    if (id >= plan.tensors.size())
      return r.fail(step + " refers to tensor " + std::to_string(id) +
                    " of " + std::to_string(plan.tensors.size()));
    ids.push_back(id);
  }
  return true;
}

static bool readStep(ByteReader &r, const Plan &plan, PlanStep &s) {
  uint32_t kind;
  if (!r.u32(kind, "step kind") || !r.str(s.name, "step name"))
    return false;
  s.kind = StepKind(kind);
  if (std::string_view(stepKindName(s.kind)) == "invalid")
    return r.fail("step '" + s.name + "' has kind " + std::to_string(kind) +
                  ", which this runtime does not know");
  std::string what = std::string(stepKindName(s.kind)) + " step '" + s.name +
                     "'";
  if (!readIds(r, plan, what, "operand count", s.operands) ||
      !readIds(r, plan, what, "result count", s.results))
    return false;
  for (uint32_t id : s.results)
    if (plan.tensors[id].storage != TensorStorage::Arena)
      return r.fail(what + " writes tensor " + std::to_string(id) + " '" +
                    plan.tensors[id].name + "', which is a read-only " +
                    tensorStorageName(plan.tensors[id].storage));
  uint32_t n;
  if (!r.count(n, 8, "attribute count"))
    return false;
  for (uint32_t i = 0; i < n; ++i) {
    PlanAttr a;
    uint32_t attrKind;
    if (!r.str(a.name, "attribute name") ||
        !r.u32(attrKind, "attribute kind"))
      return false;
    a.kind = PlanAttr::Kind(attrKind);
    bool ok;
    switch (a.kind) {
    case PlanAttr::Kind::Int:
      ok = r.i64(a.intValue, "attribute value");
      break;
    case PlanAttr::Kind::Float:
      ok = r.f64(a.floatValue, "attribute value");
      break;
    case PlanAttr::Kind::String:
      ok = r.str(a.stringValue, "attribute value");
      break;
    default:
      return r.fail(what + " attribute '" + a.name + "' has kind " +
                    std::to_string(attrKind));
    }
    if (!ok)
      return false;
    if (s.findAttr(a.name))
      return r.fail(what + " has attribute '" + a.name + "' twice");
    s.attrs.push_back(std::move(a));
  }
  return true;
}

static constexpr uint32_t kMaxExprOps = 4096;

/// Version 1.1's symbols, expressions and assumptions; `exprBounds` gets
/// every expression's value at the symbols' bounds.
static bool readSymbols(ByteReader &r, Plan &plan,
                        std::vector<int64_t> &exprBounds) {
  uint32_t n;
  if (!r.count(n, 4 + 4 + 4 + 8, "symbol count"))
    return false;
  if (n == 0)
    return r.fail("a version 1.1 plan has no symbols");
  std::vector<int64_t> bounds;
  for (uint32_t i = 0; i < n; ++i) {
    PlanSymbol symbol;
    if (!r.str(symbol.name, "symbol name") ||
        !r.u32(symbol.input, "symbol input") ||
        !r.u32(symbol.dim, "symbol dim") ||
        !r.i64(symbol.bound, "symbol bound"))
      return false;
    if (symbol.bound < 0)
      return r.fail("symbol '" + symbol.name + "' has bound " +
                    std::to_string(symbol.bound));
    for (const PlanSymbol &other : plan.symbols)
      if (other.input == symbol.input && other.dim == symbol.dim)
        return r.fail("symbols '" + other.name + "' and '" + symbol.name +
                      "' both name dim " + std::to_string(symbol.dim) +
                      " of input " + std::to_string(symbol.input));
    bounds.push_back(symbol.bound);
    plan.symbols.push_back(std::move(symbol));
  }
  if (!r.count(n, 4, "expression count"))
    return false;
  plan.exprs.resize(n);
  for (uint32_t i = 0; i < n; ++i) {
    uint32_t count;
    if (!r.count(count, 4 + 8, "expression length"))
      return false;
    std::string what = "expression " + std::to_string(i);
    if (count == 0 || count > kMaxExprOps)
      return r.fail(what + " has " + std::to_string(count) +
                    " operations; expected 1 to " +
                    std::to_string(kMaxExprOps));
    for (uint32_t j = 0; j < count; ++j) {
      uint32_t kind;
      DimOp op;
      if (!r.u32(kind, "expression operation") ||
          !r.i64(op.value, "expression operand"))
        return false;
      if (kind < uint32_t(DimOp::Kind::Const) ||
          kind > uint32_t(DimOp::Kind::Max))
        return r.fail(what + " has operation kind " + std::to_string(kind));
      op.kind = DimOp::Kind(kind);
      plan.exprs[i].ops.push_back(op);
    }
    int64_t value = 0;
    if (Status st = evaluateDimExpr(plan, plan.exprs[i], bounds, value); !st)
      return r.fail(what + " at the symbols' bounds: " + st.message());
    if (value < 0)
      return r.fail(what + " '" + formatDimExpr(plan, plan.exprs[i]) + "' is " +
                    std::to_string(value) + " at the symbols' bounds");
    exprBounds.push_back(value);
  }
  if (!r.count(n, 4 + 4 + 4, "assumption count"))
    return false;
  for (uint32_t i = 0; i < n; ++i) {
    PlanAssumption a;
    uint32_t kind;
    if (!r.u32(kind, "assumption kind") || !r.u32(a.lhs, "assumption lhs") ||
        !r.u32(a.rhs, "assumption rhs"))
      return false;
    if (kind != uint32_t(PlanAssumption::Kind::Equal) &&
        kind != uint32_t(PlanAssumption::Kind::LessEqual))
      return r.fail("assumption " + std::to_string(i) + " has kind " +
                    std::to_string(kind));
    a.kind = PlanAssumption::Kind(kind);
    if (a.lhs >= plan.exprs.size() || a.rhs >= plan.exprs.size())
      return r.fail("assumption " + std::to_string(i) +
                    " refers to expressions " + std::to_string(a.lhs) +
                    " and " + std::to_string(a.rhs) + " of " +
                    std::to_string(plan.exprs.size()));
    plan.assumptions.push_back(a);
  }
  return true;
}

/// Each symbol is a symbolic dim of an existing input whose expression is
/// that symbol alone.
static bool checkSymbolInputs(ByteReader &r, const Plan &plan) {
  for (size_t i = 0; i < plan.symbols.size(); ++i) {
    const PlanSymbol &symbol = plan.symbols[i];
    std::string what = "symbol '" + symbol.name + "'";
    if (symbol.input >= plan.inputs.size())
      return r.fail(what + " names input " + std::to_string(symbol.input) +
                    " of " + std::to_string(plan.inputs.size()));
    const PlanTensor &t = plan.tensors[plan.inputs[symbol.input].tensor];
    if (symbol.dim >= t.dims.size())
      return r.fail(what + " names dim " + std::to_string(symbol.dim) +
                    " of input '" + plan.inputs[symbol.input].name +
                    "', which has rank " + std::to_string(t.dims.size()));
    int32_t expr = t.isSymbolic() ? t.dimExprs[symbol.dim] : -1;
    const std::vector<DimOp> *ops =
        expr >= 0 ? &plan.exprs[size_t(expr)].ops : nullptr;
    if (!ops || ops->size() != 1 || ops->front().kind != DimOp::Kind::Symbol ||
        ops->front().value != int64_t(i))
      return r.fail(what + " names dim " + std::to_string(symbol.dim) +
                    " of input '" + plan.inputs[symbol.input].name +
                    "', which is not that symbol");
  }
  return true;
}

static bool readPlan(ByteReader &r, uint64_t weightsSize, Plan &plan) {
  uint32_t major, minor, n;
  if (!r.u32(major, "version") || !r.u32(minor, "version"))
    return false;
  // Minor versions change the layout (1.1 adds the symbol tables), so one
  // newer than this runtime's cannot be read either.
  if (major != kPlanVersionMajor || minor > kPlanVersionMinor)
    return r.fail("plan encoding version " + std::to_string(major) + "." +
                  std::to_string(minor) + " is not this runtime's " +
                  std::to_string(kPlanVersionMajor) + "." +
                  std::to_string(kPlanVersionMinor) +
                  "; recompile the model");
  if (!r.u64(plan.arenaSize, "arena size"))
    return false;
  std::vector<int64_t> exprBounds;
  if (minor >= 1 && !readSymbols(r, plan, exprBounds))
    return false;
  if (!r.count(n, 4 + 4 + 4 + 4 + 8, "tensor count"))
    return false;
  plan.tensors.resize(n);
  for (uint32_t i = 0; i < n; ++i)
    if (!readTensor(r, plan.arenaSize, weightsSize, exprBounds, i,
                    plan.tensors[i]))
      return false;
  if (!readValues(r, plan, "input", plan.inputs) ||
      !readValues(r, plan, "output", plan.outputs))
    return false;
  // Input tensors and the inputs list agree one to one.
  for (size_t i = 0; i < plan.inputs.size(); ++i) {
    const PlanTensor &t = plan.tensors[plan.inputs[i].tensor];
    if (t.storage != TensorStorage::Input || t.offset != i)
      return r.fail("input '" + plan.inputs[i].name + "' refers to tensor '" +
                    t.name + "', which is not input number " +
                    std::to_string(i));
  }
  for (const PlanTensor &t : plan.tensors)
    if (t.storage == TensorStorage::Input &&
        (t.offset >= plan.inputs.size() ||
         &plan.tensors[plan.inputs[t.offset].tensor] != &t))
      return r.fail("tensor '" + t.name + "' claims to be input " +
                    std::to_string(t.offset) + ", which names another tensor");
  if (!checkSymbolInputs(r, plan))
    return false;
  if (!r.count(n, 4 + 4 + 4 + 4 + 4, "step count"))
    return false;
  plan.steps.resize(n);
  for (uint32_t i = 0; i < n; ++i)
    if (!readStep(r, plan, plan.steps[i]))
      return false;
  if (r.remaining() != 0)
    return r.fail(std::to_string(r.remaining()) +
                  " bytes follow the last step");
  return true;
}

Status lmopt::runtime::parsePlan(const uint8_t *data, size_t size,
                                 uint64_t weightsSize, std::string_view source,
                                 Plan &out) {
  out = Plan();
  if (size < 8 || std::memcmp(data, kMagic, 8) != 0)
    return Status::error(StatusCode::InvalidFormat,
                         "plan section of '" + std::string(source) +
                             "' does not start with 'LMOPTPLN'");
  ByteReader r(data + 8, size - 8, source);
  if (!readPlan(r, weightsSize, out)) {
    out = Plan();
    bool version = r.error.find("encoding version") != std::string::npos;
    return Status::error(version ? StatusCode::VersionMismatch
                                 : StatusCode::InvalidFormat,
                         r.error);
  }
  return Status::ok();
}

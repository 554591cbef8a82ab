//===- PlanParser.cpp - Decoding and validation of the plan section -------===//
//
// Encoding: docs/bundle-format.md, "plan section". The parser trusts nothing:
// every count and length is checked against the bytes left before anything
// is allocated for it, and every reference and size is validated before the
// program is handed to a session. It reads version 2.0 (a program) and the
// 1.x plans of earlier compilers (one entry on the host CPU).
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

namespace {
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

//===----------------------------------------------------------------------===//
// Decoding and validation
//===----------------------------------------------------------------------===//

namespace {
/// What decoding one entry needs besides the bytes.
struct EntryContext {
  /// A 1.x encoding: no devices, states or state uses.
  bool legacy = false;
  uint64_t weightsSize = 0;
  const Program &program;
};
} // namespace

/// Checks that `offset + bytes` lies in a region of `regionSize` bytes at a
/// multiple of 64.
static bool checkRange(ByteReader &r, const std::string &what, uint64_t offset,
                       uint64_t bytes, uint64_t regionSize,
                       const char *region) {
  if (offset % kOffsetAlignment != 0)
    return r.fail(what + " has " + region + " offset " +
                  std::to_string(offset) + ", not a multiple of 64");
  if (offset > regionSize || bytes > regionSize - offset)
    return r.fail(what + " needs bytes [" + std::to_string(offset) + ", " +
                  std::to_string(offset) + " + " + std::to_string(bytes) +
                  ") beyond the " + std::to_string(regionSize) + "-byte " +
                  region);
  return true;
}

/// Reads rank and dims; a negative dim -(e + 1) is expression e (only where
/// `exprBounds` is given), whose value at the bounds `dims` gets.
static bool readDims(ByteReader &r, const std::string &what,
                     const std::vector<int64_t> *exprBounds,
                     std::vector<int64_t> &dims,
                     std::vector<int32_t> *dimExprs) {
  uint32_t rank;
  if (!r.u32(rank, "rank"))
    return false;
  if (rank > kMaxPlanRank)
    return r.fail(what + " has rank " + std::to_string(rank) +
                  ", above the limit of " + std::to_string(kMaxPlanRank));
  uint64_t elements = 1;
  const uint64_t limit = std::numeric_limits<uint64_t>::max() / 16;
  for (uint32_t i = 0; i < rank; ++i) {
    int64_t dim;
    if (!r.i64(dim, "dim"))
      return false;
    if (dim < 0) {
      uint64_t expr = uint64_t(-(dim + 1));
      size_t count = exprBounds ? exprBounds->size() : 0;
      if (expr >= count)
        return r.fail(what + " has dim " + std::to_string(i) + " = " +
                      std::to_string(dim) + ", which names expression " +
                      std::to_string(expr) + " of " + std::to_string(count));
      dimExprs->resize(rank, -1);
      (*dimExprs)[i] = int32_t(expr);
      dim = (*exprBounds)[expr];
    }
    if (dim != 0 && elements > limit / uint64_t(dim))
      return r.fail(what + " has more elements than 64-bit sizes hold");
    elements *= uint64_t(dim);
    dims.push_back(dim);
  }
  return true;
}

static bool readDType(ByteReader &r, const std::string &what, DType &out) {
  uint32_t dtype;
  if (!r.u32(dtype, "dtype"))
    return false;
  if (!isValidDType(int(dtype)))
    return r.fail(what + " has dtype " + std::to_string(dtype) +
                  ", not one of lmoptDType's values");
  out = DType(dtype);
  return true;
}

static bool readDevice(ByteReader &r, const EntryContext &c,
                       const std::string &what, uint32_t &device) {
  device = 0;
  if (c.legacy)
    return true;
  if (!r.u32(device, "device"))
    return false;
  if (device >= c.program.devices.size())
    return r.fail(what + " is on device " + std::to_string(device) + " of " +
                  std::to_string(c.program.devices.size()));
  return true;
}

/// `exprBounds[i]`: expression i at the symbols' bounds.
static bool readTensor(ByteReader &r, const EntryContext &c, const Plan &plan,
                       const std::vector<int64_t> &exprBounds, size_t index,
                       PlanTensor &t) {
  if (!r.str(t.name, "tensor name"))
    return false;
  std::string what = "tensor " + std::to_string(index) + " '" + t.name + "'";
  uint32_t storage;
  if (!readDType(r, what, t.dtype) ||
      !readDims(r, what, &exprBounds, t.dims, &t.dimExprs) ||
      !r.u32(storage, "tensor storage") || !r.u64(t.offset, "tensor offset") ||
      !readDevice(r, c, what, t.device))
    return false;
  t.storage = TensorStorage(storage);
  switch (t.storage) {
  case TensorStorage::Input:
    if (t.device != 0)
      return r.fail(what + " is an input on device " +
                    std::to_string(t.device) +
                    "; inputs are the caller's host memory (device 0)");
    return true; // checked against the inputs list later
  case TensorStorage::Weight:
    return checkRange(r, what, t.offset, t.byteSize(), c.weightsSize,
                      "weights section");
  case TensorStorage::Arena:
    return checkRange(r, what, t.offset, t.byteSize(), plan.arenaSize(t.device),
                      "arena");
  case TensorStorage::State:
    break;
  }
  if (t.storage != TensorStorage::State || c.legacy)
    return r.fail(what + " has storage kind " + std::to_string(storage));
  if (t.offset >= c.program.states.size())
    return r.fail(what + " views state " + std::to_string(t.offset) + " of " +
                  std::to_string(c.program.states.size()));
  const PlanState &state = c.program.states[size_t(t.offset)];
  std::string view = what + ", a view of state '" + state.name + "' (" +
                     dtypeName(state.dtype) + " " + formatDims(state.dims) +
                     "),";
  if (t.dtype != state.dtype)
    return r.fail(view + " has dtype " + dtypeName(t.dtype));
  if (t.device != state.device)
    return r.fail(view + " is on device " + std::to_string(t.device) +
                  ", not the state's " + std::to_string(state.device));
  if (t.dims.size() != state.dims.size())
    return r.fail(view + " has rank " + std::to_string(t.dims.size()));
  for (size_t d = 0; d < t.dims.size(); ++d)
    if (t.dims[d] > state.dims[d])
      return r.fail(view + " has dims " + formatDims(t.dims) +
                    ", beyond the state's in dim " + std::to_string(d));
  return true;
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
      return r.fail(std::string(what) + " name '" + v.name + "' appears twice");
    if (!tensors.insert(v.tensor).second)
      return r.fail(std::string(what) + " '" + v.name +
                    "' shares its tensor with another");
    values.push_back(std::move(v));
  }
  return true;
}

/// State reads or writes: each a view of its state, each state once.
static bool readStateUses(ByteReader &r, const EntryContext &c,
                          const Plan &plan, const char *what,
                          std::vector<PlanStateUse> &uses) {
  uint32_t n;
  if (!r.count(n, 8, what))
    return false;
  std::set<uint32_t> states;
  for (uint32_t i = 0; i < n; ++i) {
    PlanStateUse use;
    if (!r.u32(use.state, "state number") || !r.u32(use.tensor, "state tensor"))
      return false;
    if (use.state >= c.program.states.size())
      return r.fail(std::string(what) + " names state " +
                    std::to_string(use.state) + " of " +
                    std::to_string(c.program.states.size()));
    const std::string &name = c.program.states[use.state].name;
    if (!states.insert(use.state).second)
      return r.fail(std::string(what) + " name state '" + name + "' twice");
    if (use.tensor >= plan.tensors.size())
      return r.fail(std::string(what) + " of state '" + name +
                    "' refers to tensor " + std::to_string(use.tensor) +
                    " of " + std::to_string(plan.tensors.size()));
    const PlanTensor &t = plan.tensors[use.tensor];
    if (t.storage != TensorStorage::State || t.offset != use.state)
      return r.fail(std::string(what) + " of state '" + name +
                    "' refers to tensor '" + t.name +
                    "', which is not a view of that state");
    uses.push_back(use);
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
      return r.fail(step + " refers to tensor " + std::to_string(id) + " of " +
                    std::to_string(plan.tensors.size()));
    ids.push_back(id);
  }
  return true;
}

static bool readAttr(ByteReader &r, const std::string &what, PlanAttr &a) {
  uint32_t attrKind;
  if (!r.str(a.name, "attribute name") || !r.u32(attrKind, "attribute kind"))
    return false;
  a.kind = PlanAttr::Kind(attrKind);
  switch (a.kind) {
  case PlanAttr::Kind::Int:
    return r.i64(a.intValue, "attribute value");
  case PlanAttr::Kind::Float:
    return r.f64(a.floatValue, "attribute value");
  case PlanAttr::Kind::String:
    return r.str(a.stringValue, "attribute value");
  }
  return r.fail(what + " attribute '" + a.name + "' has kind " +
                std::to_string(attrKind));
}

static bool readStep(ByteReader &r, const EntryContext &c, const Plan &plan,
                     PlanStep &s) {
  uint32_t kind;
  if (!r.u32(kind, "step kind") || !r.str(s.name, "step name"))
    return false;
  s.kind = StepKind(kind);
  if (std::string_view(stepKindName(s.kind)) == "invalid" ||
      (c.legacy &&
       (s.kind == StepKind::Append || s.kind == StepKind::GatherGrad ||
        s.kind == StepKind::AdamW || s.kind == StepKind::GatherElements ||
        s.kind == StepKind::AttentionGrad || s.kind == StepKind::ScatterND)))
    return r.fail("step '" + s.name + "' has kind " + std::to_string(kind) +
                  ", which this runtime does not know");
  std::string what =
      std::string(stepKindName(s.kind)) + " step '" + s.name + "'";
  if (!readDevice(r, c, what, s.device) ||
      !readIds(r, plan, what, "operand count", s.operands) ||
      !readIds(r, plan, what, "result count", s.results))
    return false;
  for (uint32_t id : s.results) {
    const PlanTensor &t = plan.tensors[id];
    if (t.storage != TensorStorage::Arena && t.storage != TensorStorage::State)
      return r.fail(what + " writes tensor " + std::to_string(id) + " '" +
                    t.name + "', which is a read-only " +
                    tensorStorageName(t.storage));
  }
  // A step works in its device's memory; only a copy moves bytes between
  // devices.
  if (s.kind != StepKind::Copy)
    for (const auto *ids : {&s.operands, &s.results})
      for (uint32_t id : *ids)
        if (plan.tensors[id].device != s.device)
          return r.fail(what + " runs on device " + std::to_string(s.device) +
                        " but tensor '" + plan.tensors[id].name +
                        "' is on device " +
                        std::to_string(plan.tensors[id].device));
  uint32_t n;
  if (!r.count(n, 8, "attribute count"))
    return false;
  for (uint32_t i = 0; i < n; ++i) {
    PlanAttr a;
    if (!readAttr(r, what, a))
      return false;
    if (s.findAttr(a.name))
      return r.fail(what + " has attribute '" + a.name + "' twice");
    s.attrs.push_back(std::move(a));
  }
  return true;
}

static constexpr uint32_t kMaxExprOps = 4096;

/// The symbols, expressions and assumptions; `exprBounds` gets every
/// expression's value at the symbols' bounds. A 1.1 plan has at least one
/// symbol (a 1.0 plan has no tables); a 2.0 entry may have none.
static bool readSymbols(ByteReader &r, const EntryContext &c, Plan &plan,
                        std::vector<int64_t> &exprBounds) {
  uint32_t n;
  if (!r.count(n, 4 + 4 + 4 + 8, "symbol count"))
    return false;
  if (n == 0 && c.legacy)
    return r.fail("a version 1.1 plan has no symbols");
  std::vector<int64_t> bounds;
  for (uint32_t i = 0; i < n; ++i) {
    PlanSymbol symbol;
    uint32_t source = uint32_t(PlanSymbol::Source::Input);
    if (!r.str(symbol.name, "symbol name") ||
        (!c.legacy && !r.u32(source, "symbol source")) ||
        !r.u32(symbol.index, "symbol input") ||
        !r.u32(symbol.dim, "symbol dim") ||
        !r.i64(symbol.bound, "symbol bound"))
      return false;
    if (source != uint32_t(PlanSymbol::Source::Input) &&
        source != uint32_t(PlanSymbol::Source::State))
      return r.fail("symbol '" + symbol.name + "' has source " +
                    std::to_string(source));
    symbol.source = PlanSymbol::Source(source);
    if (symbol.bound < 0)
      return r.fail("symbol '" + symbol.name + "' has bound " +
                    std::to_string(symbol.bound));
    for (const PlanSymbol &other : plan.symbols)
      if (other.source == symbol.source && other.index == symbol.index &&
          other.dim == symbol.dim)
        return r.fail(
            "symbols '" + other.name + "' and '" + symbol.name +
            "' both name dim " + std::to_string(symbol.dim) + " of " +
            (symbol.source == PlanSymbol::Source::State ? "state " : "input ") +
            std::to_string(symbol.index));
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

/// Each input symbol is a symbolic dim of an existing input whose
/// expression is that symbol alone; each state symbol a dim of an existing
/// state, bounded by its capacity.
static bool checkSymbolSources(ByteReader &r, const EntryContext &c,
                               const Plan &plan) {
  for (size_t i = 0; i < plan.symbols.size(); ++i) {
    const PlanSymbol &symbol = plan.symbols[i];
    std::string what = "symbol '" + symbol.name + "'";
    if (symbol.source == PlanSymbol::Source::State) {
      if (symbol.index >= c.program.states.size())
        return r.fail(what + " names state " + std::to_string(symbol.index) +
                      " of " + std::to_string(c.program.states.size()));
      const PlanState &state = c.program.states[symbol.index];
      if (symbol.dim >= state.dims.size())
        return r.fail(what + " names dim " + std::to_string(symbol.dim) +
                      " of state '" + state.name + "', which has rank " +
                      std::to_string(state.dims.size()));
      if (symbol.bound > state.dims[symbol.dim])
        return r.fail(what + " has bound " + std::to_string(symbol.bound) +
                      ", beyond state '" + state.name + "' dim " +
                      std::to_string(symbol.dim) + " of " +
                      std::to_string(state.dims[symbol.dim]));
      continue;
    }
    if (symbol.index >= plan.inputs.size())
      return r.fail(what + " names input " + std::to_string(symbol.index) +
                    " of " + std::to_string(plan.inputs.size()));
    const PlanTensor &t = plan.tensors[plan.inputs[symbol.index].tensor];
    if (symbol.dim >= t.dims.size())
      return r.fail(what + " names dim " + std::to_string(symbol.dim) +
                    " of input '" + plan.inputs[symbol.index].name +
                    "', which has rank " + std::to_string(t.dims.size()));
    int32_t expr = t.isSymbolic() ? t.dimExprs[symbol.dim] : -1;
    const std::vector<DimOp> *ops =
        expr >= 0 ? &plan.exprs[size_t(expr)].ops : nullptr;
    if (!ops || ops->size() != 1 || ops->front().kind != DimOp::Kind::Symbol ||
        ops->front().value != int64_t(i))
      return r.fail(what + " names dim " + std::to_string(symbol.dim) +
                    " of input '" + plan.inputs[symbol.index].name +
                    "', which is not that symbol");
  }
  return true;
}

/// Input tensors and the inputs list agree one to one.
static bool checkInputs(ByteReader &r, const Plan &plan) {
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
  return true;
}

/// One entry, after its name (and, in 2.0, arena sizes) for 1.x after the
/// arena size; `symbolic` says whether the symbol tables are present.
static bool readEntryBody(ByteReader &r, const EntryContext &c, bool symbolic,
                          Plan &plan) {
  std::vector<int64_t> exprBounds;
  if (symbolic && !readSymbols(r, c, plan, exprBounds))
    return false;
  uint32_t n;
  if (!r.count(n, 4 + 4 + 4 + 4 + 8, "tensor count"))
    return false;
  plan.tensors.resize(n);
  for (uint32_t i = 0; i < n; ++i)
    if (!readTensor(r, c, plan, exprBounds, i, plan.tensors[i]))
      return false;
  if (!readValues(r, plan, "input", plan.inputs) ||
      !readValues(r, plan, "output", plan.outputs) || !checkInputs(r, plan) ||
      !checkSymbolSources(r, c, plan))
    return false;
  for (const PlanValue &v : plan.outputs)
    if (plan.tensors[v.tensor].storage == TensorStorage::State)
      return r.fail("output '" + v.name + "' is a view of state " +
                    std::to_string(plan.tensors[v.tensor].offset) +
                    "; outputs are copies (a step copies the state)");
  if (!c.legacy &&
      (!readStateUses(r, c, plan, "state reads", plan.stateReads) ||
       !readStateUses(r, c, plan, "state writes", plan.stateWrites)))
    return false;
  if (!r.count(n, 4 + 4 + 4 + 4 + 4, "step count"))
    return false;
  plan.steps.resize(n);
  for (uint32_t i = 0; i < n; ++i)
    if (!readStep(r, c, plan, plan.steps[i]))
      return false;
  return true;
}

static bool readStates(ByteReader &r, uint64_t weightsSize, Program &program) {
  uint32_t n;
  if (!r.count(n, 4 + 4 + 4 + 4 + 4 + 8, "state count"))
    return false;
  std::set<std::string> names;
  for (uint32_t i = 0; i < n; ++i) {
    PlanState state;
    if (!r.str(state.name, "state name"))
      return false;
    std::string what = "state " + std::to_string(i) + " '" + state.name + "'";
    uint32_t init;
    if (!readDType(r, what, state.dtype) ||
        !readDims(r, what, nullptr, state.dims, nullptr) ||
        !r.u32(state.device, "state device") || !r.u32(init, "state init") ||
        !r.u64(state.offset, "state offset"))
      return false;
    if (state.name.empty() || !names.insert(state.name).second)
      return r.fail(what + ": state names must be distinct and not empty");
    if (state.device >= program.devices.size())
      return r.fail(what + " is on device " + std::to_string(state.device) +
                    " of " + std::to_string(program.devices.size()));
    state.init = PlanState::Init(init);
    if (std::string_view(planStateInitName(state.init)) == "invalid")
      return r.fail(what + " has init kind " + std::to_string(init));
    if (state.init == PlanState::Init::Weight) {
      if (!checkRange(r, what, state.offset, state.byteSize(), weightsSize,
                      "weights section"))
        return false;
    } else if (state.offset != 0) {
      return r.fail(what + " has offset " + std::to_string(state.offset) +
                    " but its init is " + planStateInitName(state.init));
    }
    program.states.push_back(std::move(state));
  }
  return true;
}

static bool readProgram(ByteReader &r, uint64_t weightsSize, Program &program) {
  uint32_t n;
  if (!r.count(n, 4 + 4, "device count"))
    return false;
  if (n == 0)
    return r.fail("the program has no devices");
  program.devices.clear();
  std::set<std::string> names;
  for (uint32_t i = 0; i < n; ++i) {
    PlanDevice device;
    if (!r.str(device.name, "device name") ||
        !r.str(device.kernels, "device kernels section"))
      return false;
    if (device.name.empty() || !names.insert(device.name).second)
      return r.fail("device " + std::to_string(i) + " '" + device.name +
                    "': device names must be distinct and not empty");
    program.devices.push_back(std::move(device));
  }
  if (program.devices.front().name != "cpu")
    return r.fail("device 0 is '" + program.devices.front().name +
                  "'; it must be the host 'cpu'");
  if (!readStates(r, weightsSize, program))
    return false;
  EntryContext c{false, weightsSize, program};
  if (!r.count(n, 4 + 4 + 4 * 7, "entry count"))
    return false;
  if (n == 0)
    return r.fail("the program has no entries");
  program.entries.resize(n);
  for (uint32_t i = 0; i < n; ++i) {
    Plan &plan = program.entries[i];
    if (!r.str(plan.name, "entry name"))
      return false;
    if (plan.name.empty() || program.findEntry(plan.name) != &plan)
      return r.fail("entry " + std::to_string(i) + " '" + plan.name +
                    "': entry names must be distinct and not empty");
    uint32_t arenas;
    if (!r.count(arenas, 8, "arena count"))
      return false;
    if (arenas > program.devices.size())
      return r.fail("entry '" + plan.name + "' has " + std::to_string(arenas) +
                    " arenas for " + std::to_string(program.devices.size()) +
                    " devices");
    plan.arenaSizes.resize(arenas);
    for (uint64_t &size : plan.arenaSizes)
      if (!r.u64(size, "arena size"))
        return false;
    if (!readEntryBody(r, c, /*symbolic=*/true, plan))
      return false;
  }
  return true;
}

static bool readLegacyPlan(ByteReader &r, uint32_t minor, uint64_t weightsSize,
                           Program &program) {
  program.devices = {{"cpu", "kernels"}};
  program.entries.resize(1);
  Plan &plan = program.entries.front();
  plan.arenaSizes.resize(1);
  if (!r.u64(plan.arenaSizes[0], "arena size"))
    return false;
  EntryContext c{true, weightsSize, program};
  return readEntryBody(r, c, /*symbolic=*/minor >= 1, plan);
}

Status lmopt::runtime::parsePlan(const uint8_t *data, size_t size,
                                 uint64_t weightsSize, std::string_view source,
                                 Program &out) {
  out = Program();
  if (size < 8 || std::memcmp(data, kMagic, 8) != 0)
    return Status::error(StatusCode::InvalidFormat,
                         "plan section of '" + std::string(source) +
                             "' does not start with 'LMOPTPLN'");
  ByteReader r(data + 8, size - 8, source);
  uint32_t major = 0, minor = 0;
  bool ok = r.u32(major, "version") && r.u32(minor, "version");
  if (ok) {
    // Minor versions change the layout (1.1 adds the symbol tables), so one
    // newer than this runtime's cannot be read either.
    bool legacy = major == 1 && minor <= kLegacyPlanVersionMinor;
    if (!legacy && (major != kPlanVersionMajor || minor > kPlanVersionMinor))
      ok = r.fail("plan encoding version " + std::to_string(major) + "." +
                  std::to_string(minor) + " is not this runtime's " +
                  std::to_string(kPlanVersionMajor) + "." +
                  std::to_string(kPlanVersionMinor) +
                  " (nor 1.0 or 1.1, which it also reads); recompile the "
                  "model");
    else
      ok = legacy ? readLegacyPlan(r, minor, weightsSize, out)
                  : readProgram(r, weightsSize, out);
  }
  if (ok && r.remaining() != 0)
    ok = r.fail(std::to_string(r.remaining()) + " bytes follow the last " +
                (major == 1 ? "step" : "entry"));
  if (!ok) {
    out = Program();
    bool version = r.error.find("encoding version") != std::string::npos;
    return Status::error(version ? StatusCode::VersionMismatch
                                 : StatusCode::InvalidFormat,
                         r.error);
  }
  return Status::ok();
}

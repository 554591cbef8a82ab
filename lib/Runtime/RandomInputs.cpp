//===- RandomInputs.cpp - Seeded inputs of random dims within bounds ------===//

#include "lmopt/Runtime/RandomInputs.h"

#include "lmopt/Format/Float16.h"
#include "lmopt/Format/PlanShapes.h"

#include <algorithm>
#include <cstring>
#include <numeric>

using namespace lmopt::runtime;

/// The symbol an expression is, or -1 when it is anything else.
static long soleSymbol(const DimExpr &expr) {
  if (expr.ops.size() != 1 || expr.ops[0].kind != DimOp::Kind::Symbol)
    return -1;
  return long(expr.ops[0].value);
}

static size_t findRoot(std::vector<size_t> &parent, size_t i) {
  while (parent[i] != i)
    i = parent[i] = parent[parent[i]];
  return i;
}

Status RandomInputs::create(const Plan &plan, const RandomInputOptions &options,
                            RandomInputs &out) {
  size_t n = plan.symbols.size();
  for (const PlanSymbol &symbol : plan.symbols)
    if (symbol.source != PlanSymbol::Source::Input)
      return Status::error(StatusCode::Unsupported,
                           "entry '" + plan.name + "': symbol '" + symbol.name +
                               "' is a dim of a state; random inputs draw "
                               "only the inputs' dims");
  std::vector<size_t> parent(n);
  std::iota(parent.begin(), parent.end(), size_t(0));
  auto unite = [&](size_t a, size_t b) {
    parent[findRoot(parent, a)] = findRoot(parent, b);
  };
  for (const PlanAssumption &a : plan.assumptions) {
    long lhs = soleSymbol(plan.exprs[a.lhs]),
         rhs = soleSymbol(plan.exprs[a.rhs]);
    if (a.kind == PlanAssumption::Kind::Equal && lhs >= 0 && rhs >= 0)
      unite(size_t(lhs), size_t(rhs));
  }
  for (size_t i = 0; i < n && !options.independentDims; ++i)
    for (size_t j = 0; j < i; ++j)
      if (plan.symbols[i].dim == plan.symbols[j].dim &&
          plan.symbols[i].bound == plan.symbols[j].bound)
        unite(i, j);

  out = RandomInputs();
  out.plan_ = &plan;
  out.options_ = options;
  out.state_ = options.seed;
  std::vector<long> groupOfRoot(n, -1);
  for (size_t i = 0; i < n; ++i) {
    size_t root = findRoot(parent, i);
    if (groupOfRoot[root] < 0) {
      groupOfRoot[root] = long(out.groupBound_.size());
      out.groupBound_.push_back(plan.symbols[i].bound);
    }
    size_t group = size_t(groupOfRoot[root]);
    out.group_.push_back(group);
    out.groupBound_[group] =
        std::min(out.groupBound_[group], plan.symbols[i].bound);
  }
  return Status::ok();
}

/// splitmix64: the same stream on every platform and standard library.
uint64_t RandomInputs::next() {
  uint64_t z = (state_ += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

template <typename T> static void put(uint8_t *data, size_t i, T value) {
  std::memcpy(data + i * sizeof(T), &value, sizeof(T));
}

Status RandomInputs::draw(std::vector<NamedTensor> &inputs) {
  const Plan &plan = *plan_;
  std::vector<int64_t> groupValue(groupBound_.size());
  for (size_t g = 0; g < groupBound_.size(); ++g)
    groupValue[g] =
        groupBound_[g] < 1 ? 0 : 1 + int64_t(next() % uint64_t(groupBound_[g]));
  std::vector<int64_t> symbols(group_.size());
  for (size_t s = 0; s < group_.size(); ++s)
    symbols[s] = groupValue[group_[s]];

  inputs.resize(plan.inputs.size());
  for (size_t i = 0; i < plan.inputs.size(); ++i) {
    const PlanTensor &t = plan.tensors[plan.inputs[i].tensor];
    NamedTensor &input = inputs[i];
    input.name = plan.inputs[i].name;
    input.tensor.dtype = t.dtype;
    input.tensor.shape = t.dims;
    for (size_t d = 0; d < t.dimExprs.size(); ++d)
      if (t.dimExprs[d] >= 0)
        if (Status st = evaluateDimExpr(plan, plan.exprs[size_t(t.dimExprs[d])],
                                        symbols, input.tensor.shape[d]);
            !st)
          return st;
    size_t count = size_t(input.tensor.elementCount());
    input.tensor.data.resize(count * dtypeSize(t.dtype));
    uint8_t *data = input.tensor.data.data();
    for (size_t e = 0; e < count; ++e) {
      uint64_t bits = next();
      // Uniform in [-1, 1) for floats; [0, intLimit) for the rest.
      float real = float(double(bits >> 11) * 0x1.0p-52 - 1.0);
      int64_t integer =
          int64_t(bits % uint64_t(std::max<int64_t>(options_.intLimit, 1)));
      switch (t.dtype) {
      case DType::F32:
        put(data, e, real);
        break;
      case DType::F64:
        put(data, e, double(real));
        break;
      case DType::F16:
        put(data, e, floatToHalf(real));
        break;
      case DType::BF16:
        put(data, e, floatToBFloat16(real));
        break;
      case DType::Bool:
        put(data, e, uint8_t(bits & 1));
        break;
      default:
        // Little-endian integers: the low bytes of the value.
        std::memcpy(data + e * dtypeSize(t.dtype), &integer,
                    dtypeSize(t.dtype));
        break;
      }
    }
  }
  return Status::ok();
}

std::string RandomInputs::describe() const {
  if (groupBound_.empty())
    return "none (static dims)";
  std::string text;
  for (size_t g = 0; g < groupBound_.size(); ++g) {
    std::string names;
    for (size_t s = 0; s < group_.size(); ++s)
      if (group_[s] == g)
        names += (names.empty() ? "" : " = ") + plan_->symbols[s].name;
    text += (g ? ", " : "") + names + " <= " + std::to_string(groupBound_[g]);
  }
  return text;
}

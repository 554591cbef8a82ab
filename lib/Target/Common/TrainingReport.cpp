//===- TrainingReport.cpp - what the backward pass saves ------------------===//
//
// See TrainingReport.h. A forward value is saved when a backward op reads
// it; a backward op is a recomputation when none of its operands depends on
// the loss's gradient (it reads forward values and constants only).
//
//===----------------------------------------------------------------------===//

#include "lmopt/Target/Common/TrainingReport.h"

#include "lmopt/Dialect/Lmopt/Transforms/SymbolicShapes.h"
#include "lmopt/Support/FusionReport.h"
#include "lmopt/Target/Common/PlanSymbols.h"

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Diagnostics.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Format.h"

using namespace mlir;
using namespace mlir::lmopt;

std::string mlir::lmopt::getLayerOfNode(StringRef nodeName) {
  if (nodeName.empty())
    return "(unnamed)";
  SmallVector<StringRef> parts;
  nodeName.split(parts, '/', -1, /*KeepEmpty=*/false);
  std::string prefix;
  for (auto [index, part] : llvm::enumerate(parts)) {
    // The last component names the node itself, not a layer.
    if (index + 1 == parts.size())
      break;
    prefix += "/" + part.str();
    if (llvm::isDigit(part.back()))
      return prefix;
  }
  std::string shortName;
  for (size_t i = 0; i + 1 < parts.size() && i < 2; ++i)
    shortName += "/" + parts[i].str();
  return shortName.empty() ? "/" + parts.front().str() : shortName;
}

namespace {
/// Byte sizes of values at the entry's largest shapes.
class ValueSizes {
public:
  ValueSizes(func::FuncOp func,
             const std::map<std::string, std::vector<int64_t>> &maxShapes) {
    if (maxShapes.empty())
      return;
    // Best effort: a bound that is missing leaves values unbounded, and the
    // plan builder reports it properly later.
    ScopedDiagnosticHandler quiet(func.getContext(),
                                  [](Diagnostic &) { return success(); });
    ::lmopt::runtime::Plan scratch;
    SymbolicShapeBounds bounds;
    if (succeeded(addPlanSymbols(func, maxShapes, scratch, bounds, {})))
      shapes.emplace(func, bounds);
  }

  /// The size of `value`, or nullopt when a dim has no bound.
  std::optional<int64_t> bytes(Value value) const {
    auto type = llvm::dyn_cast<RankedTensorType>(value.getType());
    if (!type || !type.getElementType().isIntOrFloat())
      return std::nullopt;
    int64_t count = 1;
    for (auto [dim, size] : llvm::enumerate(type.getShape())) {
      int64_t bound = size;
      if (ShapedType::isDynamic(size)) {
        std::optional<ArrayRef<SymExpr>> dims =
            shapes ? shapes->getDims(value) : std::nullopt;
        std::optional<int64_t> upper =
            dims && dim < dims->size() ? shapes->getUpperBound((*dims)[dim])
                                       : std::nullopt;
        if (!upper)
          return std::nullopt;
        bound = *upper;
      }
      count *= bound;
    }
    return count *
           int64_t((type.getElementType().getIntOrFloatBitWidth() + 7) / 8);
  }

private:
  std::optional<SymbolicShapes> shapes;
};

struct LayerTotals {
  int64_t bytes = 0, values = 0;
};
} // namespace

llvm::json::Object mlir::lmopt::reportSavedActivations(
    func::FuncOp train, const llvm::DenseSet<Operation *> &forward,
    unsigned forwardArgs,
    const std::map<std::string, std::vector<int64_t>> &maxShapes) {
  ValueSizes sizes(train, maxShapes);
  Block &block = train.getBody().front();
  auto isBackward = [&](Operation *op) {
    return !forward.contains(op) && op != block.getTerminator();
  };
  // Layers in the order the forward pass reaches them.
  std::map<std::string, LayerTotals> layers;
  std::vector<std::string> order;
  int64_t savedBytes = 0, savedValues = 0, unbounded = 0;
  for (Operation &op : block.without_terminator()) {
    if (!forward.contains(&op) || op.hasTrait<OpTrait::ConstantLike>())
      continue;
    for (Value result : op.getResults()) {
      if (!llvm::any_of(result.getUsers(), isBackward))
        continue;
      std::optional<int64_t> bytes = sizes.bytes(result);
      if (!bytes) {
        ++unbounded;
        continue;
      }
      std::string name =
          getLayerOfNode(findNodeName(op.getLoc()).value_or(""));
      if (!layers.count(name))
        order.push_back(name);
      LayerTotals &layer = layers[name];
      layer.bytes += *bytes;
      ++layer.values;
      savedBytes += *bytes;
      ++savedValues;
    }
  }

  // A backward op is a recomputation when it reads forward values (or
  // recomputations) and constants only, at least one of them not constant.
  auto isForwardValue = [&](Value value) {
    if (auto arg = llvm::dyn_cast<BlockArgument>(value))
      return arg.getArgNumber() < forwardArgs;
    return forward.contains(value.getDefiningOp());
  };
  llvm::DenseSet<Operation *> recomputed;
  llvm::MapVector<StringRef, int64_t> recomputedOps;
  int64_t recomputedBytes = 0;
  for (Operation &op : block.without_terminator()) {
    if (!isBackward(&op) || op.hasTrait<OpTrait::ConstantLike>())
      continue;
    bool readsForward = false, onlyForward = true;
    for (Value operand : op.getOperands()) {
      Operation *def = operand.getDefiningOp();
      if (def && def->hasTrait<OpTrait::ConstantLike>())
        continue;
      if (isForwardValue(operand) || recomputed.contains(def))
        readsForward = true;
      else
        onlyForward = false;
    }
    if (!readsForward || !onlyForward)
      continue;
    recomputed.insert(&op);
    ++recomputedOps[op.getName().getStringRef()];
    for (Value result : op.getResults())
      recomputedBytes += sizes.bytes(result).value_or(0);
  }

  llvm::json::Array layerList;
  for (const std::string &name : order)
    layerList.push_back(
        llvm::json::Object{{"layer", name},
                           {"saved_bytes", layers[name].bytes},
                           {"saved_values", layers[name].values}});
  llvm::json::Array recomputedList;
  int64_t recomputedCount = 0;
  for (auto &[name, count] : recomputedOps) {
    recomputedList.push_back(
        llvm::json::Object{{"op", name.str()}, {"count", count}});
    recomputedCount += count;
  }
  return llvm::json::Object{{"saved_bytes", savedBytes},
                            {"saved_values", savedValues},
                            {"unbounded_values", unbounded},
                            {"layers", std::move(layerList)},
                            {"recomputed_ops", recomputedCount},
                            {"recomputed_bytes", recomputedBytes},
                            {"recomputed", std::move(recomputedList)}};
}

static std::string formatBytes(int64_t bytes) {
  std::string text;
  llvm::raw_string_ostream os(text);
  if (bytes >= (int64_t(1) << 20))
    os << llvm::format("%.1f MiB", double(bytes) / double(1 << 20));
  else if (bytes >= 1024)
    os << llvm::format("%.1f KiB", double(bytes) / 1024.0);
  else
    os << bytes << " bytes";
  return text;
}

/// "1 value", "3 values".
static std::string countOf(int64_t count, StringRef noun) {
  return std::to_string(count) + " " + noun.str() + (count == 1 ? "" : "s");
}

void mlir::lmopt::printSavedActivations(llvm::raw_ostream &os,
                                        const llvm::json::Object &memory) {
  int64_t saved = memory.getInteger("saved_bytes").value_or(0);
  os << "backward saves " << formatBytes(saved) << " of activations ("
     << countOf(memory.getInteger("saved_values").value_or(0), "value")
     << " at the largest shapes";
  if (int64_t unbounded = memory.getInteger("unbounded_values").value_or(0))
    os << "; " << unbounded << " more without a bound";
  os << ") and recomputes "
     << memory.getInteger("recomputed_ops").value_or(0) << " ops ("
     << formatBytes(memory.getInteger("recomputed_bytes").value_or(0));
  if (const llvm::json::Array *ops = memory.getArray("recomputed")) {
    SmallVector<std::string> parts;
    for (const llvm::json::Value &entry : *ops)
      if (const llvm::json::Object *op = entry.getAsObject())
        parts.push_back(
            std::to_string(op->getInteger("count").value_or(0)) + " " +
            op->getString("op").value_or("").str());
    if (!parts.empty())
      os << ": " << llvm::join(parts, ", ");
  }
  os << ")\n";
  if (const llvm::json::Array *layers = memory.getArray("layers"))
    for (const llvm::json::Value &entry : *layers)
      if (const llvm::json::Object *layer = entry.getAsObject())
        os << "  saved by " << layer->getString("layer").value_or("") << ": "
           << formatBytes(layer->getInteger("saved_bytes").value_or(0)) << " ("
           << countOf(layer->getInteger("saved_values").value_or(0), "value")
           << ")\n";
}

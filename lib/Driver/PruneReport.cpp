//===- PruneReport.cpp - What --prune removed, layer by layer -------------===//

#include "PruneReport.h"

#include "lmopt/Dialect/Lmopt/IR/LmoptOps.h"
#include "lmopt/Dialect/Lmopt/Transforms/PruneImportance.h"
#include "lmopt/Dialect/Lmopt/Transforms/Quantize.h"
#include "lmopt/Support/ResourceBlob.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/Support/FormatVariadic.h"

#include <cstring>

using namespace mlir;
using namespace mlir::lmopt;

static int64_t elementCount(Value value) {
  auto type = value ? llvm::dyn_cast<ShapedType>(value.getType()) : nullptr;
  return type && type.hasStaticShape() ? type.getNumElements() : 0;
}

static int64_t lastDim(Value value) {
  auto type = llvm::cast<ShapedType>(value.getType());
  int64_t dim = type.getRank() ? type.getDimSize(type.getRank() - 1) : 1;
  return ShapedType::isDynamic(dim) ? 0 : dim;
}

/// True when `linear`'s output reaches an attention's query, key or value,
/// directly or through a split.
static bool feedsAttention(LinearOp linear) {
  for (Operation *user : linear.getOutput().getUsers()) {
    if (llvm::isa<AttentionOp>(user))
      return true;
    if (llvm::isa<SplitOp>(user))
      for (Value part : user->getResults())
        for (Operation *reader : part.getUsers())
          if (llvm::isa<AttentionOp>(reader))
            return true;
  }
  return false;
}

/// True when `linear` is one of an FFN's two linears (the inner one's only
/// reader is the outer one).
static bool inFfn(LinearOp linear) {
  if (auto up = linear.getInput().getDefiningOp<LinearOp>())
    if (up.getOutput().hasOneUse())
      return true;
  return linear.getOutput().hasOneUse() &&
         llvm::isa<LinearOp>(*linear.getOutput().user_begin());
}

/// The zero values of an f32 constant.
static int64_t countZeros(ConstantOp constant) {
  std::vector<uint8_t> storage;
  FailureOr<ArrayRef<uint8_t>> bytes =
      getConstantBytes(constant.getValue(), constant.getLoc(), storage);
  int64_t zeros = 0;
  if (succeeded(bytes))
    for (size_t i = 0; i + sizeof(float) <= bytes->size(); i += sizeof(float)) {
      float v;
      std::memcpy(&v, bytes->data() + i, sizeof(float));
      zeros += v == 0.0f;
    }
  return zeros;
}

PruneSnapshot PruneSnapshot::measure(ModuleOp module) {
  PruneSnapshot snapshot;
  auto main = module.lookupSymbol<func::FuncOp>("main");
  if (!main)
    return snapshot;
  auto layer = [&](int64_t index) -> PruneLayerSize * {
    if (index < 0)
      return nullptr;
    if (int64_t(snapshot.layers.size()) <= index)
      snapshot.layers.resize(index + 1);
    return &snapshot.layers[index];
  };
  int64_t current = -1;
  main.walk([&](Operation *op) {
    if (auto constant = llvm::dyn_cast<ConstantOp>(op)) {
      auto type = llvm::cast<ShapedType>(constant.getType());
      if (type.hasStaticShape() && llvm::isa<FloatType>(type.getElementType())) {
        snapshot.params += type.getNumElements();
        snapshot.bytes += type.getNumElements() *
                          type.getElementTypeBitWidth() / 8;
        if (constant->hasAttr(kSparsityAttr)) {
          snapshot.sparseWeights += type.getNumElements();
          snapshot.sparseZeros += countZeros(constant);
        }
      }
    } else if (auto attention = llvm::dyn_cast<AttentionOp>(op)) {
      PruneLayerSize *size = layer(++current);
      size->name = getLayerName(attention);
      if (auto score =
              attention->getAttrOfType<FloatAttr>(kBlockImportanceAttr))
        size->importance = score.getValueAsDouble();
      int64_t hidden = lastDim(attention.getOutput());
      size->heads = attention.getNumHeads();
      size->headDim = size->heads ? hidden / size->heads : 0;
      auto key = llvm::cast<ShapedType>(attention.getKey().getType());
      int64_t keyLength =
          key.getRank() >= 2 ? key.getDimSize(key.getRank() - 2) : 0;
      int64_t flops = ShapedType::isDynamic(keyLength)
                          ? 0
                          : 4 * keyLength * hidden;
      size->flops += flops;
      snapshot.flops += flops;
    } else if (auto linear = llvm::dyn_cast<LinearOp>(op)) {
      int64_t params = elementCount(linear.getWeight()) +
                       elementCount(linear.getBias());
      int64_t flops = 2 * lastDim(linear.getInput()) *
                      lastDim(linear.getOutput());
      snapshot.flops += flops;
      PruneLayerSize *size = nullptr;
      if (feedsAttention(linear))
        size = layer(current + 1);
      else if (linear.getInput().getDefiningOp<AttentionOp>() || inFfn(linear))
        size = layer(current);
      if (!size)
        return;
      size->params += params;
      size->flops += flops;
      if (auto up = linear.getInput().getDefiningOp<LinearOp>())
        if (up.getOutput().hasOneUse())
          size->neurons = lastDim(linear.getInput());
    }
  });
  return snapshot;
}

const PruneLayerSize *PruneSnapshot::find(llvm::StringRef name) const {
  for (const PruneLayerSize &layer : layers)
    if (layer.name == name)
      return &layer;
  return nullptr;
}

static std::string ratio(int64_t after, int64_t before) {
  return before ? llvm::formatv("{0:f2}x", double(after) / double(before)).str()
                : "-";
}

void mlir::lmopt::printPruneReport(llvm::raw_ostream &log,
                                   const PruneSnapshot &before,
                                   const PruneSnapshot &after) {
  for (auto [i, was] : llvm::enumerate(before.layers)) {
    const PruneLayerSize *now = after.find(was.name);
    log << "prune: layer " << i << ": ";
    if (was.importance)
      log << llvm::formatv("importance {0:f6}, ", *was.importance);
    if (!now) {
      log << llvm::formatv("dropped, params {0}, flops/token {1}\n", was.params,
                           was.flops);
      continue;
    }
    log << llvm::formatv("heads {0} -> {1}, ffn {2} -> {3}, "
                         "params {4} -> {5}, flops/token {6} -> {7}\n",
                         was.heads, now->heads, was.neurons, now->neurons,
                         was.params, now->params, was.flops, now->flops);
  }
  log << llvm::formatv("prune: total: params {0} -> {1} ({2}), flops/token "
                       "{3} -> {4} ({5}), weights {6} -> {7} bytes\n",
                       before.params, after.params,
                       ratio(after.params, before.params), before.flops,
                       after.flops, ratio(after.flops, before.flops),
                       before.bytes, after.bytes);
  if (after.sparseWeights)
    log << llvm::formatv("prune: sparsity: {0} of the sparsified linears' {1} "
                         "weights are zero ({2})\n",
                         after.sparseZeros, after.sparseWeights,
                         ratio(after.sparseZeros, after.sparseWeights));
}

llvm::json::Object
mlir::lmopt::pruneReportJSON(const PruneSnapshot &before,
                             const PruneSnapshot &after,
                             std::optional<uint64_t> bundleBytes) {
  llvm::json::Array layers;
  for (auto [i, was] : llvm::enumerate(before.layers)) {
    const PruneLayerSize *found = after.find(was.name);
    PruneLayerSize now = found ? *found : PruneLayerSize();
    llvm::json::Object layer{
        {"name", was.name},
        {"dropped", found == nullptr},
        {"heads", llvm::json::Array{was.heads, now.heads}},
        {"ffn", llvm::json::Array{was.neurons, now.neurons}},
        {"params", llvm::json::Array{was.params, now.params}},
        {"flops_per_token", llvm::json::Array{was.flops, now.flops}}};
    if (was.importance)
      layer["importance"] = *was.importance;
    layers.push_back(std::move(layer));
  }
  llvm::json::Object json{
      {"layers", std::move(layers)},
      {"params", llvm::json::Array{before.params, after.params}},
      {"flops_per_token", llvm::json::Array{before.flops, after.flops}},
      {"weights_bytes", llvm::json::Array{before.bytes, after.bytes}}};
  if (bundleBytes)
    json["bundle_bytes"] = int64_t(*bundleBytes);
  if (after.sparseWeights)
    json["sparse_zero_weights"] =
        llvm::json::Array{after.sparseZeros, after.sparseWeights};
  return json;
}

//===- FusionReport.cpp - what the graph passes did and why not -----------===//

#include "lmopt/Support/FusionReport.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"

using namespace mlir;
using namespace mlir::lmopt;

void FusionReport::recordFused(StringRef kind, Location loc) {
  std::string node = describeNode(loc);
  std::lock_guard<std::mutex> lock(mutex);
  KindRecord &record = kinds[kind.str()];
  ++record.fused;
  record.nearMisses.erase(node);
}

void FusionReport::recordNearMiss(StringRef kind, Location loc,
                                  const Twine &reason) {
  std::string node = describeNode(loc);
  std::lock_guard<std::mutex> lock(mutex);
  kinds[kind.str()].nearMisses[node] = reason.str();
}

void FusionReport::registerKind(StringRef kind) {
  std::lock_guard<std::mutex> lock(mutex);
  kinds[kind.str()];
}

int64_t FusionReport::getNumFused(StringRef kind) const {
  std::lock_guard<std::mutex> lock(mutex);
  auto it = kinds.find(kind.str());
  return it == kinds.end() ? 0 : it->second.fused;
}

int64_t FusionReport::getNumNearMisses(StringRef kind) const {
  std::lock_guard<std::mutex> lock(mutex);
  auto it = kinds.find(kind.str());
  return it == kinds.end() ? 0 : it->second.nearMisses.size();
}

void FusionReport::writeJSON(raw_ostream &os) const {
  std::lock_guard<std::mutex> lock(mutex);
  llvm::json::Object fusions;
  for (const auto &[kind, record] : kinds) {
    llvm::json::Array misses;
    for (const auto &[node, reason] : record.nearMisses)
      misses.push_back(llvm::json::Object{{"node", node}, {"reason", reason}});
    fusions[kind] = llvm::json::Object{{"fused", record.fused},
                                       {"near_misses", std::move(misses)}};
  }
  os << llvm::formatv("{0:2}",
                      llvm::json::Value(llvm::json::Object{
                          {"fusions", std::move(fusions)}}))
     << "\n";
}

void FusionReport::writeTable(raw_ostream &os) const {
  std::lock_guard<std::mutex> lock(mutex);
  os << llvm::formatv("{0,-20} {1,8} {2,12}\n", "fusion", "fused",
                      "near misses");
  for (const auto &[kind, record] : kinds)
    os << llvm::formatv("{0,-20} {1,8} {2,12}\n", kind, record.fused,
                        record.nearMisses.size());
  for (const auto &[kind, record] : kinds)
    for (const auto &[node, reason] : record.nearMisses)
      os << llvm::formatv("near miss: {0} at '{1}': {2}\n", kind, node,
                          reason);
}

void FusionReport::clear() {
  std::lock_guard<std::mutex> lock(mutex);
  kinds.clear();
}

std::optional<std::string> lmopt::findNodeName(Location loc) {
  SmallVector<Location> worklist{loc};
  while (!worklist.empty()) {
    Location current = worklist.pop_back_val();
    if (auto named = llvm::dyn_cast<NameLoc>(current))
      return named.getName().str();
    if (auto fused = llvm::dyn_cast<FusedLoc>(current))
      for (Location inner : llvm::reverse(fused.getLocations()))
        worklist.push_back(inner);
    if (auto callSite = llvm::dyn_cast<CallSiteLoc>(current))
      worklist.push_back(callSite.getCallee());
  }
  return std::nullopt;
}

std::string lmopt::describeNode(Location loc) {
  std::string name;
  loc->walk([&](Location inner) {
    if (auto named = llvm::dyn_cast<NameLoc>(inner)) {
      name = named.getName().str();
      return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  if (!name.empty())
    return name;
  std::string text;
  loc->walk([&](Location inner) {
    if (auto file = llvm::dyn_cast<FileLineColLoc>(inner)) {
      text = llvm::formatv("{0}:{1}:{2}", file.getFilename().getValue(),
                           file.getLine(), file.getColumn())
                 .str();
      return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  return text.empty() ? "<unknown>" : text;
}

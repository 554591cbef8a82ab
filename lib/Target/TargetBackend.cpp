//===- TargetBackend.cpp - The registry of compilation targets ------------===//
//
// Targets register once at start-up (registerAllTargetBackends in
// lmopt/Target/InitAllTargets.h) and are only looked up afterwards.
//
//===----------------------------------------------------------------------===//

#include "lmopt/Target/TargetBackend.h"
#include "lmopt/Target/Common/AttentionPlan.h"

#include "llvm/ADT/StringMap.h"

#include <algorithm>
#include <cassert>

using namespace mlir;
using namespace mlir::lmopt;

TargetBackend::~TargetBackend() = default;

Value TargetBackend::getViewSource(Value value) const {
  std::optional<AttentionView> view = getAttentionView(value);
  return view ? view->source : nullptr;
}

void TargetBackend::rewritePlan(TargetPlan &, const TargetOptions &) const {}

static llvm::StringMap<std::unique_ptr<TargetBackend>> &getRegistry() {
  static llvm::StringMap<std::unique_ptr<TargetBackend>> registry;
  return registry;
}

void mlir::lmopt::registerTargetBackend(
    std::unique_ptr<TargetBackend> backend) {
  StringRef name = backend->getName();
  [[maybe_unused]] bool inserted =
      getRegistry().try_emplace(name, std::move(backend)).second;
  assert(inserted && "target registered twice");
}

const TargetBackend *mlir::lmopt::lookupTargetBackend(StringRef name) {
  auto found = getRegistry().find(name);
  return found == getRegistry().end() ? nullptr : found->second.get();
}

std::vector<std::string> mlir::lmopt::getRegisteredTargetBackends() {
  std::vector<std::string> names;
  for (const auto &entry : getRegistry())
    names.push_back(entry.getKey().str());
  std::sort(names.begin(), names.end());
  return names;
}

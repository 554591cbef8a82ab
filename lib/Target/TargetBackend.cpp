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

llvm::Error TargetBackend::checkPrecision(const TargetOptions &options) const {
  if (options.precision == Precision::FP32)
    return llvm::Error::success();
  return llvm::createStringError(
      "--precision=" + stringifyPrecision(options.precision) +
      " is not supported by --target=" + getName() + "; it runs fp32 only");
}

StringRef mlir::lmopt::stringifyPrecision(Precision precision) {
  switch (precision) {
  case Precision::FP32:
    return "fp32";
  case Precision::FP16:
    return "fp16";
  case Precision::BF16:
    return "bf16";
  }
  llvm_unreachable("unknown precision");
}

std::optional<Precision> mlir::lmopt::parsePrecision(StringRef name) {
  for (Precision precision :
       {Precision::FP32, Precision::FP16, Precision::BF16})
    if (name == stringifyPrecision(precision))
      return precision;
  return std::nullopt;
}

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

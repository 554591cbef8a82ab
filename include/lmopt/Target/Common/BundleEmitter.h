//===- BundleEmitter.h - Write a CPU plan as a .lmopt bundle ----*- C++ -*-===//
//
// The last step of `lmopt-compile --target=cpu`: the `meta`, `plan`,
// `weights` and `kernels` sections (docs/bundle-format.md), written
// atomically, and a readable listing of the plan for humans and lit tests.
//
//===----------------------------------------------------------------------===//

#ifndef LMOPT_TARGET_CPU_BUNDLEEMITTER_H
#define LMOPT_TARGET_CPU_BUNDLEEMITTER_H

#include "lmopt/Target/CPU/PlanBuilder.h"

#include "mlir/Support/LLVM.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdint>
#include <string>
#include <vector>

namespace mlir::lmopt::cpu {

/// The compiler's version, recorded in every bundle's `meta`.
inline constexpr const char *kLmoptVersion = "0.1.0";

struct BundleMeta {
  std::string modelName;
  std::string target = "cpu";
  /// {kind: {"fused": n, "near_misses": m}} from the fusion report.
  llvm::json::Object fusions;
};

/// The `meta` section's JSON: model, compiler version, target, inputs and
/// outputs (name, dtype, dims), fusion counts.
std::string buildMetaJSON(const ::lmopt::runtime::Plan &plan,
                          const BundleMeta &meta);

/// Writes `path` with the plan, weights, `kernels` (omitted when empty),
/// `requires` (one `cpu-feature <name>` line per entry of `cpuFeatures`,
/// omitted when empty) and meta sections; never leaves a partial file.
/// Returns the file's size.
llvm::Expected<uint64_t>
writeCpuBundle(llvm::StringRef path, const CpuPlan &plan,
               llvm::ArrayRef<uint8_t> kernels, const std::string &metaJSON,
               llvm::ArrayRef<std::string> cpuFeatures = {});

/// One line per tensor, value and step, for `lmopt-compile --dump-plan`.
void printPlan(llvm::raw_ostream &os, const CpuPlan &plan);

} // namespace mlir::lmopt::cpu

#endif // LMOPT_TARGET_CPU_BUNDLEEMITTER_H

//===- BundleEmitter.h - Write a target's plan as a bundle ------*- C++ -*-===//
//
// The last step of `lmopt-compile`, whatever the target: the `meta`, `plan`,
// `weights`, `kernels` and `requires` sections (docs/bundle-format.md),
// written atomically, and a readable listing of the plan for humans and lit
// tests.
//
//===----------------------------------------------------------------------===//

#ifndef LMOPT_TARGET_COMMON_BUNDLEEMITTER_H
#define LMOPT_TARGET_COMMON_BUNDLEEMITTER_H

#include "lmopt/Format/OmittedWeights.h"
#include "lmopt/Format/SparseWeights.h"
#include "lmopt/Target/Common/PlanBuilder.h"

#include "mlir/Support/LLVM.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdint>
#include <string>
#include <vector>

namespace mlir::lmopt {

/// The compiler's version, recorded in every bundle's `meta`.
inline constexpr const char *kLmoptVersion = "0.1.0";

struct BundleMeta {
  std::string modelName;
  /// The target's name (TargetBackend::getName).
  std::string target;
  /// {kind: {"fused": n, "near_misses": m}} from the fusion report.
  llvm::json::Object fusions;
  /// What the matrix products and attention compute in ("fp32", "fp16",
  /// "bf16": lmopt-compile --precision).
  std::string precision = "fp32";
  /// Written as "weights_omitted": true (lmopt-compile --omit-weights).
  bool weightsOmitted = false;
  /// A training bundle's loss, parameters and hyper-parameters, written as
  /// "training" when not empty.
  llvm::json::Object training;
};

/// The `meta` section's JSON: model, compiler version, target, the first
/// entry's inputs and outputs (name, dtype, dims), fusion counts,
/// "weights_omitted" when set; with
/// several entries or states, each entry's name, inputs and outputs, and
/// each state's name, dtype and capacity.
std::string buildMetaJSON(const BundlePlan &plan, const BundleMeta &meta);

/// Writes `path` with the plan (the program of `plan` on `device`),
/// weights, `kernels` (the target's kernel payload, omitted when empty),
/// `requires` (one line per entry of `requirements`, omitted when empty)
/// and meta sections; never leaves a partial file. With `omitted`, the
/// weights section holds only the bytes outside its ranges and an
/// `omitted-weights` section lists them. With `sparse` (not together with
/// `omitted`), its ranges are stored compressed in the weights section and
/// a `sparse-weights` section lists them. Returns the file's size.
llvm::Expected<uint64_t>
writeBundle(llvm::StringRef path, const BundlePlan &plan,
            llvm::StringRef device, llvm::ArrayRef<uint8_t> kernels,
            const std::string &metaJSON,
            llvm::ArrayRef<std::string> requirements = {},
            const ::lmopt::runtime::OmittedWeights *omitted = nullptr,
            const ::lmopt::runtime::SparseWeights *sparse = nullptr);

/// One line per tensor, value and step, for `lmopt-compile --dump-plan`;
/// `weightsBytes` is the bundle's weights section.
void printPlan(llvm::raw_ostream &os, const TargetPlan &plan,
               uint64_t weightsBytes);

} // namespace mlir::lmopt

#endif // LMOPT_TARGET_COMMON_BUNDLEEMITTER_H

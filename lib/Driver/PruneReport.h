//===- PruneReport.h - What --prune removed, layer by layer -----*- C++ -*-===//
//
// lmopt-compile's pruning report (docs/compression.md, "Report"): the
// module is measured before lmopt-prune and before planning, and the two
// are printed side by side. Private to the driver.
//
//===----------------------------------------------------------------------===//

#ifndef LMOPT_LIB_DRIVER_PRUNEREPORT_H
#define LMOPT_LIB_DRIVER_PRUNEREPORT_H

#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace mlir::lmopt {

/// One encoder layer: the attention (numbered in program order), its QKV
/// and output projections and the two-linear FFN after it.
struct PruneLayerSize {
  /// The attention's layer name, matching the layers before and after.
  std::string name;
  int64_t heads = 0, headDim = 0, neurons = 0;
  /// The layer's linears' weights and biases.
  int64_t params = 0;
  /// Per token: 2 per weight of its linears, and the attention's products
  /// (4 x key length x heads x head dim) when the key length is static.
  int64_t flops = 0;
  /// The block importance a calibration run measured for `layers=N`.
  std::optional<double> importance;
};

struct PruneSnapshot {
  std::vector<PruneLayerSize> layers;
  /// Every floating-point constant of @main (embeddings included), their
  /// bytes, and the FLOPs per token of every linear and attention.
  int64_t params = 0, bytes = 0, flops = 0;
  /// The weights `sparsity=N:M` made sparse (constants with
  /// lmopt.sparsity) and how many of them are zero.
  int64_t sparseWeights = 0, sparseZeros = 0;

  static PruneSnapshot measure(ModuleOp module);
  /// The layer named `name`, or null (dropped by keep-layers).
  const PruneLayerSize *find(llvm::StringRef name) const;
};

/// "prune: layer 0: heads 2 -> 1, ..." lines and the totals.
void printPruneReport(llvm::raw_ostream &log, const PruneSnapshot &before,
                      const PruneSnapshot &after);

/// The same as JSON, with the written bundle's size when known.
llvm::json::Object pruneReportJSON(const PruneSnapshot &before,
                                   const PruneSnapshot &after,
                                   std::optional<uint64_t> bundleBytes);

} // namespace mlir::lmopt

#endif // LMOPT_LIB_DRIVER_PRUNEREPORT_H

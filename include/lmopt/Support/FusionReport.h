//===- FusionReport.h - what the graph passes did and why not ---*- C++ -*-===//
//
// Graph passes record each fusion they apply and, for each candidate they
// could not fuse (a near miss), the node and the reason. The report is owned
// by the lmopt dialect, so there is one per MLIRContext, and is safe to fill
// from passes running on several functions in parallel.
//
//===----------------------------------------------------------------------===//

#ifndef LMOPT_SUPPORT_FUSIONREPORT_H
#define LMOPT_SUPPORT_FUSIONREPORT_H

#include "mlir/IR/Location.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/ADT/Twine.h"
#include "llvm/Support/raw_ostream.h"

#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <utility>

namespace mlir::lmopt {

class FusionReport {
public:
  /// A fusion of `kind` (e.g. "attention") applied at `loc`. Clears an
  /// earlier near miss of the same kind at the same node.
  void recordFused(llvm::StringRef kind, Location loc);

  /// A candidate of `kind` at `loc` that matched partially and was rejected
  /// for `reason`. A later record for the same kind and node replaces it.
  void recordNearMiss(llvm::StringRef kind, Location loc,
                      const llvm::Twine &reason);

  /// Makes `kind` appear in the report even when nothing fired.
  void registerKind(llvm::StringRef kind);

  int64_t getNumFused(llvm::StringRef kind) const;
  int64_t getNumNearMisses(llvm::StringRef kind) const;

  /// {"fusions": {kind: {"fused": n, "near_misses": [{"node", "reason"}]}}}
  void writeJSON(llvm::raw_ostream &os) const;
  /// A table of counts, then one line per near miss.
  void writeTable(llvm::raw_ostream &os) const;

  void clear();

private:
  struct KindRecord {
    int64_t fused = 0;
    std::map<std::string, std::string> nearMisses; // node -> reason
  };
  mutable std::mutex mutex;
  std::map<std::string, KindRecord> kinds;
};

/// The node a location names: the innermost NameLoc (the ONNX node name after
/// import), else file:line:col, else "<unknown>".
std::string describeNode(Location loc);

/// The ONNX node name `loc` carries (the importer's NameLoc; in a fused
/// location, the first one's), if any: what kernel diagnostics name.
std::optional<std::string> findNodeName(Location loc);

} // namespace mlir::lmopt

#endif // LMOPT_SUPPORT_FUSIONREPORT_H

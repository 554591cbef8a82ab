//===- TrainingReport.h - what the backward pass saves ----------*- C++ -*-===//
//
// After differentiation, train_step's backward reads some forward values
// (they stay alive until their last backward reader: saved) and computes
// others again from them (the backward ops that do not depend on the loss's
// gradient: recomputed, such as a norm's mean and reciprocal deviation or
// attention's probabilities). The report sizes both at the entry's largest
// shapes, per layer, for the bundle's meta and `lmopt-compile --train`.
//
//===----------------------------------------------------------------------===//

#ifndef LMOPT_TARGET_COMMON_TRAININGREPORT_H
#define LMOPT_TARGET_COMMON_TRAININGREPORT_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

#include <map>
#include <string>
#include <vector>

namespace mlir::lmopt {

/// The layer a node belongs to: its name's path up to the first component
/// that ends in a number ("/bert/encoder/layer.0"), else its first two
/// components ("/bert/embeddings"); "(unnamed)" without a name.
std::string getLayerOfNode(llvm::StringRef nodeName);

/// Sizes what the backward ops of `train` (those not in `forward`; its
/// first `forwardArgs` arguments are the forward's) save and recompute,
/// with dynamic dims at their bounds under `maxShapes` (by input name, as
/// --max-shape gives them). A value whose size has no bound counts in
/// `unbounded_values`. Keys: `saved_bytes`, `saved_values`,
/// `unbounded_values`, `layers` ([{layer, saved_bytes, saved_values}] in
/// block order), `recomputed_ops`, `recomputed_bytes`, `recomputed`
/// ([{op, count}] by op name).
llvm::json::Object
reportSavedActivations(func::FuncOp train,
                       const llvm::DenseSet<Operation *> &forward,
                       unsigned forwardArgs,
                       const std::map<std::string, std::vector<int64_t>>
                           &maxShapes);

/// Prints `memory` (reportSavedActivations' object) for lmopt-compile: one
/// line of totals, then one per layer.
void printSavedActivations(llvm::raw_ostream &os,
                           const llvm::json::Object &memory);

} // namespace mlir::lmopt

#endif // LMOPT_TARGET_COMMON_TRAININGREPORT_H

//===- Passes.td - lmopt graph passes ----------------------*- tablegen -*-===//

#ifndef LMOPT_DIALECT_LMOPT_TRANSFORMS_PASSES_TD
#define LMOPT_DIALECT_LMOPT_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def EliminateDropoutPass : Pass<"lmopt-eliminate-dropout"> {
  let summary = "Remove dropout that is inert at inference";
  let description = [{
    Replaces every `lmopt.dropout` that is not in training mode (or whose
    ratio is 0) by its input. A used `mask` result becomes an all-true tensor:
    a constant when its shape is static, `constant_of_shape(shape(input))`
    otherwise, so the pass succeeds on dynamic batch and sequence dims.
    Training dropouts with a nonzero ratio are left alone; use
    `lmopt-disable-dropout` to turn those off first.

    Precondition: none. Runs on any op, so it applies to every function of a
    module.
  }];
  let dependentDialects = ["::mlir::lmopt::LmoptDialect"];
  let statistics = [
    Statistic<"numRemoved", "removed", "Number of dropouts removed">,
    Statistic<"numKept", "kept", "Number of training dropouts kept">
  ];
}

def EmitReportPass : Pass<"lmopt-emit-report", "::mlir::ModuleOp"> {
  let summary = "Write the fusion report collected by the graph passes";
  let description = [{
    Writes what the fusion passes that ran before it applied, per fusion kind,
    and each near miss (a subgraph that matched partially) with its node name
    and the reason it was rejected. `output=-` prints a table to standard
    output; a path ending in `.json` gets JSON, any other path the table.
    `lmopt-opt --lmopt-report=<file|->` appends this pass to the pipeline.
  }];
  let options = [
    Option<"output", "output", "std::string", /*default=*/"\"-\"",
           "Where to write the report: '-' or a file path">
  ];
}

#endif // LMOPT_DIALECT_LMOPT_TRANSFORMS_PASSES_TD

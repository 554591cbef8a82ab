//===- Passes.td - autodiff pass ---------------------------*- tablegen -*-===//

#ifndef LMOPT_DIALECT_LMOPT_AUTODIFF_PASSES_TD
#define LMOPT_DIALECT_LMOPT_AUTODIFF_PASSES_TD

include "mlir/Pass/PassBase.td"

def AutodiffPass : Pass<"lmopt-autodiff", "::mlir::func::FuncOp"> {
  let summary = "appends the gradients of a function's loss to its results";
  let description = [{
    For a function with arguments marked `lmopt.trainable = "<name>"`,
    differentiates its first result, a rank-0 float tensor (the loss), with
    respect to each of them by reverse mode, using each op's
    GradientOpInterface rule, and returns the gradients after the existing
    results, each marked `lmopt.gradient = "<name>"`. Functions without such
    arguments are left alone. An op on the way from an argument to the loss
    without a rule, or whose rule refuses its attributes, is an error at the
    op.
  }];
  let dependentDialects = ["::mlir::lmopt::LmoptDialect"];
}

def TestGradientCheckPass
    : Pass<"lmopt-test-gradient-check", "::mlir::func::FuncOp"> {
  let summary = "compares lmopt-autodiff's gradients with finite differences";
  let description = [{
    For a function with trainable arguments (as `lmopt-autodiff` takes),
    fills every argument with seeded values (floats uniform in
    [-1, 1] scaled by `scale`; integer arguments from `lmopt.test_values`,
    an array attribute per argument, or zeros), evaluates the gradients
    with the reference evaluator and compares each element with a central
    difference of the loss (step `step`, in the evaluator's double
    precision), printing one line per function with the largest error
    relative to max(1, |gradient|), and `PASS` when it is at most
    `tolerance`, `FAIL` otherwise. The function is left unchanged.
  }];
  let options = [
    Option<"seed", "seed", "unsigned", "1", "random seed for the argument values">,
    Option<"scale", "scale", "double", "1.0", "range of the float values">,
    Option<"step", "step", "double", "1e-4", "finite difference step">,
    Option<"tolerance", "tolerance", "double", "1e-4",
           "largest accepted error">,
  ];
  let dependentDialects = ["::mlir::lmopt::LmoptDialect"];
}

#endif // LMOPT_DIALECT_LMOPT_AUTODIFF_PASSES_TD

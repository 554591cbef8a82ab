//===- Distillation.h - a teacher's forward inside a training step -*- C++
//-*-===//
//
// `lmopt-compile student.onnx --train --distill-from teacher.onnx` compiles
// the teacher's forward pass into the student's training and eval entries,
// fed by the same inputs (matched by name), and trains the student on
//
//   alpha * CE(student logits, labels)
//   + beta * T^2 * KL(softmax(teacher / T) || softmax(student / T))
//   + gamma * MSE(student output, teacher output)
//
// When the MSE pair differs only in its last dim (a narrower student), the
// student's output is first multiplied by a learned projection P
// ([student width, teacher width], TinyBERT's W_h), initialized to the
// truncated identity (P[i][j] = 1 when i == j): a trainable parameter named
// `distill.projection` that --export-onnx leaves out.
//
// (KL with PyTorch's reduction='batchmean': summed over all elements,
// divided by the logits' first dim). The teacher's weights stay constants:
// they are marked frozen when inlined, so that the parameter collection
// skips them (no state, no gradient, no optimizer step).
//
//===----------------------------------------------------------------------===//

#ifndef LMOPT_TARGET_COMMON_DISTILLATION_H
#define LMOPT_TARGET_COMMON_DISTILLATION_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"

#include <string>

namespace mlir::lmopt {

/// The name of the function that holds the imported teacher until the
/// training entries inline it.
inline constexpr const char *kTeacherFuncName = "lmopt_teacher";
/// Marks an inlined teacher constant: not a parameter.
inline constexpr const char *kFrozenAttrName = "lmopt.frozen";
/// The learned projection from the student's width to the teacher's in the
/// MSE term: a trainable parameter of the training bundle that the trained
/// student does not export.
inline constexpr const char *kDistillProjectionName = "distill.projection";

struct DistillOptions {
  /// The teacher model (for the meta).
  std::string teacherPath;
  double alpha = 1.0, beta = 1.0, gamma = 0.0;
  double temperature = 1.0;
  /// The output pair the MSE term reads (student's, teacher's); empty
  /// without an MSE term.
  std::string studentOutput, teacherOutput;
};

/// The teacher's outputs once inlined into the student's @main: appended
/// to @main's results after the student's own.
struct InlinedTeacher {
  unsigned studentOutputs = 0;
  /// Result indices in @main of the student's and the teacher's logits
  /// (the KL pair) and of the MSE pair (-1 without an MSE term).
  int studentLogits = -1, teacherLogits = -1;
  int studentHidden = -1, teacherHidden = -1;
  /// The MSE pair's last dims differ: the student's output goes through a
  /// learned [student width, teacher width] projection first.
  bool project = false;
};

/// Inlines `module`'s teacher function into @main after checking that
/// every teacher input is a student input of the same type, that the
/// embedding tables both index by an input have as many rows, and that
/// the output pairs have equal shapes; `logitsIndex` is the student output
/// the loss reads. Erases the teacher function.
FailureOr<InlinedTeacher> inlineTeacher(ModuleOp module, func::FuncOp main,
                                        unsigned logitsIndex,
                                        const DistillOptions &options);

/// The distillation terms (beta's KL and gamma's MSE) of the results of
/// `ret` added to `ceLoss` (alpha times it; null when alpha is 0), built
/// before `func`'s terminator.
Value appendDistillationLoss(func::FuncOp func, Operation *ret, Value ceLoss,
                             const InlinedTeacher &teacher,
                             const DistillOptions &options);

} // namespace mlir::lmopt

#endif // LMOPT_TARGET_COMMON_DISTILLATION_H

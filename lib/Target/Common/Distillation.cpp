//===- Distillation.cpp - a teacher's forward inside a training step ------===//
//
// See Distillation.h. The teacher arrives as its own function, optimized by
// the same training pipeline as the student; it is checked against the
// student, cloned into @main reading @main's arguments, and its outputs are
// appended to @main's. The loss terms read them in each entry's clone.
//
//===----------------------------------------------------------------------===//

#include "lmopt/Target/Common/Distillation.h"

#include "lmopt/Dialect/Lmopt/IR/GraphNames.h"
#include "lmopt/Dialect/Lmopt/IR/LmoptOps.h"
#include "lmopt/Support/FusionReport.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/StringExtras.h"

#include <algorithm>
#include <vector>

using namespace mlir;
using namespace mlir::lmopt;

namespace {

/// A tensor type as "[8, 16] f32" for diagnostics.
std::string describe(Type type) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << type;
  return text;
}

/// The row counts and names of the constant tables gathered (along axis 0)
/// by `arg` directly.
struct Table {
  int64_t rows = -1;
  std::string name;
};

Table tableIndexedBy(Value arg) {
  for (Operation *user : arg.getUsers()) {
    auto gather = llvm::dyn_cast<GatherOp>(user);
    if (!gather || gather.getIndices() != arg || gather.getAxis() != 0)
      continue;
    auto constant = gather.getData().getDefiningOp<ConstantOp>();
    auto type = llvm::dyn_cast<RankedTensorType>(gather.getData().getType());
    if (!constant || !type || type.getRank() < 1)
      continue;
    return {type.getDimSize(0), findNodeName(constant.getLoc()).value_or("")};
  }
  return {};
}

/// The index of the output named `name`, or an error listing `func`'s
/// outputs.
FailureOr<int> outputNamed(func::FuncOp func, StringRef model, StringRef name,
                           StringRef flag) {
  SmallVector<std::string> names = getGraphOutputNames(func);
  for (auto [index, output] : llvm::enumerate(names))
    if (output == name)
      return int(index);
  return func.emitError(flag)
         << " names output '" << name << "', which the " << model
         << " does not have; its outputs: " << llvm::join(names, ", ");
}

/// Refuses a pair of outputs of different types.
LogicalResult checkPair(func::FuncOp main, func::FuncOp teacher, int student,
                        int teacherIndex, StringRef why) {
  Type s = main.getResultTypes()[student];
  Type t = teacher.getResultTypes()[teacherIndex];
  if (s == t)
    return success();
  return main.emitError("distillation: the student's output '")
         << getGraphOutputName(main, student) << "' is " << describe(s)
         << " but the teacher's '" << getGraphOutputName(teacher, teacherIndex)
         << "' is " << describe(t) << ": " << why;
}

/// Whether `student` and `teacher` are f32 tensors whose dims agree but
/// for a static last one that differs: a learned projection maps them.
bool differsInWidthOnly(Type student, Type teacher) {
  auto s = llvm::dyn_cast<RankedTensorType>(student);
  auto t = llvm::dyn_cast<RankedTensorType>(teacher);
  if (!s || !t || !s.getElementType().isF32() ||
      s.getElementType() != t.getElementType() || s.getRank() < 1 ||
      s.getRank() != t.getRank() ||
      s.getShape().drop_back() != t.getShape().drop_back())
    return false;
  int64_t ws = s.getShape().back(), wt = t.getShape().back();
  return !ShapedType::isDynamic(ws) && !ShapedType::isDynamic(wt) && ws != wt;
}

} // namespace

FailureOr<InlinedTeacher>
mlir::lmopt::inlineTeacher(ModuleOp module, func::FuncOp main,
                           unsigned logitsIndex,
                           const DistillOptions &options) {
  auto teacher = module.lookupSymbol<func::FuncOp>(kTeacherFuncName);
  if (!teacher || teacher.isExternal())
    return module.emitError("distillation: the teacher model is missing");
  SmallVector<std::string> studentInputs = getGraphInputNames(main);
  SmallVector<std::string> teacherInputs = getGraphInputNames(teacher);
  IRMapping mapping;
  for (auto [index, name] : llvm::enumerate(teacherInputs)) {
    auto *it = llvm::find(studentInputs, name);
    if (it == studentInputs.end())
      return teacher.emitError("distillation: the teacher's input '")
             << name << "' is not an input of the student (its inputs: "
             << llvm::join(studentInputs, ", ") << ")";
    BlockArgument mine = main.getArgument(it - studentInputs.begin());
    BlockArgument theirs = teacher.getArgument(index);
    if (mine.getType() != theirs.getType())
      return teacher.emitError("distillation: input '")
             << name << "' is " << describe(theirs.getType())
             << " in the teacher but " << describe(mine.getType())
             << " in the student";
    Table st = tableIndexedBy(mine), te = tableIndexedBy(theirs);
    if (st.rows >= 0 && te.rows >= 0 && st.rows != te.rows)
      return teacher.emitError("distillation: input '")
             << name << "' indexes an embedding table of " << st.rows
             << " rows in the student ('" << st.name << "') but " << te.rows
             << " in the teacher ('" << te.name
             << "'): the vocabularies differ";
    mapping.map(theirs, mine);
  }

  InlinedTeacher result;
  result.studentOutputs = main.getNumResults();
  std::string logitsName = getGraphOutputName(main, logitsIndex);
  int teacherLogits = -1, teacherHidden = -1;
  if (options.beta > 0) {
    FailureOr<int> index =
        outputNamed(teacher, "teacher", logitsName, "the loss");
    if (failed(index) ||
        failed(checkPair(main, teacher, logitsIndex, *index,
                         "the KL term needs the same classes (vocabulary)")))
      return failure();
    teacherLogits = *index;
    result.studentLogits = int(logitsIndex);
  }
  if (options.gamma > 0) {
    FailureOr<int> mine =
        outputNamed(main, "student", options.studentOutput, "--distill-output");
    if (failed(mine))
      return failure();
    FailureOr<int> theirs = outputNamed(teacher, "teacher",
                                        options.teacherOutput, "--distill-output");
    if (failed(theirs))
      return failure();
    result.project = differsInWidthOnly(main.getResultTypes()[*mine],
                                        teacher.getResultTypes()[*theirs]);
    if (!result.project &&
        failed(checkPair(main, teacher, *mine, *theirs,
                         "the MSE term needs outputs of one shape, or of "
                         "shapes that differ only in a static last dim (the "
                         "width a learned projection maps)")))
      return failure();
    teacherHidden = *theirs;
    result.studentHidden = *mine;
  }

  // Clone the teacher's body before @main's return, its constants frozen
  // and its dropouts off (a teacher runs in evaluation mode).
  Operation *ret = main.getBody().front().getTerminator();
  OpBuilder b(ret);
  for (Operation &op : teacher.getBody().front().without_terminator()) {
    Operation *clone = b.clone(op, mapping);
    if (llvm::isa<ConstantOp>(clone))
      clone->setAttr(kFrozenAttrName, b.getUnitAttr());
    clone->walk([](DropoutOp dropout) { dropout.setTraining(false); });
  }
  Operation *teacherRet = teacher.getBody().front().getTerminator();
  SmallVector<std::string> outputNames = getGraphOutputNames(main);
  SmallVector<std::string> teacherNames = getGraphOutputNames(teacher);
  auto append = [&](int index) -> int {
    if (index < 0)
      return -1;
    unsigned at = main.getNumResults();
    Value value = mapping.lookup(teacherRet->getOperand(index));
    (void)main.insertResult(at, value.getType(), DictionaryAttr());
    ret->insertOperands(at, value);
    outputNames.push_back("teacher:" + teacherNames[index]);
    return int(at);
  };
  result.teacherLogits = append(teacherLogits);
  result.teacherHidden = append(teacherHidden);
  SmallVector<Attribute> names;
  for (const std::string &name : outputNames)
    names.push_back(b.getStringAttr(name));
  main->setAttr(kGraphOutputNamesAttr, b.getArrayAttr(names));
  teacher.erase();
  return result;
}

Value mlir::lmopt::appendDistillationLoss(func::FuncOp func, Operation *ret,
                                          Value ceLoss,
                                          const InlinedTeacher &teacher,
                                          const DistillOptions &options) {
  OpBuilder b(func.getBody().front().getTerminator());
  Location loc = func.getLoc();
  Type f32 = b.getF32Type();
  auto scalarType = RankedTensorType::get({}, f32);
  auto scalar = [&](double value) -> Value {
    return ConstantOp::create(
        b, loc, DenseElementsAttr::get(scalarType, b.getF32FloatAttr(value)));
  };
  auto binary = [&](auto tag, Value l, Value r) -> Value {
    using OpT = decltype(tag);
    auto lt = llvm::cast<RankedTensorType>(l.getType());
    auto rt = llvm::cast<RankedTensorType>(r.getType());
    return OpT::create(b, loc, lt.getRank() >= rt.getRank() ? lt : rt, l, r);
  };
  auto reduce = [&](auto tag, Value x, ArrayRef<int64_t> axes,
                    RankedTensorType type) -> Value {
    using OpT = decltype(tag);
    return OpT::create(b, loc, type, x, b.getDenseI64ArrayAttr(axes),
                       b.getBoolAttr(false));
  };
  Value total;
  auto addTerm = [&](double weight, Value term) {
    if (weight != 1.0)
      term = binary(MulOp(), term, scalar(weight));
    total = total ? binary(AddOp(), total, term) : term;
  };
  if (ceLoss)
    addTerm(options.alpha, ceLoss);
  if (options.beta > 0) {
    Value s = ret->getOperand(teacher.studentLogits);
    Value t = ret->getOperand(teacher.teacherLogits);
    if (options.temperature != 1.0) {
      Value inv = scalar(1.0 / options.temperature);
      s = binary(MulOp(), s, inv);
      t = binary(MulOp(), t, inv);
    }
    // F.kl_div(log_softmax(s), softmax(t), 'batchmean'): the sum over every
    // element of p_t (log p_t - log p_s), over the first dim's size.
    Value logS = LogSoftmaxOp::create(b, loc, s, b.getI64IntegerAttr(-1));
    Value logT = LogSoftmaxOp::create(b, loc, t, b.getI64IntegerAttr(-1));
    Value probT = ExpOp::create(b, loc, logT);
    Value pointwise =
        binary(MulOp(), probT, binary(SubOp(), logT, logS));
    auto type = llvm::cast<RankedTensorType>(pointwise.getType());
    Value perRow = pointwise;
    if (type.getRank() > 1)
      perRow = reduce(ReduceSumOp(), pointwise,
                      llvm::to_vector(llvm::seq<int64_t>(1, type.getRank())),
                      RankedTensorType::get({type.getDimSize(0)}, f32));
    Value kl = reduce(ReduceMeanOp(), perRow, {}, scalarType);
    addTerm(options.beta * options.temperature * options.temperature, kl);
  }
  if (options.gamma > 0) {
    Value s = ret->getOperand(teacher.studentHidden);
    Value t = ret->getOperand(teacher.teacherHidden);
    if (teacher.project) {
      // s @ P, P the truncated identity: a named constant the parameter
      // collection makes trainable like the student's weights.
      auto tType = llvm::cast<RankedTensorType>(t.getType());
      int64_t rows =
          llvm::cast<RankedTensorType>(s.getType()).getShape().back();
      int64_t cols = tType.getShape().back();
      std::vector<float> identity(size_t(rows * cols), 0.0f);
      for (int64_t i = 0; i < std::min(rows, cols); ++i)
        identity[size_t(i * cols + i)] = 1.0f;
      auto pType = RankedTensorType::get({rows, cols}, f32);
      Value projection = ConstantOp::create(
          b, NameLoc::get(b.getStringAttr(kDistillProjectionName), loc),
          DenseElementsAttr::get(pType, llvm::ArrayRef(identity)));
      s = MatMulOp::create(b, loc, tType, s, projection);
    }
    Value diff = binary(SubOp(), s, t);
    Value mse =
        reduce(ReduceMeanOp(), binary(MulOp(), diff, diff), {}, scalarType);
    addTerm(options.gamma, mse);
  }
  return total;
}

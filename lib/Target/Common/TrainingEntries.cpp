//===- TrainingEntries.cpp - a model's training step as entry points ------===//
//
// See TrainingEntries.h. @main is cloned three times: the loss is appended
// to the output it reads, the parameters' constants become state
// arguments, and train_step is differentiated by buildGradients (the op
// rules of GradientOpInterface). optimizer_step is built from the
// parameter list alone.
//
//===----------------------------------------------------------------------===//

#include "lmopt/Target/Common/TrainingEntries.h"

#include "lmopt/Dialect/Lmopt/Autodiff/Autodiff.h"
#include "lmopt/Dialect/Lmopt/IR/GraphNames.h"
#include "lmopt/Dialect/Lmopt/IR/LmoptOps.h"
#include "lmopt/Dialect/Lmopt/Transforms/PruneImportance.h"
#include "lmopt/Support/FusionReport.h"
#include "lmopt/Target/Common/PlanBuilder.h"
#include "lmopt/Target/Common/PlanSymbols.h"
#include "lmopt/Target/Common/RuntimeTypes.h"
#include "lmopt/Target/Common/TrainingReport.h"

#include "mlir/IR/Builders.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/GlobPattern.h"

#include <algorithm>

using namespace mlir;
using namespace mlir::lmopt;

/// The ONNX node (or initializer) name `loc` carries, or "".
static std::string nodeNameOf(Location loc) {
  return findNodeName(loc).value_or("");
}
namespace rt = ::lmopt::runtime;

namespace {

struct Parameter {
  std::string name;
  /// The name its constant carries (the ONNX initializer's) when `name`
  /// was recovered from another, else empty.
  std::string initializer;
  ElementsAttr value;
  RankedTensorType type;
  double weightDecay = 0.0;
  /// An N:M-sparse weight (lmopt-prune sparsity=): its zeros stay.
  bool sparse = false;
};

/// Builds ops with inferred result types at the end of a block (before its
/// terminator).
struct StepBuilder {
  OpBuilder b;
  Location loc;

  Value scalar(double value) {
    auto type = RankedTensorType::get({}, b.getF32Type());
    return ConstantOp::create(
        b, loc, DenseElementsAttr::get(type, b.getF32FloatAttr(float(value))));
  }
  RankedTensorType like(Value lhs, Value rhs, Type element = {}) {
    auto l = llvm::cast<RankedTensorType>(lhs.getType());
    auto r = llvm::cast<RankedTensorType>(rhs.getType());
    RankedTensorType big = l.getRank() >= r.getRank() ? l : r;
    return RankedTensorType::get(big.getShape(),
                                 element ? element : l.getElementType());
  }
  Value add(Value l, Value r) { return AddOp::create(b, loc, like(l, r), l, r); }
  Value sub(Value l, Value r) { return SubOp::create(b, loc, like(l, r), l, r); }
  Value mul(Value l, Value r) { return MulOp::create(b, loc, like(l, r), l, r); }
  Value div(Value l, Value r) { return DivOp::create(b, loc, like(l, r), l, r); }
  Value min(Value l, Value r) { return MinOp::create(b, loc, like(l, r), l, r); }
  Value sqrt(Value x) { return SqrtOp::create(b, loc, x); }
  Value sumAll(Value x) {
    return ReduceSumOp::create(
        b, loc, RankedTensorType::get({}, b.getF32Type()), x,
        b.getDenseI64ArrayAttr({}), b.getBoolAttr(false));
  }
};

} // namespace


/// linear{activation} -> linear, then the activation as its own op, so
/// that the backward pass reads the pre-activation instead of recomputing
/// the product.
static void splitLinearActivations(func::FuncOp func) {
  SmallVector<LinearOp> linears;
  func.walk([&](LinearOp op) {
    if (op.getActivation() != Activation::none &&
        op.getInputQuantization() == InputQuantization::none)
      linears.push_back(op);
  });
  for (LinearOp op : linears) {
    OpBuilder b(op);
    Activation activation = op.getActivation();
    op.setActivation(Activation::none);
    b.setInsertionPointAfter(op);
    Value z = op.getOutput();
    Value y;
    if (activation == Activation::relu)
      y = ReluOp::create(b, op.getLoc(), z);
    else
      y = GeluOp::create(b, op.getLoc(), z,
                         activation == Activation::gelu_tanh
                             ? GeluApproximation::tanh
                             : GeluApproximation::none);
    z.replaceAllUsesExcept(y, y.getDefiningOp());
  }
}

/// Replaces each training-mode dropout of `func` by its mask from a
/// counter-based generator (lmopt.dropout_mask, one stream per dropout)
/// keyed by a new argument, the step's seed, and the scaled product, which
/// generated kernels fuse with their neighbours. Returns the number
/// replaced.
static FailureOr<unsigned> expandDropouts(func::FuncOp func) {
  SmallVector<DropoutOp> dropouts;
  func.walk([&](DropoutOp op) {
    if (op.getTraining() && !op.getRatio().isZero())
      dropouts.push_back(op);
  });
  if (dropouts.empty())
    return 0u;
  unsigned index = func.getNumArguments();
  auto seedType = RankedTensorType::get({}, IntegerType::get(func.getContext(), 64));
  if (failed(func.insertArgument(index, seedType, {}, func.getLoc())))
    return failure();
  Value seed = func.getArgument(index);
  for (auto [stream, op] : llvm::enumerate(dropouts)) {
    OpBuilder b(op);
    auto inputType = llvm::cast<RankedTensorType>(op.getInput().getType());
    Value mask = DropoutMaskOp::create(
        b, op.getLoc(), op.getMask().getType(), op.getInput(), seed,
        op.getRatioAttr(), b.getI64IntegerAttr(int64_t(stream)));
    Value kept = CastOp::create(b, op.getLoc(), inputType, mask);
    Value masked = MulOp::create(b, op.getLoc(), inputType, op.getInput(), kept);
    double scale = 1.0 / (1.0 - op.getRatio().convertToDouble());
    auto scalarType = RankedTensorType::get({}, inputType.getElementType());
    Value factor = ConstantOp::create(
        b, op.getLoc(),
        DenseElementsAttr::get(
            scalarType, b.getFloatAttr(inputType.getElementType(), scale)));
    Value output = MulOp::create(b, op.getLoc(), inputType, masked, factor);
    op.getOutput().replaceAllUsesWith(output);
    op.getMask().replaceAllUsesWith(mask);
    op.erase();
  }
  return unsigned(dropouts.size());
}

/// The loss of `output` against a new argument `labels`, appended to
/// `func`'s arguments.
static FailureOr<Value> appendLoss(func::FuncOp func, Value output,
                                   const TrainingOptions &options) {
  auto type = llvm::cast<RankedTensorType>(output.getType());
  if (!llvm::isa<FloatType>(type.getElementType()) || type.getRank() < 1)
    return func.emitError("the loss reads output of type ")
           << type << ", not a float tensor of rank 1 or more";
  Block &block = func.getBody().front();
  Location loc = output.getLoc();
  OpBuilder b(block.getTerminator());
  StepBuilder build{b, loc};
  Type f32 = b.getF32Type(), i64 = b.getI64Type(), i1 = b.getI1Type();
  if (type.getElementType() != f32)
    return func.emitError("training needs an f32 output, not ") << type;
  RankedTensorType labelType;
  if (options.loss == TrainingOptions::Loss::MeanSquaredError)
    labelType = type;
  else
    labelType = RankedTensorType::get(type.getShape().drop_back(), i64);
  unsigned index = func.getNumArguments();
  if (failed(func.insertArgument(index, labelType, {}, loc)))
    return failure();
  Value labels = func.getArgument(index);

  if (options.loss == TrainingOptions::Loss::MeanSquaredError) {
    Value diff = build.sub(output, labels);
    Value sq = build.mul(diff, diff);
    return ReduceMeanOp::create(b, loc, RankedTensorType::get({}, f32), sq,
                                b.getDenseI64ArrayAttr({}),
                                b.getBoolAttr(false))
        .getResult();
  }
  int64_t classes = type.getShape().back();
  if (ShapedType::isDynamic(classes))
    return func.emitError("cross-entropy needs the number of classes, the "
                          "last dim of ")
           << type << ", to be static";
  int64_t last = type.getRank() - 1;
  Value logProbs =
      LogSoftmaxOp::create(b, loc, output, b.getI64IntegerAttr(-1));
  auto classType = RankedTensorType::get({classes}, i64);
  Value iota = ConstantOp::create(
      b, loc,
      DenseElementsAttr::get(
          classType,
          llvm::ArrayRef(llvm::to_vector(llvm::seq<int64_t>(0, classes)))));
  SmallVector<int64_t> column(labelType.getShape());
  column.push_back(1);
  Value labelColumn = UnsqueezeOp::create(
      b, loc, RankedTensorType::get(column, i64), labels,
      b.getDenseI64ArrayAttr({last}));
  Value hits = EqualOp::create(
      b, loc, RankedTensorType::get(type.getShape(), i1), labelColumn, iota);
  Value oneHot = CastOp::create(b, loc, type, hits);
  Value picked = ReduceSumOp::create(
      b, loc, RankedTensorType::get(labelType.getShape(), f32),
      build.mul(logProbs, oneHot), b.getDenseI64ArrayAttr({last}),
      b.getBoolAttr(false));
  auto ignoreType = RankedTensorType::get({}, i64);
  Value ignore = ConstantOp::create(
      b, loc, DenseElementsAttr::get(ignoreType, options.ignoreIndex));
  auto maskType = RankedTensorType::get(labelType.getShape(), i1);
  Value ignored = EqualOp::create(b, loc, maskType, labels, ignore);
  Value counted = CastOp::create(
      b, loc, RankedTensorType::get(labelType.getShape(), f32),
      NotOp::create(b, loc, ignored));
  Value total = build.sumAll(build.mul(picked, counted));
  Value count = build.sumAll(counted);
  return build.sub(build.scalar(0.0), build.div(total, count));
}

/// The training objective over `func`'s results `ret`: the loss of the
/// output at `outputIndex` against a new labels argument, or with a
/// teacher the distillation objective (no labels argument when alpha is 0).
static FailureOr<Value> appendObjective(func::FuncOp func, Operation *ret,
                                        unsigned outputIndex,
                                        const TrainingOptions &options,
                                        const InlinedTeacher &teacher) {
  Value ce;
  if (!options.distill || options.distill->alpha > 0) {
    FailureOr<Value> loss =
        appendLoss(func, ret->getOperand(outputIndex), options);
    if (failed(loss))
      return failure();
    ce = *loss;
  }
  if (!options.distill)
    return ce;
  return appendDistillationLoss(func, ret, ce, teacher, *options.distill);
}

/// The parameter name PyTorch's TorchScript exporter lost: it folds a
/// Linear's transposed weight into an initializer `onnx::MatMul_<n>`, whose
/// reader, the MatMul node `/bert/encoder/layer.0/attention/self/query/
/// MatMul`, names the module: `bert.encoder.layer.0.attention.self.query.
/// weight` (stored [in, out], the transpose of PyTorch's tensor). Once the
/// MatMul is fused into a linear that carries its activation's node name,
/// the linear's bias (`....query.bias`) names the module instead. Empty
/// when `constant` is not such a weight or its readers name no single
/// module.
static std::string recoverParameterName(ConstantOp constant,
                                        StringRef initializer) {
  if (!initializer.starts_with("onnx::MatMul_"))
    return "";
  std::string module;
  for (Operation *user : constant.getOutput().getUsers()) {
    auto linear = llvm::dyn_cast<LinearOp>(user);
    ConstantOp bias = linear && linear.getBias()
                          ? linear.getBias().getDefiningOp<ConstantOp>()
                          : ConstantOp();
    if (std::string biasName = bias ? nodeNameOf(bias.getLoc()) : "";
        StringRef(biasName).ends_with(".bias")) {
      std::string path = StringRef(biasName).drop_back(5).str();
      if (!module.empty() && module != path)
        return "";
      module = path;
      continue;
    }
    std::string node = nodeNameOf(user->getLoc());
    size_t slash = node.rfind('/');
    if (slash == std::string::npos || slash == 0 || node.front() != '/')
      return "";
    std::string path = node.substr(1, slash - 1);
    std::replace(path.begin(), path.end(), '/', '.');
    if (!module.empty() && module != path)
      return "";
    module = path;
  }
  return module.empty() ? "" : module + ".weight";
}

/// The constants the loss depends on that are parameters: floating point,
/// rank 1 or more, not a distillation teacher's (frozen).
static FailureOr<std::vector<Parameter>>
findParameters(func::FuncOp func, Value loss, const TrainingOptions &options) {
  Block &block = func.getBody().front();
  llvm::DenseSet<Value> useful{loss};
  for (Operation &op : llvm::reverse(block.without_terminator()))
    if (llvm::any_of(op.getResults(),
                     [&](Value v) { return useful.contains(v); }))
      for (Value operand : op.getOperands())
        useful.insert(operand);
  std::vector<llvm::GlobPattern> noDecay;
  for (const std::string &glob : options.noDecay) {
    llvm::Expected<llvm::GlobPattern> pattern = llvm::GlobPattern::create(glob);
    if (!pattern)
      return func.emitError("--no-decay pattern '")
             << glob << "': " << llvm::toString(pattern.takeError());
    noDecay.push_back(std::move(*pattern));
  }
  std::vector<Parameter> params;
  llvm::StringSet<> names;
  for (Operation &op : block.without_terminator()) {
    auto constant = llvm::dyn_cast<ConstantOp>(op);
    if (!constant || !useful.contains(constant.getOutput()) ||
        constant->hasAttr(kFrozenAttrName))
      continue;
    auto type = llvm::cast<RankedTensorType>(constant.getType());
    if (!llvm::isa<FloatType>(type.getElementType()) || type.getRank() < 1)
      continue;
    if (type.getElementType() != Float32Type::get(func.getContext()))
      return constant.emitError("parameter of type ")
             << type << ": training keeps f32 parameters";
    std::string source = nodeNameOf(constant.getLoc());
    std::string recovered = recoverParameterName(constant, source);
    std::string name = !recovered.empty() ? recovered
                       : !source.empty()  ? source
                                          : "param" + std::to_string(params.size());
    std::string unique = name;
    for (int n = 1; names.contains(unique); ++n)
      unique = name + "#" + std::to_string(n);
    names.insert(unique);
    Parameter param{unique,
                    recovered.empty() ? "" : source,
                    constant.getValue(),
                    type,
                    options.weightDecay,
                    constant->hasAttr(kSparsityAttr)};
    for (const llvm::GlobPattern &pattern : noDecay)
      if (pattern.match(unique))
        param.weightDecay = 0.0;
    params.push_back(std::move(param));
  }
  if (params.empty())
    return func.emitError("the loss depends on no floating-point weight: "
                          "nothing to train");
  return params;
}

/// Replaces each parameter's constant in `func` by a state argument (read,
/// and with `trainable` marked for the autodiff); returns the arguments in
/// parameter order.
static FailureOr<SmallVector<Value>>
bindParameters(func::FuncOp func, ArrayRef<Parameter> params, bool trainable) {
  SmallVector<ConstantOp> constants;
  func.walk([&](ConstantOp op) { constants.push_back(op); });
  SmallVector<Value> args;
  llvm::StringMap<unsigned> seen;
  for (const Parameter &param : params) {
    unsigned index = func.getNumArguments();
    if (failed(func.insertArgument(index, param.type, {}, func.getLoc())))
      return failure();
    func.setArgAttr(index, kStateAttrName,
                    StringAttr::get(func.getContext(), param.name));
    if (trainable)
      func.setArgAttr(index, kTrainableAttrName,
                      StringAttr::get(func.getContext(), param.name));
    args.push_back(func.getArgument(index));
  }
  // Match constants to parameters by name and value, in order.
  std::vector<bool> used(params.size(), false);
  for (ConstantOp op : constants) {
    // A teacher's weight stays a constant, even one equal to a parameter.
    if (op->hasAttr(kFrozenAttrName)) {
      op->removeAttr(kFrozenAttrName);
      continue;
    }
    auto type = llvm::cast<RankedTensorType>(op.getType());
    std::string name = nodeNameOf(op.getLoc());
    for (size_t i = 0; i < params.size(); ++i) {
      StringRef paramName = params[i].initializer.empty()
                                ? StringRef(params[i].name)
                                : StringRef(params[i].initializer);
      if (used[i] || params[i].value != op.getValue() ||
          params[i].type != type ||
          !(paramName == name || paramName.starts_with(name + "#") ||
            name.empty()))
        continue;
      used[i] = true;
      op.getOutput().replaceAllUsesWith(args[i]);
      op.erase();
      break;
    }
  }
  return args;
}

static void setNames(func::FuncOp func, ArrayRef<std::string> inputs,
                     ArrayRef<std::string> outputs) {
  StepBuilder build{OpBuilder(func), func.getLoc()};
  auto strings = [&](ArrayRef<std::string> names) {
    SmallVector<Attribute> attrs;
    for (const std::string &name : names)
      attrs.push_back(build.b.getStringAttr(name));
    return build.b.getArrayAttr(attrs);
  };
  func->setAttr(kGraphInputNamesAttr, strings(inputs));
  func->setAttr(kGraphOutputNamesAttr, strings(outputs));
}

static void setReturn(func::FuncOp func, ArrayRef<Value> values) {
  auto ret = llvm::cast<func::ReturnOp>(func.getBody().front().getTerminator());
  ret->setOperands(values);
  func.setType(FunctionType::get(func.getContext(), func.getArgumentTypes(),
                                 ValueRange(values).getTypes()));
  func.removeResAttrsAttr();
}

/// The model's output the loss reads, by name (the first without one).
static FailureOr<unsigned> findOutput(func::FuncOp main,
                                      const TrainingOptions &options) {
  SmallVector<std::string> names = getGraphOutputNames(main);
  if (options.output.empty())
    return 0u;
  for (auto [index, name] : llvm::enumerate(names))
    if (name == options.output)
      return unsigned(index);
  return main.emitError("--loss names output '")
         << options.output << "', which the model does not have; its outputs: "
         << llvm::join(names, ", ");
}

FailureOr<Value> mlir::lmopt::appendModelLoss(func::FuncOp main,
                                              const TrainingOptions &options) {
  FailureOr<unsigned> index = findOutput(main, options);
  if (failed(index))
    return failure();
  SmallVector<std::string> inputs = getGraphInputNames(main);
  Operation *ret = main.getBody().front().getTerminator();
  FailureOr<Value> loss = appendLoss(main, ret->getOperand(*index), options);
  if (failed(loss))
    return failure();
  inputs.push_back(options.labels);
  setNames(main, inputs, getGraphOutputNames(main));
  return loss;
}

static rt::PlanState makeState(const std::string &name,
                               RankedTensorType type) {
  rt::PlanState state;
  state.name = name;
  state.dtype = *getRuntimeDType(type.getElementType());
  state.dims.assign(type.getShape().begin(), type.getShape().end());
  state.init = rt::PlanState::Init::Zero;
  return state;
}

FailureOr<TrainingEntries>
mlir::lmopt::buildTrainingEntries(ModuleOp module,
                                  const TrainingOptions &options,
                                  WeightsBuilder &weights) {
  auto main = module.lookupSymbol<func::FuncOp>("main");
  if (!main || main.isExternal())
    return module.emitError("the module has no func.func @main to train");
  FailureOr<unsigned> outputIndex = findOutput(main, options);
  if (failed(outputIndex))
    return failure();
  InlinedTeacher teacher;
  if (options.distill) {
    FailureOr<InlinedTeacher> inlined =
        inlineTeacher(module, main, *outputIndex, *options.distill);
    if (failed(inlined))
      return failure();
    teacher = *inlined;
  }
  bool hasLabels = !options.distill || options.distill->alpha > 0;
  splitLinearActivations(main);
  // With bounded dims, make static what the bounds prove (a position
  // embedding's batch of 1), so that the backward sums a broadcast operand's
  // gradient over the dims it was stretched along.
  if (!options.maxShapes.empty()) {
    rt::Plan scratch;
    SymbolicShapeBounds bounds;
    if (failed(addPlanSymbols(main, options.maxShapes, scratch, bounds, {})))
      return failure();
    if (!scratch.symbols.empty())
      refineStaticDims(main, SymbolicShapes(main, bounds));
  }
  SmallVector<std::string> inputNames = getGraphInputNames(main);
  SmallVector<std::string> outputNames = getGraphOutputNames(main);
  // The teacher's outputs feed the loss only.
  if (options.distill)
    outputNames.resize(teacher.studentOutputs);
  unsigned numInputs = main.getNumArguments();
  OpBuilder top(module.getBody(), module.getBody()->end());

  // train_step: forward, loss, backward, gradient states.
  auto train = llvm::cast<func::FuncOp>(top.clone(*main));
  train.setSymName("train_step");
  auto trainRet =
      llvm::cast<func::ReturnOp>(train.getBody().front().getTerminator());
  FailureOr<Value> loss =
      appendObjective(train, trainRet, *outputIndex, options, teacher);
  if (failed(loss))
    return failure();
  FailureOr<unsigned> dropouts = expandDropouts(train);
  if (failed(dropouts))
    return failure();
  FailureOr<std::vector<Parameter>> params =
      findParameters(train, *loss, options);
  if (failed(params))
    return failure();
  FailureOr<SmallVector<Value>> trainArgs =
      bindParameters(train, *params, /*trainable=*/true);
  if (failed(trainArgs))
    return failure();
  // What the backward saves is reported against the forward as it stands.
  llvm::DenseSet<Operation *> forwardOps;
  for (Operation &op : train.getBody().front())
    forwardOps.insert(&op);
  unsigned forwardArgs = train.getNumArguments();
  AutodiffStats stats;
  FailureOr<SmallVector<Value>> grads =
      buildGradients(train, *loss, *trainArgs, &stats);
  if (failed(grads))
    return failure();

  TrainingEntries result;
  for (const Parameter &param : *params) {
    rt::PlanState state = makeState(param.name, param.type);
    FailureOr<uint64_t> offset = weights.add(param.value, main.getLoc());
    if (failed(offset))
      return failure();
    state.init = rt::PlanState::Init::Weight;
    state.offset = *offset;
    result.states.push_back(state);
  }
  for (const char *prefix : {"grad/", "adam_m/", "adam_v/"})
    for (const Parameter &param : *params)
      result.states.push_back(makeState(prefix + param.name, param.type));

  {
    Block &block = train.getBody().front();
    OpBuilder b(block.getTerminator());
    StepBuilder build{b, train.getLoc()};
    unsigned accIndex = train.getNumArguments();
    auto scalarType = RankedTensorType::get({}, b.getF32Type());
    if (failed(train.insertArgument(accIndex, scalarType, {}, train.getLoc())))
      return failure();
    Value accumulate = train.getArgument(accIndex);
    Value adding = GreaterOp::create(
        b, train.getLoc(), RankedTensorType::get({}, b.getI1Type()),
        accumulate, build.scalar(0.0));
    SmallVector<Value> results{*loss};
    for (auto [param, grad, value] : llvm::zip(*params, *grads, *trainArgs)) {
      // A sparse weight's zeros get no gradient: AdamW leaves a zero with
      // zero moments (and its decay) at zero, so the mask stays fixed.
      if (param.sparse) {
        auto flags =
            RankedTensorType::get(param.type.getShape(), b.getI1Type());
        Value zero =
            EqualOp::create(b, train.getLoc(), flags, value, build.scalar(0.0));
        Value kept = CastOp::create(b, train.getLoc(), param.type,
                                    NotOp::create(b, train.getLoc(), zero));
        grad = build.mul(grad, kept);
      }
      unsigned index = train.getNumArguments();
      if (failed(train.insertArgument(index, param.type, {}, train.getLoc())))
        return failure();
      train.setArgAttr(index, kStateAttrName,
                       b.getStringAttr("grad/" + param.name));
      Value stored = train.getArgument(index);
      results.push_back(WhereOp::create(b, train.getLoc(), param.type, adding,
                                        build.add(stored, grad), grad));
    }
    setReturn(train, results);
    for (auto [index, param] : llvm::enumerate(*params))
      train.setResultAttr(1 + index, kStateWriteAttrName,
                          b.getStringAttr("grad/" + param.name));
    SmallVector<std::string> names(inputNames);
    if (hasLabels)
      names.push_back(options.labels);
    if (*dropouts)
      names.push_back("dropout_seed");
    while (names.size() < accIndex)
      names.push_back("");
    names.push_back("accumulate");
    setNames(train, names, {"loss"});
    eraseDeadOps(train.getBody().front());
  }

  // eval: forward and loss with the current parameters.
  auto eval = llvm::cast<func::FuncOp>(top.clone(*main));
  eval.setSymName("eval");
  // Evaluation runs without dropout (canonicalization removes them).
  eval.walk([](DropoutOp op) { op.setTraining(false); });
  {
    auto ret =
        llvm::cast<func::ReturnOp>(eval.getBody().front().getTerminator());
    FailureOr<Value> evalLoss =
        appendObjective(eval, ret, *outputIndex, options, teacher);
    if (failed(evalLoss) ||
        failed(bindParameters(eval, *params, /*trainable=*/false)))
      return failure();
    SmallVector<Value> results{*evalLoss};
    llvm::append_range(results,
                       ret.getOperands().take_front(outputNames.size()));
    setReturn(eval, results);
    SmallVector<std::string> names(inputNames);
    if (hasLabels)
      names.push_back(options.labels);
    SmallVector<std::string> outputs{"loss"};
    llvm::append_range(outputs, outputNames);
    setNames(eval, names, outputs);
    eraseDeadOps(eval.getBody().front());
  }

  // optimizer_step: clipping and AdamW over every parameter.
  {
    auto scalarType = RankedTensorType::get({}, top.getF32Type());
    SmallVector<Type> argTypes(4, scalarType);
    for (int copy = 0; copy < 4; ++copy)
      for (const Parameter &param : *params)
        argTypes.push_back(param.type);
    auto opt = func::FuncOp::create(
        top, main.getLoc(), "optimizer_step",
        FunctionType::get(module.getContext(), argTypes, {}));
    Block *block = opt.addEntryBlock();
    OpBuilder b = OpBuilder::atBlockEnd(block);
    func::ReturnOp::create(b, main.getLoc());
    b.setInsertionPoint(block->getTerminator());
    StepBuilder build{b, main.getLoc()};
    size_t n = params->size();
    const char *prefixes[] = {"", "grad/", "adam_m/", "adam_v/"};
    for (int copy = 0; copy < 4; ++copy)
      for (size_t i = 0; i < n; ++i)
        opt.setArgAttr(4 + copy * n + i, kStateAttrName,
                       b.getStringAttr(prefixes[copy] + (*params)[i].name));
    Value lr = opt.getArgument(0), stepSize = opt.getArgument(1),
          bc2Sqrt = opt.getArgument(2), gradScale = opt.getArgument(3);
    Value total;
    for (size_t i = 0; i < n; ++i) {
      Value g = build.mul(opt.getArgument(4 + n + i), gradScale);
      Value sq = build.sumAll(build.mul(g, g));
      total = total ? build.add(total, sq) : sq;
    }
    Value norm = build.sqrt(total);
    // clip_grad_norm_'s coefficient; 1 (exact) without clipping.
    Value coef = build.scalar(1.0);
    if (options.clipNorm > 0.0)
      coef = build.min(build.div(build.scalar(options.clipNorm),
                                 build.add(norm, build.scalar(1e-6))),
                       build.scalar(1.0));
    SmallVector<Value> results{norm};
    SmallVector<Value> newParams, newM, newV;
    for (size_t i = 0; i < n; ++i) {
      const Parameter &param = (*params)[i];
      // One fused update per parameter (lmopt.adamw, Format/AdamW.h).
      auto update = AdamWOp::create(
          b, NameLoc::get(b.getStringAttr(param.name)), opt.getArgument(4 + i),
          opt.getArgument(4 + n + i), opt.getArgument(4 + 2 * n + i),
          opt.getArgument(4 + 3 * n + i), lr, stepSize, bc2Sqrt, gradScale,
          coef, b.getF64FloatAttr(options.beta1),
          b.getF64FloatAttr(options.beta2), b.getF64FloatAttr(options.epsilon),
          b.getF64FloatAttr(param.weightDecay));
      newParams.push_back(update.getNewParam());
      newM.push_back(update.getNewM());
      newV.push_back(update.getNewV());
    }
    llvm::append_range(results, newParams);
    llvm::append_range(results, newM);
    llvm::append_range(results, newV);
    setReturn(opt, results);
    for (int copy = 0; copy < 3; ++copy) {
      const char *prefix = copy == 0 ? "" : copy == 1 ? "adam_m/" : "adam_v/";
      for (size_t i = 0; i < n; ++i)
        opt.setResultAttr(1 + copy * n + i, kStateWriteAttrName,
                          b.getStringAttr(prefix + (*params)[i].name));
    }
    SmallVector<std::string> names{"lr", "step_size",
                                   "bias_correction2_sqrt", "grad_scale"};
    setNames(opt, names, {"grad_norm"});
    result.entries.push_back({"train_step", train, {}});
    result.entries.push_back({"optimizer_step", opt, {}});
    result.entries.push_back({"eval", eval, {}});
  }

  // Bounds: the model inputs', and the labels' from the first input's.
  for (EntrySpec &spec : result.entries) {
    if (spec.name == "optimizer_step")
      continue;
    spec.maxShapes = options.maxShapes;
    if (hasLabels && !options.maxShapes.count(options.labels) &&
        numInputs > 0) {
      auto it = options.maxShapes.find(inputNames.front());
      auto labelType = llvm::cast<RankedTensorType>(
          spec.func.getArgument(numInputs).getType());
      if (it != options.maxShapes.end() &&
          int64_t(it->second.size()) >= labelType.getRank())
        spec.maxShapes[options.labels] = std::vector<int64_t>(
            it->second.begin(), it->second.begin() + labelType.getRank());
    }
  }
  main.erase();
  result.meta["memory"] = reportSavedActivations(
      train, forwardOps, forwardArgs, result.entries.front().maxShapes);

  llvm::json::Array paramList;
  int64_t count = 0;
  for (const Parameter &param : *params) {
    count += param.type.getNumElements();
    llvm::json::Object entry{
        {"name", param.name},
        {"dims", llvm::json::Array(param.type.getShape())},
        {"weight_decay", param.weightDecay}};
    if (!param.initializer.empty())
      entry["initializer"] = param.initializer;
    // Trained with the student, not part of it.
    if (param.name == kDistillProjectionName)
      entry["export"] = false;
    paramList.push_back(std::move(entry));
  }
  result.meta["loss"] = !hasLabels ? "distillation"
                        : options.loss == TrainingOptions::Loss::CrossEntropy
                            ? "cross-entropy"
                            : "mse";
  if (hasLabels)
    result.meta["labels"] = options.labels;
  if (options.distill) {
    const DistillOptions &d = *options.distill;
    llvm::json::Object distill{{"teacher", d.teacherPath},
                               {"alpha", d.alpha},
                               {"beta", d.beta},
                               {"gamma", d.gamma},
                               {"temperature", d.temperature}};
    if (d.gamma > 0) {
      distill["student_output"] = d.studentOutput;
      distill["teacher_output"] = d.teacherOutput;
    }
    result.meta["distill"] = std::move(distill);
  }
  if (hasLabels && options.loss == TrainingOptions::Loss::CrossEntropy) {
    auto outputType = llvm::cast<RankedTensorType>(
        eval.getFunctionType().getResult(1 + *outputIndex));
    result.meta["classes"] = outputType.getShape().back();
    result.meta["ignore_index"] = options.ignoreIndex;
  }
  result.meta["parameters"] = std::move(paramList);
  result.meta["parameter_count"] = count;
  result.meta["beta1"] = options.beta1;
  result.meta["beta2"] = options.beta2;
  result.meta["epsilon"] = options.epsilon;
  result.meta["clip_norm"] = options.clipNorm;
  result.meta["schedule"] = llvm::json::Object(options.schedule);
  if (!options.prune.empty())
    result.meta["prune"] = options.prune;
  if (!options.sourceModel.empty()) {
    result.meta["source_model"] = options.sourceModel;
    result.meta["source_model_bytes"] = options.sourceModelBytes;
  }
  result.meta["dropouts"] = int64_t(*dropouts);
  result.meta["active_ops"] = int64_t(stats.activeOps);
  result.meta["backward_ops"] = int64_t(stats.backwardOps);
  return result;
}

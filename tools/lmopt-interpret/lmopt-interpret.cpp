//===- lmopt-interpret.cpp - run lmopt IR on the reference evaluator ------===//
//
// Imports or parses a model, optionally runs a pass pipeline, evaluates it on
// NumPy inputs with the reference evaluator, and compares the outputs with
// reference outputs by name. The e2e suite uses it to check the importer and
// every pass against ONNX Runtime (docs/reference-evaluator.md).
//
//===----------------------------------------------------------------------===//

#include "lmopt/Dialect/Lmopt/IR/GraphNames.h"
#include "lmopt/Dialect/Lmopt/IR/LmoptDialect.h"
#include "lmopt/Dialect/Lmopt/Transforms/Passes.h"
#include "lmopt/Format/Float16.h"
#include "lmopt/Format/Npy.h"
#include "lmopt/Importer/ONNX/Importer.h"
#include "lmopt/Reference/Evaluator.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Quant/IR/Quant.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/AsmState.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>
#include <cstring>

using namespace mlir;
namespace ref = mlir::lmopt::reference;
namespace rt = ::lmopt::runtime;

static llvm::cl::opt<std::string>
    inputFile(llvm::cl::Positional, llvm::cl::desc("<model.mlir | model.onnx>"),
              llvm::cl::Required);
static llvm::cl::opt<std::string>
    inputsNpz("inputs", llvm::cl::desc("Inputs by graph input name (.npz)"),
              llvm::cl::value_desc("file.npz"));
static llvm::cl::list<std::string>
    inputNpy("input",
             llvm::cl::desc("One input: name=file.npy (repeatable; "
                            "overrides --inputs)"),
             llvm::cl::value_desc("name=file.npy"));
static llvm::cl::opt<std::string>
    outputNpz("output", llvm::cl::desc("Write the outputs by name (.npz)"),
              llvm::cl::value_desc("file.npz"));
static llvm::cl::opt<std::string>
    compareNpz("compare",
               llvm::cl::desc("Compare the outputs with these by name (.npz)"),
               llvm::cl::value_desc("ref.npz"));
static llvm::cl::opt<double>
    relTolerance("rtol", llvm::cl::desc("Relative tolerance of --compare"),
                 llvm::cl::init(1e-4));
static llvm::cl::opt<double>
    absTolerance("atol", llvm::cl::desc("Absolute tolerance of --compare"),
                 llvm::cl::init(1e-5));
static llvm::cl::opt<std::string>
    passPipeline("pass-pipeline",
                 llvm::cl::desc("Pass pipeline to run before evaluating, e.g. "
                                "'builtin.module(lmopt-optimize-pipeline)'"),
                 llvm::cl::value_desc("pipeline"));
static llvm::cl::opt<std::string>
    functionName("function", llvm::cl::desc("Function to evaluate"),
                 llvm::cl::init("main"));

static int fail(const llvm::Twine &message) {
  llvm::errs() << "lmopt-interpret: error: " << message << "\n";
  return 1;
}

static FailureOr<OwningOpRef<ModuleOp>> loadModule(MLIRContext &ctx,
                                                   llvm::SourceMgr &sourceMgr) {
  if (StringRef(inputFile).ends_with(".onnx"))
    return mlir::lmopt::importONNXModel(ctx, inputFile,
                                        mlir::lmopt::ImportOptions());
  std::string error;
  auto buffer = llvm::MemoryBuffer::getFileOrSTDIN(inputFile);
  if (!buffer) {
    llvm::errs() << "lmopt-interpret: error: cannot read '" << inputFile
                 << "': " << buffer.getError().message() << "\n";
    return failure();
  }
  sourceMgr.AddNewSourceBuffer(std::move(*buffer), llvm::SMLoc());
  OwningOpRef<ModuleOp> module = parseSourceFile<ModuleOp>(sourceMgr, &ctx);
  if (!module)
    return failure();
  return module;
}

/// The element type a NumPy dtype holds, or null when `type` cannot hold it.
static bool dtypeMatches(rt::DType dtype, Type type) {
  switch (dtype) {
  case rt::DType::F32:
    return type.isF32();
  case rt::DType::F64:
    return type.isF64();
  case rt::DType::F16:
    return type.isF16();
  case rt::DType::BF16:
    return type.isBF16();
  case rt::DType::Bool:
    return type.isInteger(1);
  case rt::DType::I8:
  case rt::DType::I16:
  case rt::DType::I32:
  case rt::DType::I64:
    return type.isSignlessInteger(rt::dtypeSize(dtype) * 8) ||
           type.isSignedInteger(rt::dtypeSize(dtype) * 8);
  case rt::DType::U8:
  case rt::DType::U16:
  case rt::DType::U32:
  case rt::DType::U64:
    return type.isUnsignedInteger(rt::dtypeSize(dtype) * 8);
  }
  return false;
}

template <typename T> static T loadAt(const rt::Tensor &tensor, uint64_t i) {
  T value;
  std::memcpy(&value, tensor.data.data() + i * sizeof(T), sizeof(T));
  return value;
}

/// Converts a NumPy tensor to the evaluator's, as element type `type`.
static FailureOr<ref::Tensor> toReference(const rt::Tensor &tensor, Type type,
                                          StringRef name) {
  if (!dtypeMatches(tensor.dtype, type)) {
    llvm::errs() << "lmopt-interpret: error: input '" << name << "' has dtype "
                 << rt::dtypeName(tensor.dtype) << " but the model takes "
                 << type << "\n";
    return failure();
  }
  ref::Tensor result(type, tensor.shape);
  for (uint64_t i = 0, e = tensor.elementCount(); i < e; ++i) {
    switch (tensor.dtype) {
    case rt::DType::F32:
      result.setDouble(i, loadAt<float>(tensor, i));
      break;
    case rt::DType::F64:
      result.setDouble(i, loadAt<double>(tensor, i));
      break;
    case rt::DType::F16:
      result.setDouble(i, rt::halfToFloat(loadAt<uint16_t>(tensor, i)));
      break;
    case rt::DType::BF16:
      result.setDouble(i, rt::bfloat16ToFloat(loadAt<uint16_t>(tensor, i)));
      break;
    case rt::DType::Bool:
    case rt::DType::U8:
      result.setInt(i, loadAt<uint8_t>(tensor, i));
      break;
    case rt::DType::I8:
      result.setInt(i, loadAt<int8_t>(tensor, i));
      break;
    case rt::DType::I16:
      result.setInt(i, loadAt<int16_t>(tensor, i));
      break;
    case rt::DType::U16:
      result.setInt(i, loadAt<uint16_t>(tensor, i));
      break;
    case rt::DType::I32:
      result.setInt(i, loadAt<int32_t>(tensor, i));
      break;
    case rt::DType::U32:
      result.setInt(i, loadAt<uint32_t>(tensor, i));
      break;
    case rt::DType::I64:
    case rt::DType::U64:
      result.setInt(i, loadAt<int64_t>(tensor, i));
      break;
    }
  }
  result.roundToElementType();
  return result;
}

/// Converts an evaluator tensor to NumPy (f32, f64, bool and integers of
/// 8 to 64 bits).
static FailureOr<rt::Tensor> toNumpy(const ref::Tensor &tensor,
                                     StringRef name) {
  rt::Tensor result;
  result.shape.assign(tensor.getShape().begin(), tensor.getShape().end());
  Type type = tensor.getElementType();
  uint64_t count = tensor.getNumElements();
  auto store = [&](auto value, uint64_t i) {
    std::memcpy(result.data.data() + i * sizeof(value), &value, sizeof(value));
  };
  if (type.isF32() || type.isF64()) {
    result.dtype = type.isF32() ? rt::DType::F32 : rt::DType::F64;
    result.data.resize(count * rt::dtypeSize(result.dtype));
    for (uint64_t i = 0; i < count; ++i) {
      if (type.isF32())
        store(static_cast<float>(tensor.getDouble(i)), i);
      else
        store(tensor.getDouble(i), i);
    }
    return result;
  }
  if (auto intType = llvm::dyn_cast<IntegerType>(type)) {
    unsigned width = intType.getWidth();
    bool isUnsigned = intType.isUnsigned();
    switch (width) {
    case 1:
      result.dtype = rt::DType::Bool;
      break;
    case 8:
      result.dtype = isUnsigned ? rt::DType::U8 : rt::DType::I8;
      break;
    case 16:
      result.dtype = isUnsigned ? rt::DType::U16 : rt::DType::I16;
      break;
    case 32:
      result.dtype = isUnsigned ? rt::DType::U32 : rt::DType::I32;
      break;
    case 64:
      result.dtype = isUnsigned ? rt::DType::U64 : rt::DType::I64;
      break;
    default:
      width = 0;
    }
    if (width != 0) {
      size_t itemSize = rt::dtypeSize(result.dtype);
      result.data.resize(count * itemSize);
      // Little-endian: the low bytes of the int64 value are the element.
      for (uint64_t i = 0; i < count; ++i) {
        int64_t value = tensor.getInt(i);
        std::memcpy(result.data.data() + i * itemSize, &value, itemSize);
      }
      return result;
    }
  }
  llvm::errs() << "lmopt-interpret: error: output '" << name
               << "' has element type " << type
               << ", which cannot be written as NumPy\n";
  return failure();
}

/// Binds the function's arguments by name from --inputs and --input.
static FailureOr<SmallVector<ref::Tensor>> bindInputs(func::FuncOp func) {
  llvm::StringMap<rt::Tensor> available;
  if (!inputsNpz.empty()) {
    std::vector<rt::NamedTensor> tensors;
    rt::Status status = rt::readNpz(inputsNpz, tensors);
    if (!status) {
      llvm::errs() << "lmopt-interpret: error: " << status.toString() << "\n";
      return failure();
    }
    for (rt::NamedTensor &named : tensors)
      available[named.name] = std::move(named.tensor);
  }
  for (StringRef spec : inputNpy) {
    auto [name, path] = spec.split('=');
    if (name.empty() || path.empty()) {
      llvm::errs() << "lmopt-interpret: error: --input '" << spec
                   << "' is not name=file.npy\n";
      return failure();
    }
    rt::Tensor tensor;
    rt::Status status = rt::readNpy(path.str(), tensor);
    if (!status) {
      llvm::errs() << "lmopt-interpret: error: " << status.toString() << "\n";
      return failure();
    }
    available[name] = std::move(tensor);
  }
  SmallVector<ref::Tensor> arguments;
  SmallVector<std::string> names = mlir::lmopt::getGraphInputNames(func);
  for (auto [name, type] : llvm::zip(names, func.getArgumentTypes())) {
    auto it = available.find(name);
    if (it == available.end()) {
      llvm::errs() << "lmopt-interpret: error: no value for input '" << name
                   << "'\n";
      return failure();
    }
    FailureOr<ref::Tensor> tensor = toReference(
        it->second, llvm::cast<ShapedType>(type).getElementType(), name);
    if (failed(tensor))
      return failure();
    arguments.push_back(std::move(*tensor));
  }
  return arguments;
}

/// Compares `outputs` with the reference archive; true when all match.
static FailureOr<bool> compareOutputs(ArrayRef<std::string> names,
                                      ArrayRef<ref::Tensor> outputs) {
  std::vector<rt::NamedTensor> expected;
  rt::Status status = rt::readNpz(compareNpz, expected);
  if (!status) {
    llvm::errs() << "lmopt-interpret: error: " << status.toString() << "\n";
    return failure();
  }
  bool allMatch = true;
  for (const rt::NamedTensor &named : expected)
    if (!llvm::is_contained(names, named.name)) {
      llvm::outs() << named.name << ": not an output of the model: FAIL\n";
      allMatch = false;
    }
  for (auto [name, actual] : llvm::zip(names, outputs)) {
    auto it = llvm::find_if(expected, [&, &name = name](const auto &named) {
      return named.name == name;
    });
    if (it == expected.end()) {
      llvm::outs() << name << ": no reference value: FAIL\n";
      allMatch = false;
      continue;
    }
    FailureOr<ref::Tensor> want =
        toReference(it->tensor, actual.getElementType(), name);
    if (failed(want))
      return failure();
    if (want->getShape() != actual.getShape()) {
      llvm::outs() << name << ": shape " << ref::formatShape(actual.getShape())
                   << ", expected " << ref::formatShape(want->getShape())
                   << ": FAIL\n";
      allMatch = false;
      continue;
    }
    // numpy.allclose's rule. The relative error is reported over the
    // elements where the relative term of the rule dominates (|b| above
    // atol / rtol); `worst` is the largest error as a fraction of what the
    // rule allows, so a check passes when it is at most 1.
    double relFloor = relTolerance > 0 ? absTolerance / relTolerance : 0.0;
    double maxAbs = 0.0, maxRel = 0.0, worst = 0.0;
    bool match = true;
    for (int64_t i = 0, e = actual.getNumElements(); i < e; ++i) {
      double a = actual.getDouble(i), b = want->getDouble(i);
      // Equal values match, infinities included (inf - inf is NaN); NaN
      // matches only NaN, and an infinity only the same infinity.
      double diff = std::fabs(a - b);
      if (a == b || (std::isnan(a) && std::isnan(b)))
        diff = 0.0;
      else if (!std::isfinite(a) || !std::isfinite(b))
        diff = std::numeric_limits<double>::infinity();
      maxAbs = std::max(maxAbs, diff);
      if (std::fabs(b) >= relFloor && b != 0.0)
        maxRel = std::max(maxRel, diff / std::fabs(b));
      double allowed = absTolerance + relTolerance * std::fabs(b);
      worst = std::max(worst, allowed > 0 ? diff / allowed
                              : diff > 0  ? INFINITY
                                          : 0.0);
      // An expected NaN or infinity makes `allowed` NaN or infinite, so exact
      // agreement is checked first.
      match &= diff == 0.0 || (std::isfinite(diff) && diff <= allowed);
    }
    llvm::outs() << name << ": shape " << ref::formatShape(actual.getShape())
                 << ", max abs error " << llvm::format("%.3e", maxAbs)
                 << ", max rel error " << llvm::format("%.3e", maxRel) << ", "
                 << llvm::format("%.2f", worst)
                 << " of tolerance: " << (match ? "PASS" : "FAIL") << "\n";
    allMatch &= match;
  }
  return allMatch;
}

int main(int argc, char **argv) {
  llvm::InitLLVM initLLVM(argc, argv);
  registerTransformsPasses();
  mlir::lmopt::registerAllLmoptPasses();
  // mlir-opt's --mlir-print-ir-after-all, --mlir-timing, ... for the pipeline.
  registerMLIRContextCLOptions();
  registerPassManagerCLOptions();
  registerAsmPrinterCLOptions();
  llvm::cl::ParseCommandLineOptions(
      argc, argv,
      "lmopt reference interpreter: evaluates a model on NumPy "
      "inputs and compares its outputs with reference outputs\n");

  DialectRegistry registry;
  registry
      .insert<mlir::lmopt::LmoptDialect, arith::ArithDialect, func::FuncDialect,
              quant::QuantDialect, tensor::TensorDialect>();
  mlir::lmopt::registerONNXImportDialects(registry);
  MLIRContext ctx(registry);
  ctx.loadAllAvailableDialects();
  llvm::SourceMgr sourceMgr;
  SourceMgrDiagnosticHandler diagnostics(sourceMgr, &ctx);

  FailureOr<OwningOpRef<ModuleOp>> module = loadModule(ctx, sourceMgr);
  if (failed(module))
    return 1;
  if (!passPipeline.empty()) {
    // The pipeline names its anchor ('builtin.module(...)'), as mlir-opt's
    // --pass-pipeline does.
    std::string errorText;
    llvm::raw_string_ostream errorStream(errorText);
    FailureOr<OpPassManager> parsed =
        parsePassPipeline(passPipeline, errorStream);
    if (failed(parsed))
      return fail("bad --pass-pipeline '" + passPipeline + "': " + errorText);
    if (parsed->getOpAnchorName() != ModuleOp::getOperationName())
      return fail(
          "--pass-pipeline must be anchored on 'builtin.module', not '" +
          parsed->getOpAnchorName() + "'");
    PassManager pm(&ctx, ModuleOp::getOperationName());
    static_cast<OpPassManager &>(pm) = std::move(*parsed);
    if (failed(applyPassManagerCLOptions(pm)))
      return fail("bad pass manager options");
    if (failed(pm.run(**module)))
      return fail("pass pipeline '" + passPipeline + "' failed");
  }
  auto func = (**module).lookupSymbol<func::FuncOp>(functionName);
  if (!func)
    return fail("no function '" + functionName + "' in '" + inputFile + "'");

  FailureOr<SmallVector<ref::Tensor>> arguments = bindInputs(func);
  if (failed(arguments))
    return 1;
  FailureOr<SmallVector<ref::Tensor>> outputs =
      ref::evaluateFunction(func, *arguments);
  if (failed(outputs))
    return 1;
  SmallVector<std::string> names = mlir::lmopt::getGraphOutputNames(func);

  if (!outputNpz.empty()) {
    std::vector<rt::NamedTensor> tensors;
    for (auto [name, tensor] : llvm::zip(names, *outputs)) {
      FailureOr<rt::Tensor> converted = toNumpy(tensor, name);
      if (failed(converted))
        return 1;
      tensors.push_back({name, std::move(*converted)});
    }
    rt::Status status = rt::writeNpz(outputNpz, tensors);
    if (!status)
      return fail(status.toString());
  }
  if (compareNpz.empty()) {
    for (auto [name, tensor] : llvm::zip(names, *outputs))
      llvm::outs() << name << ": shape " << ref::formatShape(tensor.getShape())
                   << "\n";
    return 0;
  }
  FailureOr<bool> match = compareOutputs(names, *outputs);
  if (failed(match))
    return 1;
  return *match ? 0 : 1;
}

//===- ReduceLayers.cpp - A student model from a teacher's layers ---------===//
//
// lmopt-reduce-layers (ReduceLayers.h): import, graph pipeline, lmopt-prune
// with keep-layers or layers=N, ONNX export. With layers=N the block
// importance is measured on a second import whose inputs are pinned to the
// calibration samples' shapes (the model runner compiles static shapes)
// and copied to the dynamic model layer by layer.
//
//===----------------------------------------------------------------------===//

#include "lmopt/Driver/ReduceLayers.h"

#include "DriverContext.h"
#include "PruneReport.h"

#include "lmopt/Dialect/Lmopt/IR/LmoptOps.h"
#include "lmopt/Dialect/Lmopt/Transforms/Passes.h"
#include "lmopt/Dialect/Lmopt/Transforms/PruneImportance.h"
#include "lmopt/Driver/ModelCompiler.h"
#include "lmopt/Exporter/ONNX/Exporter.h"
#include "lmopt/Format/Npy.h"
#include "lmopt/Importer/ONNX/Importer.h"
#include "lmopt/Quantization/BlockImportance.h"
#include "lmopt/Support/DiagnosedError.h"
#include "lmopt/Target/TargetBackend.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/ADT/StringExtras.h"

using namespace mlir;
using namespace mlir::lmopt;

/// Prints "error: ..." to `log` and hands back a DiagnosedError.
static llvm::Error failWith(llvm::raw_ostream &log,
                            const llvm::Twine &message) {
  log << "error: " << message << "\n";
  return makeDiagnosedError();
}

/// The model at `path` through the graph pipeline (lmopt-optimize-pipeline).
static FailureOr<OwningOpRef<ModuleOp>>
importOptimized(MLIRContext &context, StringRef path,
                const ImportOptions &options) {
  FailureOr<OwningOpRef<ModuleOp>> module =
      importONNXModel(context, path, options);
  if (failed(module))
    return failure();
  PassManager pm(&context, ModuleOp::getOperationName());
  buildLmoptOptimizePipeline(pm);
  if (failed(pm.run(**module)))
    return failure();
  return module;
}

/// The attentions of @main, one per encoder layer, in program order.
static SmallVector<AttentionOp> getLayerAttentions(ModuleOp module) {
  SmallVector<AttentionOp> attentions;
  if (auto main = module.lookupSymbol<func::FuncOp>("main"))
    main.walk([&](AttentionOp op) { attentions.push_back(op); });
  return attentions;
}

/// Attaches each layer's block importance on the calibration samples to
/// `model`'s attentions.
static llvm::Error measureImportance(MLIRContext &context,
                                     const ReduceLayersOptions &o,
                                     ModuleOp model, llvm::raw_ostream &log) {
  // One sample's shapes: the arrays stack samples on a first dim, or hold
  // one sample each (NAME_0, NAME_1, ...).
  std::vector<::lmopt::runtime::NamedTensor> arrays;
  ::lmopt::runtime::Status status =
      ::lmopt::runtime::readNpz(o.calibrationFile, arrays);
  if (!status.isOk())
    return failWith(log, "--calibration: " + status.message());
  ImportOptions pinned;
  for (const ::lmopt::runtime::NamedTensor &array : arrays) {
    StringRef name = array.name;
    ArrayRef<int64_t> shape = array.tensor.shape;
    auto [stem, suffix] = name.rsplit('_');
    unsigned sample = 0;
    if (!suffix.empty() && suffix != name && !suffix.getAsInteger(10, sample)) {
      if (sample == 0)
        pinned.inputShapes[stem] = SmallVector<int64_t>(shape);
    } else if (!shape.empty()) {
      pinned.inputShapes.try_emplace(name,
                                     SmallVector<int64_t>(shape.drop_front()));
    }
  }
  pinned.ignoreUnknownInputs = true;
  FailureOr<OwningOpRef<ModuleOp>> measured =
      importOptimized(context, o.inputPath, pinned);
  if (failed(measured))
    return makeDiagnosedError();
  llvm::Expected<quantization::CalibrationSet> set =
      quantization::loadCalibrationSet(
          o.calibrationFile, (*measured)->lookupSymbol<func::FuncOp>("main"));
  if (!set) {
    printErrors(set.takeError(), log);
    return makeDiagnosedError();
  }
  quantization::ModelRunner runner(*lookupTargetBackend("cpu"),
                                   TargetOptions());
  if (llvm::Error error =
          quantization::measureBlockImportance(runner, **measured, *set, log)) {
    printErrors(std::move(error), log);
    return makeDiagnosedError();
  }
  SmallVector<AttentionOp> from = getLayerAttentions(**measured);
  SmallVector<AttentionOp> to = getLayerAttentions(model);
  if (from.size() != to.size())
    return failWith(log, "the model has " + std::to_string(to.size()) +
                             " attentions with dynamic shapes but " +
                             std::to_string(from.size()) +
                             " with the calibration samples' shapes");
  for (auto [source, target] : llvm::zip_equal(from, to))
    if (Attribute score = source->getAttr(kBlockImportanceAttr))
      target->setAttr(kBlockImportanceAttr, score);
  return llvm::Error::success();
}

/// Checks the options alone, before the model is read.
static llvm::Error checkOptions(const ReduceLayersOptions &o,
                                llvm::raw_ostream &log) {
  if (o.keep.empty() == o.layers.empty())
    return failWith(log, "give the layers to keep (--keep=0,2,4) or how "
                         "many to keep by block importance (--layers=N "
                         "--calibration=inputs.npz), one of the two");
  double count = 0.0;
  if (!o.layers.empty() &&
      (StringRef(o.layers).getAsDouble(count) || !(count > 0.0)))
    return failWith(log, "--layers=" + o.layers +
                             " is neither a whole number of layers to keep "
                             "nor a fraction in (0, 1)");
  if (!o.layers.empty() && o.calibrationFile.empty())
    return failWith(log, "--layers=" + o.layers +
                             " ranks encoder layers by their block "
                             "importance on calibration samples; give them "
                             "with --calibration=inputs.npz");
  if (o.layers.empty() && !o.calibrationFile.empty())
    return failWith(log, "--calibration is for --layers; --keep names the "
                         "layers itself");
  if (o.outputPath.empty())
    return failWith(log, "no output file; pass -o student.onnx");
  if (!StringRef(o.inputPath).ends_with(".onnx"))
    return failWith(log, "'" + o.inputPath + "' is not an ONNX model (.onnx)");
  return llvm::Error::success();
}

llvm::Error mlir::lmopt::reduceLayers(const ReduceLayersOptions &o,
                                      llvm::raw_ostream &log) {
  registerModelCompiler();
  if (llvm::Error error = checkOptions(o, log))
    return error;
  DriverContext driver(log);
  MLIRContext &context = driver.getContext();
  FailureOr<OwningOpRef<ModuleOp>> model =
      importOptimized(context, o.inputPath, ImportOptions());
  if (failed(model))
    return makeDiagnosedError();
  std::string spec;
  if (!o.layers.empty()) {
    if (llvm::Error error = measureImportance(context, o, **model, log))
      return error;
    spec = "layers=" + o.layers;
  } else {
    spec = "keep-layers=" +
           llvm::join(llvm::map_range(
                          o.keep, [](int64_t i) { return std::to_string(i); }),
                      ",");
  }
  std::unique_ptr<Pass> prune = createPrunePass();
  std::string problem;
  if (failed(prune->initializeOptions(spec, [&](const Twine &message) {
        problem = StringRef(message.str()).trim().str();
        return failure();
      })))
    return failWith(log, "--layers=" + o.layers + ": " + problem);
  PruneSnapshot before = PruneSnapshot::measure(**model);
  PassManager pm(&context, ModuleOp::getOperationName());
  pm.addPass(std::move(prune));
  if (failed(pm.run(**model)))
    return makeDiagnosedError();
  printPruneReport(log, before, PruneSnapshot::measure(**model));
  ExportOptions exportOptions;
  exportOptions.externalDataFile = o.externalDataFile;
  if (failed(exportONNXModel(**model, o.outputPath, exportOptions)))
    return makeDiagnosedError();
  log << "wrote " << o.outputPath << "\n";
  return llvm::Error::success();
}

//===- ModelRunner.cpp - Run a module on a target for measurement ---------===//

#include "lmopt/Quantization/ModelRunner.h"

#include "lmopt/Dialect/Lmopt/IR/GraphNames.h"
#include "lmopt/Dialect/Lmopt/IR/LmoptOps.h"
#include "lmopt/Dialect/Lmopt/Transforms/Quantize.h"
#include "lmopt/Support/DiagnosedError.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace mlir::lmopt;
using namespace mlir::lmopt::quantization;
namespace rt = ::lmopt::runtime;

static llvm::Error makeError(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

std::vector<std::string>
mlir::lmopt::quantization::getLinearNames(func::FuncOp main) {
  std::vector<std::string> names;
  main.walk([&](LinearOp linear) { names.push_back(getLayerName(linear)); });
  return names;
}

static bool isF32Tensor(Value value) {
  auto type = llvm::dyn_cast<RankedTensorType>(value.getType());
  return type && type.getElementType().isF32();
}

OwningOpRef<ModuleOp> mlir::lmopt::quantization::addLinearProbes(
    ModuleOp module, bool probeInputs, bool probeOutputs, ProbeLayout &layout) {
  OwningOpRef<ModuleOp> probed(module.clone());
  auto main = probed->lookupSymbol<func::FuncOp>("main");
  auto ret = llvm::cast<func::ReturnOp>(main.getBody().back().getTerminator());
  SmallVector<Value> results(ret.getOperands());
  layout = ProbeLayout();
  layout.numModelOutputs = results.size();
  llvm::DenseMap<Value, int> index;
  for (auto [i, value] : llvm::enumerate(results))
    index.try_emplace(value, int(i));
  auto probe = [&](Value value) -> int {
    if (!isF32Tensor(value))
      return -1;
    auto [it, inserted] = index.try_emplace(value, int(results.size()));
    if (inserted)
      results.push_back(value);
    return it->second;
  };
  std::vector<std::string> names = getLinearNames(main);
  size_t next = 0;
  main.walk([&](LinearOp linear) {
    int input = probeInputs ? probe(linear.getInput()) : -1;
    int output = probeOutputs ? probe(linear.getOutput()) : -1;
    layout.linears.push_back({names[next++], input, output});
  });
  OpBuilder builder(ret);
  func::ReturnOp::create(builder, ret.getLoc(), results);
  ret.erase();
  main.setFunctionType(FunctionType::get(module.getContext(),
                                         main.getArgumentTypes(),
                                         ValueRange(results).getTypes()));
  if (auto names = main->getAttrOfType<ArrayAttr>(kGraphOutputNamesAttr)) {
    SmallVector<Attribute> extended(names.begin(), names.end());
    for (size_t i = extended.size(); i < results.size(); ++i)
      extended.push_back(
          StringAttr::get(module.getContext(), "probe" + std::to_string(i)));
    main->setAttr(kGraphOutputNamesAttr,
                  ArrayAttr::get(module.getContext(), extended));
  }
  return probed;
}

ModelRunner::~ModelRunner() {
  for (const std::string &path : temporaries)
    llvm::sys::fs::remove(path);
}

llvm::Expected<const CompiledKernels *>
ModelRunner::compile(const BundlePlan &plan) {
  // Variants that differ only in their linears share their kernels.
  std::string key;
  llvm::raw_string_ostream os(key);
  if (plan.kernels)
    plan.kernels.get().print(os);
  auto cached = kernelCache.find(key);
  if (cached != kernelCache.end())
    return &cached->second;
  llvm::Expected<CompiledKernels> compiled = driver.compileKernels(plan);
  if (!compiled)
    return llvm::handleErrors(compiled.takeError(), [](const DiagnosedError &) {
      return makeError("kernel compilation failed (see the "
                       "diagnostics above)");
    });
  return &kernelCache.emplace(std::move(key), std::move(*compiled))
              .first->second;
}

llvm::Expected<uint64_t> ModelRunner::writeBundle(ModuleOp module,
                                                  llvm::StringRef path,
                                                  const BundleMeta &meta) {
  FailureOr<BundlePlan> plan = driver.plan(module);
  if (failed(plan))
    return makeError("the " + driver.getBackend().getName().upper() +
                     " backend cannot plan the model (see the diagnostics "
                     "above)");
  llvm::Expected<const CompiledKernels *> kernels = compile(*plan);
  if (!kernels)
    return kernels.takeError();
  return driver.writeBundle(path, *plan, **kernels, meta);
}

llvm::Expected<std::unique_ptr<rt::Session>>
ModelRunner::open(ModuleOp module) {
  llvm::SmallString<128> path;
  if (std::error_code ec =
          llvm::sys::fs::createTemporaryFile("lmopt-measure", "lmopt", path))
    return makeError("cannot create a temporary bundle: " + ec.message());
  temporaries.push_back(path.str().str());
  llvm::Expected<uint64_t> written = writeBundle(module, path);
  if (!written)
    return written.takeError();
  std::unique_ptr<rt::Session> session;
  rt::Status status = rt::Session::create(path.str().str(), {}, session);
  if (!status.isOk())
    return makeError("cannot run the measurement bundle: " + status.message());
  return session;
}

llvm::Error ModelRunner::runEach(llvm::ArrayRef<ModuleOp> modules,
                                 const CalibrationSet &samples,
                                 SampleConsumer consume) {
  std::vector<std::unique_ptr<rt::Session>> sessions;
  for (ModuleOp module : modules) {
    llvm::Expected<std::unique_ptr<rt::Session>> session = open(module);
    if (!session)
      return session.takeError();
    sessions.push_back(std::move(*session));
  }
  std::vector<std::vector<rt::NamedTensor>> outputs(modules.size());
  for (auto [sample, inputs] : llvm::enumerate(samples.samples)) {
    for (auto [session, out] : llvm::zip(sessions, outputs)) {
      rt::Status status = session->run(inputs, out);
      if (!status.isOk())
        return makeError("calibration sample " + llvm::Twine(sample) + ": " +
                         status.message());
    }
    consume(sample, outputs);
  }
  return llvm::Error::success();
}

llvm::Expected<std::vector<std::vector<rt::NamedTensor>>>
ModelRunner::run(ModuleOp module, const CalibrationSet &samples) {
  std::vector<std::vector<rt::NamedTensor>> outputs;
  if (llvm::Error error = runEach(
          {module}, samples,
          [&](size_t, llvm::ArrayRef<std::vector<rt::NamedTensor>> out) {
            outputs.push_back(out[0]);
          }))
    return std::move(error);
  return outputs;
}

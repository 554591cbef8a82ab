//===- lmopt-kernel-test.cpp - compile and run generated CPU kernels ------===//
//
// Compiles every function of an .mlir module with compileKernels, loads the
// shared object, runs one kernel through its `name(void **args)` entry point
// on NumPy inputs, and writes or compares the outputs by name (the names
// lmopt-interpret uses, so its outputs are the reference). Tests use it to
// check generated code against the reference evaluator
// (docs/cpu-backend.md, "Kernel code generation").
//
//===----------------------------------------------------------------------===//

#include "lmopt/Dialect/Lmopt/IR/GraphNames.h"
#include "lmopt/Dialect/Lmopt/IR/LmoptDialect.h"
#include "lmopt/Format/Float16.h"
#include "lmopt/Format/Npy.h"
#include "lmopt/Runtime/CPU/KernelLibrary.h"
#include "lmopt/Target/CPU/KernelCodegen.h"
#include "lmopt/Target/Common/RuntimeTypes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Quant/IR/Quant.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FileUtilities.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <limits>
#include <memory>
#include <optional>

using namespace mlir;
namespace rt = ::lmopt::runtime;

static llvm::cl::opt<std::string> inputFile(llvm::cl::Positional,
                                            llvm::cl::desc("<kernels.mlir>"),
                                            llvm::cl::Required);
static llvm::cl::opt<std::string>
    kernelName("kernel", llvm::cl::desc("Kernel to run (none: compile only)"));
static llvm::cl::opt<std::string>
    inputsNpz("inputs", llvm::cl::desc("Inputs by argument name (.npz)"),
              llvm::cl::value_desc("file.npz"));
static llvm::cl::opt<std::string>
    outputNpz("output", llvm::cl::desc("Write the outputs by name (.npz)"),
              llvm::cl::value_desc("file.npz"));
static llvm::cl::opt<std::string>
    compareNpz("compare",
               llvm::cl::desc("Compare the outputs with these by name (.npz)"),
               llvm::cl::value_desc("ref.npz"));
static llvm::cl::opt<double>
    relTolerance("rtol", llvm::cl::desc("Relative tolerance of --compare"),
                 llvm::cl::init(1e-5));
static llvm::cl::opt<double>
    absTolerance("atol", llvm::cl::desc("Absolute tolerance of --compare"),
                 llvm::cl::init(1e-6));
static llvm::cl::opt<std::string>
    cpuName("cpu", llvm::cl::desc("LLVM CPU name, or 'host'"),
            llvm::cl::init("host"));
static llvm::cl::opt<unsigned>
    optLevel("opt-level", llvm::cl::desc("LLVM optimization level (0-3)"),
             llvm::cl::init(3));
static llvm::cl::opt<unsigned> benchmarkRuns(
    "benchmark",
    llvm::cl::desc("Also run the kernel this many times and print the best "
                   "and median time per call (not for lit tests)"),
    llvm::cl::init(0));
static llvm::cl::opt<unsigned> numParts(
    "parts",
    llvm::cl::desc("Run the kernel's partitioned entry for each of this many "
                   "shares of its rows, last share first (0: the whole "
                   "kernel's entry)"),
    llvm::cl::init(0));
static llvm::cl::opt<unsigned> benchmarkThreads(
    "benchmark-threads",
    llvm::cl::desc("With --benchmark: run a partitioned kernel on this many "
                   "threads, as the runtime does (a KernelTeam)"),
    llvm::cl::init(1));
static llvm::cl::opt<bool> printBufferizedIR(
    "print-bufferized-ir",
    llvm::cl::desc("Print the kernels after fusion and bufferization"));
static llvm::cl::opt<bool>
    printLLVMIR("print-llvm-ir",
                llvm::cl::desc("Print the optimized LLVM IR to stdout"));

static int fail(const llvm::Twine &message) {
  llvm::errs() << "lmopt-kernel-test: error: " << message << "\n";
  return 1;
}

/// The NumPy dtype that holds `type`, if any: NumPy has no bf16.
static std::optional<rt::DType> getDType(Type type) {
  std::optional<rt::DType> dtype = mlir::lmopt::getRuntimeDType(type);
  if (dtype == rt::DType::BF16)
    return std::nullopt;
  return dtype;
}

/// Element `i` of `tensor` as a double (f16 decoded).
static double getElement(const rt::Tensor &tensor, uint64_t i) {
  auto load = [&](auto zero) {
    decltype(zero) value;
    std::memcpy(&value, tensor.data.data() + i * sizeof(value), sizeof(value));
    return static_cast<double>(value);
  };
  switch (tensor.dtype) {
  case rt::DType::F32:
    return load(float());
  case rt::DType::F64:
    return load(double());
  case rt::DType::F16:
  case rt::DType::BF16: {
    uint16_t bits;
    std::memcpy(&bits, tensor.data.data() + i * 2, 2);
    return tensor.dtype == rt::DType::F16 ? rt::halfToFloat(bits)
                                          : rt::bfloat16ToFloat(bits);
  }
  case rt::DType::Bool:
  case rt::DType::U8:
    return load(uint8_t());
  case rt::DType::I8:
    return load(int8_t());
  case rt::DType::I16:
    return load(int16_t());
  case rt::DType::U16:
    return load(uint16_t());
  case rt::DType::I32:
    return load(int32_t());
  case rt::DType::U32:
    return load(uint32_t());
  case rt::DType::I64:
    return load(int64_t());
  case rt::DType::U64:
    return load(uint64_t());
  }
  return 0.0;
}

static std::string formatShape(ArrayRef<int64_t> shape) {
  std::string text = "[";
  for (auto [i, dim] : llvm::enumerate(shape))
    text += (i ? ", " : "") + std::to_string(dim);
  return text + "]";
}

/// Compares by numpy.allclose's rule; prints one line per output.
static FailureOr<bool> compareOutputs(ArrayRef<rt::NamedTensor> outputs) {
  std::vector<rt::NamedTensor> expected;
  if (rt::Status status = rt::readNpz(compareNpz, expected); !status) {
    llvm::errs() << "lmopt-kernel-test: error: " << status.toString() << "\n";
    return failure();
  }
  bool allMatch = true;
  for (const rt::NamedTensor &output : outputs) {
    auto it = llvm::find_if(expected, [&](const rt::NamedTensor &named) {
      return named.name == output.name;
    });
    if (it == expected.end()) {
      llvm::outs() << output.name << ": no reference value: FAIL\n";
      allMatch = false;
      continue;
    }
    if (it->tensor.shape != output.tensor.shape) {
      llvm::outs() << output.name << ": shape "
                   << formatShape(output.tensor.shape) << ", expected "
                   << formatShape(it->tensor.shape) << ": FAIL\n";
      allMatch = false;
      continue;
    }
    double maxAbs = 0.0, worst = 0.0;
    bool match = true;
    for (uint64_t i = 0, e = output.tensor.elementCount(); i < e; ++i) {
      double a = getElement(output.tensor, i), b = getElement(it->tensor, i);
      double diff = std::fabs(a - b);
      if (std::isnan(a) || std::isnan(b))
        diff = std::isnan(a) && std::isnan(b)
                   ? 0.0
                   : std::numeric_limits<double>::infinity();
      else if (a == b)
        diff = 0.0; // equal infinities
      double allowed = absTolerance + relTolerance * std::fabs(b);
      maxAbs = std::max(maxAbs, diff);
      worst = std::max(worst, allowed > 0 ? diff / allowed
                              : diff > 0  ? INFINITY
                                          : 0.0);
      match &= diff <= allowed;
    }
    llvm::outs() << output.name << ": shape "
                 << formatShape(output.tensor.shape) << ", max abs error "
                 << llvm::format("%.3e", maxAbs) << ", "
                 << llvm::format("%.2f", worst)
                 << " of tolerance: " << (match ? "PASS" : "FAIL") << "\n";
    allMatch &= match;
  }
  return allMatch;
}

namespace {
/// A 64-byte aligned buffer, as the kernel ABI promises.
struct AlignedBuffer {
  explicit AlignedBuffer(size_t size)
      : data(static_cast<uint8_t *>(std::aligned_alloc(
            64, std::max<size_t>(64, (size + 63) / 64 * 64)))) {}
  ~AlignedBuffer() { std::free(data); }
  AlignedBuffer(const AlignedBuffer &) = delete;
  AlignedBuffer &operator=(const AlignedBuffer &) = delete;
  uint8_t *data;
};
} // namespace

/// Writes `library` to a temporary file and dlopens it; the file is removed
/// once loaded.
static void *loadLibrary(const std::vector<uint8_t> &library) {
  llvm::SmallString<128> path;
  int fd;
  if (llvm::sys::fs::createTemporaryFile("lmopt-kernel-test", "so", fd, path)) {
    fail("cannot create a temporary file for the kernels");
    return nullptr;
  }
  llvm::FileRemover remove(path);
  {
    llvm::raw_fd_ostream os(fd, /*shouldClose=*/true);
    os.write(reinterpret_cast<const char *>(library.data()), library.size());
  }
  void *handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle)
    fail(llvm::Twine("dlopen failed: ") + dlerror());
  return handle;
}

static int runKernel(func::FuncOp func, void *handle) {
  using KernelFn = void (*)(void **);
  using PartFn = void (*)(void **, int64_t, int64_t);
  auto whole = reinterpret_cast<KernelFn>(dlsym(handle, kernelName.c_str()));
  if (!whole)
    return fail("the shared object does not export '" + kernelName + "'");
  std::string partName = "__lmopt_part_" + kernelName;
  auto part = reinterpret_cast<PartFn>(dlsym(handle, partName.c_str()));
  if (numParts > 0 && !part)
    return fail("the shared object does not export '" + partName +
                "' (the kernel is not partitioned)");
  auto kernel = [&](void **args) {
    if (numParts == 0)
      return whole(args);
    for (int64_t p = int64_t(numParts) - 1; p >= 0; --p)
      part(args, p, numParts);
  };

  llvm::StringMap<rt::Tensor> available;
  if (!inputsNpz.empty()) {
    std::vector<rt::NamedTensor> tensors;
    if (rt::Status status = rt::readNpz(inputsNpz, tensors); !status)
      return fail(status.toString());
    for (rt::NamedTensor &named : tensors)
      available[named.name] = std::move(named.tensor);
  }
  std::vector<std::unique_ptr<AlignedBuffer>> buffers;
  std::vector<void *> args;
  for (auto [name, type] : llvm::zip(mlir::lmopt::getGraphInputNames(func),
                                     func.getArgumentTypes())) {
    auto tensorType = llvm::cast<RankedTensorType>(type);
    auto it = available.find(name);
    if (it == available.end())
      return fail("no value for input '" + name + "'");
    std::optional<rt::DType> dtype = getDType(tensorType.getElementType());
    if (it->second.dtype != dtype ||
        ArrayRef<int64_t>(it->second.shape) != tensorType.getShape())
      return fail("input '" + name + "' is " + rt::dtypeName(it->second.dtype) +
                  formatShape(it->second.shape) + ", the kernel takes " +
                  (dtype ? rt::dtypeName(*dtype) : "?") +
                  formatShape(tensorType.getShape()));
    buffers.push_back(std::make_unique<AlignedBuffer>(it->second.data.size()));
    std::memcpy(buffers.back()->data, it->second.data.data(),
                it->second.data.size());
    args.push_back(buffers.back()->data);
  }
  std::vector<rt::NamedTensor> outputs;
  for (auto [name, type] : llvm::zip(mlir::lmopt::getGraphOutputNames(func),
                                     func.getResultTypes())) {
    auto tensorType = llvm::cast<RankedTensorType>(type);
    std::optional<rt::DType> dtype = getDType(tensorType.getElementType());
    if (!dtype)
      return fail("result '" + name + "' has no NumPy dtype");
    rt::Tensor tensor;
    tensor.dtype = *dtype;
    tensor.shape.assign(tensorType.getShape().begin(),
                        tensorType.getShape().end());
    tensor.data.resize(tensor.elementCount() * rt::dtypeSize(*dtype));
    // Filled with NaN bytes, so an element the kernel skips shows.
    buffers.push_back(std::make_unique<AlignedBuffer>(tensor.data.size()));
    std::memset(buffers.back()->data, 0xff, tensor.data.size());
    args.push_back(buffers.back()->data);
    outputs.push_back({name, std::move(tensor)});
  }
  kernel(args.data());
  if (benchmarkRuns > 0) {
    std::optional<rt::KernelTeam> team;
    if (benchmarkThreads > 1) {
      if (!part)
        return fail("--threads needs a partitioned kernel; '" + kernelName +
                    "' has no '" + partName + "'");
      team.emplace(int(benchmarkThreads));
    }
    std::vector<double> seconds;
    for (unsigned i = 0; i < benchmarkRuns; ++i) {
      auto start = std::chrono::steady_clock::now();
      if (team)
        team->run(part, args.data(), 4 * team->size());
      else
        kernel(args.data());
      seconds.push_back(std::chrono::duration<double>(
                            std::chrono::steady_clock::now() - start)
                            .count());
    }
    llvm::sort(seconds);
    if (team)
      llvm::outs() << benchmarkThreads << " threads: ";
    llvm::outs() << kernelName << ": best "
                 << llvm::format("%.2f", seconds.front() * 1e6)
                 << " us, median "
                 << llvm::format("%.2f", seconds[seconds.size() / 2] * 1e6)
                 << " us over " << benchmarkRuns << " runs\n";
  }
  size_t firstResult = func.getNumArguments();
  for (auto [i, output] : llvm::enumerate(outputs))
    std::memcpy(output.tensor.data.data(), args[firstResult + i],
                output.tensor.data.size());

  if (!outputNpz.empty())
    if (rt::Status status = rt::writeNpz(outputNpz, outputs); !status)
      return fail(status.toString());
  if (compareNpz.empty()) {
    for (const rt::NamedTensor &output : outputs)
      llvm::outs() << output.name << ": shape "
                   << formatShape(output.tensor.shape) << "\n";
    return 0;
  }
  FailureOr<bool> match = compareOutputs(outputs);
  if (failed(match))
    return 1;
  return *match ? 0 : 1;
}

int main(int argc, char **argv) {
  llvm::InitLLVM initLLVM(argc, argv);
  llvm::cl::ParseCommandLineOptions(
      argc, argv,
      "lmopt kernel test driver: compiles kernels to a shared object and "
      "runs one on NumPy inputs\n");

  DialectRegistry registry;
  registry
      .insert<mlir::lmopt::LmoptDialect, arith::ArithDialect, func::FuncDialect,
              quant::QuantDialect, tensor::TensorDialect>();
  MLIRContext context(registry);
  llvm::SourceMgr sourceMgr;
  SourceMgrDiagnosticHandler diagnostics(sourceMgr, &context);
  std::string errorMessage;
  auto buffer = llvm::MemoryBuffer::getFileOrSTDIN(inputFile);
  if (!buffer)
    return fail("cannot read '" + inputFile +
                "': " + buffer.getError().message());
  sourceMgr.AddNewSourceBuffer(std::move(*buffer), llvm::SMLoc());
  OwningOpRef<ModuleOp> module = parseSourceFile<ModuleOp>(sourceMgr, &context);
  if (!module)
    return 1;

  mlir::lmopt::cpu::KernelCodegenOptions options;
  options.cpu = cpuName;
  options.optLevel = optLevel;
  if (printBufferizedIR)
    options.bufferizedIROutput = &llvm::outs();
  if (printLLVMIR)
    options.optimizedIROutput = &llvm::outs();
  FailureOr<std::vector<uint8_t>> library =
      mlir::lmopt::cpu::compileKernels(*module, options);
  if (failed(library))
    return 1;
  if (kernelName.empty())
    return 0;

  auto func = module->lookupSymbol<func::FuncOp>(kernelName);
  if (!func)
    return fail("no kernel '" + kernelName + "' in '" + inputFile + "'");
  void *handle = loadLibrary(*library);
  if (!handle)
    return 1;
  int status = runKernel(func, handle);
  dlclose(handle);
  return status;
}

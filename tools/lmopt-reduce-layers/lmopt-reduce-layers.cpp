//===- lmopt-reduce-layers.cpp - A student model from a teacher's layers --===//
//
//   lmopt-reduce-layers teacher.onnx --keep=0,2,4 -o student.onnx
//   lmopt-reduce-layers teacher.onnx --layers=6 --calibration=data.npz \
//       -o student.onnx
//
// Flags only; the flow is lmopt::reduceLayers (Driver/ReduceLayers.h).
//
//===----------------------------------------------------------------------===//

#include "lmopt/Driver/ReduceLayers.h"
#include "lmopt/Support/DiagnosedError.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"

#include <cstdlib>

namespace cl = llvm::cl;

static cl::OptionCategory category("lmopt-reduce-layers options");

static cl::opt<std::string> inputFile(cl::Positional, cl::Required,
                                      cl::desc("<teacher.onnx>"),
                                      cl::cat(category));
static cl::opt<std::string> outputFile("o", cl::desc("The student model"),
                                       cl::value_desc("student.onnx"),
                                       cl::cat(category));
static cl::opt<std::string>
    keep("keep",
         cl::desc("Encoder layers to keep, ascending, numbered from 0 "
                  "(e.g. 0,2,4)"),
         cl::value_desc("i,j,..."), cl::cat(category));
static cl::opt<std::string>
    layers("layers",
           cl::desc("Keep this many encoder layers (or this fraction, in "
                    "(0, 1)), those of highest block importance on "
                    "--calibration"),
           cl::value_desc("N"), cl::cat(category));
static cl::opt<std::string>
    calibration("calibration",
                cl::desc("Samples block importance is measured on (.npz, as "
                         "lmopt-compile --calibration)"),
                cl::value_desc("inputs.npz"), cl::cat(category));
static cl::opt<std::string> externalData(
    "external-data",
    cl::desc("Write initializers of 1 KiB or more to this file next to the "
             "output (needed past 2 GiB)"),
    cl::value_desc("NAME"), cl::cat(category));

int main(int argc, char **argv) {
  llvm::InitLLVM initLLVM(argc, argv);
  cl::HideUnrelatedOptions(category);
  cl::ParseCommandLineOptions(
      argc, argv,
      "lmopt-reduce-layers: write a student ONNX model from a teacher's "
      "encoder layers\n");
  mlir::lmopt::ReduceLayersOptions options;
  options.inputPath = inputFile;
  options.outputPath = outputFile;
  options.layers = layers;
  options.calibrationFile = calibration;
  options.externalDataFile = externalData;
  llvm::SmallVector<llvm::StringRef> items;
  llvm::StringRef(keep).split(items, ',');
  for (llvm::StringRef item : items) {
    if (keep.empty())
      break;
    int64_t index = 0;
    if (item.trim().getAsInteger(10, index) || index < 0) {
      llvm::errs() << "error: --keep: '" << item
                   << "' is not a layer index (a number from 0)\n";
      return EXIT_FAILURE;
    }
    options.keep.push_back(index);
  }
  if (llvm::Error error = mlir::lmopt::reduceLayers(options, llvm::errs())) {
    mlir::lmopt::printErrors(std::move(error), llvm::errs());
    return EXIT_FAILURE;
  }
  return EXIT_SUCCESS;
}

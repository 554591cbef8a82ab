//===- QuantizeFlags.cpp - lmopt-compile's quantization flags -------------===//
//
// `--quantize` and its companions as QuantizeDriverOptions; the step itself
// is lib/Quantization's QuantizeDriver (docs/quantization.md,
// "lmopt-compile").
//
//===----------------------------------------------------------------------===//

#include "QuantizeFlags.h"

using namespace mlir::lmopt::quantization;
namespace cl = llvm::cl;

cl::OptionCategory &lmopt_compile::getQuantizeCategory() {
  static cl::OptionCategory category("lmopt-compile quantization options");
  return category;
}

static cl::opt<std::string> quantizeMode(
    "quantize",
    cl::desc("Quantize the linears: int8-dynamic, int8-dynamic-per-tensor, "
             "int8-static, int4-weight, bf16 or fp16 (docs/quantization.md)"),
    cl::value_desc("mode"), cl::cat(lmopt_compile::getQuantizeCategory()));
static cl::opt<bool> quantizeEmbeddings(
    "quantize-embeddings",
    cl::desc("With --quantize: also store the embedding tables (constant "
             "gather tables of >= 4096 elements) as int8 with one scale per "
             "row (docs/quantization.md)"),
    cl::cat(lmopt_compile::getQuantizeCategory()));
static cl::opt<std::string> calibrationFile(
    "calibration",
    cl::desc("Calibration inputs (.npz, or a token dataset PREFIX.idx): "
             "ranges for int8-static, and the samples the accuracy report "
             "and --sensitivity run"),
    cl::value_desc("inputs.npz|PREFIX.idx"),
    cl::cat(lmopt_compile::getQuantizeCategory()));
static cl::opt<std::string> calibrationMethodText(
    "calibration-method",
    cl::desc("How a linear input's range is chosen: minmax (default), "
             "percentile, percentile:P or entropy"),
    cl::init("minmax"), cl::cat(lmopt_compile::getQuantizeCategory()));
static cl::opt<std::string> calibrationTableOut(
    "calibration-table-out",
    cl::desc("Also write the calibration table (JSON) the quantize pass "
             "reads"),
    cl::value_desc("table.json"),
    cl::cat(lmopt_compile::getQuantizeCategory()));
static cl::list<std::string>
    excludeGlobs("exclude",
                 cl::desc("Keep the linears whose names match these globs in "
                          "f32 (comma separated, repeatable)"),
                 cl::CommaSeparated, cl::value_desc("glob,..."),
                 cl::cat(lmopt_compile::getQuantizeCategory()));
static cl::opt<unsigned>
    blockSize("block-size",
              cl::desc("int4-weight: weights per scale along K (default: "
                       "the quantize pass's)"),
              cl::cat(lmopt_compile::getQuantizeCategory()));
static cl::opt<bool> asymmetric(
    "asymmetric",
    cl::desc("int4-weight: u4 blocks with a zero point each instead of "
             "symmetric i4 (the pass's symmetric=false)"),
    cl::cat(lmopt_compile::getQuantizeCategory()));
static cl::opt<std::string> int4Method(
    "int4-method",
    cl::desc("int4-weight: how weights are rounded: gptq (error compensation "
             "from --calibration; the default with it) or rtn (to nearest; "
             "the default without)"),
    cl::value_desc("rtn|gptq"), cl::cat(lmopt_compile::getQuantizeCategory()));
static cl::opt<std::string> quantizedMlirOut(
    "quantized-mlir-out",
    cl::desc("Also write the module as quantized, before planning (MLIR; "
             "e.g. for lmopt-translate --export-onnx)"),
    cl::value_desc("model.mlir"),
    cl::cat(lmopt_compile::getQuantizeCategory()));
static cl::opt<std::string> quantizeReport(
    "quantize-report",
    cl::desc("Also write the quantization report as JSON ('-' for stdout)"),
    cl::value_desc("file.json|-"),
    cl::cat(lmopt_compile::getQuantizeCategory()));
static cl::opt<std::string> quantizeAttention(
    "quantize-attention",
    cl::desc("With --quantize: run attention's two products in bf16 with "
             "f32 accumulation (the softmax stays f32): auto (default: with "
             "--quantize=bf16 only), bf16 (with every mode) or f32 (never)"),
    cl::init("auto"), cl::value_desc("auto|bf16|f32"),
    cl::cat(lmopt_compile::getQuantizeCategory()));
static cl::opt<std::string> sensitivity(
    "sensitivity",
    cl::desc("Quantize one linear at a time, print the N most damaging and "
             "suggest an --exclude list reaching --sensitivity-target"),
    cl::ValueOptional, cl::value_desc("N"),
    cl::cat(lmopt_compile::getQuantizeCategory()));
static cl::opt<double> sensitivityTarget(
    "sensitivity-target",
    cl::desc("Output cosine (vs f32) the suggested --exclude list must "
             "reach (default 0.99)"),
    cl::init(0.99), cl::cat(lmopt_compile::getQuantizeCategory()));

bool lmopt_compile::isQuantizationRequested() {
  return quantizeMode.getNumOccurrences() ||
         calibrationFile.getNumOccurrences() ||
         sensitivity.getNumOccurrences() || excludeGlobs.getNumOccurrences() ||
         quantizeReport.getNumOccurrences() ||
         calibrationTableOut.getNumOccurrences() ||
         blockSize.getNumOccurrences() || asymmetric.getNumOccurrences() ||
         calibrationMethodText.getNumOccurrences() ||
         quantizeEmbeddings.getNumOccurrences() ||
         int4Method.getNumOccurrences() ||
         quantizedMlirOut.getNumOccurrences() ||
         quantizeAttention.getNumOccurrences();
}

QuantizeDriverOptions lmopt_compile::getQuantizeDriverOptions() {
  QuantizeDriverOptions options;
  options.mode = quantizeMode;
  options.quantizeEmbeddings = quantizeEmbeddings;
  options.calibrationFile = calibrationFile;
  options.calibrationMethod = calibrationMethodText;
  options.calibrationTableOut = calibrationTableOut;
  options.exclude.assign(excludeGlobs.begin(), excludeGlobs.end());
  if (blockSize.getNumOccurrences())
    options.blockSize = blockSize;
  options.asymmetric = asymmetric;
  if (int4Method.getNumOccurrences())
    options.int4Method = int4Method;
  options.quantizedMlirOut = quantizedMlirOut;
  options.attention = quantizeAttention;
  options.writeReport = !quantizeReport.empty();
  if (sensitivity.getNumOccurrences())
    options.sensitivity = sensitivity;
  options.sensitivityTarget = sensitivityTarget;
  return options;
}

const std::string &lmopt_compile::getQuantizeReportPath() {
  return quantizeReport;
}

//===- QuantFusion.cpp - Input conversions moved into the producing step --===//
//
// A per-token int8 linear quantizes its f32 input row by row before the
// integer product. When that input is the output of another int8 linear
// and nothing else reads it (the FFN's up projection feeding its down
// projection), the producer's epilogue quantizes each row as it finishes
// it: the f32 tensor is never written, the consumer reads int8 bytes and
// row scales, and one pass over memory disappears. The values are the
// same bits either way (the same quantizer runs on the same f32 row).
//
// A bf16 linear's input is cast to bf16 by a kernel. When that kernel is
// the cast alone and reads the output of another bf16 linear or an
// attention that nothing else reads (the FFN's up projection feeding its
// down projection, the attention feeding its output projection), the
// producer stores bf16 directly (the same rounding), and both the kernel's
// pass and the f32 tensor disappear.
//
// An attention with bf16 products rounds its query, key and value to bf16
// itself. When they are the output of a bf16 or int8 linear that nothing
// else reads (BERT's fused QKV projection), that linear stores bf16 and the
// attention reads it as it is: half the bytes written and read, and no
// conversion in the attention. Only where that changes no bit: products on
// the tiles, and a power-of-two scale (rounding Q and then scaling it is
// rounding Q times the scale).
//
// A static int8 linear's input is quantized by a kernel (lmopt.quantize
// with the calibrated scale and zero point). When that kernel is the
// quantization alone and reads the output of an int8 linear or an
// attention that nothing else reads (the FFN's up projection feeding its
// down projection, the attention feeding its output projection), the
// producer quantizes as the kernel would (the same bytes), and the
// kernel's pass and the f32 tensor disappear.
//
//===----------------------------------------------------------------------===//

#include "QuantPlan.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Quant/IR/QuantTypes.h"
#include "mlir/IR/SymbolTable.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <optional>
#include <string_view>

using namespace mlir;
using namespace mlir::lmopt;
using namespace mlir::lmopt::cpu;
namespace rt = ::lmopt::runtime;

/// The step's `mode` attribute, or "" without one.
static std::string_view modeOf(const rt::PlanStep &step) {
  const rt::PlanAttr *mode = step.findAttr("mode");
  return mode && mode->kind == rt::PlanAttr::Kind::String
             ? std::string_view(mode->stringValue)
             : std::string_view();
}

static bool hasFlag(const rt::PlanStep &step, const char *name) {
  const rt::PlanAttr *attr = step.findAttr(name);
  return attr && attr->kind == rt::PlanAttr::Kind::Int && attr->intValue != 0;
}

static rt::PlanAttr flagAttr(const char *name) {
  rt::PlanAttr attr;
  attr.name = name;
  attr.kind = rt::PlanAttr::Kind::Int;
  attr.intValue = 1;
  return attr;
}

namespace {
/// Who reads each tensor's bytes, per alias root: how many step operands
/// and the last step among them; and the tensors a rewrite must leave as
/// they are (`pinned`): those sharing bytes with another, model outputs and
/// state views.
struct Readers {
  std::vector<unsigned> reads;
  std::vector<int64_t> reader;
  std::vector<bool> pinned;

  Readers(const rt::Plan &plan, const std::vector<uint32_t> &aliasRoot)
      : reads(plan.tensors.size(), 0), reader(plan.tensors.size(), -1),
        pinned(plan.tensors.size(), false) {
    for (uint32_t t = 0; t < plan.tensors.size(); ++t)
      if (aliasRoot[t] != t)
        pinned[aliasRoot[t]] = pinned[t] = true;
    for (const rt::PlanValue &out : plan.outputs)
      pinned[aliasRoot[out.tensor]] = true;
    for (const auto *uses : {&plan.stateReads, &plan.stateWrites})
      for (const rt::PlanStateUse &use : *uses)
        pinned[aliasRoot[use.tensor]] = true;
    for (size_t s = 0; s < plan.steps.size(); ++s)
      for (uint32_t operand : plan.steps[s].operands) {
        ++reads[aliasRoot[operand]];
        reader[aliasRoot[operand]] = int64_t(s);
      }
  }

  /// The one step that reads `t`'s bytes, unless `t` is pinned.
  std::optional<size_t> soleReader(uint32_t t) const {
    if (pinned[t] || reads[t] != 1 || reader[t] < 0)
      return std::nullopt;
    return size_t(reader[t]);
  }
};
} // namespace

unsigned mlir::lmopt::cpu::fuseRowQuantization(
    rt::Plan &plan, std::vector<uint32_t> &aliasRoot) {
  const Readers readers(plan, aliasRoot);

  unsigned fused = 0;
  for (rt::PlanStep &producer : plan.steps) {
    if (producer.kind != rt::StepKind::QuantLinear || modeOf(producer).substr(0, 5) != "int8_" ||
        hasFlag(producer, "has_residual") ||
        hasFlag(producer, "quantize_output") || producer.results.size() != 1)
      continue;
    uint32_t out = producer.results[0];
    std::optional<size_t> read = readers.soleReader(out);
    if (!read)
      continue;
    rt::PlanStep &consumer = plan.steps[*read];
    if (consumer.kind != rt::StepKind::QuantLinear ||
        modeOf(consumer) != "int8_dynamic_per_token" || consumer.operands.empty() ||
        consumer.operands[0] != out || hasFlag(consumer, "input_quantized"))
      continue;
    const rt::PlanTensor &product = plan.tensors[out];
    if (product.dtype != rt::DType::F32 || product.dims.size() < 2)
      continue;

    // The row scales: the output's dims without the last.
    rt::PlanTensor scales;
    scales.name = producer.name + ".row_scales";
    scales.dtype = rt::DType::F32;
    scales.dims.assign(product.dims.begin(), product.dims.end() - 1);
    if (product.isSymbolic())
      scales.dimExprs.assign(product.dimExprs.begin(),
                             product.dimExprs.end() - 1);
    // The f32 product the epilogue reads, dead once the step is done.
    rt::PlanTensor scratch = product;
    scratch.name = producer.name + ".product";
    uint32_t scalesId = plan.addTensor(std::move(scales));
    aliasRoot.push_back(scalesId);
    uint32_t scratchId = plan.addTensor(std::move(scratch));
    aliasRoot.push_back(scratchId);
    plan.tensors[out].dtype = rt::DType::I8;

    producer.results = {out, scalesId, scratchId};
    producer.attrs.push_back(flagAttr("quantize_output"));
    consumer.operands.insert(consumer.operands.begin() + 1, scalesId);
    consumer.attrs.push_back(flagAttr("input_quantized"));
    ++fused;
  }
  return fused;
}

/// Whether `step` writes one f32-typed output as its product gives it: no
/// residual added, and no narrowed form (quantized per token or
/// statically, or bf16) chosen by an earlier rewrite.
static bool writesPlainOutput(const rt::PlanStep &step) {
  return step.results.size() == 1 && !hasFlag(step, "has_residual") &&
         !hasFlag(step, "quantize_output") && !hasFlag(step, "output_bf16") &&
         !hasFlag(step, "output_static");
}

/// Whether `attention` reads bf16 operands with no change to its numbers:
/// its products fit the AMX tiles (head dim and key length multiples of 32,
/// fixed; elsewhere they stay f32, and bf16 operands would only lose
/// precision), and its scale is a power of two (Q rounded to bf16 and then
/// scaled is Q times the scale rounded; with another scale Q would be
/// rounded twice).
static bool readsBf16Exactly(const rt::Plan &plan,
                             const rt::PlanStep &attention) {
  const rt::PlanAttr *heads = attention.findAttr("num_heads");
  const rt::PlanAttr *scale = attention.findAttr("scale");
  if (!heads || heads->kind != rt::PlanAttr::Kind::Int ||
      heads->intValue <= 0 || attention.results.empty() || !scale ||
      scale->kind != rt::PlanAttr::Kind::Float)
    return false;
  int exponent = 0;
  const float s = float(scale->floatValue);
  if (!(s > 0) || std::frexp(s, &exponent) != 0.5f)
    return false;
  const rt::PlanTensor &out = plan.tensors[attention.results[0]];
  const rt::PlanTensor &key = plan.tensors[attention.operands[1]];
  const size_t keyAxis = hasFlag(attention, "kv_heads_split") ? 2 : 1;
  if (out.isSymbolic() || key.isSymbolic() || out.dims.empty() ||
      key.dims.size() <= keyAxis)
    return false;
  const int64_t headDim = out.dims.back() / heads->intValue;
  return headDim > 0 && headDim % 32 == 0 && key.dims[keyAxis] % 32 == 0;
}

unsigned mlir::lmopt::cpu::fuseBf16AttentionInputs(
    rt::Plan &plan, const std::vector<uint32_t> &aliasRoot) {
  const Readers readers(plan, aliasRoot);
  // The step writing each tensor.
  std::vector<int64_t> writer(plan.tensors.size(), -1);
  for (size_t s = 0; s < plan.steps.size(); ++s)
    for (uint32_t result : plan.steps[s].results)
      writer[result] = int64_t(s);
  unsigned fused = 0;
  for (size_t a = 0; a < plan.steps.size(); ++a) {
    rt::PlanStep &attention = plan.steps[a];
    if (attention.kind != rt::StepKind::Attention ||
        !hasFlag(attention, "bf16_products") ||
        hasFlag(attention, "input_bf16") || attention.operands.size() < 3 ||
        !readsBf16Exactly(plan, attention))
      continue;
    // Query, key and value's tensors: each read only here, as one of the
    // three, and written by a bf16 or int8 linear that may write bf16.
    auto qualifies = [&](uint32_t t) {
      unsigned uses = 0;
      for (int j = 0; j < 3; ++j)
        uses += attention.operands[size_t(j)] == t;
      if (readers.pinned[t] || aliasRoot[t] != t || readers.reads[t] != uses ||
          readers.reader[t] != int64_t(a) ||
          plan.tensors[t].dtype != rt::DType::F32 || writer[t] < 0)
        return false;
      const rt::PlanStep &producer = plan.steps[size_t(writer[t])];
      const std::string_view mode = modeOf(producer);
      return producer.kind == rt::StepKind::QuantLinear &&
             (mode == "bf16" || mode.substr(0, 5) == "int8_") &&
             writesPlainOutput(producer);
    };
    std::vector<uint32_t> tensors;
    for (int i = 0; i < 3; ++i) {
      const uint32_t t = attention.operands[size_t(i)];
      if (std::find(tensors.begin(), tensors.end(), t) == tensors.end())
        tensors.push_back(t);
    }
    if (!std::all_of(tensors.begin(), tensors.end(), qualifies))
      continue;
    for (uint32_t t : tensors) {
      plan.tensors[t].dtype = rt::DType::BF16;
      plan.steps[size_t(writer[t])].attrs.push_back(flagAttr("output_bf16"));
    }
    attention.attrs.push_back(flagAttr("input_bf16"));
    ++fused;
  }
  return fused;
}

/// The one block of kernel function `entry` in `kernels` when the function
/// takes one argument, returns one result and holds `operations`
/// operations (its return included); else null.
static Block *unaryKernelBody(ModuleOp kernels, StringRef entry,
                              size_t operations) {
  auto fn = llvm::dyn_cast_or_null<func::FuncOp>(
      SymbolTable::lookupSymbolIn(kernels, entry));
  if (!fn || fn.getNumArguments() != 1 || fn.getNumResults() != 1 ||
      fn.getBody().getBlocks().size() != 1 ||
      fn.getBody().front().getOperations().size() != operations)
    return nullptr;
  return &fn.getBody().front();
}

/// Whether `entry` in `kernels` is one lmopt.cast of its single argument
/// from f32 to bf16, returned.
static bool isBf16CastKernel(ModuleOp kernels, StringRef entry) {
  Block *single = unaryKernelBody(kernels, entry, 2);
  if (!single)
    return false;
  Block &body = *single;
  auto cast = llvm::dyn_cast<CastOp>(body.front());
  auto ret = llvm::dyn_cast<func::ReturnOp>(body.back());
  if (!cast || !ret || cast.getInput() != body.getArgument(0) ||
      ret.getNumOperands() != 1 || ret.getOperand(0) != cast.getOutput())
    return false;
  auto elementOf = [](Value v) {
    return llvm::cast<ShapedType>(v.getType()).getElementType();
  };
  return elementOf(cast.getInput()).isF32() &&
         elementOf(cast.getOutput()).isBF16();
}

/// Removes the tensors `drop` marks (which no step, input, output, state use
/// or other tensor's alias root names) and renumbers the rest.
static void dropTensors(rt::Plan &plan, std::vector<uint32_t> &aliasRoot,
                        const std::vector<bool> &drop) {
  std::vector<uint32_t> renumbered(plan.tensors.size(), 0);
  std::vector<rt::PlanTensor> kept;
  for (uint32_t t = 0; t < plan.tensors.size(); ++t)
    if (!drop[t]) {
      renumbered[t] = uint32_t(kept.size());
      kept.push_back(std::move(plan.tensors[t]));
    }
  std::vector<uint32_t> roots;
  for (uint32_t t = 0; t < aliasRoot.size(); ++t)
    if (!drop[t])
      roots.push_back(renumbered[aliasRoot[t]]);
  plan.tensors = std::move(kept);
  aliasRoot = std::move(roots);
  for (rt::PlanStep &step : plan.steps) {
    for (uint32_t &t : step.operands)
      t = renumbered[t];
    for (uint32_t &t : step.results)
      t = renumbered[t];
  }
  for (std::vector<rt::PlanValue> *values : {&plan.inputs, &plan.outputs})
    for (rt::PlanValue &value : *values)
      value.tensor = renumbered[value.tensor];
  for (std::vector<rt::PlanStateUse> *uses :
       {&plan.stateReads, &plan.stateWrites})
    for (rt::PlanStateUse &use : *uses)
      use.tensor = renumbered[use.tensor];
}

/// Whether `entry` in `kernels` is one lmopt.quantize of its single argument
/// from f32 to a per-tensor uniform 8-bit type (then reinterpreted as its
/// storage), and that type's scale, zero point and signedness.
static bool isStaticQuantizeKernel(ModuleOp kernels, StringRef entry,
                                   double &scale, int64_t &zeroPoint,
                                   bool &isSigned) {
  Block *single = unaryKernelBody(kernels, entry, 3);
  if (!single)
    return false;
  Block &body = *single;
  Operation &first = body.front();
  auto quantize = llvm::dyn_cast<QuantizeOp>(first);
  auto cast =
      llvm::dyn_cast<UnrealizedConversionCastOp>(*std::next(body.begin()));
  auto ret = llvm::dyn_cast<func::ReturnOp>(body.back());
  if (!quantize || !cast || !ret ||
      quantize.getInput() != body.getArgument(0) ||
      cast->getNumOperands() != 1 || cast->getOperand(0) != quantize ||
      cast->getNumResults() != 1 || ret.getNumOperands() != 1 ||
      ret.getOperand(0) != cast->getResult(0))
    return false;
  auto input = llvm::cast<ShapedType>(quantize.getInput().getType());
  auto type = llvm::dyn_cast<quant::UniformQuantizedType>(
      llvm::cast<ShapedType>(quantize.getType()).getElementType());
  if (!input.getElementType().isF32() || !type ||
      type.getStorageTypeIntegralWidth() != 8 ||
      type.getStorageTypeMin() != (type.isSigned() ? -128 : 0) ||
      type.getStorageTypeMax() != (type.isSigned() ? 127 : 255))
    return false;
  scale = type.getScale();
  zeroPoint = type.getZeroPoint();
  isSigned = type.isSigned();
  return true;
}

namespace {
/// What fuseOutputConversions asks of a pair: whether the producing step
/// qualifies, and for the converting kernel's function, the dtype its
/// result must have and the attributes the producer gets (none: no match).
struct OutputConversion {
  std::function<bool(const rt::PlanStep &producer)> producer;
  std::function<std::optional<std::vector<rt::PlanAttr>>(
      ModuleOp kernels, StringRef entry, rt::DType &narrowType)>
      match;
};
} // namespace

/// A step `conversion` accepts (no residual, one f32 result) whose output
/// only a one-operand kernel reads, where `conversion` matches that kernel:
/// the producer writes the kernel's result itself; the kernel step and its
/// function go, and so does the f32 tensor (tensors renumbered). Returns
/// how many it fused.
static unsigned fuseOutputConversions(TargetPlan &target,
                                      const OutputConversion &conversion) {
  rt::Plan &plan = target.plan;
  std::vector<uint32_t> &aliasRoot = target.aliasRoot;
  if (!target.kernels)
    return 0;
  const Readers readers(plan, aliasRoot);
  std::vector<bool> dropStep(plan.steps.size(), false),
      dropTensor(plan.tensors.size(), false);
  unsigned fused = 0;
  for (rt::PlanStep &producer : plan.steps) {
    if (!conversion.producer(producer) || !writesPlainOutput(producer))
      continue;
    const uint32_t out = producer.results[0];
    std::optional<size_t> read = readers.soleReader(out);
    if (!read || plan.tensors[out].dtype != rt::DType::F32)
      continue;
    const size_t kernelIndex = *read;
    rt::PlanStep &kernel = plan.steps[kernelIndex];
    const rt::PlanAttr *entry = kernel.findAttr("entry");
    if (kernel.kind != rt::StepKind::Kernel || kernel.operands.size() != 1 ||
        kernel.results.size() != 1 || !entry ||
        entry->kind != rt::PlanAttr::Kind::String)
      continue;
    rt::DType narrowType = rt::DType::F32;
    std::optional<std::vector<rt::PlanAttr>> attrs =
        conversion.match(*target.kernels, entry->stringValue, narrowType);
    if (!attrs)
      continue;
    const uint32_t narrow = kernel.results[0];
    const rt::PlanTensor &wide = plan.tensors[out];
    const rt::PlanTensor &result = plan.tensors[narrow];
    if (result.dtype != narrowType || result.dims != wide.dims ||
        result.dimExprs != wide.dimExprs ||
        result.storage != rt::TensorStorage::Arena ||
        aliasRoot[narrow] != narrow)
      continue;

    SymbolTable::lookupSymbolIn(*target.kernels, entry->stringValue)->erase();
    --target.numKernels;
    producer.results = {narrow};
    producer.attrs.insert(producer.attrs.end(), attrs->begin(), attrs->end());
    dropStep[kernelIndex] = true;
    dropTensor[out] = true;
    ++fused;
  }
  if (!fused)
    return 0;
  std::vector<rt::PlanStep> steps;
  for (size_t s = 0; s < plan.steps.size(); ++s)
    if (!dropStep[s])
      steps.push_back(std::move(plan.steps[s]));
  plan.steps = std::move(steps);
  dropTensors(plan, aliasRoot, dropTensor);
  return fused;
}

unsigned mlir::lmopt::cpu::fuseBf16Outputs(TargetPlan &target) {
  OutputConversion conversion;
  // bf16 linears, and attention (whose f32 output feeds the bf16 output
  // projection).
  conversion.producer = [](const rt::PlanStep &step) {
    return (step.kind == rt::StepKind::QuantLinear && modeOf(step) == "bf16") ||
           step.kind == rt::StepKind::Attention;
  };
  conversion.match =
      [](ModuleOp kernels, StringRef entry,
         rt::DType &type) -> std::optional<std::vector<rt::PlanAttr>> {
    if (!isBf16CastKernel(kernels, entry))
      return std::nullopt;
    type = rt::DType::BF16;
    return std::vector<rt::PlanAttr>{flagAttr("output_bf16")};
  };
  return fuseOutputConversions(target, conversion);
}

unsigned mlir::lmopt::cpu::fuseStaticOutputs(TargetPlan &target) {
  OutputConversion conversion;
  // int8 linears, and attention (whose f32 output feeds the int8 output
  // projection).
  conversion.producer = [](const rt::PlanStep &step) {
    return (step.kind == rt::StepKind::QuantLinear &&
            modeOf(step).substr(0, 5) == "int8_") ||
           step.kind == rt::StepKind::Attention;
  };
  conversion.match =
      [](ModuleOp kernels, StringRef entry,
         rt::DType &type) -> std::optional<std::vector<rt::PlanAttr>> {
    double scale = 0;
    int64_t zeroPoint = 0;
    bool isSigned = false;
    if (!isStaticQuantizeKernel(kernels, entry, scale, zeroPoint, isSigned))
      return std::nullopt;
    type = isSigned ? rt::DType::I8 : rt::DType::U8;
    rt::PlanAttr scaleAttr, zeroAttr;
    scaleAttr.name = "output_scale";
    scaleAttr.kind = rt::PlanAttr::Kind::Float;
    // The kernel divides by the scale as an f32 constant.
    scaleAttr.floatValue = double(float(scale));
    zeroAttr.name = "output_zero_point";
    zeroAttr.intValue = zeroPoint;
    return std::vector<rt::PlanAttr>{flagAttr("output_static"), scaleAttr,
                                     zeroAttr};
  };
  return fuseOutputConversions(target, conversion);
}

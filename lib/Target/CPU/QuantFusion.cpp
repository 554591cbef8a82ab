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
// the cast alone and reads the output of another bf16 linear that nothing
// else reads, the producer stores bf16 directly (the same rounding), and
// both the kernel's pass and the f32 tensor disappear.
//
//===----------------------------------------------------------------------===//

#include "QuantPlan.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/SymbolTable.h"

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

/// Whether `entry` in `kernels` is one lmopt.cast of its single argument
/// from f32 to bf16, returned.
static bool isBf16CastKernel(ModuleOp kernels, StringRef entry) {
  auto func = SymbolTable::lookupSymbolIn(kernels, entry);
  auto fn = llvm::dyn_cast_or_null<func::FuncOp>(func);
  if (!fn || fn.getNumArguments() != 1 || fn.getNumResults() != 1 ||
      fn.getBody().getBlocks().size() != 1)
    return false;
  Block &body = fn.getBody().front();
  if (body.getOperations().size() != 2)
    return false;
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

unsigned mlir::lmopt::cpu::fuseBf16Outputs(TargetPlan &target) {
  rt::Plan &plan = target.plan;
  std::vector<uint32_t> &aliasRoot = target.aliasRoot;
  if (!target.kernels)
    return 0;
  const Readers readers(plan, aliasRoot);
  std::vector<bool> dropStep(plan.steps.size(), false),
      dropTensor(plan.tensors.size(), false);
  unsigned fused = 0;
  for (rt::PlanStep &producer : plan.steps) {
    if (producer.kind != rt::StepKind::QuantLinear ||
        modeOf(producer) != "bf16" || hasFlag(producer, "has_residual") ||
        hasFlag(producer, "output_bf16") || producer.results.size() != 1)
      continue;
    const uint32_t out = producer.results[0];
    std::optional<size_t> read = readers.soleReader(out);
    if (!read || plan.tensors[out].dtype != rt::DType::F32)
      continue;
    const size_t castIndex = *read;
    rt::PlanStep &cast = plan.steps[castIndex];
    const rt::PlanAttr *entry = cast.findAttr("entry");
    if (cast.kind != rt::StepKind::Kernel || cast.operands.size() != 1 ||
        cast.results.size() != 1 || !entry ||
        entry->kind != rt::PlanAttr::Kind::String ||
        !isBf16CastKernel(*target.kernels, entry->stringValue))
      continue;
    const uint32_t narrow = cast.results[0];
    const rt::PlanTensor &wide = plan.tensors[out];
    const rt::PlanTensor &result = plan.tensors[narrow];
    if (result.dtype != rt::DType::BF16 || result.dims != wide.dims ||
        result.dimExprs != wide.dimExprs ||
        result.storage != rt::TensorStorage::Arena ||
        aliasRoot[narrow] != narrow)
      continue;

    SymbolTable::lookupSymbolIn(*target.kernels, entry->stringValue)->erase();
    --target.numKernels;
    producer.results = {narrow};
    producer.attrs.push_back(flagAttr("output_bf16"));
    dropStep[castIndex] = true;
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

//===- QuantFusion.cpp - Row quantization moved into the producing step ---===//
//
// A per-token int8 linear quantizes its f32 input row by row before the
// integer product. When that input is the output of another int8 linear
// and nothing else reads it (the FFN's up projection feeding its down
// projection), the producer's epilogue quantizes each row as it finishes
// it: the f32 tensor is never written, the consumer reads int8 bytes and
// row scales, and one pass over memory disappears. The values are the
// same bits either way (the same quantizer runs on the same f32 row).
//
//===----------------------------------------------------------------------===//

#include "QuantPlan.h"

#include <string_view>

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

unsigned mlir::lmopt::cpu::fuseRowQuantization(
    rt::Plan &plan, std::vector<uint32_t> &aliasRoot) {
  // Who reads each tensor (through aliases too), and which are outputs.
  const size_t count = plan.tensors.size();
  std::vector<unsigned> reads(count, 0);
  std::vector<int64_t> reader(count, -1);
  std::vector<bool> aliased(count, false), isOutput(count, false);
  for (uint32_t t = 0; t < count; ++t)
    if (aliasRoot[t] != t)
      aliased[aliasRoot[t]] = true;
  for (const rt::PlanValue &out : plan.outputs)
    isOutput[aliasRoot[out.tensor]] = true;
  for (size_t s = 0; s < plan.steps.size(); ++s)
    for (uint32_t operand : plan.steps[s].operands) {
      ++reads[aliasRoot[operand]];
      reader[aliasRoot[operand]] = int64_t(s);
    }

  unsigned fused = 0;
  for (rt::PlanStep &producer : plan.steps) {
    if (producer.kind != rt::StepKind::QuantLinear || modeOf(producer).substr(0, 5) != "int8_" ||
        hasFlag(producer, "has_residual") ||
        hasFlag(producer, "quantize_output") || producer.results.size() != 1)
      continue;
    uint32_t out = producer.results[0];
    if (aliased[out] || isOutput[out] || reads[out] != 1 || reader[out] < 0)
      continue;
    rt::PlanStep &consumer = plan.steps[size_t(reader[out])];
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

//===- AttentionExecutor.cpp - The attention step on the CPU --------------===//
//
// Checks an attention or attention_grad step as every device does
// (checkAttentionStep, checkAttentionGradStep), with the CPU's f32, and
// builds its AttentionStep or AttentionGradStep.
//
//===----------------------------------------------------------------------===//

#include "StepChecker.h"

#include "lmopt/Runtime/AttentionCheck.h"
#include "lmopt/Runtime/CPU/AttentionGradStep.h"
#include "lmopt/Runtime/CPU/AttentionStep.h"

#include <algorithm>

using namespace lmopt::runtime;

namespace {
class AttentionExecutor : public StepExecutor {
public:
  Status run(void *const *tensors) const override {
    return step->run(tensors[query], tensors[key], tensors[value],
                     mask < 0 ? nullptr : tensors[mask], tensors[output],
                     bias < 0 ? nullptr
                              : static_cast<const float *>(tensors[bias]));
  }

  std::unique_ptr<AttentionStep> step;
  int64_t query = 0, key = 0, value = 0, mask = -1, bias = -1, output = 0;
};

class AttentionGradExecutor : public StepExecutor {
public:
  Status run(void *const *tensors) const override {
    auto in = [&](size_t i) {
      return static_cast<const float *>(tensors[operands[i]]);
    };
    auto out = [&](size_t i) {
      return static_cast<float *>(tensors[results[i]]);
    };
    return step->run(in(0), in(1), in(2), in(3),
                     operands.size() > 4 ? tensors[operands[4]] : nullptr,
                     out(0), out(1), out(2));
  }

  std::unique_ptr<AttentionGradStep> step;
  std::vector<uint32_t> operands, results;
};
} // namespace

/// The CPU's attention step runs f32; with `input_bf16` its query, key and
/// value are bf16; with `output_static` its output is u8 or i8, with
/// `output_bf16` bf16.
static Status expectF32(const StepCheck &c) {
  const DType in = c.step.findAttr("input_bf16") ? DType::BF16 : DType::F32;
  for (auto [role, t] :
       {std::pair<const char *, const PlanTensor *>{"query", &c.operand(0)},
        {"key", &c.operand(1)},
        {"value", &c.operand(2)}})
    if (Status st = c.expectDType(role, *t, in); !st)
      return st;
  const PlanTensor &output = c.result(0);
  if (c.step.findAttr("output_bf16"))
    return c.expectDType("output", output, DType::BF16);
  if (!c.step.findAttr("output_static"))
    return c.expectDType("output", output, DType::F32);
  if (output.dtype != DType::U8 && output.dtype != DType::I8)
    return c.error("output " + describe(output) + " has dtype " +
                   dtypeName(output.dtype) +
                   "; expected u8 or i8 with output_static");
  return Status::ok();
}

static AttentionOperandView toDesc(const AttentionView &view) {
  AttentionOperandView out;
  out.offset = view.offset;
  out.rowStride = view.rowStride;
  return out;
}

static AttentionMask toDesc(AttentionMaskKind kind) {
  return kind == AttentionMaskKind::Additive ? AttentionMask::Additive
         : kind == AttentionMaskKind::Bool   ? AttentionMask::Bool
                                             : AttentionMask::None;
}

/// The step's desc; the mask, when there is one, is operand `maskOperand`.
static AttentionStepDesc toDesc(const StepChecker &c, const AttentionShape &s,
                                size_t maskOperand) {
  AttentionStepDesc desc;
  desc.name = c.step.name;
  desc.batch = s.batch;
  desc.numHeads = s.heads;
  desc.numKvHeads = s.kvHeads;
  desc.queryLength = s.queryLength;
  desc.keyLength = s.keyLength;
  desc.headDim = s.headDim;
  desc.scale = float(s.scale);
  desc.causal = s.causal;
  desc.kvHeadsSplit = s.kvHeadsSplit;
  desc.zeroMaskedRows = s.zeroMaskedRows;
  desc.bf16Products = s.bf16Products;
  desc.queryView = toDesc(s.queryView);
  desc.keyView = toDesc(s.keyView);
  desc.valueView = toDesc(s.valueView);
  desc.keyCapacity = s.keyCapacity;
  desc.valueCapacity = s.valueCapacity;
  desc.mask = toDesc(s.mask);
  if (desc.mask != AttentionMask::None)
    desc.maskDims = c.operand(maskOperand).dims;
  desc.outputStatic = s.outputStatic;
  desc.outputBf16 = s.outputBf16;
  desc.inputBf16 = s.inputBf16;
  if (s.outputStatic) {
    desc.outputSigned = c.result(0).dtype == DType::I8;
    desc.outputScale = float(s.outputScale);
    desc.outputZeroPoint =
        int32_t(std::clamp<int64_t>(s.outputZeroPoint, -1000, 1000));
  }
  return desc;
}

Status
lmopt::runtime::buildAttentionExecutor(const StepChecker &c,
                                       std::unique_ptr<StepExecutor> &out) {
  AttentionShape s;
  if (Status st = checkAttentionStep(c, expectF32, s); !st)
    return st;
  if (Status st = checkAttentionMask(c, s); !st)
    return st;
  if (Status st = checkAttentionBias(c, s); !st)
    return st;
  AttentionStepDesc desc = toDesc(c, s, 3);
  auto exec = std::make_unique<AttentionExecutor>();
  if (desc.mask != AttentionMask::None)
    exec->mask = c.step.operands[3];
  if (s.scoreBias) {
    desc.scoreBias = true;
    desc.biasDims = c.operand(c.step.operands.size() - 1).dims;
    exec->bias = c.step.operands.back();
  }
  exec->query = c.step.operands[0];
  exec->key = c.step.operands[1];
  exec->value = c.step.operands[2];
  exec->output = c.step.results[0];
  if (Status st = AttentionStep::create(c.context.cpu, desc, exec->step); !st)
    return c.withSource(st);
  out = std::move(exec);
  return Status::ok();
}

Status
lmopt::runtime::buildAttentionGradExecutor(const StepChecker &c,
                                           std::unique_ptr<StepExecutor> &out) {
  AttentionShape s;
  if (Status st = checkAttentionGradStep(c, s); !st)
    return st;
  // The CPU's backward runs f32 (the mask's dtype is its kind).
  static const char *const kRoles[] = {"query",       "key",        "value",
                                       "output_grad", "query_grad", "key_grad",
                                       "value_grad"};
  for (size_t i = 0; i < 7; ++i)
    if (Status st = c.expectDType(
            kRoles[i], i < 4 ? c.operand(i) : c.result(i - 4), DType::F32);
        !st)
      return st;
  AttentionStepDesc desc = toDesc(c, s, 4);
  auto exec = std::make_unique<AttentionGradExecutor>();
  exec->operands = c.step.operands;
  exec->results = c.step.results;
  if (Status st = AttentionGradStep::create(c.context.cpu, desc, exec->step);
      !st)
    return c.withSource(st);
  out = std::move(exec);
  return Status::ok();
}

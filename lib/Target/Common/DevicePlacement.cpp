//===- DevicePlacement.cpp - A plan's steps on an accelerator -------------===//

#include "lmopt/Target/Common/DevicePlacement.h"

#include <cassert>
#include <map>

using namespace mlir::lmopt;
namespace rt = ::lmopt::runtime;

unsigned mlir::lmopt::placeOnDevice(TargetPlan &target, uint32_t device) {
  assert(device > 0 && "device 0 is the host");
  rt::Plan &plan = target.plan;
  std::vector<rt::PlanStep> steps = std::move(plan.steps);
  plan.steps.clear();
  for (rt::PlanTensor &t : plan.tensors)
    if (t.storage != rt::TensorStorage::Input)
      t.device = device;

  auto addTensor = [&](const rt::PlanTensor &like, std::string name,
                       uint32_t on) {
    rt::PlanTensor copy = like;
    copy.name = std::move(name);
    copy.storage = rt::TensorStorage::Arena;
    copy.offset = 0;
    copy.device = on;
    uint32_t id = plan.addTensor(std::move(copy));
    target.aliasRoot.push_back(id);
    return id;
  };

  // Inputs first, each copied once, in the order steps first read them.
  unsigned copies = 0;
  std::map<uint32_t, uint32_t> onDevice;
  for (rt::PlanStep &step : steps) {
    step.device = device;
    for (uint32_t &operand : step.operands) {
      if (plan.tensors[operand].storage != rt::TensorStorage::Input)
        continue;
      auto [it, inserted] = onDevice.try_emplace(operand, 0);
      if (inserted) {
        const rt::PlanTensor &input = plan.tensors[operand];
        it->second = addTensor(input, input.name, device);
        rt::PlanStep &copy = plan.addStep(rt::StepKind::Copy, input.name);
        copy.device = device;
        copy.operands = {operand};
        copy.results = {it->second};
        ++copies;
      }
      operand = it->second;
    }
  }
  for (rt::PlanStep &step : steps)
    plan.steps.push_back(std::move(step));

  // Outputs last: the caller reads host memory.
  for (rt::PlanValue &output : plan.outputs) {
    if (plan.tensors[output.tensor].device == 0)
      continue;
    uint32_t host =
        addTensor(plan.tensors[output.tensor], output.name, /*on=*/0);
    rt::PlanStep &copy = plan.addStep(rt::StepKind::Copy, output.name);
    copy.device = device;
    copy.operands = {output.tensor};
    copy.results = {host};
    output.tensor = host;
    ++copies;
  }
  return copies;
}

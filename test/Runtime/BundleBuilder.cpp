//===- BundleBuilder.cpp - Small bundles for the session tests ------------===//

#include "BundleBuilder.h"

#include "lmopt/Format/Bundle.h"

#include <algorithm>
#include <cstring>

using namespace lmopt::runtime;
using namespace lmopt::runtime::test;

static uint64_t alignUp(uint64_t n) { return (n + 63) & ~uint64_t(63); }

/// A tensor of `storage` at `offset`.
static PlanTensor tensorAt(const std::string &name, DType dtype,
                           std::vector<int64_t> dims, TensorStorage storage,
                           uint64_t offset) {
  PlanTensor t;
  t.name = name;
  t.dtype = dtype;
  t.dims = std::move(dims);
  t.storage = storage;
  t.offset = offset;
  return t;
}

uint32_t BundleBuilder::input(const std::string &name, DType dtype,
                              std::vector<int64_t> dims) {
  PlanTensor t = tensorAt(name, dtype, std::move(dims), TensorStorage::Input,
                          plan.inputs.size());
  uint32_t id = plan.addTensor(std::move(t));
  plan.inputs.push_back({name, id});
  return id;
}

uint32_t BundleBuilder::weightBytes(const std::string &name, DType dtype,
                                    std::vector<int64_t> dims, const void *data,
                                    size_t size) {
  PlanTensor t = tensorAt(name, dtype, std::move(dims), TensorStorage::Weight,
                          alignUp(weights.size()));
  weights.resize(t.offset + size);
  if (size)
    std::memcpy(weights.data() + t.offset, data, size);
  return plan.addTensor(std::move(t));
}

uint32_t BundleBuilder::arena(const std::string &name, DType dtype,
                              std::vector<int64_t> dims) {
  return arenaAt(name, dtype, std::move(dims), alignUp(plan.arenaSize()));
}

uint32_t BundleBuilder::arenaAt(const std::string &name, DType dtype,
                                std::vector<int64_t> dims, uint64_t offset) {
  PlanTensor t =
      tensorAt(name, dtype, std::move(dims), TensorStorage::Arena, offset);
  plan.arenaSizes = {std::max(plan.arenaSize(), offset + t.byteSize())};
  return plan.addTensor(std::move(t));
}

void BundleBuilder::output(const std::string &name, uint32_t tensor) {
  plan.outputs.push_back({name, tensor});
}

PlanStep &BundleBuilder::step(StepKind kind, const std::string &name,
                              std::vector<uint32_t> operands,
                              std::vector<uint32_t> results) {
  PlanStep &s = plan.addStep(kind, name);
  s.operands = std::move(operands);
  s.results = std::move(results);
  return s;
}

uint32_t BundleBuilder::state(const std::string &name, DType dtype,
                              std::vector<int64_t> dims, PlanState::Init init,
                              uint64_t weightOffset) {
  PlanState s;
  s.name = name;
  s.dtype = dtype;
  s.dims = std::move(dims);
  s.init = init;
  s.offset = weightOffset;
  states.push_back(std::move(s));
  return uint32_t(states.size() - 1);
}

uint32_t BundleBuilder::stateView(const std::string &name, uint32_t state,
                                  std::vector<int64_t> dims) {
  PlanTensor t;
  t.name = name;
  t.dtype = states[state].dtype;
  t.dims = std::move(dims);
  t.storage = TensorStorage::State;
  t.offset = state;
  t.device = states[state].device;
  return plan.addTensor(std::move(t));
}

void BundleBuilder::finishEntry(const std::string &name) {
  plan.name = name;
  entries.push_back(std::move(plan));
  plan = Plan();
}

std::vector<uint8_t> BundleBuilder::planBytes() const {
  if (legacy)
    return serializeLegacyPlan(plan);
  Program program;
  program.devices = {{"cpu", kernels.empty() ? "" : "kernels"}};
  program.states = states;
  program.entries = entries;
  program.entries.push_back(plan);
  return serializeProgram(program);
}

Status BundleBuilder::write(const std::string &path) const {
  BundleWriter writer;
  if (Status st = writer.addSection("plan", SectionKind::Plan, planBytes());
      !st)
    return st;
  if (!weights.empty())
    if (Status st = writer.addSection("weights", SectionKind::Weights,
                                      weights.data(), weights.size());
        !st)
      return st;
  if (!kernels.empty())
    if (Status st = writer.addSection("kernels", SectionKind::Kernels,
                                      kernels.data(), kernels.size());
        !st)
      return st;
  if (!meta.empty())
    if (Status st = writer.addSection("meta", SectionKind::Meta, meta.data(),
                                      meta.size());
        !st)
      return st;
  return writer.write(path);
}

static PlanAttr &addAttr(PlanStep &step, const std::string &name,
                         PlanAttr::Kind kind) {
  step.attrs.emplace_back();
  step.attrs.back().name = name;
  step.attrs.back().kind = kind;
  return step.attrs.back();
}

PlanTensor lmopt::runtime::test::weightAt(const std::string &name, DType dtype,
                                          std::vector<int64_t> dims,
                                          uint64_t offset) {
  return tensorAt(name, dtype, std::move(dims), TensorStorage::Weight, offset);
}

PlanState lmopt::runtime::test::weightState(const std::string &name,
                                            DType dtype,
                                            std::vector<int64_t> dims,
                                            uint64_t offset) {
  PlanState state;
  state.name = name;
  state.dtype = dtype;
  state.dims = std::move(dims);
  state.init = PlanState::Init::Weight;
  state.offset = offset;
  return state;
}

void lmopt::runtime::test::addInt(PlanStep &step, const std::string &name,
                                  int64_t value) {
  addAttr(step, name, PlanAttr::Kind::Int).intValue = value;
}

void lmopt::runtime::test::addFloat(PlanStep &step, const std::string &name,
                                    double value) {
  addAttr(step, name, PlanAttr::Kind::Float).floatValue = value;
}

void lmopt::runtime::test::addString(PlanStep &step, const std::string &name,
                                     const std::string &value) {
  addAttr(step, name, PlanAttr::Kind::String).stringValue = value;
}

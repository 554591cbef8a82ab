//===- BundleBuilder.h - Small bundles for the session tests ----*- C++ -*-===//
//
// Builds a plan, its weights and kernels the way the compiler lays them out
// (64-byte aligned weight and arena offsets) and writes the bundle.
//
//===----------------------------------------------------------------------===//

#ifndef LMOPT_TEST_RUNTIME_BUNDLEBUILDER_H
#define LMOPT_TEST_RUNTIME_BUNDLEBUILDER_H

#include "lmopt/Format/Plan.h"
#include "lmopt/Format/Status.h"

#include <cstdint>
#include <string>
#include <vector>

namespace lmopt::runtime::test {

class BundleBuilder {
public:
  /// A model input named `name` (its tensor too).
  uint32_t input(const std::string &name, DType dtype,
                 std::vector<int64_t> dims);
  /// A weight holding `values`, appended to the weights section.
  template <typename T>
  uint32_t weight(const std::string &name, DType dtype,
                  std::vector<int64_t> dims, const std::vector<T> &values) {
    return weightBytes(name, dtype, std::move(dims), values.data(),
                       values.size() * sizeof(T));
  }
  uint32_t weightBytes(const std::string &name, DType dtype,
                       std::vector<int64_t> dims, const void *data,
                       size_t size);
  /// An arena tensor at the next free 64-byte aligned offset.
  uint32_t arena(const std::string &name, DType dtype,
                 std::vector<int64_t> dims);
  /// An arena tensor at `offset` (the arena grows to hold it).
  uint32_t arenaAt(const std::string &name, DType dtype,
                   std::vector<int64_t> dims, uint64_t offset);
  void output(const std::string &name, uint32_t tensor);

  PlanStep &step(StepKind kind, const std::string &name,
                 std::vector<uint32_t> operands, std::vector<uint32_t> results);

  /// A state of the program; returns its number.
  uint32_t state(const std::string &name, DType dtype,
                 std::vector<int64_t> dims,
                 PlanState::Init init = PlanState::Init::None,
                 uint64_t weightOffset = 0);
  /// A tensor of the current entry that views state `state` with `dims`.
  uint32_t stateView(const std::string &name, uint32_t state,
                     std::vector<int64_t> dims);
  /// Ends the current entry, naming it `name`; the next tensors and steps
  /// go to a new entry.
  void finishEntry(const std::string &name);

  Status write(const std::string &path) const;
  /// The program (entries, then the current plan) as version 2.0, or the
  /// current plan alone as 1.x with `legacy`.
  std::vector<uint8_t> planBytes() const;

  /// The entry being built.
  Plan plan;
  /// Entries finished before it.
  std::vector<Plan> entries;
  std::vector<PlanState> states;
  /// Write the plan in the 1.x encoding (one entry, no states).
  bool legacy = false;
  std::vector<uint8_t> weights;
  /// Written as the `kernels` section when not empty.
  std::vector<uint8_t> kernels;
  /// Written as the `meta` section when not empty.
  std::string meta;
};

/// A weight tensor at `offset` of a weights layout, for plans that only
/// describe which tensors read which bytes.
PlanTensor weightAt(const std::string &name, DType dtype,
                    std::vector<int64_t> dims, uint64_t offset);
/// A state initialized from the weights at `offset`.
PlanState weightState(const std::string &name, DType dtype,
                      std::vector<int64_t> dims, uint64_t offset);

void addInt(PlanStep &step, const std::string &name, int64_t value);
void addFloat(PlanStep &step, const std::string &name, double value);
void addString(PlanStep &step, const std::string &name,
               const std::string &value);

} // namespace lmopt::runtime::test

#endif // LMOPT_TEST_RUNTIME_BUNDLEBUILDER_H

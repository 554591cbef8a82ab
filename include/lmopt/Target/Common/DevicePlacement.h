//===- DevicePlacement.h - A plan's steps on an accelerator -----*- C++ -*-===//
//
// A target whose device is not the host (CUDA) plans like the CPU and then
// moves the plan onto its device: every step, weight, state and arena
// tensor goes to device `device` of the program, while the entry's inputs
// (the caller's host memory) and outputs (what the caller reads after the
// run) stay on the host, device 0, with Copy steps on the device between
// them (docs/architecture.md, "Devices").
//
//===----------------------------------------------------------------------===//

#ifndef LMOPT_TARGET_COMMON_DEVICEPLACEMENT_H
#define LMOPT_TARGET_COMMON_DEVICEPLACEMENT_H

#include "lmopt/Target/Common/PlanBuilder.h"

namespace mlir::lmopt {

/// Moves `plan` (not yet memory-planned) onto device `device` (> 0): each
/// input a step reads is copied to a device tensor first, each output is
/// copied back into a host arena tensor last. Returns the copy steps added.
unsigned placeOnDevice(TargetPlan &plan, uint32_t device);

} // namespace mlir::lmopt

#endif // LMOPT_TARGET_COMMON_DEVICEPLACEMENT_H

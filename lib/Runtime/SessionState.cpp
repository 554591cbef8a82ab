//===- SessionState.cpp - A session's state tensors -----------------------===//
//
// States are created with the session, on their device, at their capacity;
// their values are views of that capacity (Device.h, copyStateView). The
// caller reads, writes, saves and loads them through dense tensors; loading
// checks every member of the archive before any state changes.
//
//===----------------------------------------------------------------------===//

#include "SessionImpl.h"

#include <algorithm>
#include <cstring>

using namespace lmopt::runtime;

Status Session::createStates() {
  for (size_t s = 0; s < program_.states.size(); ++s) {
    const PlanState &plan = program_.states[s];
    auto state = std::make_unique<State>();
    if (Status st =
            devices_[plan.device]->allocate(plan.byteSize(), state->buffer);
        !st)
      return Status::error(st.code(), "bundle '" + path_ + "': state '" +
                                          plan.name + "': " + st.message());
    states_.push_back(std::move(state));
  }
  return resetStates();
}

Status Session::resetStates() {
  auto lock = lockRuns();
  for (size_t s = 0; s < states_.size(); ++s) {
    const PlanState &plan = program_.states[s];
    State &state = *states_[s];
    Device &device = *devices_[plan.device];
    uint64_t bytes = plan.byteSize();
    state.hasValue = plan.init != PlanState::Init::None;
    state.dims = state.hasValue ? plan.dims : std::vector<int64_t>();
    if (plan.init == PlanState::Init::None || bytes == 0)
      continue;
    if (plan.init == PlanState::Init::Weight) {
      // The parser checked the range against the weights section.
      if (Status st = device.copy(state.buffer->data(), weights_ + plan.offset,
                                  bytes, Device::CopyKind::HostToDevice);
          !st)
        return st;
      continue;
    }
    if (plan.device == 0) {
      std::memset(state.buffer->data(), 0, size_t(bytes));
      continue;
    }
    std::unique_ptr<DeviceBuffer> zeros;
    if (Status st = devices_[0]->allocate(bytes, zeros); !st)
      return st;
    if (Status st = device.copy(state.buffer->data(), zeros->data(), bytes,
                                Device::CopyKind::HostToDevice);
        !st)
      return st;
  }
  return Status::ok();
}

Status Session::findState(std::string_view name, size_t &out) const {
  long index = program_.findState(name);
  if (index >= 0) {
    out = size_t(index);
    return Status::ok();
  }
  std::string known;
  for (const PlanState &state : program_.states)
    known += (known.empty() ? "'" : ", '") + state.name + "'";
  return Status::error(StatusCode::InvalidArgument,
                       "bundle '" + path_ + "' has no state '" +
                           std::string(name) + "'; its states are " +
                           (known.empty() ? "none" : known));
}

/// The names of the entries that give state `state` a value without
/// reading it first, for messages.
static std::string writersOf(const Program &program, size_t state) {
  auto uses = [&](const std::vector<PlanStateUse> &list) {
    return std::any_of(list.begin(), list.end(), [&](const PlanStateUse &use) {
      return use.state == state;
    });
  };
  std::string names;
  for (const Plan &plan : program.entries)
    if (uses(plan.stateWrites) && !uses(plan.stateReads))
      names += (names.empty() ? "'" : ", '") + plan.name + "'";
  return names;
}

Status Session::checkStateReads(const Entry &entry) const {
  const Plan &plan = program_.entries[entry.index];
  auto check = [&](size_t s) {
    if (states_[s]->hasValue)
      return Status::ok();
    std::string writers = writersOf(program_, s);
    return Status::error(
        StatusCode::InvalidArgument,
        "entry '" + plan.name + "' reads state '" + program_.states[s].name +
            "', which has no value yet; " +
            (writers.empty() ? std::string("give it one with writeState or "
                                           "loadStates")
                             : "run " + writers + " first"));
  };
  for (const PlanStateUse &use : plan.stateReads)
    if (Status st = check(use.state); !st)
      return st;
  for (const PlanSymbol &symbol : plan.symbols)
    if (symbol.source == PlanSymbol::Source::State)
      if (Status st = check(symbol.index); !st)
        return st;
  return Status::ok();
}

std::vector<StateInfo> Session::states() const {
  auto lock = lockRuns();
  std::vector<StateInfo> infos;
  for (size_t s = 0; s < states_.size(); ++s) {
    const PlanState &plan = program_.states[s];
    infos.push_back({plan.name, plan.dtype, plan.dims,
                     program_.devices[plan.device].name, states_[s]->hasValue,
                     states_[s]->dims});
  }
  return infos;
}

Status Session::readState(std::string_view name, Tensor &out) const {
  auto lock = lockRuns();
  size_t s = 0;
  if (Status st = findState(name, s); !st)
    return st;
  const PlanState &plan = program_.states[s];
  const State &state = *states_[s];
  if (!state.hasValue)
    return Status::error(StatusCode::InvalidArgument,
                         "state '" + plan.name + "' has no value yet");
  out.dtype = plan.dtype;
  out.shape = state.dims;
  out.data.assign(out.elementCount() * dtypeSize(plan.dtype), 0);
  void *bytes = state.buffer->data();
  std::unique_ptr<DeviceBuffer> host;
  if (plan.device != 0) {
    if (Status st = devices_[0]->allocate(plan.byteSize(), host); !st)
      return st;
    if (Status st =
            devices_[plan.device]->copy(host->data(), bytes, plan.byteSize(),
                                        Device::CopyKind::DeviceToHost);
        !st)
      return st;
    bytes = host->data();
  }
  copyStateView(out.data.data(), bytes, state.dims, plan.dims,
                dtypeSize(plan.dtype), /*toState=*/false);
  return Status::ok();
}

/// Checks `value` against state `plan`: dtype, rank, dims within the
/// capacity, byte size and data.
static Status checkStateValue(const PlanState &plan, const TensorView &value) {
  auto invalid = [&](const std::string &what) {
    return Status::error(StatusCode::InvalidArgument,
                         "state '" + plan.name + "' (" + dtypeName(plan.dtype) +
                             ", at most " + formatDims(plan.dims) + ") " +
                             what);
  };
  if (value.dtype != plan.dtype)
    return invalid("cannot take a value of dtype " +
                   std::string(dtypeName(value.dtype)));
  if (value.rank != plan.dims.size() || (value.rank && !value.dims))
    return invalid("cannot take a value of rank " + std::to_string(value.rank));
  uint64_t elements = 1;
  for (size_t d = 0; d < value.rank; ++d) {
    if (value.dims[d] < 0 || value.dims[d] > plan.dims[d])
      return invalid("cannot take a value of dims " +
                     formatDims(value.dims, value.rank) + ": dim " +
                     std::to_string(d) + " is beyond the capacity");
    elements *= uint64_t(value.dims[d]);
  }
  if (value.byteSize != elements * dtypeSize(plan.dtype))
    return invalid("was given " + std::to_string(value.byteSize) +
                   " bytes for dims " + formatDims(value.dims, value.rank));
  if (value.byteSize && !value.data)
    return invalid("was given null data");
  return Status::ok();
}

Status Session::setStateValue(size_t s, const TensorView &value) {
  const PlanState &plan = program_.states[s];
  State &state = *states_[s];
  std::vector<int64_t> dims(value.dims, value.dims + value.rank);
  void *bytes = state.buffer->data();
  std::unique_ptr<DeviceBuffer> host;
  Device &device = *devices_[plan.device];
  if (plan.device != 0) {
    if (Status st = devices_[0]->allocate(plan.byteSize(), host); !st)
      return st;
    if (Status st = device.copy(host->data(), bytes, plan.byteSize(),
                                Device::CopyKind::DeviceToHost);
        !st)
      return st;
    bytes = host->data();
  }
  copyStateView(const_cast<void *>(value.data), bytes, dims, plan.dims,
                dtypeSize(plan.dtype), /*toState=*/true);
  if (host)
    if (Status st =
            device.copy(state.buffer->data(), host->data(), plan.byteSize(),
                        Device::CopyKind::HostToDevice);
        !st)
      return st;
  state.dims = std::move(dims);
  state.hasValue = true;
  return Status::ok();
}

Status Session::writeState(std::string_view name, const TensorView &value) {
  auto lock = lockRuns();
  size_t s = 0;
  if (Status st = findState(name, s); !st)
    return st;
  if (Status st = checkStateValue(program_.states[s], value); !st)
    return st;
  return setStateValue(s, value);
}

Status Session::saveStates(const std::string &path) const {
  auto lock = lockRuns();
  std::vector<NamedTensor> values;
  for (size_t s = 0; s < states_.size(); ++s) {
    if (!states_[s]->hasValue)
      continue;
    NamedTensor value;
    value.name = program_.states[s].name;
    if (Status st = readState(value.name, value.tensor); !st)
      return st;
    values.push_back(std::move(value));
  }
  return writeNpz(path, values);
}

Status Session::loadStates(const std::string &path) {
  std::vector<NamedTensor> values;
  if (Status st = readNpz(path, values); !st)
    return st;
  auto lock = lockRuns();
  std::vector<size_t> indices;
  for (const NamedTensor &value : values) {
    size_t s = 0;
    if (Status st = findState(value.name, s); !st)
      return Status::error(st.code(), "'" + path + "' member '" + value.name +
                                          "': " + st.message());
    if (Status st =
            checkStateValue(program_.states[s], TensorView::of(value.tensor));
        !st)
      return Status::error(st.code(), "'" + path + "': " + st.message());
    indices.push_back(s);
  }
  for (size_t i = 0; i < values.size(); ++i)
    if (Status st = setStateValue(indices[i], TensorView::of(values[i].tensor));
        !st)
      return st;
  return Status::ok();
}

//===- SessionBinding.cpp - lmopt._lmopt.Session
//---------------------------===//
//
// The runtime's Session for Python: inputs by name as numpy arrays or
// PyTorch CPU tensors (read in place), outputs as numpy arrays, the
// metadata, states, profiling, timing and greedy generation. The GIL is
// released while the runtime works; failures raise lmopt.Error with the
// runtime's message (docs/python.md).
//
//===----------------------------------------------------------------------===//

#include "Tensors.h"

#include "lmopt/Format/Plan.h"
#include "lmopt/Runtime/Generate.h"

#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <algorithm>
#include <chrono>

namespace nb = nanobind;
using namespace lmopt;
using namespace lmopt::python;
using runtime::NamedTensor;
using runtime::NamedTensorView;
using runtime::Session;

namespace {
/// A session and the views of the inputs of its last run (kept to avoid an
/// allocation per run).
struct PySession {
  std::unique_ptr<Session> session;
  std::vector<NamedTensorView> views;
  std::vector<std::vector<int64_t>> dims;
  std::vector<InputArray> arrays;
  std::vector<std::string> names;
};
} // namespace

static size_t entryIndex(const Session &session, const std::string &entry) {
  if (entry.empty())
    return 0;
  long index = session.findEntry(entry);
  if (index < 0)
    throw Error("no entry '" + entry +
                "' in the bundle; its entries: " + session.entryNames());
  return size_t(index);
}

/// Binds `inputs` (a mapping of names to arrays) as views.
static void bindInputs(PySession &self, nb::handle inputs) {
  if (!PyDict_Check(inputs.ptr()))
    throw nb::type_error("run() takes a dict of input name to array");
  size_t count = size_t(PyDict_Size(inputs.ptr()));
  self.views.resize(count);
  self.dims.resize(count);
  self.arrays.resize(count);
  self.names.resize(count);
  size_t i = 0;
  for (auto [key, value] : nb::borrow<nb::dict>(inputs)) {
    if (!nb::isinstance<nb::str>(key))
      throw nb::type_error("input names are strings");
    self.names[i] = nb::cast<std::string>(key);
    if (!nb::try_cast(value, self.arrays[i]))
      throw nb::type_error(("input '" + self.names[i] +
                            "' is not an array lmopt reads: give a numpy "
                            "array or a PyTorch CPU tensor")
                               .c_str());
    runtime::DType dtype =
        dtypeOf(self.arrays[i], "input '" + self.names[i] + "'");
    self.views[i] = {self.names[i],
                     viewOf(self.arrays[i], dtype, self.dims[i])};
    ++i;
  }
}

static nb::dict toDict(std::vector<NamedTensor> &outputs) {
  nb::dict result;
  for (NamedTensor &output : outputs)
    result[output.name.c_str()] = toNumpy(std::move(output.tensor));
  return result;
}

static nb::dict run(PySession &self, nb::handle inputs,
                    const std::string &entry) {
  size_t index = entryIndex(*self.session, entry);
  bindInputs(self, inputs);
  std::vector<NamedTensor> outputs;
  runtime::Status status = runtime::Status::ok();
  {
    nb::gil_scoped_release release;
    status = self.session->run(index, self.views, outputs);
  }
  self.arrays.clear(); // the caller's arrays are not held past the run
  check(status);
  return toDict(outputs);
}

/// Times `runs` runs after `warmup` as lmopt-run --bench does (outputs
/// copied out, then dropped).
static nb::dict bench(PySession &self, nb::handle inputs, int runs, int warmup,
                      const std::string &entry) {
  if (runs < 1 || warmup < 0)
    throw nb::value_error("bench() needs runs >= 1 and warmup >= 0");
  size_t index = entryIndex(*self.session, entry);
  bindInputs(self, inputs);
  std::vector<double> ms;
  std::vector<NamedTensor> outputs;
  runtime::Status status = runtime::Status::ok();
  {
    nb::gil_scoped_release release;
    using Clock = std::chrono::steady_clock;
    for (int i = 0; i < warmup + runs && status.isOk(); ++i) {
      Clock::time_point start = Clock::now();
      status = self.session->run(index, self.views, outputs);
      if (i >= warmup)
        ms.push_back(
            std::chrono::duration<double, std::milli>(Clock::now() - start)
                .count());
    }
  }
  self.arrays.clear();
  check(status);
  std::sort(ms.begin(), ms.end());
  double total = 0;
  for (double m : ms)
    total += m;
  nb::dict result;
  result["runs"] = runs;
  result["median_ms"] = ms[ms.size() / 2];
  result["mean_ms"] = total / double(ms.size());
  result["min_ms"] = ms.front();
  result["max_ms"] = ms.back();
  return result;
}

static nb::list valueInfos(const std::vector<runtime::ValueInfo> &values) {
  nb::list result;
  for (const runtime::ValueInfo &value : values) {
    nb::list shape;
    for (int64_t dim : value.dims)
      shape.append(dim < 0 ? nb::object(nb::none())
                           : nb::object(nb::int_(dim)));
    nb::dict info;
    info["name"] = value.name;
    info["dtype"] = numpyDTypeName(value.dtype);
    info["shape"] = nb::tuple(shape);
    info["max_shape"] = nb::tuple(nb::cast(value.maxDims));
    result.append(info);
  }
  return result;
}

static nb::list entries(const PySession &self) {
  nb::list result;
  for (const runtime::EntryInfo &entry : self.session->entries()) {
    nb::dict info;
    info["name"] = entry.name;
    info["inputs"] = valueInfos(entry.inputs);
    info["outputs"] = valueInfos(entry.outputs);
    info["state_reads"] = nb::cast(entry.stateReads);
    info["state_writes"] = nb::cast(entry.stateWrites);
    result.append(info);
  }
  return result;
}

static nb::list states(const PySession &self) {
  nb::list result;
  for (const runtime::StateInfo &state : self.session->states()) {
    nb::dict info;
    info["name"] = state.name;
    info["dtype"] = numpyDTypeName(state.dtype);
    info["max_shape"] = nb::tuple(nb::cast(state.maxDims));
    info["device"] = state.device;
    info["shape"] = state.hasValue ? nb::object(nb::tuple(nb::cast(state.dims)))
                                   : nb::none();
    result.append(info);
  }
  return result;
}

static nb::list profile(const PySession &self) {
  nb::list result;
  for (const runtime::StepProfile &step : self.session->profile()) {
    nb::dict info;
    info["entry"] = step.entry;
    info["name"] = step.name;
    info["kind"] = runtime::stepKindName(step.kind);
    info["index"] = step.index;
    info["calls"] = step.calls;
    info["seconds"] = step.seconds;
    result.append(info);
  }
  return result;
}

static nb::dict generate(PySession &self, InputArray prompt, int64_t newTokens,
                         bool keepLogits, const std::string &prefill,
                         const std::string &decode) {
  if (dtypeOf(prompt, "the prompt") != runtime::DType::I64 ||
      prompt.ndim() != 2)
    throw Error("the prompt is int64 [batch, length]");
  runtime::Tensor tensor;
  tensor.dtype = runtime::DType::I64;
  for (size_t i = 0; i < 2; ++i)
    tensor.shape.push_back(int64_t(prompt.shape(i)));
  const auto *bytes = static_cast<const uint8_t *>(prompt.data());
  tensor.data.assign(bytes, bytes + prompt.nbytes());
  runtime::GenerateOptions options;
  options.newTokens = newTokens;
  options.keepLogits = keepLogits;
  options.prefillEntry = prefill;
  options.decodeEntry = decode;
  runtime::GenerateResult out;
  runtime::Status status = runtime::Status::ok();
  {
    nb::gil_scoped_release release;
    status = runtime::generateGreedy(*self.session, tensor, options, out);
  }
  check(status);
  nb::dict result;
  result["tokens"] = toNumpy(std::move(out.tokens));
  if (keepLogits)
    result["logits"] = toNumpy(std::move(out.logits));
  result["prefill_seconds"] = out.prefillSeconds;
  result["decode_seconds"] = nb::cast(out.decodeSeconds);
  return result;
}

// TrainerBinding.cpp
void trainSession(Session &session, const nb::dict &options, nb::object log,
                  nb::object step, nb::object eval, nb::object compileBundle);
nb::dict evaluateSession(Session &session, const std::string &data,
                         int64_t batch);

void bindSession(nb::module_ &m) {
  nb::class_<PySession>(m, "_Session")
      .def(
          "__init__",
          [](PySession *self, const std::string &path, int threads,
             bool profile) {
            runtime::SessionOptions options;
            options.threads = threads;
            options.profile = profile;
            std::unique_ptr<Session> session;
            runtime::Status status = runtime::Status::ok();
            {
              nb::gil_scoped_release release;
              status = Session::create(path, options, session);
            }
            check(status);
            new (self) PySession{std::move(session), {}, {}, {}, {}};
          },
          nb::arg("path"), nb::arg("threads") = 0, nb::arg("profile") = false)
      .def("run", &run, nb::arg("inputs"), nb::arg("entry") = "")
      .def("bench", &bench, nb::arg("inputs"), nb::arg("runs") = 10,
           nb::arg("warmup") = 3, nb::arg("entry") = "")
      .def("_entries", &entries)
      .def("_states", &states)
      .def("_profile", &profile)
      .def("reset_profile",
           [](PySession &self) { self.session->resetProfile(); })
      .def_prop_ro("meta",
                   [](const PySession &self) { return self.session->meta(); })
      .def("read_state",
           [](const PySession &self, const std::string &name) {
             runtime::Tensor value;
             check(self.session->readState(name, value));
             return toNumpy(std::move(value));
           })
      .def("write_state",
           [](PySession &self, const std::string &name, InputArray value) {
             std::vector<int64_t> dims;
             check(self.session->writeState(
                 name,
                 viewOf(value, dtypeOf(value, "state '" + name + "'"), dims)));
           })
      .def("reset_states",
           [](PySession &self) { check(self.session->resetStates()); })
      .def("save_states",
           [](const PySession &self, const std::string &path) {
             check(self.session->saveStates(path));
           })
      .def("load_states",
           [](PySession &self, const std::string &path) {
             check(self.session->loadStates(path));
           })
      .def("_generate", &generate, nb::arg("prompt"), nb::arg("new_tokens"),
           nb::arg("keep_logits"), nb::arg("prefill"), nb::arg("decode"))
      .def(
          "_train",
          [](PySession &self, const nb::dict &options, nb::object log,
             nb::object step, nb::object eval, nb::object compileBundle) {
            trainSession(*self.session, options, std::move(log),
                         std::move(step), std::move(eval),
                         std::move(compileBundle));
          },
          nb::arg("options"), nb::arg("log").none(), nb::arg("step").none(),
          nb::arg("eval").none(), nb::arg("compile_bundle").none())
      .def("_evaluate", [](PySession &self, const std::string &data,
                           int64_t batch) {
        return evaluateSession(*self.session, data, batch);
      });
}

//===- Generate.cpp - Greedy decoding with a key/value cache --------------===//
//
// Each step binds the conventional inputs, runs the entry without copying
// its outputs, and reads only the last position's logits of every row
// (prefill may return only that position).
//
//===----------------------------------------------------------------------===//

#include "lmopt/Runtime/Generate.h"

#include "lmopt/Runtime/Session.h"

#include <chrono>
#include <cstring>

using namespace lmopt::runtime;

namespace {
/// The inputs one step of an entry gets, and where its logits are.
struct StepIo {
  size_t entry = 0;
  std::string name;
  bool mask = false, positions = false;
  size_t logits = 0;
  /// The input_ids dim 1 bound and the attention_mask dim 1 bound (-1 when
  /// there is no mask).
  int64_t maxTokens = 0, maxTotal = -1;
};
} // namespace

static Status invalid(const std::string &message) {
  return Status::error(StatusCode::InvalidArgument, message);
}

/// Checks that entry `name` follows the conventions and records them.
static Status describeEntry(const Session &session, const std::string &name,
                            StepIo &io) {
  long index = session.findEntry(name);
  if (index < 0)
    return invalid("generation needs entries '" + name + "'; the bundle has " +
                   session.entryNames() +
                   " (compile the model with --kv-cache)");
  io.entry = size_t(index);
  io.name = name;
  const EntryInfo &info = session.entries()[io.entry];
  bool ids = false;
  for (const ValueInfo &input : info.inputs) {
    bool known = input.name == "input_ids" || input.name == "attention_mask" ||
                 input.name == "position_ids";
    if (!known)
      return invalid("entry '" + name + "' has input '" + input.name +
                     "', which generation does not know how to fill (it "
                     "fills input_ids, attention_mask and position_ids)");
    if (input.dtype != DType::I64 || input.dims.size() != 2)
      return invalid("entry '" + name + "' input '" + input.name + "' is " +
                     dtypeName(input.dtype) + " " + formatDims(input.dims) +
                     "; generation fills int64 [batch, length]");
    ids |= input.name == "input_ids";
    io.mask |= input.name == "attention_mask";
    io.positions |= input.name == "position_ids";
    if (input.name == "input_ids")
      io.maxTokens = input.maxDims[1];
    if (input.name == "attention_mask")
      io.maxTotal = input.maxDims[1];
  }
  if (!ids)
    return invalid("entry '" + name + "' has no input 'input_ids'");
  for (size_t i = 0; i < info.outputs.size(); ++i)
    if (info.outputs[i].name == "logits") {
      if (info.outputs[i].dtype != DType::F32 ||
          info.outputs[i].dims.size() != 3)
        return invalid("entry '" + name + "' output 'logits' is " +
                       dtypeName(info.outputs[i].dtype) + " " +
                       formatDims(info.outputs[i].dims) +
                       "; generation reads f32 [batch, length, vocab]");
      io.logits = i;
      return Status::ok();
    }
  return invalid("entry '" + name + "' has no output 'logits'");
}

/// Runs one step on `tokens` [batch, n] after `past` cached tokens and
/// writes the argmax of each row's last logits to `next` (and the logits to
/// `last` when it is not null).
static Status runStep(Session &session, const StepIo &io, const Tensor &tokens,
                      int64_t past, std::vector<int64_t> &next, float *last) {
  const int64_t batch = tokens.shape[0], n = tokens.shape[1];
  std::vector<int64_t> ones(size_t(batch * (past + n)), 1);
  std::vector<int64_t> positions(size_t(batch * n));
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t i = 0; i < n; ++i)
      positions[size_t(b * n + i)] = past + i;
  const int64_t maskDims[2] = {batch, past + n};
  std::vector<NamedTensorView> views = {{"input_ids", TensorView::of(tokens)}};
  if (io.mask)
    views.push_back({"attention_mask",
                     {DType::I64, maskDims, 2, ones.data(),
                      ones.size() * sizeof(int64_t)}});
  if (io.positions)
    views.push_back({"position_ids",
                     {DType::I64, tokens.shape.data(), 2, positions.data(),
                      positions.size() * sizeof(int64_t)}});
  if (Status st = session.execute(io.entry, views.data(), views.size()); !st)
    return st;
  const PlanTensor &logits = session.outputTensor(io.logits);
  // Every position's logits, or (a prefill compiled without
  // --prefill-all-logits) the last one's.
  if (logits.dims.size() != 3 || logits.dims[0] != batch ||
      (logits.dims[1] != n && logits.dims[1] != 1))
    return Status::error(StatusCode::InvalidFormat,
                         "entry '" + io.name + "' returned logits " +
                             formatDims(logits.dims) + " for input_ids " +
                             formatDims(tokens.shape));
  const int64_t rows = logits.dims[1], vocab = logits.dims[2];
  const auto *data = static_cast<const float *>(session.outputData(io.logits));
  next.assign(size_t(batch), 0);
  for (int64_t b = 0; b < batch; ++b) {
    const float *row = data + (b * rows + rows - 1) * vocab;
    int64_t best = 0;
    // The first maximum, as numpy.argmax takes it.
    for (int64_t v = 1; v < vocab; ++v)
      if (row[v] > row[best])
        best = v;
    next[size_t(b)] = best;
    if (last)
      std::memcpy(last + b * vocab, row, size_t(vocab) * sizeof(float));
  }
  return Status::ok();
}

Status lmopt::runtime::generateGreedy(Session &session, const Tensor &prompt,
                                      const GenerateOptions &options,
                                      GenerateResult &out) {
  out = GenerateResult();
  if (prompt.dtype != DType::I64 || prompt.shape.size() != 2 ||
      prompt.shape[0] < 1 || prompt.shape[1] < 1)
    return invalid(std::string("the prompt is ") + dtypeName(prompt.dtype) +
                   " " + formatDims(prompt.shape) +
                   "; it must be int64 [batch, length] with both >= 1");
  if (options.newTokens < 1)
    return invalid("generation needs at least one new token, not " +
                   std::to_string(options.newTokens));
  StepIo prefill, decode;
  if (Status st = describeEntry(session, options.prefillEntry, prefill); !st)
    return st;
  if (Status st = describeEntry(session, options.decodeEntry, decode); !st)
    return st;
  const int64_t batch = prompt.shape[0], length = prompt.shape[1];
  if (length > prefill.maxTokens)
    return invalid("the prompt has " + std::to_string(length) +
                   " tokens; entry '" + prefill.name + "' takes at most " +
                   std::to_string(prefill.maxTokens) +
                   " (recompile with a larger --max-shape)");
  int64_t total = length + options.newTokens - 1;
  if (decode.maxTotal >= 0 && total > decode.maxTotal)
    return invalid("a prompt of " + std::to_string(length) + " tokens and " +
                   std::to_string(options.newTokens) +
                   " new ones need a cache of " + std::to_string(total) +
                   " positions; the bundle holds " +
                   std::to_string(decode.maxTotal) +
                   " (recompile with a larger --kv-cache)");

  out.tokens.dtype = DType::I64;
  out.tokens.shape = {batch, options.newTokens};
  out.tokens.data.assign(size_t(batch * options.newTokens) * sizeof(int64_t),
                         0);
  auto *tokens = reinterpret_cast<int64_t *>(out.tokens.data.data());
  int64_t vocab =
      session.entries()[prefill.entry].outputs[prefill.logits].maxDims[2];
  if (options.keepLogits) {
    out.logits.dtype = DType::F32;
    out.logits.shape = {options.newTokens, batch, vocab};
    out.logits.data.assign(size_t(out.logits.elementCount()) * sizeof(float),
                           0);
  }
  auto lastLogits = [&](int64_t step) {
    return options.keepLogits
               ? reinterpret_cast<float *>(out.logits.data.data()) +
                     step * batch * vocab
               : nullptr;
  };
  auto record = [&](int64_t step, const std::vector<int64_t> &next) {
    for (int64_t b = 0; b < batch; ++b)
      tokens[b * options.newTokens + step] = next[size_t(b)];
    if (options.onToken)
      options.onToken(step, next);
  };

  using Clock = std::chrono::steady_clock;
  std::vector<int64_t> next;
  Clock::time_point start = Clock::now();
  if (Status st = runStep(session, prefill, prompt, 0, next, lastLogits(0));
      !st)
    return st;
  out.prefillSeconds =
      std::chrono::duration<double>(Clock::now() - start).count();
  record(0, next);
  Tensor step;
  step.dtype = DType::I64;
  step.shape = {batch, 1};
  for (int64_t i = 1; i < options.newTokens; ++i) {
    step.data.assign(reinterpret_cast<const uint8_t *>(next.data()),
                     reinterpret_cast<const uint8_t *>(next.data() + batch));
    start = Clock::now();
    if (Status st =
            runStep(session, decode, step, length + i - 1, next, lastLogits(i));
        !st)
      return st;
    out.decodeSeconds.push_back(
        std::chrono::duration<double>(Clock::now() - start).count());
    record(i, next);
  }
  return Status::ok();
}

//===- lmopt-run.cpp - Run a compiled .lmopt bundle -----------------------===//
//
// Runs a bundle on inputs from .npy/.npz files, prints or saves the outputs,
// compares them with a reference, and measures latency. It links only the
// runtime library, as an application embedding lmopt would. Every failure is
// one line "lmopt-run: error: ..." and exit status 1; outputs are written
// atomically, so a failed run leaves no output file.
//
//===----------------------------------------------------------------------===//

#include "Options.h"

#include "lmopt/Format/Float16.h"
#include "lmopt/Format/Npy.h"
#include "lmopt/Runtime/Generate.h"
#include "lmopt/Runtime/ProcessMemory.h"
#include "lmopt/Runtime/Session.h"

#include <fmt/format.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <new>
#include <optional>
#include <string>
#include <system_error>
#include <vector>

using namespace lmopt::runtime;
using lmopt_run::Options;

static Status readInputs(const Options &o, std::vector<NamedTensor> &inputs) {
  for (const std::string &archive : o.inputArchives) {
    std::vector<NamedTensor> members;
    if (Status st = readNpz(archive, members); !st)
      return st;
    for (NamedTensor &m : members)
      inputs.push_back(std::move(m));
  }
  for (const auto &[name, file] : o.inputFiles) {
    NamedTensor t;
    t.name = name;
    if (Status st = readNpy(file, t.tensor); !st)
      return st;
    inputs.push_back(std::move(t));
  }
  return Status::ok();
}

//===----------------------------------------------------------------------===//
// Printing
//===----------------------------------------------------------------------===//

/// Element `i` of `t` as a double (exact for every dtype but 64-bit
/// integers above 2^53).
static double elementAt(const Tensor &t, size_t i) {
  const uint8_t *p = t.data.data() + i * dtypeSize(t.dtype);
  auto load = [p](auto value) {
    std::memcpy(&value, p, sizeof(value));
    return value;
  };
  switch (t.dtype) {
  case DType::F32:
    return load(float());
  case DType::F64:
    return load(double());
  case DType::F16:
    return halfToFloat(load(uint16_t()));
  case DType::BF16:
    return bfloat16ToFloat(load(uint16_t()));
  case DType::I8:
    return load(int8_t());
  case DType::U8:
  case DType::Bool:
    return load(uint8_t());
  case DType::I16:
    return load(int16_t());
  case DType::U16:
    return load(uint16_t());
  case DType::I32:
    return load(int32_t());
  case DType::U32:
    return load(uint32_t());
  case DType::I64:
    return double(load(int64_t()));
  case DType::U64:
    return double(load(uint64_t()));
  }
  return 0;
}

static void printOutputs(const std::vector<NamedTensor> &outputs) {
  constexpr size_t kShown = 6;
  for (const NamedTensor &o : outputs) {
    const Tensor &t = o.tensor;
    size_t count = t.elementCount();
    std::string values;
    for (size_t i = 0; i < count && i < kShown; ++i)
      values += fmt::format("{}{:.6g}", i ? ", " : "", elementAt(t, i));
    if (count > kShown)
      values += fmt::format(", ... ({} values)", count);
    fmt::print("{}: {} {} = [{}]\n", o.name, dtypeName(t.dtype),
               formatDims(t.shape), values);
  }
}

//===----------------------------------------------------------------------===//
// Comparing
//===----------------------------------------------------------------------===//

/// Compares `outputs` with `refs` (read from o.compare); `pass` tells
/// whether all match.
static void compareOutputs(const std::vector<NamedTensor> &outputs,
                           const std::vector<NamedTensor> &refs,
                           const Options &o, bool &pass) {
  fmt::print("compare with '{}' (rtol {:g}, atol {:g}):\n", o.compare, o.rtol,
             o.atol);
  size_t failures = 0;
  for (const NamedTensor &out : outputs) {
    auto ref = std::find_if(refs.begin(), refs.end(),
                            [&](const auto &r) { return r.name == out.name; });
    std::string verdict;
    if (ref == refs.end()) {
      verdict = "missing from the reference";
    } else if (ref->tensor.dtype != out.tensor.dtype) {
      verdict = std::string("dtype ") + dtypeName(out.tensor.dtype) +
                ", the reference has " + dtypeName(ref->tensor.dtype);
    } else if (ref->tensor.shape != out.tensor.shape) {
      verdict = "shape " + formatDims(out.tensor.shape) +
                ", the reference has " + formatDims(ref->tensor.shape);
    }
    if (!verdict.empty()) {
      ++failures;
      fmt::print("  {}: {}: FAIL\n", out.name, verdict);
      continue;
    }
    double maxAbs = 0, maxRel = 0;
    size_t bad = 0, count = out.tensor.elementCount(), worst = 0;
    for (size_t i = 0; i < count; ++i) {
      double a = elementAt(out.tensor, i), r = elementAt(ref->tensor, i);
      // Equal values match, infinities included; NaN matches only NaN and
      // an infinity only the same infinity.
      if (a == r || (std::isnan(a) && std::isnan(r)))
        continue;
      double diff = std::fabs(a - r);
      if (!std::isfinite(a) || !std::isfinite(r))
        diff = INFINITY;
      double rel = r != 0 ? diff / std::fabs(r) : (diff == 0 ? 0 : INFINITY);
      if (!(std::isfinite(diff) && diff <= o.atol + o.rtol * std::fabs(r)) &&
          bad++ == 0)
        worst = i;
      if (diff > maxAbs)
        maxAbs = diff;
      maxRel = std::max(maxRel, rel);
    }
    fmt::print("  {}: max abs error {:.6g}, max rel error {:.6g}", out.name,
               maxAbs, maxRel);
    if (bad) {
      ++failures;
      fmt::print(", {} of {} elements differ (first at {}: {:.6g} vs {:.6g}): "
                 "FAIL\n",
                 bad, count, worst, elementAt(out.tensor, worst),
                 elementAt(ref->tensor, worst));
    } else {
      fmt::print(": PASS\n");
    }
  }
  for (const NamedTensor &ref : refs)
    if (std::none_of(outputs.begin(), outputs.end(),
                     [&](const auto &out) { return out.name == ref.name; }))
      fmt::print("  {}: not an output of the model (ignored)\n", ref.name);
  if (failures)
    fmt::print("FAIL: {} of {} outputs differ\n", failures, outputs.size());
  else
    fmt::print("PASS: {} outputs\n", outputs.size());
  pass = failures == 0;
}

static Status compareOutputs(const std::vector<NamedTensor> &outputs,
                             const Options &o, bool &pass) {
  std::vector<NamedTensor> refs;
  if (Status st = readNpz(o.compare, refs); !st)
    return st;
  compareOutputs(outputs, refs, o, pass);
  return Status::ok();
}

//===----------------------------------------------------------------------===//
// Benchmarking and profiling
//===----------------------------------------------------------------------===//

static Status bench(Session &session, size_t entry,
                    const std::vector<NamedTensorView> &views,
                    std::vector<NamedTensor> &outputs, const Options &o,
                    double createMs) {
  for (long i = 0; i < o.warmup; ++i)
    if (Status st = session.run(entry, views, outputs); !st)
      return st;
  session.resetProfile();
  using Clock = std::chrono::steady_clock;
  std::vector<double> ms;
  Clock::time_point begin = Clock::now();
  for (long i = 0; i < o.bench; ++i) {
    Clock::time_point start = Clock::now();
    if (Status st = session.run(entry, views, outputs); !st)
      return st;
    ms.push_back(std::chrono::duration<double, std::milli>(Clock::now() - start)
                     .count());
  }
  double total = std::chrono::duration<double>(Clock::now() - begin).count();
  std::sort(ms.begin(), ms.end());
  auto percentile = [&](double p) {
    size_t rank = size_t(std::ceil(p * double(ms.size())));
    return ms[std::min(ms.size() - 1, rank ? rank - 1 : 0)];
  };
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  fmt::print("bench: {} warm-up runs, {} timed runs, threads {}, {}\n",
             o.warmup, o.bench,
             o.threads ? std::to_string(o.threads) : "default",
             o.packWeights ? "packed weights" : "weights in place");
  fmt::print("  latency p50 {:.3f} ms, p90 {:.3f} ms, min {:.3f} ms, max "
             "{:.3f} ms\n",
             percentile(0.5), percentile(0.9), ms.front(), ms.back());
  fmt::print("  throughput {:.1f} runs/s\n", double(o.bench) / total);
  fmt::print("  peak RSS {:.1f} MiB, RSS now {:.1f} MiB\n",
             double(usage.ru_maxrss) / 1024, residentMiB());
  fmt::print("  session creation {:.1f} ms\n", createMs);
  return Status::ok();
}

/// The profile of `steps` (one entry's), per run of that entry; `title`
/// starts its first line.
static void printStepProfile(const std::vector<const StepProfile *> &steps,
                             const std::string &title, long top,
                             bool nameEntries) {
  double total = 0;
  uint64_t runs = 0;
  std::map<std::string, std::pair<size_t, double>> byKind;
  for (const StepProfile *p : steps) {
    total += p->seconds;
    runs = std::max(runs, p->calls);
    auto &entry = byKind[stepKindName(p->kind)];
    entry.first += 1;
    entry.second += p->seconds;
  }
  fmt::print("{}: {} steps, {} runs, {:.3f} ms per run in steps\n", title,
             steps.size(), runs, runs ? total * 1e3 / double(runs) : 0.0);
  fmt::print("  {:<10} {:>6} {:>12} {:>7}\n", "kind", "steps", "ms per run",
             "share");
  // '>' on every number: {fmt} 9 pads "inf" and "nan" on the right otherwise.
  for (const auto &[kind, entry] : byKind)
    fmt::print("  {:<10} {:>6} {:>12.3f} {:>6.1f}%\n", kind, entry.first,
               runs ? entry.second * 1e3 / double(runs) : 0.0,
               total > 0 ? 100 * entry.second / total : 0.0);
  std::vector<const StepProfile *> slowest = steps;
  std::stable_sort(slowest.begin(), slowest.end(),
                   [](const StepProfile *a, const StepProfile *b) {
                     return a->seconds > b->seconds;
                   });
  slowest.resize(std::min<size_t>(slowest.size(), size_t(top)));
  fmt::print("  slowest steps:\n");
  for (const StepProfile *p : slowest)
    fmt::print("    step {:<4} {:<24} {:<10} {:>10.3f} ms per run{}\n",
               p->index, p->name, stepKindName(p->kind),
               runs ? p->seconds * 1e3 / double(runs) : 0.0,
               nameEntries ? fmt::format(" (entry '{}')", p->entry) : "");
}

/// One profile for a bundle's single entry (or the one entry that ran);
/// one per entry when several ran (generation: prefill and decode), each
/// per run of its own entry.
static void printProfile(const Session &session, long top) {
  std::vector<std::string> order;
  std::map<std::string, std::vector<const StepProfile *>> byEntry;
  for (const StepProfile &p : session.profile()) {
    if (!byEntry.count(p.entry))
      order.push_back(p.entry);
    byEntry[p.entry].push_back(&p);
  }
  std::vector<std::string> ran;
  for (const std::string &entry : order)
    if (std::any_of(byEntry[entry].begin(), byEntry[entry].end(),
                    [](const StepProfile *p) { return p->calls > 0; }))
      ran.push_back(entry);
  bool entries = session.entries().size() > 1;
  if (ran.size() <= 1) {
    std::vector<const StepProfile *> all;
    for (const StepProfile &p : session.profile())
      all.push_back(&p);
    printStepProfile(all, "profile", top, entries);
    return;
  }
  for (const std::string &entry : ran)
    printStepProfile(byEntry[entry], "profile of entry '" + entry + "'", top,
                     false);
}

/// Reads the prompt: a .npy, or the member 'prompt' of an .npz.
static Status readPrompt(const std::string &path, Tensor &prompt) {
  if (path.size() < 4 || path.compare(path.size() - 4, 4, ".npz") != 0)
    return readNpy(path, prompt);
  std::vector<NamedTensor> members;
  if (Status st = readNpz(path, members); !st)
    return st;
  for (NamedTensor &m : members)
    if (m.name == "prompt") {
      prompt = std::move(m.tensor);
      return Status::ok();
    }
  return Status::error(StatusCode::NotFound,
                       "'" + path + "' has no member 'prompt'");
}

/// Compares generated tokens exactly, and each step's last logits within
/// the tolerances, with the members 'tokens' and 'logits' of REF.npz.
static Status compareGeneration(const GenerateResult &result, const Options &o,
                                bool &pass) {
  std::vector<NamedTensor> refs;
  if (Status st = readNpz(o.compare, refs); !st)
    return st;
  std::vector<NamedTensor> tokens, logits;
  for (NamedTensor &ref : refs)
    if (ref.name == "tokens" || ref.name == "logits")
      (ref.name == "tokens" ? tokens : logits).push_back(std::move(ref));
  if (tokens.empty())
    return Status::error(StatusCode::NotFound,
                         "'" + o.compare + "' has no member 'tokens'");
  Options exact = o;
  exact.rtol = 0;
  exact.atol = 0;
  bool tokensPass = true, logitsPass = true;
  compareOutputs({{"tokens", result.tokens}}, tokens, exact, tokensPass);
  if (!logits.empty())
    compareOutputs({{"logits", result.logits}}, logits, o, logitsPass);
  pass = tokensPass && logitsPass;
  return Status::ok();
}

static Status generate(Session &session, const Options &o, bool &pass) {
  Tensor prompt;
  if (Status st = readPrompt(o.prompt, prompt); !st)
    return st;
  GenerateOptions options;
  options.newTokens = o.generate;
  options.keepLogits = !o.compare.empty();
  GenerateResult result;
  // Warm-up generations (only when --warmup is given) leave a session that
  // has built its steps for these shapes, as a server's would have.
  for (long i = 0; o.warmupGiven && i < o.warmup; ++i) {
    if (Status st = generateGreedy(session, prompt, options, result); !st)
      return st;
    if (Status st = session.resetStates(); !st)
      return st;
  }
  if (Status st = generateGreedy(session, prompt, options, result); !st)
    return st;
  const int64_t batch = result.tokens.shape[0];
  const auto *tokens =
      reinterpret_cast<const int64_t *>(result.tokens.data.data());
  for (int64_t b = 0; b < batch; ++b)
    fmt::print(
        "tokens[{}]: {}\n", b,
        fmt::join(tokens + b * o.generate, tokens + (b + 1) * o.generate, " "));
  std::vector<double> ms;
  double decodeTotal = 0;
  for (double s : result.decodeSeconds) {
    ms.push_back(s * 1e3);
    decodeTotal += s;
  }
  std::sort(ms.begin(), ms.end());
  fmt::print("prefill: {} x {} tokens in {:.3f} ms\n", batch, prompt.shape[1],
             result.prefillSeconds * 1e3);
  if (!ms.empty())
    fmt::print("decode: {} steps, p50 {:.3f} ms, min {:.3f} ms, max {:.3f} ms "
               "per step, {:.1f} tokens/s\n",
               ms.size(), ms[ms.size() / 2], ms.front(), ms.back(),
               double(batch) * double(ms.size()) / decodeTotal);
  if (!o.compare.empty())
    return compareGeneration(result, o, pass);
  return Status::ok();
}

//===----------------------------------------------------------------------===//
// Main
//===----------------------------------------------------------------------===//

/// What a --generate or --dataset run ends with: the profile and the states.
static Status finishRun(Session &session, const Options &o) {
  if (o.profile)
    printProfile(session, o.profileTop);
  if (!o.saveStates.empty())
    return session.saveStates(o.saveStates);
  return Status::ok();
}

/// Runs the tool; a failed status is the one error line, `pass` false a
/// comparison that failed.
static Status runTool(const Options &o, bool &pass) {
  pass = true;
  std::vector<NamedTensor> inputs;
  if (Status st = readInputs(o, inputs); !st)
    return st;
  SessionOptions sessionOptions;
  sessionOptions.threads = o.threads;
  sessionOptions.profile = o.profile;
  sessionOptions.packLinearWeights = o.packWeights;
  sessionOptions.allowTf32 = o.tf32;
  sessionOptions.recordRuns = o.recordRuns;
  sessionOptions.randomWeightsSeed = o.randomWeightsSeed;
  std::unique_ptr<Session> session;
  auto createStart = std::chrono::steady_clock::now();
  if (Status st = Session::create(o.model, sessionOptions, session); !st)
    return st;
  if (session->hasRandomWeights())
    fmt::print(stderr,
               "lmopt-run: warning: '{}' was compiled with --omit-weights "
               "and runs on random weights (seed {}): its outputs are "
               "meaningless; time it, never use them{}\n",
               o.model, *o.randomWeightsSeed,
               o.compare.empty() ? "" : ", and expect '--compare' to fail");
  double createMs = std::chrono::duration<double, std::milli>(
                        std::chrono::steady_clock::now() - createStart)
                        .count();

  if (!o.loadStates.empty())
    if (Status st = session->loadStates(o.loadStates); !st)
      return st;
  if (o.generate > 0) {
    if (Status st = generate(*session, o, pass); !st)
      return st;
    return finishRun(*session, o);
  }
  size_t entry = 0;
  if (!o.entry.empty())
    if (Status st = session->findEntry(o.entry, entry); !st)
      return st;

  if (!o.dataset.dataset.empty()) {
    lmopt_run::DatasetRunOptions dataset = o.dataset;
    dataset.output = o.output;
    if (Status st = lmopt_run::runDataset(*session, entry, dataset); !st)
      return st;
    return finishRun(*session, o);
  }

  std::vector<NamedTensorView> views;
  for (const NamedTensor &input : inputs)
    views.push_back({input.name, TensorView::of(input.tensor)});
  std::vector<NamedTensor> outputs;
  if (Status st = o.bench > 0
                      ? bench(*session, entry, views, outputs, o, createMs)
                      : session->run(entry, views, outputs);
      !st)
    return st;

  printOutputs(outputs);
  if (!o.output.empty()) {
    if (Status st = writeNpz(o.output, outputs); !st)
      return st;
    fmt::print("wrote {} outputs to '{}'\n", outputs.size(), o.output);
  }
  if (!o.saveStates.empty()) {
    if (Status st = session->saveStates(o.saveStates); !st)
      return st;
    fmt::print("wrote the states to '{}'\n", o.saveStates);
  }
  if (o.profile)
    printProfile(*session, o.profileTop);
  if (!o.compare.empty())
    return compareOutputs(outputs, o, pass);
  return Status::ok();
}

int main(int argc, char **argv) {
  Options options;
  std::string error;
  bool help = false;
  if (!lmopt_run::parseArgs(argc, argv, options, error, help)) {
    fmt::print(stderr, "lmopt-run: error: {} (see 'lmopt-run --help')\n",
               error);
    return 1;
  }
  if (help) {
    std::fputs(lmopt_run::kUsage, stdout);
    return 0;
  }
  bool pass = true;
  Status st;
  // The runtime returns a status for every allocation it checks; a vector
  // or string that cannot grow throws, and ends here as the same error.
  try {
    st = runTool(options, pass);
  } catch (const std::bad_alloc &) {
    st = Status::error(StatusCode::IoError, "out of memory");
  } catch (const std::system_error &e) {
    // fmt::print throws where printf failed silently (stdout on a full disk).
    st = Status::error(StatusCode::IoError, e.what());
  }
  std::fflush(stdout);
  if (!st) {
    fmt::print(stderr, "lmopt-run: error: {}\n", st.message());
    return 1;
  }
  return pass ? 0 : 1;
}

//===- lmopt-soak.cpp - Many runs of a bundle at random dims --------------===//
//
// Runs an entry of a bundle N times, each at dims drawn at random within its
// bounds (RandomInputs, seeded), and reports the process's resident memory
// at the start, after the warm-up runs and at the end: memory that grows
// run after run once every shape has been seen is a leak. With
// --max-growth, growth beyond it after the warm-up fails (exit status 1).
// docs/testing.md, "Soak".
//
//===----------------------------------------------------------------------===//

#include "lmopt/Runtime/ProcessMemory.h"
#include "lmopt/Runtime/RandomInputs.h"
#include "lmopt/Runtime/Session.h"

#include <fmt/format.h>

#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <new>
#include <set>
#include <string>
#include <system_error>
#include <vector>

using namespace lmopt::runtime;

static const char *const kUsage =
    "usage: lmopt-soak MODEL.lmopt [--runs N] [--warmup N] [--seed S]\n"
    "                  [--threads N] [--entry NAME] [--int-limit N]\n"
    "                  [--independent-dims] [--max-growth PCT]\n"
    "\n"
    "Runs an entry of a bundle N times, each at dims drawn at random within "
    "its\n"
    "bounds, and prints the resident memory at the start, after the "
    "warm-up and\n"
    "at the end, with the growth after the warm-up in percent.\n"
    "\n"
    "  --runs N            runs in all, the warm-up included (default "
    "10000)\n"
    "  --warmup N          runs before the reference RSS (default 1000, at "
    "most\n"
    "                      --runs)\n"
    "  --seed S            seed of the dims and values (default 1)\n"
    "  --threads N         threads for library steps (0: oneDNN's "
    "default)\n"
    "  --entry NAME        the entry point to run (default: the first)\n"
    "  --int-limit N       integer inputs take values in [0, N) (default 2: "
    "valid\n"
    "                      ids, masks and type ids for any vocabulary)\n"
    "  --independent-dims  draw every symbol alone (default: symbols at one "
    "dim\n"
    "                      position with one bound take one value)\n"
    "  --max-growth PCT    exit status 1 when RSS grows by more than PCT "
    "percent\n"
    "                      from the warm-up to the end\n";

namespace {
struct Options {
  std::string model;
  long runs = 10000;
  long warmup = 1000;
  bool warmupGiven = false;
  long seed = 1;
  long threads = 0;
  std::string entry;
  long intLimit = 2;
  bool independentDims = false;
  double maxGrowth = -1;
};
} // namespace

static bool parseLong(const std::string &text, long &out) {
  char *end = nullptr;
  errno = 0;
  out = std::strtol(text.c_str(), &end, 10);
  return !text.empty() && errno == 0 && *end == '\0' && out >= 0;
}

static bool parseArgs(int argc, char **argv, Options &o, std::string &error,
                      bool &help) {
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--help" || arg == "-h") {
      help = true;
      return true;
    }
    if (arg == "--independent-dims") {
      o.independentDims = true;
      continue;
    }
    if (arg.rfind("--", 0) != 0) {
      if (!o.model.empty()) {
        error = "a second model '" + arg + "'";
        return false;
      }
      o.model = arg;
      continue;
    }
    std::string value;
    if (size_t eq = arg.find('='); eq != std::string::npos) {
      value = arg.substr(eq + 1);
      arg = arg.substr(0, eq);
    } else if (i + 1 < argc) {
      value = argv[++i];
    } else {
      error = "'" + arg + "' needs a value";
      return false;
    }
    long *number = arg == "--runs"        ? &o.runs
                   : arg == "--warmup"    ? &o.warmup
                   : arg == "--seed"      ? &o.seed
                   : arg == "--threads"   ? &o.threads
                   : arg == "--int-limit" ? &o.intLimit
                                          : nullptr;
    if (number) {
      if (!parseLong(value, *number)) {
        error =
            "'" + arg + "' takes a non-negative integer, not '" + value + "'";
        return false;
      }
      o.warmupGiven |= arg == "--warmup";
      continue;
    }
    if (arg == "--entry") {
      o.entry = value;
      continue;
    }
    if (arg == "--max-growth") {
      char *end = nullptr;
      o.maxGrowth = std::strtod(value.c_str(), &end);
      if (value.empty() || *end != '\0' || !std::isfinite(o.maxGrowth) ||
          o.maxGrowth < 0) {
        error = "'--max-growth' takes a percentage, not '" + value + "'";
        return false;
      }
      continue;
    }
    error = "unknown option '" + arg + "'";
    return false;
  }
  if (o.model.empty()) {
    error = "no model given";
    return false;
  }
  if (o.runs < 1) {
    error = "'--runs' must be at least 1";
    return false;
  }
  if (o.warmup >= o.runs) {
    if (o.warmupGiven) {
      error = fmt::format("'--warmup' ({}) must be below '--runs' ({})",
                          o.warmup, o.runs);
      return false;
    }
    o.warmup = o.runs / 10;
  }
  return true;
}

/// "input_ids [2, 7], attention_mask [2, 7]".
static std::string formatInputDims(const std::vector<NamedTensor> &inputs) {
  std::string text;
  for (const NamedTensor &input : inputs)
    text += fmt::format("{}{} {}", text.empty() ? "" : ", ", input.name,
                        formatDims(input.tensor.shape));
  return text;
}

/// Runs the soak; a failed status is the one error line, `pass` false a
/// growth beyond --max-growth.
static Status soak(const Options &o, bool &pass) {
  SessionOptions sessionOptions;
  sessionOptions.threads = int(o.threads);
  std::unique_ptr<Session> session;
  if (Status st = Session::create(o.model, sessionOptions, session); !st)
    return st;
  size_t entry = 0;
  if (!o.entry.empty())
    if (Status st = session->findEntry(o.entry, entry); !st)
      return st;
  const Plan &plan = session->program().entries[entry];
  RandomInputOptions inputOptions;
  inputOptions.seed = uint64_t(o.seed);
  inputOptions.intLimit = o.intLimit;
  inputOptions.independentDims = o.independentDims;
  RandomInputs random;
  if (Status st = RandomInputs::create(plan, inputOptions, random); !st)
    return st;
  fmt::print("soak: '{}' entry '{}', {} runs ({} warm-up), seed {}\n", o.model,
             plan.name, o.runs, o.warmup, o.seed);
  fmt::print("  dims drawn: {}\n", random.describe());

  double start = residentMiB(), warm = start;
  std::set<std::string> shapes;
  std::vector<NamedTensor> inputs, outputs;
  std::vector<NamedTensorView> views;
  auto began = std::chrono::steady_clock::now();
  for (long run = 0; run < o.runs; ++run) {
    if (run == o.warmup)
      warm = residentMiB();
    if (Status st = random.draw(inputs); !st)
      return st;
    views.clear();
    for (const NamedTensor &input : inputs)
      views.push_back({input.name, TensorView::of(input.tensor)});
    if (Status st = session->run(entry, views, outputs); !st)
      return Status::error(st.code(),
                           fmt::format("run {} ({}): {}", run,
                                       formatInputDims(inputs), st.message()));
    if (shapes.size() < 100000)
      shapes.insert(formatInputDims(inputs));
  }
  double end = residentMiB();
  double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - began)
          .count();
  double growth = warm > 0 ? (end - warm) / warm * 100 : 0;
  fmt::print("  {} distinct input shapes, {:.1f} runs/s\n", shapes.size(),
             double(o.runs) / seconds);
  fmt::print("rss: start {:.1f} MiB, after {} warm-up runs {:.1f} MiB, end "
             "{:.1f} MiB\n",
             start, o.warmup, warm, end);
  fmt::print("growth after warm-up: {:+.2f}%", growth);
  pass = o.maxGrowth < 0 || growth <= o.maxGrowth;
  if (o.maxGrowth >= 0)
    fmt::print(" (limit {:.2f}%): {}", o.maxGrowth, pass ? "PASS" : "FAIL");
  fmt::print("\n");
  return Status::ok();
}

int main(int argc, char **argv) {
  Options options;
  std::string error;
  bool help = false;
  if (!parseArgs(argc, argv, options, error, help)) {
    fmt::print(stderr, "lmopt-soak: error: {} (see 'lmopt-soak --help')\n",
               error);
    return 1;
  }
  if (help) {
    std::fputs(kUsage, stdout);
    return 0;
  }
  bool pass = true;
  Status st;
  try {
    st = soak(options, pass);
  } catch (const std::bad_alloc &) {
    st = Status::error(StatusCode::IoError, "out of memory");
  } catch (const std::system_error &e) {
    // fmt::print throws where printf failed silently (stdout on a full disk).
    st = Status::error(StatusCode::IoError, e.what());
  }
  std::fflush(stdout);
  if (!st) {
    fmt::print(stderr, "lmopt-soak: error: {}\n", st.message());
    return 1;
  }
  return pass ? 0 : 1;
}

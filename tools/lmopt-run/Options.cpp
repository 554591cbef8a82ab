//===- Options.cpp - lmopt-run's command line -----------------------------===//

#include "Options.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>

using namespace lmopt_run;

const char *const lmopt_run::kUsage =
    "usage: lmopt-run MODEL.lmopt [--input NAME=FILE.npy]... [--inputs "
    "FILE.npz]\n"
    "                 [--output OUT.npz] [--threads N] [--bench N [--warmup "
    "N]]\n"
    "                 [--compare REF.npz [--rtol X] [--atol X]]\n"
    "                 [--profile [--profile-top N]]\n"
    "                 [--no-pack-weights] [--tf32] [--no-record-runs] [--entry "
    "NAME]\n"
    "                 [--random-weights SEED]\n"
    "                 [--load-states FILE.npz] [--save-states FILE.npz]\n"
    "       lmopt-run MODEL.lmopt --generate N --prompt IDS.npy [--compare "
    "REF.npz]\n"
    "       lmopt-run MODEL.lmopt --dataset PREFIX.idx [--tokenizer "
    "tokenizer.json]\n"
    "                 [--batch N] [--truncate] [--no-bucket] [--output "
    "OUT.npz]\n"
    "\n"
    "Runs a compiled model on inputs from NumPy files and prints each "
    "output's\n"
    "name, dtype, shape and first values.\n"
    "\n"
    "  --entry NAME           the entry point to run (default: the bundle's "
    "first)\n"
    "  --load-states FILE.npz give the session's states these values "
    "first\n"
    "  --save-states FILE.npz write the states after the run (atomically)\n"
    "  --generate N           greedy decoding of N tokens with the bundle's "
    "prefill\n"
    "                         and decode entries (lmopt-compile --kv-cache): "
    "prints\n"
    "                         the tokens, the prefill time and decode "
    "tokens/s;\n"
    "                         --compare checks the member 'tokens' exactly "
    "and\n"
    "                         'logits' (each step's last logits) within "
    "tolerance\n"
    "  --prompt FILE          int64 [batch, length] prompt ids: a .npy, or "
    "an .npz\n"
    "                         with a member 'prompt'; with --warmup N, N "
    "untimed\n"
    "                         generations come first\n"
    "  --dataset PREFIX.idx   run over a token dataset (lmopt-tokenize "
    "--format\n"
    "                         dataset) in batches of similar lengths, each "
    "padded\n"
    "                         to its longest; prints examples, batches, "
    "padding and\n"
    "                         tokens/s; --output writes every output, one "
    "row per\n"
    "                         example in input order, and 'lengths'\n"
    "  --tokenizer FILE       refuse a dataset written with another "
    "tokenizer.json\n"
    "  --batch N              examples per batch (default: the model's "
    "static batch,\n"
    "                         else 8)\n"
    "  --truncate             cut examples longer than the model takes "
    "(default:\n"
    "                         refuse them)\n"
    "  --no-bucket            batch in dataset order instead of by length\n"
    "  --input NAME=FILE.npy  the input NAME (repeatable)\n"
    "  --inputs FILE.npz      every member is an input, named after it\n"
    "  --output OUT.npz       also write the outputs (atomically)\n"
    "  --threads N            threads for library steps (0: oneDNN's "
    "default)\n"
    "  --bench N              after --warmup runs (default 3), time N runs: "
    "p50/p90\n"
    "                         latency, throughput and peak RSS\n"
    "  --compare REF.npz      compare every output with the member of the "
    "same name\n"
    "                         (|out - ref| <= atol + rtol |ref|, rtol 1e-4, "
    "atol 1e-5);\n"
    "                         exit status 1 when one differs\n"
    "  --profile              time every step; print totals per step kind "
    "and the\n"
    "                         slowest steps\n"
    "  --profile-top N        list the N slowest steps (default 5)\n"
    "  --no-pack-weights      linear steps read their weights in place on "
    "every run\n"
    "                         instead of packing a copy once (to compare)\n"
    "  --tf32                 GPU: f32 matrix products may use TF32 tensor "
    "cores\n"
    "  --no-record-runs       GPU: launch every step on every run instead of "
    "recording\n"
    "                         a run as a CUDA graph and replaying it (to "
    "compare)\n"
    "  --random-weights SEED  fill the weights of a bundle compiled with\n"
    "                         --omit-weights with random values from SEED: "
    "to time\n"
    "                         it; its outputs are meaningless\n";

static bool parseLong(const std::string &text, long &out) {
  if (text.empty())
    return false;
  char *end = nullptr;
  errno = 0;
  out = std::strtol(text.c_str(), &end, 10);
  return errno == 0 && *end == '\0' && out >= 0;
}

static bool parseDouble(const std::string &text, double &out) {
  if (text.empty())
    return false;
  char *end = nullptr;
  errno = 0;
  out = std::strtod(text.c_str(), &end);
  return errno == 0 && *end == '\0' && out >= 0 && std::isfinite(out);
}

/// The flags --dataset takes and those it excludes.
static bool checkDatasetArgs(const Options &o, std::string &error) {
  const lmopt_run::DatasetRunOptions &d = o.dataset;
  if (d.dataset.empty()) {
    if (!d.tokenizer.empty() || o.batchGiven || d.truncate || !d.byLength)
      error = "'--tokenizer', '--batch', '--truncate' and '--no-bucket' "
              "need '--dataset'";
    return error.empty();
  }
  if (!o.inputFiles.empty() || !o.inputArchives.empty() || o.bench ||
      !o.compare.empty() || o.generate)
    error = "'--dataset' gives every input and runs each batch once; it does "
            "not take '--input', '--inputs', '--bench', '--compare' or "
            "'--generate'";
  return error.empty();
}

bool lmopt_run::parseArgs(int argc, char **argv, Options &o, std::string &error,
                          bool &help) {
  help = false;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "-h" || arg == "--help") {
      help = true;
      return true;
    }
    if (arg.rfind("--", 0) != 0) {
      if (!o.model.empty()) {
        error = "unexpected argument '" + arg + "' (the model is '" + o.model +
                "')";
        return false;
      }
      o.model = arg;
      continue;
    }
    std::string name = arg, value;
    bool inlineValue = false;
    if (size_t eq = arg.find('='); eq != std::string::npos) {
      name = arg.substr(0, eq);
      value = arg.substr(eq + 1);
      inlineValue = true;
    }
    if (name == "--profile" || name == "--no-pack-weights" ||
        name == "--tf32" || name == "--no-record-runs" ||
        name == "--truncate" || name == "--no-bucket") {
      if (inlineValue) {
        error = "'" + name + "' takes no value";
        return false;
      }
      if (name == "--profile")
        o.profile = true;
      else if (name == "--tf32")
        o.tf32 = true;
      else if (name == "--no-record-runs")
        o.recordRuns = false;
      else if (name == "--truncate")
        o.dataset.truncate = true;
      else if (name == "--no-bucket")
        o.dataset.byLength = false;
      else
        o.packWeights = false;
      continue;
    }
    static const char *const kValued[] = {
        "--input",       "--inputs",      "--output",         "--threads",
        "--bench",       "--warmup",      "--compare",        "--rtol",
        "--atol",        "--entry",       "--prompt",         "--generate",
        "--load-states", "--save-states", "--random-weights", "--profile-top",
        "--dataset",     "--tokenizer",   "--batch"};
    if (std::find_if(std::begin(kValued), std::end(kValued),
                     [&](const char *v) { return name == v; }) ==
        std::end(kValued)) {
      error = "unknown option '" + name + "'";
      return false;
    }
    if (!inlineValue) {
      if (i + 1 >= argc) {
        error = "'" + name + "' needs a value";
        return false;
      }
      value = argv[++i];
    }
    long number = 0;
    if (name == "--input") {
      size_t eq = value.find('=');
      if (eq == std::string::npos || eq == 0 || eq + 1 == value.size()) {
        error = "'--input' expects NAME=FILE.npy, got '" + value + "'";
        return false;
      }
      o.inputFiles.emplace_back(value.substr(0, eq), value.substr(eq + 1));
    } else if (name == "--inputs") {
      o.inputArchives.push_back(value);
    } else if (name == "--dataset") {
      o.dataset.dataset = value;
    } else if (name == "--tokenizer") {
      o.dataset.tokenizer = value;
    } else if (name == "--output") {
      o.output = value;
    } else if (name == "--compare") {
      o.compare = value;
    } else if (name == "--entry") {
      o.entry = value;
    } else if (name == "--prompt") {
      o.prompt = value;
    } else if (name == "--load-states") {
      o.loadStates = value;
    } else if (name == "--save-states") {
      o.saveStates = value;
    } else if (name == "--random-weights") {
      char *end = nullptr;
      errno = 0;
      unsigned long long seed = std::strtoull(value.c_str(), &end, 10);
      if (value.empty() || value[0] == '-' || errno != 0 || *end != '\0') {
        error = "'--random-weights' expects a seed (an integer in [0, "
                "2^64)), got '" +
                value + "'";
        return false;
      }
      o.randomWeightsSeed = uint64_t(seed);
    } else if (name == "--rtol" || name == "--atol") {
      if (!parseDouble(value, name == "--rtol" ? o.rtol : o.atol)) {
        error =
            "'" + name + "' expects a non-negative number, got '" + value + "'";
        return false;
      }
    } else if (!parseLong(value, number) || number > (1 << 30)) {
      error =
          "'" + name + "' expects a non-negative integer, got '" + value + "'";
      return false;
    } else if (name == "--threads") {
      o.threads = int(number);
    } else if (name == "--bench") {
      o.bench = number;
    } else if (name == "--generate") {
      o.generate = number;
    } else if (name == "--batch") {
      if (number < 1) {
        error = "'--batch' expects a positive integer, got '" + value + "'";
        return false;
      }
      o.dataset.batch = number;
      o.batchGiven = true;
    } else if (name == "--profile-top") {
      o.profileTop = number;
    } else {
      o.warmup = number;
      o.warmupGiven = true;
    }
  }
  if (o.model.empty()) {
    error = "no model given";
    return false;
  }
  if ((o.generate > 0) != !o.prompt.empty()) {
    error = o.prompt.empty() ? "'--generate' needs '--prompt'"
                             : "'--prompt' needs '--generate N' with N >= 1";
    return false;
  }
  if (o.generate > 0 && (!o.inputFiles.empty() || !o.inputArchives.empty() ||
                         !o.output.empty() || o.bench || !o.entry.empty())) {
    error = "'--generate' fills the entries' inputs itself; it does not take "
            "'--input', '--inputs', '--output', '--bench' or '--entry'";
    return false;
  }
  return checkDatasetArgs(o, error);
}

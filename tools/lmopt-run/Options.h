//===- Options.h - lmopt-run's command line ---------------------*- C++ -*-===//

#ifndef LMOPT_TOOLS_LMOPT_RUN_OPTIONS_H
#define LMOPT_TOOLS_LMOPT_RUN_OPTIONS_H

#include "DatasetRun.h"

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace lmopt_run {

extern const char *const kUsage;

struct Options {
  std::string model;
  std::vector<std::pair<std::string, std::string>> inputFiles;
  std::vector<std::string> inputArchives;
  std::string output;
  int threads = 0;
  long bench = 0;
  long warmup = 3;
  bool warmupGiven = false;
  std::string compare;
  double rtol = 1e-4;
  double atol = 1e-5;
  bool profile = false;
  long profileTop = 5;
  bool packWeights = true;
  bool tf32 = false;
  bool recordRuns = true;
  std::string entry;
  std::string loadStates;
  std::string saveStates;
  long generate = 0;
  std::string prompt;
  std::optional<uint64_t> randomWeightsSeed;
  DatasetRunOptions dataset;
  bool batchGiven = false;
};

/// Parses the command line; false with `error` set on a bad one.
bool parseArgs(int argc, char **argv, Options &o, std::string &error,
               bool &help);

} // namespace lmopt_run

#endif // LMOPT_TOOLS_LMOPT_RUN_OPTIONS_H

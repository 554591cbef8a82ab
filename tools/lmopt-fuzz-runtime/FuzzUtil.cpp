//===- FuzzUtil.cpp - Shared helpers of the runtime fuzz targets ----------===//

#include "FuzzUtil.h"

#include <cstdio>
#include <cstdlib>
#include <map>
#include <unistd.h>

namespace lmopt::fuzz {

static std::map<std::string, std::string> &inputFiles() {
  static auto *files = new std::map<std::string, std::string>();
  return *files;
}

static void removeInputFiles() {
  for (const auto &entry : inputFiles())
    std::remove(entry.second.c_str());
}

std::string writeInputFile(const uint8_t *data, size_t size,
                           const char *suffix) {
  std::string &path = inputFiles()[suffix];
  if (path.empty()) {
    const char *dir = std::getenv("TMPDIR");
    path = std::string(dir && *dir ? dir : "/tmp") + "/lmopt-fuzz-" +
           std::to_string(getpid()) + suffix;
    if (inputFiles().size() == 1)
      std::atexit(removeInputFiles);
  }
  // Rewritten, not truncated in place: a reader's mapping of the previous
  // input is gone by now, but a fresh inode keeps that from mattering.
  std::remove(path.c_str());
  FILE *file = std::fopen(path.c_str(), "wb");
  if (!file || (size && std::fwrite(data, 1, size, file) != size) ||
      std::fclose(file) != 0) {
    std::perror(path.c_str());
    std::abort();
  }
  return path;
}

void check(bool ok, const char *what) {
  if (ok)
    return;
  std::fprintf(stderr, "fuzz target invariant broken: %s\n", what);
  std::abort();
}

} // namespace lmopt::fuzz

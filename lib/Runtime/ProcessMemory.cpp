//===- ProcessMemory.cpp - This process's resident memory -----------------===//

#include "lmopt/Runtime/ProcessMemory.h"

#include <cstdio>

#include <unistd.h>

double lmopt::runtime::residentMiB() {
  FILE *f = std::fopen("/proc/self/statm", "r");
  if (!f)
    return 0;
  unsigned long size = 0, resident = 0;
  int read = std::fscanf(f, "%lu %lu", &size, &resident);
  std::fclose(f);
  return read == 2 ? double(resident) * double(sysconf(_SC_PAGESIZE)) /
                         (1024.0 * 1024.0)
                   : 0;
}

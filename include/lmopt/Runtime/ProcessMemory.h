//===- ProcessMemory.h - This process's resident memory ---------*- C++ -*-===//
//
// The resident set of the calling process, as the tools report it
// (lmopt-run --bench, lmopt-soak).
//
//===----------------------------------------------------------------------===//

#ifndef LMOPT_RUNTIME_PROCESSMEMORY_H
#define LMOPT_RUNTIME_PROCESSMEMORY_H

namespace lmopt::runtime {

/// The process's resident set now in MiB, from /proc/self/statm (0 where it
/// cannot be read).
double residentMiB();

} // namespace lmopt::runtime

#endif // LMOPT_RUNTIME_PROCESSMEMORY_H

//===- OmpRegionSync.h - OpenMP regions ThreadSanitizer can follow -*- C++ -*-===//
//
// libgomp (Debian's, not built with ThreadSanitizer) starts and ends a
// parallel region with its own atomics and futexes, which TSan cannot see.
// Without them, a worker's read of a variable the calling thread shares into
// the region (a stack slot of the caller's frame) and the caller's next write
// to that slot after the region look unordered: a report that names only the
// runtime's code, so a suppression of libgomp does not match it.
//
// OmpRegionSync states the order the region gives: the caller releases
// before the region (`fork`), every thread acquires first thing in it
// (`enter`) and releases last thing (`leave`), and the caller acquires after
// it (`join`). Each object is its own synchronization address, so regions
// of different sessions on different threads stay unordered for TSan, as
// they are. Without TSan every call is empty.
//
//===----------------------------------------------------------------------===//

#ifndef LMOPT_LIB_RUNTIME_CPU_OMPREGIONSYNC_H
#define LMOPT_LIB_RUNTIME_CPU_OMPREGIONSYNC_H

#if defined(__SANITIZE_THREAD__)
#define LMOPT_TSAN_ANNOTATIONS 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define LMOPT_TSAN_ANNOTATIONS 1
#endif
#endif

#ifdef LMOPT_TSAN_ANNOTATIONS
#include <sanitizer/tsan_interface.h>
#endif

namespace lmopt::runtime {

class OmpRegionSync {
public:
  /// On the calling thread, before the region.
  void fork() { release(); }
  /// On every thread of the region, first.
  void enter() { acquire(); }
  /// On every thread of the region, last.
  void leave() { release(); }
  /// On the calling thread, after the region.
  void join() { acquire(); }

private:
#ifdef LMOPT_TSAN_ANNOTATIONS
  void acquire() { __tsan_acquire(&token); }
  void release() { __tsan_release(&token); }
  char token = 0;
#else
  void acquire() {}
  void release() {}
#endif
};

} // namespace lmopt::runtime

#endif // LMOPT_LIB_RUNTIME_CPU_OMPREGIONSYNC_H

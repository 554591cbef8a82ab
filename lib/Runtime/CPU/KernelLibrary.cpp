//===- KernelLibrary.cpp - Loading the bundle's generated kernels ---------===//
//
// dlopen needs a path, so the bytes go to an anonymous memfd opened through
// /proc/self/fd/N; where memfds or /proc are unavailable, to a temporary file
// that is unlinked right after dlopen. glibc takes an object already loaded
// under the same path for the one asked for, whatever the file's content now,
// and an object linked with `-z nodelete` (as LLVM's build flags do) stays
// loaded after dlclose. So a library is only ever loaded under a path that
// no loaded object has: the memfd is dup'ed to another number while its
// /proc path is taken, and it stays open (its number reserved) while the
// library is loaded.
//
//===----------------------------------------------------------------------===//

#include "lmopt/Runtime/CPU/KernelLibrary.h"
#include "OmpRegionSync.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <link.h>
#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <mutex>

using namespace lmopt::runtime;

/// Serializes loading, so that a path found free stays free until dlopen.
static std::mutex &loadMutex() {
  static std::mutex mutex;
  return mutex;
}

/// True when a loaded object has the name `path`.
static bool pathLoaded(const std::string &path) {
  std::pair<const std::string *, bool> query{&path, false};
  dl_iterate_phdr(
      [](dl_phdr_info *info, size_t, void *data) {
        auto *q = static_cast<std::pair<const std::string *, bool> *>(data);
        if (info->dlpi_name && *q->first == info->dlpi_name)
          q->second = true;
        return q->second ? 1 : 0;
      },
      &query);
  return query.second;
}

static std::string errnoText() { return std::strerror(errno); }

static std::string dlerrorText() {
  const char *text = dlerror();
  return text ? text : "unknown dlopen error";
}

static bool writeAll(int fd, const uint8_t *data, size_t size) {
  while (size > 0) {
    ssize_t n = ::write(fd, data, size);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      return false;
    data += n;
    size -= size_t(n);
  }
  return true;
}

/// "\x7fELF" or the first bytes in \xNN form, for the not-ELF message.
static std::string leadingBytes(const uint8_t *data, size_t size) {
  std::string out;
  for (size_t i = 0; i < size && i < 4; ++i) {
    if (data[i] >= 0x20 && data[i] < 0x7f && data[i] != '\'' &&
        data[i] != '\\') {
      out += char(data[i]);
      continue;
    }
    out += fmt::format("\\x{:02x}", data[i]);
  }
  return out;
}

static void *openPath(const std::string &path, std::string &error) {
  void *handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle)
    error = dlerrorText();
  return handle;
}

/// Loads through a memfd. Returns false (and no error) when memfds or /proc
/// are unavailable, so that the caller falls back to a temporary file.
static bool loadFromMemfd(const uint8_t *data, size_t size, void *&handle,
                          int &fd, std::string &error) {
  fd = memfd_create("lmopt-kernels", MFD_CLOEXEC);
  if (fd < 0)
    return false;
  auto procPath = [](int n) { return "/proc/self/fd/" + std::to_string(n); };
  if (!writeAll(fd, data, size) || access(procPath(fd).c_str(), R_OK) != 0) {
    ::close(fd);
    fd = -1;
    return false;
  }
  std::lock_guard<std::mutex> lock(loadMutex());
  // Move to a descriptor number whose path no loaded object has.
  for (int attempt = 0; attempt < 64 && pathLoaded(procPath(fd)); ++attempt) {
    int next = fcntl(fd, F_DUPFD_CLOEXEC, fd + 1);
    ::close(fd);
    fd = next;
    if (fd < 0)
      return false;
  }
  if (!pathLoaded(procPath(fd))) {
    handle = openPath(procPath(fd), error);
    return true;
  }
  ::close(fd);
  fd = -1;
  return false;
}

static void loadFromTempFile(const uint8_t *data, size_t size, void *&handle,
                             std::string &error) {
  const char *dir = std::getenv("TMPDIR");
  std::string path =
      std::string(dir && *dir ? dir : "/tmp") + "/lmopt-kernels-XXXXXX";
  int fd = mkstemp(path.data());
  if (fd < 0) {
    error = "cannot create a temporary file '" + path + "': " + errnoText();
    return;
  }
  bool written = writeAll(fd, data, size);
  std::string writeError = written ? "" : errnoText();
  ::close(fd);
  if (!written) {
    ::unlink(path.c_str());
    error = "cannot write the temporary file '" + path + "': " + writeError;
    return;
  }
  std::lock_guard<std::mutex> lock(loadMutex());
  if (pathLoaded(path))
    error = "a library named '" + path + "' is already loaded";
  else
    handle = openPath(path, error);
  ::unlink(path.c_str());
}

KernelLibrary::~KernelLibrary() {
  if (handle_)
    dlclose(handle_);
  if (fd_ >= 0)
    ::close(fd_);
}

Status KernelLibrary::load(const uint8_t *data, size_t size,
                           const std::string &source,
                           std::unique_ptr<KernelLibrary> &out,
                           bool allowMemfd) {
  static constexpr uint8_t kElfMagic[4] = {0x7f, 'E', 'L', 'F'};
  if (size < 64 || std::memcmp(data, kElfMagic, 4) != 0)
    return Status::error(
        StatusCode::InvalidFormat,
        source + " is not a shared object: " +
            (size < 64 ? std::to_string(size) + " bytes, shorter than an ELF "
                                                "header"
                       : "it starts with '" + leadingBytes(data, size) +
                             "', not '\\x7fELF'"));
  std::unique_ptr<KernelLibrary> library(new KernelLibrary());
  library->source_ = source;
  std::string error;
  if (allowMemfd &&
      loadFromMemfd(data, size, library->handle_, library->fd_, error)) {
    library->loadedFrom_ = "memfd";
  } else {
    loadFromTempFile(data, size, library->handle_, error);
    library->loadedFrom_ = "temporary file";
  }
  if (!library->handle_)
    return Status::error(StatusCode::InvalidFormat,
                         "cannot load " + source + ": " + error);
  out = std::move(library);
  return Status::ok();
}

Status KernelLibrary::lookup(const std::string &entry,
                             KernelFunction &out) const {
  dlerror(); // clear a stale message
  void *symbol = dlsym(handle_, entry.c_str());
  if (!symbol)
    return Status::error(StatusCode::NotFound, source_ + " has no kernel '" +
                                                   entry +
                                                   "': " + dlerrorText());
  out = reinterpret_cast<KernelFunction>(symbol);
  return Status::ok();
}

KernelPartFunction
KernelLibrary::lookupPartitioned(const std::string &entry) const {
  return reinterpret_cast<KernelPartFunction>(
      dlsym(handle_, ("__lmopt_part_" + entry).c_str()));
}

//===----------------------------------------------------------------------===//
// KernelTeam
//===----------------------------------------------------------------------===//

void KernelTeam::run(KernelPartFunction part, void **args,
                     int64_t parts) const {
  std::atomic<int64_t> next{0};
  OmpRegionSync ompSync;
  ompSync.fork();
#pragma omp parallel num_threads(threads_)
  {
    ompSync.enter();
    for (int64_t p; (p = next.fetch_add(1, std::memory_order_relaxed)) < parts;)
      part(args, p, parts);
    ompSync.leave();
  }
  ompSync.join();
}

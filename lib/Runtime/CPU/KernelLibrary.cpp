//===- KernelLibrary.cpp - Loading the bundle's generated kernels ---------===//
//
// dlopen needs a path, so the bytes go to an anonymous memfd opened through
// /proc/self/fd; where memfds or /proc are unavailable, to a temporary file
// that is unlinked right after dlopen. glibc recognizes an already loaded
// object by its path before its inode, so a library must never be loaded under
// a path another library had: the memfd stays open (its number taken) while
// the library is loaded, and a handle dlopen returned before is treated as
// such a stale match and the bytes are loaded from a fresh temporary file.
//
//===----------------------------------------------------------------------===//

#include "lmopt/Runtime/CPU/KernelLibrary.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <set>

using namespace lmopt::runtime;

/// Serializes loading, and remembers every handle this process was given so
/// that a stale path match (see the file comment) is noticed.
static std::mutex &loadMutex() {
  static std::mutex mutex;
  return mutex;
}
static std::set<void *> &handlesSeen() {
  static std::set<void *> handles;
  return handles;
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
    char buf[5];
    std::snprintf(buf, sizeof(buf), "\\x%02x", data[i]);
    out += buf;
  }
  return out;
}

/// dlopen under the mutex; `stale` is set when dlopen returned a handle it had
/// returned before (the library was then closed again).
static void *openFresh(const std::string &path, bool &stale,
                       std::string &error) {
  stale = false;
  std::lock_guard<std::mutex> lock(loadMutex());
  void *handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    error = dlerrorText();
    return nullptr;
  }
  if (!handlesSeen().insert(handle).second) {
    dlclose(handle);
    stale = true;
    return nullptr;
  }
  return handle;
}

/// Loads through a memfd. Returns false (and no error) when memfds or /proc
/// are unavailable, so that the caller falls back to a temporary file.
static bool loadFromMemfd(const uint8_t *data, size_t size, void *&handle,
                          int &fd, std::string &error) {
  fd = memfd_create("lmopt-kernels", MFD_CLOEXEC);
  if (fd < 0)
    return false;
  std::string path = "/proc/self/fd/" + std::to_string(fd);
  bool stale = false;
  if (writeAll(fd, data, size) && access(path.c_str(), R_OK) == 0)
    handle = openFresh(path, stale, error);
  if (handle || !error.empty())
    return true;
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
  bool stale = false;
  if (written)
    handle = openFresh(path, stale, error);
  ::unlink(path.c_str());
  if (!written)
    error = "cannot write the temporary file '" + path + "': " + writeError;
  else if (stale)
    error = "the dynamic loader returned an already loaded library for "
            "the temporary file '" +
            path + "'";
}

KernelLibrary::~KernelLibrary() {
  if (handle_)
    dlclose(handle_);
  if (fd_ >= 0)
    ::close(fd_);
}

Status KernelLibrary::load(const uint8_t *data, size_t size,
                           const std::string &source,
                           std::unique_ptr<KernelLibrary> &out) {
  static constexpr uint8_t kElfMagic[4] = {0x7f, 'E', 'L', 'F'};
  if (size < 64 || std::memcmp(data, kElfMagic, 4) != 0)
    return Status::error(StatusCode::InvalidFormat,
                         source + " is not a shared object: " +
                             (size < 64 ? std::to_string(size) +
                                              " bytes, shorter than an ELF "
                                              "header"
                                        : "it starts with '" +
                                              leadingBytes(data, size) +
                                              "', not '\\x7fELF'"));
  std::unique_ptr<KernelLibrary> library(new KernelLibrary());
  library->source_ = source;
  std::string error;
  if (loadFromMemfd(data, size, library->handle_, library->fd_, error)) {
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
    return Status::error(StatusCode::NotFound,
                         source_ + " has no kernel '" + entry +
                             "': " + dlerrorText());
  out = reinterpret_cast<KernelFunction>(symbol);
  return Status::ok();
}

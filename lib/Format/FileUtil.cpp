//===- FileUtil.cpp - Mapped reads and atomic writes ----------------------===//

#include "FileUtil.h"

#include <fmt/format.h>

#include <cerrno>
#include <cstring>
#include <system_error>
#include <vector>

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

using namespace lmopt::runtime;

static std::string errnoMessage(int err) {
  return std::error_code(err, std::generic_category()).message();
}

static Status ioError(const std::string &what, const std::string &path,
                      int err) {
  return Status::error(StatusCode::IoError,
                       what + " " + quote(path) + ": " + errnoMessage(err));
}

std::string lmopt::runtime::quote(const std::string &s) {
  std::string out = "'";
  for (unsigned char c : s) {
    if (c >= 0x20 && c < 0x7f) {
      out += char(c);
      continue;
    }
    out += fmt::format("\\x{:02x}", c);
  }
  return out + "'";
}

//===----------------------------------------------------------------------===//
// MappedFile
//===----------------------------------------------------------------------===//

MappedFile::MappedFile(MappedFile &&other) noexcept
    : data_(other.data_), size_(other.size_) {
  other.data_ = nullptr;
  other.size_ = 0;
}

MappedFile &MappedFile::operator=(MappedFile &&other) noexcept {
  if (this != &other) {
    reset();
    data_ = other.data_;
    size_ = other.size_;
    other.data_ = nullptr;
    other.size_ = 0;
  }
  return *this;
}

MappedFile::~MappedFile() { reset(); }

void MappedFile::reset() {
  if (data_)
    ::munmap(const_cast<uint8_t *>(data_), size_);
  data_ = nullptr;
  size_ = 0;
}

Status MappedFile::open(const std::string &path, MappedFile &out) {
  out.reset();
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return ioError("cannot open", path, errno);
  struct stat st;
  if (::fstat(fd, &st) != 0) {
    int err = errno;
    ::close(fd);
    return ioError("cannot stat", path, err);
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    return Status::error(StatusCode::IoError,
                         "cannot read " + quote(path) + ": not a regular file");
  }
  if (st.st_size == 0) {
    ::close(fd);
    return Status::ok();
  }
  size_t size = size_t(st.st_size);
  void *addr = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
  int err = errno;
  ::close(fd);
  if (addr == MAP_FAILED)
    return ioError("cannot map", path, err);
  out.data_ = static_cast<const uint8_t *>(addr);
  out.size_ = size;
  return Status::ok();
}

//===----------------------------------------------------------------------===//
// AtomicFile
//===----------------------------------------------------------------------===//

AtomicFile::~AtomicFile() { discard(); }

void AtomicFile::discard() {
  flushed_ = false;
  if (fd_ >= 0)
    ::close(fd_);
  fd_ = -1;
  if (!tempPath_.empty())
    ::unlink(tempPath_.c_str());
  tempPath_.clear();
}

Status AtomicFile::open(const std::string &path) {
  discard();
  if (path.empty())
    return Status::error(StatusCode::InvalidArgument, "empty output path");
  path_ = path;
  offset_ = 0;
  direct_ = false;
  flushed_ = false;
  // A device, pipe or socket (/dev/null, /dev/stdout, /dev/full) is written
  // in place: renaming a temporary over it would replace the node with a
  // regular file. A folder is refused before anything is written.
  struct stat st;
  if (::stat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode)) {
    if (S_ISDIR(st.st_mode))
      return Status::error(StatusCode::IoError,
                           "cannot write " + quote(path) + ": it is a folder");
    int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
    if (fd < 0)
      return ioError("cannot open", path, errno);
    fd_ = fd;
    direct_ = true;
    return Status::ok();
  }
  // The temporary lives in the destination's folder so rename() is atomic.
  std::vector<char> name(path.begin(), path.end());
  const char suffix[] = ".tmp.XXXXXX";
  name.insert(name.end(), suffix, suffix + sizeof(suffix));
  int fd = ::mkstemp(name.data());
  if (fd < 0)
    return ioError("cannot create a temporary file for", path, errno);
  fd_ = fd;
  tempPath_ = name.data();
  // mkstemp creates 0600; outputs are ordinary files readable by others.
  ::fchmod(fd_, 0644);
  return Status::ok();
}

Status AtomicFile::write(const void *data, size_t size) {
  if (fd_ < 0)
    return Status::error(StatusCode::IoError,
                         "write to " + quote(path_) + " after a failure");
  const auto *p = static_cast<const uint8_t *>(data);
  while (size > 0) {
    // Writes larger than 1 GiB are split: Linux caps one write near 2 GiB.
    size_t chunk = size < (size_t(1) << 30) ? size : (size_t(1) << 30);
    ssize_t n = ::write(fd_, p, chunk);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0) {
      int err = n < 0 ? errno : EIO;
      discard();
      return ioError("cannot write", path_, err);
    }
    p += n;
    size -= size_t(n);
    offset_ += uint64_t(n);
  }
  return Status::ok();
}

Status AtomicFile::writeZeros(size_t count) {
  static const uint8_t zeros[256] = {};
  while (count > 0) {
    size_t chunk = count < sizeof(zeros) ? count : sizeof(zeros);
    Status st = write(zeros, chunk);
    if (!st)
      return st;
    count -= chunk;
  }
  return Status::ok();
}

Status AtomicFile::flush() {
  if (flushed_)
    return Status::ok();
  if (fd_ < 0)
    return Status::error(StatusCode::IoError,
                         "commit of " + quote(path_) + " after a failure");
  // fsync of a device or pipe may be refused (EINVAL, EROFS) and means
  // nothing there; a failed write to it has already been reported.
  if (::fsync(fd_) != 0 && !(direct_ && (errno == EINVAL || errno == EROFS))) {
    int err = errno;
    discard();
    return ioError("cannot flush", path_, err);
  }
  int closed = ::close(fd_);
  fd_ = -1;
  if (closed != 0) {
    int err = errno;
    discard();
    return ioError("cannot close", path_, err);
  }
  flushed_ = true;
  return Status::ok();
}

Status AtomicFile::commit() {
  if (Status st = flush(); !st)
    return st;
  flushed_ = false;
  if (direct_)
    return Status::ok();
  if (::rename(tempPath_.c_str(), path_.c_str()) != 0) {
    int err = errno;
    discard();
    return ioError("cannot rename the temporary file to", path_, err);
  }
  tempPath_.clear();
  return Status::ok();
}

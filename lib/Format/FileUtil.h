//===- FileUtil.h - Mapped reads and atomic writes --------------*- C++ -*-===//
//
// Internal to the runtime library. Reads map a file read-only; writes go to a
// temporary file in the destination's folder that is renamed over the
// destination only once every byte is on disk, so a failed write never leaves
// a partial output file behind.
//
//===----------------------------------------------------------------------===//

#ifndef LMOPT_RUNTIME_FILEUTIL_H
#define LMOPT_RUNTIME_FILEUTIL_H

#include "lmopt/Format/Status.h"

#include <cstddef>
#include <cstdint>
#include <string>

namespace lmopt::runtime {

/// Returns `s` in single quotes, with non-printable bytes as \xNN.
std::string quote(const std::string &s);

/// A read-only, private mapping of a whole regular file. An empty file maps
/// to a null pointer and size 0.
class MappedFile {
public:
  MappedFile() = default;
  MappedFile(const MappedFile &) = delete;
  MappedFile &operator=(const MappedFile &) = delete;
  MappedFile(MappedFile &&other) noexcept;
  MappedFile &operator=(MappedFile &&other) noexcept;
  ~MappedFile();

  static Status open(const std::string &path, MappedFile &out);

  const uint8_t *data() const { return data_; }
  size_t size() const { return size_; }

private:
  void reset();

  const uint8_t *data_ = nullptr;
  size_t size_ = 0;
};

/// Writes a file atomically: bytes go to a temporary file beside `path`;
/// commit() flushes it and renames it to `path`. Destroying an uncommitted
/// AtomicFile removes the temporary file. An existing `path` that is not a
/// regular file (a device such as /dev/null or /dev/full, a pipe) is written
/// in place instead, so that it stays what it is; a folder is refused.
class AtomicFile {
public:
  AtomicFile() = default;
  AtomicFile(const AtomicFile &) = delete;
  AtomicFile &operator=(const AtomicFile &) = delete;
  ~AtomicFile();

  Status open(const std::string &path);
  Status write(const void *data, size_t size);
  Status writeZeros(size_t count);
  /// Bytes written so far.
  uint64_t offset() const { return offset_; }
  /// Writes the bytes through to the disk and closes the file, which stays
  /// temporary: a writer of several files flushes each before committing
  /// any, so that a full disk leaves all of them as they were.
  Status flush();
  /// flush(), then the rename.
  Status commit();

private:
  void discard();

  std::string path_;
  std::string tempPath_;
  int fd_ = -1;
  uint64_t offset_ = 0;
  /// Writing `path` itself (not a regular file): no temporary, no rename.
  bool direct_ = false;
  /// flush() succeeded; commit() only renames.
  bool flushed_ = false;
};

} // namespace lmopt::runtime

#endif // LMOPT_RUNTIME_FILEUTIL_H

//===- Status.h - Runtime error status --------------------------*- C++ -*-===//
//
// The runtime never aborts on bad input: every fallible call returns a Status
// that carries a code and a message naming the file, the part of it and the
// offending values. The C API hands the same code and message to its callers.
//
//===----------------------------------------------------------------------===//

#ifndef LMOPT_FORMAT_STATUS_H
#define LMOPT_FORMAT_STATUS_H

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace lmopt::runtime {

/// Error categories. The values are part of the C API (`lmoptStatusCode`).
enum class StatusCode : int {
  Ok = 0,
  /// The caller passed a bad argument (null pointer, bad name, bad shape).
  InvalidArgument = 1,
  /// A file could not be opened, read, written or renamed.
  IoError = 2,
  /// A file's content is malformed, truncated or inconsistent.
  InvalidFormat = 3,
  /// A file's format version is newer (or older) than this runtime reads.
  VersionMismatch = 4,
  /// A stored checksum does not match the bytes it covers.
  ChecksumMismatch = 5,
  /// Well-formed content that this runtime does not support (yet).
  Unsupported = 6,
  /// A named item (section, archive member) does not exist.
  NotFound = 7,
  /// The device failed: out of its memory, a kernel fault, a driver or
  /// library error at run time.
  DeviceError = 8,
};

/// Returns a stable lowercase name for `code` ("invalid format", ...).
const char *statusCodeName(StatusCode code);

class [[nodiscard]] Status {
public:
  Status() = default;

  static Status ok() { return Status(); }
  static Status error(StatusCode code, std::string message) {
    return Status(code, std::move(message));
  }

  bool isOk() const { return code_ == StatusCode::Ok; }
  explicit operator bool() const { return isOk(); }
  StatusCode code() const { return code_; }
  const std::string &message() const { return message_; }

  /// Returns "<code name>: <message>", or "ok".
  std::string toString() const;

private:
  Status(StatusCode code, std::string message)
      : code_(code), message_(std::move(message)) {}

  StatusCode code_ = StatusCode::Ok;
  std::string message_;
};

/// Dims as messages show them: "[2, 12, 64]" ("[]" for a scalar).
std::string formatDims(const int64_t *dims, size_t rank);
inline std::string formatDims(const std::vector<int64_t> &dims) {
  return formatDims(dims.data(), dims.size());
}

} // namespace lmopt::runtime

#endif // LMOPT_FORMAT_STATUS_H

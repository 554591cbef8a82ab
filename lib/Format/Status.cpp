//===- Status.cpp - Runtime error status ----------------------------------===//

#include "lmopt/Format/Status.h"

#include <fmt/format.h>

using namespace lmopt::runtime;

const char *lmopt::runtime::statusCodeName(StatusCode code) {
  switch (code) {
  case StatusCode::Ok:
    return "ok";
  case StatusCode::InvalidArgument:
    return "invalid argument";
  case StatusCode::IoError:
    return "i/o error";
  case StatusCode::InvalidFormat:
    return "invalid format";
  case StatusCode::VersionMismatch:
    return "version mismatch";
  case StatusCode::ChecksumMismatch:
    return "checksum mismatch";
  case StatusCode::Unsupported:
    return "unsupported";
  case StatusCode::NotFound:
    return "not found";
  case StatusCode::DeviceError:
    return "device error";
  }
  return "unknown";
}

std::string Status::toString() const {
  if (isOk())
    return "ok";
  return std::string(statusCodeName(code_)) + ": " + message_;
}

std::string lmopt::runtime::formatDims(const int64_t *dims, size_t rank) {
  return fmt::format("[{}]", fmt::join(dims, dims + rank, ", "));
}

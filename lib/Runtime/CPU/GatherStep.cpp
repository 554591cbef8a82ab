//===- GatherStep.cpp - ONNX Gather with checked indices ------------------===//
//
// Indices come from user input (token ids), so all of them are checked
// before the first byte is copied: a bad index fails the step without a
// partial output and never reads outside the data.
//
//===----------------------------------------------------------------------===//

#include "lmopt/Runtime/CPU/GatherStep.h"

#include <cstring>

using namespace lmopt::runtime;

/// The product of `dims`, false on overflow past int64 (dims are checked
/// non-negative first).
static bool product(const std::vector<int64_t> &dims, size_t begin, size_t end,
                    int64_t &out) {
  out = 1;
  for (size_t i = begin; i < end; ++i)
    if (__builtin_mul_overflow(out, dims[i], &out))
      return false;
  return true;
}

/// The position of flat element `flat` of a tensor of `dims`, as "[i, j]".
static std::string positionString(const std::vector<int64_t> &dims,
                                  int64_t flat) {
  std::vector<int64_t> pos(dims.size());
  for (size_t i = dims.size(); i-- > 0;) {
    pos[i] = flat % dims[i];
    flat /= dims[i];
  }
  return formatDims(pos);
}

namespace {
/// The sizes the copy loop needs: `outer` slices before the axis, `axisSize`
/// rows in each, `rowBytes` bytes per row, `count` indices.
struct GatherSizes {
  int64_t outer = 0, axisSize = 0, rowBytes = 0, count = 0;
};
} // namespace

static Status computeSizes(const GatherStepDesc &desc, GatherSizes &sizes) {
  const std::string prefix = "gather step '" + desc.name + "': ";
  const std::vector<int64_t> &data = desc.dataDims;
  int64_t rank = int64_t(data.size());
  if (desc.axis < 0 || desc.axis >= rank)
    return Status::error(StatusCode::InvalidArgument,
                         prefix + "axis " + std::to_string(desc.axis) +
                             " is outside [0, " + std::to_string(rank) +
                             ") for data " + formatDims(data));
  if (desc.elementSize <= 0)
    return Status::error(StatusCode::InvalidArgument,
                         prefix + "element size must be positive, got " +
                             std::to_string(desc.elementSize));
  for (int64_t d : data)
    if (d < 0)
      return Status::error(StatusCode::InvalidArgument,
                           prefix + "data dims must be non-negative, got " +
                               formatDims(data));
  for (int64_t d : desc.indicesDims)
    if (d < 0)
      return Status::error(StatusCode::InvalidArgument,
                           prefix + "indices dims must be non-negative, got " +
                               formatDims(desc.indicesDims));
  size_t axis = size_t(desc.axis);
  int64_t inner = 0, dataCount = 0, outputCount = 0, outputBytes = 0,
          dataBytes = 0;
  bool fits =
      product(data, 0, axis, sizes.outer) &&
      product(data, axis + 1, data.size(), inner) &&
      product(desc.indicesDims, 0, desc.indicesDims.size(), sizes.count) &&
      product(data, 0, data.size(), dataCount) &&
      !__builtin_mul_overflow(inner, desc.elementSize, &sizes.rowBytes) &&
      !__builtin_mul_overflow(dataCount, desc.elementSize, &dataBytes) &&
      !__builtin_mul_overflow(sizes.outer, sizes.count, &outputCount) &&
      !__builtin_mul_overflow(outputCount, sizes.rowBytes, &outputBytes);
  if (!fits)
    return Status::error(StatusCode::InvalidArgument,
                         prefix + "sizes overflow: data " + formatDims(data) +
                             ", indices " + formatDims(desc.indicesDims) +
                             ", " + std::to_string(desc.elementSize) +
                             " bytes per element");
  sizes.axisSize = data[axis];
  return Status::ok();
}

Status GatherStep::create(const GatherStepDesc &desc,
                          std::unique_ptr<GatherStep> &out) {
  GatherSizes sizes;
  if (Status st = computeSizes(desc, sizes); !st)
    return st;
  std::unique_ptr<GatherStep> step(new GatherStep());
  step->desc_ = desc;
  out = std::move(step);
  return Status::ok();
}

/// Checks every index against [-axisSize, axisSize).
template <typename Index>
static Status checkIndices(const GatherStepDesc &desc, const Index *indices,
                           int64_t count, int64_t axisSize) {
  for (int64_t i = 0; i < count; ++i) {
    int64_t index = int64_t(indices[i]);
    int64_t row = index < 0 ? index + axisSize : index;
    if (row < 0 || row >= axisSize) {
      std::string range = axisSize == 0
                              ? "axis " + std::to_string(desc.axis) +
                                    " has size 0, no index is valid"
                              : "valid range [" + std::to_string(-axisSize) +
                                    ", " + std::to_string(axisSize - 1) + "]";
      return Status::error(
          StatusCode::InvalidArgument,
          "gather step '" + desc.name + "': index " + std::to_string(index) +
              " at position " + positionString(desc.indicesDims, i) +
              " is out of range for axis " + std::to_string(desc.axis) +
              " of size " + std::to_string(axisSize) + " (" + range + ")");
    }
  }
  return Status::ok();
}

/// Copies the rows; the indices are already checked.
template <typename Index>
static void copyRows(const uint8_t *src, const Index *indices, uint8_t *dst,
                     const GatherSizes &sizes) {
  size_t rowBytes = size_t(sizes.rowBytes);
  for (int64_t o = 0; o < sizes.outer; ++o) {
    const uint8_t *slice = src + size_t(o * sizes.axisSize) * rowBytes;
    for (int64_t i = 0; i < sizes.count; ++i) {
      int64_t index = int64_t(indices[i]);
      int64_t row = index < 0 ? index + sizes.axisSize : index;
      std::memcpy(dst, slice + size_t(row) * rowBytes, rowBytes);
      dst += rowBytes;
    }
  }
}

Status GatherStep::run(const void *data, const void *indices,
                       void *output) const {
  GatherSizes sizes;
  if (Status st = computeSizes(desc_, sizes); !st)
    return st;
  const std::string prefix = "gather step '" + desc_.name + "': ";
  if (sizes.count > 0 && !indices)
    return Status::error(StatusCode::InvalidArgument,
                         prefix + "null indices pointer");
  Status st = desc_.indices64
                  ? checkIndices(desc_, static_cast<const int64_t *>(indices),
                                 sizes.count, sizes.axisSize)
                  : checkIndices(desc_, static_cast<const int32_t *>(indices),
                                 sizes.count, sizes.axisSize);
  if (!st)
    return st;
  if (sizes.outer == 0 || sizes.count == 0 || sizes.rowBytes == 0)
    return Status::ok();
  if (!data || !output)
    return Status::error(StatusCode::InvalidArgument,
                         prefix + "null " + (!data ? "data" : "output") +
                             " pointer");
  const auto *src = static_cast<const uint8_t *>(data);
  auto *dst = static_cast<uint8_t *>(output);
  if (desc_.indices64)
    copyRows(src, static_cast<const int64_t *>(indices), dst, sizes);
  else
    copyRows(src, static_cast<const int32_t *>(indices), dst, sizes);
  return Status::ok();
}

//===- GatherStep.cpp - ONNX Gather with checked indices ------------------===//
//
// Indices come from user input (token ids), so all of them are checked
// before the first byte is copied: a bad index fails the step without a
// partial output and never reads outside the data. A row-quantized table
// (int8 rows, one f32 scale each) is dequantized row by row as it is
// gathered, with AVX-512 where the CPU has it.
//
//===----------------------------------------------------------------------===//

#include "lmopt/Runtime/CPU/GatherStep.h"

#include "lmopt/Runtime/StepCheck.h"

#include <algorithm>
#include <cstring>
#include <immintrin.h>

using namespace lmopt::runtime;

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
  /// Elements per row (rowScales: an int8 row in, an f32 row out).
  int64_t inner = 0;
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
  if (desc.rowScales && (desc.axis != 0 || desc.elementSize != 1))
    return Status::error(StatusCode::InvalidArgument,
                         prefix +
                             "a row-quantized table must be int8 (1 "
                             "byte per element) gathered along axis "
                             "0, got axis " +
                             std::to_string(desc.axis) + " and " +
                             std::to_string(desc.elementSize) +
                             " bytes per element");
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
          dataBytes = 0, outputRowBytes = 0;
  // A dequantized row is 4 bytes per element.
  int64_t outputElementSize = desc.rowScales ? 4 : desc.elementSize;
  bool fits =
      dimsProduct(data, 0, axis, sizes.outer) &&
      dimsProduct(data, axis + 1, data.size(), inner) &&
      !__builtin_mul_overflow(inner, outputElementSize, &outputRowBytes) &&
      dimsProduct(desc.indicesDims, 0, desc.indicesDims.size(), sizes.count) &&
      dimsProduct(data, 0, data.size(), dataCount) &&
      !__builtin_mul_overflow(inner, desc.elementSize, &sizes.rowBytes) &&
      !__builtin_mul_overflow(dataCount, desc.elementSize, &dataBytes) &&
      !__builtin_mul_overflow(sizes.outer, sizes.count, &outputCount) &&
      !__builtin_mul_overflow(outputCount, outputRowBytes, &outputBytes);
  if (!fits)
    return Status::error(StatusCode::InvalidArgument,
                         prefix + "sizes overflow: data " + formatDims(data) +
                             ", indices " + formatDims(desc.indicesDims) +
                             ", " + std::to_string(desc.elementSize) +
                             " bytes per element");
  sizes.axisSize = data[axis];
  sizes.inner = inner;
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

/// Checks every index against [-axisSize, axisSize); `what` names the step
/// ("gather step 'x'").
template <typename Index>
static Status checkIndices(const std::string &what, int64_t axis,
                           const std::vector<int64_t> &indicesDims,
                           const Index *indices, int64_t count,
                           int64_t axisSize) {
  for (int64_t i = 0; i < count; ++i) {
    int64_t index = int64_t(indices[i]);
    int64_t row = index < 0 ? index + axisSize : index;
    if (row < 0 || row >= axisSize) {
      std::string range = axisSize == 0
                              ? "axis " + std::to_string(axis) +
                                    " has size 0, no index is valid"
                              : "valid range [" + std::to_string(-axisSize) +
                                    ", " + std::to_string(axisSize - 1) + "]";
      return Status::error(
          StatusCode::InvalidArgument,
          what + ": index " + std::to_string(index) + " at position " +
              positionString(indicesDims, i) + " is out of range for axis " +
              std::to_string(axis) + " of size " + std::to_string(axisSize) +
              " (" + range + ")");
    }
  }
  return Status::ok();
}

/// Whether every index lies in [-axisSize, axisSize), the threads sharing
/// the indices: many indices (a gather_elements over every score of a
/// batch) are checked at the speed they are copied.
template <typename Index>
static bool allInRange(const Index *indices, int64_t count, int64_t axisSize) {
  bool bad = false;
#pragma omp parallel for schedule(static) reduction(|| : bad)
  for (int64_t i = 0; i < count; ++i) {
    int64_t index = int64_t(indices[i]);
    bad = bad || index < -axisSize || index >= axisSize;
  }
  return !bad;
}

/// checkIndices over i64 or i32 indices.
static Status checkAnyIndices(const void *indices, bool indices64,
                           const std::string &what, int64_t axis,
                           const std::vector<int64_t> &indicesDims,
                           int64_t count, int64_t axisSize) {
  // A large set of valid indices is confirmed in parallel; the message for
  // a bad one comes from the sequential walk, which finds the first.
  if (count >= (int64_t(1) << 16) &&
      (indices64
           ? allInRange(static_cast<const int64_t *>(indices), count, axisSize)
           : allInRange(static_cast<const int32_t *>(indices), count,
                        axisSize)))
    return Status::ok();
  if (indices64)
    return checkIndices(what, axis, indicesDims,
                        static_cast<const int64_t *>(indices), count, axisSize);
  return checkIndices(what, axis, indicesDims,
                      static_cast<const int32_t *>(indices), count, axisSize);
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

/// out[j] = q[j] * scale over one row, 16 lanes at a time.
__attribute__((target("avx512f,avx512bw,avx512vl"))) static void
dequantizeRowAvx512(const int8_t *q, float scale, float *out, int64_t n) {
  __m512 s = _mm512_set1_ps(scale);
  int64_t j = 0;
  for (; j + 16 <= n; j += 16) {
    __m128i bytes = _mm_loadu_si128(reinterpret_cast<const __m128i *>(q + j));
    __m512 values = _mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(bytes));
    _mm512_storeu_ps(out + j, _mm512_mul_ps(values, s));
  }
  if (j < n) {
    __mmask16 tail = __mmask16((1u << (n - j)) - 1);
    __m128i bytes = _mm_maskz_loadu_epi8(tail, q + j);
    __m512 values = _mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(bytes));
    _mm512_mask_storeu_ps(out + j, tail, _mm512_mul_ps(values, s));
  }
}

static void dequantizeRow(const int8_t *q, float scale, float *out, int64_t n) {
  for (int64_t j = 0; j < n; ++j)
    out[j] = float(q[j]) * scale;
}

/// Gathers int8 rows (axis 0) and dequantizes them; indices are checked.
template <typename Index>
static void dequantizeRows(const int8_t *src, const Index *indices,
                           const float *scales, float *dst,
                           const GatherSizes &sizes, bool avx512) {
  int64_t inner = sizes.inner;
  for (int64_t i = 0; i < sizes.count; ++i) {
    int64_t index = int64_t(indices[i]);
    int64_t row = index < 0 ? index + sizes.axisSize : index;
    const int8_t *q = src + size_t(row) * size_t(inner);
    if (avx512)
      dequantizeRowAvx512(q, scales[row], dst, inner);
    else
      dequantizeRow(q, scales[row], dst, inner);
    dst += inner;
  }
}

Status GatherStep::run(const void *data, const void *indices, void *output,
                       const float *scales) const {
  GatherSizes sizes;
  if (Status st = computeSizes(desc_, sizes); !st)
    return st;
  const std::string prefix = "gather step '" + desc_.name + "': ";
  if (sizes.count > 0 && !indices)
    return Status::error(StatusCode::InvalidArgument,
                         prefix + "null indices pointer");
  if (Status st = checkAnyIndices(indices, desc_.indices64,
                                 "gather step '" + desc_.name + "'",
                                 desc_.axis, desc_.indicesDims, sizes.count,
                                 sizes.axisSize);
      !st)
    return st;
  if (sizes.outer == 0 || sizes.count == 0 || sizes.rowBytes == 0)
    return Status::ok();
  if (!data || !output)
    return Status::error(StatusCode::InvalidArgument,
                         prefix + "null " + (!data ? "data" : "output") +
                             " pointer");
  if (desc_.rowScales) {
    if (!scales)
      return Status::error(StatusCode::InvalidArgument,
                           prefix + "null scales pointer");
    // The masked byte load of a row's tail needs AVX512BW and VL.
    bool avx512 = desc_.allowAvx512 && __builtin_cpu_supports("avx512f") &&
                  __builtin_cpu_supports("avx512bw") &&
                  __builtin_cpu_supports("avx512vl");
    const auto *src = static_cast<const int8_t *>(data);
    auto *dst = static_cast<float *>(output);
    if (desc_.indices64)
      dequantizeRows(src, static_cast<const int64_t *>(indices), scales, dst,
                     sizes, avx512);
    else
      dequantizeRows(src, static_cast<const int32_t *>(indices), scales, dst,
                     sizes, avx512);
    return Status::ok();
  }
  const auto *src = static_cast<const uint8_t *>(data);
  auto *dst = static_cast<uint8_t *>(output);
  if (desc_.indices64)
    copyRows(src, static_cast<const int64_t *>(indices), dst, sizes);
  else
    copyRows(src, static_cast<const int32_t *>(indices), dst, sizes);
  return Status::ok();
}

//===----------------------------------------------------------------------===//
// GatherElements
//===----------------------------------------------------------------------===//

Status GatherElementsStep::create(const GatherElementsStepDesc &desc,
                                  std::unique_ptr<GatherElementsStep> &out) {
  std::unique_ptr<GatherElementsStep> step(new GatherElementsStep());
  step->desc_ = desc;
  out = std::move(step);
  return Status::ok();
}

/// The element counts of data and indices, after checking ranks, the axis,
/// the element size, and that the indices fit data off the axis: the
/// checks that need this run's dims.
static Status checkElementsDims(const GatherElementsStepDesc &desc,
                                int64_t &dataCount, int64_t &count) {
  const std::string prefix = "gather_elements step '" + desc.name + "': ";
  const std::vector<int64_t> &data = desc.dataDims, &indices = desc.indicesDims;
  if (data.empty() || indices.size() != data.size() || desc.axis < 0 ||
      desc.axis >= int64_t(data.size()) || desc.elementSize <= 0)
    return Status::error(StatusCode::InvalidArgument,
                         prefix + "data " + formatDims(data) + ", indices " +
                             formatDims(indices) + " and axis " +
                             std::to_string(desc.axis) + " do not fit");
  for (size_t d = 0; d < data.size(); ++d) {
    if (data[d] < 0 || indices[d] < 0)
      return Status::error(StatusCode::InvalidArgument,
                           prefix + "dims must be non-negative, got data " +
                               formatDims(data) + " and indices " +
                               formatDims(indices));
    if (int64_t(d) != desc.axis && indices[d] > data[d])
      return Status::error(
          StatusCode::InvalidArgument,
          prefix + "indices " + formatDims(indices) + " exceed data " +
              formatDims(data) + " in dim " + std::to_string(d) +
              " (off the axis, indices may not be larger than data)");
  }
  int64_t bytes = 0;
  if (!dimsProduct(data, 0, data.size(), dataCount) ||
      !dimsProduct(indices, 0, indices.size(), count) ||
      __builtin_mul_overflow(std::max(dataCount, count), desc.elementSize,
                             &bytes))
    return Status::error(StatusCode::InvalidArgument,
                         prefix + "sizes overflow: data " + formatDims(data) +
                             ", indices " + formatDims(indices));
  return Status::ok();
}

/// out[i...] = data[i...] with the axis coordinate replaced by the (checked)
/// index at i...; positions walk the indices in row-major order.
template <typename Index>
static void copyElements(const GatherElementsStepDesc &desc, const uint8_t *src,
                         const Index *indices, uint8_t *dst, int64_t count) {
  const std::vector<int64_t> &dataDims = desc.dataDims;
  const std::vector<int64_t> &dims = desc.indicesDims;
  size_t rank = dims.size(), axis = size_t(desc.axis);
  std::vector<int64_t> strides(rank, 1), position(rank, 0);
  for (size_t d = rank - 1; d > 0; --d)
    strides[d - 1] = strides[d] * dataDims[d];
  int64_t axisSize = dataDims[axis];
  size_t elementSize = size_t(desc.elementSize);
  for (int64_t i = 0; i < count; ++i) {
    int64_t index = int64_t(indices[i]);
    int64_t offset = (index < 0 ? index + axisSize : index) * strides[axis];
    for (size_t d = 0; d < rank; ++d)
      if (d != axis)
        offset += position[d] * strides[d];
    std::memcpy(dst + size_t(i) * elementSize,
                src + size_t(offset) * elementSize, elementSize);
    for (size_t d = rank; d-- > 0;) {
      if (++position[d] < dims[d])
        break;
      position[d] = 0;
    }
  }
}

/// copyElements along the last axis: each row of indices reads one row of
/// data, element by element (DeBERTa's relative-position lookups), without
/// the per-element walk over every dim; rows are shared between the
/// threads when there are many.
template <typename Index, typename Element>
static void copyLastAxis(const GatherElementsStepDesc &desc, const Element *src,
                         const Index *indices, Element *dst, int64_t count) {
  const std::vector<int64_t> &dataDims = desc.dataDims;
  const std::vector<int64_t> &dims = desc.indicesDims;
  const int64_t rank = int64_t(dims.size());
  const int64_t width = dims[rank - 1], axisSize = dataDims[rank - 1];
  if (width == 0)
    return;
  const int64_t rows = count / width;
#pragma omp parallel for schedule(static) if (count >= (int64_t(1) << 16))
  for (int64_t r = 0; r < rows; ++r) {
    // The row's position in the indices is its position in data.
    int64_t rowOffset = 0, stride = 1;
    for (int64_t d = rank - 2, rest = r; d >= 0; --d) {
      rowOffset += (rest % dims[d]) * stride;
      rest /= dims[d];
      stride *= dataDims[d];
    }
    const Element *row = src + rowOffset * axisSize;
    const Index *at = indices + r * width;
    Element *out = dst + r * width;
    for (int64_t j = 0; j < width; ++j) {
      int64_t index = int64_t(at[j]);
      out[j] = row[index < 0 ? index + axisSize : index];
    }
  }
}

Status GatherElementsStep::run(const void *data, const void *indices,
                               void *output) const {
  int64_t dataCount = 0, count = 0;
  if (Status st = checkElementsDims(desc_, dataCount, count); !st)
    return st;
  const std::string what = "gather_elements step '" + desc_.name + "'";
  if (count == 0)
    return Status::ok();
  if (!indices)
    return Status::error(StatusCode::InvalidArgument,
                         what + ": null indices pointer");
  if (Status st = checkAnyIndices(indices, desc_.indices64, what, desc_.axis,
                                  desc_.indicesDims, count,
                                  desc_.dataDims[size_t(desc_.axis)]);
      !st)
    return st;
  // Every index is valid, so data is not empty.
  if (!data || !output)
    return Status::error(StatusCode::InvalidArgument,
                         what + ": null " + (!data ? "data" : "output") +
                             " pointer");
  if (desc_.axis + 1 == int64_t(desc_.dataDims.size()) &&
      desc_.elementSize == 4) {
    const auto *src = static_cast<const uint32_t *>(data);
    auto *dst = static_cast<uint32_t *>(output);
    if (desc_.indices64)
      copyLastAxis(desc_, src, static_cast<const int64_t *>(indices), dst,
                   count);
    else
      copyLastAxis(desc_, src, static_cast<const int32_t *>(indices), dst,
                   count);
    return Status::ok();
  }
  const auto *src = static_cast<const uint8_t *>(data);
  auto *dst = static_cast<uint8_t *>(output);
  if (desc_.indices64)
    copyElements(desc_, src, static_cast<const int64_t *>(indices), dst, count);
  else
    copyElements(desc_, src, static_cast<const int32_t *>(indices), dst, count);
  return Status::ok();
}

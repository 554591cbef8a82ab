//===- ScatterStep.cpp - ONNX ScatterND with checked indices --------------===//
//
// All dims and indices are checked before the output is touched, so a bad
// index fails the step without a partial output. Slices are contiguous (the
// index tuple names the leading dims), so each update is one memcpy, or one
// loop of the reduction over the slice's elements.
//
//===----------------------------------------------------------------------===//

#include "lmopt/Runtime/CPU/ScatterStep.h"

#include "lmopt/Runtime/StepCheck.h"

#include <algorithm>
#include <cstring>
#include <type_traits>

using namespace lmopt::runtime;

static const char *reductionName(ScatterReduction r) {
  switch (r) {
  case ScatterReduction::None:
    return "none";
  case ScatterReduction::Add:
    return "add";
  case ScatterReduction::Mul:
    return "mul";
  case ScatterReduction::Max:
    return "max";
  case ScatterReduction::Min:
    return "min";
  }
  return "invalid";
}

static bool hasReductionArithmetic(DType dtype) {
  return dtype == DType::F32 || dtype == DType::F64 || dtype == DType::I32 ||
         dtype == DType::I64;
}

Status ScatterNDStep::create(const ScatterNDStepDesc &desc,
                             std::unique_ptr<ScatterNDStep> &out) {
  const std::string prefix = "scatter_nd step '" + desc.name + "': ";
  if (std::string_view(reductionName(desc.reduction)) == "invalid")
    return Status::error(StatusCode::InvalidArgument,
                         prefix + "reduction " +
                             std::to_string(int64_t(desc.reduction)) +
                             " is not one of 0 (none) to 4 (min)");
  if (desc.reduction != ScatterReduction::None &&
      !hasReductionArithmetic(desc.dtype))
    return Status::error(StatusCode::Unsupported,
                         prefix + "reduction '" +
                             reductionName(desc.reduction) + "' over " +
                             dtypeName(desc.dtype) +
                             " data; it runs over f32, f64, i32 and i64");
  if (dtypeSize(desc.dtype) == 0)
    return Status::error(StatusCode::InvalidArgument,
                         prefix + "data has an invalid dtype");
  std::unique_ptr<ScatterNDStep> step(new ScatterNDStep());
  step->desc_ = desc;
  out = std::move(step);
  return Status::ok();
}

namespace {
/// What run() needs after the dims are checked.
struct ScatterSizes {
  int64_t tuple = 0, count = 0, sliceElements = 0, dataElements = 0;
};
} // namespace

static Status checkDims(const ScatterNDStepDesc &desc, ScatterSizes &sizes) {
  const std::string prefix = "scatter_nd step '" + desc.name + "': ";
  const std::vector<int64_t> &data = desc.dataDims, &indices = desc.indicesDims,
                             &updates = desc.updatesDims;
  for (const std::vector<int64_t> *dims : {&data, &indices, &updates})
    for (int64_t d : *dims)
      if (d < 0)
        return Status::error(StatusCode::InvalidArgument,
                             prefix + "dims must be non-negative, got data " +
                                 formatDims(data) + ", indices " +
                                 formatDims(indices) + ", updates " +
                                 formatDims(updates));
  if (indices.empty() || indices.back() < 1 ||
      indices.back() > int64_t(data.size()))
    return Status::error(
        StatusCode::InvalidArgument,
        prefix + "indices " + formatDims(indices) +
            " must end in a tuple length from 1 to data's rank " +
            std::to_string(data.size()));
  sizes.tuple = indices.back();
  std::vector<int64_t> expected(indices.begin(), indices.end() - 1);
  expected.insert(expected.end(), data.begin() + sizes.tuple, data.end());
  if (expected != updates)
    return Status::error(StatusCode::InvalidArgument,
                         prefix + "updates " + formatDims(updates) +
                             " do not match indices.shape[:-1] + data.shape[" +
                             std::to_string(sizes.tuple) +
                             ":] = " + formatDims(expected));
  int64_t bytes = 0, updateCount = 0;
  if (!dimsProduct(indices, 0, indices.size() - 1, sizes.count) ||
      !dimsProduct(data, size_t(sizes.tuple), data.size(),
                   sizes.sliceElements) ||
      !dimsProduct(data, 0, data.size(), sizes.dataElements) ||
      !dimsProduct(updates, 0, updates.size(), updateCount) ||
      __builtin_mul_overflow(std::max(sizes.dataElements, updateCount),
                             int64_t(dtypeSize(desc.dtype)), &bytes))
    return Status::error(StatusCode::InvalidArgument,
                         prefix + "sizes overflow: data " + formatDims(data) +
                             ", updates " + formatDims(updates));
  return Status::ok();
}

/// The element offset of each tuple's slice in data, after checking every
/// index of the tuple against its dim.
template <typename Index>
static Status resolveTuples(const ScatterNDStepDesc &desc,
                            const ScatterSizes &sizes, const Index *indices,
                            std::vector<int64_t> &offsets) {
  const std::vector<int64_t> &data = desc.dataDims;
  std::vector<int64_t> strides(data.size(), 1);
  for (size_t d = data.size(); d-- > 1;)
    strides[d - 1] = strides[d] * data[d];
  offsets.resize(size_t(sizes.count));
  for (int64_t t = 0; t < sizes.count; ++t) {
    int64_t offset = 0;
    for (int64_t k = 0; k < sizes.tuple; ++k) {
      int64_t index = int64_t(indices[t * sizes.tuple + k]);
      int64_t dim = data[size_t(k)];
      int64_t at = index < 0 ? index + dim : index;
      if (at < 0 || at >= dim) {
        std::vector<int64_t> tupleDims(desc.indicesDims.begin(),
                                       desc.indicesDims.end() - 1);
        std::vector<int64_t> position(tupleDims.size());
        for (int64_t rest = t, i = int64_t(position.size()); i-- > 0;) {
          position[size_t(i)] = rest % tupleDims[size_t(i)];
          rest /= tupleDims[size_t(i)];
        }
        std::string range = dim == 0 ? "dim " + std::to_string(k) +
                                           " has size 0, no index is valid"
                                     : "valid range [" + std::to_string(-dim) +
                                           ", " + std::to_string(dim - 1) + "]";
        return Status::error(
            StatusCode::InvalidArgument,
            "scatter_nd step '" + desc.name + "': index " +
                std::to_string(index) + " at position " + formatDims(position) +
                " (entry " + std::to_string(k) +
                " of its tuple) is out of range for data dim " +
                std::to_string(k) + " of size " + std::to_string(dim) + " (" +
                range + ")");
      }
      offset += at * strides[size_t(k)];
    }
    offsets[size_t(t)] = offset;
  }
  return Status::ok();
}

/// Integers wrap on overflow, as a cast to their width would.
template <typename T> static T add(T a, T b) {
  if constexpr (std::is_integral_v<T>)
    return T(std::make_unsigned_t<T>(a) + std::make_unsigned_t<T>(b));
  else
    return a + b;
}
template <typename T> static T multiply(T a, T b) {
  if constexpr (std::is_integral_v<T>)
    return T(std::make_unsigned_t<T>(a) * std::make_unsigned_t<T>(b));
  else
    return a * b;
}

template <typename T>
static void combine(ScatterReduction reduction, T *dst, const T *src,
                    int64_t n) {
  switch (reduction) {
  case ScatterReduction::Add:
    for (int64_t i = 0; i < n; ++i)
      dst[i] = add(dst[i], src[i]);
    return;
  case ScatterReduction::Mul:
    for (int64_t i = 0; i < n; ++i)
      dst[i] = multiply(dst[i], src[i]);
    return;
  case ScatterReduction::Max:
    for (int64_t i = 0; i < n; ++i)
      dst[i] = std::max(dst[i], src[i]);
    return;
  case ScatterReduction::Min:
    for (int64_t i = 0; i < n; ++i)
      dst[i] = std::min(dst[i], src[i]);
    return;
  case ScatterReduction::None:
    std::memcpy(dst, src, size_t(n) * sizeof(T));
    return;
  }
}

template <typename T>
static void
scatterTyped(ScatterReduction reduction, const std::vector<int64_t> &offsets,
             int64_t sliceElements, const void *updates, void *output) {
  const T *src = static_cast<const T *>(updates);
  T *dst = static_cast<T *>(output);
  for (size_t t = 0; t < offsets.size(); ++t)
    combine(reduction, dst + offsets[t], src + int64_t(t) * sliceElements,
            sliceElements);
}

Status ScatterNDStep::run(const void *data, const void *indices,
                          const void *updates, void *output) const {
  ScatterSizes sizes;
  if (Status st = checkDims(desc_, sizes); !st)
    return st;
  const std::string what = "scatter_nd step '" + desc_.name + "'";
  if (sizes.dataElements == 0)
    return Status::ok();
  if (!data || !output || (sizes.count && (!indices || !updates)))
    return Status::error(StatusCode::InvalidArgument,
                         what + ": null data, indices, updates or output "
                                "pointer");
  std::vector<int64_t> offsets;
  if (Status st =
          desc_.indices64
              ? resolveTuples(desc_, sizes,
                              static_cast<const int64_t *>(indices), offsets)
              : resolveTuples(desc_, sizes,
                              static_cast<const int32_t *>(indices), offsets);
      !st)
    return st;
  size_t elementSize = dtypeSize(desc_.dtype);
  if (output != data)
    std::memcpy(output, data, size_t(sizes.dataElements) * elementSize);
  if (sizes.sliceElements == 0)
    return Status::ok();
  if (desc_.reduction == ScatterReduction::None) {
    const auto *src = static_cast<const uint8_t *>(updates);
    auto *dst = static_cast<uint8_t *>(output);
    size_t sliceBytes = size_t(sizes.sliceElements) * elementSize;
    for (size_t t = 0; t < offsets.size(); ++t)
      std::memcpy(dst + size_t(offsets[t]) * elementSize, src + t * sliceBytes,
                  sliceBytes);
    return Status::ok();
  }
  switch (desc_.dtype) {
  case DType::F32:
    scatterTyped<float>(desc_.reduction, offsets, sizes.sliceElements, updates,
                        output);
    break;
  case DType::F64:
    scatterTyped<double>(desc_.reduction, offsets, sizes.sliceElements, updates,
                         output);
    break;
  case DType::I32:
    scatterTyped<int32_t>(desc_.reduction, offsets, sizes.sliceElements,
                          updates, output);
    break;
  case DType::I64:
    scatterTyped<int64_t>(desc_.reduction, offsets, sizes.sliceElements,
                          updates, output);
    break;
  default:
    // create() refused every other dtype with a reduction.
    break;
  }
  return Status::ok();
}

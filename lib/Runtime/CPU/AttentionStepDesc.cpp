//===- AttentionStepDesc.cpp - Checking an attention step's desc ----------===//
//
// Everything AttentionStep::create refuses, with the message that names the
// step and the offending size (split from AttentionStep.cpp, which keeps the
// kernels).
//
//===----------------------------------------------------------------------===//

#include "AttentionStepDesc.h"
#include "QuantKernels.h"

#include <cmath>
#include <tuple>

using namespace lmopt::runtime;

const char *lmopt::runtime::attentionMaskName(AttentionMask mask) {
  switch (mask) {
  case AttentionMask::None:
    return "none";
  case AttentionMask::Additive:
    return "additive";
  case AttentionMask::Bool:
    return "bool";
  }
  return "invalid";
}

/// Checks that a view's rows of `width` elements fit inside its row stride
/// and that its span counts fewer than 2^63 bytes.
static Status validateView(const std::string &prefix, const char *role,
                           const AttentionOperandView &view, int64_t rows,
                           int64_t width, const char *denseOnly = nullptr) {
  auto describeView = [&] {
    return std::string(role) + " view (offset " + std::to_string(view.offset) +
           ", row stride " + std::to_string(view.rowStride) + ")";
  };
  if (denseOnly && (view.offset != 0 || view.rowStride != 0))
    return Status::error(StatusCode::InvalidArgument,
                         prefix + describeView() + denseOnly);
  if (view.offset < 0 || view.rowStride < 0)
    return Status::error(StatusCode::InvalidArgument,
                         prefix + describeView() + " must not be negative");
  int64_t stride = rowStride(view, width), span = 0;
  if (view.offset > stride - width)
    return Status::error(StatusCode::InvalidArgument,
                         prefix + describeView() +
                             ": offset + H*D = " + std::to_string(view.offset) +
                             " + " + std::to_string(width) +
                             " exceeds the row stride " +
                             std::to_string(stride));
  if (__builtin_mul_overflow(rows - 1, stride, &span) ||
      __builtin_add_overflow(span, view.offset + width, &span) ||
      span > INT64_MAX / 4)
    return Status::error(StatusCode::InvalidArgument,
                         prefix + describeView() + " over " +
                             std::to_string(rows) + " rows overflows");
  return Status::ok();
}

Status lmopt::runtime::validateAttentionDesc(const AttentionStepDesc &desc,
                                             const std::string &prefix,
                                             int64_t maskStrides[4]) {
  const int64_t b = desc.batch, h = desc.numHeads, sq = desc.queryLength,
                sk = desc.keyLength, d = desc.headDim;
  if (b <= 0 || h <= 0 || sq <= 0 || sk <= 0 || d <= 0)
    return Status::error(
        StatusCode::InvalidArgument,
        prefix + "sizes must be positive, got batch " + std::to_string(b) +
            ", heads " + std::to_string(h) + ", query length " +
            std::to_string(sq) + ", key length " + std::to_string(sk) +
            ", head dim " + std::to_string(d));
  // Every operand's and the scores' element counts must fit in int64 bytes.
  int64_t width = 0, q = 0, k = 0, s = 0;
  if (__builtin_mul_overflow(h, d, &width) ||
      __builtin_mul_overflow(b, sq, &q) ||
      __builtin_mul_overflow(q, width, &q) || q > INT64_MAX / 4 ||
      __builtin_mul_overflow(b, sk, &k) ||
      __builtin_mul_overflow(k, width, &k) || k > INT64_MAX / 4 ||
      __builtin_mul_overflow(b, h, &s) || __builtin_mul_overflow(s, sq, &s) ||
      __builtin_mul_overflow(s, sk, &s) || s > INT64_MAX / 4)
    return Status::error(StatusCode::InvalidArgument,
                         prefix + "sizes overflow: batch " + std::to_string(b) +
                             ", heads " + std::to_string(h) +
                             ", query length " + std::to_string(sq) +
                             ", key length " + std::to_string(sk) +
                             ", head dim " + std::to_string(d));
  if (desc.inputBf16 && (desc.keyCapacity || desc.valueCapacity))
    return Status::error(StatusCode::InvalidArgument,
                         prefix + "reads bf16 operands, which a key/value "
                                  "cache (a capacity) does not take");
  if (desc.outputStatic && desc.outputBf16)
    return Status::error(StatusCode::InvalidArgument,
                         prefix + "has both a static and a bf16 output");
  if (desc.outputStatic)
    if (std::string problem =
            quant::staticQuantProblem("output", desc.outputScale,
                                      desc.outputZeroPoint, desc.outputSigned);
        !problem.empty())
      return Status::error(StatusCode::InvalidArgument, prefix + problem);
  const int64_t g = desc.numKvHeads ? desc.numKvHeads : h;
  if (g <= 0 || h % g != 0)
    return Status::error(StatusCode::InvalidArgument,
                         prefix + "key/value heads " + std::to_string(g) +
                             " do not divide heads " + std::to_string(h));
  const int64_t kvWidth = desc.kvHeadsSplit ? d : g * d;
  if (Status st = validateView(prefix, "query", desc.queryView, b * sq, width);
      !st)
    return st;
  for (auto [role, view, capacity] :
       {std::tuple<const char *, const AttentionOperandView *, int64_t>{
            "key", &desc.keyView, desc.keyCapacity},
        {"value", &desc.valueView, desc.valueCapacity}}) {
    if (capacity != 0 && capacity < sk)
      return Status::error(
          StatusCode::InvalidArgument,
          prefix + role + " capacity " + std::to_string(capacity) +
              " is below the key length " + std::to_string(sk));
    int64_t rows = 0;
    if (__builtin_mul_overflow(desc.kvHeadsSplit ? b * g : b,
                               capacity ? capacity : sk, &rows))
      return Status::error(StatusCode::InvalidArgument,
                           prefix + role + " capacity " +
                               std::to_string(capacity) + " overflows");
    const char *denseOnly =
        desc.kvHeadsSplit
            ? " with kv_heads_split; key and value must then be dense [B, H, "
              "Sk, D]"
        : capacity ? " with a capacity; a key or value read at its "
                     "capacity must be dense"
                   : nullptr;
    if (Status st = validateView(prefix, role, *view, rows, kvWidth, denseOnly);
        !st)
      return st;
  }
  if (!std::isfinite(desc.scale))
    return Status::error(StatusCode::InvalidArgument,
                         prefix + "scale must be finite, got " +
                             std::to_string(desc.scale));
  int maskKind = static_cast<int>(desc.mask);
  if (maskKind < 0 || maskKind > 2)
    return Status::error(StatusCode::InvalidArgument,
                         prefix + "unknown mask kind " +
                             std::to_string(maskKind));
  const std::vector<int64_t> &dims = desc.maskDims;
  if (desc.mask == AttentionMask::None) {
    if (!dims.empty())
      return Status::error(StatusCode::InvalidArgument,
                           prefix + "mask dims " + formatDims(dims) +
                               " given without a mask");
    return Status::ok();
  }
  const std::vector<int64_t> target = {b, h, sq, sk};
  bool fits = dims.size() <= 4;
  for (size_t i = 0; fits && i < dims.size(); ++i) {
    int64_t dim = dims[dims.size() - 1 - i], want = target[3 - i];
    fits = dim == 1 || dim == want;
  }
  if (!fits)
    return Status::error(
        StatusCode::InvalidArgument,
        prefix + std::string(attentionMaskName(desc.mask)) + " mask dims " +
            formatDims(dims) +
            " do not broadcast to [B, H, Sq, Sk] = " + formatDims(target));
  int64_t stride = 1;
  for (size_t i = 0; i < 4; ++i) {
    size_t axis = 3 - i;
    bool present = i < dims.size();
    int64_t dim = present ? dims[dims.size() - 1 - i] : 1;
    maskStrides[axis] = dim == 1 ? 0 : stride;
    stride *= dim;
  }
  return Status::ok();
}
Status lmopt::runtime::validateAttentionBias(const AttentionStepDesc &desc,
                                             const std::string &prefix,
                                             int64_t biasStrides[3],
                                             size_t &biasElements) {
  const std::vector<int64_t> &dims = desc.biasDims;
  biasElements = 0;
  if (!desc.scoreBias) {
    if (!dims.empty())
      return Status::error(StatusCode::InvalidArgument,
                           prefix + "score bias dims " + formatDims(dims) +
                               " given without a score bias");
    return Status::ok();
  }
  const std::vector<int64_t> target = {desc.batch, desc.numHeads,
                                       desc.queryLength, desc.keyLength};
  bool fits = dims.size() == 4 && dims[3] == target[3];
  for (size_t i = 0; fits && i < 3; ++i)
    fits = dims[i] == 1 || dims[i] == target[i];
  if (!fits)
    return Status::error(StatusCode::InvalidArgument,
                         prefix + "score bias dims " + formatDims(dims) +
                             " are not [1|B, 1|H, 1|Sq, Sk] for [B, H, Sq, "
                             "Sk] = " +
                             formatDims(target));
  int64_t stride = dims[3];
  for (int axis = 2; axis >= 0; --axis) {
    biasStrides[axis] = dims[size_t(axis)] == 1 ? 0 : stride;
    stride *= dims[size_t(axis)];
  }
  biasElements = size_t(stride);
  return Status::ok();
}

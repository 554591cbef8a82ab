//===- Npy.h - NumPy .npy and .npz files ------------------------*- C++ -*-===//
//
// Tensors in and out of the runtime travel as NumPy files, the format every
// ML user already has. Reading validates the whole file (header syntax, size
// arithmetic, data length, archive structure and CRCs) and reports problems as
// a Status naming the file and the offending values. docs/bundle-format.md
// lists what is supported.
//
//===----------------------------------------------------------------------===//

#ifndef LMOPT_FORMAT_NPY_H
#define LMOPT_FORMAT_NPY_H

#include "lmopt/Format/Status.h"

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace lmopt::runtime {

/// Element types. The values are part of the C API (`lmoptDType`).
enum class DType : int {
  F32 = 1,
  F64 = 2,
  F16 = 3,
  BF16 = 4,
  I8 = 5,
  U8 = 6,
  I16 = 7,
  U16 = 8,
  I32 = 9,
  U32 = 10,
  I64 = 11,
  U64 = 12,
  Bool = 13,
};

/// Bytes per element, or 0 for a value outside the enum.
size_t dtypeSize(DType dtype);
/// "f32", "f64", ..., "bool"; "invalid" outside the enum.
const char *dtypeName(DType dtype);
/// True for the enum's values.
bool isValidDType(int value);

/// A dense, C-ordered tensor that owns its bytes.
struct Tensor {
  DType dtype = DType::F32;
  std::vector<int64_t> shape;
  std::vector<uint8_t> data;

  /// Product of the dims (1 for a scalar).
  uint64_t elementCount() const;
  template <typename T> const T *as() const {
    return reinterpret_cast<const T *>(data.data());
  }
  template <typename T> T *as() { return reinterpret_cast<T *>(data.data()); }
};

struct NamedTensor {
  std::string name;
  Tensor tensor;
};

/// At most this many dims (NumPy 2's limit).
inline constexpr size_t kMaxRank = 64;

/// Checks that `tensor` is consistent: valid dtype, rank, non-negative dims
/// whose product times the item size equals data.size() without overflow.
Status checkTensor(const Tensor &tensor, const std::string &what);

/// Reads a .npy file (format 1.0, 2.0 or 3.0; little-endian; C order).
Status readNpy(const std::string &path, Tensor &out);
/// Parses .npy bytes; `what` names the source in messages.
Status parseNpy(const uint8_t *data, size_t size, const std::string &what,
                Tensor &out);
/// Writes a .npy file (format 1.0, or 2.0 for headers over 64 KiB)
/// atomically. BF16 has no NumPy dtype and is refused.
Status writeNpy(const std::string &path, const Tensor &tensor);
/// Serializes `tensor` as .npy bytes.
Status serializeNpy(const Tensor &tensor, const std::string &what,
                    std::vector<uint8_t> &out);

/// Reads every member of a .npz archive (stored or deflate-compressed, as
/// np.savez and np.savez_compressed write them), in archive order, with the
/// ".npy" suffix dropped from the names.
Status readNpz(const std::string &path, std::vector<NamedTensor> &out);
/// Writes an uncompressed .npz archive atomically; names get ".npy" appended.
Status writeNpz(const std::string &path,
                const std::vector<NamedTensor> &tensors);

} // namespace lmopt::runtime

#endif // LMOPT_FORMAT_NPY_H

//===- Tensors.cpp - numpy/PyTorch arrays to and from runtime tensors -----===//

#include "Tensors.h"

using namespace lmopt;
using namespace lmopt::python;
using runtime::DType;

namespace {
/// A runtime dtype, its DLPack code and width, and numpy's name for it.
struct TypeRow {
  DType dtype;
  nb::dlpack::dtype_code code;
  uint8_t bits;
  const char *numpy;
};
} // namespace

using Code = nb::dlpack::dtype_code;
static const TypeRow kTypes[] = {
    {DType::F32, Code::Float, 32, "float32"},
    {DType::F64, Code::Float, 64, "float64"},
    {DType::F16, Code::Float, 16, "float16"},
    {DType::BF16, Code::Bfloat, 16, "bfloat16"},
    {DType::I8, Code::Int, 8, "int8"},
    {DType::U8, Code::UInt, 8, "uint8"},
    {DType::I16, Code::Int, 16, "int16"},
    {DType::U16, Code::UInt, 16, "uint16"},
    {DType::I32, Code::Int, 32, "int32"},
    {DType::U32, Code::UInt, 32, "uint32"},
    {DType::I64, Code::Int, 64, "int64"},
    {DType::U64, Code::UInt, 64, "uint64"},
    {DType::Bool, Code::Bool, 8, "bool"},
};

static const TypeRow *rowOf(DType dtype) {
  for (const TypeRow &row : kTypes)
    if (row.dtype == dtype)
      return &row;
  return nullptr;
}

DType python::dtypeOf(const InputArray &array, const std::string &what) {
  nb::dlpack::dtype type = array.dtype();
  for (const TypeRow &row : kTypes)
    if (type.lanes == 1 && type.code == uint8_t(row.code) &&
        type.bits == row.bits)
      return row.dtype;
  throw Error(what + " has an element type lmopt does not read (DLPack code " +
              std::to_string(int(type.code)) + ", " +
              std::to_string(int(type.bits)) + " bits)");
}

const char *python::numpyDTypeName(DType dtype) {
  const TypeRow *row = rowOf(dtype);
  return row ? row->numpy : "invalid";
}

runtime::TensorView python::viewOf(const InputArray &array, DType dtype,
                                   std::vector<int64_t> &dims) {
  dims.resize(array.ndim());
  for (size_t i = 0; i < array.ndim(); ++i)
    dims[i] = int64_t(array.shape(i));
  runtime::TensorView view;
  view.dtype = dtype;
  view.dims = dims.data();
  view.rank = dims.size();
  view.data = array.data();
  view.byteSize = uint64_t(array.size()) * runtime::dtypeSize(dtype);
  return view;
}

/// The DLPack element type numpy receives for `dtype`; numpy has no
/// bfloat16, so bf16 arrives as its uint16 bits.
static nb::dlpack::dtype exportType(DType dtype) {
  const TypeRow *row = rowOf(dtype == DType::BF16 ? DType::U16 : dtype);
  return nb::dlpack::dtype{uint8_t(row->code), row->bits, 1};
}

nb::object python::toNumpy(runtime::Tensor &&tensor) {
  auto *owned = new runtime::Tensor(std::move(tensor));
  nb::capsule owner(owned, [](void *p) noexcept {
    delete static_cast<runtime::Tensor *>(p);
  });
  std::vector<size_t> shape(owned->shape.begin(), owned->shape.end());
  nb::ndarray<nb::numpy> array(owned->data.data(), shape.size(), shape.data(),
                               owner, /*strides=*/nullptr,
                               exportType(owned->dtype));
  return array.cast();
}

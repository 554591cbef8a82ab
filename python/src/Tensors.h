//===- Tensors.h - numpy/PyTorch arrays to and from runtime tensors -------===//
//
// Inputs are read in place through nanobind's ndarray (the buffer protocol
// and DLPack: numpy arrays and PyTorch CPU tensors); a C-contiguous array
// is not copied. Outputs become numpy arrays that own the runtime's bytes.
//
//===----------------------------------------------------------------------===//

#ifndef LMOPT_PYTHON_TENSORS_H
#define LMOPT_PYTHON_TENSORS_H

#include "lmopt/Format/Npy.h"
#include "lmopt/Format/Status.h"
#include "lmopt/Runtime/Session.h"

#include <nanobind/ndarray.h>

#include <stdexcept>
#include <string>

namespace lmopt::python {

namespace nb = nanobind;

/// A C-contiguous array on the CPU, in place where the layout allows.
using InputArray = nb::ndarray<nb::c_contig, nb::device::cpu>;

/// lmopt.Error: a runtime or compiler failure, with its message.
struct Error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

inline void check(const runtime::Status &status) {
  if (!status.isOk())
    throw Error(status.message());
}

/// The runtime dtype of `array`; throws naming `what` for one lmopt lacks.
runtime::DType dtypeOf(const InputArray &array, const std::string &what);

/// numpy's name for a runtime dtype ("float32", "int64", "bfloat16").
const char *numpyDTypeName(runtime::DType dtype);

/// A view of `array` (whose dims live in `dims`) for Session::run.
runtime::TensorView viewOf(const InputArray &array, runtime::DType dtype,
                           std::vector<int64_t> &dims);

/// A numpy array that takes over `tensor`'s bytes (bf16 as uint16).
nb::object toNumpy(runtime::Tensor &&tensor);

} // namespace lmopt::python

#endif // LMOPT_PYTHON_TENSORS_H

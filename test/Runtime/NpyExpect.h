//===- NpyExpect.h - Compare tensors with NumPy's values --------*- C++ -*-===//

#ifndef LMOPT_TEST_RUNTIME_NPYEXPECT_H
#define LMOPT_TEST_RUNTIME_NPYEXPECT_H

#include "lmopt/Format/Npy.h"

#include "TestUtil.h"

namespace lmopt::runtime::test {

/// Checks dtype, shape, every value and the sum of `t` against an entry of
/// expected.json (written by NumPy).
void expectTensorMatches(const Tensor &t, const Json &want);

} // namespace lmopt::runtime::test

#endif // LMOPT_TEST_RUNTIME_NPYEXPECT_H

//===- Requirements.h - What a bundle needs of the machine ------*- C++ -*-===//
//
// A bundle's generated kernels are compiled for a CPU (the compiling
// machine's by default): run elsewhere, an instruction the CPU lacks would
// kill the process. The compiler lists the CPU features the kernels may use
// in a `requires` section; a session checks them before it loads any code
// and refuses the bundle with the missing features named.
//
//===----------------------------------------------------------------------===//

#ifndef LMOPT_FORMAT_REQUIREMENTS_H
#define LMOPT_FORMAT_REQUIREMENTS_H

#include "lmopt/Format/Status.h"

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string_view>
#include <vector>

namespace lmopt::runtime {

/// The x86 features the runtime can check, by the names LLVM and GCC share
/// ("avx512f", "fma", ...). The compiler records only these.
const std::vector<const char *> &checkableCpuFeatures();

/// 1 when this CPU has `feature`, 0 when not, -1 for a name outside
/// checkableCpuFeatures().
int cpuSupports(std::string_view feature);

/// Checks a `requires` section: text lines `cpu-feature <name>` (empty lines
/// allowed). Fails with Unsupported naming every missing feature, or with
/// InvalidFormat for a line or feature name this runtime does not know.
/// `supports` replaces cpuSupports (tests).
Status checkRequirements(
    const uint8_t *data, size_t size, std::string_view source,
    const std::function<int(std::string_view)> &supports = cpuSupports);

} // namespace lmopt::runtime

#endif // LMOPT_FORMAT_REQUIREMENTS_H

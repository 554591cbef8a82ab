//===- Requirements.h - What a bundle needs of the machine ------*- C++ -*-===//
//
// A bundle's generated kernels are compiled for a CPU (the compiling
// machine's by default): run elsewhere, an instruction the CPU lacks would
// kill the process. The compiler lists the CPU features the kernels may use
// in a `requires` section; a session checks them before it loads any code
// and refuses the bundle with the missing features named. Each line kind
// belongs to one device (`cpu-feature <name>`: cpu; `cuda-sm <N>`: cuda);
// every device of the session reads the section and checks its own lines.
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

/// The device that checks `requires` lines of kind `kind` ("cpu" for
/// "cpu-feature"), or null for a kind this runtime does not know.
const char *requirementDevice(std::string_view kind);

/// Splits a `requires` section into lines `<kind> <value>` (empty lines
/// allowed) and calls `visit` with the kind, the value and the line number
/// of each line that belongs to `device`. Fails with InvalidFormat naming a
/// line of a kind no device knows, or with what `visit` returns.
Status forEachRequirement(
    const uint8_t *data, size_t size, std::string_view source,
    std::string_view device,
    const std::function<Status(std::string_view kind, std::string_view value,
                               size_t line)> &visit);

/// InvalidFormat "bundle '<source>': 'requires' line <line> <what>".
Status requirementLineError(std::string_view source, size_t line,
                            const std::string &what);

/// Checks a `requires` section's `cpu-feature <name>` lines (the cpu
/// device's; other devices' lines are skipped). Fails with Unsupported
/// naming every missing feature, or with InvalidFormat for a line or feature
/// name this runtime does not know. `supports` replaces cpuSupports (tests).
Status checkRequirements(
    const uint8_t *data, size_t size, std::string_view source,
    const std::function<int(std::string_view)> &supports = cpuSupports);

} // namespace lmopt::runtime

#endif // LMOPT_FORMAT_REQUIREMENTS_H

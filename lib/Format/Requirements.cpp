//===- Requirements.cpp - What a bundle needs of the machine -------------===//

#include "lmopt/Format/Requirements.h"

#include <string>

using namespace lmopt::runtime;

namespace {
struct Feature {
  const char *name;
  bool (*present)();
};
} // namespace

// __builtin_cpu_supports takes string literals only, hence one entry each.
#define LMOPT_FEATURE(NAME)                                                    \
  {                                                                            \
    NAME, [] { return __builtin_cpu_supports(NAME) != 0; }                     \
  }

static const Feature kFeatures[] = {
    LMOPT_FEATURE("sse4.2"),       LMOPT_FEATURE("popcnt"),
    LMOPT_FEATURE("avx"),          LMOPT_FEATURE("avx2"),
    LMOPT_FEATURE("fma"),          LMOPT_FEATURE("f16c"),
    LMOPT_FEATURE("bmi"),          LMOPT_FEATURE("bmi2"),
    LMOPT_FEATURE("lzcnt"),        LMOPT_FEATURE("movbe"),
    LMOPT_FEATURE("avx512f"),      LMOPT_FEATURE("avx512bw"),
    LMOPT_FEATURE("avx512dq"),     LMOPT_FEATURE("avx512vl"),
    LMOPT_FEATURE("avx512cd"),     LMOPT_FEATURE("avx512bf16"),
    LMOPT_FEATURE("avx512vnni"),   LMOPT_FEATURE("avx512fp16"),
    LMOPT_FEATURE("avx512vbmi"),   LMOPT_FEATURE("avx512vbmi2"),
    LMOPT_FEATURE("avx512bitalg"), LMOPT_FEATURE("avx512vpopcntdq"),
    LMOPT_FEATURE("avx512ifma"),   LMOPT_FEATURE("gfni"),
    LMOPT_FEATURE("vaes"),         LMOPT_FEATURE("vpclmulqdq"),
};
#undef LMOPT_FEATURE

const std::vector<const char *> &lmopt::runtime::checkableCpuFeatures() {
  static const std::vector<const char *> names = [] {
    std::vector<const char *> out;
    for (const Feature &f : kFeatures)
      out.push_back(f.name);
    return out;
  }();
  return names;
}

int lmopt::runtime::cpuSupports(std::string_view feature) {
  for (const Feature &f : kFeatures)
    if (feature == f.name)
      return f.present() ? 1 : 0;
  return -1;
}

namespace {
struct RequirementKind {
  const char *kind;
  const char *device;
};
} // namespace

static const RequirementKind kRequirementKinds[] = {
    {"cpu-feature", "cpu"},
    {"cuda-sm", "cuda"},
};

const char *lmopt::runtime::requirementDevice(std::string_view kind) {
  for (const RequirementKind &k : kRequirementKinds)
    if (kind == k.kind)
      return k.device;
  return nullptr;
}

Status lmopt::runtime::requirementLineError(std::string_view source,
                                            size_t line,
                                            const std::string &what) {
  return Status::error(StatusCode::InvalidFormat,
                       "bundle '" + std::string(source) +
                           "': 'requires' line " + std::to_string(line) + " " +
                           what);
}

Status lmopt::runtime::forEachRequirement(
    const uint8_t *data, size_t size, std::string_view source,
    std::string_view device,
    const std::function<Status(std::string_view, std::string_view, size_t)>
        &visit) {
  std::string_view text(reinterpret_cast<const char *>(data), size);
  size_t lineNumber = 0;
  while (!text.empty()) {
    size_t end = text.find('\n');
    std::string_view line = text.substr(0, end);
    text = end == std::string_view::npos ? std::string_view()
                                         : text.substr(end + 1);
    ++lineNumber;
    if (line.empty())
      continue;
    size_t space = line.find(' ');
    std::string_view kind = line.substr(0, space);
    const char *owner =
        space == std::string_view::npos ? nullptr : requirementDevice(kind);
    if (!owner) {
      std::string known;
      for (const RequirementKind &k : kRequirementKinds)
        known += (known.empty() ? "'" : ", '") + std::string(k.kind) + " ...'";
      return requirementLineError(source, lineNumber,
                                  "is '" + std::string(line.substr(0, 64)) +
                                      "'; this runtime knows only " + known);
    }
    if (device != owner)
      continue;
    if (Status st = visit(kind, line.substr(space + 1), lineNumber); !st)
      return st;
  }
  return Status::ok();
}

Status lmopt::runtime::checkRequirements(
    const uint8_t *data, size_t size, std::string_view source,
    const std::function<int(std::string_view)> &supports) {
  std::string missing;
  Status st = forEachRequirement(
      data, size, source, "cpu",
      [&](std::string_view, std::string_view name, size_t line) {
        int present = supports(name);
        if (present < 0)
          return requirementLineError(source, line,
                                      "names CPU feature '" +
                                          std::string(name.substr(0, 64)) +
                                          "', which this runtime cannot check");
        if (present == 0)
          missing += (missing.empty() ? "" : ", ") + std::string(name);
        return Status::ok();
      });
  if (!st)
    return st;
  if (!missing.empty())
    return Status::error(
        StatusCode::Unsupported,
        "bundle '" + std::string(source) +
            "' has kernels compiled for CPU features this machine lacks: " +
            missing +
            "; recompile it here, or for an older CPU with lmopt-compile "
            "--cpu (e.g. --cpu=x86-64-v3)");
  return Status::ok();
}

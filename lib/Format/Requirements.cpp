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
  {NAME, [] { return __builtin_cpu_supports(NAME) != 0; }}

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

Status lmopt::runtime::checkRequirements(
    const uint8_t *data, size_t size, std::string_view source,
    const std::function<int(std::string_view)> &supports) {
  std::string_view text(reinterpret_cast<const char *>(data), size);
  std::string missing;
  size_t lineNumber = 0;
  while (!text.empty()) {
    size_t end = text.find('\n');
    std::string_view line = text.substr(0, end);
    text = end == std::string_view::npos ? std::string_view()
                                         : text.substr(end + 1);
    ++lineNumber;
    if (line.empty())
      continue;
    auto bad = [&](const std::string &what) {
      return Status::error(StatusCode::InvalidFormat,
                           "bundle '" + std::string(source) +
                               "': 'requires' line " +
                               std::to_string(lineNumber) + " " + what);
    };
    constexpr std::string_view kPrefix = "cpu-feature ";
    if (line.substr(0, kPrefix.size()) != kPrefix)
      return bad("is '" + std::string(line.substr(0, 64)) +
                 "'; this runtime knows only 'cpu-feature <name>'");
    std::string_view name = line.substr(kPrefix.size());
    int present = supports(name);
    if (present < 0)
      return bad("names CPU feature '" + std::string(name.substr(0, 64)) +
                 "', which this runtime cannot check");
    if (present == 0)
      missing += (missing.empty() ? "" : ", ") + std::string(name);
  }
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

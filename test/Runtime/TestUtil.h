//===- TestUtil.h - Helpers for the runtime unit tests ----------*- C++ -*-===//

#ifndef LMOPT_TEST_RUNTIME_TESTUTIL_H
#define LMOPT_TEST_RUNTIME_TESTUTIL_H

#include "lmopt/Format/Npy.h"
#include "lmopt/Format/Status.h"
#include "lmopt/Runtime/CPU/LinearStep.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace lmopt::runtime::test {

/// test/Runtime/Inputs (fixtures written by make_npy_fixtures.py).
std::string inputsDir();
std::string inputPath(const std::string &name);

std::vector<uint8_t> readBytes(const std::string &path);
void writeBytes(const std::string &path, const std::vector<uint8_t> &bytes);
/// Names of the entries in `dir`, sorted.
std::vector<std::string> listDir(const std::string &dir);

/// A fresh directory removed (with its files) when the test ends.
class TempDir {
public:
  TempDir();
  ~TempDir();
  const std::string &path() const { return path_; }
  std::string file(const std::string &name) const { return path_ + "/" + name; }

private:
  std::string path_;
};

/// A parsed JSON value; enough for expected.json.
struct Json {
  enum Kind { Null, Bool, Number, String, Array, Object } kind = Null;
  bool boolean = false;
  double number = 0;
  std::string string;
  std::vector<Json> array;
  std::vector<std::pair<std::string, Json>> object;

  const Json &operator[](const std::string &key) const;
  static bool parse(const std::string &text, Json &out);
};

/// expected.json, parsed once.
const Json &expectedJson();

/// fixture_util.py's hash_values(), in the same arithmetic: the
/// step tests regenerate their inputs with it, bit for bit.
std::vector<float> hashValues(uint32_t seed, int64_t count, double scale);

/// 0, 1, ..., n - 1 as floats (numpy.arange(n, dtype=float32)).
std::vector<float> arange(int n);

/// The fixture array `name`, or null.
const Tensor *member(const std::vector<NamedTensor> &all, const char *name);

/// The fixture array `name`'s elements (empty if there is none).
template <typename T>
std::vector<T> values(const std::vector<NamedTensor> &all, const char *name) {
  const Tensor *t = member(all, name);
  if (!t)
    return {};
  return std::vector<T>(t->as<T>(), t->as<T>() + t->elementCount());
}

/// A CPU context with `threads` threads (0: the default); null on failure,
/// which the test reports.
std::unique_ptr<CpuContext> makeContext(int threads = 0);

} // namespace lmopt::runtime::test

/// Checks that `status` failed with `code` and exactly `message`.
#define EXPECT_STATUS(status, wantCode, wantMessage)                           \
  do {                                                                         \
    const ::lmopt::runtime::Status &st_ = (status);                            \
    EXPECT_EQ(st_.code(), (wantCode)) << st_.toString();                       \
    EXPECT_EQ(st_.message(), (wantMessage));                                   \
  } while (0)

#endif // LMOPT_TEST_RUNTIME_TESTUTIL_H

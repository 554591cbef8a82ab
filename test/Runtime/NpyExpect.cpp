//===- NpyExpect.cpp - Compare tensors with NumPy's values ----------------===//

#include "NpyExpect.h"

#include "lmopt/Format/Float16.h"

#include <cmath>
#include <cstring>

using namespace lmopt::runtime;
using namespace lmopt::runtime::test;

template <typename T> static T load(const Tensor &t, size_t i) {
  T v;
  std::memcpy(&v, t.data.data() + i * sizeof(T), sizeof(T));
  return v;
}

/// Element `i` as a double (floats) or as text (integers and bools).
static bool element(const Tensor &t, size_t i, double &f, std::string &s) {
  switch (t.dtype) {
  case DType::F32:
    f = load<float>(t, i);
    return true;
  case DType::F64:
    f = load<double>(t, i);
    return true;
  case DType::F16:
    f = halfToFloat(load<uint16_t>(t, i));
    return true;
  case DType::I8:
    s = std::to_string(load<int8_t>(t, i));
    break;
  case DType::U8:
  case DType::Bool:
    s = std::to_string(load<uint8_t>(t, i));
    break;
  case DType::I16:
    s = std::to_string(load<int16_t>(t, i));
    break;
  case DType::U16:
    s = std::to_string(load<uint16_t>(t, i));
    break;
  case DType::I32:
    s = std::to_string(load<int32_t>(t, i));
    break;
  case DType::U32:
    s = std::to_string(load<uint32_t>(t, i));
    break;
  case DType::I64:
    s = std::to_string(load<int64_t>(t, i));
    break;
  case DType::U64:
    s = std::to_string(load<uint64_t>(t, i));
    break;
  case DType::BF16:
    ADD_FAILURE() << "no NumPy fixture has bf16";
    break;
  }
  return false;
}

void lmopt::runtime::test::expectTensorMatches(const Tensor &t,
                                               const Json &want) {
  EXPECT_EQ(dtypeName(t.dtype), want["dtype"].string);
  std::vector<int64_t> shape;
  for (const Json &d : want["shape"].array)
    shape.push_back(int64_t(d.number));
  ASSERT_EQ(t.shape, shape);
  const std::vector<Json> &values = want["values"].array;
  ASSERT_EQ(t.elementCount(), values.size());
  double sum = 0;
  for (size_t i = 0; i < values.size(); ++i) {
    double f = 0;
    std::string s;
    if (element(t, i, f, s)) {
      double w = std::strtod(values[i].string.c_str(), nullptr);
      if (std::isnan(w))
        EXPECT_TRUE(std::isnan(f)) << "element " << i;
      else
        EXPECT_EQ(f, w) << "element " << i << " expected " << values[i].string;
      sum += f;
    } else {
      EXPECT_EQ(s, values[i].string) << "element " << i;
      sum += std::strtod(s.c_str(), nullptr);
    }
  }
  double wantSum = std::strtod(want["sum"].string.c_str(), nullptr);
  if (std::isfinite(wantSum)) {
    EXPECT_NEAR(sum, wantSum, 1e-9 * std::max(1.0, std::fabs(wantSum)));
  } else if (std::isnan(wantSum)) {
    EXPECT_TRUE(std::isnan(sum)) << sum;
  } else {
    EXPECT_EQ(sum, wantSum);
  }
}

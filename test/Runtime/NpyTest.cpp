//===- NpyTest.cpp - .npy reader and writer tests -------------------------===//
//
// Expected values come from NumPy through expected.json. Broken headers that
// NumPy would never write are built here byte by byte.
//
//===----------------------------------------------------------------------===//

#include "lmopt/Format/Npy.h"

#include "NpyExpect.h"
#include "TestUtil.h"

#include <cstring>

using namespace lmopt::runtime;
using namespace lmopt::runtime::test;

namespace {

/// A .npy file with `header` (padded like NumPy's) and `data` bytes.
std::vector<uint8_t> npyBytes(const std::string &header, size_t dataBytes,
                              uint8_t major = 1) {
  std::string h = header;
  size_t pre = major == 1 ? 10 : 12;
  while ((pre + h.size() + 1) % 64)
    h += ' ';
  h += '\n';
  std::vector<uint8_t> b = {0x93, 'N', 'U', 'M', 'P', 'Y', major, 0};
  for (size_t i = 0; i < pre - 8; ++i)
    b.push_back(uint8_t(h.size() >> (8 * i)));
  b.insert(b.end(), h.begin(), h.end());
  b.insert(b.end(), dataBytes, 0);
  return b;
}

class NpyTest : public ::testing::Test {
protected:
  Status readBytes(const std::vector<uint8_t> &bytes, Tensor &t) {
    writeBytes(path(), bytes);
    return readNpy(path(), t);
  }
  Status readHeader(const std::string &header, size_t dataBytes = 0) {
    Tensor t;
    return readBytes(npyBytes(header, dataBytes), t);
  }
  std::string path() const { return dir.file("t.npy"); }
  std::string prefix() const { return "'" + path() + "' "; }
  TempDir dir;
};

} // namespace

TEST(NpyFixtures, EveryDTypeMatchesNumpy) {
  const Json &npy = expectedJson()["npy"];
  ASSERT_GE(npy.object.size(), 16u);
  for (const auto &[name, want] : npy.object) {
    SCOPED_TRACE(name);
    Tensor t;
    Status st = readNpy(inputPath(name), t);
    ASSERT_TRUE(st) << st.toString();
    expectTensorMatches(t, want);
  }
}

TEST_F(NpyTest, RoundTripEveryDType) {
  for (DType dtype : {DType::F32, DType::F64, DType::F16, DType::I8, DType::U8,
                      DType::I16, DType::U16, DType::I32, DType::U32,
                      DType::I64, DType::U64, DType::Bool}) {
    SCOPED_TRACE(dtypeName(dtype));
    for (std::vector<int64_t> shape :
         {std::vector<int64_t>{}, {5}, {2, 3}, {2, 0, 4}, {1, 2, 1, 3}}) {
      Tensor t;
      t.dtype = dtype;
      t.shape = shape;
      t.data.resize(t.elementCount() * dtypeSize(dtype));
      for (size_t i = 0; i < t.data.size(); ++i)
        t.data[i] =
            dtype == DType::Bool ? uint8_t(i % 3 == 0) : uint8_t(i * 37 + 11);
      ASSERT_TRUE(writeNpy(path(), t));
      std::vector<uint8_t> file = test::readBytes(path());
      // Data starts 64-byte aligned, as NumPy writes it.
      EXPECT_EQ((file.size() - t.data.size()) % 64, 0u);
      Tensor back;
      Status st = readNpy(path(), back);
      ASSERT_TRUE(st) << st.toString();
      EXPECT_EQ(back.dtype, t.dtype);
      EXPECT_EQ(back.shape, t.shape);
      EXPECT_EQ(back.data, t.data);
    }
  }
}

TEST_F(NpyTest, WriterRejectsInconsistentTensors) {
  Tensor t;
  t.dtype = DType::BF16;
  t.shape = {2};
  t.data.resize(4);
  EXPECT_STATUS(writeNpy(path(), t), StatusCode::Unsupported,
                "tensor for " + prefix() +
                    "has dtype 'bf16', which has no NumPy equivalent");
  t.dtype = DType::F32;
  t.shape = {2, 3};
  EXPECT_STATUS(writeNpy(path(), t), StatusCode::InvalidArgument,
                "tensor for " + prefix() +
                    "has shape (2, 3) of dtype 'f32' (24 bytes) but 4 bytes "
                    "of data");
  t.shape = {-1};
  EXPECT_STATUS(writeNpy(path(), t), StatusCode::InvalidArgument,
                "tensor for " + prefix() + "has negative dim -1 at index 0");
  t.shape = {int64_t(1) << 62, 8};
  EXPECT_STATUS(writeNpy(path(), t), StatusCode::InvalidArgument,
                "tensor for " + prefix() +
                    "has shape (4611686018427387904, 8) of dtype 'f32' whose "
                    "byte size overflows 64 bits");
  t.dtype = DType(99);
  t.shape = {1};
  EXPECT_STATUS(writeNpy(path(), t), StatusCode::InvalidArgument,
                "tensor for " + prefix() + "has invalid dtype 99");
  t.dtype = DType::U8;
  t.shape.assign(65, 1);
  t.data.resize(1);
  EXPECT_STATUS(writeNpy(path(), t), StatusCode::InvalidArgument,
                "tensor for " + prefix() +
                    "has rank 65; at most 64 is supported");
  EXPECT_TRUE(listDir(dir.path()).empty());
}

TEST_F(NpyTest, RefusedNumpyFiles) {
  Tensor t;
  std::string f = inputPath("fortran_f32.npy");
  EXPECT_STATUS(readNpy(f, t), StatusCode::Unsupported,
                "'" + f +
                    "' holds a Fortran-order array (dtype '<f4', shape (2, "
                    "3)); lmopt reads C-order arrays only (save "
                    "np.ascontiguousarray(a))");
  f = inputPath("bigendian_f32.npy");
  EXPECT_STATUS(readNpy(f, t), StatusCode::Unsupported,
                "'" + f +
                    "' has dtype '>f4', which is big-endian; lmopt reads "
                    "little-endian arrays only (convert with "
                    "a.astype(a.dtype.newbyteorder('<')))");
  f = inputPath("complex64.npy");
  EXPECT_STATUS(readNpy(f, t), StatusCode::Unsupported,
                "'" + f +
                    "' has dtype '<c8', which lmopt does not support; "
                    "supported: f2, f4, f8, i1-i8, u1-u8, b1");
  f = inputPath("truncated_data.npy");
  EXPECT_STATUS(readNpy(f, t), StatusCode::InvalidFormat,
                "'" + f +
                    "' is truncated: shape (4, 4) of dtype '<f4' needs 64 "
                    "bytes of data, the file has 59");
  f = inputPath("truncated_header.npy");
  EXPECT_STATUS(readNpy(f, t), StatusCode::InvalidFormat,
                "'" + f +
                    "' is truncated: its header needs 118 bytes after offset "
                    "10, the file has 40");
  f = dir.file("missing.npy");
  EXPECT_STATUS(readNpy(f, t), StatusCode::IoError,
                "cannot open '" + f + "': No such file or directory");
}

TEST_F(NpyTest, PreambleErrors) {
  Tensor t;
  EXPECT_STATUS(readBytes({}, t), StatusCode::InvalidFormat,
                prefix() + "is empty (0 bytes), not a .npy file");
  EXPECT_STATUS(readBytes({'P', 'K', 3, 4, 0, 0, 0, 0, 0, 0, 0}, t),
                StatusCode::InvalidFormat,
                prefix() + "is not a .npy file: it starts with "
                           "'PK\\x03\\x04\\x00\\x00', not '\\x93NUMPY'");
  EXPECT_STATUS(readBytes({0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0, 9}, t),
                StatusCode::InvalidFormat,
                prefix() + "is truncated: 9 bytes, shorter than the .npy "
                           "preamble");
  EXPECT_STATUS(readBytes(npyBytes("{}", 0, 4), t), StatusCode::VersionMismatch,
                prefix() + "has .npy format version 4.0; lmopt reads 1.0, "
                           "2.0 and 3.0");
  std::vector<uint8_t> v2 = npyBytes(
      "{'descr': '<i2', 'fortran_order': False, 'shape': (3,), }", 6, 2);
  ASSERT_TRUE(readBytes(v2, t));
  EXPECT_EQ(t.shape, std::vector<int64_t>{3});
  v2.resize(11);
  EXPECT_STATUS(readBytes(v2, t), StatusCode::InvalidFormat,
                prefix() + "is truncated: 11 bytes, shorter than the .npy "
                           "preamble");
}

TEST_F(NpyTest, HeaderSyntaxErrors) {
  const std::string p = prefix() + "has a malformed header: ";
  auto code = StatusCode::InvalidFormat;
  EXPECT_STATUS(readHeader("['descr']"), code,
                p + "header is not a dict literal at offset 0 near "
                    "'['descr']       '");
  EXPECT_STATUS(readHeader("{'descr': '<f4', 'shape': (2,), }"), code,
                p + "header lacks key 'fortran_order'");
  EXPECT_STATUS(
      readHeader("{'descr': '<f4', 'fortran_order': False, 'shape': (), "
                 "'extra': 1}"),
      code,
      p + "header has unexpected key 'extra'; only 'descr', 'fortran_order' "
          "and 'shape' are allowed");
  EXPECT_STATUS(readHeader("{'descr': '<f4', 'descr': '<f4', "
                           "'fortran_order': False, 'shape': ()}"),
                code, p + "header has key 'descr' twice");
  EXPECT_STATUS(
      readHeader("{'descr': '<f4', 'fortran_order': 0, 'shape': ()}"), code,
      p + "'fortran_order' is not True or False at offset 34 near '0, "
          "'shape': ()} '");
  EXPECT_STATUS(
      readHeader("{'descr': '<f4', 'fortran_order': False, 'shape': (3)}"),
      code, p + "'shape' is '(3)', an integer, not a tuple");
  EXPECT_STATUS(
      readHeader("{'descr': '<f4', 'fortran_order': False, 'shape': (-1,)}"),
      code,
      p + "'shape' must hold non-negative integers; found '-1,)}     "
          "      '");
  EXPECT_STATUS(
      readHeader("{'descr': '<f4', 'fortran_order': False, 'shape': [2]}"),
      code, p + "'shape' is not a tuple at offset 50 near '[2]}            '");
  EXPECT_STATUS(readHeader("{'descr': '<f4', 'fortran_order': False, "
                           "'shape': (99999999999999999999,)}"),
                code,
                p + "'shape' has a dim that does not fit in 64 bits at "
                    "offset 69 near '99,)}           '");
  EXPECT_STATUS(readHeader("{'descr': [('a', '<f4')], 'fortran_order': "
                           "False, 'shape': ()}"),
                code,
                p + "structured dtypes ('descr' is a list) are not "
                    "supported");
  EXPECT_STATUS(
      readHeader("{'descr': '<f4', 'fortran_order': False, 'shape': ()} x"),
      code,
      p + "header has text after the dict at offset 54 near 'x     "
          "          '");
  EXPECT_STATUS(
      readHeader("{'descr': '<f4' 'fortran_order': False, 'shape': ()}"), code,
      p + "header dict is malformed at offset 16 near "
          "''fortran_order':'");
}

TEST_F(NpyTest, HeaderValueErrors) {
  Tensor t;
  EXPECT_STATUS(readHeader("{'descr': '<f4', 'fortran_order': False, "
                           "'shape': (4611686018427387904, 4), }"),
                StatusCode::InvalidFormat,
                prefix() + "has shape (4611686018427387904, 4) of dtype "
                           "'<f4' whose byte size overflows 64 bits");
  EXPECT_STATUS(
      readHeader("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }",
                 12),
      StatusCode::InvalidFormat,
      prefix() + "has 4 bytes after the 8 bytes of data for shape (2,) of "
                 "dtype '<f4'");
  EXPECT_STATUS(
      readHeader("{'descr': '=f4', 'fortran_order': False, 'shape': (2,), }",
                 8),
      StatusCode::Unsupported,
      prefix() + "has dtype '=f4' with byte order '='; lmopt reads '<' and "
                 "'|' only");
  EXPECT_STATUS(
      readHeader("{'descr': 'f', 'fortran_order': False, 'shape': (2,), }", 8),
      StatusCode::Unsupported,
      prefix() + "has dtype 'f', which is not a NumPy type string");
  std::vector<uint8_t> b =
      npyBytes("{'descr': '|b1', 'fortran_order': False, 'shape': (3,), }", 3);
  b[b.size() - 2] = 2;
  EXPECT_STATUS(readBytes(b, t), StatusCode::InvalidFormat,
                prefix() + "has bool element 1 with byte value 2; only 0 "
                           "and 1 are valid");
  b = npyBytes("{'descr': '<f4', 'fortran_order': False, 'shape': (), }", 4);
  b[20] = 0;
  EXPECT_STATUS(readBytes(b, t), StatusCode::InvalidFormat,
                prefix() + "has a NUL byte in its header");
  // Python 2 wrote long integers with an 'L' suffix; NumPy still reads them.
  ASSERT_TRUE(readBytes(npyBytes("{'descr': '<u2', 'fortran_order': False, "
                                 "'shape': (2L, 1L), }",
                                 4),
                        t));
  EXPECT_EQ(t.shape, (std::vector<int64_t>{2, 1}));
}

TEST_F(NpyTest, EveryTruncationFailsCleanly) {
  std::vector<uint8_t> good = test::readBytes(inputPath("f32.npy"));
  Tensor t;
  for (size_t cut = 0; cut < good.size(); ++cut)
    EXPECT_FALSE(readBytes({good.begin(), good.begin() + long(cut)}, t)) << cut;
}

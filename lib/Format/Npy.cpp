//===- Npy.cpp - NumPy .npy files -----------------------------------------===//
//
// The .npy format (NumPy NEP 1): a magic string, a version, a header length,
// and a header that is a Python dict literal with exactly the keys 'descr',
// 'fortran_order' and 'shape', followed by the raw array bytes. The header is
// parsed by a small strict grammar (no Python evaluation), and every size is
// computed with overflow checks before a byte of data is touched.
//
//===----------------------------------------------------------------------===//

#include "lmopt/Format/Npy.h"

#include "lmopt/Format/AtomicWrite.h"

#include "FileUtil.h"

#include <fmt/format.h>

#include <cstring>

using namespace lmopt::runtime;

namespace {
struct DTypeEntry {
  DType dtype;
  const char *name;
  size_t size;
  /// NumPy kind character ('f', 'i', 'u', 'b'), or 0 without a NumPy dtype.
  char kind;
};
} // namespace

static const DTypeEntry kDTypes[] = {
    {DType::F32, "f32", 4, 'f'},   {DType::F64, "f64", 8, 'f'},
    {DType::F16, "f16", 2, 'f'},   {DType::BF16, "bf16", 2, 0},
    {DType::I8, "i8", 1, 'i'},     {DType::U8, "u8", 1, 'u'},
    {DType::I16, "i16", 2, 'i'},   {DType::U16, "u16", 2, 'u'},
    {DType::I32, "i32", 4, 'i'},   {DType::U32, "u32", 4, 'u'},
    {DType::I64, "i64", 8, 'i'},   {DType::U64, "u64", 8, 'u'},
    {DType::Bool, "bool", 1, 'b'},
};

static const DTypeEntry *lookup(DType dtype) {
  for (const DTypeEntry &e : kDTypes)
    if (e.dtype == dtype)
      return &e;
  return nullptr;
}

size_t lmopt::runtime::dtypeSize(DType dtype) {
  const DTypeEntry *e = lookup(dtype);
  return e ? e->size : 0;
}

const char *lmopt::runtime::dtypeName(DType dtype) {
  const DTypeEntry *e = lookup(dtype);
  return e ? e->name : "invalid";
}

bool lmopt::runtime::isValidDType(int value) {
  return lookup(DType(value)) != nullptr;
}

uint64_t Tensor::elementCount() const {
  uint64_t n = 1;
  for (int64_t d : shape)
    n *= uint64_t(d);
  return n;
}

static std::string shapeString(const std::vector<int64_t> &shape) {
  // Python's tuple: "()", "(3,)", "(2, 3)".
  if (shape.size() == 1)
    return fmt::format("({},)", shape[0]);
  return fmt::format("({})", fmt::join(shape, ", "));
}

/// Product of `shape` times `itemSize`, or false on overflow.
static bool byteSize(const std::vector<int64_t> &shape, size_t itemSize,
                     uint64_t &out) {
  uint64_t n = itemSize;
  for (int64_t d : shape)
    if (d < 0 || __builtin_mul_overflow(n, uint64_t(d), &n))
      return false;
  out = n;
  return true;
}

Status lmopt::runtime::checkTensor(const Tensor &tensor,
                                   const std::string &what) {
  auto bad = [&](const std::string &msg) {
    return Status::error(StatusCode::InvalidArgument, what + " " + msg);
  };
  const DTypeEntry *e = lookup(tensor.dtype);
  if (!e)
    return bad("has invalid dtype " + std::to_string(int(tensor.dtype)));
  if (tensor.shape.size() > kMaxRank)
    return bad("has rank " + std::to_string(tensor.shape.size()) +
               "; at most " + std::to_string(kMaxRank) + " is supported");
  for (size_t i = 0; i < tensor.shape.size(); ++i)
    if (tensor.shape[i] < 0)
      return bad("has negative dim " + std::to_string(tensor.shape[i]) +
                 " at index " + std::to_string(i));
  uint64_t bytes;
  if (!byteSize(tensor.shape, e->size, bytes))
    return bad("has shape " + shapeString(tensor.shape) + " of dtype '" +
               e->name + "' whose byte size overflows 64 bits");
  if (bytes != tensor.data.size())
    return bad("has shape " + shapeString(tensor.shape) + " of dtype '" +
               e->name + "' (" + std::to_string(bytes) + " bytes) but " +
               std::to_string(tensor.data.size()) + " bytes of data");
  return Status::ok();
}

//===----------------------------------------------------------------------===//
// Header parsing
//===----------------------------------------------------------------------===//

namespace {
/// A strict parser for the header's dict literal.
class HeaderParser {
public:
  HeaderParser(const std::string &text) : text_(text) {}

  /// Parses the dict; on failure returns a message without the file name.
  bool parse(std::string &descr, bool &fortranOrder,
             std::vector<int64_t> &shape, std::string &error);

private:
  void skipSpace() {
    while (pos_ < text_.size() && (text_[pos_] == ' ' || text_[pos_] == '\t' ||
                                   text_[pos_] == '\n' || text_[pos_] == '\r'))
      ++pos_;
  }
  bool consume(char c) {
    skipSpace();
    if (pos_ < text_.size() && text_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }
  bool peek(char c) {
    skipSpace();
    return pos_ < text_.size() && text_[pos_] == c;
  }
  bool parseString(std::string &out);
  bool parseBool(bool &out);
  bool parseShape(std::vector<int64_t> &out, std::string &error);
  std::string near() const {
    std::string rest = text_.substr(pos_, 16);
    return "at offset " + std::to_string(pos_) + " near " + quote(rest);
  }

  const std::string &text_;
  size_t pos_ = 0;
};
} // namespace

bool HeaderParser::parseString(std::string &out) {
  skipSpace();
  if (pos_ >= text_.size() || (text_[pos_] != '\'' && text_[pos_] != '"'))
    return false;
  char q = text_[pos_];
  size_t end = text_.find(q, pos_ + 1);
  if (end == std::string::npos)
    return false;
  out = text_.substr(pos_ + 1, end - pos_ - 1);
  if (out.find('\\') != std::string::npos)
    return false;
  pos_ = end + 1;
  return true;
}

bool HeaderParser::parseBool(bool &out) {
  skipSpace();
  if (text_.compare(pos_, 4, "True") == 0) {
    out = true;
    pos_ += 4;
    return true;
  }
  if (text_.compare(pos_, 5, "False") == 0) {
    out = false;
    pos_ += 5;
    return true;
  }
  return false;
}

bool HeaderParser::parseShape(std::vector<int64_t> &out, std::string &error) {
  out.clear();
  if (!consume('(')) {
    error = "'shape' is not a tuple " + near();
    return false;
  }
  bool trailingComma = false;
  while (!consume(')')) {
    skipSpace();
    size_t start = pos_;
    uint64_t value = 0;
    while (pos_ < text_.size() && text_[pos_] >= '0' && text_[pos_] <= '9') {
      uint64_t digit = uint64_t(text_[pos_] - '0');
      if (value > (uint64_t(INT64_MAX) - digit) / 10) {
        error = "'shape' has a dim that does not fit in 64 bits " + near();
        return false;
      }
      value = value * 10 + digit;
      ++pos_;
    }
    if (pos_ == start) {
      error = "'shape' must hold non-negative integers; found " +
              quote(text_.substr(pos_, 16));
      return false;
    }
    if (pos_ < text_.size() && text_[pos_] == 'L') // written by Python 2
      ++pos_;
    if (out.size() == kMaxRank) {
      error = "'shape' has more than " + std::to_string(kMaxRank) + " dims";
      return false;
    }
    out.push_back(int64_t(value));
    trailingComma = consume(',');
    if (!trailingComma && !peek(')')) {
      error = "'shape' tuple is malformed " + near();
      return false;
    }
  }
  // "(3)" is the integer 3 in Python, not a tuple.
  if (out.size() == 1 && !trailingComma) {
    error = "'shape' is '(" + std::to_string(out[0]) +
            ")', an integer, not a tuple";
    return false;
  }
  return true;
}

bool HeaderParser::parse(std::string &descr, bool &fortranOrder,
                         std::vector<int64_t> &shape, std::string &error) {
  bool haveDescr = false, haveOrder = false, haveShape = false;
  if (!consume('{')) {
    error = "header is not a dict literal " + near();
    return false;
  }
  while (!consume('}')) {
    std::string key;
    if (!parseString(key)) {
      error = "header has a malformed key " + near();
      return false;
    }
    if (!consume(':')) {
      error = "header lacks ':' after key " + quote(key);
      return false;
    }
    bool *seen = key == "descr"           ? &haveDescr
                 : key == "fortran_order" ? &haveOrder
                 : key == "shape"         ? &haveShape
                                          : nullptr;
    if (!seen) {
      error = "header has unexpected key " + quote(key) +
              "; only 'descr', 'fortran_order' and 'shape' are allowed";
      return false;
    }
    if (*seen) {
      error = "header has key " + quote(key) + " twice";
      return false;
    }
    *seen = true;
    if (key == "descr") {
      if (peek('[')) {
        error = "structured dtypes ('descr' is a list) are not supported";
        return false;
      }
      if (!parseString(descr)) {
        error = "'descr' is not a string " + near();
        return false;
      }
    } else if (key == "fortran_order") {
      if (!parseBool(fortranOrder)) {
        error = "'fortran_order' is not True or False " + near();
        return false;
      }
    } else if (!parseShape(shape, error)) {
      return false;
    }
    if (!consume(',') && !peek('}')) {
      error = "header dict is malformed " + near();
      return false;
    }
  }
  skipSpace();
  if (pos_ != text_.size()) {
    error = "header has text after the dict " + near();
    return false;
  }
  if (!haveDescr || !haveOrder || !haveShape) {
    error = std::string("header lacks key '") +
            (!haveDescr   ? "descr"
             : !haveOrder ? "fortran_order"
                          : "shape") +
            "'";
    return false;
  }
  return true;
}

/// Maps a NumPy type string to a dtype.
static Status parseDescr(const std::string &descr, const std::string &what,
                         DType &out) {
  auto unsupported = [&](const std::string &why) {
    return Status::error(StatusCode::Unsupported,
                         what + " has dtype " + quote(descr) + why);
  };
  if (descr.size() < 3)
    return unsupported(", which is not a NumPy type string");
  char order = descr[0];
  char kind = descr[1];
  std::string digits = descr.substr(2);
  size_t size = 0;
  for (char c : digits) {
    if (c < '0' || c > '9' || size > 64)
      return unsupported(", which lmopt does not support; supported: f2, "
                         "f4, f8, i1-i8, u1-u8, b1");
    size = size * 10 + size_t(c - '0');
  }
  const DTypeEntry *entry = nullptr;
  for (const DTypeEntry &e : kDTypes)
    if (e.kind == kind && e.size == size)
      entry = &e;
  if (!entry)
    return unsupported(", which lmopt does not support; supported: f2, f4, "
                       "f8, i1-i8, u1-u8, b1");
  if (order == '>' && size > 1)
    return unsupported(", which is big-endian; lmopt reads little-endian "
                       "arrays only (convert with a.astype(a.dtype."
                       "newbyteorder('<')))");
  if (order != '<' && order != '|' && !(order == '>' && size == 1))
    return unsupported(" with byte order '" + std::string(1, order) +
                       "'; lmopt reads '<' and '|' only");
  out = entry->dtype;
  return Status::ok();
}

static uint32_t readLe(const uint8_t *p, int bytes) {
  uint32_t v = 0;
  for (int i = bytes - 1; i >= 0; --i)
    v = (v << 8) | p[i];
  return v;
}

static const uint8_t kNpyMagic[6] = {0x93, 'N', 'U', 'M', 'P', 'Y'};

Status lmopt::runtime::parseNpy(const uint8_t *data, size_t size,
                                const std::string &what, Tensor &out) {
  auto invalid = [&](const std::string &msg) {
    return Status::error(StatusCode::InvalidFormat, what + " " + msg);
  };
  if (size == 0)
    return invalid("is empty (0 bytes), not a .npy file");
  size_t magicBytes = size < 6 ? size : 6;
  if (std::memcmp(data, kNpyMagic, magicBytes) != 0)
    return invalid(
        "is not a .npy file: it starts with " +
        quote(std::string(reinterpret_cast<const char *>(data), magicBytes)) +
        ", not '\\x93NUMPY'");
  if (size < 10)
    return invalid("is truncated: " + std::to_string(size) +
                   " bytes, shorter than the .npy preamble");
  uint8_t major = data[6], minor = data[7];
  if (major < 1 || major > 3 || minor != 0)
    return Status::error(
        StatusCode::VersionMismatch,
        what + " has .npy format version " + std::to_string(major) + "." +
            std::to_string(minor) + "; lmopt reads 1.0, 2.0 and 3.0");
  size_t lenBytes = major == 1 ? 2 : 4;
  size_t headerStart = 8 + lenBytes;
  if (size < headerStart)
    return invalid("is truncated: " + std::to_string(size) +
                   " bytes, shorter than the .npy preamble");
  uint64_t headerLen = readLe(data + 8, int(lenBytes));
  if (headerLen > size - headerStart)
    return invalid("is truncated: its header needs " +
                   std::to_string(headerLen) + " bytes after offset " +
                   std::to_string(headerStart) + ", the file has " +
                   std::to_string(size));
  std::string header(reinterpret_cast<const char *>(data + headerStart),
                     size_t(headerLen));
  if (header.find('\0') != std::string::npos)
    return invalid("has a NUL byte in its header");

  std::string descr, error;
  bool fortranOrder = false;
  std::vector<int64_t> shape;
  if (!HeaderParser(header).parse(descr, fortranOrder, shape, error))
    return invalid("has a malformed header: " + error);
  DType dtype;
  if (Status st = parseDescr(descr, what, dtype); !st)
    return st;
  if (fortranOrder)
    return Status::error(StatusCode::Unsupported,
                         what + " holds a Fortran-order array (dtype " +
                             quote(descr) + ", shape " + shapeString(shape) +
                             "); lmopt reads C-order arrays only (save "
                             "np.ascontiguousarray(a))");
  uint64_t bytes;
  if (!byteSize(shape, dtypeSize(dtype), bytes))
    return invalid("has shape " + shapeString(shape) + " of dtype " +
                   quote(descr) + " whose byte size overflows 64 bits");
  uint64_t dataStart = headerStart + headerLen;
  uint64_t available = size - dataStart;
  if (available < bytes)
    return invalid("is truncated: shape " + shapeString(shape) + " of dtype " +
                   quote(descr) + " needs " + std::to_string(bytes) +
                   " bytes of data, the file has " + std::to_string(available));
  if (available > bytes)
    return invalid("has " + std::to_string(available - bytes) +
                   " bytes after the " + std::to_string(bytes) +
                   " bytes of data for shape " + shapeString(shape) +
                   " of dtype " + quote(descr));
  const uint8_t *payload = data + dataStart;
  if (dtype == DType::Bool)
    for (uint64_t i = 0; i < bytes; ++i)
      if (payload[i] > 1)
        return invalid("has bool element " + std::to_string(i) +
                       " with byte value " + std::to_string(payload[i]) +
                       "; only 0 and 1 are valid");
  out.dtype = dtype;
  out.shape = std::move(shape);
  out.data.assign(payload, payload + bytes);
  return Status::ok();
}

Status lmopt::runtime::readNpy(const std::string &path, Tensor &out) {
  MappedFile file;
  if (Status st = MappedFile::open(path, file); !st)
    return st;
  return parseNpy(file.data(), file.size(), quote(path), out);
}

//===----------------------------------------------------------------------===//
// Writing
//===----------------------------------------------------------------------===//

Status lmopt::runtime::serializeNpy(const Tensor &tensor,
                                    const std::string &what,
                                    std::vector<uint8_t> &out) {
  if (Status st = checkTensor(tensor, what); !st)
    return st;
  const DTypeEntry *e = lookup(tensor.dtype);
  if (!e->kind)
    return Status::error(StatusCode::Unsupported,
                         what + " has dtype '" + e->name +
                             "', which has no NumPy equivalent");
  std::string descr =
      std::string(e->size > 1 ? "<" : "|") + e->kind + std::to_string(e->size);
  // The same text np.save writes, padded so the data starts 64-aligned.
  std::string header =
      "{'descr': '" + descr +
      "', 'fortran_order': False, 'shape': " + shapeString(tensor.shape) +
      ", }";
  size_t preamble = 10;
  size_t total = preamble + header.size() + 1;
  if (total + (64 - total % 64) % 64 - preamble > 0xffff)
    preamble = 12;
  total = preamble + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header += '\n';

  out.clear();
  out.reserve(preamble + header.size() + tensor.data.size());
  out.insert(out.end(), kNpyMagic, kNpyMagic + 6);
  out.push_back(preamble == 10 ? 1 : 2);
  out.push_back(0);
  uint32_t len = uint32_t(header.size());
  for (size_t i = 0; i < preamble - 8; ++i)
    out.push_back(uint8_t(len >> (8 * i)));
  out.insert(out.end(), header.begin(), header.end());
  out.insert(out.end(), tensor.data.begin(), tensor.data.end());
  return Status::ok();
}

Status lmopt::runtime::writeNpy(const std::string &path, const Tensor &tensor) {
  std::vector<uint8_t> bytes;
  if (Status st = serializeNpy(tensor, "tensor for " + quote(path), bytes); !st)
    return st;
  return writeFileAtomically(
      path, std::string_view(reinterpret_cast<const char *>(bytes.data()),
                             bytes.size()));
}

//===- Npz.cpp - NumPy .npz archives --------------------------------------===//
//
// An .npz file is a ZIP archive of .npy members. The reader follows the
// central directory (with ZIP64 records, which NumPy writes for large
// archives), checks each local header against it, inflates deflate members
// with zlib and verifies every CRC-32. The writer stores members
// uncompressed, as np.savez does.
//
//===----------------------------------------------------------------------===//

#include "lmopt/Format/Npy.h"

#include "FileUtil.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <zlib.h>

using namespace lmopt::runtime;

static constexpr uint32_t kLocalSig = 0x04034b50;
static constexpr uint32_t kCentralSig = 0x02014b50;
static constexpr uint32_t kEndSig = 0x06054b50;
static constexpr uint32_t kZip64EndSig = 0x06064b50;
static constexpr uint32_t kZip64LocatorSig = 0x07064b50;
static constexpr size_t kLocalSize = 30;
static constexpr size_t kCentralSize = 46;
static constexpr size_t kEndSize = 22;
static constexpr size_t kZip64EndSize = 56;
static constexpr size_t kZip64LocatorSize = 20;
/// Deflate cannot expand data by more than about 1032:1; a member claiming
/// more is corrupt, and refusing it bounds what a hostile file can allocate.
static constexpr uint64_t kMaxDeflateRatio = 1032;

static uint16_t get16(const uint8_t *p) { return uint16_t(p[0] | p[1] << 8); }
static uint32_t get32(const uint8_t *p) {
  return uint32_t(p[0]) | uint32_t(p[1]) << 8 | uint32_t(p[2]) << 16 |
         uint32_t(p[3]) << 24;
}
static uint64_t get64(const uint8_t *p) {
  return uint64_t(get32(p)) | uint64_t(get32(p + 4)) << 32;
}
static void put16(std::vector<uint8_t> &v, uint16_t x) {
  v.push_back(uint8_t(x));
  v.push_back(uint8_t(x >> 8));
}
static void put32(std::vector<uint8_t> &v, uint32_t x) {
  put16(v, uint16_t(x));
  put16(v, uint16_t(x >> 16));
}

static uint32_t crc32Of(const uint8_t *data, uint64_t size) {
  uLong crc = crc32(0L, Z_NULL, 0);
  while (size > 0) {
    uInt chunk = size > (1u << 30) ? (1u << 30) : uInt(size);
    crc = crc32(crc, data, chunk);
    data += chunk;
    size -= chunk;
  }
  return uint32_t(crc);
}

namespace {
struct Member {
  std::string name;
  uint16_t method = 0;
  uint16_t flags = 0;
  uint32_t crc = 0;
  uint64_t compressedSize = 0;
  uint64_t size = 0;
  uint64_t localOffset = 0;
  uint64_t dataOffset = 0;
};

class ZipReader {
public:
  ZipReader(const uint8_t *data, uint64_t size, std::string what)
      : data_(data), size_(size), what_(std::move(what)) {}

  Status readDirectory(std::vector<Member> &members);
  Status extract(const Member &m, std::vector<uint8_t> &storage,
                 const uint8_t *&bytes);

private:
  Status invalid(const std::string &msg) const {
    return Status::error(StatusCode::InvalidFormat, what_ + " " + msg);
  }
  Status readZip64End(uint64_t endOffset, uint64_t &count, uint64_t &cdSize,
                      uint64_t &cdOffset);
  Status readZip64Extra(const uint8_t *extra, uint16_t extraLen, Member &m,
                        bool needSize, bool needCompressed, bool needOffset);

  const uint8_t *data_;
  uint64_t size_;
  std::string what_;
};
} // namespace

Status ZipReader::readZip64End(uint64_t endOffset, uint64_t &count,
                               uint64_t &cdSize, uint64_t &cdOffset) {
  if (endOffset < kZip64LocatorSize ||
      get32(data_ + endOffset - kZip64LocatorSize) != kZip64LocatorSig)
    return invalid("needs ZIP64 records but has no ZIP64 end locator");
  const uint8_t *loc = data_ + endOffset - kZip64LocatorSize;
  uint64_t recOffset = get64(loc + 8);
  if (get32(loc + 4) != 0 || get32(loc + 16) > 1)
    return Status::error(StatusCode::Unsupported,
                         what_ + " spans several disks");
  if (recOffset > size_ || size_ - recOffset < kZip64EndSize ||
      get32(data_ + recOffset) != kZip64EndSig)
    return invalid("has a ZIP64 end record locator pointing at offset " +
                   std::to_string(recOffset) + ", where there is none");
  const uint8_t *rec = data_ + recOffset;
  count = get64(rec + 32);
  cdSize = get64(rec + 40);
  cdOffset = get64(rec + 48);
  return Status::ok();
}

Status ZipReader::readZip64Extra(const uint8_t *extra, uint16_t extraLen,
                                 Member &m, bool needSize, bool needCompressed,
                                 bool needOffset) {
  size_t pos = 0;
  while (pos + 4 <= extraLen) {
    uint16_t id = get16(extra + pos), len = get16(extra + pos + 2);
    if (pos + 4 + len > extraLen)
      break;
    if (id == 0x0001) {
      // Only the fields saturated in the fixed record appear, in this order.
      const uint8_t *f = extra + pos + 4;
      size_t need = 8 * (size_t(needSize) + needCompressed + needOffset);
      if (len < need)
        return invalid("has member " + quote(m.name) +
                       " with a short ZIP64 extra field (" +
                       std::to_string(len) + " bytes)");
      if (needSize)
        m.size = get64(f), f += 8;
      if (needCompressed)
        m.compressedSize = get64(f), f += 8;
      if (needOffset)
        m.localOffset = get64(f);
      return Status::ok();
    }
    pos += 4 + size_t(len);
  }
  return invalid("has member " + quote(m.name) +
                 " that needs a ZIP64 extra field but has none");
}

Status ZipReader::readDirectory(std::vector<Member> &members) {
  members.clear();
  if (size_ == 0)
    return invalid("is empty (0 bytes), not a .npz archive");
  if (size_ < 4 || (get32(data_) != kLocalSig && get32(data_) != kEndSig))
    return invalid("is not a .npz (zip) archive: it does not start with a "
                   "zip local header");
  if (size_ < kEndSize)
    return invalid("is truncated: " + std::to_string(size_) +
                   " bytes, too short for a zip archive");
  // The end record sits in the last 22 + up to 65535 (comment) bytes.
  uint64_t endOffset = UINT64_MAX;
  uint64_t lowest = size_ - kEndSize > 0xffff ? size_ - kEndSize - 0xffff : 0;
  for (uint64_t off = size_ - kEndSize + 1; off-- > lowest;) {
    if (get32(data_ + off) == kEndSig &&
        off + kEndSize + get16(data_ + off + 20) == size_) {
      endOffset = off;
      break;
    }
  }
  if (endOffset == UINT64_MAX)
    return invalid("is truncated or corrupt: no zip end-of-central-directory "
                   "record");
  const uint8_t *end = data_ + endOffset;
  if (get16(end + 4) != 0 || get16(end + 6) != 0)
    return Status::error(StatusCode::Unsupported,
                         what_ + " spans several disks");
  uint64_t count = get16(end + 10);
  uint64_t cdSize = get32(end + 12);
  uint64_t cdOffset = get32(end + 16);
  if (count == 0xffff || cdSize == 0xffffffff || cdOffset == 0xffffffff)
    if (Status st = readZip64End(endOffset, count, cdSize, cdOffset); !st)
      return st;
  if (cdOffset > endOffset || cdSize > endOffset - cdOffset)
    return invalid("has its central directory at [" + std::to_string(cdOffset) +
                   ", +" + std::to_string(cdSize) +
                   "), past the end record at " + std::to_string(endOffset));
  // Each entry takes at least 46 bytes, which bounds the count.
  if (count > cdSize / kCentralSize)
    return invalid("declares " + std::to_string(count) +
                   " members in a central directory of " +
                   std::to_string(cdSize) + " bytes");

  uint64_t pos = cdOffset;
  const uint64_t cdEnd = cdOffset + cdSize;
  for (uint64_t i = 0; i < count; ++i) {
    if (cdEnd - pos < kCentralSize || get32(data_ + pos) != kCentralSig)
      return invalid("has a corrupt central directory entry " +
                     std::to_string(i) + " at offset " + std::to_string(pos));
    const uint8_t *e = data_ + pos;
    Member m;
    m.flags = get16(e + 8);
    m.method = get16(e + 10);
    m.crc = get32(e + 16);
    m.compressedSize = get32(e + 20);
    m.size = get32(e + 24);
    uint16_t nameLen = get16(e + 28), extraLen = get16(e + 30),
             commentLen = get16(e + 32);
    m.localOffset = get32(e + 42);
    uint64_t entrySize =
        kCentralSize + uint64_t(nameLen) + extraLen + commentLen;
    if (cdEnd - pos < entrySize)
      return invalid("has central directory entry " + std::to_string(i) +
                     " running past the directory's end");
    m.name.assign(reinterpret_cast<const char *>(e + kCentralSize), nameLen);
    bool needSize = m.size == 0xffffffff,
         needCompressed = m.compressedSize == 0xffffffff,
         needOffset = m.localOffset == 0xffffffff;
    if (needSize || needCompressed || needOffset)
      if (Status st = readZip64Extra(e + kCentralSize + nameLen, extraLen, m,
                                     needSize, needCompressed, needOffset);
          !st)
        return st;
    pos += entrySize;

    if (m.flags & 0x1)
      return Status::error(StatusCode::Unsupported,
                           what_ + " has encrypted member " + quote(m.name));
    if (m.method != 0 && m.method != 8)
      return Status::error(StatusCode::Unsupported,
                           what_ + " has member " + quote(m.name) +
                               " compressed with zip method " +
                               std::to_string(m.method) +
                               "; lmopt reads stored (0) and deflate (8)");
    // The local header repeats the name; its own extra field may differ.
    if (m.localOffset > cdOffset || cdOffset - m.localOffset < kLocalSize ||
        get32(data_ + m.localOffset) != kLocalSig)
      return invalid("has member " + quote(m.name) +
                     " whose local header at offset " +
                     std::to_string(m.localOffset) + " is missing");
    const uint8_t *local = data_ + m.localOffset;
    uint64_t dataOffset =
        m.localOffset + kLocalSize + get16(local + 26) + get16(local + 28);
    if (get16(local + 26) != nameLen ||
        (cdOffset - m.localOffset) < kLocalSize + uint64_t(nameLen) ||
        std::memcmp(local + kLocalSize, m.name.data(), nameLen) != 0)
      return invalid("has member " + quote(m.name) +
                     " whose local header names a different file");
    if (dataOffset > cdOffset || m.compressedSize > cdOffset - dataOffset)
      return invalid("has member " + quote(m.name) + " whose " +
                     std::to_string(m.compressedSize) +
                     " bytes of data at offset " + std::to_string(dataOffset) +
                     " run past the central directory at " +
                     std::to_string(cdOffset));
    m.dataOffset = dataOffset;
    members.push_back(std::move(m));
  }

  // Members may not share bytes (a known zip-bomb construction).
  std::vector<const Member *> order;
  for (const Member &m : members)
    order.push_back(&m);
  std::sort(order.begin(), order.end(), [](const Member *a, const Member *b) {
    return a->localOffset < b->localOffset;
  });
  for (size_t i = 1; i < order.size(); ++i)
    if (order[i - 1]->dataOffset + order[i - 1]->compressedSize >
        order[i]->localOffset)
      return invalid("has overlapping members " + quote(order[i - 1]->name) +
                     " and " + quote(order[i]->name));
  return Status::ok();
}

Status ZipReader::extract(const Member &m, std::vector<uint8_t> &storage,
                          const uint8_t *&bytes) {
  const uint8_t *src = data_ + m.dataOffset;
  const std::string member = "member " + quote(m.name);
  if (m.method == 0) {
    if (m.size != m.compressedSize)
      return invalid("has stored " + member + " with size " +
                     std::to_string(m.size) + " but " +
                     std::to_string(m.compressedSize) + " bytes stored");
    bytes = src;
  } else {
    if (m.size / kMaxDeflateRatio > m.compressedSize + 1)
      return invalid("has " + member + " claiming " + std::to_string(m.size) +
                     " bytes from " + std::to_string(m.compressedSize) +
                     " compressed bytes, beyond deflate's ratio");
    storage.resize(size_t(m.size));
    z_stream zs;
    std::memset(&zs, 0, sizeof(zs));
    if (inflateInit2(&zs, -MAX_WBITS) != Z_OK)
      return Status::error(StatusCode::IoError, "zlib inflateInit2 failed");
    uint64_t inLeft = m.compressedSize, outLeft = m.size;
    zs.next_in = const_cast<Bytef *>(src);
    zs.next_out = storage.data();
    int rc = Z_OK;
    while (rc == Z_OK) {
      uInt inChunk = inLeft > (1u << 30) ? (1u << 30) : uInt(inLeft);
      uInt outChunk = outLeft > (1u << 30) ? (1u << 30) : uInt(outLeft);
      zs.avail_in = inChunk;
      zs.avail_out = outChunk;
      rc = inflate(&zs, Z_NO_FLUSH);
      inLeft -= inChunk - zs.avail_in;
      outLeft -= outChunk - zs.avail_out;
      if (rc == Z_OK && zs.avail_in == inChunk && zs.avail_out == outChunk)
        rc = Z_BUF_ERROR; // no progress: input or output exhausted
    }
    std::string zmsg = zs.msg ? zs.msg : "";
    inflateEnd(&zs);
    if (rc != Z_STREAM_END)
      return invalid("has corrupt compressed " + member + ": " +
                     (rc == Z_BUF_ERROR
                          ? std::string("the deflate stream ends early or "
                                        "holds more than its declared " +
                                        std::to_string(m.size) + " bytes")
                          : "zlib error " + std::to_string(rc) +
                                (zmsg.empty() ? "" : " (" + zmsg + ")")));
    if (outLeft != 0)
      return invalid("has compressed " + member + " that inflates to " +
                     std::to_string(m.size - outLeft) + " bytes, not the " +
                     std::to_string(m.size) + " declared");
    bytes = storage.data();
  }
  uint32_t crc = crc32Of(bytes, m.size);
  if (crc != m.crc)
    return Status::error(
        StatusCode::ChecksumMismatch,
        fmt::format(
            "{} has corrupt {}: CRC-32 0x{:08x}, directory says 0x{:08x}",
            what_, member, crc, m.crc));
  return Status::ok();
}

Status lmopt::runtime::readNpz(const std::string &path,
                               std::vector<NamedTensor> &out) {
  out.clear();
  MappedFile file;
  if (Status st = MappedFile::open(path, file); !st)
    return st;
  const std::string what = quote(path);
  ZipReader zip(file.data(), file.size(), what);
  std::vector<Member> members;
  if (Status st = zip.readDirectory(members); !st)
    return st;
  std::vector<NamedTensor> tensors;
  for (const Member &m : members) {
    const std::string suffix = ".npy";
    if (m.name.size() <= suffix.size() ||
        m.name.compare(m.name.size() - suffix.size(), suffix.size(), suffix) !=
            0 ||
        m.name.find('\0') != std::string::npos)
      return Status::error(StatusCode::InvalidFormat,
                           what + " has member " + quote(m.name) +
                               ", which is not a named .npy file");
    std::string name = m.name.substr(0, m.name.size() - suffix.size());
    for (const NamedTensor &t : tensors)
      if (t.name == name)
        return Status::error(StatusCode::InvalidFormat,
                             what + " has two members named " + quote(m.name));
    std::vector<uint8_t> storage;
    const uint8_t *bytes = nullptr;
    if (Status st = zip.extract(m, storage, bytes); !st)
      return st;
    NamedTensor t;
    t.name = std::move(name);
    if (Status st =
            parseNpy(bytes, size_t(m.size),
                     "member " + quote(m.name) + " of " + what, t.tensor);
        !st)
      return st;
    tensors.push_back(std::move(t));
  }
  out = std::move(tensors);
  return Status::ok();
}

Status lmopt::runtime::writeNpz(const std::string &path,
                                const std::vector<NamedTensor> &tensors) {
  const std::string what = quote(path);
  if (tensors.size() >= 0xffff)
    return Status::error(StatusCode::Unsupported,
                         "cannot write " + what + ": " +
                             std::to_string(tensors.size()) +
                             " members need ZIP64, which the writer lacks");
  AtomicFile file;
  if (Status st = file.open(path); !st)
    return st;
  std::vector<uint8_t> central;
  for (size_t i = 0; i < tensors.size(); ++i) {
    const NamedTensor &t = tensors[i];
    if (t.name.empty() || t.name.find('\0') != std::string::npos ||
        t.name.size() > 0xff00)
      return Status::error(StatusCode::InvalidArgument,
                           "cannot write " + what + ": tensor " +
                               std::to_string(i) + " has an invalid name " +
                               quote(t.name));
    for (size_t j = 0; j < i; ++j)
      if (tensors[j].name == t.name)
        return Status::error(StatusCode::InvalidArgument,
                             "cannot write " + what + ": two tensors named " +
                                 quote(t.name));
    std::vector<uint8_t> npy;
    if (Status st = serializeNpy(t.tensor, "tensor " + quote(t.name), npy); !st)
      return st;
    const std::string name = t.name + ".npy";
    uint64_t offset = file.offset();
    if (offset > 0xfffffffe || npy.size() > 0xfffffffe)
      return Status::error(StatusCode::Unsupported,
                           "cannot write " + what + ": tensor " +
                               quote(t.name) +
                               " lies past 4 GiB and needs ZIP64, which the "
                               "writer lacks");
    uint32_t crc = crc32Of(npy.data(), npy.size());
    // Fixed timestamp (1980-01-01 00:00) keeps outputs reproducible.
    auto common = [&](std::vector<uint8_t> &v) {
      put16(v, 20); // version needed: 2.0
      put16(v, 0);  // flags
      put16(v, 0);  // method: stored
      put16(v, 0);  // time
      put16(v, 0x21);
      put32(v, crc);
      put32(v, uint32_t(npy.size()));
      put32(v, uint32_t(npy.size()));
      put16(v, uint16_t(name.size()));
      put16(v, 0); // extra length
    };
    std::vector<uint8_t> local;
    put32(local, kLocalSig);
    common(local);
    local.insert(local.end(), name.begin(), name.end());
    if (Status st = file.write(local.data(), local.size()); !st)
      return st;
    if (Status st = file.write(npy.data(), npy.size()); !st)
      return st;
    put32(central, kCentralSig);
    put16(central, 20);
    common(central);
    put16(central, 0); // comment length
    put16(central, 0); // disk
    put16(central, 0); // internal attributes
    put32(central, 0); // external attributes
    put32(central, uint32_t(offset));
    central.insert(central.end(), name.begin(), name.end());
  }
  uint64_t cdOffset = file.offset();
  if (cdOffset > 0xfffffffe || central.size() > 0xfffffffe)
    return Status::error(StatusCode::Unsupported,
                         "cannot write " + what +
                             ": the archive passes 4 GiB and needs ZIP64, "
                             "which the writer lacks");
  std::vector<uint8_t> end;
  put32(end, kEndSig);
  put16(end, 0);
  put16(end, 0);
  put16(end, uint16_t(tensors.size()));
  put16(end, uint16_t(tensors.size()));
  put32(end, uint32_t(central.size()));
  put32(end, uint32_t(cdOffset));
  put16(end, 0);
  if (Status st = file.write(central.data(), central.size()); !st)
    return st;
  if (Status st = file.write(end.data(), end.size()); !st)
    return st;
  return file.commit();
}

//===- Bundle.cpp - The .lmopt bundle container ---------------------------===//
//
// Layout and rules: docs/bundle-format.md. The reader trusts nothing in the
// file: every offset and size is checked with overflow-safe arithmetic before
// any byte it points at is read.
//
//===----------------------------------------------------------------------===//

#include "lmopt/Format/Bundle.h"
#include "lmopt/Format/Checksum.h"

#include "FileUtil.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>

using namespace lmopt::runtime;
namespace bf = lmopt::runtime::bundle_format;

// Field offsets inside the header and a section table entry.
static constexpr size_t kHdrVersionMajor = 8;
static constexpr size_t kHdrVersionMinor = 10;
static constexpr size_t kHdrHeaderSize = 12;
static constexpr size_t kHdrSectionCount = 16;
static constexpr size_t kHdrEntrySize = 20;
static constexpr size_t kHdrFileSize = 24;
static constexpr size_t kHdrTableOffset = 32;
static constexpr size_t kHdrTableChecksum = 40;
static constexpr size_t kHdrChecksum = 56;
static constexpr size_t kMaxHeaderSize = 4096;

static constexpr size_t kEntKind = 32;
static constexpr size_t kEntOffset = 40;
static constexpr size_t kEntSize = 48;
static constexpr size_t kEntAlignment = 56;
static constexpr size_t kEntChecksum = 64;
static constexpr size_t kEntNameBytes = 32;

static void put16(uint8_t *p, uint16_t v) {
  for (int i = 0; i < 2; ++i)
    p[i] = uint8_t(v >> (8 * i));
}
static void put32(uint8_t *p, uint32_t v) {
  for (int i = 0; i < 4; ++i)
    p[i] = uint8_t(v >> (8 * i));
}
static void put64(uint8_t *p, uint64_t v) {
  for (int i = 0; i < 8; ++i)
    p[i] = uint8_t(v >> (8 * i));
}
static uint16_t get16(const uint8_t *p) { return uint16_t(p[0] | p[1] << 8); }
static uint32_t get32(const uint8_t *p) {
  return uint32_t(p[0]) | uint32_t(p[1]) << 8 | uint32_t(p[2]) << 16 |
         uint32_t(p[3]) << 24;
}
static uint64_t get64(const uint8_t *p) {
  return uint64_t(get32(p)) | uint64_t(get32(p + 4)) << 32;
}

static std::string hex(uint64_t v) { return fmt::format("0x{:016x}", v); }

static std::string range(uint64_t begin, uint64_t size) {
  return fmt::format("[{}, {})", begin, begin + size);
}

static bool isPowerOfTwo(uint64_t v) { return v && !(v & (v - 1)); }

static uint64_t alignUp(uint64_t v, uint64_t alignment) {
  return (v + alignment - 1) & ~(alignment - 1);
}

/// Header checksum: XXH64 of the header bytes with the checksum field zeroed.
static uint64_t headerChecksum(const uint8_t *header, size_t size) {
  uint8_t copy[kMaxHeaderSize];
  std::memcpy(copy, header, size);
  std::memset(copy + kHdrChecksum, 0, 8);
  return xxh64(copy, size);
}

/// Section names: 1 to 31 printable ASCII characters other than space and
/// quotes, so that they print unambiguously in messages.
static bool isValidNameChar(char c) {
  return c > 0x20 && c < 0x7f && c != '\'' && c != '"' && c != '\\';
}

static Status checkName(const std::string &name) {
  if (name.empty())
    return Status::error(StatusCode::InvalidArgument, "empty section name");
  if (name.size() > bf::kMaxSectionNameLength)
    return Status::error(
        StatusCode::InvalidArgument,
        "section name " + quote(name) + " has " + std::to_string(name.size()) +
            " characters; at most " +
            std::to_string(bf::kMaxSectionNameLength) + " are allowed");
  for (char c : name)
    if (!isValidNameChar(c))
      return Status::error(StatusCode::InvalidArgument,
                           "section name " + quote(name) +
                               " has a character other than printable ASCII "
                               "without spaces or quotes");
  return Status::ok();
}

const char *lmopt::runtime::sectionKindName(SectionKind kind) {
  switch (kind) {
  case SectionKind::Plan:
    return "plan";
  case SectionKind::Weights:
    return "weights";
  case SectionKind::Kernels:
    return "kernels";
  case SectionKind::Meta:
    return "meta";
  case SectionKind::Requirements:
    return "requires";
  case SectionKind::OmittedWeights:
    return "omitted-weights";
  case SectionKind::SparseWeights:
    return "sparse-weights";
  case SectionKind::Unknown:
    break;
  }
  return "unknown";
}

//===----------------------------------------------------------------------===//
// BundleWriter
//===----------------------------------------------------------------------===//

Status BundleWriter::addSection(std::string name, SectionKind kind,
                                const void *data, uint64_t size,
                                uint64_t alignment) {
  if (Status st = checkName(name); !st)
    return st;
  for (const Pending &p : sections_)
    if (p.info.name == name)
      return Status::error(StatusCode::InvalidArgument,
                           "duplicate section name " + quote(name));
  if (!isPowerOfTwo(alignment) || alignment < bf::kMinAlignment ||
      alignment > bf::kMaxAlignment)
    return Status::error(StatusCode::InvalidArgument,
                         "section " + quote(name) + " asks for alignment " +
                             std::to_string(alignment) +
                             "; it must be a power of two in [64, 65536]");
  if (size > 0 && !data)
    return Status::error(StatusCode::InvalidArgument,
                         "section " + quote(name) + " has " +
                             std::to_string(size) + " bytes but no data");
  if (sections_.size() >= bf::kMaxSectionCount)
    return Status::error(StatusCode::InvalidArgument,
                         "a bundle holds at most " +
                             std::to_string(bf::kMaxSectionCount) +
                             " sections");
  Pending p;
  p.info.name = std::move(name);
  p.info.kind = kind;
  p.info.size = size;
  p.info.alignment = alignment;
  p.data = static_cast<const uint8_t *>(data);
  sections_.push_back(std::move(p));
  return Status::ok();
}

Status BundleWriter::addSection(std::string name, SectionKind kind,
                                std::vector<uint8_t> bytes,
                                uint64_t alignment) {
  auto owned = std::make_shared<std::vector<uint8_t>>(std::move(bytes));
  Status st = addSection(std::move(name), kind, owned->data(), owned->size(),
                         alignment);
  if (st)
    sections_.back().owned = std::move(owned);
  return st;
}

Status BundleWriter::write(const std::string &path) const {
  // Lay the sections out after the table, each at its alignment.
  const uint64_t tableSize = uint64_t(sections_.size()) * bf::kSectionEntrySize;
  std::vector<SectionInfo> infos;
  uint64_t cursor = bf::kHeaderSize + tableSize;
  for (const Pending &p : sections_) {
    SectionInfo info = p.info;
    info.offset = alignUp(cursor, info.alignment);
    info.checksum = xxh64(p.data, size_t(info.size));
    cursor = info.offset + info.size;
    infos.push_back(std::move(info));
  }
  const uint64_t fileSize = cursor;

  std::vector<uint8_t> table(size_t(tableSize), 0);
  for (size_t i = 0; i < infos.size(); ++i) {
    uint8_t *e = table.data() + i * bf::kSectionEntrySize;
    std::memcpy(e, infos[i].name.data(), infos[i].name.size());
    put32(e + kEntKind, uint32_t(infos[i].kind));
    put64(e + kEntOffset, infos[i].offset);
    put64(e + kEntSize, infos[i].size);
    put64(e + kEntAlignment, infos[i].alignment);
    put64(e + kEntChecksum, infos[i].checksum);
  }

  uint8_t header[bf::kHeaderSize] = {};
  std::memcpy(header, bf::kMagic, sizeof(bf::kMagic));
  put16(header + kHdrVersionMajor, bf::kVersionMajor);
  put16(header + kHdrVersionMinor, bf::kVersionMinor);
  put32(header + kHdrHeaderSize, bf::kHeaderSize);
  put32(header + kHdrSectionCount, uint32_t(infos.size()));
  put32(header + kHdrEntrySize, bf::kSectionEntrySize);
  put64(header + kHdrFileSize, fileSize);
  put64(header + kHdrTableOffset, bf::kHeaderSize);
  put64(header + kHdrTableChecksum, xxh64(table.data(), table.size()));
  put64(header + kHdrChecksum, headerChecksum(header, sizeof(header)));

  AtomicFile file;
  if (Status st = file.open(path); !st)
    return st;
  if (Status st = file.write(header, sizeof(header)); !st)
    return st;
  if (Status st = file.write(table.data(), table.size()); !st)
    return st;
  for (size_t i = 0; i < infos.size(); ++i) {
    if (Status st = file.writeZeros(size_t(infos[i].offset - file.offset()));
        !st)
      return st;
    if (Status st = file.write(sections_[i].data, size_t(infos[i].size)); !st)
      return st;
  }
  return file.commit();
}

//===----------------------------------------------------------------------===//
// BundleReader
//===----------------------------------------------------------------------===//

struct BundleReader::Impl {
  MappedFile file;
};

BundleReader::BundleReader() : impl_(std::make_unique<Impl>()) {}
BundleReader::~BundleReader() = default;

Status BundleReader::open(const std::string &path,
                          std::unique_ptr<BundleReader> &out) {
  return open(path, Options(), out);
}

Status BundleReader::open(const std::string &path, const Options &options,
                          std::unique_ptr<BundleReader> &out) {
  out.reset();
  std::unique_ptr<BundleReader> reader(new BundleReader());
  reader->path_ = path;
  if (Status st = MappedFile::open(path, reader->impl_->file); !st)
    return st;
  if (Status st = reader->validate(options); !st)
    return st;
  out = std::move(reader);
  return Status::ok();
}

Status BundleReader::validate(const Options &options) {
  const uint8_t *data = impl_->file.data();
  const uint64_t size = impl_->file.size();
  const std::string file = "bundle " + quote(path_);
  auto invalid = [&](const std::string &msg) {
    return Status::error(StatusCode::InvalidFormat, file + " " + msg);
  };

  // Magic and version sit at the same offsets in every format version, so
  // they are checked before anything whose layout a version could change.
  if (size == 0)
    return invalid("is empty (0 bytes)");
  size_t magicBytes = size < sizeof(bf::kMagic) ? size_t(size) : 8;
  if (std::memcmp(data, bf::kMagic, magicBytes) != 0)
    return invalid(
        "is not an lmopt bundle: it starts with " +
        quote(std::string(reinterpret_cast<const char *>(data), magicBytes)) +
        ", not 'LMOPTBND'");
  if (size < bf::kHeaderSize)
    return invalid("is truncated: " + std::to_string(size) +
                   " bytes, shorter than the 64-byte header");

  versionMajor_ = get16(data + kHdrVersionMajor);
  versionMinor_ = get16(data + kHdrVersionMinor);
  const std::string version =
      std::to_string(versionMajor_) + "." + std::to_string(versionMinor_);
  const std::string ours = std::to_string(bf::kVersionMajor) + "." +
                           std::to_string(bf::kVersionMinor);
  if (versionMajor_ > bf::kVersionMajor)
    return Status::error(StatusCode::VersionMismatch,
                         file + " has format version " + version +
                             ", newer than this runtime's " + ours +
                             "; use a runtime that reads version " +
                             std::to_string(versionMajor_) +
                             " or recompile the model");
  if (versionMajor_ < bf::kVersionMajor)
    return Status::error(StatusCode::VersionMismatch,
                         file + " has format version " + version +
                             ", which no lmopt release wrote; this runtime "
                             "reads version " +
                             ours);

  const uint32_t headerSize = get32(data + kHdrHeaderSize);
  if (headerSize < bf::kHeaderSize || headerSize > kMaxHeaderSize ||
      headerSize % 8 != 0)
    return invalid("declares a header size of " + std::to_string(headerSize) +
                   " bytes; it must be a multiple of 8 in [64, 4096]");
  if (headerSize > size)
    return invalid("is truncated: " + std::to_string(size) +
                   " bytes, shorter than its " + std::to_string(headerSize) +
                   "-byte header");
  const uint64_t storedHeaderSum = get64(data + kHdrChecksum);
  const uint64_t actualHeaderSum = headerChecksum(data, headerSize);
  if (storedHeaderSum != actualHeaderSum)
    return Status::error(StatusCode::ChecksumMismatch,
                         file + " has a corrupt header: checksum " +
                             hex(actualHeaderSum) + ", header says " +
                             hex(storedHeaderSum));

  fileSize_ = get64(data + kHdrFileSize);
  if (fileSize_ > size)
    return invalid("is truncated: the header says " +
                   std::to_string(fileSize_) + " bytes, the file has " +
                   std::to_string(size));
  if (fileSize_ < size)
    return invalid("has " + std::to_string(size - fileSize_) +
                   " bytes after the " + std::to_string(fileSize_) +
                   " that the header declares");

  const uint32_t count = get32(data + kHdrSectionCount);
  const uint32_t entrySize = get32(data + kHdrEntrySize);
  const uint64_t tableOffset = get64(data + kHdrTableOffset);
  if (count > bf::kMaxSectionCount)
    return invalid("declares " + std::to_string(count) + " sections; at most " +
                   std::to_string(bf::kMaxSectionCount) + " are allowed");
  if (entrySize < bf::kSectionEntrySize || entrySize > 4096 ||
      entrySize % 8 != 0)
    return invalid("declares a section entry size of " +
                   std::to_string(entrySize) +
                   " bytes; it must be a multiple of 8 in [80, 4096]");
  // count and entrySize are bounded above, so their product cannot overflow.
  const uint64_t tableSize = uint64_t(count) * entrySize;
  if (tableOffset < headerSize || tableOffset % 8 != 0 ||
      tableOffset > fileSize_ || tableSize > fileSize_ - tableOffset)
    return invalid("has its section table at " + range(tableOffset, tableSize) +
                   ", outside the bytes after the header [" +
                   std::to_string(headerSize) + ", " +
                   std::to_string(fileSize_) + ")");
  const uint8_t *table = data + tableOffset;
  const uint64_t storedTableSum = get64(data + kHdrTableChecksum);
  const uint64_t actualTableSum = xxh64(table, size_t(tableSize));
  if (storedTableSum != actualTableSum)
    return Status::error(StatusCode::ChecksumMismatch,
                         file + " has a corrupt section table: checksum " +
                             hex(actualTableSum) + ", header says " +
                             hex(storedTableSum));

  const uint64_t dataStart = tableOffset + tableSize;
  sections_.clear();
  sections_.reserve(count);
  for (uint32_t i = 0; i < count; ++i) {
    const uint8_t *e = table + uint64_t(i) * entrySize;
    const std::string where = "section " + std::to_string(i);
    const char *nameBytes = reinterpret_cast<const char *>(e);
    size_t nameLen = 0;
    while (nameLen < kEntNameBytes && nameBytes[nameLen])
      ++nameLen;
    SectionInfo info;
    info.name.assign(nameBytes, nameLen);
    if (nameLen == kEntNameBytes)
      return invalid("has a " + where +
                     " name without a terminating NUL: " + quote(info.name));
    if (Status st = checkName(info.name); !st)
      return invalid("has an invalid " + where + " name: " + st.message());
    for (const SectionInfo &prev : sections_)
      if (prev.name == info.name)
        return invalid("has two sections named " + quote(info.name));
    const std::string sec = "section " + quote(info.name);
    info.kind = SectionKind(get32(e + kEntKind));
    info.offset = get64(e + kEntOffset);
    info.size = get64(e + kEntSize);
    info.alignment = get64(e + kEntAlignment);
    info.checksum = get64(e + kEntChecksum);
    if (!isPowerOfTwo(info.alignment) || info.alignment < bf::kMinAlignment ||
        info.alignment > bf::kMaxAlignment)
      return invalid("has " + sec + " with alignment " +
                     std::to_string(info.alignment) +
                     "; it must be a power of two in [64, 65536]");
    if (info.offset % info.alignment != 0)
      return invalid("has " + sec + " at offset " +
                     std::to_string(info.offset) +
                     ", not a multiple of its alignment " +
                     std::to_string(info.alignment));
    if (info.offset < dataStart || info.offset > fileSize_ ||
        info.size > fileSize_ - info.offset)
      return invalid("has " + sec + " at " +
                     (info.size > UINT64_MAX - info.offset
                          ? "offset " + std::to_string(info.offset) +
                                " with size " + std::to_string(info.size)
                          : range(info.offset, info.size)) +
                     ", outside the data area [" + std::to_string(dataStart) +
                     ", " + std::to_string(fileSize_) + ")");
    sections_.push_back(std::move(info));
  }

  // Sorted by offset, each non-empty section must end before the next starts.
  std::vector<const SectionInfo *> order;
  for (const SectionInfo &s : sections_)
    if (s.size > 0)
      order.push_back(&s);
  std::stable_sort(order.begin(), order.end(),
                   [](const SectionInfo *a, const SectionInfo *b) {
                     return a->offset < b->offset;
                   });
  for (size_t i = 1; i < order.size(); ++i) {
    const SectionInfo &a = *order[i - 1], &b = *order[i];
    if (a.offset + a.size > b.offset)
      return invalid("has overlapping sections " + quote(a.name) + " " +
                     range(a.offset, a.size) + " and " + quote(b.name) + " " +
                     range(b.offset, b.size));
  }

  // Every byte outside the checksummed header, table and sections must be
  // zero, so that any corruption of the file is detected.
  auto checkZero = [&](uint64_t begin, uint64_t end) -> Status {
    for (uint64_t i = begin; i < end; ++i)
      if (data[i] != 0)
        return invalid("has non-zero padding byte " + std::to_string(data[i]) +
                       " at offset " + std::to_string(i));
    return Status::ok();
  };
  if (Status st = checkZero(headerSize, tableOffset); !st)
    return st;
  uint64_t cursor = dataStart;
  for (const SectionInfo *s : order) {
    if (Status st = checkZero(cursor, s->offset); !st)
      return st;
    cursor = s->offset + s->size;
  }
  if (Status st = checkZero(cursor, fileSize_); !st)
    return st;

  verified_ = std::make_unique<std::atomic<uint8_t>[]>(sections_.size());
  for (size_t i = 0; i < sections_.size(); ++i) {
    verified_[i].store(0);
    if (!options.verifyAll && sections_[i].size > bf::kEagerVerifyLimit)
      continue;
    if (Status st = verifySection(i); !st)
      return st;
  }
  return Status::ok();
}

Status BundleReader::verifySection(size_t index) const {
  if (verified_[index].load(std::memory_order_acquire))
    return Status::ok();
  const SectionInfo &info = sections_[index];
  uint64_t actual = xxh64(impl_->file.data() + info.offset, size_t(info.size));
  if (actual != info.checksum)
    return Status::error(
        StatusCode::ChecksumMismatch,
        "bundle " + quote(path_) + " has corrupt section " + quote(info.name) +
            " " + range(info.offset, info.size) + ": checksum " + hex(actual) +
            ", table says " + hex(info.checksum));
  verified_[index].store(1, std::memory_order_release);
  return Status::ok();
}

long BundleReader::findSection(std::string_view name) const {
  for (size_t i = 0; i < sections_.size(); ++i)
    if (sections_[i].name == name)
      return long(i);
  return -1;
}

Status BundleReader::section(size_t index, SectionView &out) const {
  out = SectionView();
  if (index >= sections_.size())
    return Status::error(StatusCode::InvalidArgument,
                         "section index " + std::to_string(index) +
                             " is out of range; bundle " + quote(path_) +
                             " has " + std::to_string(sections_.size()) +
                             " sections");
  if (Status st = verifySection(index); !st)
    return st;
  const SectionInfo &info = sections_[index];
  out.info = &info;
  out.data = impl_->file.data() + info.offset;
  out.size = info.size;
  return Status::ok();
}

Status BundleReader::section(std::string_view name, SectionView &out) const {
  long index = findSection(name);
  if (index < 0) {
    out = SectionView();
    return Status::error(StatusCode::NotFound, "bundle " + quote(path_) +
                                                   " has no section " +
                                                   quote(std::string(name)));
  }
  return section(size_t(index), out);
}

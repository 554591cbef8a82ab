//===- TokenDataset.cpp - Pre-tokenized datasets on disk ------------------===//
//
// .idx layout after the 64-byte header: offsets (uint64 per example, in
// ids), labels (int64 per example, when flagged), sources (uint64 per
// example, when flagged), lengths (uint32 per example). .bin: the ids, then
// one uint8 type id per id when flagged. Every size is checked against the
// header before anything is read, so no byte of either file can make the
// reader read out of bounds, and no id read back is negative.
//
//===----------------------------------------------------------------------===//

#include "lmopt/Format/TokenDataset.h"

#include "FileUtil.h"

#include "lmopt/Format/Checksum.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>

using namespace lmopt::runtime;

static std::string stripSuffix(const std::string &prefix) {
  if (isTokenDatasetPath(prefix))
    return prefix.substr(0, prefix.size() - 4);
  return prefix;
}

bool lmopt::runtime::isTokenDatasetPath(const std::string &path) {
  auto endsWith = [&](const char *suffix) {
    return path.size() >= 4 && path.compare(path.size() - 4, 4, suffix) == 0;
  };
  return endsWith(".bin") || endsWith(".idx");
}

std::string lmopt::runtime::tokenDatasetBinPath(const std::string &prefix) {
  return stripSuffix(prefix) + ".bin";
}

std::string lmopt::runtime::tokenDatasetIdxPath(const std::string &prefix) {
  return stripSuffix(prefix) + ".idx";
}

uint64_t lmopt::runtime::tokenizerHash(const void *data, size_t size) {
  return xxh64(data, size, 0);
}

Status lmopt::runtime::hashTokenizerFile(const std::string &path,
                                         uint64_t &hash) {
  MappedFile file;
  if (Status st = MappedFile::open(path, file); !st)
    return st;
  hash = tokenizerHash(file.data(), file.size());
  return Status::ok();
}

static Status invalid(const std::string &message) {
  return Status::error(StatusCode::InvalidFormat, message);
}

static std::string hex(uint64_t value) {
  return fmt::format("0x{:016x}", value);
}

template <typename T> static T get(const uint8_t *p) {
  T value;
  std::memcpy(&value, p, sizeof(T));
  return value;
}

/// Appends `value`'s bytes to `out` (little-endian hosts only, as the
/// runtime).
template <typename T> static void put(std::vector<uint8_t> &out, T value) {
  const auto *p = reinterpret_cast<const uint8_t *>(&value);
  out.insert(out.end(), p, p + sizeof(T));
}

Status lmopt::runtime::writeTokenDataset(const std::string &prefix,
                                         uint64_t tokenizerHash,
                                         int64_t vocabSize,
                                         const TokenDatasetContents &c) {
  const size_t n = c.ids.size();
  if (vocabSize < 0 || uint64_t(vocabSize) > kTokenDatasetMaxVocab)
    return Status::error(StatusCode::Unsupported,
                         "a token dataset stores ids below 2^31; the "
                         "vocabulary has " +
                             std::to_string(vocabSize) + " ids");
  // Callers hold the invariants below; they are programmer errors.
  if ((!c.typeIds.empty() && c.typeIds.size() != n) ||
      (!c.labels.empty() && c.labels.size() != n) ||
      (!c.sources.empty() && c.sources.size() != n))
    return Status::error(StatusCode::InvalidArgument,
                         "type ids, labels and sources need one entry per "
                         "example");
  uint64_t tokens = 0;
  int32_t maxId = 0;
  for (size_t i = 0; i < n; ++i) {
    const std::vector<int32_t> &ids = c.ids[i];
    if (ids.size() > UINT32_MAX)
      return Status::error(StatusCode::Unsupported,
                           "example " + std::to_string(i) +
                               " has more than 2^32 ids");
    if (!c.typeIds.empty() && c.typeIds[i].size() != ids.size())
      return Status::error(StatusCode::InvalidArgument,
                           "example " + std::to_string(i) +
                               ": type ids and ids differ in length");
    tokens += ids.size();
    for (int32_t id : ids) {
      if (id < 0)
        return Status::error(StatusCode::InvalidArgument,
                             "example " + std::to_string(i) +
                                 " has the negative id " + std::to_string(id));
      maxId = std::max(maxId, id);
    }
  }
  // uint16 when every id fits (the post-processor's ids may lie outside
  // the vocabulary).
  TokenDType dtype =
      vocabSize <= 65536 && maxId < 65536 ? TokenDType::U16 : TokenDType::U32;

  AtomicFile bin, idx;
  std::string binPath = tokenDatasetBinPath(prefix);
  std::string idxPath = tokenDatasetIdxPath(prefix);
  if (Status st = bin.open(binPath); !st)
    return st;
  std::vector<uint8_t> buffer;
  for (const std::vector<int32_t> &ids : c.ids) {
    buffer.clear();
    for (int32_t id : ids) {
      if (dtype == TokenDType::U16)
        put<uint16_t>(buffer, uint16_t(id));
      else
        put<uint32_t>(buffer, uint32_t(id));
    }
    if (Status st = bin.write(buffer.data(), buffer.size()); !st)
      return st;
  }
  for (const std::vector<uint8_t> &types : c.typeIds)
    if (Status st = bin.write(types.data(), types.size()); !st)
      return st;

  TokenDatasetHeader h{};
  std::memcpy(h.magic, kTokenDatasetMagic, sizeof(h.magic));
  h.version = kTokenDatasetVersion;
  h.dtype = uint32_t(dtype);
  h.tokenizerHash = tokenizerHash;
  h.count = n;
  h.tokens = tokens;
  h.flags = (c.labels.empty() ? 0 : kTokenDatasetHasLabels) |
            (c.typeIds.empty() ? 0 : kTokenDatasetHasTypeIds) |
            (c.sources.empty() ? 0 : kTokenDatasetHasSources);
  h.vocabSize = uint64_t(vocabSize);
  buffer.clear();
  const auto *headerBytes = reinterpret_cast<const uint8_t *>(&h);
  buffer.insert(buffer.end(), headerBytes, headerBytes + sizeof(h));
  uint64_t offset = 0;
  for (const std::vector<int32_t> &ids : c.ids) {
    put<uint64_t>(buffer, offset);
    offset += ids.size();
  }
  for (int64_t label : c.labels)
    put<int64_t>(buffer, label);
  for (uint64_t source : c.sources)
    put<uint64_t>(buffer, source);
  for (const std::vector<int32_t> &ids : c.ids)
    put<uint32_t>(buffer, uint32_t(ids.size()));
  if (Status st = idx.open(idxPath); !st)
    return st;
  if (Status st = idx.write(buffer.data(), buffer.size()); !st)
    return st;
  // Both on disk before either replaces an older dataset, so that a full
  // disk leaves the old pair whole (and no temporary file).
  if (Status st = bin.flush(); !st)
    return st;
  if (Status st = idx.flush(); !st)
    return st;
  if (Status st = bin.commit(); !st)
    return st;
  return idx.commit();
}

struct TokenDatasetReader::Files {
  MappedFile idx, bin;
};

TokenDatasetReader::TokenDatasetReader() : files(new Files) {}
TokenDatasetReader::~TokenDatasetReader() = default;

Status TokenDatasetReader::open(const std::string &prefix,
                                std::optional<uint64_t> expectedHash,
                                std::unique_ptr<TokenDatasetReader> &out) {
  out.reset();
  std::unique_ptr<TokenDatasetReader> reader(new TokenDatasetReader());
  std::string &idxPath = reader->idxPath;
  idxPath = tokenDatasetIdxPath(prefix);
  std::string binPath = tokenDatasetBinPath(prefix);
  if (Status st = MappedFile::open(idxPath, reader->files->idx); !st)
    return st;
  const uint8_t *data = reader->files->idx.data();
  uint64_t size = reader->files->idx.size();
  TokenDatasetHeader &h = reader->header;
  if (size < sizeof(h))
    return invalid(idxPath + ": truncated: " + std::to_string(size) +
                   " bytes, shorter than the 64-byte header");
  std::memcpy(&h, data, sizeof(h));
  if (std::memcmp(h.magic, kTokenDatasetMagic, sizeof(h.magic)) != 0)
    return invalid(idxPath + ": not an lmopt token dataset index (bad magic)");
  if (h.version != kTokenDatasetVersion)
    return Status::error(
        StatusCode::VersionMismatch,
        idxPath + ": unsupported version " + std::to_string(h.version) +
            " (this build reads version " +
            std::to_string(kTokenDatasetVersion) +
            "; tokenize the text again with this build's lmopt-tokenize)");
  if (h.dtype != uint32_t(TokenDType::U16) &&
      h.dtype != uint32_t(TokenDType::U32))
    return invalid(idxPath + ": unknown dtype " + std::to_string(h.dtype));
  if (h.flags & ~kTokenDatasetKnownFlags)
    return invalid(idxPath + ": unknown flags " + std::to_string(h.flags));
  if (h.vocabSize > kTokenDatasetMaxVocab)
    return invalid(idxPath + ": vocabulary of " + std::to_string(h.vocabSize) +
                   " ids; datasets hold ids below 2^31");
  if (expectedHash && h.tokenizerHash != *expectedHash)
    return invalid(idxPath + ": written by another tokenizer (hash " +
                   hex(h.tokenizerHash) + ", this tokenizer's is " +
                   hex(*expectedHash) + ")");
  // Per example: offset and length, a label and a source when present.
  uint64_t perExample =
      8 + 4 + (reader->hasLabels() ? 8 : 0) + (reader->hasSources() ? 8 : 0);
  uint64_t body = size - sizeof(h);
  if (h.count > body / perExample || h.count * perExample != body)
    return invalid(idxPath + ": " + std::to_string(size) +
                   " bytes do not hold " + std::to_string(h.count) +
                   " examples (truncated or corrupt)");
  const uint8_t *p = data + sizeof(h);
  reader->offsets = p;
  p += 8 * h.count;
  if (reader->hasLabels()) {
    reader->labels = p;
    p += 8 * h.count;
  }
  if (reader->hasSources()) {
    reader->sources = p;
    p += 8 * h.count;
  }
  reader->lengths = p;

  if (Status st = MappedFile::open(binPath, reader->files->bin); !st)
    return st;
  uint64_t elem = h.dtype == uint32_t(TokenDType::U16) ? 2 : 4;
  uint64_t perId = elem + (reader->hasTypeIds() ? 1 : 0);
  uint64_t binSize = reader->files->bin.size();
  if (h.tokens > binSize / perId || h.tokens * perId != binSize)
    return invalid(binPath + ": " + std::to_string(binSize) +
                   " bytes, expected " + std::to_string(h.tokens) + " ids of " +
                   std::to_string(elem) + " bytes" +
                   (reader->hasTypeIds() ? " and their type ids" : "") +
                   " (truncated or corrupt)");
  reader->ids = reader->files->bin.data();
  if (reader->hasTypeIds())
    reader->types = reader->ids + elem * h.tokens;
  uint64_t expected = 0;
  for (uint64_t i = 0; i < h.count; ++i) {
    uint64_t offset = get<uint64_t>(reader->offsets + 8 * i);
    if (offset != expected)
      return invalid(idxPath + ": example " + std::to_string(i) +
                     " starts at id " + std::to_string(offset) + ", expected " +
                     std::to_string(expected));
    expected += reader->length(i);
    if (expected > h.tokens)
      return invalid(idxPath + ": example " + std::to_string(i) +
                     " ends past the " + std::to_string(h.tokens) +
                     " ids of the dataset");
  }
  if (expected != h.tokens)
    return invalid(idxPath + ": the examples hold " + std::to_string(expected) +
                   " ids, the header says " + std::to_string(h.tokens));
  // Sources are a permutation of the input positions (readers place
  // outputs by them).
  if (reader->hasSources()) {
    std::vector<bool> seen(h.count);
    for (uint64_t i = 0; i < h.count; ++i) {
      uint64_t source = get<uint64_t>(reader->sources + 8 * i);
      if (source >= h.count || seen[source])
        return invalid(idxPath + ": example " + std::to_string(i) +
                       " has the input position " + std::to_string(source) +
                       ", " +
                       (source >= h.count ? "past the examples"
                                          : "another example's too"));
      seen[source] = true;
    }
  }
  // uint32 ids at or above 2^31 would read back negative.
  if (h.dtype == uint32_t(TokenDType::U32))
    for (uint64_t k = 0; k < h.tokens; ++k)
      if (uint32_t id = get<uint32_t>(reader->ids + 4 * k);
          id > uint32_t(INT32_MAX))
        return invalid(binPath + ": id " + std::to_string(k) + " is " +
                       std::to_string(id) + "; datasets hold ids below 2^31");
  out = std::move(reader);
  return Status::ok();
}

uint32_t TokenDatasetReader::length(uint64_t i) const {
  return get<uint32_t>(lengths + 4 * i);
}

int64_t TokenDatasetReader::label(uint64_t i) const {
  return labels ? get<int64_t>(labels + 8 * i) : 0;
}

uint64_t TokenDatasetReader::source(uint64_t i) const {
  return sources ? get<uint64_t>(sources + 8 * i) : i;
}

void TokenDatasetReader::example(uint64_t i, std::vector<int32_t> &out) const {
  uint64_t offset = get<uint64_t>(offsets + 8 * i);
  uint32_t n = length(i);
  out.resize(n);
  if (dtype() == TokenDType::U16) {
    for (uint32_t k = 0; k < n; ++k)
      out[k] = get<uint16_t>(ids + 2 * (offset + k));
  } else {
    std::memcpy(out.data(), ids + 4 * offset, size_t(n) * 4);
  }
}

void TokenDatasetReader::typeIds(uint64_t i, std::vector<uint8_t> &out) const {
  uint32_t n = length(i);
  if (!types) {
    out.assign(n, 0);
    return;
  }
  const uint8_t *begin = types + get<uint64_t>(offsets + 8 * i);
  out.assign(begin, begin + n);
}

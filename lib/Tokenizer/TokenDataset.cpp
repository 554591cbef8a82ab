//===- TokenDataset.cpp - Pre-tokenized datasets on disk ------------------===//
//
// .idx layout after the 64-byte header: offsets (uint64 per example, in
// ids), labels (int64 per example, when the header's flag says so), lengths
// (uint32 per example). Every size is checked against the header before
// anything is read, so no byte of either file can make the reader read out
// of bounds.
//
//===----------------------------------------------------------------------===//

#include "lmopt/Tokenizer/TokenDataset.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cstring>

using namespace lmopt::tokenizer;
using llvm::Error;
using llvm::Expected;
using llvm::StringRef;

static StringRef stripSuffix(StringRef prefix) {
  if (prefix.ends_with(".bin") || prefix.ends_with(".idx"))
    return prefix.drop_back(4);
  return prefix;
}

std::string lmopt::tokenizer::tokenDatasetBinPath(StringRef prefix) {
  return (stripSuffix(prefix) + ".bin").str();
}

std::string lmopt::tokenizer::tokenDatasetIdxPath(StringRef prefix) {
  return (stripSuffix(prefix) + ".idx").str();
}

static Error error(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

template <typename T> static void put(llvm::raw_ostream &os, T value) {
  os.write(reinterpret_cast<const char *>(&value), sizeof(T));
}

template <typename T> static T get(const char *p) {
  T value;
  std::memcpy(&value, p, sizeof(T));
  return value;
}

/// Writes `path` through a temporary file renamed over it.
static Error
writeAtomically(const std::string &path,
                llvm::function_ref<void(llvm::raw_ostream &)> body) {
  std::string tmp = path + ".tmp";
  {
    std::error_code ec;
    llvm::raw_fd_ostream os(tmp, ec);
    if (ec)
      return error("cannot write '" + tmp + "': " + ec.message());
    body(os);
    os.close();
    if (os.has_error())
      return error("cannot write '" + tmp + "': " + os.error().message());
  }
  if (std::error_code ec = llvm::sys::fs::rename(tmp, path))
    return error("cannot rename '" + tmp + "' to '" + path +
                 "': " + ec.message());
  return Error::success();
}

Error lmopt::tokenizer::writeTokenDataset(
    StringRef prefix, uint64_t tokenizerHash, int64_t vocabSize,
    const std::vector<std::vector<int32_t>> &examples,
    llvm::ArrayRef<int64_t> labels) {
  assert((labels.empty() || labels.size() == examples.size()) &&
         "one label per example");
  // uint16 when every id fits (the post-processor's ids may lie outside
  // the vocabulary).
  uint64_t tokens = 0;
  int32_t maxId = 0;
  for (const auto &ids : examples) {
    if (ids.size() > UINT32_MAX)
      return error("an example has more than 2^32 ids");
    tokens += ids.size();
    for (int32_t id : ids)
      maxId = std::max(maxId, id);
  }
  TokenDType dtype =
      vocabSize <= 65536 && maxId < 65536 ? TokenDType::U16 : TokenDType::U32;
  Error binError =
      writeAtomically(tokenDatasetBinPath(prefix), [&](llvm::raw_ostream &os) {
        std::vector<char> buffer;
        for (const auto &ids : examples) {
          if (dtype == TokenDType::U16) {
            buffer.resize(ids.size() * 2);
            for (size_t i = 0; i < ids.size(); ++i) {
              uint16_t v = uint16_t(ids[i]);
              std::memcpy(buffer.data() + 2 * i, &v, 2);
            }
            os.write(buffer.data(), buffer.size());
          } else {
            os.write(reinterpret_cast<const char *>(ids.data()),
                     ids.size() * 4);
          }
        }
      });
  if (binError)
    return binError;
  return writeAtomically(
      tokenDatasetIdxPath(prefix), [&](llvm::raw_ostream &os) {
        TokenDatasetHeader h{};
        std::memcpy(h.magic, kTokenDatasetMagic, sizeof(h.magic));
        h.version = kTokenDatasetVersion;
        h.dtype = uint32_t(dtype);
        h.tokenizerHash = tokenizerHash;
        h.count = examples.size();
        h.tokens = tokens;
        h.flags = labels.empty() ? 0 : kTokenDatasetHasLabels;
        h.vocabSize = uint64_t(vocabSize);
        os.write(reinterpret_cast<const char *>(&h), sizeof(h));
        uint64_t offset = 0;
        for (const auto &ids : examples) {
          put<uint64_t>(os, offset);
          offset += ids.size();
        }
        for (int64_t label : labels)
          put<int64_t>(os, label);
        for (const auto &ids : examples)
          put<uint32_t>(os, uint32_t(ids.size()));
      });
}

static Expected<std::unique_ptr<llvm::MemoryBuffer>>
mapFile(const std::string &path) {
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> buffer =
      llvm::MemoryBuffer::getFile(path, /*IsText=*/false,
                                  /*RequiresNullTerminator=*/false);
  if (!buffer)
    return error("cannot read '" + path + "': " + buffer.getError().message());
  return std::move(*buffer);
}

Expected<std::unique_ptr<TokenDatasetReader>>
TokenDatasetReader::open(StringRef prefix,
                         std::optional<uint64_t> expectedHash) {
  auto reader = std::unique_ptr<TokenDatasetReader>(new TokenDatasetReader());
  std::string idxPath = tokenDatasetIdxPath(prefix);
  std::string binPath = tokenDatasetBinPath(prefix);
  Expected<std::unique_ptr<llvm::MemoryBuffer>> idx = mapFile(idxPath);
  if (!idx)
    return idx.takeError();
  reader->idx = std::move(*idx);
  StringRef data = reader->idx->getBuffer();
  TokenDatasetHeader &h = reader->header;
  if (data.size() < sizeof(h))
    return error(idxPath + ": truncated: " + llvm::Twine(data.size()) +
                 " bytes, shorter than the 64-byte header");
  std::memcpy(&h, data.data(), sizeof(h));
  if (std::memcmp(h.magic, kTokenDatasetMagic, sizeof(h.magic)) != 0)
    return error(idxPath + ": not an lmopt token dataset index (bad magic)");
  if (h.version != kTokenDatasetVersion)
    return error(idxPath + ": unsupported version " + llvm::Twine(h.version) +
                 " (this build reads version " +
                 llvm::Twine(kTokenDatasetVersion) + ")");
  if (h.dtype != uint32_t(TokenDType::U16) &&
      h.dtype != uint32_t(TokenDType::U32))
    return error(idxPath + ": unknown dtype " + llvm::Twine(h.dtype));
  if (h.flags & ~kTokenDatasetHasLabels)
    return error(idxPath + ": unknown flags " + llvm::Twine(h.flags));
  if (expectedHash && h.tokenizerHash != *expectedHash)
    return error(llvm::formatv("{0}: written by another tokenizer (hash "
                               "{1:x16}, this tokenizer's is {2:x16})",
                               idxPath, h.tokenizerHash, *expectedHash)
                     .str());
  // Per example: offset and length, and a label when present.
  uint64_t perExample = 8 + 4 + (reader->hasLabels() ? 8 : 0);
  uint64_t body = data.size() - sizeof(h);
  if (h.count > body / perExample ||
      sizeof(h) + h.count * perExample != data.size())
    return error(idxPath + ": " + llvm::Twine(data.size()) +
                 " bytes do not hold " + llvm::Twine(h.count) +
                 " examples (truncated or corrupt)");
  reader->offsets = data.data() + sizeof(h);
  reader->labels =
      reader->hasLabels() ? reader->offsets + 8 * h.count : nullptr;
  reader->lengths =
      reader->offsets + 8 * h.count + (reader->hasLabels() ? 8 * h.count : 0);

  Expected<std::unique_ptr<llvm::MemoryBuffer>> bin = mapFile(binPath);
  if (!bin)
    return bin.takeError();
  reader->bin = std::move(*bin);
  uint64_t elem = h.dtype == uint32_t(TokenDType::U16) ? 2 : 4;
  uint64_t binSize = reader->bin->getBufferSize();
  if (h.tokens > binSize / elem || h.tokens * elem != binSize)
    return error(binPath + ": " + llvm::Twine(binSize) + " bytes, expected " +
                 llvm::Twine(h.tokens) + " ids of " + llvm::Twine(elem) +
                 " bytes (truncated or corrupt)");
  uint64_t expected = 0;
  for (uint64_t i = 0; i < h.count; ++i) {
    uint64_t offset = get<uint64_t>(reader->offsets + 8 * i);
    if (offset != expected)
      return error(idxPath + ": example " + llvm::Twine(i) + " starts at id " +
                   llvm::Twine(offset) + ", expected " + llvm::Twine(expected));
    expected += reader->length(i);
    if (expected > h.tokens)
      return error(idxPath + ": example " + llvm::Twine(i) + " ends past the " +
                   llvm::Twine(h.tokens) + " ids of the dataset");
  }
  if (expected != h.tokens)
    return error(idxPath + ": the examples hold " + llvm::Twine(expected) +
                 " ids, the header says " + llvm::Twine(h.tokens));
  return reader;
}

uint32_t TokenDatasetReader::length(uint64_t i) const {
  assert(i < header.count && "example out of range");
  return get<uint32_t>(lengths + 4 * i);
}

int64_t TokenDatasetReader::label(uint64_t i) const {
  assert(i < header.count && hasLabels() && "no such label");
  return get<int64_t>(labels + 8 * i);
}

void TokenDatasetReader::example(uint64_t i, std::vector<int32_t> &ids) const {
  assert(i < header.count && "example out of range");
  uint64_t offset = get<uint64_t>(offsets + 8 * i);
  uint32_t n = length(i);
  ids.resize(n);
  const char *p = bin->getBufferStart();
  if (dtype() == TokenDType::U16) {
    for (uint32_t k = 0; k < n; ++k)
      ids[k] = get<uint16_t>(p + 2 * (offset + k));
  } else {
    std::memcpy(ids.data(), p + 4 * offset, size_t(n) * 4);
  }
}

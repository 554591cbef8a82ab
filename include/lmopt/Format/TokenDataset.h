//===- TokenDataset.h - Pre-tokenized datasets on disk ----------*- C++ -*-===//
//
// A token dataset is two files, in the manner of Megatron's .bin/.idx:
// `<prefix>.bin` holds every example's ids back to back (uint16 when the
// vocabulary fits, else uint32), then optionally one type id byte per id;
// `<prefix>.idx` a header (magic, version, dtype, the tokenizer's hash,
// counts) and per-example offsets, labels, source positions and lengths.
// The reader maps both files and refuses, naming the file and the value, a
// truncated or inconsistent file or one written by another tokenizer.
// It lives in the format library, with no LLVM, so that lmopt-run (runtime
// only), lmopt-train and lmopt-compile share it. docs/tokenizer.md gives
// the layout.
//
//===----------------------------------------------------------------------===//

#ifndef LMOPT_FORMAT_TOKENDATASET_H
#define LMOPT_FORMAT_TOKENDATASET_H

#include "lmopt/Format/Status.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace lmopt::runtime {

inline constexpr char kTokenDatasetMagic[8] = {'L', 'M', 'T', 'O',
                                               'K', 'I', 'D', 'X'};
inline constexpr uint32_t kTokenDatasetVersion = 2;

/// Element type of the ids in the .bin file.
enum class TokenDType : uint32_t { U16 = 1, U32 = 2 };

/// The .idx header, little-endian, 64 bytes.
struct TokenDatasetHeader {
  char magic[8];
  uint32_t version;
  uint32_t dtype;
  uint64_t tokenizerHash;
  uint64_t count;  // examples
  uint64_t tokens; // ids in the .bin file
  uint32_t flags;  // kTokenDataset* below
  uint32_t reserved0;
  uint64_t vocabSize;
  uint64_t reserved1;
};
static_assert(sizeof(TokenDatasetHeader) == 64, "the header is 64 bytes");
/// Per example an int64 label.
inline constexpr uint32_t kTokenDatasetHasLabels = 1;
/// Per id a uint8 token type (segment) id, after the ids in the .bin.
inline constexpr uint32_t kTokenDatasetHasTypeIds = 2;
/// Per example its position in the input (the examples were reordered,
/// lmopt-tokenize --sort-by-length).
inline constexpr uint32_t kTokenDatasetHasSources = 4;
inline constexpr uint32_t kTokenDatasetKnownFlags =
    kTokenDatasetHasLabels | kTokenDatasetHasTypeIds | kTokenDatasetHasSources;

/// Ids are stored unsigned and read as int32: larger vocabularies are
/// refused on write and on read.
inline constexpr uint64_t kTokenDatasetMaxVocab = uint64_t(INT32_MAX) + 1;

/// The hash a dataset records: XXH64 (seed 0) of the tokenizer.json bytes.
uint64_t tokenizerHash(const void *data, size_t size);
/// tokenizerHash() of the file at `path`.
Status hashTokenizerFile(const std::string &path, uint64_t &hash);

/// The two file names of a dataset: `prefix` with ".bin" or ".idx" dropped,
/// then each suffix added.
std::string tokenDatasetBinPath(const std::string &prefix);
std::string tokenDatasetIdxPath(const std::string &prefix);
/// Whether `path` names a dataset file (ends in .idx or .bin).
bool isTokenDatasetPath(const std::string &path);

/// What a dataset holds. `typeIds`, `labels` and `sources` are empty or
/// have one entry per example (type ids as long as the example's ids).
struct TokenDatasetContents {
  std::vector<std::vector<int32_t>> ids;
  std::vector<std::vector<uint8_t>> typeIds;
  std::vector<int64_t> labels;
  std::vector<uint64_t> sources;
};

/// Writes a dataset (each file to a temporary name, then renamed). Refuses
/// a vocabulary or an id outside [0, 2^31).
Status writeTokenDataset(const std::string &prefix, uint64_t tokenizerHash,
                         int64_t vocabSize,
                         const TokenDatasetContents &contents);

class TokenDatasetReader {
public:
  ~TokenDatasetReader();

  /// Maps and validates both files; with `expectedHash`, refuses a dataset
  /// written by a tokenizer with another hash.
  static Status open(const std::string &prefix,
                     std::optional<uint64_t> expectedHash,
                     std::unique_ptr<TokenDatasetReader> &out);

  /// The .idx path, for messages.
  const std::string &path() const { return idxPath; }
  uint64_t size() const { return header.count; }
  uint64_t tokenCount() const { return header.tokens; }
  uint64_t tokenizerHash() const { return header.tokenizerHash; }
  uint64_t vocabSize() const { return header.vocabSize; }
  TokenDType dtype() const { return TokenDType(header.dtype); }
  bool hasLabels() const { return header.flags & kTokenDatasetHasLabels; }
  bool hasTypeIds() const { return header.flags & kTokenDatasetHasTypeIds; }
  bool hasSources() const { return header.flags & kTokenDatasetHasSources; }

  uint32_t length(uint64_t i) const;
  int64_t label(uint64_t i) const;
  /// The example's position in the input (i when not reordered).
  uint64_t source(uint64_t i) const;
  /// Replaces `ids` with example `i`'s ids.
  void example(uint64_t i, std::vector<int32_t> &ids) const;
  /// Replaces `types` with example `i`'s type ids (zeros without them).
  void typeIds(uint64_t i, std::vector<uint8_t> &types) const;

private:
  struct Files;
  TokenDatasetReader();

  std::string idxPath;
  TokenDatasetHeader header{};
  std::unique_ptr<Files> files;
  const uint8_t *offsets = nullptr, *labels = nullptr, *sources = nullptr,
                *lengths = nullptr, *ids = nullptr, *types = nullptr;
};

} // namespace lmopt::runtime

#endif // LMOPT_FORMAT_TOKENDATASET_H

//===- TokenDataset.h - Pre-tokenized datasets on disk ----------*- C++ -*-===//
//
// A token dataset is two files, in the manner of Megatron's .bin/.idx:
// `<prefix>.bin` holds every example's ids back to back (uint16 when the
// vocabulary fits, else uint32), `<prefix>.idx` a header (magic, version,
// dtype, the tokenizer's hash, counts) and per-example offsets, labels and
// lengths. The reader maps both files and refuses, naming the file and the
// value, a truncated or inconsistent file or one written by another
// tokenizer. docs/tokenizer.md gives the layout.
//
//===----------------------------------------------------------------------===//

#ifndef LMOPT_TOKENIZER_TOKENDATASET_H
#define LMOPT_TOKENIZER_TOKENDATASET_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/MemoryBuffer.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace lmopt::tokenizer {

inline constexpr char kTokenDatasetMagic[8] = {'L', 'M', 'T', 'O',
                                               'K', 'I', 'D', 'X'};
inline constexpr uint32_t kTokenDatasetVersion = 1;

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
  uint32_t flags;  // kHasLabels
  uint32_t reserved0;
  uint64_t vocabSize;
  uint64_t reserved1;
};
static_assert(sizeof(TokenDatasetHeader) == 64, "the header is 64 bytes");
inline constexpr uint32_t kTokenDatasetHasLabels = 1;

/// The two file names of a dataset: `prefix` with ".bin" or ".idx" dropped,
/// then each suffix added.
std::string tokenDatasetBinPath(llvm::StringRef prefix);
std::string tokenDatasetIdxPath(llvm::StringRef prefix);

/// Writes a dataset (each file to a temporary name, then renamed).
/// `labels` is empty or has one label per example.
llvm::Error writeTokenDataset(llvm::StringRef prefix, uint64_t tokenizerHash,
                              int64_t vocabSize,
                              const std::vector<std::vector<int32_t>> &examples,
                              llvm::ArrayRef<int64_t> labels);

class TokenDatasetReader {
public:
  /// Maps and validates both files; with `expectedHash`, refuses a dataset
  /// written by a tokenizer with another hash.
  static llvm::Expected<std::unique_ptr<TokenDatasetReader>>
  open(llvm::StringRef prefix, std::optional<uint64_t> expectedHash);

  uint64_t size() const { return header.count; }
  uint64_t tokenCount() const { return header.tokens; }
  uint64_t tokenizerHash() const { return header.tokenizerHash; }
  uint64_t vocabSize() const { return header.vocabSize; }
  TokenDType dtype() const { return TokenDType(header.dtype); }
  bool hasLabels() const { return header.flags & kTokenDatasetHasLabels; }

  uint32_t length(uint64_t i) const;
  int64_t label(uint64_t i) const;
  /// Replaces `ids` with example `i`'s ids.
  void example(uint64_t i, std::vector<int32_t> &ids) const;

private:
  TokenDatasetHeader header{};
  std::unique_ptr<llvm::MemoryBuffer> idx, bin;
  const char *offsets = nullptr, *labels = nullptr, *lengths = nullptr;
};

} // namespace lmopt::tokenizer

#endif // LMOPT_TOKENIZER_TOKENDATASET_H

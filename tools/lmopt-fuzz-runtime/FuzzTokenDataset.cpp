//===- FuzzTokenDataset.cpp - libFuzzer target for token datasets ---------===//
//
// An input is a token dataset in one piece: the .idx size (uint32,
// little-endian; clamped to what follows), the .idx bytes, then the .bin
// bytes. Both files are written next to each other and opened without a
// hash, with the header's own hash and with another one, which must be
// refused. What opens is read in full: every example, length, label, source
// and type id, and the batches readers cut from it.
// The reader must refuse an inconsistent file with an error; any crash,
// sanitizer report (reading past either mapping above all), leak or
// allocation past -rss_limit_mb is a bug.
//
//===----------------------------------------------------------------------===//

#include "FuzzUtil.h"

#include "lmopt/Format/TokenBatches.h"

#include <algorithm>
#include <cstring>

using namespace lmopt::runtime;
using lmopt::fuzz::check;

/// Reads everything `reader` holds and checks it against the header.
static void readAll(const TokenDatasetReader &reader) {
  check(reader.dtype() == TokenDType::U16 || reader.dtype() == TokenDType::U32,
        "unknown dtype accepted");
  uint64_t tokens = 0;
  std::vector<int32_t> ids;
  std::vector<uint8_t> types;
  for (uint64_t i = 0; i < reader.size(); ++i) {
    reader.example(i, ids);
    check(ids.size() == reader.length(i), "example length differs");
    for (int32_t id : ids)
      check(id >= 0, "negative id read back");
    if (reader.dtype() == TokenDType::U16)
      for (int32_t id : ids)
        check(id < 65536, "uint16 id out of range");
    reader.typeIds(i, types);
    check(types.size() == ids.size(), "type ids and ids differ in length");
    (void)reader.label(i);
    (void)reader.source(i);
    tokens += ids.size();
  }
  check(tokens == reader.tokenCount(), "examples and id count differ");
  // The batches of lmopt-run --dataset, bounded and truncating.
  TokenBatchOptions options;
  options.batchSize = 2;
  options.maxLength = 3;
  options.truncate = true;
  std::vector<TokenBatch> batches;
  check(bool(planTokenBatches(reader, options, batches)),
        "a truncating plan failed");
  std::vector<TokenArraySpec> specs;
  if (!tokenArraySpecs(reader,
                       {{"input_ids", DType::I64},
                        {"attention_mask", DType::I32},
                        {"token_type_ids", DType::I64},
                        {"position_ids", DType::I64}},
                       "labels", specs))
    return;
  for (const TokenBatch &batch : batches) {
    check(batch.length >= 1 && batch.length <= 3, "batch length off bounds");
    std::vector<NamedTensor> arrays =
        tokenBatchArrays(reader, batch.rows, batch.length, specs);
    check(arrays.size() == specs.size(), "an array is missing");
  }
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  uint32_t idxSize = 0;
  if (size >= 4)
    std::memcpy(&idxSize, data, 4);
  size_t skip = std::min<size_t>(size, 4);
  size_t idxBytes = std::min<size_t>(idxSize, size - skip);
  std::string idxPath =
      lmopt::fuzz::writeInputFile(data + skip, idxBytes, ".idx");
  lmopt::fuzz::writeInputFile(data + skip + idxBytes, size - skip - idxBytes,
                              ".bin");
  std::string prefix = idxPath.substr(0, idxPath.size() - 4);

  std::optional<uint64_t> ownHash;
  if (idxBytes >= sizeof(TokenDatasetHeader)) {
    TokenDatasetHeader header;
    std::memcpy(&header, data + skip, sizeof(header));
    ownHash = header.tokenizerHash;
  }
  for (std::optional<uint64_t> hash : {std::optional<uint64_t>(), ownHash}) {
    std::unique_ptr<TokenDatasetReader> reader;
    if (!TokenDatasetReader::open(prefix, hash, reader))
      continue;
    check(bool(ownHash), "an .idx without a header opened");
    check(reader->tokenizerHash() == *ownHash, "hash differs from header");
    readAll(*reader);
  }
  if (ownHash) {
    std::unique_ptr<TokenDatasetReader> other;
    check(!TokenDatasetReader::open(prefix, *ownHash + 1, other),
          "a dataset of another tokenizer opened");
  }
  return 0;
}

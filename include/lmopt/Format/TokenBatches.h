//===- TokenBatches.h - Model inputs from a token dataset -------*- C++ -*-===//
//
// What every reader of a token dataset does with it (lmopt-run --dataset,
// lmopt-compile --calibration, lmopt-train --data): cut the examples into
// batches, by length bucket (examples sorted by length, so a batch pads only
// to its longest), and build the arrays a model takes: input_ids,
// attention_mask, token_type_ids, position_ids and the labels.
// docs/tokenizer.md, "Reading a dataset".
//
//===----------------------------------------------------------------------===//

#ifndef LMOPT_FORMAT_TOKENBATCHES_H
#define LMOPT_FORMAT_TOKENBATCHES_H

#include "lmopt/Format/Npy.h"
#include "lmopt/Format/TokenDataset.h"

#include <cstdint>
#include <string>
#include <vector>

namespace lmopt::runtime {

/// Opens the dataset at `path` (PREFIX, PREFIX.idx or PREFIX.bin); with a
/// non-empty `tokenizerPath`, refuses a dataset written by another
/// tokenizer.json.
Status openTokenDataset(const std::string &path,
                        const std::string &tokenizerPath,
                        std::unique_ptr<TokenDatasetReader> &out);

/// One batch: the examples (dataset indices) and the length its rows pad to.
struct TokenBatch {
  std::vector<uint64_t> rows;
  int64_t length = 0;
};

struct TokenBatchOptions {
  /// Examples per batch (the last batch may hold fewer).
  int64_t batchSize = 1;
  /// Length bucketing: examples sorted by length (stable), so each batch
  /// pads to its longest. Otherwise dataset order.
  bool byLength = true;
  /// Every batch pads to this length (a model with a static sequence
  /// dim); -1: to the batch's longest example.
  int64_t fixedLength = -1;
  /// The longest the model takes; a longer example is refused, or cut to
  /// its first `maxLength` ids with `truncate`.
  int64_t maxLength = INT64_MAX;
  bool truncate = false;
};

/// The batches of `dataset`; refuses (naming the example, its length and
/// the bound) an example over options.maxLength unless it truncates.
/// `truncated` counts the examples cut.
Status planTokenBatches(const TokenDatasetReader &dataset,
                        const TokenBatchOptions &options,
                        std::vector<TokenBatch> &batches,
                        uint64_t *truncated = nullptr);

/// An array a dataset can give: its name, and its dtype (I64 or I32).
struct TokenArraySpec {
  std::string name;
  DType dtype = DType::I64;
  /// [rows, length] for the sequence arrays; the labels are [rows].
  bool isLabels = false;
};

/// Which arrays `names` asks for: input_ids, attention_mask,
/// token_type_ids, position_ids, and `labelsName` as the labels. An error
/// names any other, and a labels array of a dataset without labels.
Status tokenArraySpecs(const TokenDatasetReader &dataset,
                       const std::vector<std::pair<std::string, DType>> &names,
                       const std::string &labelsName,
                       std::vector<TokenArraySpec> &specs);

/// The arrays of `specs` for the examples `rows`, each row padded to
/// `length` (input_ids with `padId`, the others with 0) and cut to it.
std::vector<NamedTensor>
tokenBatchArrays(const TokenDatasetReader &dataset,
                 const std::vector<uint64_t> &rows, int64_t length,
                 const std::vector<TokenArraySpec> &specs, int64_t padId = 0);

} // namespace lmopt::runtime

#endif // LMOPT_FORMAT_TOKENBATCHES_H

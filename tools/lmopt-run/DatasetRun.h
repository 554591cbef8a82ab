//===- DatasetRun.h - lmopt-run over a token dataset ------------*- C++ -*-===//
//
// lmopt-run --dataset: runs an entry over every example of a token dataset
// (lmopt-tokenize --format dataset), batched by length bucket, reports
// examples, batches, padding and tokens/s, and optionally writes the
// outputs, one row per example in input order. docs/tokenizer.md,
// "Reading a dataset".
//
//===----------------------------------------------------------------------===//

#ifndef LMOPT_TOOLS_LMOPT_RUN_DATASETRUN_H
#define LMOPT_TOOLS_LMOPT_RUN_DATASETRUN_H

#include "lmopt/Runtime/Session.h"

#include <string>

namespace lmopt_run {

struct DatasetRunOptions {
  std::string dataset;
  /// The tokenizer.json the dataset must have been written with (empty:
  /// any).
  std::string tokenizer;
  /// Examples per batch (0: the entry's static batch dim, else 8).
  long batch = 0;
  /// Sort by length into buckets (else dataset order).
  bool byLength = true;
  /// Cut examples longer than the entry's sequence bound (else refuse).
  bool truncate = false;
  /// Write each output, one row per example in input order, with the
  /// examples' lengths.
  std::string output;
};

lmopt::runtime::Status runDataset(lmopt::runtime::Session &session,
                                  size_t entry,
                                  const DatasetRunOptions &options);

} // namespace lmopt_run

#endif // LMOPT_TOOLS_LMOPT_RUN_DATASETRUN_H

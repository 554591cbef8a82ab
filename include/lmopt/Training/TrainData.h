//===- TrainData.h - Training examples and batches --------------*- C++ -*-===//
//
// The training and evaluation data of the trainer (Trainer.h, run by
// lmopt-train and the Python package's Trainer): an .npz of arrays with
// one row per example, or a token dataset of lmopt-tokenize read into the
// same arrays; each epoch's order, and the micro-batches cut from it.
//
//===----------------------------------------------------------------------===//

#ifndef LMOPT_TRAINING_TRAINDATA_H
#define LMOPT_TRAINING_TRAINDATA_H

#include "lmopt/Format/Npy.h"
#include "lmopt/Runtime/Session.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <string>
#include <vector>

namespace lmopt::training {

/// An llvm::Error carrying `message`.
llvm::Error trainError(const llvm::Twine &message);
/// `status` as an llvm::Error ("<context>: <message>"), success when ok.
llvm::Error toError(const lmopt::runtime::Status &status,
                    const llvm::Twine &context = "");

/// Examples as arrays of one row each.
struct Dataset {
  std::string path;
  std::vector<lmopt::runtime::NamedTensor> arrays;
  int64_t count = 0;
  /// Each example's attention-mask count (empty without an
  /// attention_mask), for --group-by-length.
  std::vector<int64_t> lengths;

  const lmopt::runtime::NamedTensor *find(const std::string &name) const {
    for (const lmopt::runtime::NamedTensor &t : arrays)
      if (t.name == name)
        return &t;
    return nullptr;
  }
};


/// What the data is checked against: the labels' name and range
/// (cross-entropy: [0, classes) or the ignore index), and the tokenizer a
/// token dataset must have been written with (empty: any).
struct DataSpec {
  std::string labels = "labels";
  int64_t classes = 0;
  int64_t ignoreIndex = -100;
  std::string tokenizerPath;
};

/// Reads `path` (an .npz, or a token dataset PREFIX.idx) as the inputs of
/// `entry` but `skip`, checking names, dtypes, dims and labels; fails naming
/// the problem. At least `batchSize` examples.
llvm::Expected<Dataset> readDataset(const std::string &path,
                    const lmopt::runtime::EntryInfo &entry, int64_t batchSize,
                    const std::vector<std::string> &skip,
                    const DataSpec &spec);

/// The rows `rows` of every array of `data`, as the inputs of one run.
std::vector<lmopt::runtime::NamedTensor>
gather(const Dataset &data, llvm::ArrayRef<int64_t> rows);

/// With a symbolic sequence dim (lmopt-compile --max-shape), drops the
/// columns after every row's last attention-mask 1 from each [batch,
/// length] input whose length is symbolic. Returns the length the batch
/// runs at, or -1 when nothing applies.
int64_t trimPadding(std::vector<lmopt::runtime::NamedTensor> &inputs,
                    const lmopt::runtime::EntryInfo &entry);

/// How each epoch orders the examples (--no-shuffle, --seed,
/// --group-by-length).
struct Ordering {
  bool shuffle = true;
  uint64_t seed = 0;
  bool groupByLength = false;
};

/// The examples of epoch `epoch` in the order they are batched: a seeded
/// shuffle (or file order); with groupByLength, each run of 50 batches
/// then sorted by length, longest first (stable, so ties keep the shuffle).
std::vector<int64_t> epochOrder(const Dataset &data, int64_t epoch,
                                int64_t batchSize, const Ordering &ordering);

} // namespace lmopt::training

#endif // LMOPT_TRAINING_TRAINDATA_H

//===- RandomInputs.h - Seeded inputs of random dims within bounds -*- C++
//-*-===//
//
// Inputs for an entry of a bundle compiled with bounded dynamic shapes, each
// draw at dims chosen at random within the symbols' bounds, for soak runs
// (lmopt-soak): the same seed gives the same sequence of dims and values.
// Symbols that the plan assumes equal take one value; by default, so do
// symbols at the same dim position with the same bound (the batch and
// sequence dims of a transformer's inputs, which the plan does not always
// tie by an assumption but which only mean something together).
// docs/testing.md, "Soak".
//
//===----------------------------------------------------------------------===//

#ifndef LMOPT_RUNTIME_RANDOMINPUTS_H
#define LMOPT_RUNTIME_RANDOMINPUTS_H

#include "lmopt/Format/Npy.h"
#include "lmopt/Format/Plan.h"
#include "lmopt/Format/Status.h"

#include <cstdint>
#include <string>
#include <vector>

namespace lmopt::runtime {

struct RandomInputOptions {
  uint64_t seed = 1;
  /// Integer and boolean inputs take values in [0, intLimit).
  int64_t intLimit = 2;
  /// Do not tie symbols at the same dim position with the same bound.
  bool independentDims = false;
};

class RandomInputs {
public:
  /// Fails, naming the entry and symbol, for an entry whose dims depend on
  /// a state's (they are not the caller's to draw).
  static Status create(const Plan &plan, const RandomInputOptions &options,
                       RandomInputs &out);

  /// The next inputs, in plan order, named as the plan names them.
  Status draw(std::vector<NamedTensor> &inputs);

  /// The groups of symbols drawn together, each with its bound:
  /// "input_ids.0 = attention_mask.0 <= 4, input_ids.1 = ... <= 32".
  std::string describe() const;

private:
  const Plan *plan_ = nullptr;
  RandomInputOptions options_;
  uint64_t state_ = 0;
  /// Per symbol, its group; per group, its bound (the least of its
  /// symbols').
  std::vector<size_t> group_;
  std::vector<int64_t> groupBound_;

  uint64_t next();
};

} // namespace lmopt::runtime

#endif // LMOPT_RUNTIME_RANDOMINPUTS_H

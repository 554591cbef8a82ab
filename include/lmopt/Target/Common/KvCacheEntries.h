//===- KvCacheEntries.h - Prefill and decode entries of a decoder -*- C++
//-*-===//
//
// `lmopt-compile --kv-cache=N` turns a decoder exported with past
// key/values (inputs `past_*` [batch, heads, past, head_size], outputs
// `present_* = concat(past_*, new, axis)`) into two entry points that share
// its weights and keep the cache as session state, at capacity N tokens:
//
// - `prefill` runs the prompt with an empty cache and writes it;
// - `decode` runs one new token, reads the cache, appends the token's keys
//   and values to it in place and writes it back.
//
// Each past input becomes a state of the same name and its present output
// that state's new value; the remaining outputs (the logits) stay outputs.
// Generation reads only the last position's logits, so unless asked for all
// of them, prefill returns `logits` [batch, 1, vocab]: the model's last
// linear (the LM head) then multiplies the last position's row alone.
// The new tokens are `input_ids` [batch, n] (and `position_ids` if the
// model has it), `attention_mask` covers the cached and new tokens: the
// Hugging Face convention, which generation (Runtime/Generate.h) follows.
//
//===----------------------------------------------------------------------===//

#ifndef LMOPT_TARGET_COMMON_KVCACHEENTRIES_H
#define LMOPT_TARGET_COMMON_KVCACHEENTRIES_H

#include "lmopt/Format/Plan.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace mlir::lmopt {

struct KvCacheOptions {
  /// The cache's capacity in tokens: prompt and generated tokens together.
  int64_t capacity = 0;
  /// The user's --max-shape bounds: `input_ids` [batch, prompt] bounds the
  /// batch and the prompt; bounds of the other inputs are derived from it
  /// when not given.
  std::map<std::string, std::vector<int64_t>> maxShapes;
  /// Prefill returns the logits of every prompt position instead of the
  /// last one's.
  bool allLogits = false;
};

/// An entry point to plan: the function, its name in the bundle and the
/// bounds of its inputs' dynamic dims (states' included).
struct EntrySpec {
  std::string name;
  func::FuncOp func;
  std::map<std::string, std::vector<int64_t>> maxShapes;
};

struct KvCacheEntries {
  /// One per past input, named after it, with no value until prefill runs.
  std::vector<::lmopt::runtime::PlanState> states;
  /// `prefill`, then `decode`.
  std::vector<EntrySpec> entries;
};

/// Adds @prefill and @decode, built from `module`'s @main (which it
/// erases), with their state attributes (PlanBuilder.h). Fails with a
/// diagnostic naming the input, output or op when the model does not have
/// that form: no cache pairs, a past input read other than by its concat
/// and shape ops, an input generation does not fill, a missing or bad
/// bound, a capacity below the prompt.
FailureOr<KvCacheEntries> buildKvCacheEntries(ModuleOp module,
                                              const KvCacheOptions &options);

} // namespace mlir::lmopt

#endif // LMOPT_TARGET_COMMON_KVCACHEENTRIES_H

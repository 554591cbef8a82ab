//===- Generate.h - Greedy decoding with a key/value cache ------*- C++ -*-===//
//
// Autoregressive generation on a session whose bundle has a prefill and a
// decode entry sharing weights and a key/value cache kept as session state
// (`lmopt-compile --kv-cache`): prefill runs the prompt and fills the
// cache, then each decode step runs the last token, appends to the cache
// in place and yields the next token (the argmax of the last logits).
//
// The entries' inputs are filled by convention, as Hugging Face models name
// them: `input_ids` (the new tokens, int64 [batch, n]), `attention_mask`
// (ones over the cached and new tokens, int64 [batch, past + n]) and
// `position_ids` (int64 [batch, n], past .. past + n - 1), each optional but
// the first; the logits are the output named `logits` ([batch, n, vocab],
// f32).
//
//===----------------------------------------------------------------------===//

#ifndef LMOPT_RUNTIME_GENERATE_H
#define LMOPT_RUNTIME_GENERATE_H

#include "lmopt/Format/Npy.h"
#include "lmopt/Format/Status.h"

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace lmopt::runtime {

class Session;

struct GenerateOptions {
  /// Tokens to generate (>= 1); the first comes from prefill.
  int64_t newTokens = 16;
  std::string prefillEntry = "prefill";
  std::string decodeEntry = "decode";
  /// Also return each step's last logits (GenerateResult::logits).
  bool keepLogits = false;
  /// Called after each step with its index and the batch's new tokens.
  std::function<void(int64_t step, const std::vector<int64_t> &tokens)> onToken;
};

struct GenerateResult {
  /// int64 [batch, newTokens].
  Tensor tokens;
  /// f32 [newTokens, batch, vocab] with keepLogits, else empty.
  Tensor logits;
  /// The prefill step's wall time.
  double prefillSeconds = 0;
  /// Each decode step's wall time (newTokens - 1 of them).
  std::vector<double> decodeSeconds;
};

/// Generates from `prompt` (int64 [batch, length], length >= 1) greedily.
/// Fails naming the entry, input or output when the bundle does not follow
/// the conventions above, when the prompt does not fit the entries' bounds
/// or the cache's capacity, and with the session's message when a run
/// fails. The session's states hold the cache afterwards.
Status generateGreedy(Session &session, const Tensor &prompt,
                      const GenerateOptions &options, GenerateResult &out);

} // namespace lmopt::runtime

#endif // LMOPT_RUNTIME_GENERATE_H

//===- Batch.h - Reading examples and encoding them in parallel -*- C++ -*-===//
//
// What lmopt-tokenize does between its flags: read examples from plain text
// (one per line), JSON Lines or CSV, repair invalid UTF-8, encode them on
// several threads, and count what happened.
//
//===----------------------------------------------------------------------===//

#ifndef LMOPT_TOKENIZER_BATCH_H
#define LMOPT_TOKENIZER_BATCH_H

#include "lmopt/Tokenizer/Tokenizer.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <atomic>
#include <cstdint>
#include <deque>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace lmopt::tokenizer {

enum class InputFormat { Text, JsonLines, Csv };

/// Which fields of a JSON Lines or CSV record hold what.
struct InputFields {
  std::string text = "text";
  std::string pair;  // empty: no pair
  std::string label; // empty: no label
};

/// One example: its text (and pair) as raw bytes, possibly invalid UTF-8,
/// pointing into the input buffer or into `Examples::storage`.
struct Example {
  llvm::StringRef text;
  std::optional<llvm::StringRef> pair;
  int64_t label = 0;
};

struct Examples {
  std::vector<Example> items;
  bool hasLabels = false;
  bool hasPairs = false;
  /// Strings decoded from JSON or CSV (a deque keeps them in place).
  std::deque<std::string> storage;
  /// Invalid UTF-8 sequences replaced while parsing JSON Lines.
  uint64_t invalidUtf8 = 0;
};

/// The format a file name suggests: .jsonl/.json/.ndjson, .csv, else text.
InputFormat guessInputFormat(llvm::StringRef path);

/// Splits `input` into examples. Text: one per line ('\n', a trailing '\r'
/// dropped; a final newline ends the last line). JSON Lines: one object per
/// non-blank line. CSV: RFC 4180 with a header row naming the fields.
/// `input` must outlive the result. With `skipEmpty`, examples whose text
/// is empty are left out. Errors name the line and the field.
llvm::Expected<Examples> readExamples(llvm::StringRef input,
                                      llvm::StringRef name, InputFormat format,
                                      const InputFields &fields,
                                      bool skipEmpty);

struct BatchStats {
  uint64_t examples = 0;
  uint64_t tokens = 0;
  uint64_t truncated = 0;
  /// Invalid UTF-8 sequences replaced by U+FFFD, and examples with any.
  uint64_t invalidUtf8 = 0;
  uint64_t examplesWithInvalidUtf8 = 0;
  uint64_t inputBytes = 0;
};

/// Encodes every example on `threads` threads (0: the hardware's), calling
/// `progress(done)` from the calling thread about once a second.
std::vector<Encoding>
encodeExamples(const Tokenizer &tokenizer, const Examples &examples,
               const EncodeOptions &options, unsigned threads,
               BatchStats &stats,
               const std::function<void(uint64_t done)> &progress = {});

} // namespace lmopt::tokenizer

#endif // LMOPT_TOKENIZER_BATCH_H

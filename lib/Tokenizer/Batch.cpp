//===- Batch.cpp - Reading examples and encoding them in parallel ---------===//

#include "lmopt/Tokenizer/Batch.h"

#include "JsonFields.h"
#include "lmopt/Tokenizer/Unicode.h"

#include "llvm/Support/JSON.h"

#include <chrono>
#include <thread>

using namespace lmopt::tokenizer;
using llvm::Expected;
using llvm::StringRef;

InputFormat lmopt::tokenizer::guessInputFormat(StringRef path) {
  if (path.ends_with(".jsonl") || path.ends_with(".json") ||
      path.ends_with(".ndjson"))
    return InputFormat::JsonLines;
  if (path.ends_with(".csv"))
    return InputFormat::Csv;
  return InputFormat::Text;
}

static llvm::Error lineError(StringRef name, size_t line,
                             const llvm::Twine &msg) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                 name + ":" + llvm::Twine(line) + ": " + msg);
}

/// Lines split on '\n' with one trailing '\r' dropped each.
static void splitLines(StringRef input, std::vector<StringRef> &lines) {
  while (!input.empty()) {
    auto [line, rest] = input.split('\n');
    if (line.ends_with("\r"))
      line = line.drop_back();
    lines.push_back(line);
    input = rest;
  }
}

/// A label: an integer, or a boolean as 0/1.
static std::optional<int64_t> labelValue(const llvm::json::Value &v) {
  if (std::optional<int64_t> i = v.getAsInteger())
    return i;
  if (std::optional<bool> b = v.getAsBoolean())
    return int64_t(*b);
  return std::nullopt;
}

static Expected<Examples> readJsonLines(StringRef input, StringRef name,
                                        const InputFields &fields,
                                        bool skipEmpty) {
  Examples out;
  out.hasPairs = !fields.pair.empty();
  out.hasLabels = !fields.label.empty();
  std::vector<StringRef> lines;
  splitLines(input, lines);
  std::string repaired;
  for (size_t i = 0; i < lines.size(); ++i) {
    if (lines[i].trim().empty())
      continue;
    // llvm::json needs valid UTF-8; the repair is counted like the text's.
    out.invalidUtf8 += repairUtf8(lines[i], repaired);
    Expected<llvm::json::Value> value = parseJson(repaired);
    if (!value)
      return lineError(name, i + 1,
                       "invalid JSON: " + llvm::toString(value.takeError()));
    const llvm::json::Object *object = value->getAsObject();
    if (!object)
      return lineError(name, i + 1, "expected a JSON object");
    auto getString = [&](const std::string &field) -> Expected<StringRef> {
      const llvm::json::Value *v = object->get(field);
      if (!v)
        return lineError(name, i + 1, "field '" + field + "' is missing");
      std::optional<StringRef> s = v->getAsString();
      if (!s)
        return lineError(name, i + 1, "field '" + field + "' is not a string");
      return StringRef(out.storage.emplace_back(s->str()));
    };
    Example example;
    Expected<StringRef> text = getString(fields.text);
    if (!text)
      return text.takeError();
    example.text = *text;
    if (out.hasPairs) {
      Expected<StringRef> pair = getString(fields.pair);
      if (!pair)
        return pair.takeError();
      example.pair = *pair;
    }
    if (out.hasLabels) {
      const llvm::json::Value *v = object->get(fields.label);
      if (!v)
        return lineError(name, i + 1,
                         "field '" + fields.label + "' is missing");
      std::optional<int64_t> label = labelValue(*v);
      if (!label)
        return lineError(name, i + 1,
                         "field '" + fields.label +
                             "' is not an integer label");
      example.label = *label;
    }
    if (skipEmpty && example.text.empty())
      continue;
    out.items.push_back(example);
  }
  return out;
}

/// RFC 4180 records: fields separated by commas, quoted fields may hold
/// commas, newlines and doubled quotes.
static Expected<std::vector<std::vector<std::string>>>
parseCsv(StringRef input, StringRef name) {
  std::vector<std::vector<std::string>> records;
  std::vector<std::string> record;
  std::string field;
  size_t line = 1;
  bool quoted = false, fieldStarted = false;
  auto endField = [&] {
    record.push_back(std::move(field));
    field.clear();
    fieldStarted = false;
  };
  for (size_t i = 0; i < input.size(); ++i) {
    char c = input[i];
    if (quoted) {
      if (c == '"' && i + 1 < input.size() && input[i + 1] == '"') {
        field.push_back('"');
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        line += c == '\n';
        field.push_back(c);
      }
      continue;
    }
    if (c == '"' && !fieldStarted) {
      quoted = fieldStarted = true;
    } else if (c == ',') {
      endField();
    } else if (c == '\n' || c == '\r') {
      if (c == '\r' && i + 1 < input.size() && input[i + 1] == '\n')
        ++i;
      endField();
      records.push_back(std::move(record));
      record.clear();
      ++line;
    } else {
      field.push_back(c);
      fieldStarted = true;
    }
  }
  if (quoted)
    return lineError(name, line, "unterminated quoted field");
  if (fieldStarted || !record.empty()) {
    endField();
    records.push_back(std::move(record));
  }
  return records;
}

static Expected<Examples> readCsv(StringRef input, StringRef name,
                                  const InputFields &fields, bool skipEmpty) {
  Expected<std::vector<std::vector<std::string>>> records =
      parseCsv(input, name);
  if (!records)
    return records.takeError();
  if (records->empty())
    return lineError(name, 1, "no header row");
  const std::vector<std::string> &header = records->front();
  auto column = [&](const std::string &field) -> Expected<size_t> {
    for (size_t i = 0; i < header.size(); ++i)
      if (header[i] == field)
        return i;
    return lineError(name, 1, "the header has no column '" + field + "'");
  };
  Examples out;
  out.hasPairs = !fields.pair.empty();
  out.hasLabels = !fields.label.empty();
  Expected<size_t> textColumn = column(fields.text);
  if (!textColumn)
    return textColumn.takeError();
  size_t pairColumn = 0, labelColumn = 0;
  if (out.hasPairs) {
    Expected<size_t> c = column(fields.pair);
    if (!c)
      return c.takeError();
    pairColumn = *c;
  }
  if (out.hasLabels) {
    Expected<size_t> c = column(fields.label);
    if (!c)
      return c.takeError();
    labelColumn = *c;
  }
  for (size_t r = 1; r < records->size(); ++r) {
    std::vector<std::string> &record = (*records)[r];
    if (record.size() == 1 && record[0].empty())
      continue; // a blank line
    if (record.size() != header.size())
      return lineError(name, r + 1,
                       "record " + llvm::Twine(r) + " has " +
                           llvm::Twine(record.size()) + " fields, the header " +
                           llvm::Twine(header.size()));
    // Fields may name one column twice (--pair-field as --text-field), so
    // the label is read and the pair copied before the text is moved out.
    Example example;
    if (out.hasLabels) {
      int64_t label;
      if (StringRef(record[labelColumn]).trim().getAsInteger(10, label))
        return lineError(name, r + 1,
                         "field '" + fields.label +
                             "' is not an integer label: '" +
                             record[labelColumn] + "'");
      example.label = label;
    }
    if (out.hasPairs)
      example.pair = StringRef(out.storage.emplace_back(record[pairColumn]));
    example.text = out.storage.emplace_back(std::move(record[*textColumn]));
    if (skipEmpty && example.text.empty())
      continue;
    out.items.push_back(example);
  }
  return out;
}

Expected<Examples> lmopt::tokenizer::readExamples(StringRef input,
                                                  StringRef name,
                                                  InputFormat format,
                                                  const InputFields &fields,
                                                  bool skipEmpty) {
  if (format == InputFormat::JsonLines)
    return readJsonLines(input, name, fields, skipEmpty);
  if (format == InputFormat::Csv)
    return readCsv(input, name, fields, skipEmpty);
  Examples out;
  std::vector<StringRef> lines;
  splitLines(input, lines);
  out.items.reserve(lines.size());
  for (StringRef line : lines)
    if (!skipEmpty || !line.empty())
      out.items.push_back(Example{line, std::nullopt, 0});
  return out;
}

std::vector<Encoding> lmopt::tokenizer::encodeExamples(
    const Tokenizer &tokenizer, const Examples &examples,
    const EncodeOptions &options, unsigned threads, BatchStats &stats,
    const std::function<void(uint64_t)> &progress) {
  size_t n = examples.items.size();
  std::vector<Encoding> results(n);
  if (threads == 0)
    threads = std::max(1u, std::thread::hardware_concurrency());
  constexpr size_t kChunk = 64;
  std::atomic<size_t> nextChunk{0};
  std::atomic<uint64_t> done{0};
  std::vector<BatchStats> perThread(threads);
  auto work = [&](unsigned t) {
    BatchStats &s = perThread[t];
    std::string a, b;
    for (;;) {
      size_t begin = nextChunk.fetch_add(1) * kChunk;
      if (begin >= n)
        return;
      size_t end = std::min(n, begin + kChunk);
      for (size_t i = begin; i < end; ++i) {
        const Example &ex = examples.items[i];
        size_t bad = repairUtf8(ex.text, a);
        s.inputBytes += ex.text.size();
        if (ex.pair) {
          bad += repairUtf8(*ex.pair, b);
          s.inputBytes += ex.pair->size();
        }
        s.invalidUtf8 += bad;
        s.examplesWithInvalidUtf8 += bad != 0;
        bool truncated;
        results[i] = tokenizer.encode(
            a, ex.pair ? std::optional<StringRef>(b) : std::nullopt, options,
            truncated);
        s.truncated += truncated;
        s.tokens += results[i].ids.size();
      }
      done.fetch_add(end - begin);
    }
  };
  std::vector<std::thread> pool;
  if (threads > 1) {
    // The calling thread reports while the workers run.
    for (unsigned t = 0; t < threads; ++t)
      pool.emplace_back(work, t);
    using namespace std::chrono;
    auto last = steady_clock::now();
    while (done.load() < n) {
      std::this_thread::sleep_for(milliseconds(50));
      if (progress && steady_clock::now() - last >= seconds(1)) {
        progress(done.load());
        last = steady_clock::now();
      }
    }
  } else {
    work(0);
  }
  for (std::thread &t : pool)
    t.join();
  stats.examples += n;
  for (const BatchStats &s : perThread) {
    stats.tokens += s.tokens;
    stats.truncated += s.truncated;
    stats.invalidUtf8 += s.invalidUtf8;
    stats.examplesWithInvalidUtf8 += s.examplesWithInvalidUtf8;
    stats.inputBytes += s.inputBytes;
  }
  return results;
}

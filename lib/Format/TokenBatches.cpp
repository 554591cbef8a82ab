//===- TokenBatches.cpp - Model inputs from a token dataset ---------------===//

#include "lmopt/Format/TokenBatches.h"

#include <algorithm>
#include <numeric>

using namespace lmopt::runtime;

Status
lmopt::runtime::openTokenDataset(const std::string &path,
                                 const std::string &tokenizerPath,
                                 std::unique_ptr<TokenDatasetReader> &out) {
  std::optional<uint64_t> hash;
  if (!tokenizerPath.empty()) {
    uint64_t value = 0;
    if (Status st = hashTokenizerFile(tokenizerPath, value); !st)
      return Status::error(st.code(), "--tokenizer: " + st.message());
    hash = value;
  }
  return TokenDatasetReader::open(path, hash, out);
}

Status lmopt::runtime::planTokenBatches(const TokenDatasetReader &dataset,
                                        const TokenBatchOptions &options,
                                        std::vector<TokenBatch> &batches,
                                        uint64_t *truncated) {
  batches.clear();
  if (truncated)
    *truncated = 0;
  if (options.batchSize < 1)
    return Status::error(StatusCode::InvalidArgument,
                         "batch size " + std::to_string(options.batchSize) +
                             " (expected at least 1)");
  const uint64_t n = dataset.size();
  auto length = [&](uint64_t i) {
    return std::min<int64_t>(dataset.length(i), options.maxLength);
  };
  for (uint64_t i = 0; i < n; ++i) {
    if (int64_t(dataset.length(i)) <= options.maxLength)
      continue;
    if (!options.truncate)
      return Status::error(
          StatusCode::InvalidArgument,
          "'" + dataset.path() + "': example " + std::to_string(i) + " has " +
              std::to_string(dataset.length(i)) +
              " tokens; the model takes at most " +
              std::to_string(options.maxLength) + " (tokenize with " +
              "--max-length " + std::to_string(options.maxLength) + ")");
    if (truncated)
      ++*truncated;
  }
  std::vector<uint64_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  if (options.byLength)
    std::stable_sort(order.begin(), order.end(), [&](uint64_t a, uint64_t b) {
      return length(a) < length(b);
    });
  for (uint64_t begin = 0; begin < n; begin += uint64_t(options.batchSize)) {
    TokenBatch batch;
    uint64_t end = std::min(n, begin + uint64_t(options.batchSize));
    batch.rows.assign(order.begin() + begin, order.begin() + end);
    if (options.fixedLength >= 0) {
      batch.length = options.fixedLength;
    } else {
      // At least 1: a batch of empty examples still has a sequence dim.
      batch.length = 1;
      for (uint64_t row : batch.rows)
        batch.length = std::max(batch.length, length(row));
    }
    batches.push_back(std::move(batch));
  }
  return Status::ok();
}

static const char *const kSequenceArrays[] = {"input_ids", "attention_mask",
                                              "token_type_ids", "position_ids"};

Status lmopt::runtime::tokenArraySpecs(
    const TokenDatasetReader &dataset,
    const std::vector<std::pair<std::string, DType>> &names,
    const std::string &labelsName, std::vector<TokenArraySpec> &specs) {
  specs.clear();
  for (const auto &[name, dtype] : names) {
    TokenArraySpec spec{name, dtype, name == labelsName};
    bool known = spec.isLabels || std::find(std::begin(kSequenceArrays),
                                            std::end(kSequenceArrays),
                                            name) != std::end(kSequenceArrays);
    if (!known)
      return Status::error(StatusCode::InvalidArgument,
                           "'" + dataset.path() +
                               "': a token dataset gives input_ids, "
                               "attention_mask, token_type_ids, position_ids "
                               "and the labels '" +
                               labelsName + "'; the model also takes '" + name +
                               "'");
    if (dtype != DType::I64 && dtype != DType::I32)
      return Status::error(StatusCode::InvalidArgument,
                           "'" + dataset.path() + "': the model takes '" +
                               name + "' as " + dtypeName(dtype) +
                               "; a token dataset gives i64 or i32");
    if (spec.isLabels && !dataset.hasLabels())
      return Status::error(StatusCode::InvalidArgument,
                           "'" + dataset.path() +
                               "' has no labels, which the model takes as '" +
                               labelsName + "'; tokenize with --label-field");
    specs.push_back(std::move(spec));
  }
  return Status::ok();
}

template <typename T>
static void fill(Tensor &t, const std::vector<uint64_t> &rows, int64_t width,
                 const TokenDatasetReader &dataset, const std::string &name,
                 int64_t padId) {
  T *out = t.as<T>();
  std::vector<int32_t> ids;
  std::vector<uint8_t> types;
  for (size_t r = 0; r < rows.size(); ++r) {
    T *row = out + r * size_t(width);
    int64_t n = std::min<int64_t>(dataset.length(rows[r]), width);
    if (name == "input_ids") {
      dataset.example(rows[r], ids);
      for (int64_t j = 0; j < width; ++j)
        row[j] = T(j < n ? ids[size_t(j)] : padId);
    } else if (name == "attention_mask") {
      std::fill_n(row, n, T(1));
    } else if (name == "token_type_ids") {
      dataset.typeIds(rows[r], types);
      for (int64_t j = 0; j < n; ++j)
        row[j] = T(types[size_t(j)]);
    } else {
      for (int64_t j = 0; j < n; ++j)
        row[j] = T(j);
    }
  }
}

std::vector<NamedTensor> lmopt::runtime::tokenBatchArrays(
    const TokenDatasetReader &dataset, const std::vector<uint64_t> &rows,
    int64_t length, const std::vector<TokenArraySpec> &specs, int64_t padId) {
  std::vector<NamedTensor> arrays;
  const auto count = int64_t(rows.size());
  for (const TokenArraySpec &spec : specs) {
    NamedTensor t;
    t.name = spec.name;
    t.tensor.dtype = spec.dtype;
    t.tensor.shape = spec.isLabels ? std::vector<int64_t>{count}
                                   : std::vector<int64_t>{count, length};
    t.tensor.data.assign(
        size_t(t.tensor.elementCount()) * dtypeSize(spec.dtype), 0);
    bool i64 = spec.dtype == DType::I64;
    if (spec.isLabels) {
      for (int64_t r = 0; r < count; ++r) {
        int64_t label = dataset.label(rows[size_t(r)]);
        if (i64)
          t.tensor.as<int64_t>()[r] = label;
        else
          t.tensor.as<int32_t>()[r] = int32_t(label);
      }
    } else if (i64) {
      fill<int64_t>(t.tensor, rows, length, dataset, spec.name, padId);
    } else {
      fill<int32_t>(t.tensor, rows, length, dataset, spec.name, padId);
    }
    arrays.push_back(std::move(t));
  }
  return arrays;
}

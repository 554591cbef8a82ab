//===- TrainData.cpp - Training examples and batches ----------------------===//

#include "lmopt/Training/TrainData.h"

#include "lmopt/Format/TokenBatches.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <numeric>
#include <optional>
#include <random>

using namespace lmopt::runtime;
using namespace lmopt::training;

llvm::Error lmopt::training::trainError(const llvm::Twine &message) {
  return llvm::createStringError(message);
}

llvm::Error lmopt::training::toError(const Status &status,
                                     const llvm::Twine &context) {
  if (status)
    return llvm::Error::success();
  return trainError(
      (context.isTriviallyEmpty() ? llvm::Twine("") : context + ": ") +
      status.message());
}

/// Returns from the enclosing function with `status`'s error, if any.
#define TRY_STATUS(status, ...)                                                \
  if (llvm::Error error = toError(status, ##__VA_ARGS__))                      \
    return std::move(error);

/// The arrays an .npz would hold for the token dataset at `path`: each
/// example's ids padded with 0 to the entry's sequence length (its bound
/// when symbolic), the attention mask, token types, positions and labels.
static llvm::Expected<std::vector<NamedTensor>>
readTokenDataset(const std::string &path, const EntryInfo &entry,
                 const std::vector<std::string> &skip, const DataSpec &spec) {
  std::unique_ptr<TokenDatasetReader> dataset;
  TRY_STATUS(openTokenDataset(path, spec.tokenizerPath, dataset));
  int64_t seq = -1;
  for (const ValueInfo &input : entry.inputs)
    if (input.name == "input_ids" && input.dims.size() == 2)
      seq = input.dims[1] >= 0 ? input.dims[1] : input.maxDims[1];
  if (seq < 0)
    return trainError("'" + path +
         "': a token dataset feeds an [examples, length] "
         "input 'input_ids', which " +
         entry.name + " does not take");
  std::vector<std::pair<std::string, DType>> names;
  for (const ValueInfo &input : entry.inputs)
    if (!llvm::is_contained(skip, input.name))
      names.emplace_back(input.name, input.dtype);
  std::vector<TokenArraySpec> specs;
  TRY_STATUS(tokenArraySpecs(*dataset, names, spec.labels, specs));
  // One batch of every example in file order, refusing one over `seq`.
  TokenBatchOptions options;
  options.batchSize = std::max<int64_t>(1, int64_t(dataset->size()));
  options.byLength = false;
  options.fixedLength = seq;
  options.maxLength = seq;
  std::vector<TokenBatch> batches;
  TRY_STATUS(planTokenBatches(*dataset, options, batches));
  return tokenBatchArrays(
      *dataset, batches.empty() ? std::vector<uint64_t>() : batches[0].rows,
      seq, specs);
}

llvm::Expected<Dataset> lmopt::training::readDataset(const std::string &path,
                                 const EntryInfo &entry, int64_t batchSize,
                                 const std::vector<std::string> &skip,
                                 const DataSpec &spec) {
  Dataset data;
  data.path = path;
  if (isTokenDatasetPath(path)) {
    llvm::Expected<std::vector<NamedTensor>> arrays =
        readTokenDataset(path, entry, skip, spec);
    if (!arrays)
      return arrays.takeError();
    data.arrays = std::move(*arrays);
  } else {
    TRY_STATUS(readNpz(path, data.arrays), "'" + path + "'");
  }
  std::vector<std::string> wanted;
  for (const ValueInfo &input : entry.inputs)
    if (!llvm::is_contained(skip, input.name))
      wanted.push_back(input.name);
  for (const NamedTensor &t : data.arrays)
    if (!llvm::is_contained(wanted, t.name))
      return trainError("'" + path + "': member '" + t.name + "' is not an input of " +
           entry.name + "; it takes " + llvm::join(wanted, ", "));
  for (const ValueInfo &input : entry.inputs) {
    if (llvm::is_contained(skip, input.name))
      continue;
    const NamedTensor *t = data.find(input.name);
    if (!t)
      return trainError("'" + path + "' has no member '" + input.name + "', an input of " +
           entry.name);
    if (t->tensor.dtype != input.dtype)
      return trainError("'" + path + "': '" + input.name + "' has dtype " +
           dtypeName(t->tensor.dtype) + "; " + entry.name + " takes " +
           dtypeName(input.dtype));
    const std::vector<int64_t> &shape = t->tensor.shape;
    if (shape.size() != input.dims.size() || shape.empty())
      return trainError("'" + path + "': '" + input.name + "' has dims " +
           formatDims(shape) + "; " + entry.name + " takes " +
           formatDims(input.dims) + " per batch, one row per example");
    for (size_t d = 1; d < shape.size(); ++d)
      if ((input.dims[d] >= 0 && shape[d] != input.dims[d]) ||
          shape[d] > input.maxDims[d])
        return trainError("'" + path + "': '" + input.name + "' has rows of " +
             formatDims(std::vector<int64_t>(shape.begin() + 1, shape.end())) +
             "; " + entry.name + " takes " + formatDims(input.dims) +
             (input.dims == input.maxDims
                  ? std::string()
                  : " (at most " + formatDims(input.maxDims) + ")"));
    if (data.count && shape[0] != data.count)
      return trainError("'" + path + "': '" + input.name + "' has " +
           std::to_string(shape[0]) + " rows, other members " +
           std::to_string(data.count));
    data.count = shape[0];
  }
  // Labels out of range would silently count as ignored.
  const NamedTensor *labels = data.find(spec.labels);
  if (labels && spec.classes > 0 && labels->tensor.dtype == DType::I64) {
    const int64_t *values = labels->tensor.as<int64_t>();
    for (uint64_t i = 0; i < labels->tensor.elementCount(); ++i)
      if ((values[i] < 0 || values[i] >= spec.classes) &&
          values[i] != spec.ignoreIndex)
        return trainError("'" + path + "': label " + std::to_string(values[i]) +
             " (element " + std::to_string(i) + " of '" + spec.labels +
             "') is outside [0, " + std::to_string(spec.classes) +
             ") and is not the ignore index " +
             std::to_string(spec.ignoreIndex));
  }
  if (data.count < batchSize)
    return trainError("'" + path + "' has " + std::to_string(data.count) +
         " examples, fewer than one batch of " + std::to_string(batchSize));
  if (const NamedTensor *mask = data.find("attention_mask");
      mask && mask->tensor.dtype == DType::I64 &&
      mask->tensor.shape.size() == 2) {
    int64_t width = mask->tensor.shape[1];
    const int64_t *values = mask->tensor.as<int64_t>();
    data.lengths.resize(size_t(data.count));
    for (int64_t i = 0; i < data.count; ++i)
      data.lengths[size_t(i)] =
          std::count_if(values + i * width, values + (i + 1) * width,
                        [](int64_t v) { return v != 0; });
  }
  return data;
}

int64_t lmopt::training::trimPadding(std::vector<NamedTensor> &inputs,
                                 const EntryInfo &entry) {
  auto info = [&](const std::string &name) -> const ValueInfo * {
    for (const ValueInfo &input : entry.inputs)
      if (input.name == name)
        return &input;
    return nullptr;
  };
  auto maskIt = llvm::find_if(
      inputs, [](const NamedTensor &t) { return t.name == "attention_mask"; });
  const ValueInfo *maskInfo = info("attention_mask");
  if (maskIt == inputs.end() || !maskInfo || maskInfo->dims.size() != 2 ||
      maskInfo->dims[1] >= 0 || maskIt->tensor.shape.size() != 2 ||
      maskIt->tensor.dtype != DType::I64)
    return -1;
  const int64_t rows = maskIt->tensor.shape[0], full = maskIt->tensor.shape[1];
  const int64_t *mask = maskIt->tensor.as<int64_t>();
  int64_t longest = 1;
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t j = full - 1; j >= longest; --j)
      if (mask[r * full + j]) {
        longest = j + 1;
        break;
      }
  if (longest == full)
    return full;
  for (NamedTensor &t : inputs) {
    const ValueInfo *in = info(t.name);
    if (!in || in->dims.size() != 2 || in->dims[1] >= 0 ||
        t.tensor.shape.size() != 2 || t.tensor.shape[1] != full)
      continue;
    size_t element = dtypeSize(t.tensor.dtype);
    std::vector<uint8_t> kept(size_t(rows * longest) * element);
    for (int64_t r = 0; r < rows; ++r)
      std::memcpy(kept.data() + size_t(r * longest) * element,
                  t.tensor.data.data() + size_t(r * full) * element,
                  size_t(longest) * element);
    t.tensor.data = std::move(kept);
    t.tensor.shape[1] = longest;
  }
  return longest;
}

std::vector<NamedTensor> lmopt::training::gather(const Dataset &data,
                                             llvm::ArrayRef<int64_t> rows) {
  std::vector<NamedTensor> out;
  for (const NamedTensor &t : data.arrays) {
    NamedTensor piece;
    piece.name = t.name;
    piece.tensor.dtype = t.tensor.dtype;
    piece.tensor.shape = t.tensor.shape;
    piece.tensor.shape[0] = int64_t(rows.size());
    size_t rowBytes = t.tensor.data.size() / size_t(t.tensor.shape[0]);
    piece.tensor.data.resize(rowBytes * rows.size());
    for (size_t i = 0; i < rows.size(); ++i)
      std::memcpy(piece.tensor.data.data() + i * rowBytes,
                  t.tensor.data.data() + size_t(rows[i]) * rowBytes, rowBytes);
    out.push_back(std::move(piece));
  }
  return out;
}

std::vector<int64_t> lmopt::training::epochOrder(const Dataset &data, int64_t epoch,
                                             int64_t batchSize,
                                             const Ordering &ordering) {
  std::vector<int64_t> order(static_cast<size_t>(data.count));
  std::iota(order.begin(), order.end(), 0);
  if (ordering.shuffle) {
    std::mt19937_64 rng(ordering.seed * 1000003u + uint64_t(epoch));
    std::shuffle(order.begin(), order.end(), rng);
  }
  if (ordering.groupByLength && !data.lengths.empty()) {
    size_t group = size_t(batchSize) * 50;
    for (size_t begin = 0; begin < order.size(); begin += group) {
      auto end = order.begin() + std::min(order.size(), begin + group);
      std::stable_sort(order.begin() + begin, end, [&](int64_t a, int64_t b) {
        return data.lengths[size_t(a)] > data.lengths[size_t(b)];
      });
    }
  }
  return order;
}

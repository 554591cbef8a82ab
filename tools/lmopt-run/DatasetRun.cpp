//===- DatasetRun.cpp - lmopt-run over a token dataset --------------------===//

#include "DatasetRun.h"

#include "lmopt/Format/Npy.h"
#include "lmopt/Format/TokenBatches.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <map>

using namespace lmopt::runtime;
using namespace lmopt_run;

static Status invalid(const std::string &message) {
  return Status::error(StatusCode::InvalidArgument, message);
}

/// Grows `t` to `rows` rows with zeros (a static batch dim's last batch).
static void padRows(Tensor &t, int64_t rows) {
  if (t.shape.empty() || t.shape[0] >= rows)
    return;
  size_t rowBytes = t.shape[0] ? t.data.size() / size_t(t.shape[0]) : 0;
  if (!t.shape[0]) {
    rowBytes = dtypeSize(t.dtype);
    for (size_t d = 1; d < t.shape.size(); ++d)
      rowBytes *= size_t(t.shape[d]);
  }
  t.data.resize(rowBytes * size_t(rows), 0);
  t.shape[0] = rows;
}

/// Copies a C-ordered block of dims `from` into a zeroed block of dims
/// `to` (each at least as large), element by element of `elem` bytes.
static void copyPadded(const uint8_t *src, const int64_t *from, uint8_t *dst,
                       const int64_t *to, size_t rank, size_t elem) {
  if (rank == 0) {
    std::memcpy(dst, src, elem);
    return;
  }
  size_t srcStride = elem, dstStride = elem;
  for (size_t d = 1; d < rank; ++d) {
    srcStride *= size_t(from[d]);
    dstStride *= size_t(to[d]);
  }
  for (int64_t i = 0; i < from[0]; ++i)
    copyPadded(src + size_t(i) * srcStride, from + 1,
               dst + size_t(i) * dstStride, to + 1, rank - 1, elem);
}

namespace {
/// One output over the dataset: each batch's rows, placed at the end.
struct Gathered {
  DType dtype = DType::F32;
  std::vector<int64_t> maxInner;
  std::vector<std::pair<std::vector<uint64_t>, Tensor>> pieces;
};
} // namespace

/// The rows of `out` that hold `rows` (the first ones), kept for --output.
static Status keepRows(const NamedTensor &out, const TokenBatch &batch,
                       int64_t ranRows, Gathered &g) {
  const Tensor &t = out.tensor;
  if (t.shape.empty() || t.shape[0] != ranRows)
    return invalid(fmt::format(
        "output '{}' has dims {}, not one row per example of the {}-row "
        "batch; --output with --dataset gathers outputs whose first dim is "
        "the batch",
        out.name, formatDims(t.shape), ranRows));
  if (g.pieces.empty()) {
    g.dtype = t.dtype;
    g.maxInner.assign(t.shape.begin() + 1, t.shape.end());
  }
  if (g.maxInner.size() + 1 != t.shape.size())
    return invalid("output '" + out.name + "' changes rank between batches");
  for (size_t d = 0; d < g.maxInner.size(); ++d)
    g.maxInner[d] = std::max(g.maxInner[d], t.shape[d + 1]);
  Tensor kept = t;
  kept.shape[0] = int64_t(batch.rows.size());
  kept.data.resize(t.data.size() / size_t(ranRows) * batch.rows.size());
  g.pieces.emplace_back(batch.rows, std::move(kept));
  return Status::ok();
}

/// Writes the gathered outputs, row i the example of input position i,
/// and 'lengths', each example's token count.
static Status writeGathered(const TokenDatasetReader &dataset,
                            const std::map<std::string, Gathered> &gathered,
                            const std::vector<std::string> &order,
                            uint64_t maxLength, const std::string &path) {
  const auto n = int64_t(dataset.size());
  std::vector<NamedTensor> arrays;
  for (const std::string &name : order) {
    const Gathered &g = gathered.at(name);
    NamedTensor t;
    t.name = name;
    t.tensor.dtype = g.dtype;
    t.tensor.shape = {n};
    t.tensor.shape.insert(t.tensor.shape.end(), g.maxInner.begin(),
                          g.maxInner.end());
    size_t elem = dtypeSize(g.dtype);
    t.tensor.data.assign(size_t(t.tensor.elementCount()) * elem, 0);
    size_t dstRow = n ? t.tensor.data.size() / size_t(n) : 0;
    for (const auto &[rows, piece] : g.pieces) {
      size_t srcRow = piece.data.size() / rows.size();
      for (size_t r = 0; r < rows.size(); ++r)
        copyPadded(piece.data.data() + r * srcRow, piece.shape.data() + 1,
                   t.tensor.data.data() + dataset.source(rows[r]) * dstRow,
                   g.maxInner.data(), g.maxInner.size(), elem);
    }
    arrays.push_back(std::move(t));
  }
  NamedTensor lengths;
  lengths.name = "lengths";
  lengths.tensor.dtype = DType::I64;
  lengths.tensor.shape = {n};
  lengths.tensor.data.resize(size_t(n) * sizeof(int64_t));
  for (int64_t i = 0; i < n; ++i)
    lengths.tensor.as<int64_t>()[dataset.source(uint64_t(i))] =
        std::min<int64_t>(dataset.length(uint64_t(i)), int64_t(maxLength));
  arrays.push_back(std::move(lengths));
  return writeNpz(path, arrays);
}

Status lmopt_run::runDataset(Session &session, size_t entry,
                             const DatasetRunOptions &o) {
  const EntryInfo &info = session.entries()[entry];
  std::unique_ptr<TokenDatasetReader> dataset;
  if (Status st = openTokenDataset(o.dataset, o.tokenizer, dataset); !st)
    return st;
  auto ids =
      std::find_if(info.inputs.begin(), info.inputs.end(),
                   [](const ValueInfo &v) { return v.name == "input_ids"; });
  if (ids == info.inputs.end() || ids->dims.size() != 2)
    return invalid("'" + o.dataset +
                   "': a token dataset feeds a [batch, "
                   "length] input 'input_ids', which entry '" +
                   info.name + "' does not take");
  std::vector<std::pair<std::string, DType>> names;
  for (const ValueInfo &input : info.inputs)
    names.emplace_back(input.name, input.dtype);
  std::vector<TokenArraySpec> specs;
  if (Status st = tokenArraySpecs(*dataset, names, "labels", specs); !st)
    return st;

  // The batch dim: a static one is every batch's (the last padded with
  // empty rows); a symbolic one takes up to its bound.
  const int64_t staticBatch = ids->dims[0], batchBound = ids->maxDims[0];
  TokenBatchOptions options;
  options.batchSize =
      o.batch
          ? o.batch
          : (staticBatch >= 0 ? staticBatch : std::min<int64_t>(8, batchBound));
  if (staticBatch >= 0 && options.batchSize != staticBatch)
    return invalid(fmt::format(
        "'--batch {}': entry '{}' takes batches of exactly {} ('input_ids' {})",
        options.batchSize, info.name, staticBatch, formatDims(ids->dims)));
  if (options.batchSize > batchBound)
    return invalid(fmt::format(
        "'--batch {}': entry '{}' takes at most {} rows ('input_ids' at most "
        "{})",
        options.batchSize, info.name, batchBound, formatDims(ids->maxDims)));
  options.byLength = o.byLength;
  options.fixedLength = ids->dims[1];
  options.maxLength = ids->maxDims[1];
  options.truncate = o.truncate;
  std::vector<TokenBatch> batches;
  uint64_t truncated = 0;
  if (Status st = planTokenBatches(*dataset, options, batches, &truncated); !st)
    return st;

  using Clock = std::chrono::steady_clock;
  double modelSeconds = 0, batchSeconds = 0;
  uint64_t tokens = 0, positions = 0;
  std::map<std::string, Gathered> gathered;
  std::vector<std::string> outputOrder;
  std::vector<NamedTensor> outputs;
  for (const TokenBatch &batch : batches) {
    Clock::time_point start = Clock::now();
    std::vector<NamedTensor> arrays =
        tokenBatchArrays(*dataset, batch.rows, batch.length, specs);
    const int64_t ranRows =
        std::max<int64_t>(staticBatch, int64_t(batch.rows.size()));
    for (NamedTensor &a : arrays)
      padRows(a.tensor, ranRows);
    std::vector<NamedTensorView> views;
    for (const NamedTensor &a : arrays)
      views.push_back({a.name, TensorView::of(a.tensor)});
    Clock::time_point built = Clock::now();
    if (Status st = session.run(entry, views, outputs); !st)
      return Status::error(st.code(),
                           fmt::format("batch of examples {}...: {}",
                                       batch.rows.front(), st.message()));
    Clock::time_point ran = Clock::now();
    batchSeconds += std::chrono::duration<double>(built - start).count();
    modelSeconds += std::chrono::duration<double>(ran - built).count();
    for (uint64_t row : batch.rows)
      tokens +=
          std::min<uint64_t>(dataset->length(row), uint64_t(options.maxLength));
    positions += uint64_t(ranRows) * uint64_t(batch.length);
    if (o.output.empty())
      continue;
    for (const NamedTensor &out : outputs) {
      if (!gathered.count(out.name))
        outputOrder.push_back(out.name);
      if (out.name == "lengths")
        return invalid("entry '" + info.name +
                       "' has an output 'lengths', "
                       "the name --output gives the examples' lengths");
      if (Status st = keepRows(out, batch, ranRows, gathered[out.name]); !st)
        return st;
    }
  }
  fmt::print("dataset: {} examples, {} batches of {}{}, {} tokens, {:.1f}% "
             "padding, {} truncated\n",
             dataset->size(), batches.size(), options.batchSize,
             o.byLength ? " by length" : " in dataset order", tokens,
             positions ? 100.0 * double(positions - tokens) / double(positions)
                       : 0.0,
             truncated);
  fmt::print("run: {:.3f} s in the model, {:.1f} examples/s, {:.0f} tokens/s; "
             "{:.3f} s building batches\n",
             modelSeconds,
             modelSeconds > 0 ? double(dataset->size()) / modelSeconds : 0.0,
             modelSeconds > 0 ? double(tokens) / modelSeconds : 0.0,
             batchSeconds);
  if (o.output.empty())
    return Status::ok();
  if (Status st = writeGathered(*dataset, gathered, outputOrder,
                                uint64_t(options.maxLength), o.output);
      !st)
    return st;
  fmt::print("wrote {} outputs and 'lengths' to '{}' (one row per example, in "
             "input order)\n",
             outputOrder.size(), o.output);
  return Status::ok();
}

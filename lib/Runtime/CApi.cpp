//===- CApi.cpp - C API of the lmopt runtime ------------------------------===//
//
// Thin wrappers over the C++ API: arguments are checked, C++ Status values
// become heap-allocated lmoptStatus objects, and nothing escapes as an
// exception or a crash.
//
//===----------------------------------------------------------------------===//

#include "lmopt/Format/Bundle.h"
#include "lmopt/Format/Npy.h"
#include "lmopt/Runtime/Session.h"
#include "lmopt/Runtime/lmopt_runtime.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <new>

using namespace lmopt::runtime;

struct lmoptStatusImpl {
  lmoptStatusCode code;
  std::string message;
};

struct lmoptBundleImpl {
  std::unique_ptr<BundleReader> reader;
};

struct lmoptSessionImpl {
  std::unique_ptr<Session> session;
};

/// Returned when allocating a status fails; never freed.
static lmoptStatusImpl outOfMemoryStatus{LMOPT_STATUS_IO_ERROR,
                                         "out of memory"};

static lmoptStatus wrap(const Status &status) {
  if (status.isOk())
    return nullptr;
  auto *s = new (std::nothrow)
      lmoptStatusImpl{lmoptStatusCode(status.code()), status.message()};
  return s ? s : &outOfMemoryStatus;
}

static lmoptStatus invalidArgument(const std::string &message) {
  return wrap(Status::error(StatusCode::InvalidArgument, message));
}

/// Calls `body`, turning an allocation that fails by exception (a vector or
/// string in the runtime) into the out-of-memory status: no exception
/// crosses the C boundary.
template <typename Body> static lmoptStatus guarded(Body body) {
  try {
    return body();
  } catch (const std::bad_alloc &) {
    return &outOfMemoryStatus;
  }
}

extern "C" {

lmoptStatusCode lmoptStatusGetCode(lmoptStatus status) {
  return status ? status->code : LMOPT_STATUS_OK;
}

const char *lmoptStatusGetMessage(lmoptStatus status) {
  return status ? status->message.c_str() : "";
}

void lmoptStatusDestroy(lmoptStatus status) {
  if (status != &outOfMemoryStatus)
    delete status;
}

lmoptStatus lmoptBundleOpen(const char *path, lmoptBundle *outBundle) {
  return guarded([&]() -> lmoptStatus {
    if (!outBundle)
      return invalidArgument("lmoptBundleOpen: 'outBundle' is null");
    *outBundle = nullptr;
    if (!path)
      return invalidArgument("lmoptBundleOpen: 'path' is null");
    std::unique_ptr<BundleReader> reader;
    if (Status st = BundleReader::open(path, reader); !st)
      return wrap(st);
    auto *bundle = new (std::nothrow) lmoptBundleImpl{std::move(reader)};
    if (!bundle)
      return &outOfMemoryStatus;
    *outBundle = bundle;
    return nullptr;
  });
}

lmoptStatus lmoptBundleClose(lmoptBundle bundle) {
  delete bundle;
  return nullptr;
}

lmoptStatus lmoptBundleFormatVersion(lmoptBundle bundle, uint32_t *outMajor,
                                     uint32_t *outMinor) {
  if (!bundle || !outMajor || !outMinor)
    return invalidArgument("lmoptBundleFormatVersion: a pointer argument is "
                           "null");
  *outMajor = bundle->reader->versionMajor();
  *outMinor = bundle->reader->versionMinor();
  return nullptr;
}

lmoptStatus lmoptBundleSectionCount(lmoptBundle bundle, size_t *outCount) {
  if (!bundle || !outCount)
    return invalidArgument("lmoptBundleSectionCount: a pointer argument is "
                           "null");
  *outCount = bundle->reader->sectionCount();
  return nullptr;
}

static lmoptStatus checkIndex(const char *fn, lmoptBundle bundle,
                              size_t index) {
  size_t count = bundle->reader->sectionCount();
  if (index < count)
    return nullptr;
  return invalidArgument(std::string(fn) + ": section index " +
                         std::to_string(index) +
                         " is out of range; the "
                         "bundle has " +
                         std::to_string(count) + " sections");
}

lmoptStatus lmoptBundleSectionInfo(lmoptBundle bundle, size_t index,
                                   lmoptSectionInfo *outInfo) {
  if (!bundle || !outInfo)
    return invalidArgument("lmoptBundleSectionInfo: a pointer argument is "
                           "null");
  if (lmoptStatus st = checkIndex("lmoptBundleSectionInfo", bundle, index))
    return st;
  const SectionInfo &info = bundle->reader->sectionInfo(index);
  outInfo->name = info.name.c_str();
  outInfo->kind = uint32_t(info.kind);
  outInfo->offset = info.offset;
  outInfo->size = info.size;
  outInfo->alignment = info.alignment;
  outInfo->checksum = info.checksum;
  return nullptr;
}

lmoptStatus lmoptBundleSectionData(lmoptBundle bundle, size_t index,
                                   const void **outData, uint64_t *outSize) {
  if (!bundle || !outData || !outSize)
    return invalidArgument("lmoptBundleSectionData: a pointer argument is "
                           "null");
  *outData = nullptr;
  *outSize = 0;
  if (lmoptStatus st = checkIndex("lmoptBundleSectionData", bundle, index))
    return st;
  SectionView view;
  if (Status st = bundle->reader->section(index, view); !st)
    return wrap(st);
  *outData = view.data;
  *outSize = view.size;
  return nullptr;
}

size_t lmoptDTypeSize(int32_t dtype) { return dtypeSize(DType(dtype)); }

const char *lmoptDTypeName(int32_t dtype) { return dtypeName(DType(dtype)); }

lmoptStatus lmoptTensorReadNpy(const char *path, lmoptTensor **outTensor) {
  return guarded([&]() -> lmoptStatus {
    if (!outTensor)
      return invalidArgument("lmoptTensorReadNpy: 'outTensor' is null");
    *outTensor = nullptr;
    if (!path)
      return invalidArgument("lmoptTensorReadNpy: 'path' is null");
    Tensor tensor;
    if (Status st = readNpy(path, tensor); !st)
      return wrap(st);
    // One allocation: the struct, the dims, then the data at a 64-byte offset.
    size_t dimsOffset = sizeof(lmoptTensor);
    size_t dataOffset = dimsOffset + tensor.shape.size() * sizeof(int64_t);
    dataOffset = (dataOffset + 63) & ~size_t(63);
    size_t total = (dataOffset + tensor.data.size() + 63) & ~size_t(63);
    void *block = std::aligned_alloc(64, total);
    if (!block)
      return &outOfMemoryStatus;
    auto *bytes = static_cast<uint8_t *>(block);
    auto *t = new (block) lmoptTensor();
    t->dtype = int32_t(tensor.dtype);
    t->rank = int32_t(tensor.shape.size());
    t->dims = reinterpret_cast<int64_t *>(bytes + dimsOffset);
    if (!tensor.shape.empty())
      std::memcpy(t->dims, tensor.shape.data(),
                  tensor.shape.size() * sizeof(int64_t));
    t->data = bytes + dataOffset;
    if (!tensor.data.empty())
      std::memcpy(t->data, tensor.data.data(), tensor.data.size());
    t->byteSize = tensor.data.size();
    *outTensor = t;
    return nullptr;
  });
}

lmoptStatus lmoptTensorWriteNpy(const char *path, const lmoptTensor *tensor) {
  return guarded([&]() -> lmoptStatus {
    if (!path || !tensor)
      return invalidArgument("lmoptTensorWriteNpy: a pointer argument is null");
    if (!isValidDType(int(tensor->dtype)))
      return invalidArgument("lmoptTensorWriteNpy: invalid dtype " +
                             std::to_string(int(tensor->dtype)));
    if (tensor->rank < 0 || size_t(tensor->rank) > kMaxRank)
      return invalidArgument("lmoptTensorWriteNpy: rank " +
                             std::to_string(tensor->rank) + " is outside [0, " +
                             std::to_string(kMaxRank) + "]");
    if (tensor->rank > 0 && !tensor->dims)
      return invalidArgument("lmoptTensorWriteNpy: 'dims' is null for rank " +
                             std::to_string(tensor->rank));
    if (tensor->byteSize > 0 && !tensor->data)
      return invalidArgument("lmoptTensorWriteNpy: 'data' is null for " +
                             std::to_string(tensor->byteSize) + " bytes");
    Tensor t;
    t.dtype = DType(tensor->dtype);
    t.shape.assign(tensor->dims, tensor->dims + tensor->rank);
    // Check the shape against byteSize before copying the caller's bytes.
    uint64_t expected = dtypeSize(t.dtype);
    for (size_t i = 0; i < t.shape.size(); ++i) {
      if (t.shape[i] < 0)
        return invalidArgument("lmoptTensorWriteNpy: negative dim " +
                               std::to_string(t.shape[i]) + " at index " +
                               std::to_string(i));
      if (__builtin_mul_overflow(expected, uint64_t(t.shape[i]), &expected))
        return invalidArgument("lmoptTensorWriteNpy: the byte size of the "
                               "shape overflows 64 bits");
    }
    if (expected != tensor->byteSize)
      return invalidArgument("lmoptTensorWriteNpy: a tensor of dtype '" +
                             std::string(dtypeName(t.dtype)) + "' and rank " +
                             std::to_string(t.shape.size()) + " needs " +
                             std::to_string(expected) +
                             " bytes; 'byteSize' is " +
                             std::to_string(tensor->byteSize));
    const auto *data = static_cast<const uint8_t *>(tensor->data);
    t.data.assign(data, data + tensor->byteSize);
    return wrap(writeNpy(path, t));
  });
}

void lmoptTensorDestroy(lmoptTensor *tensor) {
  if (!tensor)
    return;
  tensor->~lmoptTensor();
  std::free(tensor);
}

//===----------------------------------------------------------------------===//
// Sessions
//===----------------------------------------------------------------------===//

lmoptStatus lmoptSessionCreate(const char *path,
                               const lmoptSessionOptions *options,
                               lmoptSession *outSession) {
  return guarded([&]() -> lmoptStatus {
    if (!outSession)
      return invalidArgument("lmoptSessionCreate: 'outSession' is null");
    *outSession = nullptr;
    if (!path)
      return invalidArgument("lmoptSessionCreate: 'path' is null");
    SessionOptions sessionOptions;
    if (options)
      sessionOptions.threads = options->threads;
    std::unique_ptr<Session> session;
    if (Status st = Session::create(path, sessionOptions, session); !st)
      return wrap(st);
    auto *impl = new (std::nothrow) lmoptSessionImpl{std::move(session)};
    if (!impl)
      return &outOfMemoryStatus;
    *outSession = impl;
    return nullptr;
  });
}

lmoptStatus lmoptSessionDestroy(lmoptSession session) {
  delete session;
  return nullptr;
}

static lmoptStatus valueCount(const char *fn, lmoptSession session, bool inputs,
                              size_t *outCount) {
  if (!session || !outCount)
    return invalidArgument(std::string(fn) + ": a pointer argument is null");
  const Session &s = *session->session;
  *outCount = inputs ? s.inputs().size() : s.outputs().size();
  return nullptr;
}

static lmoptStatus valueInfo(const char *fn, lmoptSession session, bool inputs,
                             size_t index, lmoptValueInfo *outInfo) {
  if (!session || !outInfo)
    return invalidArgument(std::string(fn) + ": a pointer argument is null");
  const Session &s = *session->session;
  const std::vector<ValueInfo> &values = inputs ? s.inputs() : s.outputs();
  if (index >= values.size())
    return invalidArgument(
        std::string(fn) + ": index " + std::to_string(index) +
        " is out of range; the model has " + std::to_string(values.size()) +
        (inputs ? " inputs" : " outputs"));
  const ValueInfo &v = values[index];
  outInfo->name = v.name.c_str();
  outInfo->dtype = int32_t(v.dtype);
  outInfo->rank = int32_t(v.dims.size());
  outInfo->dims = v.dims.data();
  return nullptr;
}

lmoptStatus lmoptSessionInputCount(lmoptSession session, size_t *outCount) {
  return valueCount("lmoptSessionInputCount", session, true, outCount);
}

lmoptStatus lmoptSessionOutputCount(lmoptSession session, size_t *outCount) {
  return valueCount("lmoptSessionOutputCount", session, false, outCount);
}

lmoptStatus lmoptSessionInputInfo(lmoptSession session, size_t index,
                                  lmoptValueInfo *outInfo) {
  return valueInfo("lmoptSessionInputInfo", session, true, index, outInfo);
}

lmoptStatus lmoptSessionOutputInfo(lmoptSession session, size_t index,
                                   lmoptValueInfo *outInfo) {
  return valueInfo("lmoptSessionOutputInfo", session, false, index, outInfo);
}

static size_t alignUp(size_t n) { return (n + 63) & ~size_t(63); }

lmoptStatus lmoptSessionEntryCount(lmoptSession session, size_t *outCount) {
  if (!session || !outCount)
    return invalidArgument(
        "lmoptSessionEntryCount: a pointer argument is null");
  *outCount = session->session->entries().size();
  return nullptr;
}

lmoptStatus lmoptSessionEntryName(lmoptSession session, size_t index,
                                  const char **outName) {
  if (!session || !outName)
    return invalidArgument("lmoptSessionEntryName: a pointer argument is null");
  const std::vector<EntryInfo> &entries = session->session->entries();
  if (index >= entries.size())
    return invalidArgument("lmoptSessionEntryName: index " +
                           std::to_string(index) +
                           " is out of range; the bundle has " +
                           std::to_string(entries.size()) + " entries");
  *outName = entries[index].name.c_str();
  return nullptr;
}

static lmoptStatus runEntry(const char *fn, lmoptSession session,
                            const char *entryName, size_t numInputs,
                            const char *const *names, const lmoptTensor *inputs,
                            size_t *outNumOutputs, lmoptTensor **outOutputs) {
  if (!session || !outNumOutputs || !outOutputs)
    return invalidArgument(std::string(fn) + ": a pointer argument is null");
  *outNumOutputs = 0;
  *outOutputs = nullptr;
  if (numInputs && (!names || !inputs))
    return invalidArgument(std::string(fn) +
                           ": 'names' or 'inputs' is null "
                           "for " +
                           std::to_string(numInputs) + " inputs");
  Session &s = *session->session;
  size_t entry = 0;
  if (entryName) {
    long index = s.findEntry(entryName);
    if (index < 0)
      return invalidArgument(std::string(fn) + ": the bundle has no entry '" +
                             entryName + "'; its entries are " +
                             s.entryNames());
    entry = size_t(index);
  }
  std::vector<NamedTensorView> views(numInputs);
  for (size_t i = 0; i < numInputs; ++i) {
    const lmoptTensor &t = inputs[i];
    std::string which = std::string(fn) + ": input " + std::to_string(i);
    if (!names[i])
      return invalidArgument(which + " has a null name");
    which += " '" + std::string(names[i]) + "'";
    if (!isValidDType(int(t.dtype)))
      return invalidArgument(which + " has invalid dtype " +
                             std::to_string(t.dtype));
    if (t.rank < 0 || size_t(t.rank) > kMaxRank)
      return invalidArgument(which + " has rank " + std::to_string(t.rank) +
                             ", outside [0, " + std::to_string(kMaxRank) + "]");
    if (t.rank > 0 && !t.dims)
      return invalidArgument(which + " has null dims for rank " +
                             std::to_string(t.rank));
    views[i].name = names[i];
    views[i].tensor.dtype = DType(t.dtype);
    views[i].tensor.dims = t.dims;
    views[i].tensor.rank = size_t(t.rank);
    views[i].tensor.data = t.data;
    views[i].tensor.byteSize = t.byteSize;
  }
  // Held until the outputs are copied: they live in the session's arena,
  // which another thread's run of this session would overwrite.
  auto lock = s.lockRuns();
  if (Status st = s.execute(entry, views.data(), views.size()); !st)
    return wrap(st);

  // One allocation: the tensor structs, every output's dims, then each
  // output's data at a 64-byte offset.
  const std::vector<ValueInfo> &outputs = s.entries()[entry].outputs;
  size_t n = outputs.size();
  size_t dimsOffset = n * sizeof(lmoptTensor);
  size_t total = dimsOffset;
  for (size_t i = 0; i < n; ++i)
    total += s.outputTensor(i).dims.size() * sizeof(int64_t);
  std::vector<size_t> dataOffsets(n);
  for (size_t i = 0; i < n; ++i) {
    const PlanTensor &t = s.outputTensor(i);
    total = alignUp(total);
    dataOffsets[i] = total;
    total += size_t(t.byteSize());
  }
  void *block = std::aligned_alloc(64, alignUp(std::max<size_t>(total, 1)));
  if (!block)
    return &outOfMemoryStatus;
  auto *bytes = static_cast<uint8_t *>(block);
  auto *tensors = reinterpret_cast<lmoptTensor *>(bytes);
  auto *dims = reinterpret_cast<int64_t *>(bytes + dimsOffset);
  for (size_t i = 0; i < n; ++i) {
    const PlanTensor &t = s.outputTensor(i);
    lmoptTensor *out = new (&tensors[i]) lmoptTensor();
    out->dtype = int32_t(t.dtype);
    out->rank = int32_t(t.dims.size());
    out->dims = dims;
    std::copy(t.dims.begin(), t.dims.end(), dims);
    dims += t.dims.size();
    out->data = bytes + dataOffsets[i];
    out->byteSize = t.byteSize();
    if (out->byteSize)
      std::memcpy(out->data, s.outputData(i), size_t(out->byteSize));
  }
  *outNumOutputs = n;
  *outOutputs = tensors;
  return nullptr;
}

lmoptStatus lmoptSessionRun(lmoptSession session, size_t numInputs,
                            const char *const *names, const lmoptTensor *inputs,
                            size_t *outNumOutputs, lmoptTensor **outOutputs) {
  return guarded([&]() -> lmoptStatus {
    return runEntry("lmoptSessionRun", session, nullptr, numInputs, names,
                    inputs, outNumOutputs, outOutputs);
  });
}

lmoptStatus lmoptSessionRunEntry(lmoptSession session, const char *entry,
                                 size_t numInputs, const char *const *names,
                                 const lmoptTensor *inputs,
                                 size_t *outNumOutputs,
                                 lmoptTensor **outOutputs) {
  return guarded([&]() -> lmoptStatus {
    if (!entry)
      return invalidArgument("lmoptSessionRunEntry: 'entry' is null");
    return runEntry("lmoptSessionRunEntry", session, entry, numInputs, names,
                    inputs, outNumOutputs, outOutputs);
  });
}

void lmoptTensorArrayDestroy(lmoptTensor *tensors) { std::free(tensors); }

lmoptStatus lmoptSessionResetStates(lmoptSession session) {
  return guarded([&]() -> lmoptStatus {
    if (!session)
      return invalidArgument("lmoptSessionResetStates: 'session' is null");
    return wrap(session->session->resetStates());
  });
}

lmoptStatus lmoptSessionSaveStates(lmoptSession session, const char *path) {
  return guarded([&]() -> lmoptStatus {
    if (!session || !path)
      return invalidArgument("lmoptSessionSaveStates: a pointer argument is "
                             "null");
    return wrap(session->session->saveStates(path));
  });
}

lmoptStatus lmoptSessionLoadStates(lmoptSession session, const char *path) {
  return guarded([&]() -> lmoptStatus {
    if (!session || !path)
      return invalidArgument("lmoptSessionLoadStates: a pointer argument is "
                             "null");
    return wrap(session->session->loadStates(path));
  });
}

} // extern "C"

/*===- lmopt_runtime.h - C API of the lmopt runtime ---------------*- C -*-===//
 *
 * Plain C, usable from C, C++ and any FFI. Conventions:
 *  - Every function returns an `lmoptStatus`. NULL means success; anything
 *    else is an error the caller owns and releases with lmoptStatusDestroy().
 *    Accessors accept NULL and then report LMOPT_STATUS_OK and "".
 *  - Nothing prints, aborts or exits; bad files and bad arguments produce a
 *    status whose message names the file, the part and the offending values.
 *  - Objects the runtime allocates (bundles, sessions, tensors) are released with their
 *    own destroy/close call; passing NULL to those is a no-op.
 *
 *===----------------------------------------------------------------------===*/

#ifndef LMOPT_RUNTIME_LMOPT_RUNTIME_H
#define LMOPT_RUNTIME_LMOPT_RUNTIME_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/*===-- Status ------------------------------------------------------------===*/

/* Same values as lmopt::runtime::StatusCode. */
typedef enum lmoptStatusCode {
  LMOPT_STATUS_OK = 0,
  LMOPT_STATUS_INVALID_ARGUMENT = 1,
  LMOPT_STATUS_IO_ERROR = 2,
  LMOPT_STATUS_INVALID_FORMAT = 3,
  LMOPT_STATUS_VERSION_MISMATCH = 4,
  LMOPT_STATUS_CHECKSUM_MISMATCH = 5,
  LMOPT_STATUS_UNSUPPORTED = 6,
  LMOPT_STATUS_NOT_FOUND = 7,
  LMOPT_STATUS_DEVICE_ERROR = 8,
} lmoptStatusCode;

typedef struct lmoptStatusImpl *lmoptStatus;

lmoptStatusCode lmoptStatusGetCode(lmoptStatus status);
/* Valid until the status is destroyed. */
const char *lmoptStatusGetMessage(lmoptStatus status);
void lmoptStatusDestroy(lmoptStatus status);

/*===-- Bundles -----------------------------------------------------------===*/

typedef struct lmoptBundleImpl *lmoptBundle;

/* Same values as lmopt::runtime::SectionKind. */
typedef enum lmoptSectionKind {
  LMOPT_SECTION_UNKNOWN = 0,
  LMOPT_SECTION_PLAN = 1,
  LMOPT_SECTION_WEIGHTS = 2,
  LMOPT_SECTION_KERNELS = 3,
  LMOPT_SECTION_META = 4,
  LMOPT_SECTION_REQUIREMENTS = 5,
} lmoptSectionKind;

typedef struct lmoptSectionInfo {
  const char *name; /* valid while the bundle is open */
  uint32_t kind;    /* an lmoptSectionKind, or a newer kind's number */
  uint64_t offset;
  uint64_t size;
  uint64_t alignment;
  uint64_t checksum; /* XXH64 of the section's bytes */
} lmoptSectionInfo;

/* Maps and validates the bundle at `path` (see docs/bundle-format.md). On
 * failure *outBundle is set to NULL. */
lmoptStatus lmoptBundleOpen(const char *path, lmoptBundle *outBundle);
lmoptStatus lmoptBundleClose(lmoptBundle bundle);
lmoptStatus lmoptBundleFormatVersion(lmoptBundle bundle, uint32_t *outMajor,
                                     uint32_t *outMinor);
lmoptStatus lmoptBundleSectionCount(lmoptBundle bundle, size_t *outCount);
/* Table entry `index`; does not check the section's checksum. */
lmoptStatus lmoptBundleSectionInfo(lmoptBundle bundle, size_t index,
                                   lmoptSectionInfo *outInfo);
/* The section's bytes (in the read-only mapping, valid while the bundle is
 * open), after verifying its checksum. */
lmoptStatus lmoptBundleSectionData(lmoptBundle bundle, size_t index,
                                   const void **outData, uint64_t *outSize);

/*===-- Tensors and .npy files --------------------------------------------===*/

/* Same values as lmopt::runtime::DType. */
typedef enum lmoptDType {
  LMOPT_DTYPE_F32 = 1,
  LMOPT_DTYPE_F64 = 2,
  LMOPT_DTYPE_F16 = 3,
  LMOPT_DTYPE_BF16 = 4,
  LMOPT_DTYPE_I8 = 5,
  LMOPT_DTYPE_U8 = 6,
  LMOPT_DTYPE_I16 = 7,
  LMOPT_DTYPE_U16 = 8,
  LMOPT_DTYPE_I32 = 9,
  LMOPT_DTYPE_U32 = 10,
  LMOPT_DTYPE_I64 = 11,
  LMOPT_DTYPE_U64 = 12,
  LMOPT_DTYPE_BOOL = 13,
} lmoptDType;

/* A dense C-ordered tensor. For lmoptTensorWriteNpy the caller owns every
 * pointer; tensors from lmoptTensorReadNpy are owned by the runtime and
 * released with lmoptTensorDestroy. */
typedef struct lmoptTensor {
  int32_t dtype; /* an lmoptDType */
  int32_t rank;
  int64_t *dims;     /* `rank` entries */
  void *data;        /* `byteSize` bytes, 64-byte aligned when read */
  uint64_t byteSize; /* product of dims times the element size */
} lmoptTensor;

/* Dtypes travel as int32_t so that any value a caller stores is well defined
 * and can be refused with a status. */
/* Element size in bytes of an lmoptDType, or 0 for an invalid value. */
size_t lmoptDTypeSize(int32_t dtype);
/* "f32", ..., "bool"; "invalid" for a value outside lmoptDType. */
const char *lmoptDTypeName(int32_t dtype);

lmoptStatus lmoptTensorReadNpy(const char *path, lmoptTensor **outTensor);
lmoptStatus lmoptTensorWriteNpy(const char *path, const lmoptTensor *tensor);
void lmoptTensorDestroy(lmoptTensor *tensor);

/*===-- Sessions ----------------------------------------------------------===*/

/* A compiled model ready to run (docs/cpu-backend.md, "Runtime sessions and
 * lmopt-run"). Any number of sessions can live in one process and run at
 * once. Several threads may call one session: its runs and state calls take
 * turns on a lock of the session (each run is whole, its outputs are that
 * run's); only lmoptSessionDestroy must come after every other call on the
 * session has returned. */
typedef struct lmoptSessionImpl *lmoptSession;

typedef struct lmoptSessionOptions {
  /* Threads for library steps; 0 keeps oneDNN's default (OMP_NUM_THREADS or
   * all cores). */
  int32_t threads;
} lmoptSessionOptions;

/* A model input or output as the plan declares it; the pointers are valid
 * while the session lives. */
typedef struct lmoptValueInfo {
  const char *name;
  int32_t dtype; /* an lmoptDType */
  int32_t rank;
  const int64_t *dims; /* -1 for a symbolic dim (a bundle compiled with
                        * --max-shape): any size up to its bound */
} lmoptValueInfo;

/* Opens, validates and prepares the bundle at `path`: the plan is checked
 * step by step, kernels are loaded and the activation arena is allocated.
 * `options` may be NULL (defaults). On failure *outSession is set to NULL. */
lmoptStatus lmoptSessionCreate(const char *path,
                               const lmoptSessionOptions *options,
                               lmoptSession *outSession);
lmoptStatus lmoptSessionDestroy(lmoptSession session);

lmoptStatus lmoptSessionInputCount(lmoptSession session, size_t *outCount);
lmoptStatus lmoptSessionInputInfo(lmoptSession session, size_t index,
                                  lmoptValueInfo *outInfo);
lmoptStatus lmoptSessionOutputCount(lmoptSession session, size_t *outCount);
lmoptStatus lmoptSessionOutputInfo(lmoptSession session, size_t index,
                                   lmoptValueInfo *outInfo);

/* Runs the model. `names[i]` names `inputs[i]`; every model input must be
 * given exactly once, with the model's dtype and dims (symbolic dims: any
 * size within the bounds that keeps the plan's assumptions; the outputs'
 * dims follow) and `byteSize` matching them. Inputs are read in place (a buffer
 * not 64-byte aligned that a generated kernel reads is copied first) and not
 * modified. On success *outOutputs is an array of *outNumOutputs tensors in the
 * order of lmoptSessionOutputInfo, holding copies the caller releases with one
 * lmoptTensorArrayDestroy; on failure it is NULL and *outNumOutputs 0. */
lmoptStatus lmoptSessionRun(lmoptSession session, size_t numInputs,
                            const char *const *names,
                            const lmoptTensor *inputs, size_t *outNumOutputs,
                            lmoptTensor **outOutputs);
/* Releases an array from lmoptSessionRun (all its tensors at once). */
void lmoptTensorArrayDestroy(lmoptTensor *tensors);

/* Entry points: a bundle may have several (a prefill and a decode step, a
 * training step) sharing weights and states; lmoptSessionRun runs the first,
 * lmoptSessionRunEntry the one named `entry`, with the same contract.
 * lmoptSessionInputInfo and lmoptSessionOutputInfo describe the first. */
lmoptStatus lmoptSessionEntryCount(lmoptSession session, size_t *outCount);
/* The name is valid while the session lives. */
lmoptStatus lmoptSessionEntryName(lmoptSession session, size_t index,
                                  const char **outName);
lmoptStatus lmoptSessionRunEntry(lmoptSession session, const char *entry,
                                 size_t numInputs, const char *const *names,
                                 const lmoptTensor *inputs,
                                 size_t *outNumOutputs,
                                 lmoptTensor **outOutputs);

/* States: tensors the session owns and keeps from one run to the next (a
 * key/value cache, parameters). Reset puts each back to its initial value;
 * save writes those that have a value to an .npz archive (atomically), one
 * member per state; load reads such an archive, checks every member (a
 * state of the bundle, its dtype and rank, dims within its capacity)
 * before any state changes, and leaves the states it does not name. */
lmoptStatus lmoptSessionResetStates(lmoptSession session);
lmoptStatus lmoptSessionSaveStates(lmoptSession session, const char *path);
lmoptStatus lmoptSessionLoadStates(lmoptSession session, const char *path);

#ifdef __cplusplus
}
#endif

#endif /* LMOPT_RUNTIME_LMOPT_RUNTIME_H */

//===- CudaApi.cpp - The CUDA driver and cuBLASLt, loaded at run time ----===//
//
// Each library is opened once per process, the first time a session asks
// for the cuda device; the outcome (the table, or why it could not be
// built) is kept, so later sessions fail or succeed the same way without
// opening anything again.
//
//===----------------------------------------------------------------------===//

#include "CudaApi.h"

#include <dlfcn.h>

#include <cstdlib>
#include <mutex>

using namespace lmopt::runtime;
using namespace lmopt::runtime::cuda;

// The name an entry point's macro expands to ("cuMemAlloc_v2").
#define LMOPT_CUDA_STRINGIZE(x) #x
#define LMOPT_CUDA_SYMBOL(x) LMOPT_CUDA_STRINGIZE(x)

static constexpr const char *kDriverLibrary = "libcuda.so.1";
static constexpr const char *kCublasLtLibrary = "libcublasLt.so.13";

/// Opens `library` from LMOPT_CUDA_LIBRARY_PATH when it is set and holds
/// it, else from the loader's search path.
static Status openLibrary(const char *library, void *&handle) {
  std::string tried;
  if (const char *dir = std::getenv("LMOPT_CUDA_LIBRARY_PATH"); dir && *dir) {
    std::string path = std::string(dir) + "/" + library;
    handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle)
      return Status::ok();
    tried =
        std::string(" and from LMOPT_CUDA_LIBRARY_PATH (") + dlerror() + ")";
  }
  handle = dlopen(library, RTLD_NOW | RTLD_LOCAL);
  if (handle)
    return Status::ok();
  std::string error = dlerror();
  bool isDriver = std::string(library) == kDriverLibrary;
  return Status::error(
      StatusCode::Unsupported,
      std::string(isDriver ? "no CUDA driver: " : "no cuBLASLt: ") + library +
          " not found (" + error + ")" + tried + "; install the " +
          (isDriver ? "NVIDIA driver" : "CUDA toolkit's cuBLAS") +
          " or set LMOPT_CUDA_LIBRARY_PATH to the directory holding it");
}

template <typename Function>
static Status lookup(void *handle, const char *library, const char *symbol,
                     Function &out) {
  out = reinterpret_cast<Function>(dlsym(handle, symbol));
  if (out)
    return Status::ok();
  return Status::error(StatusCode::Unsupported,
                       std::string(library) + " has no entry point '" + symbol +
                           "'; it is older than this runtime needs");
}

static std::string versionText(int version) {
  return std::to_string(version / 1000) + "." +
         std::to_string(version % 1000 / 10);
}

static Status loadDriver(CudaApi &api) {
  void *handle = nullptr;
  if (Status st = openLibrary(kDriverLibrary, handle); !st)
    return st;
#define LMOPT_CUDA_LOOKUP(name)                                                \
  if (Status st =                                                              \
          lookup(handle, kDriverLibrary, LMOPT_CUDA_SYMBOL(name), api.name);   \
      !st)                                                                     \
    return st;
  LMOPT_CUDA_DRIVER_FUNCTIONS(LMOPT_CUDA_LOOKUP)
#undef LMOPT_CUDA_LOOKUP
  if (CUresult r = api.cuDriverGetVersion(&api.driverVersion);
      r != CUDA_SUCCESS)
    return Status::error(
        StatusCode::Unsupported,
        r == CUDA_ERROR_STUB_LIBRARY
            ? "no CUDA driver: the libcuda.so.1 found is the CUDA toolkit's "
              "stub, not a driver"
            : "no CUDA driver: " + api.describe("cuDriverGetVersion", r));
  // A driver runs whatever a toolkit of its major version built (minor
  // version compatibility), and cuBLASLt 13 needs no newer one.
  int needed = CUDA_VERSION / 1000 * 1000;
  if (api.driverVersion < needed)
    return Status::error(StatusCode::Unsupported,
                         "the CUDA driver is version " +
                             versionText(api.driverVersion) +
                             ", older than CUDA " + versionText(needed) +
                             " this runtime was built for; update the "
                             "NVIDIA driver");
  if (CUresult result = api.cuInit(0); result != CUDA_SUCCESS)
    return Status::error(StatusCode::Unsupported,
                         "the CUDA driver cannot start: " +
                             api.describe("cuInit", result));
  return Status::ok();
}

static Status loadCublasLt(CudaApi &api) {
  void *handle = nullptr;
  if (Status st = openLibrary(kCublasLtLibrary, handle); !st)
    return st;
#define LMOPT_CUDA_LOOKUP(name)                                                \
  if (Status st =                                                              \
          lookup(handle, kCublasLtLibrary, LMOPT_CUDA_SYMBOL(name), api.name); \
      !st)                                                                     \
    return st;
  LMOPT_CUBLASLT_FUNCTIONS(LMOPT_CUDA_LOOKUP)
#undef LMOPT_CUDA_LOOKUP
  return Status::ok();
}

Status lmopt::runtime::cuda::loadCudaApi(const CudaApi *&out,
                                         bool withCublasLt) {
  static std::mutex mutex;
  static CudaApi api;
  static bool driverTried = false, cublasLtTried = false;
  static Status driverStatus, cublasLtStatus;
  std::lock_guard<std::mutex> lock(mutex);
  if (!driverTried) {
    driverTried = true;
    driverStatus = loadDriver(api);
  }
  if (!driverStatus)
    return driverStatus;
  if (withCublasLt && !cublasLtTried) {
    cublasLtTried = true;
    cublasLtStatus = loadCublasLt(api);
  }
  if (withCublasLt && !cublasLtStatus)
    return cublasLtStatus;
  out = &api;
  return Status::ok();
}

std::string CudaApi::describe(const char *what, CUresult result) const {
  const char *name = nullptr, *text = nullptr;
  if (cuGetErrorName)
    cuGetErrorName(result, &name);
  if (cuGetErrorString)
    cuGetErrorString(result, &text);
  std::string out = std::string(what) + " failed: ";
  out += name ? name : "CUDA error " + std::to_string(int(result));
  if (text)
    out += std::string(" (") + text + ")";
  return out;
}

std::string CudaApi::describe(const char *what, cublasStatus_t status) const {
  const char *text =
      cublasLtGetStatusString ? cublasLtGetStatusString(status) : nullptr;
  return std::string(what) + " failed: " +
         (text ? text : "cuBLAS status " + std::to_string(int(status)));
}

Status CudaApi::check(const char *what, CUresult result) const {
  if (result == CUDA_SUCCESS)
    return Status::ok();
  return Status::error(StatusCode::DeviceError, describe(what, result));
}

Status CudaApi::check(const char *what, cublasStatus_t status) const {
  if (status == CUBLAS_STATUS_SUCCESS)
    return Status::ok();
  return Status::error(StatusCode::DeviceError, describe(what, status));
}

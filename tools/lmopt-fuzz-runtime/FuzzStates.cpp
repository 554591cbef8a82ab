//===- FuzzStates.cpp - libFuzzer target for session state files ----------===//
//
// Each input is a state file (the .npz of Session::saveStates: training
// checkpoints' states, lmopt-train --save-states, a saved key/value cache)
// loaded into a session of a bundle with a state: names, dtypes and dims
// checked against the bundle's states, nothing changed unless every member
// fits. What loads is run (which may refuse states of other dims than the
// entry takes, with a Status) and must save to a file that loads again.
//
// The bundle is the committed seed test/fuzz/lmopt-fuzz-bundle/states.lmopt
// (a [1, 4, 2] f32 cache shared by two entries), or the file named by
// LMOPT_FUZZ_STATES_BUNDLE; run from the repository root.
//
//===----------------------------------------------------------------------===//

#include "FuzzUtil.h"

#include "lmopt/Runtime/Session.h"

#include <cstdio>
#include <cstdlib>
#include <memory>

using namespace lmopt::runtime;
using lmopt::fuzz::check;

static std::unique_ptr<Session> session;

extern "C" int LLVMFuzzerInitialize(int *, char ***) {
  const char *path = std::getenv("LMOPT_FUZZ_STATES_BUNDLE");
  std::string bundle =
      path ? path : "test/fuzz/lmopt-fuzz-bundle/states.lmopt";
  Status status = Session::create(bundle, SessionOptions(), session);
  if (!status) {
    std::fprintf(stderr,
                 "lmopt-fuzz-states: cannot open the bundle '%s' (%s); run "
                 "from the repository root or set LMOPT_FUZZ_STATES_BUNDLE\n",
                 bundle.c_str(), status.message().c_str());
    std::abort();
  }
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  check(bool(session->resetStates()), "resetStates failed");
  std::string path = lmopt::fuzz::writeInputFile(data, size, ".states.npz");
  if (!session->loadStates(path))
    return 0;
  // Loaded states are what the next run reads.
  std::vector<NamedTensor> inputs, outputs;
  for (const ValueInfo &input : session->entries()[0].inputs) {
    NamedTensor t;
    t.name = input.name;
    t.tensor.dtype = input.dtype;
    t.tensor.shape = input.maxDims;
    uint64_t count = 1;
    for (int64_t dim : input.maxDims)
      count *= uint64_t(dim);
    t.tensor.data.assign(count * dtypeSize(input.dtype), 0);
    inputs.push_back(std::move(t));
  }
  (void)session->run(inputs, outputs);
  std::string saved = path + ".saved.npz";
  check(bool(session->saveStates(saved)), "saveStates failed");
  check(bool(session->loadStates(saved)), "saved states do not load");
  std::remove(saved.c_str());
  return 0;
}

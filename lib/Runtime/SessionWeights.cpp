//===- SessionWeights.cpp - The weights layout a session reads ------------===//
//
// A session reads its plan's weights from the mapped `weights` section,
// unless the bundle rebuilds the full layout at load: random placeholders
// for a bundle compiled with --omit-weights (OmittedWeights.h), or the
// expansion of N:M-sparse weights stored compressed (SparseWeights.h).
//
//===----------------------------------------------------------------------===//

#include "SessionImpl.h"
#include "lmopt/Runtime/Session.h"

#include "lmopt/Format/Bundle.h"
#include "lmopt/Format/OmittedWeights.h"
#include "lmopt/Format/SparseWeights.h"

#include <unistd.h>

#include <cstdlib>

using namespace lmopt::runtime;

static void freeWeights(void *weights) { std::free(weights); }

Status Session::loadWeights(const SessionOptions &options) {
  const BundleReader &reader = *reader_;
  SectionView weightsView;
  if (reader.findSection("weights") >= 0)
    if (Status st = reader.section("weights", weightsView); !st)
      return st;
  weights_ = weightsView.data;
  weightsSize_ = weightsView.size;
  bool omittedSection = reader.findSection("omitted-weights") >= 0;
  bool sparseSection = reader.findSection("sparse-weights") >= 0;
  if (omittedSection && sparseSection)
    return Status::error(StatusCode::InvalidFormat,
                         "bundle '" + path_ +
                             "' has both an omitted-weights and a "
                             "sparse-weights section; a bundle has at most "
                             "one of them");
  if (!omittedSection && options.randomWeightsSeed)
    return Status::error(StatusCode::InvalidArgument,
                         "bundle '" + path_ +
                             "' has its weights; random weights are for "
                             "bundles compiled with --omit-weights");
  if (omittedSection && !options.randomWeightsSeed)
    return Status::error(
        StatusCode::InvalidArgument,
        "bundle '" + path_ +
            "' was compiled with --omit-weights: its weights are random "
            "placeholders for speed measurements; run it with "
            "--random-weights=SEED (lmopt-run) to time it, never to use its "
            "outputs");

  // The full layout in page-aligned host memory the session owns, like the
  // mapping it replaces; never released page by page
  // (releaseWeightPages), since nothing could read the pages back.
  auto rebuild = [&](uint64_t size, const char *what, auto fill) -> Status {
    static const uint64_t page = uint64_t(sysconf(_SC_PAGESIZE));
    uint64_t bytes = (size + page - 1) / page * page;
    void *buffer =
        bytes ? std::aligned_alloc(size_t(page), size_t(bytes)) : nullptr;
    if (bytes && !buffer)
      return Status::error(StatusCode::DeviceError,
                           "out of memory: bundle '" + path_ + "' needs " +
                               std::to_string(size) +
                               " bytes of host memory for its " + what);
    ownedWeights_ = {static_cast<uint8_t *>(buffer), freeWeights};
    if (Status st = fill(ownedWeights_.get()); !st)
      return st;
    weights_ = ownedWeights_.get();
    weightsSize_ = size;
    return Status::ok();
  };

  if (sparseSection) {
    SectionView view;
    SparseWeights sparse;
    if (Status st = reader.section("sparse-weights", view); !st)
      return st;
    if (Status st = parseSparseWeights(view.data, view.size, weightsView.size,
                                       path_, sparse);
        !st)
      return st;
    return rebuild(
        sparse.fullSize, "expanded sparse weights", [&](uint8_t *out) {
          return expandSparseWeights(weightsView.data, sparse, path_, out);
        });
  }
  if (!omittedSection)
    return Status::ok();
  SectionView view;
  OmittedWeights omitted;
  if (Status st = reader.section("omitted-weights", view); !st)
    return st;
  if (Status st = parseOmittedWeights(view.data, view.size, weightsView.size,
                                      path_, omitted);
      !st)
    return st;
  Status st = rebuild(omitted.fullSize, "random weights", [&](uint8_t *out) {
    fillRandomWeights(weightsView.data, omitted, *options.randomWeightsSeed,
                      out);
    return Status::ok();
  });
  randomWeights_ = st.isOk();
  return st;
}

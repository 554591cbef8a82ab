//===- FuzzNpz.cpp - libFuzzer target for the .npy and .npz readers -------===//
//
// Each input is parsed as .npy bytes and read as a .npz archive (stored and
// deflated members, ZIP64 records, CRCs). The readers must report problems
// as a Status; any crash, sanitizer report, leak or allocation past
// -rss_limit_mb is a bug. What parses is written back and read again: the
// writers must produce what the readers accept.
//
//===----------------------------------------------------------------------===//

#include "FuzzUtil.h"

#include "lmopt/Format/Npy.h"

using namespace lmopt::runtime;
using lmopt::fuzz::check;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  Tensor tensor;
  if (parseNpy(data, size, "input", tensor)) {
    check(bool(checkTensor(tensor, "input")), "parsed tensor inconsistent");
    std::vector<uint8_t> bytes;
    if (serializeNpy(tensor, "input", bytes)) {
      Tensor again;
      check(bool(parseNpy(bytes.data(), bytes.size(), "rewritten", again)),
            "rewritten .npy does not parse");
      check(again.shape == tensor.shape && again.data == tensor.data,
            "rewritten .npy differs");
    }
  }
  std::string path = lmopt::fuzz::writeInputFile(data, size, ".npz");
  std::vector<NamedTensor> members;
  if (readNpz(path, members))
    for (const NamedTensor &member : members)
      check(bool(checkTensor(member.tensor, member.name)),
            "archive member inconsistent");
  return 0;
}

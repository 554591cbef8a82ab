//===- AtomicWrite.h - Whole files written atomically -----------*- C++ -*-===//
//
// For the tools' small outputs (a trainer file, an exported model): the
// bytes go to a temporary file beside the target, checked write by write,
// flushed, then renamed over it; on any failure the temporary is removed and
// the target is as it was. A device or pipe target (/dev/null, /dev/full)
// is written in place. The runtime's own writers (bundles, .npy, .npz,
// token datasets) use the same writer.
//
//===----------------------------------------------------------------------===//

#ifndef LMOPT_FORMAT_ATOMICWRITE_H
#define LMOPT_FORMAT_ATOMICWRITE_H

#include "lmopt/Format/Status.h"

#include <string>
#include <string_view>

namespace lmopt::runtime {

/// Writes `bytes` as the whole of `path`; an IoError names the path and the
/// system's reason ("No space left on device").
Status writeFileAtomically(const std::string &path, std::string_view bytes);

} // namespace lmopt::runtime

#endif // LMOPT_FORMAT_ATOMICWRITE_H

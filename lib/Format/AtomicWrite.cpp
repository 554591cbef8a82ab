//===- AtomicWrite.cpp - Whole files written atomically -------------------===//

#include "lmopt/Format/AtomicWrite.h"

#include "FileUtil.h"

using namespace lmopt::runtime;

Status lmopt::runtime::writeFileAtomically(const std::string &path,
                                           std::string_view bytes) {
  AtomicFile file;
  if (Status st = file.open(path); !st)
    return st;
  if (Status st = file.write(bytes.data(), bytes.size()); !st)
    return st;
  return file.commit();
}

//===- Bundle.h - The .lmopt bundle container -------------------*- C++ -*-===//
//
// A bundle is one file holding named sections: a 64-byte header, a section
// table, then the sections at aligned offsets so that weights can be mapped
// and used in place. Every structure is little-endian and checksummed with
// XXH64. docs/bundle-format.md gives the byte layout and the rules for
// versions; this header is its implementation.
//
//===----------------------------------------------------------------------===//

#ifndef LMOPT_FORMAT_BUNDLE_H
#define LMOPT_FORMAT_BUNDLE_H

#include "lmopt/Format/Status.h"

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace lmopt::runtime {

/// Format constants (docs/bundle-format.md).
namespace bundle_format {
inline constexpr char kMagic[8] = {'L', 'M', 'O', 'P', 'T', 'B', 'N', 'D'};
inline constexpr uint16_t kVersionMajor = 1;
inline constexpr uint16_t kVersionMinor = 0;
inline constexpr uint32_t kHeaderSize = 64;
inline constexpr uint32_t kSectionEntrySize = 80;
inline constexpr size_t kMaxSectionNameLength = 31; // plus a NUL in 32 bytes
/// Every section starts at a multiple of this; alignments are powers of two
/// between kMinAlignment and kMaxAlignment.
inline constexpr uint64_t kMinAlignment = 64;
inline constexpr uint64_t kMaxAlignment = 1 << 16;
/// Sections up to this size are checksummed when the bundle is opened; larger
/// ones when first handed out (unless BundleReader::Options::verifyAll).
inline constexpr uint64_t kEagerVerifyLimit = 1 << 20;
inline constexpr uint32_t kMaxSectionCount = 1 << 16;
} // namespace bundle_format

/// What a section holds. Unknown kinds (from a newer minor version) are kept
/// as their number and handed out unchanged.
enum class SectionKind : uint32_t {
  Unknown = 0,
  /// The execution plan: kernel calls with buffer offsets, the memory plan.
  Plan = 1,
  /// Weights, each at an aligned offset inside the section.
  Weights = 2,
  /// Compiled kernels for the bundle's target.
  Kernels = 3,
  /// JSON text: model name, inputs and outputs with names, dtypes, shape
  /// bounds.
  Meta = 4,
  /// Text lines: what the bundle needs of the machine (`cpu-feature <name>`),
  /// checked before any code is loaded (Requirements.h).
  Requirements = 5,
  /// What `lmopt-compile --omit-weights` left out of the weights section
  /// (OmittedWeights.h).
  OmittedWeights = 6,
  /// The weights stored N:M-compressed in the weights section
  /// (SparseWeights.h).
  SparseWeights = 7,
};

/// Returns "plan", "weights", "kernels", "meta", "requires",
/// "omitted-weights", "sparse-weights" or "unknown".
const char *sectionKindName(SectionKind kind);

/// A section as the table describes it.
struct SectionInfo {
  std::string name;
  SectionKind kind = SectionKind::Unknown;
  uint64_t offset = 0;
  uint64_t size = 0;
  uint64_t alignment = bundle_format::kMinAlignment;
  uint64_t checksum = 0;
};

/// A validated section: its bytes live in the reader's mapping and stay valid
/// as long as the reader does.
struct SectionView {
  const SectionInfo *info = nullptr;
  const uint8_t *data = nullptr;
  uint64_t size = 0;
};

/// Builds a bundle in memory and writes it atomically.
class BundleWriter {
public:
  /// Adds a section that refers to `data`, which must stay alive and unchanged
  /// until write() returns. Fails on an empty, too long or duplicate name or
  /// on an alignment that is not a power of two in [64, 65536].
  Status addSection(std::string name, SectionKind kind, const void *data,
                    uint64_t size,
                    uint64_t alignment = bundle_format::kMinAlignment);
  /// Adds a section that owns its bytes.
  Status addSection(std::string name, SectionKind kind,
                    std::vector<uint8_t> bytes,
                    uint64_t alignment = bundle_format::kMinAlignment);

  /// Writes the bundle to `path`: to a temporary file in the same folder,
  /// renamed over `path` when complete. On failure `path` is untouched and the
  /// temporary file is removed.
  Status write(const std::string &path) const;

  size_t sectionCount() const { return sections_.size(); }

private:
  struct Pending {
    SectionInfo info;
    const uint8_t *data = nullptr;
    std::shared_ptr<std::vector<uint8_t>> owned;
  };
  std::vector<Pending> sections_;
};

/// Maps a bundle read-only and validates it before handing out sections.
///
/// open() checks the magic, the version, the header and table checksums, the
/// file size, every table entry (name, alignment, offset and size in range,
/// no overlap with the header, the table or another section) and the checksum
/// of every section up to kEagerVerifyLimit bytes. Larger sections are
/// checksummed the first time section() hands them out, so opening a bundle
/// with gigabytes of weights touches only the pages it needs; set
/// Options::verifyAll to check everything up front. Thread-safe after open().
class BundleReader {
public:
  struct Options {
    bool verifyAll = false;
  };

  BundleReader(const BundleReader &) = delete;
  BundleReader &operator=(const BundleReader &) = delete;
  ~BundleReader();

  static Status open(const std::string &path,
                     std::unique_ptr<BundleReader> &out);
  static Status open(const std::string &path, const Options &options,
                     std::unique_ptr<BundleReader> &out);

  const std::string &path() const { return path_; }
  uint16_t versionMajor() const { return versionMajor_; }
  uint16_t versionMinor() const { return versionMinor_; }
  uint64_t fileSize() const { return fileSize_; }

  size_t sectionCount() const { return sections_.size(); }
  /// Table entry `index` (< sectionCount()); no checksum is checked.
  const SectionInfo &sectionInfo(size_t index) const {
    return sections_[index];
  }
  /// Index of the section named `name`, or -1.
  long findSection(std::string_view name) const;

  /// Hands out section `index` after verifying its checksum (once).
  Status section(size_t index, SectionView &out) const;
  Status section(std::string_view name, SectionView &out) const;

private:
  BundleReader();
  Status validate(const Options &options);
  Status verifySection(size_t index) const;

  struct Impl;
  std::unique_ptr<Impl> impl_;
  std::string path_;
  uint16_t versionMajor_ = 0;
  uint16_t versionMinor_ = 0;
  uint64_t fileSize_ = 0;
  std::vector<SectionInfo> sections_;
  /// Per section: 0 not yet verified, 1 verified. Failures are not cached so
  /// that a message is produced on every call.
  std::unique_ptr<std::atomic<uint8_t>[]> verified_;
};

} // namespace lmopt::runtime

#endif // LMOPT_FORMAT_BUNDLE_H

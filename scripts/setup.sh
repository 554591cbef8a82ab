#!/usr/bin/env bash
# Installs what lmopt needs on a Debian 12 machine, then configures and builds.
# Idempotent: with everything present and built it only runs an incremental
# ninja (a few seconds). Environment: BUILD_DIR (default build),
# BUILD_TYPE (default Release), LMOPT_CMAKE_ARGS (extra configure flags).
#
# --fuzz: also installs clang's OpenMP and sanitizer runtimes and builds the
# libFuzzer targets with clang-22 in FUZZ_BUILD_DIR (default build-fuzz);
# FUZZ_TARGETS (default lmopt-fuzzers-runtime, the targets that link no MLIR)
# picks what to build; lmopt-fuzzers adds the ONNX importer's (CI builds and
# runs them all, docs/testing.md).
set -euo pipefail

fuzz=0
for arg in "$@"; do
  case $arg in
  --fuzz) fuzz=1 ;;
  *)
    echo "usage: $0 [--fuzz]" >&2
    exit 2
    ;;
  esac
done

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build_dir=${BUILD_DIR:-$root/build}
build_type=${BUILD_TYPE:-Release}

log() { printf '[setup] %s\n' "$*"; }

# Debian packages: LLVM/MLIR 22 (with lit, FileCheck and the NVPTX target),
# the build tools, protobuf for the ONNX importer, oneDNN for CPU GEMMs; gcc
# is also lmopt-compile's linker driver for the generated kernels.
apt_packages=(
  cmake ninja-build ccache gcc g++ libc6-dev python3
  llvm-22-dev libmlir-22-dev mlir-22-tools llvm-22-tools clang-22
  libprotobuf-dev protobuf-compiler libdnnl-dev libfmt-dev
  libgtest-dev zlib1g-dev libutf8proc-dev libxxhash-dev python3-dev
)
# The fuzz build: clang finds no OpenMP (which the runtime's oneDNN steps
# use) without libomp, and -fsanitize=fuzzer,address links clang's runtimes.
((fuzz)) && apt_packages+=(libomp-22-dev libclang-rt-22-dev)
missing=()
for pkg in "${apt_packages[@]}"; do
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q 'ok installed' ||
    missing+=("$pkg")
done
if ((${#missing[@]})); then
  sudo=""
  [[ $(id -u) -eq 0 ]] || sudo=sudo
  log "installing Debian packages: ${missing[*]}"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

# Python packages for reference numerics in the tests, and for the Python
# package: nanobind and scikit-build-core build it, pytest runs its tests
# (PyPI; module:package where the names differ).
python=${PYTHON:-python3}
py_missing=()
for spec in onnx onnxruntime numpy tokenizers nanobind \
  scikit_build_core:scikit-build-core pytest; do
  "$python" -c "import ${spec%%:*}" 2>/dev/null || py_missing+=("${spec#*:}")
done
if ((${#py_missing[@]})); then
  log "installing Python packages: ${py_missing[*]}"
  "$python" -m pip install --quiet --disable-pip-version-check "${py_missing[@]}"
fi

if [[ ! -f $build_dir/build.ninja ]]; then
  log "configuring $build_dir ($build_type)"
  # shellcheck disable=SC2086
  cmake -G Ninja -S "$root" -B "$build_dir" \
    -DCMAKE_BUILD_TYPE="$build_type" \
    -DPython3_EXECUTABLE="$(command -v "$python")" \
    ${LMOPT_CMAKE_ARGS:-} >/dev/null
fi

log "building ($build_dir)"
start=$(date +%s)
ninja -C "$build_dir" all >"$build_dir/last-build.log" 2>&1 || {
  tail -n 60 "$build_dir/last-build.log" >&2
  log "build failed; full log: $build_dir/last-build.log"
  exit 1
}
log "build up to date in $(($(date +%s) - start)) s; tools in $build_dir/bin"

((fuzz)) || exit 0

# A separate tree: the sanitizer and coverage flags go only on the libraries
# under test, whose other users in this tree would then fail to link, so
# only the fuzz targets are built here.
fuzz_dir=${FUZZ_BUILD_DIR:-$root/build-fuzz}
if [[ ! -f $fuzz_dir/build.ninja ]]; then
  log "configuring $fuzz_dir (clang-22, fuzzers)"
  cmake -G Ninja -S "$root" -B "$fuzz_dir" \
    -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_C_COMPILER=clang-22 -DCMAKE_CXX_COMPILER=clang++-22 \
    -DCMAKE_CXX_FLAGS=-gline-tables-only -DCMAKE_C_FLAGS=-gline-tables-only \
    -DLMOPT_BUILD_FUZZERS=ON \
    -DPython3_EXECUTABLE="$(command -v "$python")" >/dev/null
fi
log "building fuzz targets ($fuzz_dir: ${FUZZ_TARGETS:-lmopt-fuzzers-runtime})"
start=$(date +%s)
# shellcheck disable=SC2086
ninja -C "$fuzz_dir" ${FUZZ_TARGETS:-lmopt-fuzzers-runtime} >"$fuzz_dir/last-build.log" 2>&1 || {
  tail -n 60 "$fuzz_dir/last-build.log" >&2
  log "fuzz build failed; full log: $fuzz_dir/last-build.log"
  exit 1
}
log "fuzz targets up to date in $(($(date +%s) - start)) s; in $fuzz_dir/bin"

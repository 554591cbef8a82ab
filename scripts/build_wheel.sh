#!/usr/bin/env bash
# Builds the lmopt wheel into dist/ (or $1) with the project's own set-up:
# scripts/setup.sh installs nanobind, scikit-build-core and the Debian
# packages; scikit-build-core then configures CMake (pyproject.toml) and
# builds the extension in build/pip-<tag>, reusing ccache. Install with
# `pip install dist/lmopt-*.whl`. The wheel links the system's LLVM/MLIR 22
# shared libraries, oneDNN and protobuf, so it runs where the README's Debian
# packages are installed (docs/python.md).
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
out=${1:-$root/dist}
python=${PYTHON:-python3}

"$python" -c "import nanobind, scikit_build_core" 2>/dev/null || {
  echo "build_wheel: nanobind or scikit-build-core is missing; run scripts/setup.sh" >&2
  exit 1
}
# No build isolation: the build uses the nanobind and scikit-build-core
# already installed, so it needs no network.
"$python" -m pip wheel "$root" --no-build-isolation --no-deps -w "$out"
ls -l "$out"/lmopt-*.whl

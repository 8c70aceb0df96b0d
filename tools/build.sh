#!/bin/bash
# Builds storaged out of tree in ./build (configure options pass through).
set -euo pipefail
cd "$(dirname "$0")/.."
[ -x configure ] && [ configure -nt configure.ac ] || autoreconf -fi >/dev/null
mkdir -p build
cd build
[ -f Makefile ] || ../configure -q "$@"
make -s -j"$(nproc)"

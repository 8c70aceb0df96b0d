#!/bin/bash
# Builds storaged out of tree in ./build (configure options pass through).
# Quiet on success: what autoreconf, configure and make print goes to
# build/build.log, shown when a step fails; compiler warnings still reach
# stderr.
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p build
log=build/build.log
: >"$log"
step() {
	"$@" >>"$log" 2>&1 || {
		echo "build: '$*' failed; the end of its output (all of it in build/build.log):" >&2
		tail -n 40 "$log" >&2
		exit 1
	}
}
[ -x configure ] && [ configure -nt configure.ac ] || step autoreconf -fi
cd build
log=../$log
[ -f Makefile ] || step ../configure -q "$@"
make -s -j"$(nproc)" >>"$log"

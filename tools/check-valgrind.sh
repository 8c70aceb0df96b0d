#!/bin/bash
# Runs every unit test binary (tests/unit/test_*) and every fuzz corpus
# replay (tests/fuzz/replay_*) of an existing build under valgrind memcheck:
# any memory error or definite/indirect leak fails that binary.
#
#   tools/check-valgrind.sh [BUILD_DIR]     default: build
#
# Prints one line per binary, "PASS: valgrind: NAME" or "FAIL: valgrind:
# NAME" (the full report is in BUILD_DIR/valgrind/NAME.log), and exits 1
# when any failed.  The binaries must be built (make check builds them).
set -uo pipefail
cd "$(dirname "$0")/.."
dir=${1:-build}

if ! command -v valgrind >/dev/null; then
	echo "FAIL: valgrind: not installed (apt-get install valgrind)"
	exit 1
fi
bins=()
for b in "$dir"/tests/unit/test_* "$dir"/tests/fuzz/replay_*; do
	[ -f "$b" ] && [ -x "$b" ] && bins+=("$b")
done
if [ ${#bins[@]} -eq 0 ]; then
	echo "FAIL: valgrind: no test binaries in '$dir' (run make check there first)"
	exit 1
fi
mkdir -p "$dir/valgrind"
failed=0
for b in "${bins[@]}"; do
	name=$(basename "$b")
	log=$dir/valgrind/$name.log
	# Tests find their fixtures through compiled-in absolute paths, so they
	# run from any directory; cmocka's own output goes to the log too.
	if timeout 1200 valgrind -q --leak-check=full --show-leak-kinds=definite,indirect \
		--errors-for-leak-kinds=definite,indirect --error-exitcode=1 \
		--track-origins=yes "$b" >"$log" 2>&1; then
		echo "PASS: valgrind: $name"
	elif unhandled=$(grep -m1 -o 'unhandled [a-z0-9_-]*linux syscall: [0-9]*' "$log"); then
		# valgrind answers ENOSYS to a system call it does not know (Debian
		# 12's 3.19 lacks open_tree(2), 428): code that needs it (the new
		# mount API, Linux 5.12 the minimum) cannot run under it at all
		echo "SKIP: valgrind: $name: valgrind $(valgrind --version | sed 's/^valgrind-//') cannot run it (${unhandled}); see $log"
	else
		echo "FAIL: valgrind: $name (see $log)"
		failed=1
	fi
done
exit $failed

#!/bin/bash
# Second pass of the test suite under AddressSanitizer and
# UndefinedBehaviorSanitizer: builds out of tree in BUILD_DIR with
# --enable-sanitizers and runs `make check` there, one test at a time
# (the integration tests share the machine's loop devices).  make check
# points $STORAGED at that build's binary, so the integration tests run the
# instrumented storaged; unit tests and fuzz corpus replays run instrumented
# too.
#
#   tools/check-sanitizers.sh [BUILD_DIR]     default: build-asan
#
# Prints the harness's PASS/FAIL/SKIP lines as the tests finish, any failed test's log
# indented, then one verdict line at column 0,
# "PASS: sanitizer build: make check" or "FAIL: ...", and exits 1 on failure.
set -uo pipefail
cd "$(dirname "$0")/.."
top=$PWD
dir=${1:-build-asan}
verdict() {
	echo "$1: sanitizer build: make check${2:+ ($2)}"
	[ "$1" = PASS ]
	exit
}

[ -x configure ] && [ configure -nt configure.ac ] || autoreconf -fi >/dev/null 2>&1 ||
	verdict FAIL "autoreconf failed"
mkdir -p "$dir" && cd "$dir" || verdict FAIL "cannot create '$dir'"
if ! grep -q '^SANITIZER_CFLAGS = -fsanitize' Makefile 2>/dev/null; then
	"$top/configure" -q --enable-sanitizers >configure.out 2>&1 ||
		{ tail -n 20 configure.out | sed "s/^/    /"; verdict FAIL "configure failed: see $dir/configure.out"; }
fi
make -s -j"$(nproc)" >build.out 2>&1 ||
	{ tail -n 40 build.out | sed "s/^/    /"; verdict FAIL "build failed: see $dir/build.out"; }

# LeakSanitizer stops the process it checks and reads it through ptrace: it
# fails under a debugger or strace, and in containers that forbid ptrace.
# Probe it with a program that leaks on purpose; without a working LSan the
# run goes on with detect_leaks=0 (valgrind still checks the unit tests).
leaks=1
probe=$(mktemp -d) || verdict FAIL "mktemp"
printf '#include <stdlib.h>\nint main(void) { volatile char *p = malloc(33); p = 0; return 0; }\n' >"$probe/leak.c"
cc=$(sed -n 's/^CC = //p' Makefile)
if $cc -fsanitize=address -g -o "$probe/leak" "$probe/leak.c" 2>/dev/null; then
	ASAN_OPTIONS=detect_leaks=1 "$probe/leak" >"$probe/out" 2>&1
	if ! grep -q 'ERROR: LeakSanitizer: detected memory leaks' "$probe/out"; then
		leaks=0
		echo "# LeakSanitizer does not work here ($(grep -m1 -i 'leaksanitizer\|ptrace' "$probe/out" || echo 'no report')): leak checking off, memory errors still checked"
	fi
fi
rm -rf "$probe"

# The qemu boot test installs its own build into a guest: nothing of this
# instrumented build runs there, so it is not booted twice.
export STORAGED_BOOT_TEST=0
# Nor are the packages built again: each compiles its own storaged
# (tests/packaging/lib.sh, package_opt_in).
export STORAGED_PACKAGE_TEST=0
# The kill tests (t-c32-*, t-c36-*) here try every third call of each
# kind: the native pass tries every one, and what this pass adds, memory
# errors on the paths a kill leaves behind, each kind of call still
# reaches.  Trying each took 20 of this pass's 45 min (2026-12-07).
export C36_KILL_STRIDE=${C36_KILL_STRIDE:-3}
export ASAN_OPTIONS="detect_leaks=$leaks:abort_on_error=0:strict_string_checks=1:detect_stack_use_after_return=1:check_initialization_order=1"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
find . -name '*.trs' -delete
# a line per finished test as it finishes (all of make's output in check.out)
"$top/tools/make-check.sh" . check.out '  asan: '
rc=$?
if [ $rc != 0 ]; then
	for log in $(grep -l -E '^:test-result: (FAIL|ERROR|XPASS)' $(find . -name '*.trs') 2>/dev/null); do
		echo "  ==== $dir/${log#./}"
		tail -n 40 "${log%.trs}.log" | sed 's/^/    /'
	done
	verdict FAIL "see $dir/check.out"
fi
verdict PASS

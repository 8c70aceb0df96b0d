#!/bin/bash
# Runs `make check` in BUILD_DIR as run-tests.sh and check-sanitizers.sh
# do: the test programs built first with -j(nproc) (make check would build
# them one at a time), then the tests one at a time (-j1: the integration
# tests share the machine's loop devices and btrfs registrations).  All of
# make's output goes to OUT; one line per finished test is printed as the
# automake harness reports it, so that a run of many minutes shows where
# it is:
#
#   [K/N MmSSs] PASS: tests/integration/t-foo.sh (12s)
#
# K of N tests (N: the build's TESTS), the time since the tests began, and
# the test's own time (since the previous result line).  PREFIX goes before
# each line (the sanitizer pass: "  asan: "); further arguments go to make
# (TESTS='tests/integration/t-foo.sh ...').  Exits with make check's status.
#
#   tools/make-check.sh BUILD_DIR OUT [PREFIX [MAKE_ARGS...]]
set -uo pipefail
dir=$1
out=$2
prefix=${3:-}
shift $(($# < 3 ? $# : 3))
args=("$@")

# GNU make's --eval: a variable of the build's Makefile, with its
# conditionals (no cmocka: no unit tests) applied
make_var() {
	make -s -C "$dir" --no-print-directory "${args[@]}" --eval "print-var-$1: ; @echo \$($2)" \
		"print-var-$1" 2>/dev/null
}

: >"$out"
# shellcheck disable=SC2046 # the list of programs, split into words
make -s -C "$dir" -j"$(nproc)" $(make_var progs check_PROGRAMS) >>"$out" 2>&1
n=$(make_var count 'words $(TESTS)')
[[ $n =~ ^[0-9]+$ ]] || n='?'

progress() {
	local line now k=0 t0 last
	printf -v t0 '%(%s)T' -1
	last=$t0
	while IFS= read -r line; do
		printf '%s\n' "$line" >>"$out"
		case $line in
		PASS:* | FAIL:* | SKIP:* | XFAIL:* | XPASS:* | ERROR:*)
			printf -v now '%(%s)T' -1
			k=$((k + 1))
			printf '%s[%d/%s %dm%02ds] %s (%ds)\n' "$prefix" "$k" "$n" $(((now - t0) / 60)) \
				$(((now - t0) % 60)) "$line" $((now - last))
			last=$now
			;;
		esac
	done
}
make -s -C "$dir" "${args[@]}" check -j1 2>&1 | progress
exit "${PIPESTATUS[0]}"

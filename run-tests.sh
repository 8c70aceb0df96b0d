#!/bin/bash
# Installs the dependencies, builds, and runs the whole test suite: cmocka
# unit tests, golden plans, and the integration tests (root, loop devices).
# Ends with the line "N passed, N failed, N skipped".
set -uo pipefail
cd "$(dirname "$0")"
./tools/install-deps.sh || exit 1
if ! ./tools/build.sh; then
	echo "0 passed, 1 failed"
	exit 1
fi
find build -name '*.trs' -delete
# Integration tests share the machine's loop and btrfs state: one at a time.
make -C build -s check -j1 >build/check.out 2>&1
rc=$?
grep -E '^(PASS|FAIL|SKIP|XFAIL|XPASS|ERROR):' build/check.out
if [ $rc != 0 ]; then
	for log in $(grep -l -E '^:test-result: (FAIL|ERROR|XPASS)' $(find build -name '*.trs') 2>/dev/null); do
		echo "==== ${log%.trs}.log"
		tail -n 60 "${log%.trs}.log"
	done
	grep -v -E '^(PASS|SKIP|XFAIL):' build/check.out | tail -n 40
fi
./tools/test-summary.sh build $([ $rc != 0 ] && echo --harness-failed)

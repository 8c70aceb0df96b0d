#!/bin/bash
# Prints the closing line "N passed, N failed, N skipped" from the automake
# test harness's .trs files below DIR.  With --harness-failed, the run
# itself failed (a build error, a crashed harness) and counts as one failure
# even when no test reported one.
dir=${1:-build}
pass=0 failed=0 skipped=0
[ "${2:-}" = --harness-failed ] && harness=1 || harness=0
while IFS= read -r res; do
	case "$res" in
	PASS | XFAIL) pass=$((pass + 1)) ;;
	SKIP) skipped=$((skipped + 1)) ;;
	*) failed=$((failed + 1)) ;;
	esac
done < <(find "$dir" -name '*.trs' -exec sed -n 's/^:test-result: //p' {} +)
[ "$harness" = 1 ] && [ "$failed" = 0 ] && failed=1 && echo "the test harness failed: see build/check.out"
echo "$pass passed, $failed failed, $skipped skipped"
[ "$failed" = 0 ]

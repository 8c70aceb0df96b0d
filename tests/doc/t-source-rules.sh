#!/bin/bash
# Rules of the source tree that a reader relies on:
# - comments say the thing, not a tracker's name for it: no "C20" (a case
#   in the project's tracker) or "issue 14" in src/; the tests are where
#   the cases are named (tests/integration/t-cNN-*.sh);
# - a .c file in src/ over 1,000 lines is named (a warning: one that
#   grows past that may hold more than one job; split it by job, never to
#   fit a count), and one over 1,500 fails: no single job here needs that.
#   A hard limit of 700 made files squeeze and split into halves that
#   include each other (the fourth architecture review, 2.3).
set -u
top=${TOPSRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
rc=0
if grep -rnE '\bissue [0-9]+\b|\bC[0-9]{2}\b' "$top/src" --include='*.[ch]' --include='Makemodule.am'; then
	echo "FAIL: tracker IDs in src/ (above): say what the case is instead"
	rc=1
fi
for f in "$top"/src/*/*.c "$top"/src/*.c; do
	[ -f "$f" ] || continue
	n=$(wc -l <"$f")
	if [ "$n" -gt 1500 ]; then
		echo "FAIL: ${f#"$top"/} has $n lines (at most 1500: split it by job)"
		rc=1
	elif [ "$n" -gt 1000 ]; then
		echo "warning: ${f#"$top"/} has $n lines: does it hold more than one job?"
	fi
done
exit $rc

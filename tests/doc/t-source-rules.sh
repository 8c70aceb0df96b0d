#!/bin/bash
# Rules of the source tree that a reader relies on:
# - comments say the thing, not a tracker's name for it: no "C20" (a case
#   in the project's tracker) or "issue 14" in src/; the tests are where
#   the cases are named (tests/integration/t-cNN-*.sh);
# - no .c file in src/ over 700 lines: a file that grows past that holds
#   more than one job and is split by job (REVIEW-style rooms).
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
	if [ "$n" -gt 700 ]; then
		echo "FAIL: ${f#"$top"/} has $n lines (at most 700: split it by job)"
		rc=1
	fi
done
exit $rc

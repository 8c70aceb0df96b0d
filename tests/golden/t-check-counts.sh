#!/bin/bash
# `storaged check` counts what it prints, at the level it prints it: each
# step that makes the exit status 1 is one error line, each step only
# nofail entries need is one warning line, and the closing line's counts
# are those lines' counts.  Inputs: golden scenarios (see t-golden.sh),
# injected through the test-only environment variables of storaged(8).
set -u

TEST_NAME=t-check-counts
HERE=$(cd "$(dirname "$0")" && pwd)
STORAGED=${STORAGED:-$HERE/../../build/storaged}

if [ "$(id -u)" != 0 ]; then
	[ -z "${STORAGED_GOLDEN_USERNS:-}" ] || { echo "FAIL: $TEST_NAME: not uid 0 in the user namespace" >&2; exit 1; }
	unshare --map-root-user true 2>/dev/null || { echo "SKIP: $TEST_NAME: not root, and no user namespace"; exit 77; }
	STORAGED_GOLDEN_USERNS=1 exec unshare --map-root-user bash "$0" "$@"
fi
WORK=$(mktemp -d "/tmp/storaged-$TEST_NAME.XXXXXX") || exit 1
trap 'rm -rf "$WORK"' EXIT
: >"$WORK/empty"
mkdir "$WORK/helpers"
printf 'MemTotal:       16777216 kB\nMemFree:         1048576 kB\n' >"$WORK/meminfo"

fail() {
	echo "FAIL: $TEST_NAME: $*" >&2
	sed 's/^/  | /' "$WORK/err" >&2
	exit 1
}

# check SCENARIO: storaged check on a copy of it; stderr in $WORK/err,
# stdout in $WORK/out, exit status in $RC.
check() {
	local dir=$HERE/$1
	rm -rf "$WORK/run" && mkdir "$WORK/run"
	install -m 0644 "$dir/storaged.conf" "$dir/fstab" "$WORK/run/"
	(
		cd "$WORK/run" || exit 125
		STORAGED_INVENTORY=$([ -e "$dir/inventory.ini" ] && echo "$dir/inventory.ini" || echo "$WORK/empty") \
		STORAGED_MOUNTINFO=$([ -e "$dir/mountinfo" ] && echo "$dir/mountinfo" || echo "$WORK/empty") \
		STORAGED_SURVEYS=$([ -e "$dir/surveys" ] && echo "$dir/surveys") \
		STORAGED_MEMINFO=$WORK/meminfo STORAGED_FILESYSTEMS=$HERE/filesystems \
		STORAGED_MOUNT_HELPERS=$WORK/helpers NOTIFY_SOCKET= \
			"$STORAGED" -c storaged.conf -f fstab --state-dir "$WORK/state" check >"$WORK/out" 2>"$WORK/err"
	)
	RC=$?
}

# closing WORDS: the number before WORDS in the last line of stderr, 0 if none.
closing() {
	tail -1 "$WORK/err" | grep -o "[0-9]* $1" | head -1 | cut -d' ' -f1 | grep . || echo 0
}

n=0
for sc in device-absent predicted-failures raid1-member-missing; do
	echo "# $sc"
	check "$sc"
	[ "$RC" = 1 ] || fail "$sc: check exited $RC, expected 1"
	errors=$(grep -c '^storaged: error: \([^ ]*:[0-9]*: \)\?step ' "$WORK/err")
	warnings=$(grep -c '^storaged: warning: \([^ ]*:[0-9]*: \)\?step .*(nofail: not counted as a failure)$' "$WORK/err")
	skips=$(grep -c '^storaged: error: \([^ ]*:[0-9]*: \)\?step .*: will be skipped: ' "$WORK/err")
	[ "$errors" -ge 1 ] || fail "$sc: no error line for a step"
	[ "$(closing 'steps\? will fail')" = "$errors" ] || fail "$sc: the closing line does not count the $errors errors"
	[ "$(closing 'nofail steps\? will fail')" = "$warnings" ] || fail "$sc: the closing line does not count the $warnings nofail warnings"
	[ "$(closing skipped)" = "$skips" ] || fail "$sc: the closing line does not count the $skips skips"
	grep -q '^storaged: error: .*(nofail' "$WORK/err" && fail "$sc: a nofail step at error level"
	n=$((n + 1))
done
echo "# nested-child-first: nothing will fail"
check nested-child-first
[ "$RC" = 0 ] || fail "check of a plan without failures exited $RC"
grep -q 'no step will fail$' "$WORK/out" || fail "no success line"
grep -q 'step' "$WORK/err" && fail "a plan without failures has step messages"
echo "# $((n + 1)) scenarios checked"
exit 0

#!/bin/bash
# Golden plans through the real binary: for each scenario directory under
# tests/golden/ (see its README.md), runs `storaged --dry-run` and
# `storaged --dry-run --json` from inside a copy of it, with the scenario's
# inputs injected through the test-only environment variables of
# storaged(8) (ENVIRONMENT), and compares stdout with plan.txt / plan.json,
# stderr with diags.txt (absent: empty) and the exit status with the table
# below.  UPDATE_GOLDEN=1 rewrites the expected files instead: read
# `git diff tests/golden` before committing them.
#
# Needs no root: storaged reads only root-owned configs and fstabs, so a
# non-root run happens in a user namespace where the caller is root
# (unshare --map-root-user), the way the files look to storaged there.
# Exit 77 (skip) only when neither root nor a user namespace is available.
set -u

TEST_NAME=t-golden
HERE=$(cd "$(dirname "$0")" && pwd)
STORAGED=${STORAGED:-$HERE/../../build/storaged}

if [ "$(id -u)" != 0 ]; then
	[ -z "${STORAGED_GOLDEN_USERNS:-}" ] || {
		echo "FAIL: $TEST_NAME: still not uid 0 inside the user namespace" >&2
		exit 1
	}
	unshare --map-root-user true 2>/dev/null || {
		echo "SKIP: $TEST_NAME: not root, and no user namespace (unshare --map-root-user) to own the inputs as root"
		exit 77
	}
	STORAGED_GOLDEN_USERNS=1 exec unshare --map-root-user bash "$0" "$@"
fi
[ -x "$STORAGED" ] || {
	echo "FAIL: $TEST_NAME: storaged binary not found at '$STORAGED' (build first)" >&2
	exit 1
}

# Exit status of `storaged --dry-run` per scenario; 0 when not listed.
# 1: the plan shows a step that will fail; 2: the plan cannot be made.
declare -A WANT_EXIT=(
	[areas]=1
	[device-absent]=1
	[device-identity]=1
	[local-only]=1
	[raid1-member-missing]=1
	[predicted-failures]=1
	[requires-cycle]=2
	[two-cycles]=2
)

WORK=$(mktemp -d "/tmp/storaged-$TEST_NAME.XXXXXX") || exit 1
trap 'rm -rf "$WORK"' EXIT
export LC_ALL=C.UTF-8
: >"$WORK/empty"
# no mount.TYPE helper: the types of tests/golden/filesystems are all there is
mkdir "$WORK/helpers"
# 16 GiB of RAM for size = N% areas
printf 'MemTotal:       16777216 kB\nMemFree:         1048576 kB\n' >"$WORK/meminfo"
PROBLEMS=0

# compare SCENARIO FILE GOT: GOT must be SCENARIO/FILE (absent means empty).
compare() {
	local dir=$HERE/$1 file=$2 got=$3 want
	if [ -n "${UPDATE_GOLDEN:-}" ]; then
		if [ -s "$got" ]; then cp "$got" "$dir/$file"; else rm -f "$dir/$file"; fi
		return
	fi
	want=$dir/$file
	[ -e "$want" ] || want=$WORK/empty
	if ! cmp -s "$want" "$got"; then
		echo "  !! $1/$file differs (--- expected, +++ storaged):"
		diff -u "$want" "$got" | sed 's/^/     /'
		PROBLEMS=$((PROBLEMS + 1))
	fi
}

# run SCENARIO OUT ERR [ARGS...]: storaged --dry-run in a copy of SCENARIO
# (the copy: mode 0644, owned by the runner, root here); prints the exit.
run() {
	local name=$1 out=$2 err=$3 dir=$HERE/$1 run=$WORK/$1 args=()
	shift 3
	[ -e "$dir/local-only" ] && args+=(--local)
	(
		cd "$run" || exit 125
		STORAGED_INVENTORY=$([ -e "$dir/inventory.ini" ] && echo "$dir/inventory.ini" || echo "$WORK/empty") \
		STORAGED_MOUNTINFO=$([ -e "$dir/mountinfo" ] && echo "$dir/mountinfo" || echo "$WORK/empty") \
		STORAGED_SURVEYS=$([ -e "$dir/surveys" ] && echo "$dir/surveys") \
		STORAGED_MEMINFO=$([ -e "$dir/meminfo" ] && echo "$dir/meminfo" || echo "$WORK/meminfo") \
		STORAGED_FILESYSTEMS=$HERE/filesystems \
		STORAGED_MOUNT_HELPERS=$WORK/helpers \
		NOTIFY_SOCKET= \
			"$STORAGED" -c storaged.conf -f fstab --state-dir "$WORK/state" --dry-run \
			"${args[@]}" "$@" start >"$out" 2>"$err"
	)
	echo $?
}

n=0
for dir in "$HERE"/*/; do
	name=$(basename "$dir")
	[ -f "$dir/storaged.conf" ] || continue
	n=$((n + 1))
	echo "# $name"
	mkdir -p "$WORK/$name"
	install -m 0644 "$dir/storaged.conf" "$dir/fstab" "$WORK/$name/"
	want=${WANT_EXIT[$name]:-0}
	rc=$(run "$name" "$WORK/$name/plan.txt" "$WORK/$name/diags.txt")
	rcj=$(run "$name" "$WORK/$name/plan.json" "$WORK/$name/diags.json.txt" --json)
	for got in "$rc" "$rcj"; do
		if [ "$got" != "$want" ]; then
			echo "  !! $name: storaged --dry-run exited $got, expected $want"
			sed 's/^/     | /' "$WORK/$name/diags.txt"
			PROBLEMS=$((PROBLEMS + 1))
		fi
	done
	compare "$name" plan.txt "$WORK/$name/plan.txt"
	compare "$name" plan.json "$WORK/$name/plan.json"
	compare "$name" diags.txt "$WORK/$name/diags.txt"
	[ ! -s "$WORK/$name/plan.json" ] || python3 -m json.tool "$WORK/$name/plan.json" >/dev/null 2>"$WORK/json.err" || {
		echo "  !! $name: plan.json is not valid JSON: $(cat "$WORK/json.err")"
		PROBLEMS=$((PROBLEMS + 1))
	}
	# the JSON run reports the same problems
	cmp -s "$WORK/$name/diags.txt" "$WORK/$name/diags.json.txt" || {
		echo "  !! $name: stderr differs between the text and the JSON run"
		PROBLEMS=$((PROBLEMS + 1))
	}
	[ -e "$WORK/state" ] && {
		echo "  !! $name: --dry-run created the state directory"
		PROBLEMS=$((PROBLEMS + 1))
		rm -rf "$WORK/state"
	}
done
[ "$n" -ge 13 ] || {
	echo "FAIL: $TEST_NAME: only $n scenarios found under $HERE" >&2
	exit 1
}
for s in "${!WANT_EXIT[@]}"; do
	[ -f "$HERE/$s/storaged.conf" ] || {
		echo "  !! WANT_EXIT names '$s', which is no scenario"
		PROBLEMS=$((PROBLEMS + 1))
	}
done
if [ "$PROBLEMS" -gt 0 ]; then
	echo "FAIL: $TEST_NAME: $PROBLEMS problems in $n scenarios" >&2
	exit 1
fi
echo "# $n scenarios match"
exit 0

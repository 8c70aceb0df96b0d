#!/bin/bash
# The fstab corpus: fstab files in the shapes administrators write them
# (installer output, NAS and homelab mounts, iSCSI, overlay and bind farms,
# btrfs subvolumes, CIS splits, swap on LUNs, escapes), each planned by the
# real binary with `storaged --dry-run start` and compared with its golden
# plan.txt (stdout) and diags.txt (stderr; absent means empty).  Every file
# must be read and planned: the exit status is 0 or 1 (a step the plan
# knows will fail), never 2 (no plan), and the plan is never empty;
# `storaged check` does not refuse the file either.
#
# Per directory: fstab; optional inventory.ini (STORAGED_INVENTORY),
# mountinfo (STORAGED_MOUNTINFO) and local-only (run `start --local`);
# exit: the expected exit status when not 0.  The config is ./corpus.conf.
# UPDATE_GOLDEN=1 rewrites plan.txt, diags.txt and exit: read
# `git diff tests/golden/corpus` line by line before committing them.
#
# Needs no root: as t-golden.sh, in a user namespace where the copies are
# root's.
set -u

TEST_NAME=t-corpus
HERE=$(cd "$(dirname "$0")" && pwd)
STORAGED=${STORAGED:-$HERE/../../../build/storaged}

if [ "$(id -u)" != 0 ]; then
	[ -z "${STORAGED_GOLDEN_USERNS:-}" ] || {
		echo "FAIL: $TEST_NAME: still not uid 0 inside the user namespace" >&2
		exit 1
	}
	unshare --map-root-user true 2>/dev/null || {
		echo "SKIP: $TEST_NAME: not root, and no user namespace (unshare --map-root-user)"
		exit 77
	}
	STORAGED_GOLDEN_USERNS=1 exec unshare --map-root-user bash "$0" "$@"
fi
[ -x "$STORAGED" ] || {
	echo "FAIL: $TEST_NAME: storaged binary not found at '$STORAGED' (build first)" >&2
	exit 1
}

WORK=$(mktemp -d "/tmp/storaged-$TEST_NAME.XXXXXX") || exit 1
trap 'rm -rf "$WORK"' EXIT
export LC_ALL=C.UTF-8
: >"$WORK/empty"
printf 'MemTotal:       16777216 kB\n' >"$WORK/meminfo"
# The filesystems (with the modules each fstab needs: 9p, virtiofs,
# reiserfs, zfs) and mount helpers of a host that has the usual client
# packages (nfs-common, cifs-utils, ceph-common, glusterfs-client, davfs2,
# ntfs-3g, fuse3): the plans must not depend on the runner's packages.
mkdir "$WORK/helpers"
for h in nfs nfs4 cifs smb3 ceph glusterfs davfs ntfs-3g fuse fuse3 lowntfs-3g; do
	printf '#!/bin/sh\nexit 1\n' >"$WORK/helpers/mount.$h"
	chmod 755 "$WORK/helpers/mount.$h"
done
PROBLEMS=0
n=0

# same WANT GOT LABEL: GOT must have WANT's content (absent WANT: empty).
same() {
	local want=$1 got=$2
	[ -e "$want" ] || want=$WORK/empty
	cmp -s "$want" "$got" && return 0
	echo "  !! $3 differs (--- expected, +++ storaged):"
	diff -u "$want" "$got" | sed 's/^/     /'
	PROBLEMS=$((PROBLEMS + 1))
}

# keep GOT FILE: the golden FILE becomes GOT (removed when GOT is empty).
keep() {
	if [ -s "$1" ]; then cp "$1" "$2"; else rm -f "$2"; fi
}

for dir in "$HERE"/*/; do
	name=$(basename "$dir")
	[ -f "$dir/fstab" ] || continue
	n=$((n + 1))
	run=$WORK/$name
	mkdir -p "$run"
	install -m 0644 "$HERE/corpus.conf" "$run/storaged.conf"
	install -m 0644 "$dir/fstab" "$run/"
	args=()
	[ -e "$dir/local-only" ] && args+=(--local)
	(
		cd "$run" || exit 125
		STORAGED_INVENTORY=$([ -e "$dir/inventory.ini" ] && echo "$dir/inventory.ini" || echo "$WORK/empty") \
		STORAGED_MOUNTINFO=$([ -e "$dir/mountinfo" ] && echo "$dir/mountinfo" || echo "$WORK/empty") \
		STORAGED_MEMINFO=$WORK/meminfo \
		STORAGED_FILESYSTEMS=$HERE/filesystems STORAGED_MOUNT_HELPERS=$WORK/helpers \
		NOTIFY_SOCKET= \
			"$STORAGED" -c storaged.conf -f fstab --state-dir "$WORK/state" --dry-run "${args[@]}" \
			start >"$run/plan.txt" 2>"$run/diags.txt"
	)
	rc=$?
	# check reads the same file: it must not refuse it either
	(
		cd "$run" || exit 125
		STORAGED_INVENTORY=$([ -e "$dir/inventory.ini" ] && echo "$dir/inventory.ini" || echo "$WORK/empty") \
		STORAGED_MOUNTINFO=$WORK/empty STORAGED_MEMINFO=$WORK/meminfo \
		STORAGED_FILESYSTEMS=$HERE/filesystems STORAGED_MOUNT_HELPERS=$WORK/helpers \
			"$STORAGED" -c storaged.conf -f fstab --state-dir "$WORK/state" check >"$run/check.txt" 2>&1
	)
	[ $? = 2 ] && {
		echo "  !! $name: storaged check refused the file"
		sed 's/^/     | /' "$run/check.txt"
		PROBLEMS=$((PROBLEMS + 1))
	}
	echo "$rc" >"$run/exit.got"
	[ "$rc" = 0 ] && : >"$run/exit.got"
	if [ "$rc" != 0 ] && [ "$rc" != 1 ]; then
		echo "  !! $name: storaged --dry-run exited $rc: the file stopped the pass"
		sed 's/^/     | /' "$run/diags.txt"
		PROBLEMS=$((PROBLEMS + 1))
	fi
	[ -s "$run/plan.txt" ] || {
		echo "  !! $name: empty plan"
		PROBLEMS=$((PROBLEMS + 1))
	}
	if [ -n "${UPDATE_GOLDEN:-}" ]; then
		keep "$run/plan.txt" "$dir/plan.txt"
		keep "$run/diags.txt" "$dir/diags.txt"
		keep "$run/exit.got" "$dir/exit"
		continue
	fi
	same "$dir/plan.txt" "$run/plan.txt" "$name/plan.txt"
	same "$dir/diags.txt" "$run/diags.txt" "$name/diags.txt"
	same "$dir/exit" "$run/exit.got" "$name/exit"
	[ -e "$WORK/state" ] && {
		echo "  !! $name: --dry-run created the state directory"
		PROBLEMS=$((PROBLEMS + 1))
		rm -rf "$WORK/state"
	}
done
[ "$n" -ge 40 ] || {
	echo "FAIL: $TEST_NAME: only $n fstab files under $HERE" >&2
	exit 1
}
if [ "$PROBLEMS" -gt 0 ]; then
	echo "FAIL: $TEST_NAME: $PROBLEMS problems in $n fstab files" >&2
	exit 1
fi
echo "# $n fstab files planned as recorded"
exit 0

#!/bin/bash
# kill -9 at random points of `storaged start`, 20 times: the next start
# converges (every entry mounted exactly once, exit 0), and a stop right
# after a killed start undoes exactly what exists (nothing left mounted
# below the scratch directory, nothing mounted twice), and a persist area
# killed while seeding never syncs its partial copy back.
. "$(dirname "$0")/lib.sh"
setup

mkdir -p "$SCRATCH/src" "$SCRATCH/m" "$SCRATCH/persist"
for i in $(seq 1 200); do echo "$i" >"$SCRATCH/persist/f$i"; done
cat >"$FSTAB" <<EOT
tmpfs  $SCRATCH/m/a  tmpfs  size=4M,noauto,x-storaged,X-mount.mkdir  0 0
tmpfs  $SCRATCH/m/a/b  tmpfs  size=4M,noauto,x-storaged,X-mount.mkdir  0 0
tmpfs  $SCRATCH/m/a/b/c  tmpfs  size=4M,noauto,x-storaged,X-mount.mkdir  0 0
$SCRATCH/src  $SCRATCH/m/a/b/c/src  none  bind,noauto,x-storaged,X-mount.mkdir  0 0
tmpfs  $SCRATCH/m/x  tmpfs  size=4M,noauto,x-storaged,X-mount.mkdir  0 0
tmpfs  $SCRATCH/m/y  tmpfs  size=4M,noauto,x-storaged,X-mount.mkdir  0 0
tmpfs  $SCRATCH/m/z  tmpfs  size=4M,noauto,x-storaged,X-mount.mkdir  0 0
EOT
cat >"$CONF" <<EOT
[storaged]
jobs = 2

[area crash]
path = $SCRATCH/persist
size = 16M
inodes = auto
persist = yes
EOT
TARGETS="m/a m/a/b m/a/b/c m/a/b/c/src m/x m/y m/z persist"

# Mounts below the scratch directory, the area's private ones under the
# state directory included.
mounts_below() {
	findmnt -rn -o TARGET | awk -v s="$SCRATCH/" 'index($0, s) == 1' || true
}

all_once() {
	local t
	for t in $TARGETS; do
		[ "$(mount_count "$SCRATCH/$t")" = 1 ] || fail "round $1: $t mounted $(mount_count "$SCRATCH/$t") times"
	done
}

for round in $(seq 1 20); do
	"$STORAGED" -q -c "$CONF" -f "$FSTAB" --state-dir "$STATE" start >/dev/null 2>&1 &
	pid=$!
	sleep "0.$(printf '%03d' $((RANDOM % 250)))"
	kill -9 "$pid" 2>/dev/null
	wait "$pid" 2>/dev/null
	if [ $((round % 4)) = 0 ]; then
		# stop right after the crash: undoes what exists
		OUT=$(sd stop 2>&1) || { printf '%s\n' "$OUT"; fail "round $round: stop after a killed start failed"; }
		left=$(mounts_below)
		[ -z "$left" ] || fail "round $round: stop after a killed start left: $left"
		# a setup killed while seeding must never be synced back over
		# the directory (it would delete the files not yet copied)
		[ "$(ls "$SCRATCH/persist" | wc -l)" = 200 ] || fail "round $round: the directory lost files"
		continue
	fi
	OUT=$(sd start 2>&1) || { printf '%s\n' "$OUT"; fail "round $round: start after a killed start failed"; }
	all_once "$round"
	[ "$(cat "$SCRATCH/persist/f7")" = 7 ] || fail "round $round: the area's copy is wrong"
	OUT=$(sd stop 2>&1) || { printf '%s\n' "$OUT"; fail "round $round: stop failed"; }
	left=$(mounts_below)
	[ -z "$left" ] || fail "round $round: stop left: $left"
	[ "$(ls "$SCRATCH/persist" | wc -l)" = 200 ] || fail "round $round: the directory lost files"
done
note "20 killed starts: each converged"
exit 0

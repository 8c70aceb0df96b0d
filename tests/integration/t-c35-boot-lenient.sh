#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# C35, what reads the configuration besides start: the boot is lenient
# there too.  Beside a good persist area and good fstab lines, the
# configuration holds an [area] section with a misspelt key, and the fstab
# two lines on one directory through a symbolic link and a misspelt
# x-storaged. option.  check refuses (exit 2, each FILE:LINE); start sets
# up the good items and fails the bad ones (exit 1, status agreeing); and
# then, as start does, each of these uses what is good and leaves the bad
# item alone:
#  - `storaged sync NAME` of the good persist area syncs it (not exit 2);
#  - the resident's periodic sync keeps syncing it;
#  - the metrics-textfile is written, with the refused area failed;
#  - the systemd generator writes the automount of a good line.
. "$(dirname "$0")/lib-area.sh"

G=$SCRATCH/good
B=$SCRATCH/bad
mkdir -p "$G" "$B" "$SCRATCH/c35/run" "$SCRATCH/c35/var" "$SCRATCH/tmp" "$SCRATCH/opt" "$SCRATCH/auto" \
	"$SCRATCH/metrics"
ln -s ../run "$SCRATCH/c35/var/run"
echo before >"$G/file"
echo seed >"$B/file"
PROM=$SCRATCH/metrics/storaged.prom
write_conf <<EOT
[storaged]
sync-interval = 0
metrics-textfile = $PROM

[area good]
path = $G
backend = tmpfs
size = 16M
persist = yes
sync-interval = 1s

[area bad]
path = $B
backend = tmpfs
size = 4M
sizee = 4M
EOT
cat >"$FSTAB" <<EOT
tmpfs  $SCRATCH/tmp          tmpfs  size=8M,noauto,x-storaged  0 0
tmpfs  $SCRATCH/c35/var/run  tmpfs  size=1M,noauto,x-storaged  0 0
tmpfs  $SCRATCH/c35/run      tmpfs  size=2M,noauto,x-storaged  0 0
tmpfs  $SCRATCH/opt          tmpfs  size=1M,noauto,x-storaged,x-storaged.mount-timout=5s  0 0
tmpfs  $SCRATCH/auto         tmpfs  size=1M,noauto,x-storaged,x-systemd.automount  0 0
EOT

# check and --dry-run stay strict: every problem at FILE:LINE, exit 2
for cmd in check --dry-run; do
	expect_rc 2 $cmd
	for w in "$CONF:16" "$FSTAB:3" "$FSTAB:4"; do
		grep -q "error: $w: " "$OUT" || { cat "$OUT"; fail "$cmd does not name $w"; }
	done
done
pass "check and --dry-run refuse, naming each line"

# the generator: the automount of the good line 5 is written
mkdir "$SCRATCH/gen"
"$STORAGED" -q -c "$CONF" -f "$FSTAB" --state-dir "$RUN" systemd-generator "$SCRATCH/gen" "$SCRATCH/gen" \
	"$SCRATCH/gen" >"$OUT" 2>&1
ls "$SCRATCH/gen"/*.automount >/dev/null 2>&1 || { cat "$OUT"; ls -R "$SCRATCH/gen"; fail "the generator wrote no automount for the good line beside the bad ones"; }
grep -q "^Where=$SCRATCH/auto$" "$SCRATCH/gen"/*.automount || fail "the automount is not the good line's"
[ "$(ls "$SCRATCH/gen"/*.automount | wc -l)" = 1 ] || fail "the generator wrote an automount for a refused line"
pass "the generator writes the good line's automount"

# start: the good items are set up, the bad ones are failed steps, exit 1
expect_rc 1 start
is_mountpoint "$G" || { cat "$OUT"; fail "the good area is not set up"; }
is_mountpoint "$B" && fail "the refused area was set up"
is_mountpoint "$SCRATCH/tmp" || fail "the tmpfs is not mounted"
[ "$(findmnt -rn --mountpoint "$SCRATCH/c35/run" | wc -l)" = 1 ] || fail "not one mount on $SCRATCH/c35/run"
findmnt -rn -o OPTIONS --mountpoint "$SCRATCH/c35/run" | grep -q "size=1024k" ||
	fail "the mount on $SCRATCH/c35/run is not the first line's"
is_mountpoint "$SCRATCH/opt" && fail "the line with the misspelt option was mounted"
for w in "$CONF:16" "$FSTAB:3" "$FSTAB:4"; do
	grep "error: " "$OUT" | grep -q "refused, $w: " || { cat "$OUT"; fail "start does not fail $w as a step"; }
done
tail -n 1 "$OUT" | grep -q "3 failed" || { cat "$OUT"; fail "the closing line does not count 3 failed"; }
expect_rc 1 status
grep -w bad "$OUT" | grep -q failed || { cat "$OUT"; fail "status does not show the area bad failed"; }
grep -F "$FSTAB:4" "$OUT" | grep -q failed || { cat "$OUT"; fail "status does not show $FSTAB:4 failed"; }
pass "start sets up the good items and fails the bad ones"

# the metrics-textfile the start wrote counts the refused area failed
[ -f "$PROM" ] || fail "start wrote no metrics-textfile beside a refused area"
grep -q 'entry="bad",state="failed"} 1' "$PROM" || { cat "$PROM"; fail "the metrics-textfile does not count the area bad failed"; }
pass "the metrics-textfile is written, the refused area failed"

# sync NAME of the good persist area
echo synced >"$G/file"
expect_rc 0 sync good
[ "$(cat "$RUN/areas/good/lower/file")" = synced ] || fail "sync good did not sync"
pass "sync of the good area beside a refused one"

# the resident's periodic sync (sync-interval = 1s) goes on
"$STORAGED" -c "$CONF" -f "$FSTAB" --state-dir "$RUN" --foreground start >"$SCRATCH/resident.log" 2>&1 &
SD=$!
trap 'kill "$SD" 2>/dev/null; wait "$SD" 2>/dev/null; cleanup' EXIT
for _ in $(seq 50); do [ -f "$RUN/storaged.pid" ] && break; sleep 0.1; done
kill -0 "$SD" 2>/dev/null || { cat "$SCRATCH/resident.log"; fail "storaged --foreground did not stay"; }
echo periodic >"$G/file"
for _ in $(seq 50); do [ "$(cat "$RUN/areas/good/lower/file")" = periodic ] && break; sleep 0.1; done
[ "$(cat "$RUN/areas/good/lower/file")" = periodic ] ||
	{ cat "$SCRATCH/resident.log"; fail "the resident did not sync the good area within 5 s (sync-interval = 1s) beside a refused one"; }
pass "the resident's periodic sync goes on"
kill "$SD"
wait "$SD" 2>/dev/null
expect_rc 0 stop
[ "$(cat "$G/file")" = periodic ] || fail "the data is not on the directory after stop"
exit 0

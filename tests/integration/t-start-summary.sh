#!/bin/bash
# What `start` says is what it did, and it says nothing when it did
# nothing (as `mount -a`): one line per change, then one closing line whose
# counts (non-zero ones only) are the outcomes `status --json` records and
# the exit status reports.  A device that never appears fails its wait:
# that failure is counted, not hidden in a remainder while the run exits 1.
. "$(dirname "$0")/lib.sh"
setup

# status_count STATUS...: how many `status --json` records have one of them.
status_count() {
	sd status --json 2>/dev/null | python3 -c '
import json, sys
d = json.load(sys.stdin)
print(sum(1 for r in d["status"] if r["status"] in sys.argv[1:]))' "$@"
}

# closing_count WORD: the number before WORD in the closing line, 0 if none.
closing_count() {
	printf '%s\n' "$OUT" | tail -1 | grep -o "[0-9]* $1" | head -1 | cut -d' ' -f1 | grep . || echo 0
}

mkdir -p "$SCRATCH/a" "$SCRATCH/b" "$SCRATCH/never"
echo "tmpfs  $SCRATCH/a  tmpfs  noauto,x-storaged,size=1M  0 0" >"$FSTAB"
echo "tmpfs  $SCRATCH/b  tmpfs  noauto,x-storaged,size=1M  0 0" >>"$FSTAB"

note "a start that mounts two: a line for each and one closing line"
run_sd 0 start
[ "$(printf '%s\n' "$OUT" | grep -c '^storaged: mounted tmpfs on ')" = 2 ] || fail "not one line per mount"
[ "$(printf '%s\n' "$OUT" | wc -l)" = 3 ] || fail "more than the mounts and one closing line"
expect_out "^storaged: 2 mounted$"
is_mountpoint "$SCRATCH/a" && is_mountpoint "$SCRATCH/b" || fail "not mounted"
[ "$(status_count done)" = 2 ] || fail "status does not show 2 done"

note "a repeated start changes nothing and prints nothing"
OUT=$(sd start 2>&1)
rc=$?
[ "$rc" = 0 ] || fail "a repeated start exited $rc"
[ -z "$OUT" ] || fail "a repeated start printed: $OUT"
[ "$(mount_count "$SCRATCH/a")" = 1 ] || fail "a repeated start mounted again"
run_sd 0 stop

note "a device that never appears: its wait fails, counted as failed, exit 1"
echo "UUID=0badc0de-0000-4000-8000-00000000dead  $SCRATCH/never  ext4  noauto,x-storaged,x-systemd.device-timeout=1s  0 0" >>"$FSTAB"
run_sd 1 start
expect_out "2 mounted"
expect_no_out " 0 "
expect_no_out "registration, assembly or already in place"
failed=$(closing_count failed)
skipped=$(printf '%s\n' "$OUT" | tail -1 | grep -o '[0-9]* skipped' | cut -d' ' -f1)
[ "$failed" -ge 1 ] || fail "the closing line counts no failure on a run that exits 1"
# every failed or skipped record in status is in the line's count of failures
[ "$(status_count failed skipped)" -le "$failed" ] && [ "$(status_count skipped)" = "${skipped:-0}" ] ||
	fail "closing line: $failed failed, ${skipped:-0} skipped; status: $(status_count failed) failed, $(status_count skipped) skipped"
[ "$(closing_count mounted)" = "$(status_count done)" ] || fail "closing line's mounted is not status's done"
run_sd 0 stop
exit 0

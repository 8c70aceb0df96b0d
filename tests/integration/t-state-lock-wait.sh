#!/bin/bash
# One storaged at a time changes the system (a flock(2) on <state>/lock).
# A second start or stop while another holds the lock waits for it, as
# mount(8) waits on its lock, and then does its own pass: a start that
# finds everything done prints nothing but the one line that says whom it
# waited for.  The wait is bounded (90 s, systemd's default start timeout;
# STORAGED_TEST_LOCK_WAIT shortens it here): when it runs out, storaged
# says so with the pid that holds the lock, and did nothing (exit 1).
# Under a service manager the wait keeps the unit's timeout ahead
# (EXTEND_TIMEOUT_USEC=, as the device waits do) and says what it waits
# for (STATUS=), so that the manager does not end it first.
. "$(dirname "$0")/lib.sh"
setup
command -v flock >/dev/null || skip "flock(1) missing (util-linux)"
mkdir -p "$SCRATCH/mnt"
echo "tmpfs  $SCRATCH/mnt  tmpfs  size=1M,noauto,x-storaged  0 0" >"$FSTAB"
run_sd 0 start
is_mountpoint "$SCRATCH/mnt" || fail "start did not mount"

HOLDER=
LISTENER=
stop_holder() {
	[ -n "$HOLDER" ] && kill "$HOLDER" 2>/dev/null
	[ -n "$LISTENER" ] && kill "$LISTENER" 2>/dev/null
}
CLEANUP_HOOK=stop_holder
# hold SECONDS: flock(1) holds the state lock for SECONDS in the background
# (-o: sleep does not inherit it, so ending $HOLDER releases it)
hold() {
	flock -o "$STATE/lock" sleep "$1" &
	HOLDER=$!
	for _ in $(seq 50); do
		flock -n "$STATE/lock" true || return 0
		sleep 0.1
	done
	fail "flock(1) did not take the lock"
}

note "a second start waits for the holder, then does its pass: nothing to do"
hold 3
t0=$(date +%s)
run_sd 0 start
t1=$(date +%s)
[ $((t1 - t0)) -ge 2 ] || fail "start did not wait for the lock (took $((t1 - t0)) s)"
kill -0 "$HOLDER" 2>/dev/null && fail "start ran while the lock was still held"
expect_out "(pid $HOLDER) holds"
[ "$(printf '%s\n' "$OUT" | wc -l)" = 1 ] || fail "start after the wait said more than whom it waited for"
is_mountpoint "$SCRATCH/mnt" || fail "the mount is gone"
[ "$(mount_count "$SCRATCH/mnt")" = 1 ] || fail "the second start mounted again"

note "the wait runs out: the holder's pid named, nothing done, exit 1"
hold 30
OUT=$(STORAGED_TEST_LOCK_WAIT=2 "$STORAGED" -c "$CONF" -f "$FSTAB" --state-dir "$STATE" stop 2>&1)
rc=$?
printf '%s\n' "$OUT" | sed 's/^/  | /'
[ "$rc" = 1 ] || fail "stop with the lock held past the wait exited $rc, expected 1"
expect_out "still held by another storaged (pid $HOLDER) after 2 s"
is_mountpoint "$SCRATCH/mnt" || fail "stop unmounted without the lock"
kill "$HOLDER"
wait "$HOLDER" 2>/dev/null

note "under a service manager: the timeout kept ahead of the wait, its reason in STATUS="
notify_listen "$SCRATCH/notify" "$SCRATCH/notes"
hold 2
OUT=$(NOTIFY_SOCKET=$SCRATCH/notify STORAGED_TEST_LOCK_WAIT=5 sd start 2>&1)
rc=$?
printf '%s\n' "$OUT" | sed 's/^/  | /'
[ "$rc" = 0 ] || fail "start under a service manager exited $rc after the wait"
for _ in $(seq 20); do grep -q 'READY=1' "$SCRATCH/notes" 2>/dev/null && break; sleep 0.1; done
sed 's/^/  notify: /' "$SCRATCH/notes"
usec=$(sed -n 's/.*EXTEND_TIMEOUT_USEC=\([0-9]*\).*/\1/p' "$SCRATCH/notes" | head -n 1)
[ -n "$usec" ] || fail "no EXTEND_TIMEOUT_USEC= while start waited for the lock"
[ "$usec" -ge 5000000 ] && [ "$usec" -le 35000000 ] ||
	fail "EXTEND_TIMEOUT_USEC=$usec: not the 5 s wait and a margin of at most 30 s"
grep -q "STATUS=waiting up to 5s for another storaged (pid $HOLDER)" "$SCRATCH/notes" ||
	fail "no STATUS= naming the wait for the lock"
wait "$HOLDER" 2>/dev/null

note "stop waits too, then undoes"
hold 2
run_sd 0 stop
is_mountpoint "$SCRATCH/mnt" && fail "stop after the wait did not unmount"
exit 0

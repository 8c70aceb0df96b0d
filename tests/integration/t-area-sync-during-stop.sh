#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# A sync that waits for a stop's lock on the area's record (the sync timer
# or the sleep hook firing at shutdown) and gets it once the stop tore the
# area down: the record it opened is gone.  It said "its bind over DIR was
# unmounted by someone else: not synced back", exit 1, as if the data were
# at risk; it now says the area is not active (nothing to sync back), and
# the stop's sync carried everything.  And a stop unlinks the record
# before it lets go of the lock (it let go first, and a sync that got the
# lock in between read the torn-down area's record).
. "$(dirname "$0")/lib-area.sh"

P=$SCRATCH/p
mkdir -p "$P"
echo before >"$P/f"
persist_conf "$P"
expect_rc 0 start
REC=$RUN/areas/p/state
ino=$(stat -c %i "$REC")

# wait_record_locked PID: until /proc/locks shows the record ($ino)
# locked for writing by PID (an extended regex: under strace, the pid is
# the traced child's), while the stop ($STOP) runs
wait_record_locked() {
	for _ in $(seq 1000); do
		grep -Eq "FLOCK +ADVISORY +WRITE +$1 +[0-9a-f]+:[0-9a-f]+:$ino " /proc/locks && return 0
		kill -0 "$STOP" 2>/dev/null || break
		sleep 0.005
	done
	fail "the stop was not seen holding the area's record locked"
}

# the stop, frozen (SIGSTOP) while it holds the record's lock: the sync
# then waits for that lock however slow the machine.  A process whose
# working directory is the area keeps the stop from ending (it waits for
# it) until the freeze; it is gone before the stop goes on.
echo after >"$P/f"
(cd "$P" && exec sleep 1) &
HOLDER=$!
"$STORAGED" -c "$CONF" -f "$FSTAB" --state-dir "$RUN" stop >"$SCRATCH/stop.out" 2>&1 &
STOP=$!
trap 'kill -CONT "$STOP" 2>/dev/null; kill "$STOP" "$HOLDER" 2>/dev/null; wait "$STOP" "$HOLDER" 2>/dev/null; cleanup' EXIT
wait_record_locked "$STOP"
kill -STOP "$STOP"
"$STORAGED" -c "$CONF" -f "$FSTAB" --state-dir "$RUN" sync p >"$SCRATCH/sync.out" 2>&1 &
SYNC=$!
# the sync waits on the same record (a "->" line of /proc/locks)
waited=
for _ in $(seq 6000); do
	grep -q -- "-> FLOCK .*:$ino " /proc/locks && { waited=1; break; }
	kill -0 "$SYNC" 2>/dev/null || break
	sleep 0.01
done
wait "$HOLDER"
kill -CONT "$STOP"
[ -n "$waited" ] || { cat "$SCRATCH/sync.out"; fail "the sync did not wait for the stop's lock"; }
wait "$STOP"
rc_stop=$?
wait "$SYNC"
rc_sync=$?
[ "$rc_stop" = 0 ] || { cat "$SCRATCH/stop.out"; fail "stop exited $rc_stop"; }
grep -q "someone else" "$SCRATCH/sync.out" &&
	{ cat "$SCRATCH/sync.out"; fail "a sync waiting for the stop's lock blamed someone else"; }
grep -q "area 'p' is not active: there is nothing to sync back" "$SCRATCH/sync.out" ||
	{ cat "$SCRATCH/sync.out"; fail "the sync after the stop does not say the area is not active"; }
[ "$rc_sync" = 1 ] || { cat "$SCRATCH/sync.out"; fail "the sync exited $rc_sync, expected 1"; }
[ "$(cat "$P/f")" = after ] || fail "the stop's sync did not carry the area's change"
is_mountpoint "$P" && fail "the area is still mounted"
pass "a sync waiting for a stop finds the area gone, not unmounted by someone else"

# The other order: a stop that let go of the lock before it unlinked the
# record let the waiting sync read the record of the area it had just torn
# down (seen in the emulated guest).  The stop's unlink of the record is
# held back 1.5 s (strace's fault injection): the record must be gone
# before the lock is.
command -v strace >/dev/null || skip "strace missing"
expect_rc 0 start
ino=$(stat -c %i "$REC")
echo again >"$P/f"
# (LeakSanitizer reads its process through ptrace, which strace holds)
ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" \
	strace -f -o /dev/null -P "$REC" -e trace=unlink,unlinkat -e inject=unlink,unlinkat:delay_enter=1500000 \
	"$STORAGED" -c "$CONF" -f "$FSTAB" --state-dir "$RUN" stop >"$SCRATCH/stop.out" 2>&1 &
STOP=$!
wait_record_locked "[0-9]+"
"$STORAGED" -c "$CONF" -f "$FSTAB" --state-dir "$RUN" sync p >"$SCRATCH/sync.out" 2>&1
rc_sync=$?
wait "$STOP" || { cat "$SCRATCH/stop.out"; fail "stop under strace failed"; }
grep -q "someone else" "$SCRATCH/sync.out" &&
	{ cat "$SCRATCH/sync.out"; fail "a sync that got the lock between the stop's release and its unlink blamed someone else"; }
[ "$rc_sync" = 1 ] && grep -q "area 'p' is not active" "$SCRATCH/sync.out" ||
	{ cat "$SCRATCH/sync.out"; fail "the sync after the stop (exit $rc_sync) does not say the area is not active"; }
[ "$(cat "$P/f")" = again ] || fail "the stop's sync did not carry the area's change"
pass "the stop's record is gone before its lock: a sync waiting for it finds no area"

# status while a stop tears the area down (a fresh user's trial): its bind
# is already undone, the stop still holds the record.  status said "its
# bind over DIR was unmounted by someone else"; it is the stop.  The
# stop's unmount of the area's private view of the directory (its second
# umount2(2)) is held back 2 s.
expect_rc 0 start
ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" \
	strace -f -o /dev/null -e trace=umount2 -e inject=umount2:delay_enter=4000000:when=2 \
	"$STORAGED" -c "$CONF" -f "$FSTAB" --state-dir "$RUN" stop >"$SCRATCH/stop.out" 2>&1 &
STOP=$!
for _ in $(seq 1000); do is_mountpoint "$P" || break; sleep 0.005; done
is_mountpoint "$P" && fail "the stop did not undo the bind"
sd status
wait "$STOP" || { cat "$SCRATCH/stop.out"; fail "stop under strace failed"; }
grep -q "someone else" "$OUT" && { cat "$OUT"; fail "status during a stop blames someone else"; }
grep -q "a \`storaged stop\` is tearing it down" "$OUT" || { cat "$OUT"; fail "status during a stop does not say so"; }
pass "status during a stop says the stop is tearing the area down"

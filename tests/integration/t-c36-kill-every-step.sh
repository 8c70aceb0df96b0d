#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# C36: whatever instant `start` is killed at, `status` tells the truth and
# the next `start` and `stop` follow the live system.  A start (a tmpfs
# fstab entry, a bind below it, a persist area seeded with a few files) is
# killed (SIGKILL, by strace's fault injection: the process that enters
# the system call dies before the call is made) at each call in turn of
# those that make a start's effects: the mount API's, mkdir, the state
# files' writes, fsyncs and renames, and the copy helper's work.  After
# each kill:
# - `status` reports every mount the live mount table shows below the
#   test's directory, as mounted or half set up (interrupted), never as
#   waiting, and never says "set up nothing" over a live mount; it exits
#   non-zero unless the live mounts are the ones a whole start makes;
#   `--json` and the metrics say "interrupted" where the table does;
# - the next `start` exits 0 with the mounts an uninterrupted start makes
#   (findmnt of the test's paths equal);
# - `stop` exits 0 and leaves nothing mounted, and the area's directory
#   holds what it held.
. "$(dirname "$0")/lib-area.sh"
. "$(dirname "$0")/lib-live.sh"
need_fault_injection
need_python3
live_fixture
sums() { (cd "$P" && find . -type f -exec md5sum {} + | LC_ALL=C sort -k 2); }
sums >"$SCRATCH/sums"

expect_rc 0 start
live >"$SCRATCH/whole"
[ "$(wc -l <"$SCRATCH/whole")" = 5 ] || { cat "$SCRATCH/whole"; fail "an uninterrupted start made not the 5 mounts expected"; }
expect_rc 0 stop
[ -z "$(live)" ] || fail "stop left mounts: $(live)"

kills=0
# C36_KILL_STRIDE=N tries every Nth call of each kind (the emulated guest
# takes N times less; the native run tries each)
stride=${C36_KILL_STRIDE:-1}
unrecorded=0
# NAME:MAX for each call: MAX bounds the count tried (a start makes fewer)
for sc in fsopen:6 fsconfig:10 fsmount:6 move_mount:6 open_tree:5 mount_setattr:5 mount:5 mkdir:12 mkdirat:4 \
	rename:8 fsync:14 pwrite64:12 fsetxattr:3 fchown:6 utimensat:6 clone3:6; do
	name=${sc%%:*}
	for when in $(seq 1 "$stride" "${sc##*:}"); do
		# in a subshell: bash says nothing of the strace the kill ends
		rc=$(
			strace -f -qq -o /dev/null -e trace="$name" -e inject="$name":signal=KILL:when="$when" \
				"$STORAGED" -c "$CONF" -f "$FSTAB" --state-dir "$RUN" start >"$SCRATCH/killed.out" 2>&1
			echo $?
		)
		[ "$rc" != 0 ] && kills=$((kills + 1))
		check_status "killed at $name #$when (exit $rc)"
		expect_rc 0 start
		live | diff "$SCRATCH/whole" - >"$SCRATCH/diff" ||
			{ cat "$SCRATCH/diff"; fail "the start after a kill at $name #$when did not reach the whole start's mounts"; }
		expect_rc 0 stop
		[ -z "$(live)" ] || fail "stop after a kill at $name #$when left mounts: $(live)"
		sums | diff "$SCRATCH/sums" - >/dev/null || fail "after a kill at $name #$when the area's directory lost its files"
		# the start ran to its end before the call came this often
		[ "$rc" != 0 ] || break
	done
done
[ "$unrecorded" -ge 1 ] || fail "no kill left an area set up in part without its record: the seed was not cut"
[ "$kills" -ge $((30 / stride)) ] || fail "only $kills starts were killed: the steps were not cut where they should be"
pass "start killed at $kills system calls ($unrecorded in an area's setup before its record): status told the live mounts each time, the next start and stop followed"

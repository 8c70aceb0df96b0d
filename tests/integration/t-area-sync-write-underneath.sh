#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Issue 42 (found by a hostile trial of the sync back): what is written in
# the directory underneath (through a bind of its parent made before
# `start`, kept private) while a `sync` runs, or after a sync was killed
# in its renames and before the next one, was older than the directory's
# baseline (trusted.storaged.lower-synced), which a sync records at its
# end and the completion of a cut one at its own start.  The next sync
# took a file written there as unchanged in the directory and put the
# area's version over it, and deleted a file made there, exit 0.
#  1. during: the sync is held (strace delays its first rename into
#     place by 3 s) while f1 is written and made1 made;
#  2. after a kill: the sync is killed (strace's fault injection, as it
#     enters the call) at its second rename, then f2 is written and made2
#     made.
# Each time the next sync keeps them, and what the syncs themselves put
# there (g1..g3) is not taken for the directory's change: changed again
# in the area it is carried, with no conflict.
. "$(dirname "$0")/lib-area.sh"
. "$(dirname "$0")/lib-live.sh"
need_fault_injection

W=$SCRATCH/work
P=$W/proj
V=$SCRATCH/view
mkdir -p "$P/g" "$V"
persist_conf "$P"
echo original >"$P/f1" && echo original >"$P/f2"
for i in 1 2 3; do echo "old $i" >"$P/g/g$i"; done
mount --bind "$W" "$V" && mount --make-private "$V" || fail "cannot bind $W at $V"
expect_rc 0 start

# sync_traced INJECT: a sync under strace's renameat2 fault INJECT, after
# a change of g1..g3 in the area
sync_traced() {
	sleep 0.1
	for i in 1 2 3; do echo "$1 $i" >"$P/g/g$i"; done
	# LeakSanitizer reads its own process through ptrace: not under strace
	ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" \
		strace -f -qq -o /dev/null -e trace=renameat2 -e inject=renameat2:$1 \
		"$STORAGED" -c "$CONF" -f "$FSTAB" --state-dir "$RUN" sync p >"$OUT" 2>&1
}

# underneath N: f<N> written, made<N> made in the directory underneath
underneath() {
	echo "the directory's" >"$V/proj/f$1"
	echo made >"$V/proj/made$1"
}

# kept N WHEN: the next sync keeps them, and carries the area's own
kept() {
	sleep 0.1
	expect_rc 0 sync
	[ "$(cat "$V/proj/f$1")" = "the directory's" ] ||
		fail "f$1 written in the directory $2, not changed in the area, was replaced by the area's version at the next sync: '$(cat "$V/proj/f$1")'"
	[ "$(cat "$V/proj/made$1" 2>/dev/null)" = made ] ||
		fail "made$1, made in the directory $2, was deleted by the next sync"
	echo more >>"$P/g/g1"
	sleep 0.1
	expect_rc 0 sync
	cmp -s "$P/g/g1" "$V/proj/g/g1" || fail "g1 changed in the area after the sync that put it ($2) was not carried"
	find "$V/proj" -name '*.storaged-area*' | grep -q . &&
		{ cat "$OUT"; fail "the sync's own renames ($2) were taken for changes underneath: $(find "$V/proj")"; }
}

# 1. during a sync
sync_traced delay_enter=3000000:when=1 &
pid=$!
wait_intent || fail "the sync never recorded its intent"
underneath 1
wait $pid || { cat "$OUT"; fail "the held sync failed"; }
kept 1 "during a sync"

# 2. after a sync killed in its renames
sync_traced signal=KILL:when=2 && fail "the sync was not killed at its second rename"
get_xattr "$P" trusted.storaged.committing >/dev/null || fail "the killed sync left no intent"
sleep 0.1
underneath 2
kept 2 "after a killed sync"

umount "$V"
expect_rc 0 stop
for n in 1 2; do
	[ "$(cat "$P/f$n")" = "the directory's" ] || fail "f$n after stop: '$(cat "$P/f$n")'"
	[ "$(cat "$P/made$n" 2>/dev/null)" = made ] || fail "made$n after stop"
done
[ "$(cat "$P/g/g2")" = "signal=KILL:when=2 2" ] || fail "g2 after stop: '$(cat "$P/g/g2")'"
pass "written or made underneath during a sync or after a killed one: the directory's; the syncs' own renames are not conflicts"

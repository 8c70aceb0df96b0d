#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# What stop says is true where it is read.  A process holding a file open
# for writing in a persist area: stop refuses, and its warning says the
# process keeps the area from being stopped (it said "its writes go to the
# hidden copy", which is setup's case: no area was being set up); its
# error, which `status` shows later, names what to run instead of "what
# is named above" (nothing is above it in status).  Two areas removed by
# one stop, one without its content: "2 areas removed (1 without its
# content)", not "1 area removed, 1 failed".
. "$(dirname "$0")/lib-area.sh"

A=$SCRATCH/a
B=$SCRATCH/b
mkdir -p "$A" "$B"
echo a >"$A/f"
echo b >"$B/f"
write_conf <<EOT
[area a]
path = $A
backend = tmpfs
size = 16M
persist = yes

[area b]
path = $B
backend = tmpfs
size = 16M
persist = yes
EOT
expect_rc 0 start

sleep 60 3>>"$A/f" &
HOLDER=$!
expect_rc 1 stop
grep -q "pid $HOLDER (sleep) has files open under $A: it keeps the area from being stopped" "$OUT" ||
	{ cat "$OUT"; fail "stop: no warning naming the holder and what it does"; }
grep -q "hidden copy" "$OUT" && { cat "$OUT"; fail "stop speaks of a hidden copy"; }
expect_rc 1 status
grep -q "fuser -vm $A" "$OUT" || { cat "$OUT"; fail "status: the stop's error does not say how to find the holder"; }
grep -q "named above" "$OUT" && { cat "$OUT"; fail "status says 'named above'"; }
kill "$HOLDER"
wait "$HOLDER" 2>/dev/null
pass "a busy stop names the holder's effect, and status what to run"

# b's private view of its directory unmounted by someone: the first stop
# keeps it (its content is only in RAM), the next one, after a start that
# set a up again, removes it without its content
expect_rc 0 start
umount "$RUN/areas/b/lower" || fail "umount the private view of b's directory"
expect_rc 1 stop
is_mountpoint "$A" && fail "the first stop left area a"
sd start
is_mountpoint "$A" || { cat "$OUT"; fail "area a not set up again"; }
expect_rc 1 stop
grep -qx "storaged: error: 2 areas removed (1 without its content)" "$OUT" ||
	{ cat "$OUT"; fail "stop's closing line does not count both areas removed"; }
[ -z "$(scratch_mounts)" ] || fail "mounts left: $(scratch_mounts)"
pass "an area removed without its content is counted removed"

#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Found by a hostile trial (branch attack3) of ae67ad8, "Overlay stop:
# applies only what changed in the upper layer since the last sync",
# reverted for it (8209e0c): the stop applies the whole upper layer.
#
# An overlay area (seed = overlay, persist = yes): a file is changed in
# the area and carried by a `sync`, whose stamp is S.  The clock is then
# stepped back 2 s (an NTP step, a wrong RTC corrected) and the file is
# changed again in the area: its ctime is about S - 2 s.  By the time of
# `stop` the clock has passed S again (here: stepped forward 2 s, which
# also restores the machine's clock; in life, two seconds pass).  The stop
# reads the stamp, sees "now" past it (so it does not fall back to a whole
# sync), takes the file's ctime, before S, for "carried already", skips
# it, exits 0 and tears the area down: the second change, which succeeded,
# is not in the directory.  Before ae67ad8 the stop applied the whole
# upper layer and carried it.  (The mounted `sync` judges the same way,
# but the area still held the change then.)
#
# It steps the realtime clock, which every process of the machine shares:
# it runs where nothing else does (the guest suite sets
# STORAGED_TEST_STEP_CLOCK=1); on the host, beside the other tests of a CI
# run, it is skipped.
. "$(dirname "$0")/lib-area.sh"
[ "${STORAGED_TEST_STEP_CLOCK:-}" = 1 ] ||
	skip "steps the machine's clock: run only where STORAGED_TEST_STEP_CLOCK=1 (the guest suite)"
grep -qw overlay /proc/filesystems || modprobe -q overlay 2>/dev/null
grep -qw overlay /proc/filesystems || skip "this kernel has no overlay filesystem"
command -v python3 >/dev/null || skip "no python3 (steps the clock)"
python3 -c 'import time; time.clock_settime_ns(time.CLOCK_REALTIME, time.clock_gettime_ns(time.CLOCK_REALTIME))' 2>/dev/null ||
	skip "cannot set the clock here"

P=$SCRATCH/work
mkdir -p "$P"
echo original >"$P/f"
persist_conf "$P" overlay
expect_rc 0 start
echo first >"$P/f"
expect_rc 0 sync
[ "$(cat "$RUN/areas/p/lower/f")" = first ] || fail "the sync did not carry the first change"

# clock back 2 s, the write, clock forward 2 s: one process, the clock
# restored whatever happens to the write (a few microseconds' drift)
python3 - "$P/f" <<'PY' || fail "could not write with the clock stepped back"
import sys, time
R = time.CLOCK_REALTIME
time.clock_settime_ns(R, time.clock_gettime_ns(R) - 2_000_000_000)
try:
    with open(sys.argv[1], "w") as f:
        f.write("second\n")
finally:
    time.clock_settime_ns(R, time.clock_gettime_ns(R) + 2_000_000_000)
PY
[ "$(cat "$P/f")" = second ] || fail "the area does not show the second change"
sleep 0.1
expect_rc 0 stop
got=$(cat "$P/f")
[ "$got" = second ] ||
	fail "a change made in the area while the clock stood behind the last sync's stamp is not in the directory after stop, which exited 0: '$got' (lost)"
pass "stop carried a change made while the clock stood behind the last sync"

#!/bin/bash
# `storaged stop` before anything was set up: it says there is nothing to
# undo, exits 0, and creates nothing (no state directory, no lock file).
. "$(dirname "$0")/lib.sh"
setup
[ -e "$STATE" ] && fail "setup made the state directory"

run_sd 0 stop
expect_out "nothing to undo"
expect_out "$STATE"
[ -e "$STATE" ] && fail "stop created the state directory '$STATE'"

note "twice, and with -v: still nothing made"
run_sd 0 -v stop
[ -e "$STATE" ] && fail "stop -v created the state directory '$STATE'"

note "after a start and stop, stop again is still fine"
mkdir -p "$SCRATCH/mnt"
echo "tmpfs  $SCRATCH/mnt  tmpfs  size=1M,noauto,x-storaged  0 0" >"$FSTAB"
run_sd 0 start
is_mountpoint "$SCRATCH/mnt" || fail "start did not mount the tmpfs"
run_sd 0 stop
is_mountpoint "$SCRATCH/mnt" && fail "stop left the tmpfs mounted"
run_sd 0 stop
exit 0

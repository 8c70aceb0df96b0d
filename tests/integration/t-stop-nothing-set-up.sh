#!/bin/bash
# `storaged stop` before anything was set up: it says there is nothing to
# undo, exits 0, and creates nothing (no state directory, no lock file).
# A stop that undoes something ends with one closing line counting it, as
# start does; one with nothing left to undo prints nothing.
. "$(dirname "$0")/lib.sh"
setup
[ -e "$STATE" ] && fail "setup made the state directory"

run_sd 0 stop
expect_out "nothing to undo"
expect_out "$STATE"
[ -e "$STATE" ] && fail "stop created the state directory '$STATE'"
[ "$(printf '%s\n' "$OUT" | wc -l)" = 1 ] || fail "stop with nothing set up said more than that"

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
# one line per change, then the count, as start's closing line
[ "$(printf '%s\n' "$OUT" | tail -1)" = "storaged: 1 unmounted" ] || fail "stop's closing line is not '1 unmounted'"
run_sd 0 stop
[ -z "$OUT" ] || fail "a stop with nothing left to undo printed: $OUT"

note "an area and two mounts: the closing line counts each, plurals right"
mkdir -p "$SCRATCH/mnt2" "$SCRATCH/area"
echo "tmpfs  $SCRATCH/mnt2  tmpfs  size=1M,noauto,x-storaged  0 0" >>"$FSTAB"
printf '[storaged]\n[area a]\npath = %s/area\nsize = 1M\ninodes = 100\nseed = no\n' "$SCRATCH" >"$CONF"
run_sd 0 start
run_sd 0 stop
[ "$(printf '%s\n' "$OUT" | tail -1)" = "storaged: 2 unmounted, 1 area removed" ] ||
	fail "stop's closing line is not '2 unmounted, 1 area removed'"
is_mountpoint "$SCRATCH/area" && fail "stop left the area"
exit 0

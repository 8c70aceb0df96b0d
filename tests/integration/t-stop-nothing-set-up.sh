#!/bin/bash
# `storaged stop` before anything was set up: with the default state
# directory missing it says there is nothing to undo, exits 0, and creates
# nothing (no state directory, no lock file).  A --state-dir given by hand
# that does not exist is a typo until shown otherwise: exit 4 with advice,
# as status does, and nothing made either.
# A stop that undoes something ends with one closing line counting it, as
# start does; one with nothing left to undo prints nothing.
. "$(dirname "$0")/lib.sh"
setup
[ -e "$STATE" ] && fail "setup made the state directory"

note "an explicit --state-dir that does not exist: a user error, named with advice"
run_sd 4 stop
expect_out "$STATE"
expect_out "no such directory"
expect_out "check the name"
[ -e "$STATE" ] && fail "stop created the state directory '$STATE'"
run_sd 4 -v stop
[ -e "$STATE" ] && fail "stop -v created the state directory '$STATE'"

note "the default state directory missing: nothing to undo, exit 0, nothing made"
command -v unshare >/dev/null || skip "unshare missing (util-linux)"
# a private /run in a mount namespace of its own: the host's is untouched
OUT=$(unshare -m --propagation private /bin/sh -c '
	mount -t tmpfs -o mode=0755 none /run || exit 99
	"$1" -c "$2" -f "$3" stop 2>&1; rc=$?
	[ -e /run/storaged ] && echo "MADE /run/storaged"
	exit $rc' sh "$STORAGED" "$CONF" "$FSTAB")
rc=$?
printf '%s\n' "$OUT" | sed 's/^/  | /'
[ "$rc" = 99 ] && skip "cannot mount a tmpfs on /run in a private mount namespace"
[ "$rc" = 0 ] || fail "stop with the default state directory missing exited $rc, expected 0"
expect_out "nothing to undo"
expect_out "/run/storaged"
expect_no_out "MADE"
[ "$(printf '%s\n' "$OUT" | wc -l)" = 1 ] || fail "stop with nothing set up said more than that"

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

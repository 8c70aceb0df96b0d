#!/bin/bash
# stop refused because a filesystem is mounted below one storaged set up
# (an fstab entry, an area): stop names that mount and how to free it, not
# fuser, and status afterwards shows the entry or area still there and
# why, exit 1; once it is unmounted, stop finishes and status is clean.
. "$(dirname "$0")/lib.sh"
setup
MP=$SCRATCH/data
A=$SCRATCH/area
mkdir -p "$MP" "$A"
printf 'tmpfs %s tmpfs size=1M,noauto,x-storaged 0 0\n' "$MP" >"$FSTAB"
run_sd 0 start
mkdir "$MP/sub" && mount -t tmpfs foreign "$MP/sub" || fail "cannot mount below $MP"
run_sd 1 stop
is_mountpoint "$MP" || fail "stop unmounted $MP"
expect_out "foreign (tmpfs) is mounted on $MP/sub, below it: unmount it first (umount $MP/sub)"
expect_no_out "fuser"
run_sd 1 status
printf '%s\n' "$OUT" | grep -q "^mount  *$MP .*still mounted: .*foreign (tmpfs) is mounted on $MP/sub" ||
	fail "status does not say $MP is still mounted, and why"
umount "$MP/sub"
run_sd 0 stop
is_mountpoint "$MP" && fail "still mounted after the second stop"
run_sd 0 status

printf '[area a]\npath = %s\nbackend = tmpfs\nsize = 8M\n' "$A" >>"$CONF"
: >"$FSTAB"
run_sd 0 start
mkdir -p "$A/late" && mount -t tmpfs late "$A/late" || fail "cannot mount below $A"
run_sd 1 stop
expect_out "late (tmpfs) was mounted on $A/late"
run_sd 1 status
printf '%s\n' "$OUT" | grep -q "^area  *a .*still set up: .*late (tmpfs) was mounted on $A/late" ||
	fail "status does not say area a is still set up, and why"
# a start finds it in place: it is wanted again, nothing to report
run_sd 0 start
run_sd 0 status
expect_no_out "still set up"
umount "$A/late"
run_sd 0 stop
run_sd 0 status
exit 0

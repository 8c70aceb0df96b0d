#!/bin/bash
# Bad input gets a clear error with file:line, exit 2, and changes nothing.
. "$(dirname "$0")/lib.sh"
setup

mkdir -p "$SCRATCH/a" "$SCRATCH/b"
echo "tmpfs  $SCRATCH/a  tmpfs  size=8M,noauto,x-storaged  0 0" >"$FSTAB"
before=$(mount_snapshot)

note "unknown key and bad value: every error reported"
printf '[storaged]\ndevice-timout = 5s\nmount-timeout = soon\n' >"$CONF"
run_sd 2 start
expect_out "$CONF:2"
expect_out "$CONF:3"
[ ! -e "$STATE" ] || fail "state directory created for a bad config"

note "config writable by others is refused"
printf '[storaged]\n' >"$CONF"
chmod 0666 "$CONF"
run_sd 2 start
expect_out "$CONF"
chmod 0644 "$CONF"

note "an fstab writable by others is refused too: it decides what root mounts"
chmod 0666 "$FSTAB"
run_sd 2 start
expect_out "$FSTAB: owned by uid 0, mode 0666"
chmod 0644 "$FSTAB"

note "a state directory others can write is refused before anything is done"
mkdir -p "$SCRATCH/open-state"
chmod 0777 "$SCRATCH/open-state"
OUT=$("$STORAGED" -c "$CONF" -f "$FSTAB" --state-dir "$SCRATCH/open-state" start 2>&1)
[ $? = 4 ] || fail "start with a world-writable state directory did not exit 4: $OUT"
printf '%s\n' "$OUT" | grep -q "state directory '$SCRATCH/open-state'" || fail "no message naming the state directory: $OUT"
is_mountpoint "$SCRATCH/a" && fail "mounted although the state directory is untrusted"

note "a dependency cycle names every entry"
cat >"$FSTAB" <<EOT
tmpfs  $SCRATCH/a  tmpfs  size=8M,noauto,x-storaged,x-storaged.requires=$SCRATCH/b  0 0
tmpfs  $SCRATCH/b  tmpfs  size=8M,noauto,x-storaged,x-storaged.requires=$SCRATCH/a  0 0
EOT
run_sd 2 start
expect_out "cycle"
expect_out "$SCRATCH/a"
expect_out "$SCRATCH/b"
run_sd 2 check

note "a bad option value in fstab"
echo "tmpfs  $SCRATCH/a  tmpfs  noauto,x-storaged,x-storaged.device-timeout=soon  0 0" >"$FSTAB"
run_sd 2 start
expect_out "$FSTAB:1"

note "a missing config given with -c"
CONF=$SCRATCH/nonexistent.conf run_sd 2 start

note "usage errors"
run_sd 2 frobnicate
run_sd 2 sync one two # one area at a time, or all of them

note "sync of an area that is configured but not set up: nothing in RAM to lose"
printf '[storaged]\n[area idle]\npath = %s/idle\n' "$SCRATCH" >"$CONF"
: >"$FSTAB" # (the bad option above is another test's)
mkdir -p "$SCRATCH/idle"
run_sd 1 sync idle
expect_out "area 'idle' is not active: there is nothing to sync back"
expect_no_out "only in RAM"
expect_no_out "cannot record"
[ ! -e "$STATE" ] || fail "a sync of an inactive area made the state directory"
[ "$(mount_snapshot)" = "$before" ] || fail "bad input changed the mount table"
exit 0

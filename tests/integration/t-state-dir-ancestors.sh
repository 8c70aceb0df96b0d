#!/bin/bash
# The state directory tells `storaged stop` what to unmount, so whoever can
# replace it decides what root undoes: not only the directory itself but
# every directory above it must be root's and closed to group and others,
# or root's and sticky (/tmp) with the entry below it root's (only an
# entry's owner may rename it there), as sshd's StrictModes or systemd's
# unsafe-path checks decide.  Anything else is refused by start, stop and
# status with exit status 4, before anything is made or changed, naming
# the directory at fault and what to do.
. "$(dirname "$0")/lib.sh"
setup
mkdir -p "$SCRATCH/mnt"
echo "tmpfs  $SCRATCH/mnt  tmpfs  size=1M,noauto,x-storaged  0 0" >"$FSTAB"

note "below an everyone-writable directory without the sticky bit: refused, nothing made"
mkdir -m 0777 "$SCRATCH/open"
chmod 0777 "$SCRATCH/open"
in_state_dir "$SCRATCH/open/state" 4 start
expect_out "'$SCRATCH/open'"
expect_out "mode 0777"
expect_out "chmod go-w $SCRATCH/open"
[ -e "$SCRATCH/open/state" ] && fail "start made the state directory below $SCRATCH/open"
is_mountpoint "$SCRATCH/mnt" && fail "start mounted with an untrusted state directory"
note "...also two levels up, and for stop and status of an existing one"
mkdir -p "$SCRATCH/open/a/state"
for cmd in start stop status; do
	in_state_dir "$SCRATCH/open/a/state" 4 "$cmd"
	expect_out "'$SCRATCH/open'"
done
is_mountpoint "$SCRATCH/mnt" && fail "start mounted with an untrusted state directory"

note "below a directory another user owns: refused, the owner named"
mkdir -p "$SCRATCH/theirs/state"
chown 65534 "$SCRATCH/theirs"
chmod 0755 "$SCRATCH/theirs"
for cmd in start stop status; do
	in_state_dir "$SCRATCH/theirs/state" 4 "$cmd"
	expect_out "'$SCRATCH/theirs'"
	expect_out "uid 65534"
done
is_mountpoint "$SCRATCH/mnt" && fail "start mounted with an untrusted state directory"

note "through a link another user could repoint (root's, in their directory): refused"
mkdir -p "$SCRATCH/real/state"
ln -s "$SCRATCH/real" "$SCRATCH/theirs/l"
in_state_dir "$SCRATCH/theirs/l/state" 4 start
expect_out "'$SCRATCH/theirs/l' is a symbolic link"
expect_out "give --state-dir the path without it ($SCRATCH/real/state)"
[ "$(printf '%s\n' "$OUT" | wc -l)" = 1 ] || fail "the refusal was said more than once"
is_mountpoint "$SCRATCH/mnt" && fail "start mounted with an untrusted state directory"
note "...while root's link in root's directory is followed"
ln -s "$SCRATCH/real" "$SCRATCH/l"
in_state_dir "$SCRATCH/l/state" 0 start
in_state_dir "$SCRATCH/l/state" 0 stop

note "in a sticky everyone-writable directory, below an entry another user owns: refused"
mkdir -m 1777 "$SCRATCH/sticky"
chmod 1777 "$SCRATCH/sticky"
mkdir -p "$SCRATCH/sticky/user/state"
chown 65534 "$SCRATCH/sticky/user"
in_state_dir "$SCRATCH/sticky/user/state" 4 start
expect_out "'$SCRATCH/sticky/user'"
expect_out "uid 65534"
is_mountpoint "$SCRATCH/mnt" && fail "start mounted with an untrusted state directory"

note "in a sticky directory, root's entry (as the test suite's own in /tmp): accepted"
in_state_dir "$SCRATCH/sticky/state" 0 start
is_mountpoint "$SCRATCH/mnt" || fail "start in a sticky directory of root's did not mount"
in_state_dir "$SCRATCH/sticky/state" 0 status
in_state_dir "$SCRATCH/sticky/state" 0 stop
is_mountpoint "$SCRATCH/mnt" && fail "stop did not unmount"

note "the advice works: chmod go-w"
chmod go-w "$SCRATCH/open"
in_state_dir "$SCRATCH/open/state" 0 start
in_state_dir "$SCRATCH/open/state" 0 stop
exit 0

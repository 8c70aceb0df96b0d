#!/bin/bash
# A state directory or state file storaged cannot use is an error with one
# exit status (4) from every command, whose advice fixes it: never "set up
# nothing" with 0 while storaged's mounts are live.  Each case is checked
# against the mount table: start changes nothing, stop unmounts nothing.
. "$(dirname "$0")/lib.sh"
setup
mkdir -p "$SCRATCH/mnt" "$SCRATCH/real"
echo "tmpfs  $SCRATCH/mnt  tmpfs  size=1M,noauto,x-storaged  0 0" >"$FSTAB"

note "a symbolic link as the state directory: refused by every command, the real path named"
ln -s "$SCRATCH/real" "$SCRATCH/link"
for cmd in start status stop; do
	in_state_dir "$SCRATCH/link" 4 "$cmd"
	expect_out "is a symbolic link"
	expect_out "--state-dir $SCRATCH/real"
done
is_mountpoint "$SCRATCH/mnt" && fail "start mounted through a linked state directory"
note "the advice works: the directory itself"
in_state_dir "$SCRATCH/real" 0 start
is_mountpoint "$SCRATCH/mnt" || fail "start with the real directory did not mount"
in_state_dir "$SCRATCH/real" 0 stop
is_mountpoint "$SCRATCH/mnt" && fail "stop did not unmount"

note "a link to nowhere: the advice is to remove it"
ln -s "$SCRATCH/nowhere" "$SCRATCH/dangling"
in_state_dir "$SCRATCH/dangling" 4 start
expect_out "rm $SCRATCH/dangling"
[ -e "$SCRATCH/nowhere" ] && fail "start made the link's target"

note "a state directory others can write: chown/chmod of it"
mkdir -m 0777 "$SCRATCH/open"
in_state_dir "$SCRATCH/open" 4 start
expect_out "mode 0777"
expect_out "chmod go-w $SCRATCH/open"
chmod go-w "$SCRATCH/open"
in_state_dir "$SCRATCH/open" 0 start
in_state_dir "$SCRATCH/open" 0 stop

note "with the mount live, each damaged state file is an error, never 'set up nothing'"
run_sd 0 start
is_mountpoint "$SCRATCH/mnt" || fail "start did not mount"
cp -p "$STATE/state" "$SCRATCH/good-state"
damage() { # damage HOW: replaces the state file
	rm -rf "$STATE/state"
	case $1 in
	empty) : >"$STATE/state" ;;
	garbage) { cat "$SCRATCH/good-state"; echo 'garbage ['; } >"$STATE/state" ;;
	directory) mkdir "$STATE/state" ;;
	link) ln -s "$SCRATCH/good-state" "$STATE/state" ;;
	writable) cp "$SCRATCH/good-state" "$STATE/state" && chmod 0666 "$STATE/state" ;;
	esac
}
for how in empty garbage directory link writable; do
	note "state file: $how"
	damage "$how"
	for cmd in status stop start; do
		run_sd 4 "$cmd"
		expect_no_out "set up nothing"
		expect_no_out "nothing to undo"
		expect_out "$STATE/state"
		[ "$(mount_count "$SCRATCH/mnt")" = 1 ] || fail "$cmd with a $how state file changed the mounts"
	done
	case $how in
	empty) expect_out "empty" ;;
	garbage) expect_out "$STATE/state:[0-9]*: corrupt" ;;
	directory) expect_out "not a regular file" ;;
	link) expect_out "symbolic link" ;;
	writable) expect_out "mode 0666" ; expect_out "chmod go-w $STATE/state" ;;
	esac
	run_sd 4 status --json
done
rm -rf "$STATE/state"
cp -p "$SCRATCH/good-state" "$STATE/state"
run_sd 0 status
expect_out "$SCRATCH/mnt"

note "a state that cannot be written: start exits 4 and says so"
run_sd 0 stop
is_mountpoint "$SCRATCH/mnt" && fail "stop did not unmount"
rm -rf "$STATE"
mkdir -m 0755 "$STATE"
# room for the lock and a header, not for what the run records
mount -t tmpfs -o size=4k,nr_inodes=8,mode=0755 state-full "$STATE" || fail "mount a small tmpfs"
run_sd 4 start
expect_out "cannot write the state file '$STATE/state'"
note "and a state directory that is read-only: start changes nothing"
umount "$SCRATCH/mnt" 2>/dev/null
mount -o remount,ro "$STATE" || fail "remount read-only"
run_sd 4 start
expect_out "$STATE"
is_mountpoint "$SCRATCH/mnt" && fail "start mounted with a read-only state directory"
umount "$STATE"

note "a relative --state-dir: made absolute against the working directory, as -c and -f are"
printf '[storaged]\n' >"$CONF"
: >"$FSTAB"
mkdir -p "$SCRATCH/cwd"
OUT=$(cd "$SCRATCH/cwd" && "$STORAGED" -c "../$(basename "$CONF")" -f "../$(basename "$FSTAB")" --state-dir rel start 2>&1)
rc=$?
printf '%s\n' "$OUT" | sed 's/^/  | /'
[ "$rc" = 0 ] || fail "a relative --state-dir exited $rc, expected 0"
[ -d "$SCRATCH/cwd/rel" ] || fail "a relative --state-dir was not made in the working directory"
note "the advice names the three absolute paths, pasted from anywhere"
OUT=$(cd "$SCRATCH/cwd" && "$STORAGED" -c "../$(basename "$CONF")" -f "../$(basename "$FSTAB")" --state-dir rel sync nosuch 2>&1)
printf '%s\n' "$OUT" | sed 's/^/  | /'
expect_out "storaged -c $SCRATCH/cwd/../$(basename "$CONF") -f $SCRATCH/cwd/../$(basename "$FSTAB") --state-dir $SCRATCH/cwd/rel"
OUT=$(cd / && "$STORAGED" -c "$CONF" -f "$FSTAB" --state-dir "$SCRATCH/cwd/rel" stop 2>&1) ||
	fail "stop with the absolute state directory failed: $OUT"
exit 0

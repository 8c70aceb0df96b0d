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

note "a bare file name (-c storaged.conf): the refusal names the working directory by its path, not '.'"
mkdir -m 0777 "$SCRATCH/open"
chmod 0777 "$SCRATCH/open"
printf '[storaged]\n' >"$SCRATCH/open/storaged.conf"
(cd "$SCRATCH/open" && "$STORAGED" check -c storaged.conf -f "$FSTAB" --state-dir "$STATE") >"$SCRATCH/out" 2>&1
[ $? = 2 ] || { cat "$SCRATCH/out"; fail "check -c storaged.conf in a directory others may write: not exit 2"; }
grep -q "storaged: error: $SCRATCH/open: owned by uid 0, mode 0777: .*run 'chown root:root $SCRATCH/open; chmod go-w $SCRATCH/open'" "$SCRATCH/out" ||
	{ cat "$SCRATCH/out"; fail "the refusal does not name '$SCRATCH/open'"; }
grep -q "error: \.:\|root:root \.;" "$SCRATCH/out" && { cat "$SCRATCH/out"; fail "the refusal names '.'"; }

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

note "a mistyped --state-dir for status is an error naming it, not 'set up nothing'"
OUT=$("$STORAGED" -c "$CONF" -f "$FSTAB" --state-dir "$SCRATCH/no-such-state" status 2>&1)
rc=$?
printf '%s\n' "$OUT" | sed 's/^/  | /'
[ "$rc" = 4 ] || fail "status with a missing --state-dir exited $rc, expected 4"
printf '%s\n' "$OUT" | grep -q "^storaged: error: --state-dir '$SCRATCH/no-such-state': no such directory" ||
	fail "no error naming the missing state directory"
printf '%s\n' "$OUT" | grep -q "set up nothing" && fail "a missing --state-dir reported as nothing set up"
[ -e "$SCRATCH/no-such-state" ] && fail "status made the state directory"

note "sync and stop with that missing --state-dir fail as status does, exit 4"
for cmd in sync stop; do
	OUT=$("$STORAGED" -c "$CONF" -f "$FSTAB" --state-dir "$SCRATCH/no-such-state" $cmd 2>&1)
	rc=$?
	[ "$rc" = 4 ] || fail "$cmd with a missing --state-dir exited $rc, expected 4: $OUT"
	printf '%s\n' "$OUT" | grep -q "^storaged: error: --state-dir '$SCRATCH/no-such-state': no such directory" ||
		fail "$cmd: no error naming the missing state directory: $OUT"
	[ -e "$SCRATCH/no-such-state" ] && fail "$cmd made the state directory"
done

note "a dependency cycle names every entry"
cat >"$FSTAB" <<EOT
tmpfs  $SCRATCH/a  tmpfs  size=8M,noauto,x-storaged,x-storaged.requires=$SCRATCH/b  0 0
tmpfs  $SCRATCH/b  tmpfs  size=8M,noauto,x-storaged,x-storaged.requires=$SCRATCH/a  0 0
EOT
# the cycle is refused at one of its lines (C35): the other waits on it
run_sd 1 start
is_mountpoint "$SCRATCH/a" && fail "an entry of a cycle was mounted"
expect_out "cycle"
expect_out "$SCRATCH/a"
expect_out "$SCRATCH/b"
run_sd 2 check

note "a bad option value in fstab"
echo "tmpfs  $SCRATCH/a  tmpfs  noauto,x-storaged,x-storaged.device-timeout=soon  0 0" >"$FSTAB"
run_sd 2 check
expect_out "$FSTAB:1"
run_sd 1 start
expect_out "refused, $FSTAB:1"

note "an area's unknown fs = type: a config error at the fs = line, in check and start"
mkdir -p "$SCRATCH/zarea"
printf '[storaged]\n[area z]\npath = %s/zarea\nbackend = zram\nsize = 16M\nseed = no\nfs = ext5\n' "$SCRATCH" >"$CONF"
: >"$FSTAB"
sd stop >/dev/null 2>&1
rm -rf "$STATE" # the starts above recorded their refused lines
for cmd in check --dry-run; do
	run_sd 2 $cmd
	expect_out "^storaged: error: $CONF:7: fs: 'ext5' is not a filesystem type the kernel can put on \[area z\]'s zram device"
	expect_no_out "will fail"
	expect_no_out "$CONF:2:"
done
[ ! -e "$STATE" ] || fail "state directory created by check or --dry-run"
# start fails that area alone (C35), with the same words
run_sd 1 start
expect_out "^storaged: error: area z .*: refused, $CONF:7: fs: 'ext5' is not a filesystem type the kernel can put on \[area z\]'s zram device"
is_mountpoint "$SCRATCH/zarea" && fail "an area with an unknown fs was set up"
sd stop >/dev/null 2>&1
rm -rf "$STATE"

note "an area whose path= is refused, beside a deferred entry: the error, no crash; start mounts the entry (C35)"
# check, --dry-run and start ordered every entry against every area's path,
# a refused path= (NULL) too, and crashed before printing the error
mkdir -p "$SCRATCH/a"
for bad in "path = rel/a" "path = /" "path = $SCRATCH/../x"; do
	printf '[storaged]\n[area r]\n%s\nsize = 8M\n' "$bad" >"$CONF"
	echo "tmpfs  $SCRATCH/a  tmpfs  size=8M,noauto,x-storaged  0 0" >"$FSTAB"
	for cmd in check --dry-run "--dry-run --json"; do
		run_sd 2 $cmd
		expect_out "$CONF:3: path: "
		expect_no_out "(null)"
	done
	run_sd 1 start
	expect_out "^storaged: error: area r tmpfs: refused, $CONF:3: path: "
	expect_no_out "(null)"
	is_mountpoint "$SCRATCH/a" || fail "the deferred entry beside the refused area ($bad) was not mounted"
	sd stop >/dev/null 2>&1
	rm -rf "$STATE"
done

note "area names that cannot be a directory entry are refused at check, at their line"
mkdir -p "$SCRATCH/darea"
for name in . .. ...; do
	printf '[storaged]\n[area %s]\npath = %s/darea\nsize = 8M\nseed = no\n' "$name" "$SCRATCH" >"$CONF"
	run_sd 2 check
	expect_out "^storaged: error: $CONF:2: '$name' is not an area name"
	# start's exit status for an unusable section is C35's business
	sd start >/dev/null 2>&1
	is_mountpoint "$SCRATCH/darea" && fail "area '$name' was set up"
	sd stop >/dev/null 2>&1
	rm -rf "$STATE"
done

note "cat-config prints a configuration check rejects, then the errors, exit 1"
printf '[storaged]\ndevice-timout = 5s\n' >"$CONF"
OUT=$(sd cat-config 2>"$SCRATCH/cat.err")
rc=$?
sed 's/^/  | /' "$SCRATCH/cat.err"
[ "$rc" = 1 ] || fail "cat-config of a rejected configuration exited $rc, expected 1"
expect_out "^# $CONF$"
expect_out "^device-timout = 5s$"
grep -q "^storaged: error: $CONF:2: unknown key 'device-timout'" "$SCRATCH/cat.err" ||
	fail "cat-config did not say what check rejects"
run_sd 2 check
printf '[storaged]\n' >"$CONF"
run_sd 0 cat-config

note "a missing config given with -c"
CONF=$SCRATCH/nonexistent.conf run_sd 2 start

note "usage errors"
run_sd 2 frobnicate
run_sd 2 sync one two # one area at a time, or all of them

note "sync of an area that is configured but not set up: nothing in RAM to lose"
printf '[storaged]\n[area idle]\npath = %s/idle\n' "$SCRATCH" >"$CONF"
: >"$FSTAB" # (the bad option above is another test's)
mkdir -p "$SCRATCH/idle"
# no state directory: misspelt or never started, exit 4 as for status and stop
run_sd 4 sync idle
expect_out "no such directory"
[ ! -e "$STATE" ] || fail "a sync of an inactive area made the state directory"
mkdir -m 0755 "$STATE"
run_sd 1 sync idle
expect_out "area 'idle' is not active: there is nothing to sync back"
expect_no_out "only in RAM"
expect_no_out "cannot record"
[ -z "$(ls -A "$STATE")" ] || fail "a sync of an inactive area wrote into the state directory: $(ls -A "$STATE")"
rmdir "$STATE"
[ "$(mount_snapshot)" = "$before" ] || fail "bad input changed the mount table"
exit 0

#!/bin/bash
# C24: two lines on one directory through a symbolic link
# (<scratch>/var/run -> ../run).  mount(8) and systemd resolve the mount
# point first: the second line is a duplicate.  check and --dry-run name
# both lines and the link; start mounts the directory once, never stacked.
. "$(dirname "$0")/lib.sh"
setup
mkdir -p "$SCRATCH/c24/run" "$SCRATCH/c24/var"
ln -s ../run "$SCRATCH/c24/var/run"
cat >"$FSTAB" <<EOT
tmpfs  $SCRATCH/c24/var/run  tmpfs  size=1M,noauto,x-storaged  0 0
tmpfs  $SCRATCH/c24/run      tmpfs  size=2M,noauto,x-storaged  0 0
EOT

run_sd 2 check
printf '%s\n' "$OUT" | grep "$FSTAB:2:" | grep "line 1's '$SCRATCH/c24/var/run'" | grep -q "symbolic link" ||
	fail "check does not name both lines and the link"
run_sd 2 --dry-run
printf '%s\n' "$OUT" | grep -q "$FSTAB:2:.*line 1" || fail "--dry-run does not report the duplicate"
# a configuration error: start refuses the second line alone (C35) and
# mounts the first, as systemd-fstab-generator does with a duplicate
run_sd 1 start
expect_out "refused, $FSTAB:2"
[ "$(mount_snapshot | awk -v t="$SCRATCH/c24/run" '$2 == t' | wc -l)" = 1 ] ||
	fail "start did not mount $SCRATCH/c24/run once"
sd stop >/dev/null 2>&1

note "one line only: mounted once, and a second start sees it mounted"
sed -i 2d "$FSTAB"
run_sd 0 start
[ "$(mount_snapshot | awk -v t="$SCRATCH/c24/run" '$2 == t' | wc -l)" = 1 ] || fail "not mounted once on $SCRATCH/c24/run"
# what start says names where the mount is, as findmnt shows it
expect_out "^storaged: mounted tmpfs on $SCRATCH/c24/run ('$SCRATCH/c24/var/run' leads there)$"
run_sd 0 start
[ "$(mount_snapshot | awk -v t="$SCRATCH/c24/run" '$2 == t' | wc -l)" = 1 ] || fail "second start stacked a mount"
run_sd 0 stop
is_mountpoint "$SCRATCH/c24/run" && fail "stop left $SCRATCH/c24/run mounted"

# c24_refused DIR WHAT: check, --dry-run and start report the two lines on
# DIR as one directory; start leaves DIR mounted at most once
c24_refused() {
	run_sd 2 check
	printf '%s\n' "$OUT" | grep "$FSTAB:2:" | grep "line 1's" | grep -q "symbolic link" ||
		fail "$2: check does not name both lines and the link"
	run_sd 2 --dry-run
	printf '%s\n' "$OUT" | grep -q "$FSTAB:2:.*line 1" || fail "$2: --dry-run does not report the duplicate"
	run_sd 1 start
	expect_out "refused, $FSTAB:2"
	[ "$(mount_snapshot | awk -v t="$1" '$2 == t' | wc -l)" = 1 ] || fail "$2: start did not mount $1 once"
	sd stop >/dev/null 2>&1
}

note "one device spelt LABEL= and UUID=, on the directory and through the link"
DEV=$(mkloop c24 32M)
mkfs.ext4 -q -F -L c24lbl "$DEV" >/dev/null || fail "mkfs.ext4 $DEV"
UUID=$(blkid -o value -s UUID "$DEV")
[ -n "$UUID" ] || fail "no UUID on $DEV"
cat >"$FSTAB" <<EOT
LABEL=c24lbl  $SCRATCH/c24/var/run  ext4  noauto,x-storaged  0 0
UUID=$UUID    $SCRATCH/c24/run      ext4  noauto,x-storaged  0 0
EOT
c24_refused "$SCRATCH/c24/run" "LABEL= and UUID= through a link"

note "one device spelt LABEL= and UUID=, the same mount point"
cat >"$FSTAB" <<EOT
LABEL=c24lbl  $SCRATCH/c24/run  ext4  noauto,x-storaged  0 0
UUID=$UUID    $SCRATCH/c24/run  ext4  noauto,x-storaged  0 0
EOT
run_sd 2 check
printf '%s\n' "$OUT" | grep -q "$FSTAB:2:" || fail "a mount point given twice (LABEL=, UUID=) is not reported on line 2"
run_sd 1 start
[ "$(mount_snapshot | awk -v t="$SCRATCH/c24/run" '$2 == t' | wc -l)" = 1 ] ||
	fail "start did not mount the device once on $SCRATCH/c24/run"
sd stop >/dev/null 2>&1

note "a link in a parent directory of the mount point"
mkdir -p "$SCRATCH/c24/real/srv/data"
ln -s real "$SCRATCH/c24/alias"
cat >"$FSTAB" <<EOT
tmpfs  $SCRATCH/c24/alias/srv/data  tmpfs  size=1M,noauto,x-storaged  0 0
tmpfs  $SCRATCH/c24/real/srv/data   tmpfs  size=2M,noauto,x-storaged  0 0
EOT
c24_refused "$SCRATCH/c24/real/srv/data" "a link in a parent directory"
note "the same with a link two levels up and a relative link below it"
mkdir -p "$SCRATCH/c24/real/srv/var/lib"
ln -s var/lib "$SCRATCH/c24/real/srv/state"
cat >"$FSTAB" <<EOT
tmpfs  $SCRATCH/c24/real/srv/var/lib  tmpfs  size=1M,noauto,x-storaged  0 0
tmpfs  $SCRATCH/c24/alias/srv/state   tmpfs  size=2M,noauto,x-storaged  0 0
EOT
c24_refused "$SCRATCH/c24/real/srv/var/lib" "links in a parent and in the last component"
exit 0

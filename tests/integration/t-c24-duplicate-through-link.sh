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
# a configuration error: start refuses the fstab, as for any duplicate
run_sd 2 start
[ "$(mount_snapshot | awk -v t="$SCRATCH/c24/run" '$2 == t' | wc -l)" -le 1 ] ||
	fail "start stacked two mounts on $SCRATCH/c24/run"

note "one line only: mounted once, and a second start sees it mounted"
sed -i 2d "$FSTAB"
run_sd 0 start
[ "$(mount_snapshot | awk -v t="$SCRATCH/c24/run" '$2 == t' | wc -l)" = 1 ] || fail "not mounted once on $SCRATCH/c24/run"
run_sd 0 start
[ "$(mount_snapshot | awk -v t="$SCRATCH/c24/run" '$2 == t' | wc -l)" = 1 ] || fail "second start stacked a mount"
run_sd 0 stop
is_mountpoint "$SCRATCH/c24/run" && fail "stop left $SCRATCH/c24/run mounted"
exit 0

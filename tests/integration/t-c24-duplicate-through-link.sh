#!/bin/bash
# C24: two lines on one directory through a symbolic link
# (<scratch>/var/run -> ../run).  mount(8) and systemd resolve the mount
# point first: the second line is a duplicate.  check and --dry-run name
# both lines and the link; start mounts the directory once, never stacked.
. "$(dirname "$0")/lib.sh"
setup
mkdir -p "$SCRATCH/run" "$SCRATCH/var"
ln -s ../run "$SCRATCH/var/run"
cat >"$FSTAB" <<EOT
tmpfs  $SCRATCH/var/run  tmpfs  size=1M,noauto,x-storaged  0 0
tmpfs  $SCRATCH/run      tmpfs  size=2M,noauto,x-storaged  0 0
EOT

run_sd 1 check
printf '%s\n' "$OUT" | grep "$FSTAB:2:" | grep "line 1" | grep -q "$SCRATCH/var/run" ||
	fail "check does not name both lines and the link"
run_sd 1 --dry-run
printf '%s\n' "$OUT" | grep -q "$FSTAB:2:.*line 1" || fail "--dry-run does not report the duplicate"
run_sd 1 start
[ "$(mount_snapshot | awk -v t="$SCRATCH/run" '$2 == t' | wc -l)" -le 1 ] ||
	fail "start stacked two mounts on $SCRATCH/run"
run_sd 0 stop
exit 0

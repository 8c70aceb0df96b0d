#!/bin/bash
# start is idempotent; stop undoes exactly what storaged mounted, children
# first; stop after a partial start undoes only what exists; what storaged
# did not mount is never unmounted.
. "$(dirname "$0")/lib.sh"
setup

mkdir -p "$SCRATCH/a" "$SCRATCH/other" "$SCRATCH/src"
echo hello >"$SCRATCH/src/file"
mount -t tmpfs -o size=1M tmpfs "$SCRATCH/other" || fail "mount other"
cat >"$FSTAB" <<EOT
tmpfs  $SCRATCH/a  tmpfs  size=8M,noauto,x-storaged  0 0
tmpfs  $SCRATCH/a/b  tmpfs  size=4M,noauto,x-storaged,X-mount.mkdir  0 0
$SCRATCH/src  $SCRATCH/a/b/src  none  bind,noauto,x-storaged,X-mount.mkdir  0 0
tmpfs  $SCRATCH/other  tmpfs  size=2M,noauto,x-storaged  0 0
tmpfs  $SCRATCH/c  tmpfs  size=2M,noauto,nofail,x-storaged  0 0
EOT
note "first start: the missing mount point of a nofail entry fails alone"
run_sd 0 start
is_mountpoint "$SCRATCH/a/b/src" || fail "bind not mounted"
[ "$(cat "$SCRATCH/a/b/src/file")" = hello ] || fail "bind shows the wrong tree"
[ "$(mount_count "$SCRATCH/other")" = 1 ] || fail "an already mounted entry was mounted again"
run_sd 0 start
for m in a a/b a/b/src other; do
	[ "$(mount_count "$SCRATCH/$m")" = 1 ] || fail "$m mounted $(mount_count "$SCRATCH/$m") times"
done
run_sd 0 status
expect_out "present"

note "partial: unmount one child by hand, then stop"
umount "$SCRATCH/a/b/src" || fail "umount by hand"
run_sd 0 stop
is_mountpoint "$SCRATCH/a" && fail "stop left $SCRATCH/a"
is_mountpoint "$SCRATCH/other" || fail "stop unmounted what storaged did not mount"
run_sd 0 stop
exit 0

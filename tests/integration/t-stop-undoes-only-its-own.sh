#!/bin/bash
# stop undoes exactly the mounts storaged made: not a filesystem someone
# mounted later on the same mount point, not one stacked on top of its own;
# an untrusted state file is refused.  A filesystem that is not the entry's
# on its mount point is reported, not taken for "already mounted".  A mount
# point reached through a root-owned link is recognised on the next run.
. "$(dirname "$0")/lib.sh"
setup

mkdir -p "$SCRATCH/m/b" "$SCRATCH/other" "$SCRATCH/real/sub"
ln -s real "$SCRATCH/lnk"
cat >"$FSTAB" <<EOT
tmpfs  $SCRATCH/m/b  tmpfs  size=4M,noauto,x-storaged  0 0
tmpfs  $SCRATCH/lnk/sub  tmpfs  size=2M,noauto,x-storaged  0 0
EOT

note "a filesystem mounted by hand where storaged's was: left alone"
run_sd 0 start
umount "$SCRATCH/m/b" || fail "umount by hand"
mount --bind "$SCRATCH/other" "$SCRATCH/m/b" || fail "bind by hand"
run_sd 0 stop
expect_out "nothing to undo"
is_mountpoint "$SCRATCH/m/b" || fail "stop unmounted a mount it did not make"

note "something else on the entry's mount point is a failure, not 'already mounted'"
run_sd 1 --dry-run
expect_out "will fail: something else is mounted on $SCRATCH/m/b"
run_sd 1 start
expect_out "something else is mounted on $SCRATCH/m/b"
[ "$(mount_count "$SCRATCH/m/b")" = 1 ] || fail "mounted over someone else's mount"
umount "$SCRATCH/m/b"
run_sd 0 stop

note "a link on the way: recognised as mounted on the next run"
run_sd 0 start
run_sd 0 start
[ "$(mount_count "$SCRATCH/real/sub")" = 1 ] || fail "the linked mount point was mounted twice"

note "a mount stacked on top of storaged's: stop refuses to dig under it"
mount -t tmpfs -o size=1M tmpfs "$SCRATCH/m/b" || fail "mount on top"
run_sd 1 stop
expect_out "mounted on top of storaged's"
[ "$(mount_count "$SCRATCH/m/b")" = 2 ] || fail "stop removed a mount it did not make"
umount "$SCRATCH/m/b"
run_sd 0 stop
is_mountpoint "$SCRATCH/m/b" && fail "stop left its own mount"
is_mountpoint "$SCRATCH/real/sub" && fail "stop left the linked mount"

note "storaged's mount unmounted by hand, its mount ID taken by another mount elsewhere: nothing to undo"
run_sd 0 start
umount "$SCRATCH/m/b" || fail "umount by hand"
mkdir -p "$SCRATCH/elsewhere"
mount -t tmpfs -o size=1M reuse "$SCRATCH/elsewhere" || fail "mount elsewhere"
run_sd 0 stop
expect_out "nothing to undo"
is_mountpoint "$SCRATCH/elsewhere" || fail "stop unmounted a mount that reused storaged's mount ID"
run_sd 0 stop
umount "$SCRATCH/elsewhere"

note "a state file others can write is not trusted"
run_sd 0 start
chmod 0666 "$STATE/state"
run_sd 4 stop
expect_out "does not trust"
is_mountpoint "$SCRATCH/m/b" || fail "stop acted on an untrusted state file"
chmod 0644 "$STATE/state"
printf 'garbage [\n' >>"$STATE/state"
run_sd 4 status
expect_out "$STATE/state:"
exit 0

#!/bin/bash
# A mount point reached through a symbolic link that another user planted
# in a directory others can write is refused; nothing is mounted through it,
# and the other entries still are.
. "$(dirname "$0")/lib.sh"
setup

mkdir -p "$SCRATCH/shared" "$SCRATCH/victim" "$SCRATCH/ok"
chmod 1777 "$SCRATCH/shared"
ln -s "$SCRATCH/victim" "$SCRATCH/shared/cache"
chown -h 65534:65534 "$SCRATCH/shared/cache"
cat >"$FSTAB" <<EOT
tmpfs  $SCRATCH/shared/cache  tmpfs  size=4M,noauto,x-storaged  0 0
tmpfs  $SCRATCH/ok  tmpfs  size=4M,noauto,x-storaged  0 0
EOT
note "check and --dry-run show the refusal before anything is mounted"
run_sd 1 check
expect_out "will fail: refusing to mount: mount point '$SCRATCH/shared/cache'"
run_sd 1 --dry-run
expect_out "will fail: refusing to mount: mount point '$SCRATCH/shared/cache'"
is_mountpoint "$SCRATCH/ok" && fail "check or dry-run mounted something"
run_sd 1 start
expect_out "refusing to mount: mount point '$SCRATCH/shared/cache'"
expect_out "owned by uid 65534"
is_mountpoint "$SCRATCH/victim" && fail "mounted through the planted link"
is_mountpoint "$SCRATCH/ok" || fail "the independent entry was not mounted"
run_sd 0 stop
exit 0

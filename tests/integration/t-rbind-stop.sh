#!/bin/bash
# An rbind entry brings the mounts below its source along; `stop` undoes
# those copies with it (deepest first) instead of failing "target is busy"
# on every run, and leaves nothing mounted.
. "$(dirname "$0")/lib.sh"
setup

cat >"$FSTAB" <<EOT
tmpfs        $SCRATCH/a       tmpfs  noauto,x-storaged,size=1M,X-mount.mkdir  0 0
tmpfs        $SCRATCH/a/b     tmpfs  noauto,x-storaged,size=1M,X-mount.mkdir  0 0
tmpfs        $SCRATCH/a/b/c   tmpfs  noauto,x-storaged,size=1M,X-mount.mkdir  0 0
$SCRATCH/a   $SCRATCH/rb      none   rbind,noauto,x-storaged,X-mount.mkdir,x-storaged.requires=$SCRATCH/a/b/c  0 0
EOT
run_sd 0 start
is_mountpoint "$SCRATCH/rb" || fail "rbind not mounted"
is_mountpoint "$SCRATCH/rb/b/c" || fail "the rbind did not bring the nested mounts along"
run_sd 0 stop
for m in rb/b/c rb/b rb a/b/c a/b a; do
	is_mountpoint "$SCRATCH/$m" && fail "stop left $SCRATCH/$m mounted"
done
run_sd 0 stop
exit 0

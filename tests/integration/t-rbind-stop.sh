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

note "a shared source keeps its own submounts when the rbind is undone"
mkdir -p "$SCRATCH/src" "$SCRATCH/dst"
mount -t tmpfs -o size=1M s "$SCRATCH/src" || fail "mount src"
mkdir -p "$SCRATCH/src/a"
mount -t tmpfs -o size=1M a "$SCRATCH/src/a" || fail "mount src/a"
mount --make-rshared "$SCRATCH/src" || fail "make-rshared"
cat >"$FSTAB" <<EOT
$SCRATCH/src  $SCRATCH/dst  none  rbind,noauto,x-storaged  0 0
EOT
run_sd 0 start
is_mountpoint "$SCRATCH/dst/a" || fail "rbind of the shared source did not bring src/a"
run_sd 0 stop
is_mountpoint "$SCRATCH/dst" && fail "stop left the rbind"
is_mountpoint "$SCRATCH/src/a" || fail "stop unmounted the source's own submount through propagation"
umount "$SCRATCH/src/a" "$SCRATCH/src"
exit 0

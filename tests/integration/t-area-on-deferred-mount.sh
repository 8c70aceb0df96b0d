#!/bin/bash
# An area whose directory lives on a filesystem that storaged itself mounts
# (an rpmbuild area on the assembled RAID1): the plan cannot look at the
# directory before that mount, so the area is sized and seeded when its
# step runs, on the mounted filesystem, never from the bare directory
# underneath.
. "$(dirname "$0")/lib.sh"
setup

mkdir -p "$SCRATCH/real/data" "$SCRATCH/m"
for i in $(seq 1 300); do echo "$i" >"$SCRATCH/real/data/f$i"; done
echo "$SCRATCH/real  $SCRATCH/m  none  bind,noauto,x-storaged  0 0" >"$FSTAB"
cat >"$CONF" <<EOT
[storaged]

[area build]
path = $SCRATCH/m/data
size = auto
inodes = auto
EOT

run_sd 0 --dry-run
expect_out "area build tmpfs on $SCRATCH/m/data  sized when it runs"
expect_out "after: 1 $SCRATCH/m: area path below it"
run_sd 0 check
run_sd 0 start
findmnt -rn -o FSTYPE --mountpoint "$SCRATCH/m/data" | grep -qx tmpfs || fail "the area is not over $SCRATCH/m/data"
[ "$(ls "$SCRATCH/m/data" | wc -l)" = 300 ] || fail "the area was not seeded from the mounted filesystem"
inodes=$(df --output=itotal "$SCRATCH/m/data" | tail -1)
[ "$inodes" -ge 602 ] || fail "auto inodes $inodes: not sized from the 301 entries found there"
run_sd 0 stop
is_mountpoint "$SCRATCH/m/data" && fail "stop left the area"
is_mountpoint "$SCRATCH/m" && fail "stop left the bind"
exit 0

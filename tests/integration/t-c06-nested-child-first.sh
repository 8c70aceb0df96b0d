#!/bin/bash
# C06: fstab lists a child before its parent.  The order comes from path
# ancestry; if the parent fails the child is skipped, never mounted on the
# bare directory.
. "$(dirname "$0")/lib.sh"
setup
command -v mkfs.ext4 >/dev/null || skip "mkfs.ext4 missing (e2fsprogs)"

OUTER=$(mkloop outer 64M)
INNER=$(mkloop inner 64M)
mkfs.ext4 -q -F -L c06outer "$OUTER" || fail "mkfs outer"
mkfs.ext4 -q -F -L c06inner "$INNER" || fail "mkfs inner"
mkdir -p "$SCRATCH/db/data"
cat >"$FSTAB" <<EOT
LABEL=c06inner  $SCRATCH/db/data/wal  ext4  defaults,noauto,x-storaged,X-mount.mkdir  0 0
LABEL=c06outer  $SCRATCH/db/data      ext4  defaults,noauto,x-storaged  0 0
EOT

run_sd 0 --dry-run
o=$(printf '%s\n' "$OUT" | grep -n "mount LABEL=c06outer on $SCRATCH/db/data " | head -1 | cut -d: -f1)
i=$(printf '%s\n' "$OUT" | grep -n "mount LABEL=c06inner on $SCRATCH/db/data/wal " | head -1 | cut -d: -f1)
[ -n "$o" ] && [ -n "$i" ] && [ "$o" -lt "$i" ] || fail "dry-run does not put the outer entry first"

run_sd 0 start
[ "$(findmnt -rn -o SOURCE --mountpoint "$SCRATCH/db/data")" = "$OUTER" ] || fail "outer not mounted"
[ "$(findmnt -rn -o SOURCE --mountpoint "$SCRATCH/db/data/wal")" = "$INNER" ] || fail "inner not mounted"
run_sd 0 stop
is_mountpoint "$SCRATCH/db/data" && fail "stop left outer mounted"
[ -d "$SCRATCH/db/data/wal" ] && fail "wal was created on the bare directory, not inside the outer filesystem"

note "outer fails: inner is skipped with a reason naming its parent"
cat >"$FSTAB" <<EOT
LABEL=c06inner  $SCRATCH/db/data/wal  ext4  defaults,noauto,x-storaged,X-mount.mkdir  0 0
LABEL=c06outer  $SCRATCH/db/data      ext4  defaults,noauto,x-storaged,ro,data=bogus  0 0
EOT
run_sd 1 start
expect_out "$SCRATCH/db/data"
printf '%s\n' "$OUT" | grep "$SCRATCH/db/data/wal" | grep -q "$SCRATCH/db/data: parent mount point" ||
	fail "inner's skip reason does not name its parent"
is_mountpoint "$SCRATCH/db/data/wal" && fail "inner mounted on the bare directory"
is_mountpoint "$SCRATCH/db/data" && fail "outer mounted despite bad options"
run_sd 1 status
expect_out "skipped"
exit 0

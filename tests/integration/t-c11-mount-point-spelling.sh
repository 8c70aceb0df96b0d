#!/bin/bash
# C11: mount points spelled as mount(8) accepts them (`/raid/`, `//`, `/./`)
# are normalised once, at parse time: ordering, status and stop see one
# path.  The child, listed second, is mounted after its parent.
. "$(dirname "$0")/lib.sh"
setup
command -v mkfs.ext4 >/dev/null || skip "mkfs.ext4 missing (e2fsprogs)"

RAID=$(mkloop raid 64M)
CACHE=$(mkloop cache 64M)
mkfs.ext4 -q -F -L c11raid "$RAID" || fail "mkfs raid"
mkfs.ext4 -q -F -L c11cache "$CACHE" || fail "mkfs cache"
mkdir -p "$SCRATCH/m/raid"
# the child's directory lives on the parent filesystem
mount "$RAID" "$SCRATCH/m/raid" && mkdir "$SCRATCH/m/raid/cache" && umount "$SCRATCH/m/raid" ||
	fail "prepare raid"

note "the peer: mount(8) takes the trailing slash (same mount point)"
mount -t ext4 "$RAID" "$SCRATCH/m/raid/" || fail "mount(8) refused '$SCRATCH/m/raid/'"
[ "$(findmnt -rn -o SOURCE --mountpoint "$SCRATCH/m/raid")" = "$RAID" ] || fail "peer: not on $SCRATCH/m/raid"
umount "$SCRATCH/m/raid/" || fail "umount"

cat >"$FSTAB" <<EOT
LABEL=c11raid   $SCRATCH/m/raid/          ext4  defaults,noauto,_netdev  0 0
LABEL=c11cache  $SCRATCH/m//raid/./cache  ext4  defaults,noauto,_netdev  0 0
EOT
run_sd 0 --dry-run start
expect_out "on $SCRATCH/m/raid type ext4"
expect_out "on $SCRATCH/m/raid/cache type ext4"
expect_out "$SCRATCH/m/raid: parent mount point"

run_sd 0 start
[ "$(findmnt -rn -o SOURCE --mountpoint "$SCRATCH/m/raid")" = "$RAID" ] || fail "raid not mounted"
[ "$(findmnt -rn -o SOURCE --mountpoint "$SCRATCH/m/raid/cache")" = "$CACHE" ] || fail "cache not mounted"
run_sd 0 status
expect_out "$SCRATCH/m/raid/cache"
expect_no_out "$SCRATCH/m/raid/ "
note "a second start sees both mounted"
run_sd 0 start
[ "$(mount_count "$SCRATCH/m/raid")" = 1 ] || fail "raid mounted twice"
run_sd 0 stop
is_mountpoint "$SCRATCH/m/raid/cache" && fail "stop left cache mounted"
is_mountpoint "$SCRATCH/m/raid" && fail "stop left raid mounted"

note "a relative mount point stays an error"
echo "LABEL=c11raid  m/raid/  ext4  noauto,x-storaged  0 0" >"$FSTAB"
run_sd 2 check
expect_out "not an absolute path"
exit 0

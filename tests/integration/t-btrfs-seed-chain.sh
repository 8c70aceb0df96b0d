#!/bin/bash
# A chain of seeds (btrfs(5), SEEDING DEVICE; issue 43 item 4): a sprout
# made a seed in turn (btrfstune -S 1) and sprouted again.  The last
# sprout's record of its devices names devices of three fsids: its own,
# its seed's (the first sprout) and that one's seed.  The kernel mounts it
# read-write once all three are registered; storaged counts both seeds as
# members, registers them and says which they are.  (Coverage: C38's fix
# already handles a chain; this keeps it so.)
. "$(dirname "$0")/lib.sh"
setup
command -v mkfs.btrfs >/dev/null || skip "mkfs.btrfs missing (btrfs-progs)"
command -v btrfstune >/dev/null || skip "btrfstune missing (btrfs-progs)"

S=$(mkloop seed 256M)
P=$(mkloop sprout1 256M)
Q=$(mkloop sprout2 256M)
mkdir -p "$SCRATCH/m/s" "$SCRATCH/m/a"
mkfs.btrfs -q -f "$S" >/dev/null 2>&1 || fail "mkfs.btrfs"
mount -t btrfs "$S" "$SCRATCH/m/s" || fail "mount"
echo s >"$SCRATCH/m/s/s"
umount "$SCRATCH/m/s"
forget "$S"
btrfstune -S 1 "$S" || fail "btrfstune -S 1 (seed)"

# sprout NEWDEV FILE: the seed chain registered, mounted, NEWDEV added, FILE written
sprout() {
	local dev=$1 f=$2; shift 2
	btrfs device scan "$@" >/dev/null || fail "scan"
	mount -t btrfs "$1" "$SCRATCH/m/s" 2>/dev/null || fail "mount the seed $1"
	btrfs device add -f "$dev" "$SCRATCH/m/s" >/dev/null || fail "device add $dev"
	mount -o remount,rw "$SCRATCH/m/s" || fail "remount rw"
	echo "$f" >"$SCRATCH/m/s/$f"
	umount "$SCRATCH/m/s" || fail "umount"
	forget "$dev" "$@"
}

note "sprout 1 over the seed"
sprout "$P" p "$S"
printf '[storaged]\ndevice-timeout = 3s\n' >"$CONF"
note "a chain: sprout 1 made a seed, sprouted again"
btrfstune -S 1 "$P" || fail "btrfstune -S 1 (sprout 1)"
sprout "$Q" q "$P" "$S"
FQ=$(blkid -o value -s UUID "$Q")
cat >"$FSTAB" <<EOT
UUID=$FQ  $SCRATCH/m/a  btrfs  noauto,x-storaged  0 0
EOT
run_sd 0 start
expect_out "assembled, 3/3 members"
is_mountpoint "$SCRATCH/m/a" || fail "the chain's sprout not mounted"
findmnt -rn -o OPTIONS --mountpoint "$SCRATCH/m/a" | grep -qw rw || fail "not read-write"
for f in s p q; do grep -qx $f "$SCRATCH/m/a/$f" || fail "file $f"; done
echo more >"$SCRATCH/m/a/more" || fail "cannot write to the sprout"
run_scan 0
expect_out "$Q $S (seed) $P (seed)"
run_sd 0 status
expect_out "('$S') is its seed"
expect_out "('$P') is its seed"
run_sd 0 stop
exit 0

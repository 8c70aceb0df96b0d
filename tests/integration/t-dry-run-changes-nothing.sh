#!/bin/bash
# --dry-run performs no mount, no registration and no write outside stdout,
# for a plan with a forgotten RAID1, a bind and a tmpfs below it; --json
# prints the same plan as JSON.
#
# What a dry run could change is compared, not how the filesystem stores
# it: `ls -l` block counts move when the kernel writes delayed allocations
# back, so the tree is listed by name, type, mode, owner, size and mtime
# (the loop devices' image files by name only: the kernel may still be
# writing mkfs's blocks to them), beside the mount table and the kernel's
# btrfs registrations: /sys/fs/btrfs, and a plain mount of each member,
# which works only when the other one was registered (the mount registers
# the device it is given).
. "$(dirname "$0")/lib.sh"
setup
command -v mkfs.btrfs >/dev/null || skip "mkfs.btrfs missing (btrfs-progs)"

mkraid1 "" 512M
mkdir -p "$SCRATCH/srv/data" "$SCRATCH/srv/build" "$SCRATCH/probe"
cat >"$FSTAB" <<EOT
$SCRATCH/srv/data/build  $SCRATCH/srv/build  none  bind,noauto,x-storaged  0 0
tmpfs  $SCRATCH/srv/data/tmp  tmpfs  size=16M,noauto,x-storaged,X-mount.mkdir  0 0
UUID=$FSID  $SCRATCH/srv/data  btrfs  noatime,noauto,x-storaged  0 0
EOT
# tree_snapshot: what a write below the scratch directory would change
tree_snapshot() {
	find "$SCRATCH" -path "$SCRATCH/img/*" -printf '%P %y\n' -o -printf '%P %y %m %u:%g %s %T@\n' |
		LC_ALL=C sort
}
# the btrfs filesystems the kernel has open
sys_btrfs() { ls /sys/fs/btrfs 2>/dev/null | LC_ALL=C sort; }
before=$(mount_snapshot)
tree_before=$(tree_snapshot)
sys_before=$(sys_btrfs)
run_sd 0 --dry-run
expect_out "after: .*$SCRATCH/srv/data"
run_sd 0 --dry-run --json
sd --dry-run --json 2>/dev/null | python3 -c 'import json,sys; assert json.load(sys.stdin)["plan"]' ||
	fail "--json output is not JSON with a plan"
[ "$(mount_snapshot)" = "$before" ] || fail "dry-run changed the mount table"
tree_after=$(tree_snapshot)
[ "$tree_after" = "$tree_before" ] ||
	fail "dry-run wrote below the scratch directory: $(diff <(echo "$tree_before") <(echo "$tree_after") | head -n 5)"
[ "$(sys_btrfs)" = "$sys_before" ] || fail "dry-run changed /sys/fs/btrfs: $(diff <(echo "$sys_before") <(sys_btrfs))"
for m in "$A" "$B"; do
	if mount -t btrfs -o ro "$m" "$SCRATCH/probe" 2>/dev/null; then
		fail "a plain mount of $m works after --dry-run: the other member was registered"
	fi
	forget "$m" # the failed mount registered it
done
exit 0

#!/bin/bash
# --dry-run performs no mount, no registration and no write outside stdout,
# for a plan with a forgotten RAID1, a bind and a tmpfs below it; --json
# prints the same plan as JSON.
. "$(dirname "$0")/lib.sh"
setup
command -v mkfs.btrfs >/dev/null || skip "mkfs.btrfs missing (btrfs-progs)"

A=$(mkloop a 512M)
B=$(mkloop b 512M)
mkfs.btrfs -q -f -d raid1 -m raid1 "$A" "$B" >/dev/null || fail "mkfs.btrfs"
FSID=$(blkid -o value -s UUID "$A")
forget "$A" "$B"
mkdir -p "$SCRATCH/srv/data" "$SCRATCH/srv/build" "$SCRATCH/probe"
cat >"$FSTAB" <<EOT
$SCRATCH/srv/data/build  $SCRATCH/srv/build  none  bind,noauto,x-storaged  0 0
tmpfs  $SCRATCH/srv/data/tmp  tmpfs  size=16M,noauto,x-storaged,X-mount.mkdir  0 0
UUID=$FSID  $SCRATCH/srv/data  btrfs  noatime,noauto,x-storaged  0 0
EOT
before=$(mount_snapshot)
ls -laR "$SCRATCH" >"$SCRATCH/../$TEST_NAME.before.$$"
run_sd 0 --dry-run
expect_out "after: .*$SCRATCH/srv/data"
run_sd 0 --dry-run --json
sd --dry-run --json 2>/dev/null | python3 -c 'import json,sys; assert json.load(sys.stdin)["plan"]' ||
	fail "--json output is not JSON with a plan"
[ "$(mount_snapshot)" = "$before" ] || fail "dry-run changed the mount table"
ls -laR "$SCRATCH" | diff -u "$SCRATCH/../$TEST_NAME.before.$$" - >/dev/null ||
	{ rm -f "$SCRATCH/../$TEST_NAME.before.$$"; fail "dry-run wrote below the scratch directory"; }
rm -f "$SCRATCH/../$TEST_NAME.before.$$"
if mount -t btrfs "$A" "$SCRATCH/probe" 2>/dev/null; then
	fail "a plain mount works after --dry-run: a member was registered"
fi
exit 0

#!/bin/bash
# C37 on a btrfs whose metadata is striped (-m raid0, raid10, raid5): the
# chunk tree, the filesystem's own record of its devices, lies in a system
# chunk whose stripes each hold part of it, not a copy.  storaged read the
# record only through mirrored chunks, so here it fell back to fsid and
# devid: a stranger made elsewhere with the fsid and devid 2 was taken for
# a clone of devid 2 and the complete filesystem was not mounted.  Now the
# stripe holding each block of the record is found (the kernel's
# btrfs_map_block() arithmetic), the stranger is reported and ignored.
. "$(dirname "$0")/lib.sh"
setup
command -v mkfs.btrfs >/dev/null || skip "mkfs.btrfs missing (btrfs-progs)"

devuuid() {
	btrfs inspect-internal dump-super "$1" | awk '$1 == "dev_item.uuid" { print $2 }'
}

mkdir -p "$SCRATCH/m/data"
printf '[storaged]\ndevice-timeout = 3s\n' >"$CONF"

# try PROFILE NDEVS: a btrfs of NDEVS devices, data and metadata PROFILE,
# beside a stranger claiming its fsid and devid 2
try() {
	local prof=$1 n=$2 fsid i devs=() imgs=() x
	fsid=$(cat /proc/sys/kernel/random/uuid)
	note "$prof: the stranger first (mkfs.btrfs refuses an fsid it sees on a device)"
	truncate -s 256M "$SCRATCH/img/x1-$prof.img" "$SCRATCH/img/x2-$prof.img" || fail "truncate"
	mkfs.btrfs -q -f -U "$fsid" "$SCRATCH/img/x1-$prof.img" "$SCRATCH/img/x2-$prof.img" \
		>/dev/null 2>&1 || fail "mkfs.btrfs (the stranger's)"
	for i in $(seq 1 "$n"); do
		truncate -s 256M "$SCRATCH/img/$prof-$i.img" || fail "truncate"
		imgs+=("$SCRATCH/img/$prof-$i.img")
	done
	mkfs.btrfs -q -f -U "$fsid" -d "$prof" -m "$prof" "${imgs[@]}" >/dev/null 2>&1 ||
		fail "mkfs.btrfs -m $prof"
	for i in "${imgs[@]}"; do
		devs+=("$(attach "$i")")
	done
	x=$(attach "$SCRATCH/img/x2-$prof.img")
	forget "${devs[@]}" "$x"
	[ "$(devuuid "$x")" != "$(devuuid "${devs[1]}")" ] || fail "the stranger has devid 2's dev_uuid"
	cat >"$FSTAB" <<EOT
UUID=$fsid  $SCRATCH/m/data  btrfs  noauto,x-storaged  0 0
EOT
	note "$prof: start mounts the filesystem, reports the stranger and ignores it"
	run_sd 0 start
	is_mountpoint "$SCRATCH/m/data" || fail "$prof: not mounted"
	expect_out "'$x' carries its fsid and claims devid 2"
	expect_no_out "both claim"
	btrfs filesystem show "$SCRATCH/m/data" | grep -q "$x" && fail "$prof: the stranger is in the mounted filesystem"
	echo "$prof" >"$SCRATCH/m/data/f" || fail "$prof: cannot write"
	run_scan 0
	expect_out "'$x' carries its fsid and claims devid 2"
	run_sd 0 stop
	forget "${devs[@]}" "$x"
	for i in "${devs[@]}" "$x"; do
		detach "$i"
	done
}

try raid0 2
try raid10 4
try raid5 3
exit 0

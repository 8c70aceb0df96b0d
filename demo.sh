#!/bin/bash
# The built-in demo: installs the dependencies, builds storaged, then on
# loop devices made from sparse files creates a two-member btrfs RAID1,
# makes the kernel forget it (as at boot, before anyone ran
# `btrfs device scan`), writes a demo fstab whose deferred entries are
# listed in the wrong order, and lets storaged plan, assemble and mount
# it all; it also puts a directory in RAM (a tmpfs area sized from what
# the directory holds, seeded, bound over it); then it undoes everything.
# Run as root.  Touches nothing outside its own scratch directory and loop
# devices.
set -euo pipefail
cd "$(dirname "$0")"
./tools/install-deps.sh
./tools/build.sh
STORAGED=$PWD/build/storaged

[ "$(id -u)" = 0 ] || { echo "demo: run as root (loop devices, mount)" >&2; exit 1; }
D=$(mktemp -d /tmp/storaged-demo.XXXXXX)
LOOPS=()
cleanup() {
	set +e
	"$STORAGED" -c "$D/storaged.conf" -f "$D/fstab" --state-dir "$D/run" stop >/dev/null 2>&1
	findmnt -rn -o TARGET | grep "^$D" | sort -r | xargs -r -n1 umount -l 2>/dev/null
	for l in "${LOOPS[@]}"; do
		btrfs device scan --forget "$l" >/dev/null 2>&1
		losetup -d "$l"
	done
	rm -rf "$D"
}
trap cleanup EXIT
step() { printf '\n\033[1m== %s\033[0m\n' "$*"; }
run() { printf '$ %s\n' "$*"; "$@"; }

step "two sparse images as loop devices, one btrfs RAID1 over both"
for n in a b; do
	truncate -s 512M "$D/$n.img"
	LOOPS+=("$(losetup -f --show "$D/$n.img")")
done
A=${LOOPS[0]} B=${LOOPS[1]}
mkfs.btrfs -q -f -L demo -d raid1 -m raid1 "$A" "$B" >/dev/null
FSID=$(blkid -o value -s UUID "$A")
mkdir -p "$D/mnt" "$D/srv/data" "$D/srv/build"
mount "$A" "$D/mnt"
mkdir "$D/mnt/build"
echo "built on the RAID1" >"$D/mnt/build/README"
umount "$D/mnt"
btrfs device scan --forget "$A" "$B"
echo "RAID1 $FSID on $A + $B; the kernel has forgotten both members:"
run mount -t btrfs "$A" "$D/mnt" 2>&1 | head -2 || true
# mount(8) says only ENOENT; the reason is in the kernel's log
echo "the kernel's log (dmesg) says why:"
dmesg 2>/dev/null | grep -F "(device ${A#/dev/})" | grep -E 'system array|open_ctree' | tail -n 2 || true

step "a demo fstab: deferred entries (x-storaged, noauto), children listed first"
cat >"$D/fstab" <<EOT
tmpfs              $D/srv/data/tmp  tmpfs  size=64M,nr_inodes=10k,noauto,x-storaged,X-mount.mkdir  0 0
$D/srv/data/build  $D/srv/build     none   bind,noauto,x-storaged                               0 0
UUID=$FSID  $D/srv/data  btrfs  noatime,noauto,x-storaged  0 0
EOT
cat "$D/fstab"

step "a RAM build area: a tmpfs sized from what the directory holds, seeded, bound over it"
mkdir -p "$D/rpmbuild/SOURCES" "$D/rpmbuild/SPECS"
for i in $(seq 1 500); do echo "source $i" >"$D/rpmbuild/SOURCES/file$i.c"; done
ln -s SOURCES/file1.c "$D/rpmbuild/SPECS/link"
cat >"$D/storaged.conf" <<EOT
[storaged]
device-timeout = 10s

[area rpmbuild]
path = $D/rpmbuild
backend = tmpfs
size = auto
inodes = auto
headroom = 2.0
EOT
cat "$D/storaged.conf"
SD=("$STORAGED" -c "$D/storaged.conf" -f "$D/fstab" --state-dir "$D/run")

step "storaged --dry-run: the plan, nothing changed"
run "${SD[@]}" --dry-run

step "storaged start"
run "${SD[@]}" start

step "the result"
run findmnt -R -o TARGET,SOURCE,FSTYPE "$D/srv/data"
run findmnt -o TARGET,SOURCE,FSTYPE "$D/srv/build"
run findmnt -o TARGET,SOURCE,FSTYPE,OPTIONS "$D/rpmbuild"
run df -h -i "$D/rpmbuild"
run btrfs filesystem show "$D/srv/data"
run cat "$D/srv/build/README"
run "${SD[@]}" status

step "storaged start again: nothing to do"
run "${SD[@]}" start

step "storaged stop: undo, children first"
run "${SD[@]}" stop
run findmnt -R "$D/srv" || echo "(nothing mounted below $D/srv)"

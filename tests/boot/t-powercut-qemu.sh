#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# A real power cut during the sync back (issue 12), under qemu (TCG).
#
# One tiny guest: the Debian kernel of the boot test's cache (its .deb,
# unpacked here), an initramfs of this build's storaged and a few host
# binaries with their libraries, and tests/boot/guest/powercut-init as
# PID 1.  Its one disk is served by tests/boot/powercut-disk.py, an NBD
# server that behaves as a disk with a volatile write cache: only what the
# guest flushed (or wrote FUA) is durable.  The guest sets up a persist
# area over a tree of ~3000 files, changes a third of them (rewrites,
# deletions, new files and directories, a file that becomes a directory
# and back, directory modes), and syncs it back three ways, each recorded
# write by write: `storaged sync`, then the peers `rsync -a --delete` +
# `sync` and `cp -a` + `sync` into copies of the old tree.  Then qemu is
# killed.  For each way, CUTS (24) power cuts spread over its writes are
# rebuilt from the record (tests/boot/powercut-check.py: what was flushed
# before the cut, and a random half of the 4 KiB pieces written since):
# e2fsck must find the filesystem clean once its journal is replayed,
# and every file and directory of the tree must be its old or its new
# version, never torn, never missing; a working directory storaged left
# must carry its mark (the next start removes it, then seeds).  storaged
# must pass at every cut; the peers' tears are counted and printed.
# The same change is made in a seed = overlay area over a fourth copy
# (/data/ov) and its `storaged sync` recorded and cut the same way: the
# upper layer applied into the directory keeps the same guarantee.
#
# Then the cut between periodic syncs: a resident storaged syncs a second
# persist area (/data/per, sync-interval = POWERCUT_SYNC_INTERVAL seconds,
# default 4) while the guest writes NGEN (4) generations of changes into
# it, each right after a periodic sync it saw complete; qemu is killed
# right after the last generation, before its sync.  The disk the cut
# left (its journal replayed, as the next boot's mount does) must be
# fsck-clean and hold generation NGEN-1 exactly: everything up to the
# last completed periodic sync, at most one interval lost, no file half
# synced.  CUTS more cuts rebuilt over the phase's writes must each hold,
# per path, the generation of the last periodic sync before the cut or
# the next one.  POWERCUT_SYNC_INTERVAL=0 shows the check can fail (no
# periodic sync: the disk still holds generation 0).
#
# Opt-in like t-boot-qemu.sh: STORAGED_BOOT_TEST=1 (run-tests.sh sets it
# when CI=true).  About 2-4 minutes: one boot, then the checks on the host.
# Needs qemu-system-x86_64, python3, e2fsprogs (e2fsck, debugfs, mkfs.ext4
# -d), cpio, a C compiler (the guest's insmod), rsync for its peer, and the boot test's cached kernel .deb (STORAGED_BOOT_CACHE,
# default /var/cache/storaged-boot-test; t-boot-qemu.sh fills it).
set -u
skip() { echo "SKIP: $*"; exit 77; }
fail() { echo "FAIL: $*"; exit 1; }

[ "${STORAGED_BOOT_TEST:-0}" = 1 ] || skip "opt-in: set STORAGED_BOOT_TEST=1 (boots a kernel under qemu)"
[ "$(id -u)" = 0 ] || skip "must run as root"
[ -n "${STORAGED:-}" ] && [ -x "$STORAGED" ] || skip "STORAGED is not set to the storaged binary"
for t in qemu-system-x86_64 python3 e2fsck debugfs mkfs.ext4 cpio dpkg-deb ldd flock cc; do
	command -v "$t" >/dev/null || skip "$t missing"
done
HERE=$(cd "$(dirname "$0")" && pwd)
CACHE=${STORAGED_BOOT_CACHE:-/var/cache/storaged-boot-test}
DEB=$(ls "$CACHE"/debs/linux-image-[0-9]*-amd64_*.deb 2>/dev/null | sort -V | tail -1)
[ -n "$DEB" ] || skip "no kernel .deb in $CACHE/debs (t-boot-qemu.sh caches it)"
CUTS=${CUTS:-24}
IVL=${POWERCUT_SYNC_INTERVAL:-4}
NGEN=4
S=$(mktemp -d /tmp/storaged-powercut.XXXXXX) || exit 1
QPID= DPID=
cleanup() {
	[ -n "$QPID" ] && kill -9 "$QPID" 2>/dev/null
	[ -n "$DPID" ] && kill "$DPID" 2>/dev/null
	wait 2>/dev/null
	[ "${STORAGED_BOOT_KEEP:-0}" = 1 ] && echo "kept $S" || rm -rf "$S"
}
trap cleanup EXIT

# the kernel and the modules of the disk and of ext4
dpkg-deb -x "$DEB" "$S/k"
KVER=$(ls "$S/k/lib/modules")
VMLINUZ=$(ls "$S"/k/boot/vmlinuz-*)
I=$S/initramfs
mkdir -p "$I"/{bin,sbin,lib,lib64,modules,etc,proc,sys,dev,run,data,tmp}
# modules in load order, from each one's "depends=" (.modinfo; no depmod here)
python3 - "$S/k/lib/modules/$KVER" "$I/modules" <<'EOF'
import os, re, shutil, sys
mdir, out = sys.argv[1], sys.argv[2]
path = {}
for d, _, files in os.walk(mdir):
    for f in files:
        if f.endswith(".ko"):
            path[f[:-3].replace("-", "_")] = os.path.join(d, f)
order = []
def want(name):
    name = name.replace("-", "_")
    if name in order or name not in path:
        return
    m = re.search(rb"\0depends=([^\0]*)\0", open(path[name], "rb").read())
    for d in (m.group(1).decode().split(",") if m and m.group(1) else []):
        want(d)
    order.append(name)
for name in ("virtio_pci", "virtio_blk", "crc32c_generic", "ext4", "overlay"):
    want(name)
with open(os.path.join(os.path.dirname(out), "modules.order"), "w") as f:
    for m in order:
        shutil.copy(path[m], out)
        f.write(os.path.basename(path[m]) + "\n")
EOF
cc -O2 -o "$I/bin/insmod" "$HERE/guest/powercut-insmod.c" || fail "building the guest's insmod"
# binaries and their libraries, from this machine
copy_bin() {
	local b lib
	b=$(command -v "$1") || fail "$1 missing"
	cp -L "$b" "$I/bin/$(basename "$b")"
	for lib in $(ldd "$b" | grep -o '/[^ ]*'); do
		[ -e "$I$lib" ] || { mkdir -p "$I$(dirname "$lib")" && cp -L "$lib" "$I$lib"; }
	done
}
for b in bash mount cp rm mkdir dd sync sleep cat; do copy_bin "$b"; done
# the rsync peer only where rsync is installed
RSYNC=no
command -v rsync >/dev/null && copy_bin rsync && RSYNC=yes
ln -s bash "$I/bin/sh"
cp "$STORAGED" "$(dirname "$STORAGED")/storaged-copy" "$I/sbin/"
for b in sbin/storaged sbin/storaged-copy bin/insmod; do
	for lib in $(ldd "$I/$b" | grep -o '/[^ ]*'); do
		[ -e "$I$lib" ] || { mkdir -p "$I$(dirname "$lib")" && cp -L "$lib" "$I$lib"; }
	done
done
chmod 0755 "$I/sbin/storaged" "$I/sbin/storaged-copy"
install -m 0755 "$HERE/guest/powercut-init" "$I/init"
cat >"$I/etc/storaged.conf" <<EOT
[area pc]
path = /data/dir
backend = tmpfs
size = 256M
persist = yes
sync-interval = 0

[area ov]
path = /data/ov
backend = tmpfs
size = 256M
seed = overlay
persist = yes
sync-interval = 0

[area per]
path = /data/per
backend = tmpfs
size = 64M
persist = yes
sync-interval = $IVL
EOT
: >"$I/etc/fstab"
echo "$IVL" >"$I/per.interval"
echo "$NGEN" >"$I/per.generations"

# the trees: the old one on the disk (three times), the change in the initramfs
python3 "$HERE/powercut-check.py" gen "$S/t" || fail "making the trees"
cp -a "$S/t/chg" "$I/chg"
cp "$S/t/chg.delete" "$I/chg.delete"
python3 "$HERE/powercut-check.py" gen-periodic "$S/t" "$NGEN" || fail "making the periodic trees"
mkdir -p "$I/per"
for g in $(seq 1 "$NGEN"); do
	cp -a "$S/t/per/chg$g" "$I/per/" && cp "$S/t/per/chg$g.delete" "$I/per/"
done
mkdir -p "$S/disk"
cp -a "$S/t/per/g0" "$S/disk/per"
cp -a "$S/t/old" "$S/disk/dir"
cp -a "$S/t/old" "$S/disk/ov"
cp -a "$S/t/old" "$S/disk/peer-rsync"
cp -a "$S/t/old" "$S/disk/peer-cp"
# 96 MiB disk: the filesystem in the first 88, the phase marks at 92
truncate -s 96M "$S/disk.img"
mkfs.ext4 -q -F -b 4096 -O ^metadata_csum,^orphan_file -d "$S/disk" "$S/disk.img" $((88 * 256)) ||
	fail "mkfs.ext4 -d"
MARK_BLOCK=$((92 * 256))
echo "$MARK_BLOCK" >"$I/mark.block"
(cd "$I" && find . | cpio -o -H newc --quiet) >"$S/initrd" || fail "cpio"

# one boot, recorded; then the power is cut (qemu killed)
python3 "$HERE/powercut-disk.py" "$S/nbd.sock" "$S/disk.img" "$S/t" $((MARK_BLOCK * 4096)) &
DPID=$!
for _ in $(seq 1 50); do [ -S "$S/nbd.sock" ] && break; sleep 0.1; done
exec 9>/tmp/storaged-qemu.lock
flock 9
t0=$(date +%s)
qemu-system-x86_64 -accel tcg -cpu max -smp "${STORAGED_BOOT_SMP:-2}" -m 1024 -nodefaults -no-reboot \
	-display none -serial "file:$S/console.log" -kernel "$VMLINUZ" -initrd "$S/initrd" \
	-append "console=ttyS0 rdinit=/init panic=-1 quiet" \
	-blockdev "driver=nbd,node-name=d0,server.type=unix,server.path=$S/nbd.sock,export=disk" \
	-device virtio-blk-pci,drive=d0,write-cache=on &
QPID=$!
# the kill follows the guest's last write closely: it must fall before
# the next periodic sync (IVL seconds later)
for _ in $(seq 1 3000); do
	grep -q POWERCUT-DONE "$S/console.log" 2>/dev/null && break
	kill -0 "$QPID" 2>/dev/null || break
	sleep 0.2
done
kill -9 "$QPID" 2>/dev/null
wait "$QPID" 2>/dev/null
QPID=
flock -u 9
# the disk server ends when qemu's connection does, after writing the
# image; one that qemu never reached (qemu failed to start) is ended here
for _ in $(seq 1 300); do kill -0 "$DPID" 2>/dev/null || break; sleep 0.2; done
kill "$DPID" 2>/dev/null && { wait "$DPID"; DPID=; tail -5 "$S/console.log" 2>/dev/null; fail "qemu never reached the disk"; }
wait "$DPID"
DPID=
grep POWERCUT "$S/console.log" | sed 's/^/# guest: /'
grep -q POWERCUT-DONE "$S/console.log" || { tail -30 "$S/console.log"; fail "the guest did not finish its syncs"; }
grep -q "storaged sync exit 0" "$S/console.log" || { tail -30 "$S/console.log"; fail "storaged sync failed in the guest"; }
grep -q "storaged sync ov exit 0" "$S/console.log" || { tail -30 "$S/console.log"; fail "storaged sync of the overlay area failed in the guest"; }
echo "# one boot and three recorded sync-backs: $(($(date +%s) - t0)) s"

# the cuts, in parallel, their images on a tmpfs
M=$(mktemp -d /dev/shm/storaged-powercut.XXXXXX 2>/dev/null) || M=$S
[ "$M" = "$S" ] || trap 'rm -rf "$M"; cleanup' EXIT
python3 "$HERE/powercut-check.py" cuts "$S/t" storaged dir "$CUTS" "$M" >"$S/storaged.txt" &
p1=$!
python3 "$HERE/powercut-check.py" cuts "$S/t" overlay ov "$CUTS" "$M" ov >"$S/overlay.txt" &
p2=$!
if [ $RSYNC = yes ]; then
	python3 "$HERE/powercut-check.py" cuts "$S/t" rsync peer-rsync "$CUTS" "$M" >"$S/rsync.txt" &
else
	echo "rsync: not installed here, not run" >"$S/rsync.txt"
fi
python3 "$HERE/powercut-check.py" cuts "$S/t" cp peer-cp "$CUTS" "$M" >"$S/cp.txt"
rc=0 orc=0
wait $p1 || rc=1
wait $p2 || orc=1
wait
prc=0
python3 "$HERE/powercut-check.py" periodic "$S/t" per "$CUTS" "$M" "$S/disk.img" $((NGEN - 1)) >"$S/periodic.txt" ||
	prc=1
[ "${STORAGED_BOOT_VERBOSE:-0}" = 1 ] && cat "$S/storaged.txt" "$S/overlay.txt" "$S/rsync.txt" "$S/cp.txt"
[ $rc = 0 ] || grep -v " 0 torn, 0 missing, 0 wrong" "$S/storaged.txt" | head -20
[ $orc = 0 ] || grep -v " 0 torn, 0 missing, 0 wrong" "$S/overlay.txt" | head -20
tail -1 "$S/storaged.txt" | sed 's/^/# /'
tail -1 "$S/overlay.txt" | sed 's/^/# /'
tail -1 "$S/rsync.txt" | sed 's/^/# peer /'
tail -1 "$S/cp.txt" | sed 's/^/# peer /'
[ "${STORAGED_BOOT_VERBOSE:-0}" = 1 ] || [ $prc = 1 ] && cat "$S/periodic.txt"
tail -1 "$S/periodic.txt" | sed 's/^/# /'
echo "# total $(($(date +%s) - t0)) s"
[ $rc = 0 ] || fail "a power cut during storaged's sync back left the directory inconsistent"
echo "ok: $CUTS power cuts during storaged's sync back: every file and directory old or new, fsck clean"
[ $orc = 0 ] || fail "a power cut during the sync back of a seed = overlay area left the directory inconsistent"
echo "ok: $CUTS power cuts during an overlay area's sync back: every file and directory old or new, fsck clean"
[ $prc = 0 ] || fail "a power cut between periodic syncs (sync-interval = ${IVL}s) lost more than one interval or left the area's directory inconsistent"
echo "ok: the cut between periodic syncs every ${IVL}s: the disk holds the last completed periodic sync, $CUTS cuts over the phase consistent"

#!/bin/bash
# The ROOT filesystem on a two-disk btrfs RAID1 (issue 11): boot Debian
# bookworm under qemu (TCG) from partitioned virtio disks (GPT, one
# partition each, PARTLABEL rootraid1-a/-b) with root=UUID=<fsid>, first
# with Debian's stock initramfs (btrfs-progs' `btrfs device scan` and
# udev's 64-btrfs.rules, no storaged), then with storaged's initramfs-tools
# hook and boot script installed by the package (dpkg -i of the .deb that
# tests/packaging/lib.sh builds; update-initramfs).
#
#   stock-consent  stock initrd, disk 2 absent, storaged.degraded=after-timeout
#   stock-refuse   stock initrd, disk 2 absent
#      (recorded, never failed on: what Debian does without storaged)
#   full           storaged, both disks: root mounted, not degraded
#   consent        storaged, disk 2 absent, storaged.degraded=after-timeout
#                  storaged.device-timeout=10: root mounted -o degraded after
#                  the timeout, the warning on the console and in the booted
#                  system's journal
#   refuse         storaged, disk 2 absent, storaged.device-timeout=10: the
#                  emergency message (fsid, members present/expected, devid 2,
#                  the option to consent) and the initramfs shell within the
#                  timeout plus a margin; qemu is killed then
#   stale          storaged, disk 2 back after the consent boot wrote to disk
#                  1 alone (the same disk files, written through): boots
#
# Opt-in like t-boot-qemu.sh (STORAGED_BOOT_TEST=1; run-tests.sh sets it
# in CI); shares its cached systemd image (build-image.sh).
# STORAGED_BOOT_ONLY="full refuse" runs a subset; STORAGED_BOOT_KEEP=1 keeps
# the scratch directory.  The RAID1 is made on the host on loop devices
# over the partitions of the image files (losetup -o/--sizelimit), filled
# with a copy of the image and detached again before any boot.
. "$(dirname "$0")/../packaging/lib.sh"

[ "${STORAGED_BOOT_TEST:-0}" = 1 ] ||
	skip "opt-in: set STORAGED_BOOT_TEST=1 (boots Debian under qemu; first run builds images with mmdebstrap)"
[ "$(id -u)" = 0 ] || skip "needs root (mmdebstrap --mode=root, loop devices, chroot)"
[ -e /dev/loop-control ] || skip "no /dev/loop-control: the RAID1 root is made on loop devices"
scratch
[ "${STORAGED_BOOT_KEEP:-0}" = 1 ] && note "keeping $SCRATCH"
need_tool qemu-system-x86_64 qemu-system-x86
need_tool mmdebstrap mmdebstrap
need_tool mkfs.btrfs btrfs-progs
need_tool python3 python3
need_tool dpkg-buildpackage dpkg-dev
need_tool dh debhelper
need_tool fakeroot fakeroot
ONLY=${STORAGED_BOOT_ONLY:-stock-consent stock-refuse full consent refuse stale}
T0=$(date +%s)

# The scratch mount and loop devices are undone even when a step fails.
root_cleanup() {
	local rc=$? d
	set +e
	mountpoint -q "$SCRATCH/mnt" 2>/dev/null && umount "$SCRATCH/mnt"
	if [ -f "$SCRATCH/loops" ]; then
		while read -r d; do
			btrfs device scan --forget "$d" >/dev/null 2>&1
			losetup -d "$d" 2>/dev/null
		done <"$SCRATCH/loops"
	fi
	[ -n "${QEMU_PID:-}" ] && kill "$QEMU_PID" 2>/dev/null
	[ "${STORAGED_BOOT_KEEP:-0}" = 1 ] || rm -rf "$SCRATCH"
	exit "$rc"
}
trap root_cleanup EXIT

t=$(date +%s)
deb_build
note "package: $DEB ($(($(date +%s) - t))s)"

t=$(date +%s)
IMG=$("$HERE/build-image.sh" systemd 2>"$SCRATCH/image.err") || {
	cat "$SCRATCH/image.err" >&2
	grep -Eqi 'Temporary failure resolving|Could not resolve|Failed to fetch|Unable to connect|Network is unreachable' \
		"$SCRATCH/image.err" && skip "mmdebstrap cannot reach Debian's mirror"
	fail "building the systemd image"
}
note "image: $IMG ($(($(date +%s) - t))s)"
kver=$(basename "$(find "$IMG/root/lib/modules" -mindepth 1 -maxdepth 1 -type d | sort | tail -n 1)")

# ---------------------------------------------------------------- root tree
R=$SCRATCH/root
cp -a "$IMG/root" "$R"
# Small initrds, made in seconds instead of minutes: the modules a virtio
# btrfs root needs, not MODULES=most (the boot scripts are the same).
echo MODULES=list >"$R/etc/initramfs-tools/conf.d/zz-storaged-root-test"
printf '%s\n' virtio_pci virtio_blk btrfs >>"$R/etc/initramfs-tools/modules"
mkinitrd() { # OUT: update-initramfs in the chroot; the initrd to OUT, its file list to OUT.list
	chroot "$R" update-initramfs -c -k "$kver" >"$1.log" 2>&1 ||
		{ cat "$1.log"; fail "update-initramfs for $1"; }
	chroot "$R" lsinitramfs "/boot/initrd.img-$kver" >"$1.list" 2>/dev/null
	mv "$R/boot/initrd.img-$kver" "$1"
}

# Debian as shipped: the image's overrides of btrfs-progs' initramfs
# pieces (build-image.sh, guest/initramfs-no-btrfs-scan) put aside.
mkdir -p "$SCRATCH/overrides"
mv "$R/etc/initramfs-tools/scripts/local-premount/btrfs" "$SCRATCH/overrides/"
mv "$R/etc/initramfs-tools/hooks/zz-storaged-test-no-btrfs-rules" "$SCRATCH/overrides/"
t=$(date +%s)
mkinitrd "$SCRATCH/initrd-stock"
grep -q 'scripts/local-premount/btrfs' "$SCRATCH/initrd-stock.list" || fail "the stock initrd has no btrfs scan"
note "stock initrd ($(($(date +%s) - t))s)"

# storaged from its package; every btrfs registration in the initrd is
# storaged's again (the overrides back), as in t-boot-qemu.sh.
mv "$SCRATCH/overrides/btrfs" "$R/etc/initramfs-tools/scripts/local-premount/"
mv "$SCRATCH/overrides/zz-storaged-test-no-btrfs-rules" "$R/etc/initramfs-tools/hooks/"
cp "$DEB" "$R/tmp/storaged.deb"
chroot "$R" dpkg -i /tmp/storaged.deb >"$SCRATCH/install.log" 2>&1 ||
	{ cat "$SCRATCH/install.log"; fail "dpkg -i $(basename "$DEB")"; }
rm -f "$R/tmp/storaged.deb" "$R"/boot/initrd.img-*
[ -x "$R/usr/share/initramfs-tools/hooks/storaged" ] || fail "the package put no initramfs-tools hook"
[ -x "$R/usr/share/initramfs-tools/scripts/local-premount/storaged" ] ||
	fail "the package put no initramfs-tools local-premount script"
t=$(date +%s)
mkinitrd "$SCRATCH/initrd-storaged"
note "storaged initrd ($(($(date +%s) - t))s)"
if [ -s "$SCRATCH/initrd-storaged.list" ]; then
	for f in usr/sbin/storaged usr/lib/storaged/storaged-root scripts/local-premount/storaged; do
		grep -qx "$f" "$SCRATCH/initrd-storaged.list" || fail "$f is not in storaged's initrd"
	done
fi

install -m 0755 "$HERE/guest/storaged-root-check" "$R/usr/local/sbin/storaged-root-check"
install -m 0644 "$HERE/guest/storaged-root-check.service" "$R/etc/systemd/system/"
systemctl --root="$R" enable storaged-root-check.service >/dev/null 2>&1 || fail "systemctl enable"
systemctl --root="$R" mask serial-getty@ttyS0.service getty@tty1.service getty-static.service >/dev/null 2>&1
echo '# the root is mounted by the initramfs (root= rw on the command line)' >"$R/etc/fstab"

# ---------------------------------------------------------------- disks
# Two GPT disks, one partition each, the RAID1 on the partitions.
mkdir -p "$SCRATCH/mnt"
size=$(($(du -sm "$R" | cut -f1) * 2 + 512))
declare -a LOOP
for i in 1 2; do
	truncate -s "${size}M" "$SCRATCH/disk$i.img"
	lbl=rootraid1-$([ "$i" = 1 ] && echo a || echo b)
	read -r off len puuid < <(python3 "$HERE/gpt-disk.py" "$SCRATCH/disk$i.img" "$lbl") ||
		fail "gpt-disk.py"
	eval "PARTUUID$i=$puuid"
	LOOP[$i]=$(losetup -f --show -o "$off" --sizelimit "$len" "$SCRATCH/disk$i.img") || fail "losetup"
	echo "${LOOP[$i]}" >>"$SCRATCH/loops"
done
mkfs.btrfs -q -f -L rootraid1 -d raid1 -m raid1 "${LOOP[1]}" "${LOOP[2]}" >"$SCRATCH/mkfs.log" 2>&1 ||
	{ cat "$SCRATCH/mkfs.log"; fail "mkfs.btrfs"; }
FSID=$(blkid -p -o value -s UUID "${LOOP[1]}")
[ -n "$FSID" ] || fail "no fsid"
echo "FSID=$FSID" >"$R/etc/storaged-root-test.env"
t=$(date +%s)
mount -t btrfs -o "device=${LOOP[1]},device=${LOOP[2]}" "${LOOP[1]}" "$SCRATCH/mnt" || fail "mount the new RAID1"
cp -a "$R/." "$SCRATCH/mnt/" || fail "copying the root"
umount "$SCRATCH/mnt" || fail "umount"
for i in 1 2; do
	btrfs device scan --forget "${LOOP[$i]}" >/dev/null 2>&1
	losetup -d "${LOOP[$i]}"
done
rm -f "$SCRATCH/loops"
rm -rf "$R"
note "RAID1 root fsid $FSID on PARTUUID $PARTUUID1 + $PARTUUID2 (${size}M disks, filled in $(($(date +%s) - t))s)"

# ---------------------------------------------------------------- boots
RESULTS=()
FAILED=0
# boot NAME INITRD DISKS LIMIT PERSIST EXTRA-CMDLINE: boot, watch the serial console
# until the guest reports (ROOT-BOOT-RESULT), an initramfs shell prompt
# appears, or LIMIT seconds pass; qemu is killed then.  Sets SERIAL, ELAPSED
# (seconds to the first of those) and HOW (result|shell|limit|exit).
# PERSIST=yes writes through to the disk files, otherwise -snapshot.
boot() {
	local name=$1 initrd=$2 disks=$3 limit=$4 persist=$5 extra=$6 t0 now
	local drives=(-drive "file=$SCRATCH/disk1.img,if=virtio,format=raw")
	[ "$disks" = 2 ] && drives+=(-drive "file=$SCRATCH/disk2.img,if=virtio,format=raw")
	[ "$persist" = yes ] || drives+=(-snapshot)
	SERIAL=$SCRATCH/serial-$name.log
	: >"$SERIAL"
	note "boot $name: $(basename "$initrd"), $disks disk(s), $extra"
	t0=$(date +%s)
	qemu-system-x86_64 -accel tcg -m 1024 -smp "${STORAGED_BOOT_SMP:-2}" \
		-nodefaults -display none -no-reboot -serial "file:$SERIAL" \
		-kernel "$IMG/vmlinuz" -initrd "$initrd" \
		-append "root=UUID=$FSID rw console=ttyS0 net.ifnames=0 loglevel=4 $extra" \
		"${drives[@]}" >"$SCRATCH/qemu-$name.log" 2>&1 &
	QEMU_PID=$!
	HOW=limit
	while :; do
		sleep 1
		now=$(date +%s)
		if grep -aq '^ROOT-BOOT-RESULT:' "$SERIAL"; then
			HOW=result
			# let it power off by itself (written through: a clean end)
			wait "$QEMU_PID"
			break
		fi
		if grep -aq '(initramfs)' "$SERIAL"; then
			HOW=shell
			sleep 2
			break
		fi
		kill -0 "$QEMU_PID" 2>/dev/null || { HOW=exit; break; }
		[ $((now - t0)) -ge "$limit" ] && break
	done
	ELAPSED=$(($(date +%s) - t0))
	kill "$QEMU_PID" 2>/dev/null
	wait "$QEMU_PID" 2>/dev/null
	QEMU_PID=
	tr -d '\r' <"$SERIAL" >"$SERIAL.txt"
}
verdict() { # NAME OK|FAIL TEXT
	RESULTS+=("$1 (${ELAPSED}s, $HOW): $2 $3")
	note "$1: ${ELAPSED}s, $HOW: $2 $3"
	if [ "$2" != ok ] && [ "$2" != recorded ]; then
		FAILED=1
		echo "---- serial console of $1 (last 80 lines) ----"
		tail -n 80 "$SERIAL.txt"
	fi
}
result_line() { grep -a '^ROOT-BOOT-RESULT:' "$SERIAL.txt" | tail -n 1; }
# what a stock boot did, in a few words, from its console
stock_summary() {
	local s
	s=$(grep -a -m1 -e 'Failed to mount' -e 'ALERT!' -e 'Gave up waiting' "$SERIAL.txt")
	echo "${s:-no initramfs message}; $(grep -a -m1 -o 'BTRFS error[^]]*' "$SERIAL.txt" | head -c 160)"
}
want() { case " $ONLY " in *" $1 "*) return 0 ;; esac; return 1; }
CONSENT="storaged.degraded=after-timeout storaged.device-timeout=10"

if want stock-consent; then
	boot stock-consent "$SCRATCH/initrd-stock" 1 180 no "$CONSENT"
	verdict stock-consent recorded "$(stock_summary)"
fi
if want stock-refuse; then
	boot stock-refuse "$SCRATCH/initrd-stock" 1 180 no "storaged.device-timeout=10"
	verdict stock-refuse recorded "$(stock_summary)"
fi
if want full; then
	boot full "$SCRATCH/initrd-storaged" 2 300 no "storaged_test.expect=full"
	line=$(result_line)
	case "$line" in "ROOT-BOOT-RESULT: ok "*) verdict full ok "$line" ;; *) verdict full FAIL "${line:-no result}" ;; esac
fi
if want consent; then
	boot consent "$SCRATCH/initrd-storaged" 1 300 yes "$CONSENT storaged_test.expect=degraded"
	line=$(result_line)
	why=
	case "$line" in "ROOT-BOOT-RESULT: ok "*) ;; *) why="${line:-no result}" ;; esac
	grep -aq 'storaged: WARNING: the root filesystem UUID=.* is mounted DEGRADED' "$SERIAL.txt" ||
		why="$why; no warning on the console"
	if [ -z "$why" ]; then verdict consent ok "$line"; else verdict consent FAIL "$why"; fi
fi
if want refuse; then
	# 10s timeout, plus the kernel and udev before it under TCG: a shell
	# within 150s, never an endless wait.
	boot refuse "$SCRATCH/initrd-storaged" 1 150 no "storaged.device-timeout=10"
	why=
	[ "$HOW" = shell ] || why="no initramfs shell ($HOW)"
	for re in "$FSID" '1 of 2 members present' 'devid 2' 'storaged\.degraded=after-timeout'; do
		grep -aq -- "$re" "$SERIAL.txt" || why="$why; '$re' not in the message"
	done
	msg=$(grep -a -A8 'was not mounted' "$SERIAL.txt" | tr '\n' ' ' | head -c 400)
	if [ -z "$why" ]; then verdict refuse ok "$msg"; else verdict refuse FAIL "$why"; fi
fi
if want stale; then
	# disk 1 was written alone in the consent boot (persist=yes): disk 2 is stale
	want consent || fail "the stale boot needs the consent boot before it"
	boot stale "$SCRATCH/initrd-storaged" 2 300 no "storaged.device-timeout=10 storaged_test.expect=full"
	line=$(result_line)
	why=
	case "$line" in "ROOT-BOOT-RESULT: ok "*) ;; *) why="${line:-no result}" ;; esac
	# storaged names the stale member and the scrub
	grep -aq "devid 2 ('/dev/vdb1') is stale: generation" "$SERIAL.txt" || why="$why; no stale-member warning"
	if [ -z "$why" ]; then verdict stale ok "$line"; else verdict stale FAIL "$why"; fi
fi

printf '# %s\n' "${RESULTS[@]}"
note "total $(($(date +%s) - T0))s"
[ "$FAILED" = 0 ] || fail "a storaged boot did not behave"
exit 0

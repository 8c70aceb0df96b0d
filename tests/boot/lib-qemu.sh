# shellcheck shell=bash
# Shared helpers for the qemu boot tests that boot the cached Debian images
# of build-image.sh with storaged installed from its .deb
# (t-boot-qemu.sh, t-boottime-qemu.sh).  The sourcing test has sourced
# tests/packaging/lib.sh (scratch, fail, note, deb_build) and called
# scratch; $DEB is set by deb_build before boot_install_deb.

# boot_image VARIANT: the cached image directory (built when missing; a
# skip when Debian's mirror cannot be reached).
boot_image() {
	local out rc=0
	out=$("$HERE/build-image.sh" "$1" 2>"$SCRATCH/image-$1.err") || rc=$?
	if [ "$rc" != 0 ]; then
		cat "$SCRATCH/image-$1.err" >&2
		# No route to Debian's mirror is the environment, not storaged.
		if grep -Eqi 'Temporary failure resolving|Could not resolve|Failed to fetch|Unable to connect|Network is unreachable|Connection (timed out|refused)' \
			"$SCRATCH/image-$1.err" "${STORAGED_BOOT_CACHE:-/var/cache/storaged-boot-test}/$1"-*/mmdebstrap.log 2>/dev/null; then
			skip "mmdebstrap cannot reach Debian's mirror (apt sources of this machine)"
		fi
		fail "building the $1 image"
	fi
	echo "$out"
}

# boot_install_deb IMAGE_ROOT DEST VARIANT: DEST becomes a copy of the
# image's root with storaged installed as an administrator does (dpkg -i
# of $DEB, whose maintainer scripts enable it; the dependencies are the
# image's own packages), checked to be installed.
boot_install_deb() {
	local img=$1 R=$2 v=$3
	cp -a "$img" "$R"
	cp "$DEB" "$R/tmp/storaged.deb"
	chroot "$R" dpkg -i /tmp/storaged.deb >"$SCRATCH/install-$v.log" 2>&1 ||
		{ cat "$SCRATCH/install-$v.log"; fail "dpkg -i $(basename "$DEB") (guest $v)"; }
	rm -f "$R/tmp/storaged.deb"
	# shellcheck disable=SC2016 # dpkg-query's format, not the shell's
	chroot "$R" dpkg-query -W -f='${Status} ${Version}\n' storaged | grep -q '^install ok installed ' ||
		fail "storaged is not installed in the $v image after dpkg -i"
	[ -x "$R/usr/sbin/storaged" ] || fail "the package put no /usr/sbin/storaged"
	return 0
}

# boot_mkroot ROOT IMAGE [FREE]: an ext4 image file made from the tree ROOT
# (mkfs.ext4 -d), FREE MiB (default 256) larger than the tree.
boot_mkroot() {
	local size
	size=$(($(du -sm "$1" | cut -f1) + ${3:-256}))
	mkfs.ext4 -q -F -L bootroot -d "$1" "$2" "${size}M" >"$2.log" 2>&1 ||
		{ cat "$2.log"; fail "mkfs.ext4 -d root"; }
	rm -f "$2.log"
}

# boot_qemu LIMIT IMAGEDIR SERIAL QEMULOG DRIVE...: boots the image's
# kernel and initrd (root=/dev/vda) with the given -drive arguments under
# TCG, killed after LIMIT seconds; returns qemu's (or timeout's 124) status.
# BOOT_APPEND: more kernel command line; BOOT_MEM: guest MiB (1024).
boot_qemu() {
	local limit=$1 img=$2 serial=$3 log=$4
	shift 4
	timeout "$limit" qemu-system-x86_64 -accel tcg -m "${BOOT_MEM:-1024}" -smp "${STORAGED_BOOT_SMP:-2}" \
		-nodefaults -display none -no-reboot -serial "file:$serial" \
		-kernel "$img/vmlinuz" -initrd "$img/initrd.img" \
		-append "root=/dev/vda ro console=ttyS0 panic=-1 net.ifnames=0 loglevel=4${BOOT_APPEND:+ $BOOT_APPEND}" \
		"$@" >"$log" 2>&1
}

# boot_test_setup: the opt-in and root checks, the scratch directory (kept
# with STORAGED_BOOT_KEEP=1) and the tools every such test needs.
boot_test_setup() {
	[ "${STORAGED_BOOT_TEST:-0}" = 1 ] ||
		skip "opt-in: set STORAGED_BOOT_TEST=1 (boots Debian under qemu; first run builds images with mmdebstrap)"
	[ "$(id -u)" = 0 ] || skip "needs root (mmdebstrap --mode=root, mkfs.ext4 -d with ownership)"
	scratch
	[ "${STORAGED_BOOT_KEEP:-0}" = 1 ] && { trap - EXIT; note "keeping $SCRATCH"; }
	need_tool qemu-system-x86_64 qemu-system-x86
	need_tool mmdebstrap mmdebstrap
	need_tool mkfs.btrfs btrfs-progs
	need_tool mkfs.ext4 e2fsprogs
	need_tool systemctl systemd
	need_tool dpkg-buildpackage dpkg-dev
	need_tool dh debhelper
	need_tool fakeroot fakeroot
}

# boot_mkdata DIR BTRFS_LABEL EXT_LABEL: a btrfs RAID1 on DIR/raid1-1.img and
# DIR/raid1-2.img (512 MiB each) and an ext4 on DIR/ext.img (64 MiB) made
# from the tree DIR/ext-seed; sets FSID and EXT_UUID.  (mkfs.btrfs
# --rootdir is single-device only: mount points on the RAID1 are made at
# boot by X-mount.mkdir.)
boot_mkdata() {
	local d=$1
	truncate -s 512M "$d/raid1-1.img" "$d/raid1-2.img"
	mkfs.btrfs -q -f -L "$2" -d raid1 -m raid1 \
		"$d/raid1-1.img" "$d/raid1-2.img" >"$d/mkfs.log" 2>&1 || { cat "$d/mkfs.log"; fail "mkfs.btrfs"; }
	truncate -s 64M "$d/ext.img"
	mkfs.ext4 -q -F -L "$3" -d "$d/ext-seed" "$d/ext.img" >>"$d/mkfs.log" 2>&1 ||
		{ cat "$d/mkfs.log"; fail "mkfs.ext4 $3"; }
	FSID=$(blkid -p -o value -s UUID "$d/raid1-1.img")
	EXT_UUID=$(blkid -p -o value -s UUID "$d/ext.img")
	[ -n "$FSID" ] && [ -n "$EXT_UUID" ] || fail "no UUID on the data images"
}

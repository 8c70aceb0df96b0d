#!/bin/bash
# build-image.sh VARIANT: a minimal Debian bookworm root filesystem for the
# boot test (tests/boot/t-boot-qemu.sh), built with mmdebstrap from Debian's
# packages and cached.  VARIANT is `systemd` (systemd-sysv as PID 1) or
# `sysv` (sysvinit-core), or `dracut` (systemd-sysv, with dracut making the
# initrd instead of initramfs-tools: t-root-raid1-dracut-qemu.sh), or
# `guest` (systemd-sysv with udev's btrfs rule and the initramfs scan as
# the packages install them, and the integration tests' tools:
# tests/guest/).  Prints the cache directory, which holds:
#   root/        the root filesystem (kernel modules trimmed), without storaged
#   vmlinuz      Debian's linux-image-amd64 kernel, from root/boot
#   initrd.img   its initramfs, made by initramfs-tools (dracut) in the chroot
#   packages     dpkg -l of the image
# The cache key is a hash of this script (and its hook), the package list and the apt
# sources taken from the host, so that the slow build (a few minutes, mostly
# downloading and unpacking) runs again only when one of them changes.
# storaged itself is never in the cache: the test copies root/ and installs
# the build under test into the copy.
#
# The initramfs must not register btrfs devices on its own: bookworm's
# btrfs-progs runs `btrfs device scan` in local-premount and its hook copies
# udev's 64-btrfs.rules (whose `btrfs ready` builtin registers every member)
# into the initrd.  Either would assemble the RAID1 before storaged runs and
# the test would prove nothing, so both are overridden in /etc before the
# kernel's postinst makes the initrd, and the result is checked.  The
# dracut variant does the same with a dracut module of its own
# (guest/dracut-image-setup).  The guest variant keeps both, as a real
# install has them: the integration suite runs there beside udev.
#
# Environment: STORAGED_BOOT_CACHE (default /var/cache/storaged-boot-test).
set -euo pipefail

VARIANT=${1:?usage: build-image.sh systemd|sysv|dracut|guest}
HERE=$(cd "$(dirname "$0")" && pwd)
CACHE=${STORAGED_BOOT_CACHE:-/var/cache/storaged-boot-test}
SUITE=bookworm

COMMON=(udev kmod procps btrfs-progs e2fsprogs util-linux mount libmount1 libblkid1
	libudev1 libinih1 libsmartcols1 libarchive13 linux-image-amd64)
# dracut conflicts with initramfs-tools: its image is a variant of its own,
# with its own essential hook (EXTRA_HOOK).  NO_SCAN_HOOK: the overrides
# that leave btrfs registration to storaged (all but the guest variant).
EXTRA_HOOK=
NO_SCAN_HOOK=$HERE/guest/initramfs-no-btrfs-scan
case "$VARIANT" in
systemd) INIT=(systemd-sysv initramfs-tools) ;;
sysv) INIT=(sysvinit-core sysv-rc initscripts insserv initramfs-tools) ;;
dracut) INIT=(systemd-sysv dracut) EXTRA_HOOK=$HERE/guest/dracut-image-setup ;;
# What tests/integration/ runs besides storaged (tools/install-deps.sh's
# test packages): attributes and ACLs, rsync, fuser, python3, strings,
# promtool, cryptsetup for LUKS members, strace (its fault injection
# kills a sync or a start at each step), and quota's setquota (a user's
# disk quota against the sync's owners' room).
guest)
	INIT=(systemd-sysv initramfs-tools attr acl rsync psmisc python3 binutils
		cryptsetup-bin prometheus strace quota)
	NO_SCAN_HOOK=
	EXTRA_HOOK=$HERE/guest/initramfs-guest-modules
	;;
*) echo "build-image.sh: unknown variant '$VARIANT' (systemd|sysv|dracut|guest)" >&2; exit 2 ;;
esac
PKGS=$(printf '%s\n' "${COMMON[@]}" "${INIT[@]}" | sort | paste -sd, -)

# The Debian mirror as apt on this machine is configured: every sources file
# that names the suite and a Debian archive is handed to mmdebstrap as is
# (it pastes a file argument into the chroot's sources).  No host is named
# here.
MIRRORS=()
for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list /etc/apt/sources.list.d/*.sources; do
	[ -f "$f" ] || continue
	grep -Eq "^[[:space:]]*(deb[[:space:]]|URIs:).*debian" "$f" || continue
	grep -Eq "^[[:space:]]*(deb[[:space:]].*[[:space:]]${SUITE}[[:space:]]|Suites:.*\\b${SUITE}\\b)" "$f" || continue
	MIRRORS+=("$f")
done
[ ${#MIRRORS[@]} -gt 0 ] || { echo "build-image.sh: no Debian $SUITE source in /etc/apt" >&2; exit 3; }

KEY=$( {
	cat "$0" ${NO_SCAN_HOOK:+"$NO_SCAN_HOOK"} ${EXTRA_HOOK:+"$EXTRA_HOOK"}
	echo "$VARIANT $SUITE $PKGS"
	cat "${MIRRORS[@]}"
} | sha256sum | cut -c1-16)
OUT=$CACHE/$VARIANT-$KEY
mkdir -p "$CACHE"

exec 9>"$CACHE/.lock-$VARIANT"
flock 9
if [ -f "$OUT/complete" ]; then
	echo "$OUT"
	exit 0
fi
# Older images of this variant are stale now: make room.
for old in "$CACHE/$VARIANT"-*; do
	[ -e "$old" ] && [ "$old" != "$OUT" ] && rm -rf "$old"
done
rm -rf "$OUT"
mkdir -p "$OUT" "$CACHE/debs"

log=$OUT/mmdebstrap.log
# Downloaded .debs are kept in $CACHE/debs (sync-in/sync-out, as in
# mmdebstrap(1)) so that the other variant and rebuilds download little.
HOOKS=()
for hook in $NO_SCAN_HOOK $EXTRA_HOOK; do
	# shellcheck disable=SC2016 # run by mmdebstrap with "$1" = root
	HOOKS+=(--essential-hook="copy-in $hook /tmp/"
		--essential-hook="sh \"\$1\"/tmp/$(basename "$hook") \"\$1\"")
done
# The guest runs the tests, not a metrics server.
[ "$VARIANT" = guest ] && HOOKS+=(--customize-hook='chroot "$1" systemctl mask prometheus.service')
# shellcheck disable=SC2016 # the hooks are run by mmdebstrap with "$1" = root
if ! mmdebstrap --mode=root --variant=minbase --include="$PKGS" \
	--aptopt='Acquire::Check-Valid-Until "false"' \
	--aptopt='Acquire::Languages "none"' \
	--dpkgopt='path-exclude=/usr/share/man/*' \
	--dpkgopt='path-exclude=/usr/share/doc/*' \
	--dpkgopt='path-exclude=/usr/share/locale/*' \
	--dpkgopt='path-exclude=/usr/share/info/*' \
	--skip=download/empty --skip=essential/unlink \
	--setup-hook='mkdir -p "$1"/var/cache/apt/archives/' \
	--setup-hook="sync-in $CACHE/debs /var/cache/apt/archives/" \
	"${HOOKS[@]}" \
	--customize-hook="sync-out /var/cache/apt/archives $CACHE/debs" \
	"$SUITE" "$OUT/root" "${MIRRORS[@]}" >"$log" 2>&1; then
	tail -n 30 "$log" >&2
	echo "build-image.sh: mmdebstrap failed (log: $log)" >&2
	exit 4
fi

R=$OUT/root
kver=$(basename "$(find "$R/lib/modules" -mindepth 1 -maxdepth 1 -type d | sort | tail -n 1)")
[ -n "$kver" ] && [ -f "$R/boot/vmlinuz-$kver" ] && [ -f "$R/boot/initrd.img-$kver" ] ||
	{ echo "build-image.sh: no kernel/initrd in the image" >&2; exit 4; }
# The initrd must not assemble btrfs (see above), except the guest's,
# which must have udev's rule as the packages put it there.
LSINITRD=lsinitramfs
[ "$VARIANT" = dracut ] && LSINITRD=lsinitrd
if chroot "$R" "$LSINITRD" "/boot/initrd.img-$kver" >"$OUT/initrd.list" 2>/dev/null; then
	if [ -n "$NO_SCAN_HOOK" ] && grep -Eq '(^|/)64-btrfs\.rules$' "$OUT/initrd.list"; then
		echo "build-image.sh: udev's 64-btrfs.rules is still in the initrd" >&2
		exit 4
	fi
	if [ -z "$NO_SCAN_HOOK" ] && ! grep -Eq '(^|/)64-btrfs\.rules$' "$OUT/initrd.list"; then
		echo "build-image.sh: udev's 64-btrfs.rules is not in the $VARIANT initrd" >&2
		exit 4
	fi
	if [ -z "$NO_SCAN_HOOK" ] && ! grep -Eq '/btrfs\.ko(\.[a-z]+)?$' "$OUT/initrd.list"; then
		echo "build-image.sh: the btrfs module is not in the $VARIANT initrd: its scan would register nothing" >&2
		exit 4
	fi
fi
cp "$R/boot/vmlinuz-$kver" "$OUT/vmlinuz"
cp "$R/boot/initrd.img-$kver" "$OUT/initrd.img"
# Hardware the guest never has: smaller image, faster copy and mkfs per run.
for d in drivers/gpu drivers/media drivers/net/wireless drivers/infiniband drivers/staging \
	drivers/iio drivers/bluetooth drivers/isdn net/wireless net/mac80211 net/bluetooth sound; do
	rm -rf "${R:?}/lib/modules/$kver/kernel/$d"
done
chroot "$R" depmod -a "$kver"
rm -rf "$R"/boot/initrd.img-* "$R"/var/cache/apt/archives/*.deb "$R"/var/lib/apt/lists/*_Packages*
echo storaged-boot >"$R/etc/hostname"
chroot "$R" dpkg-query -W -f='${Package} ${Version}\n' >"$OUT/packages"
touch "$OUT/complete"
echo "$OUT"

#!/bin/bash
# Installs what storaged needs to build and test on Debian 12, as root.
# Only missing packages are installed, so a second run costs nothing.
set -euo pipefail

PACKAGES=(
	build-essential autoconf automake pkg-config
	libmount-dev libblkid-dev libudev-dev libinih-dev libsmartcols-dev
	libcmocka-dev
	btrfs-progs e2fsprogs util-linux mount attr acl psmisc procps
	mandoc valgrind python3
	time # GNU time -v: bench/memory.sh
	insserv systemd
	# tests/packaging/: the .deb (lintian clean), the .rpm, the completion
	debhelper dpkg-dev fakeroot lintian rpm cpio bash-completion
	# the package's own tests (debian/tests/) under autopkgtest's null
	# runner, and rpmlint on the RPMs (tests/packaging/t-deb.sh, t-rpm.sh)
	autopkgtest rpmlint
	# promtool: `promtool check metrics` on storaged status --format=prometheus,
	# `promtool check rules` on conf/storaged-alerts.yml (tests/integration/t-metrics.sh)
	prometheus
	# the peer of the sync back: bench/sync-back.sh, t-area-sync-incremental.sh,
	# tests/boot/t-powercut-qemu.sh
	rsync
	# the kill at each step of a sync's commit (strace's fault injection):
	# tests/integration/t-c32-kill-at-every-step.sh
	strace
	# LUKS members of a btrfs RAID1: tests/integration/t-luks-raid1.sh
	cryptsetup-bin
	# setquota: a sync back within a user's disk quota
	# (tests/integration/t-c33-sync-footprint.sh)
	quota
)
# The qemu boot tests and the guest suite (tests/boot/, tests/guest/), which
# the full run (CI=true) sets off: run-tests.sh builds their images while
# the host suite runs, before any test would install these itself.
[ "${STORAGED_BOOT_TEST:-0}" = 1 ] && PACKAGES+=(qemu-system-x86 mmdebstrap)

missing=()
for p in "${PACKAGES[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

if [ "$(id -u)" != 0 ]; then
	echo "install-deps: run as root to install: ${missing[*]}" >&2
	exit 1
fi
echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null

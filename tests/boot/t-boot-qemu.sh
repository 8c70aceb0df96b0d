#!/bin/bash
# The real client: boot Debian bookworm under qemu (TCG) with storaged
# installed from its Debian package (`dpkg -i` of the .deb that
# dpkg-buildpackage builds from this tree, shared with
# tests/packaging/t-deb.sh), enabled by the package's own maintainer
# scripts, and check from the guest's serial console that storaged assembled the
# btrfs RAID1, mounted the nested entries in order, set up the RAM area and
# reported ready, all at boot.
#
#   boot 1  systemd as PID 1 (the postinst's deb-systemd-helper enabled
#           storaged.service and storaged-remote.service), all disks
#   boot 2  sysvinit-core (the postinst's `update-rc.d storaged defaults`),
#           all disks
#   boot 3  systemd, RAID1 disk 2 left out, degraded = after-timeout:
#           mounted -o degraded after device-timeout, status says degraded
#   boot 4  sysvinit, RAID1 disk 2 left out, degraded = no: the entry fails
#           naming devid 2, its children are not mounted, the boot completes
#   boot 5  systemd, all disks, and an [area keep] with persist = yes: the
#           guest writes to the area and powers off cleanly (systemctl
#           poweroff); the host then reads the root image (debugfs, nothing
#           mounted) and finds the writes synced back by storaged's stop
#   boot 6  the same under sysvinit (shutdown -P: rc0's storaged stop)
#
# Boots 7-10 are the scenarios again as an administrator has the system:
# the `guest` image (build-image.sh guest), where udev's 64-btrfs.rules and
# btrfs-progs' initramfs `btrfs device scan` are left as the packages
# install them, so that the kernel knows the members before storaged runs
# and udev holds an incomplete set "not ready" (SYSTEMD_READY=0):
#   boot 7  both members; the guest makes subvolume "sub" on the RAID1
#   boot 8  (boot 7's disks) disk 2 left out, degraded = after-timeout, and
#           two fstab entries that systemd mounts itself: UUID=<fsid>
#           subvol=sub on /srv/sub, and the same with
#           x-systemd.requires=storaged.service on /srv/req.  Their .device
#           unit waits on udev's SYSTEMD_READY: after storaged's degraded
#           mount and its change events, udev's rule finds the set ready and
#           both are mounted; multi-user.target, no failed unit
#   boot 9  (the same disks) both members, disk 2 stale (boot 8 wrote to
#           disk 1 alone), stale-member = scrub; the systemd mounts too
#   boot 10 disk 2 left out, degraded = no: the entry fails naming devid 2
#
# Opt-in (STORAGED_BOOT_TEST=1): the first run builds two root filesystems
# with mmdebstrap from Debian's mirror (minutes, ~130 MB of packages), later
# runs reuse them from STORAGED_BOOT_CACHE (default
# /var/cache/storaged-boot-test); each boot takes about a minute under TCG.
# STORAGED_BOOT_ONLY="1 3" runs only those boots.  STORAGED_BOOT_KEEP=1
# keeps the scratch directory (images, serial logs).
#
# Guest disks (all files in the scratch directory, nothing on the host is
# mounted or attached): vda root (ext4 made with mkfs.ext4 -d from a copy of
# the cached root), vdb+vdc a btrfs RAID1 made with mkfs.btrfs on the image
# files, vdd (vdc when disk 2 is left out) an ext4 for the nested entry.
# The guest's fstab lists the child first:
#   UUID=<ext4>   /srv/data/nested      ext4   noauto,x-storaged,X-mount.mkdir
#   tmpfs         /srv/data/nested/tmp  tmpfs  size=16M,noauto,x-storaged
#   UUID=<btrfs>  /srv/data             btrfs  noatime,noauto,x-storaged
# and storaged.conf has an [area build] over /var/build (tmpfs, seeded).
# Boots 1-6: udev's 64-btrfs.rules is masked in the image and kept out of the initrd,
# and the initrd's `btrfs device scan` is disabled (build-image.sh), so that
# every btrfs registration the kernel logs must be storaged's.
# (deb_build, and through it boot-units/lib.sh)
. "$(dirname "$0")/../packaging/lib.sh"
# boot_test_setup, boot_image, boot_install_deb, boot_mkroot, boot_qemu,
# boot_mkdata
. "$(dirname "$0")/lib-qemu.sh"

boot_test_setup
need_tool debugfs e2fsprogs
ONLY=${STORAGED_BOOT_ONLY:-1 2 3 4 5 6 7 8 9 10}
T0=$(date +%s)

# ---------------------------------------------------------------- storaged
# The package, as an administrator installs it (tests/packaging/lib.sh:
# built once per source tree, reused by t-deb.sh and by the next run).
t=$(date +%s)
deb_build
note "package: $DEB ($(($(date +%s) - t))s)"

# ---------------------------------------------------------------- images
want_variant() { # VARIANT: does one of the selected boots use it?
	local n
	for n in $ONLY; do
		case "$1:$n" in systemd:1 | systemd:3 | systemd:5 | sysv:2 | sysv:4 | sysv:6) return 0 ;; esac
		case "$1:$n" in guest:7 | guest:8 | guest:9 | guest:10) return 0 ;; esac
	done
	return 1
}
declare -A IMG
for v in systemd sysv guest; do
	want_variant "$v" || continue
	t=$(date +%s)
	IMG[$v]=$(boot_image "$v")
	note "image $v: ${IMG[$v]} ($(($(date +%s) - t))s)"
	# A copy with storaged installed from the package: dpkg -i in the
	# image, whose maintainer scripts enable it (systemd units and SysV
	# links both); the dependencies are the image's own packages.
	R=$SCRATCH/root-$v
	boot_install_deb "${IMG[$v]}/root" "$R" "$v"
	# the [area build] seed runs it
	[ -x "$R/usr/libexec/storaged/storaged-copy" ] ||
		fail "the package put no /usr/libexec/storaged/storaged-copy"
	install -m 0755 "$HERE/guest/storaged-boot-check" "$R/usr/local/sbin/storaged-boot-check"
	case "$v" in
	systemd | guest)
		[ -f "$R/lib/systemd/system/storaged.service" ] || fail "storaged.service not installed"
		[ -L "$R/etc/systemd/system/local-fs.target.wants/storaged.service" ] ||
			fail "the package did not enable storaged.service (local-fs.target.wants)"
		[ -L "$R/etc/systemd/system/remote-fs.target.wants/storaged-remote.service" ] ||
			fail "the package did not enable storaged-remote.service (remote-fs.target.wants)"
		install -m 0644 "$HERE/guest/storaged-boot-check.service" "$R/etc/systemd/system/"
		systemctl --root="$R" enable storaged-boot-check.service \
			>"$SCRATCH/enable-$v.log" 2>&1 || { cat "$SCRATCH/enable-$v.log"; fail "systemctl enable"; }
		# No login prompt racing the report on the console.
		systemctl --root="$R" mask serial-getty@ttyS0.service getty@tty1.service getty-static.service \
			>/dev/null 2>&1
		if [ "$v" = guest ]; then
			# udev's rule as the package put it, not masked as in the other images
			[ ! -e "$R/etc/udev/rules.d/64-btrfs.rules" ] || fail "64-btrfs.rules is overridden in the guest image"
			[ -f "$R/lib/udev/rules.d/64-btrfs.rules" ] || [ -f "$R/usr/lib/udev/rules.d/64-btrfs.rules" ] ||
				fail "the guest image has no 64-btrfs.rules"
			# the report once the boot is over: multi-user.target reached
			mkdir -p "$R/etc/systemd/system/storaged-boot-check.service.d"
			printf '[Unit]\nAfter=multi-user.target\n' \
				>"$R/etc/systemd/system/storaged-boot-check.service.d/after-boot.conf"
		fi
		;;
	sysv)
		[ -x "$R/etc/init.d/storaged" ] || fail "init script not installed"
		ls "$R"/etc/rcS.d/S*storaged >/dev/null 2>&1 ||
			fail "the package's update-rc.d did not link storaged in rcS.d"
		install -m 0755 "$HERE/guest/storaged-boot-check.init" "$R/etc/init.d/storaged-boot-check"
		chroot "$R" update-rc.d storaged-boot-check defaults >"$SCRATCH/enable-$v.log" 2>&1 ||
			{ cat "$SCRATCH/enable-$v.log"; fail "update-rc.d storaged-boot-check"; }
		# No gettys on the console.
		sed -i -e '/getty/s/^\([^#]\)/#\1/' "$R/etc/inittab"
		;;
	esac
	# storaged's debug messages (each registration) in the journal / on the
	# console, for the report.
	echo 'STORAGED_OPTS="-v"' >"$R/etc/default/storaged"
	mkdir -p "$R/srv/data" "$R/srv/sub" "$R/srv/req" "$R/var/build/sub" "$R/var/keep/gone" "$R/var/lib/prometheus/node-exporter"
	for i in $(seq 1 50); do echo "file $i" >"$R/var/build/sub/f$i"; done
	echo seeded >"$R/var/build/seed-marker"
	echo old >"$R/var/keep/kept"
	echo bye >"$R/var/keep/gone/file"
done

# ---------------------------------------------------------------- boots
mkdata() { # DIR: btrfs RAID1 on DIR/raid1-{1,2}.img, ext4 on DIR/ext.img
	mkdir -p "$1/ext-seed/tmp"
	echo nested >"$1/ext-seed/hello"
	boot_mkdata "$1" bootraid1 bootnested
}

RESULTS=()
FAILED=0
FAILED_LINES=
# After a persist boot: what storaged's stop synced back into /var/keep on
# the guest's root image, read with debugfs (nothing is mounted).  Prints
# the problems, nothing when all is well.
persist_problems() { # IMAGE TOKEN SERIAL
	local img=$1 token=$2
	grep -aq "^PERSIST-WROTE $token" "$3" || echo "; the guest did not write to the area"
	[ "$(debugfs -R 'cat /var/keep/token' "$img" 2>/dev/null)" = "$token" ] ||
		echo "; /var/keep/token not synced back at shutdown"
	[ "$(debugfs -R 'cat /var/keep/kept' "$img" 2>/dev/null)" = changed ] ||
		echo "; /var/keep/kept: the change was not synced back"
	debugfs -R 'stat /var/keep/gone' "$img" 2>&1 | grep -q 'File not found' ||
		echo "; /var/keep/gone: deleted in the area, still on disk"
	debugfs -R 'ls /var/keep' "$img" 2>/dev/null | grep -q 'storaged-sync' &&
		echo "; sync leftovers in /var/keep"
}

# boot N VARIANT MODE [DATA]: MODE full (both RAID1 disks), degraded
# (disk 2 left out, degraded = after-timeout), failed (disk 2 left out,
# degraded = no), persist (full, plus a persist area and a clean
# power-off) or stale (full, disk 2 stale).  DATA: the boot directory
# whose data disks this boot uses (written through), default fresh ones.
# BOOT_SYSTEMD_MOUNTS=yes adds systemd's own mounts of subvolume "sub";
# BOOT_SUBVOL_CREATE=yes has the guest make it.
boot() {
	local n=$1 v=$2 mode=$3 d=$SCRATCH/boot$1 R=$SCRATCH/root-$2 policy=no t line data=${4:-}
	local token=$n-$$-$RANDOM$RANDOM rule=masked
	mkdir -p "$d"
	if [ -z "$data" ]; then
		data=$d
		mkdata "$d"
		echo "FSID=$FSID EXT_UUID=$EXT_UUID" >"$d/ids"
	else
		[ -f "$data/ids" ] || fail "boot $n needs the disks of $(basename "$data"), which did not run"
		. "$data/ids"
	fi
	local init=$v
	[ "$v" = guest ] && rule=active init=systemd
	[ "$mode" = degraded ] && policy=after-timeout
	local stale=warn
	[ "$mode" = stale ] && stale=scrub
	cat >"$R/etc/fstab" <<EOT
/dev/vda  /  ext4  errors=remount-ro  0 1
UUID=$EXT_UUID  /srv/data/nested  ext4  noauto,x-storaged,X-mount.mkdir  0 0
tmpfs  /srv/data/nested/tmp  tmpfs  size=16M,nr_inodes=1k,noauto,x-storaged  0 0
UUID=$FSID  /srv/data  btrfs  noatime,noauto,x-storaged  0 0
EOT
	[ "${BOOT_SYSTEMD_MOUNTS:-no}" = yes ] && cat >>"$R/etc/fstab" <<EOT
UUID=$FSID  /srv/sub  btrfs  subvol=sub,noatime  0 0
UUID=$FSID  /srv/req  btrfs  subvol=sub,noatime,x-systemd.requires=storaged.service  0 0
EOT
	cat >"$R/etc/storaged.conf" <<EOT
# storaged boot test ($mode)
[storaged]
device-timeout = 8s
degraded = $policy
stale-member = $stale
metrics-textfile = /var/lib/prometheus/node-exporter/storaged.prom

[area build]
path = /var/build
backend = tmpfs
size = 32M
inodes = auto
seed = yes
EOT
	[ "$mode" = persist ] && cat >>"$R/etc/storaged.conf" <<EOT

[area keep]
path = /var/keep
backend = tmpfs
size = 16M
persist = yes
EOT
	chmod 0644 "$R/etc/storaged.conf"
	cat >"$R/etc/storaged-boot-test.env" <<EOT
INIT=$init
MODE=$mode
FSID=$FSID
LABEL=bootraid1
EXT_UUID=$EXT_UUID
MISSING_DEVID=2
TOKEN=$token
UDEV_RULE=$rule
SYSTEMD_MOUNTS=${BOOT_SYSTEMD_MOUNTS:-no}
SUBVOL_CREATE=${BOOT_SUBVOL_CREATE:-no}
EOT
	boot_mkroot "$R" "$d/root.img"
	local drives=(-drive "file=$d/root.img,if=virtio,format=raw"
		-drive "file=$data/raid1-1.img,if=virtio,format=raw")
	case "$mode" in full | persist | stale) drives+=(-drive "file=$data/raid1-2.img,if=virtio,format=raw") ;; esac
	drives+=(-drive "file=$data/ext.img,if=virtio,format=raw")
	t=$(date +%s)
	note "boot $n: $v, $mode (fsid $FSID)"
	boot_qemu 300 "${IMG[$v]}" "$d/serial.log" "$d/qemu.log" "${drives[@]}"
	local rc=$?
	t=$(($(date +%s) - t))
	line=$(tr -d '\r' <"$d/serial.log" | grep -a '^STORAGED-BOOT-RESULT:' | tail -n 1)
	[ "$rc" = 124 ] && line=${line:-"STORAGED-BOOT-RESULT: fail (qemu killed after 300s)"}
	[ -n "$line" ] || line="STORAGED-BOOT-RESULT: fail (no result on the console, qemu exit $rc)"
	if [ "$mode" = persist ] && [ "${line#STORAGED-BOOT-RESULT: ok }" != "$line" ]; then
		local problems
		problems=$(persist_problems "$d/root.img" "$token" "$d/serial.log" | tr -d '\n')
		[ "$rc" = 124 ] && problems="$problems; the clean power-off did not finish within 300s"
		[ -z "$problems" ] || line="STORAGED-BOOT-RESULT: fail init=$v mode=persist (after shutdown)$problems"
	fi
	RESULTS+=("boot $n ($v, $mode, ${t}s): $line")
	note "boot $n: ${t}s: $line"
	case "$line" in
	"STORAGED-BOOT-RESULT: ok "*) ;;
	*)
		FAILED=1
		FAILED_LINES="$FAILED_LINES; boot $n: ${line#STORAGED-BOOT-RESULT: }"
		echo "---- serial console of boot $n (last 120 lines) ----"
		tr -d '\r' <"$d/serial.log" | tail -n 120
		cat "$d/qemu.log"
		;;
	esac
	[ "${STORAGED_BOOT_VERBOSE:-0}" = 1 ] && tr -d '\r' <"$d/serial.log" | sed -n '/^----- storaged-boot-check/,$p'
	rm -f "$d/root.img"
}

for n in $ONLY; do
	case "$n" in
	1) boot 1 systemd full ;;
	2) boot 2 sysv full ;;
	3) boot 3 systemd degraded ;;
	4) boot 4 sysv failed ;;
	5) boot 5 systemd persist ;;
	6) boot 6 sysv persist ;;
	7) BOOT_SUBVOL_CREATE=yes boot 7 guest full ;;
	8) BOOT_SYSTEMD_MOUNTS=yes boot 8 guest degraded "$SCRATCH/boot7" ;;
	9) BOOT_SYSTEMD_MOUNTS=yes boot 9 guest stale "$SCRATCH/boot7" ;;
	10) boot 10 guest failed ;;
	*) fail "STORAGED_BOOT_ONLY: unknown boot '$n' (1-10)" ;;
	esac
done
printf '# %s\n' "${RESULTS[@]}"
note "total $(($(date +%s) - T0))s"
# The reason names each failed boot and what it reported: run-tests.sh
# prints this line near the closing line, where CI's excerpt shows it.
[ "$FAILED" = 0 ] || fail "a boot did not report ok${FAILED_LINES}"
exit 0

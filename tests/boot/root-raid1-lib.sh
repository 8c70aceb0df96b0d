# shellcheck shell=bash
# Shared by the root-on-RAID1 boot tests (issue 11): t-root-raid1-qemu.sh
# (initramfs-tools) and t-root-raid1-dracut-qemu.sh (dracut).  Sourced
# after ../packaging/lib.sh.  Each test makes its initrds in the root tree
# $R, then calls root_raid1_disks and boots with boot/verdict.

# root_raid1_init: the opt-in and the tools; scratch directory, cleanup
# trap, T0, ONLY (STORAGED_BOOT_ONLY or the default list given as $1).
root_raid1_init() {
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
	ONLY=${STORAGED_BOOT_ONLY:-$1}
	T0=$(date +%s)
	trap root_cleanup EXIT
}

# The scratch mounts and loop devices are undone even when a step fails.
root_cleanup() {
	local rc=$? d
	set +e
	[ -n "${R:-}" ] && mountpoint -q "$R/proc" 2>/dev/null && umount "$R/proc"
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

# root_raid1_image VARIANT: the .deb (DEB), the cached image of VARIANT
# (IMG, kver) and a copy of its root tree to work on (R).
root_raid1_image() {
	local t
	t=$(date +%s)
	deb_build
	note "package: $DEB ($(($(date +%s) - t))s)"
	t=$(date +%s)
	IMG=$("$HERE/build-image.sh" "$1" 2>"$SCRATCH/image.err") || {
		cat "$SCRATCH/image.err" >&2
		grep -Eqi 'Temporary failure resolving|Could not resolve|Failed to fetch|Unable to connect|Network is unreachable' \
			"$SCRATCH/image.err" && skip "mmdebstrap cannot reach Debian's mirror"
		fail "building the $1 image"
	}
	note "image: $IMG ($(($(date +%s) - t))s)"
	kver=$(basename "$(find "$IMG/root/lib/modules" -mindepth 1 -maxdepth 1 -type d | sort | tail -n 1)")
	R=$SCRATCH/root
	cp -a "$IMG/root" "$R"
}

# install_deb: storaged's .deb into $R (dpkg -i), as an administrator would.
install_deb() {
	cp "$DEB" "$R/tmp/storaged.deb"
	chroot "$R" dpkg -i /tmp/storaged.deb >"$SCRATCH/install.log" 2>&1 ||
		{ cat "$SCRATCH/install.log"; fail "dpkg -i $(basename "$DEB")"; }
	rm -f "$R/tmp/storaged.deb"
}

# root_raid1_disks: the guest's report service into $R, then two GPT disks
# (one partition each, PARTLABEL rootraid1-a/-b) with a btrfs RAID1 on the
# partitions, made on loop devices over the image files, filled with $R
# and detached again.  Sets FSID, PARTUUID1, PARTUUID2; removes $R.
root_raid1_disks() {
	local size i lbl off len puuid t
	install -m 0755 "$HERE/guest/storaged-root-check" "$R/usr/local/sbin/storaged-root-check"
	install -m 0644 "$HERE/guest/storaged-root-check.service" "$R/etc/systemd/system/"
	systemctl --root="$R" enable storaged-root-check.service >/dev/null 2>&1 || fail "systemctl enable"
	systemctl --root="$R" mask serial-getty@ttyS0.service getty@tty1.service getty-static.service >/dev/null 2>&1
	echo '# the root is mounted by the initramfs (root= rw on the command line)' >"$R/etc/fstab"

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
}

RESULTS=()
FAILED=0
# SHELL_RE: what the initramfs's emergency shell prints (grep -E), set by
# each test.
# boot NAME INITRD DISKS LIMIT PERSIST EXTRA-CMDLINE: boot, watch the serial console
# until the guest reports (ROOT-BOOT-RESULT), the emergency shell appears
# (SHELL_RE), or LIMIT seconds pass; qemu is killed then.  Sets SERIAL,
# ELAPSED (seconds from qemu's start to the first of those) and HOW
# (result|shell|limit|exit|silent).  PERSIST=yes writes through to the disk
# files, otherwise -snapshot.
#
# A guest whose console stays empty for SILENT_LIMIT seconds never reached
# its initramfs's systemd, which prints "Welcome to ..." within seconds of
# the kernel's start: the emulator stalled before anything of storaged
# ran (seen once in a CI run: 300 s of silence, the same boot 70 s on a
# rerun).  That boot, and only that, is made once more.
SILENT_LIMIT=${STORAGED_BOOT_SILENT_LIMIT:-150}
boot() {
	boot_once "$@"
	if [ "$HOW" = silent ]; then
		note "boot $1: the console stayed empty for ${ELAPSED}s (qemu: $(tail -n 1 "$SCRATCH/qemu-$1.log" 2>/dev/null)); the guest never started its initramfs: booting it once more"
		boot_once "$@"
		[ "$HOW" = silent ] && HOW=limit
	fi
}
boot_once() {
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
		if grep -aq 'ROOT-BOOT-RESULT:' "$SERIAL"; then
			HOW=result
			# let it power off by itself (written through: a clean end)
			wait "$QEMU_PID"
			break
		fi
		if grep -aEq "$SHELL_RE" "$SERIAL"; then
			HOW=shell
			sleep 2
			break
		fi
		kill -0 "$QEMU_PID" 2>/dev/null || { HOW=exit; break; }
		[ $((now - t0)) -ge "$limit" ] && break
		if [ ! -s "$SERIAL" ] && [ $((now - t0)) -ge "$SILENT_LIMIT" ]; then
			HOW=silent
			break
		fi
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
# The guest's lines, wherever they start: systemd's progress line (a job
# running longer than a few seconds) may be drawn before one, without a
# newline in between.
result_line() { grep -ao 'ROOT-BOOT-RESULT:.*' "$SERIAL.txt" | tail -n 1; }
scan_lines() { grep -ao 'ROOT-BOOT-SCAN: .*' "$SERIAL.txt"; }
want() { case " $ONLY " in *" $1 "*) return 0 ;; esac; return 1; }

# The consent boot's verdict: the guest's result line and the degraded
# warning on the console; EXTRA (may be empty) is more of the why.
verdict_consent() { # EXTRA
	local line why=
	line=$(result_line)
	case "$line" in "ROOT-BOOT-RESULT: ok "*) ;; *) why="${line:-no result}" ;; esac
	grep -aq 'storaged: WARNING: the root filesystem UUID=.* is mounted DEGRADED' "$SERIAL.txt" ||
		why="$why; no warning on the console"
	why="$why$1"
	if [ -z "$why" ]; then verdict consent ok "$line"; else verdict consent FAIL "$why"; fi
}

# The refuse boot's verdict: a shell (SHELL names it) within the limit and
# the message naming fsid, members, the missing devid and the option.
verdict_refuse() { # SHELL
	local re msg why=
	[ "$HOW" = shell ] || why="no $1 ($HOW)"
	for re in "$FSID" '1 of 2 members present' 'devid 2' 'storaged\.degraded=after-timeout'; do
		grep -aq -- "$re" "$SERIAL.txt" || why="$why; '$re' not in the message"
	done
	msg=$(grep -a -A8 'was not mounted' "$SERIAL.txt" | tr '\n' ' ' | head -c 400)
	if [ -z "$why" ]; then verdict refuse ok "$msg"; else verdict refuse FAIL "$why"; fi
}
# the kernel command line that consents to a degraded root
CONSENT="storaged.degraded=after-timeout storaged.device-timeout=10"

# root_raid1_end: the results, and the test's status.
root_raid1_end() {
	printf '# %s\n' "${RESULTS[@]}"
	note "total $(($(date +%s) - T0))s"
	[ "$FAILED" = 0 ] || fail "a storaged boot did not behave"
	exit 0
}

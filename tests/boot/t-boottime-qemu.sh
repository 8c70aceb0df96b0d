#!/bin/bash
# Boot time against systemd itself (issue 15): the same storage, a btrfs
# RAID1 on two virtio disks with 20 entries nested on it (an ext4 on a
# third disk, tmpfs mounts, bind mounts; the btrfs and the ext4 by UUID=),
# booted in one run by two methods from the cached systemd image of
# build-image.sh:
#
#   storaged  storaged's .deb installed and enabled (dpkg -i, its
#             maintainer scripts), the entries `noauto,x-storaged` as
#             storaged(8) says; udev's 64-btrfs.rules stays masked (as in
#             the image), so that storaged registers the members
#   systemd   no storaged; the entries as plain fstab lines, mounted by the
#             fstab generator's mount units; udev's 64-btrfs.rules unmasked
#             (its `btrfs ready` builtin registers the members and holds
#             the device unit back until all are present)
#
# Cases: `full` (both RAID1 disks), STORAGED_BOOTTIME_ROUNDS boots per
# method (default 3), interleaved; `missing` (RAID1 disk 2 left out), one
# boot per method: storaged with device-timeout = 10s and
# degraded = after-timeout (asserted: mounted -o degraded, all entries, devid named);
# systemd alone recorded only (C02: it waits for the device job timeout,
# 90 s, then local-fs.target fails and the boot stops in emergency mode; a
# drop-in on emergency.service reports and powers off).
#
# The guest (guest/storaged-boottime-report) prints the time from the start
# of userspace to local-fs.target (systemd's ActiveEnterTimestampMonotonic
# of local-fs.target minus the manager's UserspaceTimestampMonotonic),
# systemd-analyze's time, blame and critical-chain, and a verdict.  The test
# asserts the verdicts only; the times are printed as a table (median and
# range per method and case, and the ratio storaged / systemd) for
# bench/README.md: timed goals are not asserted in tests.
#
# All boots use -snapshot over data disks made once: every boot starts from
# the same state.  Opt-in as t-boot-qemu.sh (STORAGED_BOOT_TEST=1);
# STORAGED_BOOT_KEEP=1 keeps the scratch directory (serial logs),
# STORAGED_BOOT_VERBOSE=1 prints every guest report, STORAGED_BOOTTIME_OPTS
# (e.g. -v) goes into the guest's /etc/default/storaged, and
# STORAGED_BOOTTIME_CASES="full" leaves out the missing-disk boots.
#
# Under CI=true the test asserts what it is for and no more: one round,
# storaged's boots only (STORAGED_BOOTTIME_METHODS="storaged"): the
# systemd-alone boots are the peer of a benchmark, asserted nothing of
# storaged, and were four of the six boots (~8 min under TCG).  The
# comparison with its table is bench/boottime.sh.
# (scratch, fail, note, deb_build)
. "$(dirname "$0")/../packaging/lib.sh"
# boot_test_setup, boot_image, boot_install_deb, boot_mkroot, boot_qemu,
# boot_mkdata
. "$(dirname "$0")/lib-qemu.sh"

boot_test_setup
ROUNDS=${STORAGED_BOOTTIME_ROUNDS:-$([ "${CI:-}" = true ] && echo 1 || echo 3)}
METHODS=${STORAGED_BOOTTIME_METHODS:-$([ "${CI:-}" = true ] && echo storaged || echo storaged systemd)}
for m in $METHODS; do
	case $m in storaged | systemd) ;; *) fail "STORAGED_BOOTTIME_METHODS: '$m' is neither storaged nor systemd" ;; esac
done
has_method() { [[ " $METHODS " == *" $1 "* ]]; }
T0=$(date +%s)

deb_build
IMG=$(boot_image systemd)
note "image: $IMG, package: $DEB"

# ---------------------------------------------------------------- data disks
D=$SCRATCH/data
mkdir -p "$D/ext-seed"
for i in 1 2 3 4 5 6; do
	mkdir -p "$D/ext-seed/d$i"
	echo "bind source $i" >"$D/ext-seed/d$i/hello"
done
boot_mkdata "$D" timeraid1 timeext

# The entries, method-neutral: OPTS gets the method's suffix.  Nothing
# exists on the fresh btrfs: X-mount.mkdir (storaged and mount(8); systemd
# makes a mount unit's Where= anyway).
entries() { # SUFFIX: the fstab lines (the RAID1 first)
	local s=$1 i
	echo "UUID=$FSID  /srv/raid  btrfs  noatime$s  0 0"
	echo "UUID=$EXT_UUID  /srv/raid/ext  ext4  X-mount.mkdir$s  0 0"
	for i in $(seq 1 9); do echo "tmpfs  /srv/raid/t$i  tmpfs  size=8M,nr_inodes=1k,X-mount.mkdir$s  0 0"; done
	for i in 1 2 3 4; do echo "tmpfs  /srv/raid/ext/t$i  tmpfs  size=4M,nr_inodes=1k,X-mount.mkdir$s  0 0"; done
	for i in 1 2 3 4 5 6; do echo "/srv/raid/ext/d$i  /srv/raid/b$i  none  bind,X-mount.mkdir$s  0 0"; done
}
TARGETS=$(entries "" | awk '{ print $2 }' | paste -sd' ')
[ "$(echo "$TARGETS" | wc -w)" = 21 ] || fail "expected the RAID1 and 20 entries"

# ---------------------------------------------------------------- roots
# root-METHOD: the image's root (storaged installed for METHOD=storaged),
# the report unit, no gettys, made into root-METHOD.img once: every boot
# runs on it with -snapshot.
mkroot() { # METHOD
	local m=$1 R=$SCRATCH/root-$1
	if [ "$m" = storaged ]; then
		boot_install_deb "$IMG/root" "$R" storaged
		[ -L "$R/etc/systemd/system/local-fs.target.wants/storaged.service" ] ||
			fail "the package did not enable storaged.service (local-fs.target.wants)"
		entries ",noauto,x-storaged" >"$SCRATCH/fstab-$m"
		cat >"$R/etc/storaged.conf" <<EOT
# t-boottime-qemu.sh
[storaged]
device-timeout = 10s
degraded = after-timeout
EOT
		chmod 0644 "$R/etc/storaged.conf"
		# e.g. STORAGED_BOOTTIME_OPTS=-v: storaged's debug lines (each
		# registration, with the journal's times) for a slow boot's report
		[ -n "${STORAGED_BOOTTIME_OPTS:-}" ] &&
			echo "STORAGED_OPTS=\"$STORAGED_BOOTTIME_OPTS\"" >"$R/etc/default/storaged"
	else
		cp -a "$IMG/root" "$R"
		# udev's btrfs rule back (build-image.sh masks it for storaged's
		# tests): systemd's own way to wait for all members.
		rm -f "$R/etc/udev/rules.d/64-btrfs.rules"
		[ -f "$R/lib/udev/rules.d/64-btrfs.rules" ] || [ -f "$R/usr/lib/udev/rules.d/64-btrfs.rules" ] ||
			fail "the image has no 64-btrfs.rules"
		entries "" >"$SCRATCH/fstab-$m"
	fi
	{
		echo "/dev/vda  /  ext4  errors=remount-ro  0 1"
		cat "$SCRATCH/fstab-$m"
	} >"$R/etc/fstab"
	install -m 0755 "$HERE/guest/storaged-boottime-report" "$R/usr/local/sbin/"
	install -m 0644 "$HERE/guest/storaged-boottime-report.service" "$R/etc/systemd/system/"
	mkdir -p "$R/etc/systemd/system/emergency.service.d"
	printf '[Service]\nExecStartPre=-/usr/local/sbin/storaged-boottime-report emergency\n' \
		>"$R/etc/systemd/system/emergency.service.d/storaged-boottime.conf"
	systemctl --root="$R" enable storaged-boottime-report.service >"$SCRATCH/enable-$m.log" 2>&1 ||
		{ cat "$SCRATCH/enable-$m.log"; fail "systemctl enable (root $m)"; }
	systemctl --root="$R" mask serial-getty@ttyS0.service getty@tty1.service getty-static.service \
		>/dev/null 2>&1
	mkdir -p "$R/srv/raid"
	cat >"$R/etc/storaged-boottime.env" <<EOT
METHOD=$m
FSID=$FSID
TARGETS="$TARGETS"
MISSING_DEVID=2
EOT
	# CASE and ROUND: a file per boot would mean an image per boot; the
	# kernel command line carries them instead (read below).
	echo 'for a in $(cat /proc/cmdline); do case "$a" in boottime.case=*) CASE=${a#*=} ;; boottime.round=*) ROUND=${a#*=} ;; esac; done' \
		>>"$R/etc/storaged-boottime.env"
	boot_mkroot "$R" "$SCRATCH/root-$m.img"
	rm -rf "$R"
}
for m in $METHODS; do mkroot "$m"; done

# ---------------------------------------------------------------- boots
FAILED=0
RESULTS=()
declare -A TIMES # method:case -> "ms ms ..."
# boot METHOD CASE ROUND LIMIT
boot() {
	local m=$1 c=$2 r=$3 limit=$4 d=$SCRATCH/boot-$1-$2-$3 rc t line bt ms
	mkdir -p "$d"
	local drives=(-drive "file=$SCRATCH/root-$m.img,if=virtio,format=raw"
		-drive "file=$D/raid1-1.img,if=virtio,format=raw")
	[ "$c" = full ] && drives+=(-drive "file=$D/raid1-2.img,if=virtio,format=raw")
	drives+=(-drive "file=$D/ext.img,if=virtio,format=raw" -snapshot)
	t=$(date +%s)
	BOOT_APPEND="boottime.case=$c boottime.round=$r" \
		boot_qemu "$limit" "$IMG" "$d/serial.log" "$d/qemu.log" "${drives[@]}"
	rc=$?
	t=$(($(date +%s) - t))
	tr -d '\r' <"$d/serial.log" >"$d/console.log"
	line=$(grep -a '^BOOTTIME-RESULT:' "$d/console.log" | tail -n 1)
	bt=$(grep -a '^BOOTTIME:' "$d/console.log" | tail -n 1)
	[ "$rc" = 124 ] && line=${line:-"BOOTTIME-RESULT: none (qemu killed after ${limit}s)"}
	line=${line:-"BOOTTIME-RESULT: none (no result on the console, qemu exit $rc)"}
	ms=$(sed -n 's/.* localfs_ms=\([0-9-]*\).*/\1/p' <<<"$bt")
	[ -n "$ms" ] || ms=-
	[ "$ms" != - ] && TIMES[$m:$c]="${TIMES[$m:$c]:-} $ms"
	# systemd alone with a member missing never reaches local-fs.target:
	# what it did and when is recorded (end_ms, how=), not judged.
	[ "$m:$c" = systemd:missing ] &&
		TIMES[$m:$c:end]="$(sed -n 's/.* end_ms=\([0-9]*\) how=\([a-z]*\).*/\1 ms to \2/p' <<<"$bt"), $(grep -a '^mounted:' "$d/console.log" | sed 's/ (.*//')"
	[ "$m:$c" = systemd:missing ] && [ -z "$bt" ] && TIMES[$m:$c:end]="nothing reported within ${limit}s (qemu killed)"
	RESULTS+=("$m $c $r (${t}s wall): local-fs.target after ${ms} ms; $line")
	note "$m $c round $r: ${t}s, local-fs.target after $ms ms: $line"
	case "$m:$c:$line" in
	*:"BOOTTIME-RESULT: ok "*) ;;
	systemd:missing:*) ;;
	*)
		FAILED=1
		echo "---- console of $m $c $r (last 100 lines) ----"
		tail -n 100 "$d/console.log"
		cat "$d/qemu.log"
		;;
	esac
	[ "${STORAGED_BOOT_VERBOSE:-0}" = 1 ] && sed -n '/^----- storaged-boottime-report/,$p' "$d/console.log"
	return 0
}

for r in $(seq 1 "$ROUNDS"); do
	has_method storaged && boot storaged full "$r" 300
	has_method systemd && boot systemd full "$r" 300
done
case " ${STORAGED_BOOTTIME_CASES:-full missing} " in
*" missing "*)
	has_method storaged && boot storaged missing 1 300
	has_method systemd && boot systemd missing 1 400
	;;
esac

# ---------------------------------------------------------------- table
stats() { # ms...: "median (min-max, n=N)", - for none
	[ $# -gt 0 ] || { echo -; return 0; }
	printf '%s\n' "$@" | sort -n | awk '{ v[NR] = $1 } END {
		if (!NR) { print "-"; exit }
		m = (NR % 2) ? v[(NR + 1) / 2] : int((v[NR / 2] + v[NR / 2 + 1]) / 2)
		printf "%d (%d-%d, n=%d)", m, v[1], v[NR], NR }'
}
med() { stats "$@" | cut -d' ' -f1; }
# shellcheck disable=SC2086 # word lists of numbers
{
	echo "boot time to local-fs.target, ms from the start of userspace, median (range, boots); $(date -u '+%Y-%m-%d %H:%M UTC'), load average $(cut -d' ' -f1-3 /proc/loadavg), $(git -C "$TOPSRCDIR" rev-parse --short HEAD 2>/dev/null || echo no-git)"
	echo "| case | storaged | systemd alone | storaged / systemd |"
	echo "| --- | ---: | ---: | ---: |"
	sf=$(med ${TIMES[storaged:full]:-}) yf=$(med ${TIMES[systemd:full]:-})
	echo "| full (2 disks, 21 entries) | $(stats ${TIMES[storaged:full]:-}) | $(stats ${TIMES[systemd:full]:-}) | $(awk -v a="$sf" -v b="$yf" 'BEGIN { if (a + 0 && b + 0) printf "%.2f", a / b; else print "-" }') (goal <= 1.0) |"
	echo "| disk 2 missing | $(stats ${TIMES[storaged:missing]:-}) (device-timeout 10s, degraded = after-timeout) | ${TIMES[systemd:missing]:+$(stats ${TIMES[systemd:missing]}); }${TIMES[systemd:missing:end]:-} | - |"
} >"$SCRATCH/table"
printf '# %s\n' "${RESULTS[@]}"
sed 's/^/# /' "$SCRATCH/table"
note "total $(($(date +%s) - T0))s"
[ "$FAILED" = 0 ] || fail "a boot did not report ok"
exit 0

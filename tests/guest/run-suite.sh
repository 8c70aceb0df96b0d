#!/bin/bash
# The whole integration suite (tests/integration/t-*.sh) inside a Debian 12
# qemu guest on Debian's own kernel (linux-image-amd64, 6.1), with
# systemd-udevd running and udev's 64-btrfs.rules and btrfs-progs'
# initramfs scan as the packages install them, and storaged installed
# from its .deb (dpkg -i, as an administrator does).  What the
# development machine lacks (brd, zram, dm-crypt modules) is there.
#
# The host builds (or reuses) the .deb (tests/packaging/lib.sh) and the
# `guest` image (tests/boot/build-image.sh guest), copies the image's root,
# installs the .deb, the test scripts, fixtures and the race attackers
# (/opt/storaged-tests) and storaged-guest-suite.service, makes an ext4
# root image of it and boots it under qemu (TCG).  The guest runs the
# tests one by one (guest-suite) and reports each on its second serial
# port, which this script follows: one progress line per finished test,
# a failed test's log, then "N passed, N failed, N skipped" after one
# "skipped: TEST: reason" line per skip.  The guest's logs are copied out
# of the root image with debugfs into $BUILDDIR/tests/guest/logs/.
#
# Environment: STORAGED_GUEST_ONLY="t-start-stop t-c08-zram-allocation"
# (a subset), STORAGED_GUEST_LIMIT (seconds for the whole boot, default
# 7200), STORAGED_GUEST_TEST_LIMIT (seconds per test, default 1200),
# STORAGED_GUEST_MEM (MiB, default 3072), STORAGED_BOOT_SMP (CPUs, 2),
# STORAGED_BOOT_CACHE, STORAGED_BOOT_KEEP=1 (keep the scratch directory).
# qemu runs under /tmp/storaged-qemu.lock (one qemu at a time).
# Exit status: 0 when nothing failed.
# (deb_build, scratch, note, fail; and tests/boot/lib-qemu.sh's helpers)
. "$(dirname "$0")/../packaging/lib.sh"
. "$TOPSRCDIR/tests/boot/lib-qemu.sh"
set -o pipefail

# The boot helpers' skip and fail end a test; here a skip of the whole
# guest run is one line of the summary.
STORAGED_BOOT_TEST=1 boot_test_setup
need_tool debugfs e2fsprogs
T0=$(date +%s)
SUITE=$BUILDDIR/tests/guest
mkdir -p "$SUITE"
rm -rf "$SUITE/logs" "$SUITE/results"

t=$(date +%s)
# the package's unit tests run in the tree's make check: not again here
deb_build nocheck
note "package: $DEB ($(($(date +%s) - t))s)"
# the race tests' attackers (check_PROGRAMS)
for p in tests/integration/c20-swap tests/integration/deny-open tests/race/swapper; do
	[ -x "$BUILDDIR/$p" ] || make -C "$BUILDDIR" -s "$p" >/dev/null ||
		fail "cannot build $p in $BUILDDIR"
done
t=$(date +%s)
IMG=$(HERE=$TOPSRCDIR/tests/boot && boot_image guest) || { rc=$?; echo "$IMG"; exit $rc; }
note "image guest: $IMG ($(($(date +%s) - t))s)"

# ---------------------------------------------------------------- the root
t=$(date +%s)
R=$SCRATCH/root
boot_install_deb "$IMG/root" "$R" guest
O=$R/opt/storaged-tests
mkdir -p "$O/tests"
# the integration tests read their fixtures and golden outputs from the source tree
cp -a "$TOPSRCDIR/tests/integration" "$TOPSRCDIR/tests/fixtures" "$TOPSRCDIR/tests/golden" "$O/tests/"
mkdir -p "$O/conf" "$O/systemd"
cp -a "$TOPSRCDIR/conf/." "$O/conf/"
# t-unit-capabilities reads the units' CapabilityBoundingSet= from the sources
cp -a "$TOPSRCDIR/systemd/." "$O/systemd/"
cp "$BUILDDIR/tests/integration/c20-swap" "$O/c20-swap"
cp "$BUILDDIR/tests/integration/deny-open" "$O/deny-open"
cp "$BUILDDIR/tests/race/swapper" "$O/swapper"
cp "$TOPSRCDIR/tests/guest/guest-suite" "$O/guest-suite"
echo "${STORAGED_GUEST_TEST_LIMIT:-1200}" >"$O/test-limit"
if [ -n "${STORAGED_GUEST_ONLY:-}" ]; then
	for n in $STORAGED_GUEST_ONLY; do
		n=$(basename "$n" .sh)
		[ -f "$TOPSRCDIR/tests/integration/$n.sh" ] || fail "no test tests/integration/$n.sh"
		echo "tests/integration/$n.sh"
	done
else
	(cd "$TOPSRCDIR" && ls tests/integration/t-*.sh) |
		grep -vxF -f <(grep -v '^#' "$TOPSRCDIR/tests/guest/not-in-guest")
fi >"$O/list"
cp "$O/list" "$SCRATCH/list"
cp "$TOPSRCDIR/tests/guest/storaged-guest-suite.service" "$R/etc/systemd/system/"
systemctl --root="$R" enable storaged-guest-suite.service >/dev/null 2>&1 ||
	fail "systemctl --root enable storaged-guest-suite.service"
# No login prompts on the console (the tests report on ttyS1).
systemctl --root="$R" mask serial-getty@ttyS0.service getty@tty1.service getty-static.service \
	>/dev/null 2>&1
cat >"$R/etc/fstab" <<EOT
/dev/vda / ext4 rw,errors=remount-ro 0 1
EOT
echo storaged-guest >"$R/etc/hostname"
# Room for the tests' scratch directories and images in /tmp (the root
# image file is sparse on the host).
boot_mkroot "$R" "$SCRATCH/root.img" 6144
rm -rf "$R"
note "root image ($(($(date +%s) - t))s)"

# ---------------------------------------------------------------- the boot
N=$(wc -l <"$SCRATCH/list")
LIMIT=${STORAGED_GUEST_LIMIT:-7200}
RESULTS=$SCRATCH/results.log
: >"$RESULTS"
exec 7>/tmp/storaged-qemu.lock
flock -n 7 || { note "waiting for /tmp/storaged-qemu.lock (another qemu test)"; flock 7; }
note "booting the guest: $N tests, at most ${LIMIT}s; a line per finished test"
tq=$(date +%s)
BOOT_MEM=${STORAGED_GUEST_MEM:-3072} boot_qemu "$LIMIT" "$IMG" "$SCRATCH/console.log" "$SCRATCH/qemu.log" \
	-drive "file=$SCRATCH/root.img,format=raw,if=virtio" -serial "file:$RESULTS" &
qpid=$!
# progress: as the guest reports
tail -n +1 -F --pid=$qpid "$RESULTS" 2>/dev/null | {
	k=0
	while IFS= read -r line; do
		line=${line%$'\r'}
		case $line in
		"GUEST-INFO: "*) echo "# guest: ${line#GUEST-INFO: }" ;;
		"GUEST-RESULT: "*)
			k=$((k + 1))
			read -r res name secs reason <<<"${line#GUEST-RESULT: }"
			printf '[%d/%d %dm%02ds] %s: guest/%s (%ss)%s\n' "$k" "$N" $((($(date +%s) - tq) / 60)) \
				$((($(date +%s) - tq) % 60)) "$res" "$name" "$secs" "${reason:+: $reason}"
			;;
		"GUEST-LOG: "*) echo "  | ${line#GUEST-LOG: }" ;;
		esac
	done
}
wait $qpid
qrc=$?
exec 7>&-
note "guest ran $(($(date +%s) - tq))s (qemu exit $qrc)"

# ---------------------------------------------------------------- results
tr -d '\r' <"$RESULTS" >"$SUITE/results"
cp "$SCRATCH/console.log" "$SUITE/console.log"
debugfs -R "rdump /var/log/storaged-guest $SUITE" "$SCRATCH/root.img" >/dev/null 2>&1 &&
	mv "$SUITE/storaged-guest" "$SUITE/logs" && note "the guest's test logs: $SUITE/logs/"
pass=0 failed=0 skipped=0
skips=()
while read -r t; do
	name=$(basename "$t" .sh)
	line=$(grep -m1 "^GUEST-RESULT: [A-Z]* $name " "$SUITE/results")
	read -r _ res _ _ reason <<<"$line"
	case $res in
	PASS) pass=$((pass + 1)) ;;
	SKIP)
		skipped=$((skipped + 1))
		skips+=("skipped: guest/$name: ${reason:-no reason given (log: $SUITE/logs/$name.log)}")
		;;
	FAIL | ERROR) failed=$((failed + 1)) ;;
	*)
		failed=$((failed + 1))
		echo "FAIL: guest/$name: never reported (the guest stopped: qemu exit $qrc, console: $SUITE/console.log)"
		;;
	esac
done <"$SCRATCH/list"
grep -q '^GUEST-DONE' "$SUITE/results" || {
	echo "# the guest did not finish the list; the end of its console:"
	tail -n 30 "$SUITE/console.log" | sed 's/^/  | /'
}
[ ${#skips[@]} -gt 0 ] && printf '%s\n' "${skips[@]}"
note "guest suite: $(($(date +%s) - T0))s in all"
echo "$pass passed, $failed failed, $skipped skipped"
[ "$failed" = 0 ]

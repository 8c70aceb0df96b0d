#!/bin/bash
# Installs the dependencies, builds, and runs the whole test suite: cmocka
# unit tests, golden plans, and the integration tests (root, loop devices).
# Prints a line per test as it finishes (tools/make-check.sh) and ends with
# the line "N passed, N failed, N skipped", after one line
# "skipped: TEST: reason" per skipped test.
#
# With --full, or when CI=true, more runs, in two chains side by side (about
# one CPU each): on the host, this suite again under ASan+UBSan
# (tools/check-sanitizers.sh, in build-asan/) and the unit tests and fuzz
# corpus replays under valgrind (tools/check-valgrind.sh), each such run
# one test in the closing line; in qemu, the guest suite (below; each of
# its tests counted in the closing line, STORAGED_GUEST=0 leaves it out)
# from the start, and the boot tests (tests/boot/) once this suite's
# first pass is done.  Their images (tests/boot/build-image.sh, cached)
# are built in the background, the guest's first.
#
# With --guest, instead: the whole integration suite inside a Debian 12
# qemu guest (its own 6.1 kernel, systemd-udevd and udev's btrfs rule
# active, storaged installed from its .deb; tests/guest/run-suite.sh),
# a progress line per finished test, closed by the same line.
set -uo pipefail
cd "$(dirname "$0")"
full=0
guest=0
for arg in "$@"; do
	case $arg in
	--full) full=1 ;;
	--guest) guest=1 ;;
	*)
		echo "usage: $0 [--full | --guest]" >&2
		exit 2
		;;
	esac
done
if [ $guest = 1 ]; then
	STORAGED_BOOT_TEST=1 ./tools/install-deps.sh || exit 1
	if ! ./tools/build.sh || ! make -C build -s tests/integration/c20-swap tests/integration/deny-open tests/race/swapper; then
		echo "0 passed, 1 failed"
		exit 1
	fi
	./tests/guest/run-suite.sh 2>&1 | tee build/guest.out
	rc=${PIPESTATUS[0]}
	# a run that stopped before its closing line (no package, no image)
	# counts as one failure, a skip of the whole run as one skip
	if ! tail -n 1 build/guest.out | grep -Eq '^[0-9]+ passed, [0-9]+ failed, [0-9]+ skipped$'; then
		[ "$rc" = 77 ] && echo "0 passed, 0 failed, 1 skipped" || echo "0 passed, 1 failed, 0 skipped"
	fi
	[ "$rc" = 0 ]
	exit
fi
[ "${CI:-}" = true ] && full=1
# The full run also boots Debian under qemu (tests/boot/, opt-in otherwise).
[ $full = 1 ] && export STORAGED_BOOT_TEST=${STORAGED_BOOT_TEST:-1}
./tools/install-deps.sh || exit 1
if ! ./tools/build.sh; then
	echo "0 passed, 1 failed"
	exit 1
fi
find build -name '*.trs' -delete
rm -f build/guest.out build/boot.out

# The full run's schedule, on two CPUs: what runs in qemu (the guest
# suite, then the boots) is one chain and what runs on the host (this
# pass, then the sanitizer pass and valgrind) the other, side by side.
# Each takes about one CPU; run one after the other they took 90 min.
images_pid= guest_pid=
if [ $full = 1 ]; then
	if [ "$STORAGED_BOOT_TEST" = 1 ]; then
		# Each variant's build takes its own lock: a test asking for an
		# image still being built waits for it, and one whose build
		# failed here tries again and reports why.  The guest's first:
		# the guest suite is the longest qemu run.
		(for v in guest systemd sysv dracut; do
			echo "# image $v: $(tests/boot/build-image.sh "$v" 2>&1 | tail -n 1)"
		done) >build/images.out 2>&1 &
		images_pid=$!
	fi
	# The guest suite (tests/guest/) is one qemu process: it takes no
	# lock of the host's integration tests, whose loop devices and btrfs
	# registrations it never sees.  Its lines are printed as they come,
	# prefixed "guest: ", so that its own closing line is not mistaken
	# for this run's.  The race tests' attackers are built here, before
	# make check builds the test programs in the same directory.
	if [ "${STORAGED_GUEST:-1}" != 0 ] &&
		make -C build -s tests/integration/c20-swap tests/integration/deny-open tests/race/swapper; then
		(./tests/guest/run-suite.sh 2>&1; echo "guest-exit: $?") | tee build/guest.out | sed -u 's/^/guest: /' &
		guest_pid=$!
	fi
fi
# Integration tests share the machine's loop and btrfs state: one at a time.
# A line per finished test as it finishes; all of make's output in
# build/check.out.  The qemu boots follow the guest suite, not these.
if [ $full = 1 ]; then
	./tools/make-check.sh build build/check.out '' BOOT_QEMU_TESTS=
else
	./tools/make-check.sh build build/check.out
fi
rc=$?
boot_pid=
if [ $full = 1 ] && [ "$STORAGED_BOOT_TEST" = 1 ]; then
	# After this pass: make check runs once at a time in a build
	# directory.  t-powercut-qemu waits for the guest (the qemu lock),
	# the others run beside it.
	boot_tests=$(make -s -C build --no-print-directory --eval 'print-boot: ; @echo $(BOOT_QEMU_TESTS)' print-boot)
	./tools/make-check.sh build build/boot.out 'boot: ' TESTS="$boot_tests" &
	boot_pid=$!
fi
# skip_reasons: one line per skipped test with its reason, from its log
# (each test says "SKIP: NAME: reason" before it exits 77; else the log's
# last line).
skip_reasons() {
	local trs log reason
	for trs in $(grep -l '^:test-result: SKIP' $(find build -name '*.trs') 2>/dev/null | sort); do
		log=${trs%.trs}.log
		reason=$(grep -m1 -E '^SKIP: ' "$log" 2>/dev/null | sed 's/^SKIP: //')
		[ -n "$reason" ] || reason=$(grep -v -E '^(SKIP|PASS|FAIL)[: ]' "$log" 2>/dev/null | tail -n 1)
		echo "skipped: ${trs#build/}: ${reason:-no reason given in ${log#build/}}" | sed 's/\.trs:/:/'
	done
}
# fail_reasons: the same for each failed test, from the line its fail()
# printed ("FAIL: NAME: reason"), else its log's last line: near the
# closing line, where a reader of only the end of the output sees it.
fail_reasons() {
	local trs log reason
	for trs in $(grep -l -E '^:test-result: (FAIL|ERROR|XPASS)' $(find build -name '*.trs') 2>/dev/null | sort); do
		log=${trs%.trs}.log
		reason=$(grep -m1 -E '^FAIL: ' "$log" 2>/dev/null | sed 's/^FAIL: //')
		[ -n "$reason" ] || reason=$(grep -v -E '^(SKIP|PASS|FAIL)[: ]' "$log" 2>/dev/null | tail -n 1)
		echo "failed: ${trs#build/}: ${reason:-no reason given in ${log#build/}}" | sed 's/\.trs:/:/'
	done
}
# failed_logs: the end of each failed test's log, then make's own lines
# that are not results (a build error, a crashed harness)
failed_logs() {
	local log
	for log in $(grep -l -E '^:test-result: (FAIL|ERROR|XPASS)' $(find build -name '*.trs') 2>/dev/null); do
		echo "==== ${log%.trs}.log"
		tail -n 60 "${log%.trs}.log"
	done
	grep -h -v -E '^(PASS|SKIP|XFAIL):' "$@" | tail -n 40
}
if [ $full = 0 ]; then
	[ $rc != 0 ] && failed_logs build/check.out
	summary=$(./tools/test-summary.sh build $([ $rc != 0 ] && echo --harness-failed))
	summary_rc=$?
	echo "$summary" | sed '$d'
	skip_reasons
	fail_reasons
	echo "$summary" | tail -n 1
	exit $summary_rc
fi

# The second pass: each tool run prints one "PASS|FAIL|SKIP: what" line at
# column 0 (details are indented), counted into the closing line.
./tools/check-sanitizers.sh build-asan 2>&1 | tee build/full-pass.out
./tools/check-valgrind.sh build 2>&1 | tee -a build/full-pass.out
if [ -n "$boot_pid" ]; then
	wait "$boot_pid" || rc=1
fi
[ -n "$images_pid" ] && wait "$images_pid" && cat build/images.out
[ $rc != 0 ] && failed_logs build/check.out $([ -n "$boot_pid" ] && echo build/boot.out)
summary=$(./tools/test-summary.sh build $([ $rc != 0 ] && echo --harness-failed))
extra=$(grep -E '^(PASS|FAIL|SKIP): ' build/full-pass.out | cut -d: -f1)
read -r pass _ failed _ skipped _ <<<"$(echo "$summary" | tail -n 1)"
pass=$((pass + $(grep -c '^PASS$' <<<"$extra")))
failed=$((failed + $(grep -c '^FAIL$' <<<"$extra")))
skipped=$((skipped + $(grep -c '^SKIP$' <<<"$extra")))
guest_skips=
if [ -n "$guest_pid" ]; then
	wait "$guest_pid"
	# A guest run that stopped before its closing line (no package, no
	# image) is one failure; one that skipped as a whole one skip.
	g=$(grep -E '^[0-9]+ passed, [0-9]+ failed, [0-9]+ skipped$' build/guest.out | tail -n 1)
	if [ -n "$g" ]; then
		read -r gp _ gf _ gs _ <<<"$g"
		pass=$((pass + gp)) failed=$((failed + gf)) skipped=$((skipped + gs))
		guest_skips=$(grep -E '^skipped: guest/' build/guest.out)
	elif grep -q '^guest-exit: 77$' build/guest.out; then
		skipped=$((skipped + 1))
		guest_skips="skipped: guest/$(grep -m1 -E '^SKIP: ' build/guest.out | sed 's/^SKIP: //')"
	else
		failed=$((failed + 1))
		echo "FAIL: guest suite: stopped before its closing line (build/guest.out)"
	fi
elif [ "${STORAGED_GUEST:-1}" != 0 ]; then
	failed=$((failed + 1))
	echo "FAIL: guest suite: its race attackers did not build (make -C build tests/integration/c20-swap ...)"
fi
echo "$summary" | sed '$d'
skip_reasons
fail_reasons
grep -E '^SKIP: ' build/full-pass.out | sed 's/^SKIP: /skipped: /'
[ -n "$guest_skips" ] && echo "$guest_skips"
echo "$pass passed, $failed failed, $skipped skipped"
[ "$failed" = 0 ]

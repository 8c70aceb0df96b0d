#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# C36 (issue 43 item 2): after `start` is killed at any of its steps,
# `status` tells what the live system holds.  The start assembles a
# two-device btrfs, mounts it, mounts a tmpfs below it and sets up a
# seeded area; it is killed (SIGKILL by strace's fault injection, as the
# process enters the call) at each call in turn of those that make its
# effects: the btrfs ioctls, mount(2), mkdir, the state's writes, fsyncs
# and renames, the copy helper's start.  After each kill:
# - `status` (table, --json) lists every mount the live mount table shows
#   below the test's directory, and says nothing "waiting" or "mounting"
#   with no storaged at work;
# - it exits 0 only when the live mounts are the whole start's, or when
#   nothing is mounted and it lists nothing; what it says interrupted, it
#   says the `start` that completes; the metrics say "interrupted" where
#   it does;
# - the next `start` makes the whole start's mounts, `stop` undoes them
#   all and `status` is back to 0.
# Then a start killed while it waits for a missing member (poll): status
# says interrupted, not waiting, exit 1; once the
# member is back, the next start completes it and stop undoes it.
. "$(dirname "$0")/lib.sh"
setup
command -v strace >/dev/null || skip "strace missing (tools/install-deps.sh installs it)"
strace -qq -o /dev/null -e inject=getpid:error=EPERM true 2>/dev/null || skip "strace cannot inject faults here (no ptrace)"
command -v python3 >/dev/null || skip "python3 missing (reads the JSON)"
command -v mkfs.btrfs >/dev/null || skip "mkfs.btrfs missing (btrfs-progs)"

mkraid1 "" 256M
D=$SCRATCH/data
P=$SCRATCH/area
mkdir -p "$D" "$P/d"
for i in 1 2 3; do echo "file $i" >"$P/f$i" && echo "deep $i" >"$P/d/g$i"; done
cat >"$FSTAB" <<EOT
UUID=$FSID  $D  btrfs  noauto,x-storaged,x-storaged.device-timeout=20s  0 0
tmpfs  $D/t  tmpfs  size=1M,noauto,x-storaged,x-mount.mkdir  0 0
EOT
cat >"$CONF" <<EOT
[storaged]
sync-interval = 0

[area k]
path = $P
backend = tmpfs
size = 16M
seed = yes
EOT

# the mounts below the scratch directory (the area's in the state
# directory too), as findmnt shows them
live() { findmnt -rn -o TARGET,FSTYPE | awk -v p="$SCRATCH/" 'index($1, p) == 1' | LC_ALL=C sort; }

# killed_start CALL WHEN: start, killed as it enters the WHENth CALL;
# prints its exit status
killed_start() {
	strace -f -qq -o /dev/null -e trace="$1" -e inject="$1":signal=KILL:when="$2" \
		"$STORAGED" -c "$CONF" -f "$FSTAB" --state-dir "$STATE" start >"$SCRATCH/killed.out" 2>&1
	echo $?
}

# check_status WHERE: status, its JSON and metrics against the live mounts
check_status() {
	local where=$1 rc
	live >"$SCRATCH/now"
	OUT=$(sd status 2>&1)
	rc=$?
	printf '%s\n' "$OUT" >"$SCRATCH/status.txt"
	if [ "$rc" = 0 ] && ! cmp -s "$SCRATCH/now" "$SCRATCH/whole" &&
		! { [ ! -s "$SCRATCH/now" ] && grep -q "set up nothing" "$SCRATCH/status.txt"; }; then
		cat "$SCRATCH/now" "$SCRATCH/status.txt"
		fail "$where: status exits 0 over a start half done"
	fi
	# (a step that failed, as the copy helper killed, is told as failed)
	if grep -q " interrupted " "$SCRATCH/status.txt" &&
		! grep -qE "\`$(sd_self) start\` (completes it|sets it up again)" "$SCRATCH/status.txt"; then
		cat "$SCRATCH/now" "$SCRATCH/status.txt"
		fail "$where: status says interrupted without naming the start that completes it"
	fi
	if [ -s "$SCRATCH/now" ] && grep -q "set up nothing" "$SCRATCH/status.txt"; then
		cat "$SCRATCH/now" "$SCRATCH/status.txt"
		fail "$where: status says nothing is set up over live mounts"
	fi
	sd status --json >"$SCRATCH/status.json" 2>/dev/null
	[ $? = "$rc" ] || fail "$where: status --json exits otherwise than the table ($rc)"
	python3 "$(dirname "$0")/status-vs-live.py" "$SCRATCH/status.json" "$SCRATCH/now" "$STATE/areas/" "$P" \
		"$(grep -c interrupted "$SCRATCH/status.txt")" ||
		{ cat "$SCRATCH/now" "$SCRATCH/status.txt" "$SCRATCH/status.json"; fail "$where: status --json against the live mount table"; }
	if grep -q interrupted "$SCRATCH/status.txt"; then
		sd status --format=prometheus >"$SCRATCH/metrics" 2>&1
		grep -q 'state="interrupted"} 1' "$SCRATCH/metrics" ||
			{ cat "$SCRATCH/status.txt" "$SCRATCH/metrics"; fail "$where: the metrics do not say interrupted"; }
	fi
}

# next_start_and_stop WHERE: the next start completes, stop undoes
next_start_and_stop() {
	local where=$1
	run_sd 0 start >/dev/null
	live | diff "$SCRATCH/whole" - >"$SCRATCH/diff" ||
		{ cat "$SCRATCH/diff"; fail "$where: the next start did not make the whole start's mounts"; }
	run_sd 0 stop >/dev/null
	[ -z "$(live)" ] || fail "$where: stop left mounts: $(live)"
	run_sd 0 status >/dev/null
	forget "$A" "${B:-}"
}

run_sd 0 start >/dev/null
live >"$SCRATCH/whole"
[ "$(wc -l <"$SCRATCH/whole")" = 5 ] || { cat "$SCRATCH/whole"; fail "an uninterrupted start made not the 5 mounts expected"; }
run_sd 0 stop >/dev/null
forget "$A" "$B"

kills=0
unfinished=0
# NAME:MAX for each call: MAX bounds the count tried (a start makes fewer)
for sc in ioctl:4 mount:6 mkdir:6 fsync:12 rename:8 pwrite64:8 clone3:2; do
	name=${sc%%:*}
	for when in $(seq 1 "${sc##*:}"); do
		rc=$(killed_start "$name" "$when")
		[ "$rc" != 0 ] && kills=$((kills + 1))
		check_status "killed at $name #$when (exit $rc)"
		grep -q "^run  *start .*interrupted" "$SCRATCH/status.txt" && unfinished=$((unfinished + 1))
		next_start_and_stop "after a kill at $name #$when"
		# the start ran to its end before the call came this often
		[ "$rc" != 0 ] || break
	done
done
[ "$kills" -ge 25 ] || fail "only $kills starts were killed: the steps were not cut where they should be"
[ "$unfinished" -ge 1 ] || fail "no kill showed the start itself as interrupted"
note "start killed at $kills calls ($unfinished shown as a start that did not end)"

note "a start killed while it waits for a missing member"
detach "$B"
B=
for when in 1 2; do
	rc=$(killed_start poll,ppoll "$when")
	[ "$rc" = 137 ] || { cat "$SCRATCH/killed.out"; fail "the start waiting for a member was not killed in its wait (exit $rc)"; }
	check_status "killed in the wait (poll #$when)"
	run_sd 1 status >/dev/null
	# (the btrfs and the fstab entry have their rows once the wait goes on
	# after the first look, t-c36-liveness.sh; the start's row stands for
	# them before)
	expect_out "^run  *start .*interrupted"
	run_sd 0 stop >/dev/null
	[ -z "$(live)" ] || fail "stop after a kill in the wait left mounts: $(live)"
	forget "$A"
done
B=$(attach "$SCRATCH/img/b.img")
forget "$A" "$B"
rc=$(killed_start poll,ppoll 1)
check_status "killed at its first poll, the member back (exit $rc)"
next_start_and_stop "after a kill in the wait, the member back"
echo "ok: start killed at $kills calls and in its wait: status told the live mounts each time, the next start completed and stop undid it"

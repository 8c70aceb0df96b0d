# SPDX-License-Identifier: GPL-2.0-or-later
# Sourced by the tests that kill a command at every step (t-c32-*.sh,
# t-c36-*.sh), after lib-area.sh: the fixture they share and `status`
# held against the live mount table.  Uses the caller's $P (area k's
# directory); check_status counts in $unrecorded the kills that left
# area k mounted without its record.

# need_fault_injection: strace kills a process as it enters a system
# call (-e inject); skip where it is missing or cannot trace
need_fault_injection() {
	command -v strace >/dev/null || skip "strace missing (tools/install-deps.sh installs it)"
	strace -qq -o /dev/null -e inject=getpid:error=EPERM true 2>/dev/null ||
		skip "strace cannot inject faults here (no ptrace)"
}

need_python3() {
	command -v python3 >/dev/null || skip "python3 missing (reads the JSON)"
}

# live_fixture [SEED]: sets P (area k's directory, seeded with files) and
# M (a tmpfs fstab entry's mount point, with a bind below it), and writes
# the fstab and the configuration: area k, tmpfs, seed = SEED (yes),
# persist, no timed sync
live_fixture() {
	local seed=${1:-yes}
	P=$SCRATCH/data
	M=$SCRATCH/mnt
	mkdir -p "$P/d" "$M" "$SCRATCH/bsrc"
	for i in 1 2 3 4 5; do
		echo "file $i" >"$P/f$i"
		echo "deep $i" >"$P/d/g$i"
	done
	echo "bound" >"$SCRATCH/bsrc/f"
	cat >"$FSTAB" <<EOT
tmpfs  $M  tmpfs  size=16M,noauto,x-storaged  0 0
$SCRATCH/bsrc  $M/b  none  bind,noauto,x-storaged,x-mount.mkdir  0 0
EOT
	write_conf <<EOT
[storaged]
sync-interval = 0

[area k]
path = $P
backend = tmpfs
size = 16M
seed = $seed
persist = yes
EOT
}

# live: the mounts below the scratch directory, as findmnt shows them
live() { findmnt -rn -o TARGET,FSTYPE,FSROOT | awk -v p="$SCRATCH/" 'index($1, p) == 1' | LC_ALL=C sort; }

# check_status WHERE: status against the live mount table
check_status() {
	local where=$1 rc
	live >"$SCRATCH/now"
	sd status
	rc=$?
	cp "$OUT" "$SCRATCH/status.txt"
	if [ -s "$SCRATCH/now" ] && grep -q "set up nothing" "$SCRATCH/status.txt"; then
		cat "$SCRATCH/now" "$SCRATCH/status.txt"
		fail "$where: status says nothing is set up over live mounts"
	fi
	if [ "$rc" = 0 ] && ! cmp -s "$SCRATCH/now" "$SCRATCH/whole" && [ -s "$SCRATCH/now" ]; then
		cat "$SCRATCH/now" "$SCRATCH/status.txt"
		fail "$where: status exits 0 over a start half done"
	fi
	if grep -q "its filesystem still mounted" "$SCRATCH/status.txt" && ! grep -q "^$RUN/areas/k/area " "$SCRATCH/now"; then
		cat "$SCRATCH/now" "$SCRATCH/status.txt"
		fail "$where: status says the area's filesystem is still mounted, the mount table does not"
	fi
	sd status --json
	python3 "$(dirname "${BASH_SOURCE[0]}")/status-vs-live.py" "$OUT" "$SCRATCH/now" "$RUN/areas/" "$P" ||
		{ cat "$SCRATCH/now" "$SCRATCH/status.txt" "$OUT"; fail "$where: status --json against the live mount table"; }
	# a setup killed before it wrote the area's record: said so, with
	# what is mounted and what to run
	if grep -q "^$RUN/areas/k/area " "$SCRATCH/now" && [ ! -e "$RUN/areas/k/state" ]; then
		unrecorded=$((unrecorded + 1))
		grep -q "a \`start\` was killed while it set the area up: its filesystem is mounted on '$RUN/areas/k/area'" "$SCRATCH/status.txt" &&
			grep -q "\`$(sd_self) start\` sets it up again, \`$(sd_self) stop\` undoes it" "$SCRATCH/status.txt" ||
			{ cat "$SCRATCH/status.txt"; fail "$where: status does not say the area's setup was killed"; }
	fi
	if grep -q "interrupted" "$SCRATCH/status.txt"; then
		sd status --format=prometheus
		grep -q 'state="interrupted"} 1' "$OUT" ||
			{ cat "$SCRATCH/status.txt" "$OUT"; fail "$where: the metrics do not say interrupted"; }
	fi
}


# stop_kill_every_step SEED CALLS: t-c36-stop-kill-every-step.sh's
# sequence on a persist tmpfs area seeded with SEED (yes, overlay): stop
# killed at each call of CALLS (NAME:MAX, MAX bounding the count tried;
# C36_KILL_STRIDE=N tries every Nth), each kill held against the live
# mount table, the next stop and the directory (what its header says).
stop_kill_every_step() {
	local seed=$1 calls=$2 i kills=0 stride=${C36_KILL_STRIDE:-1} round=0 sc name when rc
	live_fixture "$seed"
	mkdir -p "$P/o" "$P/r0"
	expect_rc 0 start
	live >"$SCRATCH/whole"
	[ "$(wc -l <"$SCRATCH/whole")" = 5 ] || { cat "$SCRATCH/whole"; fail "an uninterrupted start made not the 5 mounts expected"; }
	unrecorded=0
	for sc in $calls; do
		name=${sc%%:*}
		for when in $(seq 1 "$stride" "${sc##*:}"); do
			round=$((round + 1))
			echo "round $round" >"$P/new$round"
			echo "more $round" >>"$P/d/g1"
			rm -f "$P/new$((round - 1))"
			chmod "$((round % 2 ? 600 : 644))" "$P/f2"
			# a directory the last stop synced back, renamed and written
			# into (an overlay copies it up whole, a whiteout where it
			# was; a copying seed's sync once took it for one deleted in
			# the directory), and one deleted and made again (an opaque
			# one in an overlay)
			mv "$P/r$((round - 1))" "$P/r$round"
			echo "in r $round" >"$P/r$round/f$round"
			rm -rf "$P/o" && mkdir "$P/o" && echo "o $round" >"$P/o/x$round"
			stop_tree >"$SCRATCH/want"
			rc=$(
				strace -f -qq -o /dev/null -e trace="$name" -e inject="$name":signal=KILL:when="$when" \
					"$STORAGED" -c "$CONF" -f "$FSTAB" --state-dir "$RUN" stop >"$SCRATCH/killed.out" 2>&1
				echo $?
			)
			[ "$rc" != 0 ] && kills=$((kills + 1))
			cat "$RUN/areas/k/state" >"$SCRATCH/rec" 2>/dev/null
			check_status "stop killed at $name #$when (exit $rc)"
			sd stop || { rc=$? && cat "$SCRATCH/rec" "$SCRATCH/killed.out" "$OUT"; fail "the stop after one killed at $name #$when exited $rc"; }
			[ -z "$(live)" ] || fail "the stop after a kill at $name #$when left mounts: $(live)"
			stop_tree | diff "$SCRATCH/want" - >"$SCRATCH/diff" ||
				{ cat "$SCRATCH/killed.out" "$SCRATCH/diff"; fail "after a stop killed at $name #$when the directory is not what the area held"; }
			expect_rc 0 start
			live | diff "$SCRATCH/whole" - >"$SCRATCH/diff" ||
				{ cat "$SCRATCH/diff"; fail "the start after a stop killed at $name #$when did not make the whole start's mounts"; }
			# the stop ran to its end before the call came this often
			[ "$rc" != 0 ] || break
		done
	done
	expect_rc 0 stop
	[ "$kills" -ge $((30 / stride)) ] || fail "only $kills stops were killed: the steps were not cut where they should be"
	pass "seed = $seed: stop killed at $kills system calls: no work lost, status told the live mounts each time, the next stop finished"
}

# every entry below the directory, with its content: what a user sees
# (one md5sum for all files: one a file took half of each kill's time)
stop_tree() {
	(cd "$P" && {
		find . -mindepth 1 -printf '%p %y %m\n'
		find . -mindepth 1 -type f -exec md5sum {} +
	} | LC_ALL=C sort)
}

# the calls that make a stop's effects: unmounts, the sync's writes,
# renames, fsyncs and extended attributes, the records' removal
C36_STOP_CALLS="umount2:8 move_mount:4 open_tree:4 mount_setattr:4 renameat2:8 rename:6 unlink:6 unlinkat:8
	fsync:14 syncfs:4 fsetxattr:8 fremovexattr:4 removexattr:4 pwrite64:8 write:10 openat:40 clone3:4 rmdir:8"

# wait_intent: until the sync of area directory $P (running, held by
# strace) records its intent, trusted.storaged.committing: 5 s at most
wait_intent() {
	local i
	for i in $(seq 1 500); do
		get_xattr "$P" trusted.storaged.committing >/dev/null 2>&1 && return 0
		sleep 0.01
	done
	return 1
}

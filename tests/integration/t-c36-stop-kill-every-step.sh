#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# C36's kind for `stop`: whatever instant a stop is killed at, the work
# written in a persist area is not lost, `status` tells the live system
# and the next `stop` finishes the job.  A start (a tmpfs fstab entry, a
# bind below it, a persist area) is followed by changes in the area (a new
# file, an appended one, a deleted one), then `stop` is killed (SIGKILL,
# strace's fault injection: the process entering the call dies before the
# call is made, the copy helper as well as storaged) at each call in turn
# of those that make a stop's effects: unmounts, the sync's writes,
# renames, fsyncs and extended attributes, the records' removal.  After
# each kill:
# - `status` reports every mount the live mount table still shows below
#   the test's directory and exits non-zero over a stop half done, never
#   "set up nothing" over a live mount (lib-live.sh);
# - the next `stop` exits 0 and leaves nothing mounted, and the area's
#   directory holds exactly what the area showed before the killed stop:
#   no change lost, none put beside as a conflict, nothing of storaged's
#   own left in it.
. "$(dirname "$0")/lib-area.sh"
. "$(dirname "$0")/lib-live.sh"
command -v strace >/dev/null || skip "strace missing (tools/install-deps.sh installs it)"
command -v python3 >/dev/null || skip "python3 missing (reads the JSON)"
strace -qq -o /dev/null -e inject=getpid:error=EPERM true 2>/dev/null ||
	skip "strace cannot inject faults here (no ptrace)"

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
persist = yes
EOT
# every entry below the directory, with its content: what a user sees
tree() { (cd "$P" && find . -mindepth 1 \( -type f -printf '%p %m ' -exec md5sum {} \; \) -o -printf '%p %y %m\n' | LC_ALL=C sort); }

expect_rc 0 start
live >"$SCRATCH/whole"
[ "$(wc -l <"$SCRATCH/whole")" = 5 ] || { cat "$SCRATCH/whole"; fail "an uninterrupted start made not the 5 mounts expected"; }

kills=0
# C36_KILL_STRIDE=N tries every Nth call of each kind (the emulated guest
# takes N times less; the native run tries each)
stride=${C36_KILL_STRIDE:-1}
unrecorded=0
round=0
# NAME:MAX for each call: MAX bounds the count tried (a stop makes fewer)
for sc in umount2:8 move_mount:4 open_tree:4 mount_setattr:4 renameat2:8 rename:6 unlink:6 unlinkat:8 \
	fsync:14 syncfs:4 fsetxattr:8 fremovexattr:4 removexattr:4 pwrite64:8 write:10 openat:40 clone3:4 rmdir:8; do
	name=${sc%%:*}
	for when in $(seq 1 "$stride" "${sc##*:}"); do
		round=$((round + 1))
		# the work of a session: a new file, an append, a deletion, a chmod
		echo "round $round" >"$P/new$round"
		echo "more $round" >>"$P/d/g1"
		rm -f "$P/new$((round - 1))"
		chmod "$((round % 2 ? 600 : 644))" "$P/f2"
		tree >"$SCRATCH/want"
		rc=$(
			strace -f -qq -o /dev/null -e trace="$name" -e inject="$name":signal=KILL:when="$when" \
				"$STORAGED" -c "$CONF" -f "$FSTAB" --state-dir "$RUN" stop >"$SCRATCH/killed.out" 2>&1
			echo $?
		)
		[ "$rc" != 0 ] && kills=$((kills + 1))
		cat "$RUN/areas/k/state" >"$SCRATCH/rec" 2>/dev/null
		check_status "stop killed at $name #$when (exit $rc)"
		sd stop || { cat "$SCRATCH/rec" "$SCRATCH/killed.out" "$OUT"; fail "the stop after one killed at $name #$when exited $?"; }
		[ -z "$(live)" ] || fail "the stop after a kill at $name #$when left mounts: $(live)"
		tree | diff "$SCRATCH/want" - >"$SCRATCH/diff" ||
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
pass "stop killed at $kills system calls: no work lost, status told the live mounts each time, the next stop finished"

#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Ordered-mounts benchmark (issue 6, benchmark 2).  200 deferred entries,
# tmpfs and bind mounts nested three levels deep:
#
#   20 x  $W/m/tI                 tmpfs
#   60 x  $W/m/tI/uJ              tmpfs (J = 1, 2) or a bind of a disk
#                                 directory (J = 3)
#  120 x  $W/m/tI/uJ/vK           tmpfs (K = 1) or bind (K = 2)
#
# mounted by `storaged start` (entries `noauto,x-storaged`; default jobs
# unless JOBS= is set) and by `mount -a -T FSTAB` (util-linux; -T so that
# /etc/fstab is never read) on the same entries, listed parents first in
# both files, `noauto` removed in mount's copy.  Mount points inside a
# tmpfs are made by X-mount.mkdir (both tools honour it).  Everything is
# unmounted (umount -R) between runs; the state directory is a tmpfs, as
# /run is at boot.  After every run the script checks that all 200 mounts
# exist and that each one's parent in /proc/self/mountinfo is the entry it is
# nested in.  Goal: storaged / mount -a <= 1.0 (median of ROUNDS runs).
#
#   STORAGED=path/to/storaged ROUNDS=7 [JOBS=4] [NICE=-10] \
#       [STORAGED_B=path/to/patched/storaged] bench/ordered-mounts.sh
. "$(dirname "$0")/lib.sh"
ROUNDS=${ROUNDS:-7}
GOAL=1.0
bench_setup ordered
bench_state_tmpfs
M=$W/m

# Entries, parents first.
: >"$W/fstab.sd"
: >"$W/fstab.mount"
: >"$W/expect"
entry() { # SOURCE TARGET TYPE OPTIONS PARENT
	local o=$4
	echo "$1 $2 $3 $o,noauto,x-storaged 0 0" >>"$W/fstab.sd"
	echo "$1 $2 $3 $o 0 0" >>"$W/fstab.mount"
	echo "$2 $5" >>"$W/expect"
}
TMPFS_OPTS=size=1M,nr_inodes=64,X-mount.mkdir
for i in $(seq 1 20); do
	mkdir -p "$M/t$i"
	entry bench "$M/t$i" tmpfs "$TMPFS_OPTS" /
	for j in 1 2 3; do
		if [ "$j" = 3 ]; then
			src=$W/src/b$i.$j
			mkdir -p "$src/v1" "$src/v2" # mount points below a bind live on disk: made once
			entry "$src" "$M/t$i/u$j" none bind,X-mount.mkdir "$M/t$i"
		else
			entry bench "$M/t$i/u$j" tmpfs "$TMPFS_OPTS" "$M/t$i"
		fi
		entry bench "$M/t$i/u$j/v1" tmpfs "$TMPFS_OPTS" "$M/t$i/u$j"
		mkdir -p "$W/src/c$i.$j"
		entry "$W/src/c$i.$j" "$M/t$i/u$j/v2" none bind,X-mount.mkdir "$M/t$i/u$j"
	done
done
N=$(wc -l <"$W/fstab.sd")
[ "$N" = 200 ] || bench_die "made $N entries, not 200"

{
	echo "[storaged]"
	[ -n "${JOBS:-}" ] && echo "jobs = $JOBS"
	echo "mount-timeout = 30s"
} >"$W/storaged.conf"
chmod 0644 "$W/storaged.conf"
SD=("$STORAGED" -q -c "$W/storaged.conf" -f "$W/fstab.sd" --state-dir "$W/run")
JOBS_SHOWN=${JOBS:-4} # 4: the built-in default

unmount_all() {
	local i
	for i in $(seq 1 20); do
		if mountpoint -q "$M/t$i"; then umount -R "$M/t$i"; fi
	done
	unmount_below "$M"
	rm -rf "${W:?}/run/"*
}


run_storaged() { "${SD[@]}" start >"$W/out" 2>&1 || { cat "$W/out" >&2; bench_die "storaged start failed"; }; }
# STORAGED_B=other/build/storaged: a second build timed in the same rounds
SDB=("${STORAGED_B:-}" "${SD[@]:1}")
run_storaged_b() { "${SDB[@]}" start >"$W/out" 2>&1 || { cat "$W/out" >&2; bench_die "storaged (B) start failed"; }; }
run_mount() { mount -a -T "$W/fstab.mount" >"$W/out" 2>&1 || { cat "$W/out" >&2; bench_die "mount -a failed"; }; }

echo "200 entries (20 tmpfs, 60 under them, 120 below those; 80 binds) in $M"
declare -A T
for ((r = 1; r <= ROUNDS; r++)); do
	for m in storaged mount${STORAGED_B:+ storaged_b}; do
		unmount_all
		sync
		tstart
		"run_$m"
		tstop
		T[$m]="${T[$m]:-} $ELAPSED"
		check_nesting "$W/expect" || bench_die "$m: wrong mounts after run $r"
	done
done
unmount_all
# shellcheck disable=SC2086
s=$(median ${T[storaged]}) a=$(median ${T[mount]})
echo
printf 'runs (ms): storaged:%s   mount -a:%s\n' "${T[storaged]}" "${T[mount]}"
printf 'median of %d runs, all 200 mounted and correctly nested every time:\n' "$ROUNDS"
printf '  storaged start (jobs = %s)  %6d ms\n' "${JOBS_SHOWN:-default}" "$s"
printf '  mount -a -T fstab            %6d ms\n' "$a"
if [ -n "${STORAGED_B:-}" ]; then
	# shellcheck disable=SC2086
	b=$(median ${T[storaged_b]})
	printf '  second build (B)             %6d ms  (%s)  B / mount -a = %s; runs:%s\n' "$b" "$STORAGED_B" "$(ratio "$b" "$a")" "${T[storaged_b]}"
fi
printf '  storaged / mount -a = %s (goal <= %s) -> %s\n' "$(ratio "$s" "$a")" "$GOAL" "$(verdict "$(ratio "$s" "$a")" "$GOAL")"

#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Ordered-mounts benchmark (issue 6, benchmark 2; sizes and shapes of
# issue 15).  For each size N (SIZES, default "200 2000") and shape
# (SHAPES, default "nested flat"):
#
#   nested  N/10 groups of three levels (today's shape, scaled):
#             $M/tI                 tmpfs
#             $M/tI/uJ (J = 1..3)   tmpfs (J = 1, 2) or a bind of a disk
#                                   directory (J = 3)
#             $M/tI/uJ/vK (K = 1,2) tmpfs (K = 1) or bind (K = 2)
#           (200 -> 20 x (1 + 3 + 6): 120 tmpfs, 80 binds)
#   flat    N tmpfs entries side by side, $M/fI
#
# mounted by `storaged start` (entries `noauto,x-storaged`; default jobs
# unless JOBS= is set) and by `mount -a -T FSTAB` (util-linux; -T so that
# /etc/fstab is never read) on the same entries, listed parents first in
# both files, `noauto` removed in mount's copy.  Mount points inside a
# tmpfs are made by X-mount.mkdir (both tools honour it).  $M is a private
# bind mount of itself so that everything is unmounted between runs by one
# `umount -R`; the state directory is a tmpfs, as /run is at boot.  After
# every run the script checks that all N mounts exist and that each one's
# parent in /proc/self/mountinfo is the entry it is nested in.
# Goals (issue 15): storaged / mount -a <= 0.8 at 200, <= 0.5 at 2000
# (medians of ROUNDS runs); storaged's time per entry at 2000 within 1.2x
# of that at 200 (same shape).
#
#   STORAGED=path/to/storaged [ROUNDS=7] [JOBS=4] [NICE=-10] \
#       [SIZES="200 2000"] [SHAPES="nested flat"] \
#       [STORAGED_B=path/to/other/storaged] [SD_WRAP="profiler args"] \
#       [MOUNT_WRAP="profiler args"] bench/ordered-mounts.sh
. "$(dirname "$0")/lib.sh"
ROUNDS=${ROUNDS:-7}
SIZES=${SIZES:-200 2000}
SHAPES=${SHAPES:-nested flat}
PER_ENTRY_GOAL=1.2
bench_count ROUNDS "$ROUNDS"
[ -z "${JOBS:-}" ] || bench_count JOBS "$JOBS"
[ -n "${SIZES// /}" ] || bench_die "SIZES must not be empty"
[ -n "${SHAPES// /}" ] || bench_die "SHAPES must not be empty"
for n in $SIZES; do bench_count SIZES "$n"; done
for shape in $SHAPES; do
	case $shape in
	flat | nested) ;;
	*) bench_die "SHAPES: '$shape' is not a shape (nested, flat)" ;;
	esac
done
bench_setup ordered
bench_state_tmpfs
M=$W/m
mkdir -p "$M"

goal_of() { if [ "$1" -le 200 ]; then echo 0.8; else echo 0.5; fi; }

TMPFS_OPTS=size=1M,nr_inodes=64,X-mount.mkdir
# make_case SIZE SHAPE: $W/SHAPE-SIZE.{sd,mount,expect}, parents first.
make_case() {
	local n=$1 shape=$2 c=$W/$2-$1 i j src
	local -a dirs=()
	: >"$c.sd"
	: >"$c.mount"
	: >"$c.expect"
	entry() { # SOURCE TARGET TYPE OPTIONS PARENT
		echo "$1 $2 $3 $4,noauto,x-storaged 0 0" >>"$c.sd"
		echo "$1 $2 $3 $4 0 0" >>"$c.mount"
		echo "$2 $5" >>"$c.expect"
	}
	if [ "$shape" = flat ]; then
		for ((i = 1; i <= n; i++)); do
			dirs+=("$M/f$i")
			entry bench "$M/f$i" tmpfs "$TMPFS_OPTS" /
		done
	else
		for ((i = 1; i <= n / 10; i++)); do
			dirs+=("$M/t$i")
			entry bench "$M/t$i" tmpfs "$TMPFS_OPTS" /
			for j in 1 2 3; do
				if [ "$j" = 3 ]; then
					src=$W/src/b$i.$j
					dirs+=("$src/v1" "$src/v2") # mount points below a bind live on disk
					entry "$src" "$M/t$i/u$j" none bind,X-mount.mkdir "$M/t$i"
				else
					entry bench "$M/t$i/u$j" tmpfs "$TMPFS_OPTS" "$M/t$i"
				fi
				entry bench "$M/t$i/u$j/v1" tmpfs "$TMPFS_OPTS" "$M/t$i/u$j"
				dirs+=("$W/src/c$i.$j")
				entry "$W/src/c$i.$j" "$M/t$i/u$j/v2" none bind,X-mount.mkdir "$M/t$i/u$j"
			done
		done
	fi
	mkdir -p "${dirs[@]}" # one process, not one per entry
	[ "$(wc -l <"$c.sd")" = "$n" ] || bench_die "$shape $n: made $(wc -l <"$c.sd") entries"
}

{
	echo "[storaged]"
	[ -n "${JOBS:-}" ] && echo "jobs = $JOBS"
	echo "mount-timeout = 30s"
} >"$W/storaged.conf"
chmod 0644 "$W/storaged.conf"
JOBS_SHOWN=${JOBS:-4} # 4: the built-in default

# $M: a private mount of its own, so that one `umount -R` undoes a run
mount_root() { mount --bind "$M" "$M" && mount --make-private "$M"; }
unmount_all() {
	umount -R "$M"
	mountpoint -q "$M" && bench_die "$M still mounted"
	rm -rf "${W:?}/run/"*
	mount_root
}
mount_root

CASE=
# SD_WRAP="strace -c -f -o FILE" (or valgrind ...): a profiler around storaged
# shellcheck disable=SC2086
run_storaged() { ${SD_WRAP:-} "$STORAGED" -q -c "$W/storaged.conf" -f "$CASE.sd" --state-dir "$W/run" start >"$W/out" 2>&1 || { cat "$W/out" >&2; bench_die "storaged start failed"; }; }
# STORAGED_B=other/build/storaged: a second build timed in the same rounds
run_storaged_b() { "$STORAGED_B" -q -c "$W/storaged.conf" -f "$CASE.sd" --state-dir "$W/run" start >"$W/out" 2>&1 || { cat "$W/out" >&2; bench_die "storaged (B) start failed"; }; }
# shellcheck disable=SC2086
run_mount() { ${MOUNT_WRAP:-} mount -a -T "$CASE.mount" >"$W/out" 2>&1 || { cat "$W/out" >&2; bench_die "mount -a failed"; }; }

minmax() { printf '%s\n' "$@" | sort -n | sed -n '1p;$p' | paste -sd-; }
# per_entry MS N -> microseconds per entry
per_entry() { awk -v t="$1" -v n="$2" 'BEGIN { printf "%d", t * 1000 / n }'; }

declare -A T MED
SUMMARY=
for shape in $SHAPES; do
	for n in $SIZES; do
		[ "$shape" = flat ] || [ $((n % 10)) = 0 ] || bench_die "nested sizes are multiples of 10"
		CASE=$W/$shape-$n
		make_case "$n" "$shape"
		T=()
		for ((r = 1; r <= ROUNDS; r++)); do
			for m in storaged mount${STORAGED_B:+ storaged_b}; do
				unmount_all
				sync
				tstart
				"run_$m"
				tstop
				T[$m]="${T[$m]:-} $ELAPSED"
				check_nesting "$CASE.expect" || bench_die "$shape $n, $m: wrong mounts after run $r"
			done
		done
		unmount_all
		# shellcheck disable=SC2086
		s=$(median ${T[storaged]}) a=$(median ${T[mount]})
		MED[$shape-$n]=$s
		g=$(goal_of "$n")
		echo
		echo "$shape $n: median of $ROUNDS runs, all $n mounted and correctly nested every time"
		# shellcheck disable=SC2086
		printf '  storaged start (jobs = %s)  %6d ms (%s)  %s us/entry; runs:%s\n' "$JOBS_SHOWN" "$s" "$(minmax ${T[storaged]})" "$(per_entry "$s" "$n")" "${T[storaged]}"
		# shellcheck disable=SC2086
		printf '  mount -a -T fstab            %6d ms (%s)  %s us/entry; runs:%s\n' "$a" "$(minmax ${T[mount]})" "$(per_entry "$a" "$n")" "${T[mount]}"
		if [ -n "${STORAGED_B:-}" ]; then
			# shellcheck disable=SC2086
			b=$(median ${T[storaged_b]})
			# shellcheck disable=SC2086
			printf '  second build (B)             %6d ms (%s)  B / mount -a = %s; runs:%s\n' "$b" "$(minmax ${T[storaged_b]})" "$(ratio "$b" "$a")" "${T[storaged_b]}"
		fi
		line=$(printf '%s %s: storaged / mount -a = %s (goal <= %s) -> %s' "$shape" "$n" "$(ratio "$s" "$a")" "$g" "$(verdict "$(ratio "$s" "$a")" "$g")")
		echo "  $line"
		SUMMARY+="$line"$'\n'
	done
done
echo
echo "summary:"
printf '%s' "$SUMMARY"
for shape in $SHAPES; do
	if [ -n "${MED[$shape-200]:-}" ] && [ -n "${MED[$shape-2000]:-}" ]; then
		a=$(per_entry "${MED[$shape-200]}" 200) b=$(per_entry "${MED[$shape-2000]}" 2000)
		printf '%s: storaged per entry 2000 / 200 = %s / %s us = %s (goal <= %s) -> %s\n' "$shape" "$b" "$a" "$(ratio "$b" "$a")" "$PER_ENTRY_GOAL" "$(verdict "$(ratio "$b" "$a")" "$PER_ENTRY_GOAL")"
	fi
done

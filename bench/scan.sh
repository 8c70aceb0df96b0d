#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Scan benchmark (issue 6, benchmark 1).  8, 64 and 200 loop devices, half
# of them members of two-device btrfs filesystems (one ext4 and one empty
# device for every btrfs pair), timed four ways, each from a state where the
# kernel knows none of the members (`btrfs device scan --forget` of our own
# members before every run):
#
#   storaged scan    enumerate (libudev) + probe (libblkid) every block
#                    device, group btrfs members; registers nothing
#   storaged start   the same, then register every member and wait until
#                    each filesystem is complete (BTRFS_IOC_DEVICES_READY):
#                    the fstab has one btrfs entry per filesystem below a
#                    parent entry that fails at once (bind of a missing
#                    source), so the btrfs mounts are skipped and the figure
#                    is scan + registration only
#   btrfs members    `btrfs device scan MEMBER...`: registration of the
#                    members alone, told which devices they are (a lower
#                    bound for any scan)
#   btrfs discover   `btrfs device scan $(blkid -c /dev/null -o device
#                    -t TYPE=btrfs DEV...)`: what the argument-less
#                    `btrfs device scan` does (libblkid cache probe of every
#                    device with an empty cache, as at boot, then register
#                    the btrfs ones), limited to OUR devices
#
# The argument-less `btrfs device scan` is not run: it would register every
# btrfs device of the machine, including other people's.  storaged scans all
# block devices of the machine (it has no device filter); only our
# filesystems are counted when checking its result.
#
# Each figure is the median of ROUNDS runs (with min-max), with cold caches
# (drop_caches before every run) and warm.  Goals (issue 15), at every
# size: storaged start / btrfs discover <= 0.3 cold and warm; storaged
# start / btrfs members (the floor) <= 3 cold.
#
# The images are made once (sparse files; mkfs on the files) for the
# largest size; each size attaches the first N (the kernel makes loop
# devices on demand through /dev/loop-control).  The EXIT trap forgets and
# detaches only the loop devices this script attached.
#
#   STORAGED=path/to/storaged ROUNDS=5 SIZES="200 1000" [NICE=-10] \
#       [STORAGED_B=path/to/other/storaged] bench/scan.sh
#   (SIZES="8 64 200 1000" for the small sizes too)
. "$(dirname "$0")/lib.sh"
ROUNDS=${ROUNDS:-5}
SIZES=${SIZES:-200 1000}
GOAL_DISC=0.3
GOAL_FLOOR=3
MAX=0
bench_count ROUNDS "$ROUNDS"
[ -n "${SIZES// /}" ] || bench_die "SIZES must not be empty"
for n in $SIZES; do
	bench_count SIZES "$n" 4
	[ $((n % 4)) = 0 ] || bench_die "SIZES='$SIZES': sizes must be multiples of 4"
	[ "$n" -gt "$MAX" ] && MAX=$n
done
command -v mkfs.btrfs >/dev/null && command -v blkid >/dev/null || bench_die "needs btrfs-progs and blkid"
bench_setup scan
bench_state_tmpfs

# Images, made once: in every group of 4, a btrfs RAID1 pair, an ext4 and an
# empty one, so that any multiple of 4 is half btrfs members.
echo "making $MAX images in $W ..."
tstart
declare -a KIND FSID
make_group() {
	local g=$1 a=$((4 * $1)) b=$((4 * $1 + 1)) e=$((4 * $1 + 2)) z=$((4 * $1 + 3))
	truncate -s 256M "$W/$a.img" "$W/$b.img"
	truncate -s 128M "$W/$e.img" "$W/$z.img"
	mkfs.btrfs -q -f -K -L "bench$g" -d raid1 -m raid1 "$W/$a.img" "$W/$b.img" >/dev/null
	mkfs.ext4 -q -F -E nodiscard "$W/$e.img" >/dev/null
}
# two at a time (mkfs is mostly waiting for writes)
for ((g = 0; g < MAX / 4; g++)); do
	make_group "$g" &
	[ $((g % 2)) = 1 ] && wait
done
wait
for ((g = 0; g < MAX / 4; g++)); do
	a=$((4 * g)) b=$((4 * g + 1)) e=$((4 * g + 2)) z=$((4 * g + 3))
	f=$(blkid -p -o value -s UUID "$W/$a.img")
	[ -n "$f" ] || bench_die "mkfs.btrfs of group $g failed"
	KIND[$a]=btrfs KIND[$b]=btrfs KIND[$e]=ext4 KIND[$z]=empty
	FSID[$a]=$f FSID[$b]=$f
done
tstop
echo "  done in $ELAPSED ms"

printf '[storaged]\ndevice-timeout = 30s\njobs = 4\n' >"$W/storaged.conf"
chmod 0644 "$W/storaged.conf"
SD=("$STORAGED" -c "$W/storaged.conf" -f "$W/fstab" --state-dir "$W/run")

forget() { btrfs device scan --forget "${MEMBERS[@]}" >/dev/null; }

# rc 1 is accepted: a device of the machine that cannot be opened (e.g.
# one a sandbox denies) makes scan exit 1; the check below reads the JSON
run_sd_scan() { "${SD[@]}" --json scan >"$W/out.scan" 2>"$W/err.scan" || [ $? = 1 ]; }
# rc 1 is expected: the parent entry fails on purpose
run_sd_start() { "${SD[@]}" start >"$W/out.start" 2>&1 || [ $? = 1 ]; }
# STORAGED_B=other/build/storaged: the same two runs with a second build
# (e.g. a patched one), timed in the same rounds
SDB=("${STORAGED_B:-}" "${SD[@]:1}")
run_sd_scan_b() { "${SDB[@]}" --json scan >"$W/out.scan" 2>"$W/err.scan" || [ $? = 1 ]; }
run_sd_start_b() { "${SDB[@]}" start >"$W/out.start" 2>&1 || [ $? = 1 ]; }
run_btrfs_members() { btrfs device scan "${MEMBERS[@]}" >/dev/null; }
run_btrfs_discover() {
	local found
	found=$(blkid -c /dev/null -o device -t TYPE=btrfs "${DEVS[@]}")
	# shellcheck disable=SC2086
	btrfs device scan $found >/dev/null
}

# Checks, outside the timings: storaged saw all our filesystems complete,
# and each peer left all of them registered.
count_complete_json() {
	python3 - "$W/out.scan" "${FSIDS[@]}" <<'EOF'
import json, sys
ours = set(sys.argv[2:])
fs = json.load(open(sys.argv[1]))["filesystems"]
print(sum(1 for f in fs if f["fsid"] in ours and f["present"] == f["expected"] == 2))
EOF
}
count_ready() {
	local f k=0 i
	for i in "${!FIRST[@]}"; do
		btrfs device ready "${FIRST[$i]}" >/dev/null 2>&1 && k=$((k + 1))
	done
	echo "$k"
}

declare -A RES SPR
METHODS="sd_scan sd_start btrfs_members btrfs_discover${STORAGED_B:+ sd_scan_b sd_start_b}"
for n in $SIZES; do
	DEVS=() MEMBERS=() FSIDS=() FIRST=()
	for ((i = 0; i < n; i++)); do
		d=$(bench_loop "$W/$i.img")
		DEVS+=("$d")
		if [ "${KIND[$i]}" = btrfs ]; then
			MEMBERS+=("$d")
			[ $((i % 4)) = 0 ] && FSIDS+=("${FSID[$i]}") && FIRST+=("$d")
		fi
	done
	nfs=${#FSIDS[@]}
	mkdir -p "$W/mnt"
	{
		echo "$W/missing-source $W/mnt/p none bind,noauto,x-storaged 0 0"
		for ((k = 0; k < nfs; k++)); do
			echo "UUID=${FSIDS[$k]} $W/mnt/p/fs$k btrfs noauto,x-storaged 0 0"
		done
	} >"$W/fstab"
	nblk=$(ls /sys/class/block | wc -l)
	echo
	echo "== $n loop devices: ${#MEMBERS[@]} btrfs members ($nfs filesystems), $((n / 4)) ext4, $((n / 4)) empty; $nblk block devices on the machine"
	for mode in cold warm; do
		declare -A T=()
		for ((r = 1; r <= ROUNDS; r++)); do
			for m in $METHODS; do
				forget
				rm -rf "${W:?}/run/"*
				[ "$mode" = cold ] && drop_caches
				tstart
				"run_$m"
				tstop
				T[$m]="${T[$m]:-} $ELAPSED"
				case $m in
				sd_scan | sd_scan_b)
					c=$(count_complete_json)
					[ "$c" = "$nfs" ] || bench_die "storaged scan found $c of our $nfs filesystems complete"
					;;
				sd_start | sd_start_b)
					c=0
					for f in "${FSIDS[@]}"; do grep -q "btrfs $f: assembled, 2/2" "$W/out.start" && c=$((c + 1)); done
					[ "$c" = "$nfs" ] || { cat "$W/out.start" >&2; bench_die "storaged start assembled $c of $nfs"; }
					;;
				esac
				if [ "$r" = 1 ] && [ "${m#sd_scan}" = "$m" ]; then
					c=$(count_ready)
					[ "$c" = "$nfs" ] || bench_die "$m: only $c of $nfs filesystems registered complete"
				fi
			done
		done
		for m in $METHODS; do
			# shellcheck disable=SC2086
			RES[$n,$mode,$m]=$(median ${T[$m]})
			# shellcheck disable=SC2086
			SPR[$n,$mode,$m]=$(spread ${T[$m]})
		done
		unset T
	done
	forget
	bench_unloop "${DEVS[@]}"
	rmdir "$W/mnt" 2>/dev/null || true
done

echo
printf 'ms, median (min-max) of %d runs (cold: caches dropped before each run)\n' "$ROUNDS"
printf '%6s %5s %16s %16s %14s %16s %11s %11s\n' devices cache "storaged scan" "storaged start" "btrfs members" "btrfs discover" "start/disc" "start/memb"
for n in $SIZES; do
	for mode in cold warm; do
		st=${RES[$n,$mode,sd_start]}
		printf '%6s %5s %16s %16s %14s %16s %11s %11s\n' "$n" "$mode" "${SPR[$n,$mode,sd_scan]}" \
			"${SPR[$n,$mode,sd_start]}" "${SPR[$n,$mode,btrfs_members]}" "${SPR[$n,$mode,btrfs_discover]}" \
			"$(ratio "$st" "${RES[$n,$mode,btrfs_discover]}")" "$(ratio "$st" "${RES[$n,$mode,btrfs_members]}")"
	done
done
if [ -n "${STORAGED_B:-}" ]; then
	echo
	echo "second build STORAGED_B=$STORAGED_B (same rounds):"
	printf '%6s %5s %16s %16s %11s %11s %10s\n' devices cache "scan (B)" "start (B)" "start/disc" "start/memb" "B/A start"
	for n in $SIZES; do
		for mode in cold warm; do
			stb=${RES[$n,$mode,sd_start_b]}
			printf '%6s %5s %16s %16s %11s %11s %10s\n' "$n" "$mode" "${SPR[$n,$mode,sd_scan_b]}" \
				"${SPR[$n,$mode,sd_start_b]}" "$(ratio "$stb" "${RES[$n,$mode,btrfs_discover]}")" \
				"$(ratio "$stb" "${RES[$n,$mode,btrfs_members]}")" "$(ratio "$stb" "${RES[$n,$mode,sd_start]}")"
		done
	done
fi
echo
for n in $SIZES; do
	for mode in cold warm; do
		st=${RES[$n,$mode,sd_start]}
		rd=$(ratio "$st" "${RES[$n,$mode,btrfs_discover]}") rm_=$(ratio "$st" "${RES[$n,$mode,btrfs_members]}")
		printf 'goal at %d devices (%s): storaged start / btrfs discover = %s (<= %s) -> %s' \
			"$n" "$mode" "$rd" "$GOAL_DISC" "$(verdict "$rd" "$GOAL_DISC")"
		if [ "$mode" = cold ]; then
			printf ';  / btrfs members (floor) = %s (<= %s) -> %s' "$rm_" "$GOAL_FLOOR" "$(verdict "$rm_" "$GOAL_FLOOR")"
		fi
		echo
	done
done

#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The whole boot job (issue 15) on 200 loop devices: 50 two-device btrfs
# RAID1 filesystems (100 members), 50 ext4 and 50 empty devices; an fstab
# of 100 mounts (the 50 btrfs and the 50 ext4, all by UUID=, mount points
# below the scratch directory).  Every round starts cold: nothing of ours
# mounted, our members forgotten (`btrfs device scan --forget` of our own
# members only), the page cache dropped.  Timed:
#
#   storaged start   with the fstab's entries marked noauto,x-storaged and
#                    storaged's default `jobs`: enumerate and probe, register
#                    the members, wait until each filesystem is complete,
#                    mount all 100
#   btrfs + mount -a `btrfs device scan $(blkid -c /dev/null -o device -t
#                    TYPE=btrfs DEV...)` (the discover of bench/scan.sh,
#                    limited to our devices), then `mount -a -T FSTAB`
#                    (the same entries without noauto)
#
# Each result is checked outside the timing: all 100 mount points mounted.
# Goal: storaged / (btrfs + mount -a) <= 0.6.
#
#   STORAGED=path/to/storaged ROUNDS=5 [NICE=-10] [JOBS=N] \
#       [STORAGED_B=path/to/other/storaged] bench/boot-job.sh
# JOBS=N sets `jobs` in storaged's configuration (default: storaged's own).
. "$(dirname "$0")/lib.sh"
ROUNDS=${ROUNDS:-5}
N=200
GOAL=0.6
bench_count ROUNDS "$ROUNDS"
[ -z "${JOBS:-}" ] || bench_count JOBS "$JOBS"
command -v mkfs.btrfs >/dev/null && command -v blkid >/dev/null || bench_die "needs btrfs-progs and blkid"
bench_setup boot-job
bench_state_tmpfs

echo "making $N images in $W ..."
tstart
make_group() {
	local g=$1 a=$((4 * $1)) b=$((4 * $1 + 1)) e=$((4 * $1 + 2)) z=$((4 * $1 + 3))
	truncate -s 256M "$W/$a.img" "$W/$b.img"
	truncate -s 128M "$W/$e.img" "$W/$z.img"
	mkfs.btrfs -q -f -K -L "boot$g" -d raid1 -m raid1 "$W/$a.img" "$W/$b.img" >/dev/null
	mkfs.ext4 -q -F -E nodiscard -L "boote$g" "$W/$e.img" >/dev/null
}
for ((g = 0; g < N / 4; g++)); do
	make_group "$g" &
	[ $((g % 2)) = 1 ] && wait
done
wait
DEVS=() MEMBERS=()
mkdir -p "$W/mnt"
: >"$W/fstab.sd"
: >"$W/fstab.mount"
for ((g = 0; g < N / 4; g++)); do
	fb=$(blkid -p -o value -s UUID "$W/$((4 * g)).img")
	fe=$(blkid -p -o value -s UUID "$W/$((4 * g + 2)).img")
	[ -n "$fb" ] && [ -n "$fe" ] || bench_die "mkfs of group $g failed"
	mkdir -p "$W/mnt/b$g" "$W/mnt/e$g"
	echo "UUID=$fb $W/mnt/b$g btrfs noauto,x-storaged 0 0" >>"$W/fstab.sd"
	echo "UUID=$fe $W/mnt/e$g ext4 noauto,x-storaged 0 0" >>"$W/fstab.sd"
	echo "UUID=$fb $W/mnt/b$g btrfs defaults 0 0" >>"$W/fstab.mount"
	echo "UUID=$fe $W/mnt/e$g ext4 defaults 0 0" >>"$W/fstab.mount"
done
for ((i = 0; i < N; i++)); do
	d=$(bench_loop "$W/$i.img")
	DEVS+=("$d")
	[ $((i % 4)) -lt 2 ] && MEMBERS+=("$d")
done
tstop
echo "  done in $ELAPSED ms; $(ls /sys/class/block | wc -l) block devices on the machine"

{
	printf '[storaged]\ndevice-timeout = 30s\n'
	[ -n "${JOBS:-}" ] && printf 'jobs = %s\n' "$JOBS"
} >"$W/storaged.conf"
chmod 0644 "$W/storaged.conf"

reset_cold() {
	unmount_below "$W/mnt"
	rm -rf "${W:?}/run/"*
	btrfs device scan --forget "${MEMBERS[@]}" >/dev/null
	drop_caches
}
run_sd() { "$STORAGED" -c "$W/storaged.conf" -f "$W/fstab.sd" --state-dir "$W/run" start >"$W/out" 2>&1; }
run_sd_b() { "$STORAGED_B" -c "$W/storaged.conf" -f "$W/fstab.sd" --state-dir "$W/run" start >"$W/out" 2>&1; }
# the peer's two parts are timed apart too (PEER_SCAN, PEER_MOUNT)
run_peer() {
	local found t
	found=$(blkid -c /dev/null -o device -t TYPE=btrfs "${DEVS[@]}")
	# shellcheck disable=SC2086
	btrfs device scan $found >/dev/null
	t=${EPOCHREALTIME/[.,]/}
	PEER_SCAN="${PEER_SCAN:-} $(((t - T0) / 1000))"
	mount -a -T "$W/fstab.mount" >"$W/out" 2>&1
	PEER_MOUNT="${PEER_MOUNT:-} $(((${EPOCHREALTIME/[.,]/} - t) / 1000))"
}
count_mounted() {
	awk -v p="$W/mnt/" 'index($5, p) == 1' /proc/self/mountinfo | wc -l
}

METHODS="sd peer${STORAGED_B:+ sd_b}"
declare -A T=()
for ((r = 1; r <= ROUNDS; r++)); do
	for m in $METHODS; do
		reset_cold
		tstart
		"run_$m" || { cat "$W/out" >&2; bench_die "$m failed"; }
		tstop
		T[$m]="${T[$m]:-} $ELAPSED"
		c=$(count_mounted)
		[ "$c" = $((N / 2)) ] || { cat "$W/out" >&2; bench_die "$m: $c of $((N / 2)) mounted"; }
	done
done
reset_cold
# PROFILE=DIR: one more cold storaged start under strace, for the
# wall-clock breakdown in bench/README.md ("Boot job")
if [ -n "${PROFILE:-}" ]; then
	strace -f -tt -T -o "$PROFILE/boot-job.strace" "$STORAGED" -v -c "$W/storaged.conf" -f "$W/fstab.sd" \
		--state-dir "$W/run" start >"$PROFILE/boot-job.log" 2>&1 || true
	reset_cold
fi

echo
printf 'ms, median (min-max) of %d cold rounds; %d devices, %d mounts\n' "$ROUNDS" "$N" $((N / 2))
# shellcheck disable=SC2086
sd=$(median ${T[sd]}) peer=$(median ${T[peer]})
# shellcheck disable=SC2086
printf '%-28s %s\n' "storaged start" "$(spread ${T[sd]})" "btrfs scan + mount -a" "$(spread ${T[peer]})" \
	"  of which blkid + btrfs scan" "$(spread $PEER_SCAN)" "  of which mount -a" "$(spread $PEER_MOUNT)"
if [ -n "${STORAGED_B:-}" ]; then
	# shellcheck disable=SC2086
	printf '%-28s %s  (B/A %s)\n' "storaged start (B)" "$(spread ${T[sd_b]})" "$(ratio "$(median ${T[sd_b]})" "$sd")"
	# shellcheck disable=SC2086
	printf 'B: storaged (B) / (btrfs + mount -a) = %s\n' "$(ratio "$(median ${T[sd_b]})" "$peer")"
fi
printf 'goal: storaged / (btrfs + mount -a) = %s (<= %s) -> %s\n' "$(ratio "$sd" "$peer")" "$GOAL" \
	"$(verdict "$(ratio "$sd" "$peer")" "$GOAL")"

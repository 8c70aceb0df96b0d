#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The seed's own headline: the hand-written workaround storaged replaces was
# adopted because a build ran faster in RAM and spared the SSD.  This builds
# a real tree (storaged's own sources, `git archive` of HEAD, configured
# once) in a directory on an ext4 disk (a loop device, so that its
# /sys/block/loopN/stat counts what reaches the disk), and in the same
# directory covered by a storaged tmpfs area with persist = yes, rounds
# interleaved.  Per side: the build's time (`make -jN` on a fresh copy of
# the configured tree), the bytes written to the disk by the build and the
# `sync` after it; for the area also the seed (`storaged start`) and the
# sync back (`storaged stop`), their times and the bytes they wrote.
# Prints medians (min-max), the ratios, and PASS/MISS: the area's build
# at most 1.0x the disk's (goal of issue 30: never slower) and at least
# 10x fewer bytes written by the build.
# The disk is a file on whatever /var/tmp is on: a page-cached loop file
# makes the disk side faster than a real SSD, so the ratio is a bound.
# Run as root:  [ROUNDS=3] [JOBS=N] [NICE=-10] bench/build-in-area.sh
# shellcheck source=bench/lib.sh
. "$(dirname "$0")/lib.sh"
ROUNDS=${ROUNDS:-3}
JOBS=${JOBS:-$(nproc)}
bench_count ROUNDS "$ROUNDS"
bench_count JOBS "$JOBS"
TOP=$(cd "$(dirname "$0")/.." && pwd)
command -v mkfs.ext4 >/dev/null || bench_die "mkfs.ext4 missing (e2fsprogs)"
git -C "$TOP" rev-parse --verify -q HEAD >/dev/null || bench_die "$TOP is not a git checkout (the tree built is git archive HEAD)"
bench_setup build-in-area

IMG=$(mktemp /var/tmp/storaged-bench-build-in-area.XXXXXX.img)
bench_own_file "$IMG"
truncate -s 4G "$IMG"
mkfs.ext4 -q -F "$IMG"
DEV=$(bench_loop "$IMG")
DISK=$W/disk
mkdir -p "$DISK"
mount "$DEV" "$DISK"
SYSBLK=/sys/block/$(basename "$DEV")/stat
# sectors written (field 7 of the block layer's stat: 512-byte units,
# Documentation/block/stat.rst) -> bytes
written() { echo $(($(awk '{ print $7 }' "$SYSBLK") * 512)); }

echo "configuring the tree (once) ..."
mkdir -p "$DISK/pristine"
git -C "$TOP" archive HEAD | tar -x -C "$DISK/pristine"
(cd "$DISK/pristine" && autoreconf -fi >/dev/null 2>&1 && ./configure -q >/dev/null) ||
	bench_die "the tree does not configure: run autoreconf -fi && ./configure in $TOP to see why"
echo "tree: $(find "$DISK/pristine" | wc -l) entries, $(du -sh "$DISK/pristine" | cut -f1); make -j$JOBS"

fresh_tree() {
	rm -rf "$DISK/work"
	cp -a "$DISK/pristine" "$DISK/work"
	sync
}

# the area: sized for the tree and its objects, with inodes to spare
cat >"$W/storaged.conf" <<EOT
[area build]
path = $DISK/work
backend = tmpfs
size = 1G
inodes = 200000
persist = yes
sync-interval = 0
EOT
chmod 0644 "$W/storaged.conf"
: >"$W/fstab"
bench_state_tmpfs
SD=("$STORAGED" -q -c "$W/storaged.conf" -f "$W/fstab" --state-dir "$W/run")

# timed build of $DISK/work; sets BUILD_MS and BUILD_BYTES (the build's
# writes and those of the sync after it, which is not timed)
build() {
	local w0
	sync
	w0=$(written)
	tstart
	make -C "$DISK/work" -s -j"$JOBS" >"$W/make.out" 2>&1 || { tail -n 20 "$W/make.out"; bench_die "make failed (above)"; }
	tstop
	BUILD_MS=$ELAPSED
	sync
	BUILD_BYTES=$(($(written) - w0))
	[ -x "$DISK/work/storaged" ] || bench_die "the build made no storaged binary"
}

run_disk() {
	fresh_tree
	build
	echo "  disk run $1: build ${BUILD_MS}ms, ${BUILD_BYTES} bytes written"
	t_disk="${t_disk:-} $BUILD_MS"
	b_disk="${b_disk:-} $BUILD_BYTES"
}

run_area() {
	local w0 seed_ms sync_ms sync_bytes
	fresh_tree
	tstart
	"${SD[@]}" start >"$W/sd.out" 2>&1 || { cat "$W/sd.out"; bench_die "storaged start failed (above)"; }
	tstop
	seed_ms=$ELAPSED
	findmnt -n --mountpoint "$DISK/work" >/dev/null || bench_die "no area mounted on $DISK/work"
	build
	sync
	w0=$(written)
	tstart
	"${SD[@]}" stop >"$W/sd.out" 2>&1 || { cat "$W/sd.out"; bench_die "storaged stop failed (above)"; }
	tstop
	sync_ms=$ELAPSED
	sync
	sync_bytes=$(($(written) - w0))
	findmnt -n --mountpoint "$DISK/work" >/dev/null && bench_die "the area is still mounted after stop"
	# the sync back is complete: the build's output is on the disk
	[ -x "$DISK/work/storaged" ] || bench_die "stop did not sync the built binary back to $DISK/work"
	echo "  area run $1: seed ${seed_ms}ms, build ${BUILD_MS}ms (${BUILD_BYTES} bytes written), sync back ${sync_ms}ms (${sync_bytes} bytes written)"
	t_area="${t_area:-} $BUILD_MS"
	b_area="${b_area:-} $BUILD_BYTES"
	t_seed="${t_seed:-} $seed_ms"
	t_sync="${t_sync:-} $sync_ms"
	b_sync="${b_sync:-} $sync_bytes"
	t_whole="${t_whole:-} $((seed_ms + BUILD_MS + sync_ms))"
}

for r in $(seq 1 "$ROUNDS"); do # sides interleaved: load changes hit both
	run_disk "$r"
	run_area "$r"
done

# shellcheck disable=SC2086 # the lists are words on purpose
{
	md=$(median $t_disk) ma=$(median $t_area) mw=$(median $t_whole)
	bd=$(median $b_disk) ba=$(median $b_area)
	printf '\nmedian (min-max) of %d rounds, make -j%d, load average %s:\n' "$ROUNDS" "$JOBS" "$(cut -d' ' -f1-3 /proc/loadavg)"
	printf '  build on disk            %s ms, %s bytes written\n' "$(spread $t_disk)" "$(spread $b_disk)"
	printf '  build in the area        %s ms, %s bytes written\n' "$(spread $t_area)" "$(spread $b_area)"
	printf '  seed (storaged start)    %s ms\n' "$(spread $t_seed)"
	printf '  sync back (storaged stop) %s ms, %s bytes written\n' "$(spread $t_sync)" "$(spread $b_sync)"
	r=$(ratio "$ma" "$md")
	printf '  area build / disk build = %s (goal <= 1.0: %s)\n' "$r" "$(verdict "$r" 1.0)"
	printf '  seed + area build + sync back / disk build = %s\n' "$(ratio "$mw" "$md")"
	# written by the build: the area's at most a tenth of the disk's
	r=$(ratio "$ba" "$bd")
	printf '  bytes written by the build, area / disk = %s (goal <= 0.10: %s)\n' "$r" "$(verdict "$r" 0.10)"
}

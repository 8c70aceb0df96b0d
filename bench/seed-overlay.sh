#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Seed by copy against seed by overlay (issue 40): one tree (20 000 files of
# 3355 bytes in 200 directories, 64 MiB, plus three files of 8 MiB) in a
# directory on its own ext4 (a loop device, so that syncfs() flushes this
# benchmark's data only), covered by a `persist = yes` tmpfs area with
# storaged's automatic size (no size=, no inodes=), once with `seed = yes`
# (the tree copied into the tmpfs) and once with `seed = overlay` (the
# directory is overlayfs's lower layer, upper and work in the tmpfs).
# Each round, for each seed (interleaved, so that a change of load hits
# both):
#
#   start  `storaged start`, page cache dropped before (as at boot);
#   RAM    what the area's tmpfs holds after start (df's used), and after
#          the change below;
#   sync   1 % of the files changed in the area (a line appended to 200
#          files, other files each time), then `storaged sync`;
#   stop   `storaged stop` (unmounts, applies what is left).
#
# After the sync, the directory (through the area's private lower view)
# must hold all 200 appended lines, and again after the stop with nothing
# mounted over it: a sync that did nothing fails the benchmark.
# Median (min-max) of the rounds, in ms and KiB.
# Run as root:  STORAGED=path/to/storaged [NICE=-10] bench/seed-overlay.sh [rounds]
# (SEEDS="yes overlay" by default; "overlay-sized" adds seed = overlay with
# size= and inodes= given, which skips the measurement of the tree.)
# shellcheck source=bench/lib.sh
. "$(dirname "$0")/lib.sh"
ROUNDS=${1:-${ROUNDS:-5}}
bench_count "rounds (the argument)" "$ROUNDS"
SEEDS=${SEEDS:-yes overlay}
for s in $SEEDS; do
	case $s in
	yes | overlay | overlay-sized) ;;
	*) bench_die "SEEDS: '$s': expected yes, overlay or overlay-sized" ;;
	esac
done
NDIRS=200
NFILES=100 # per directory
FSIZE=3355 # 20 000 x 3355 bytes = 64 MiB
NBIG=3
BIGMB=8

bench_setup seed-overlay
grep -qw overlay /proc/filesystems || modprobe overlay 2>/dev/null ||
	bench_die "the kernel has no overlayfs (modprobe overlay failed)"
bench_state_tmpfs

DEV=$(bench_ext4 1G "$W/fs")
P=$W/fs/dir
bench_small_files "$P" $NDIRS $NFILES $FSIZE
for i in $(seq 1 $NBIG); do head -c $((BIGMB * 1024 * 1024)) /dev/urandom >"$P/big$i"; done
sync
echo "tree: $(find "$P" -type f | wc -l) files, $(du -sm "$P" | cut -f1) MiB on $DEV"
: >"$W/fstab"
LOWER=$W/run/areas/bench/lower

conf() { # SEED
	local seed=$1 extra=
	if [ "$seed" = overlay-sized ]; then
		seed=overlay
		extra=$'size = 256M\ninodes = 100000'
	fi
	printf '[area bench]\npath = %s\nbackend = tmpfs\nseed = %s\npersist = yes\n%s\n' \
		"$P" "$seed" "$extra" >"$W/conf"
}
sd() { "$STORAGED" -q -c "$W/conf" -f "$W/fstab" --state-dir "$W/run" "$@"; }

# area_kib: KiB used in the area's tmpfs (the only tmpfs below the state
# directory's areas/), or a failure when there is not exactly one.
area_kib() {
	local m
	m=$(findmnt -rn -t tmpfs -o TARGET | grep -F "$W/run/areas/" || true)
	[ "$(printf '%s' "$m" | grep -c .)" = 1 ] || bench_die "expected one tmpfs below $W/run/areas/, found: '$m'"
	df -k --output=used "$m" | tail -1 | tr -d ' '
}

# change N: append a line to 1 % of the files in the area (through $P),
# other files for each N; the list of files changed goes to $W/changed.
change() {
	python3 - "$P" "$1" $NDIRS $NFILES "$W/changed" <<'EOF'
import sys
top, n, nd, nf, out = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
total = nd * nf
with open(out, "w") as lst:
    for i in range(total // 100):
        k = (i * 97 + n * 7919) % total
        rel = "d%03d/f%03d" % (k // nf, k % nf)
        with open("%s/%s" % (top, rel), "ab") as o:
            o.write(b"change %d\n" % n)
        lst.write(rel + "\n")
EOF
}

# holds DIR N WHAT: every file of $W/changed under DIR ends with change N.
holds() {
	python3 - "$1" "$2" "$W/changed" <<'EOF' || bench_die "$3"
import sys
top, n, lst = sys.argv[1], int(sys.argv[2]), sys.argv[3]
want = b"change %d\n" % n
bad = [r for r in open(lst).read().split() if not open("%s/%s" % (top, r), "rb").read().endswith(want)]
if bad:
    print("%d of the changed files lack change %d, e.g. %s" % (len(bad), n, bad[0]), file=sys.stderr)
    sys.exit(1)
EOF
}

# one_round SEED N: appends to ${SEED}_start, _ram, _ram2, _sync, _stop
one_round() {
	local seed=$1 n=$2 fs
	local -n t_start=${seed//-/_}_start t_ram=${seed//-/_}_ram t_ram2=${seed//-/_}_ram2 \
		t_sync=${seed//-/_}_sync t_stop=${seed//-/_}_stop
	conf "$seed"
	drop_caches
	tstart
	sd start >"$W/out" 2>&1 || { cat "$W/out" >&2; bench_die "$seed: storaged start failed"; }
	tstop
	t_start+=("$ELAPSED")
	fs=$(findmnt -n -o FSTYPE -T "$P")
	case $seed in
	yes) [ "$fs" = tmpfs ] || bench_die "$seed: $P is on $fs, expected the area's tmpfs" ;;
	*) [ "$fs" = overlay ] || bench_die "$seed: $P is on $fs, expected the area's overlay" ;;
	esac
	t_ram+=("$(area_kib)")
	change "$n"
	t_ram2+=("$(area_kib)")
	sync
	tstart
	sd sync bench >"$W/out" 2>&1 || { cat "$W/out" >&2; bench_die "$seed: storaged sync failed"; }
	tstop
	t_sync+=("$ELAPSED")
	holds "$LOWER" "$n" "$seed round $n: the directory lacks changes after storaged sync"
	tstart
	sd stop >"$W/out" 2>&1 || { cat "$W/out" >&2; bench_die "$seed: storaged stop failed"; }
	tstop
	t_stop+=("$ELAPSED")
	fs=$(findmnt -n -o TARGET -T "$P")
	[ "$fs" = "$W/fs" ] || bench_die "$seed: after stop, $P is still below the mount on $fs"
	holds "$P" "$n" "$seed round $n: the directory lacks changes after storaged stop"
	echo "  seed = $seed, change $n: start ${t_start[-1]} ms, RAM ${t_ram[-1]} KiB" \
		"(${t_ram2[-1]} after the change), sync ${t_sync[-1]} ms, stop ${t_stop[-1]} ms"
}

for s in $SEEDS; do
	s=${s//-/_}
	declare -a "${s}_start=()" "${s}_ram=()" "${s}_ram2=()" "${s}_sync=()" "${s}_stop=()"
done
LOAD0=$(cut -d' ' -f1-3 /proc/loadavg)
n=0
for _ in $(seq 1 "$ROUNDS"); do
	for s in $SEEDS; do
		n=$((n + 1))
		one_round "$s" "$n"
	done
done
LOAD1=$(cut -d' ' -f1-3 /proc/loadavg)

printf '\n%d rounds, load average %s before, %s after; ms and KiB, median (min-max):\n\n' \
	"$ROUNDS" "$LOAD0" "$LOAD1"
echo "| seed | start ms | RAM after start KiB | RAM after 1 % changed KiB | sync of 1 % ms | stop ms |"
echo "| --- | ---: | ---: | ---: | ---: | ---: |"
for s in $SEEDS; do
	v=${s//-/_}
	declare -n a_start=${v}_start a_ram=${v}_ram a_ram2=${v}_ram2 a_sync=${v}_sync a_stop=${v}_stop
	printf '| %s | %s | %s | %s | %s | %s |\n' "$s" "$(spread "${a_start[@]}")" \
		"$(spread "${a_ram[@]}")" "$(spread "${a_ram2[@]}")" "$(spread "${a_sync[@]}")" "$(spread "${a_stop[@]}")"
	unset -n a_start a_ram a_ram2 a_sync a_stop
done

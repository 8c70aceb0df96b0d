#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Seed benchmark: the same tree (50 000 small files in 500 directories plus a
# few large ones, some sparse, some hard links) copied onto a fresh tmpfs
# three ways: storaged's seed (`storaged start` with a tmpfs area,
# persist = no: survey + mount + libarchive copy + bind), `tar cf - . | (cd
# DST && tar xf -)`, and `cp -a`.  Prints each time and storaged's ratio to
# the best of the others.  Run as root:  STORAGED=path/to/storaged bench/seed.sh [runs]
set -eu
STORAGED=${STORAGED:-$(dirname "$0")/../build/storaged}
RUNS=${1:-3}
[ "$(id -u)" = 0 ] || { echo "run as root"; exit 1; }
[ -x "$STORAGED" ] || { echo "STORAGED=$STORAGED is not executable"; exit 1; }

W=$(mktemp -d /tmp/storaged-bench.XXXXXX)
cleanup() {
	for m in $(awk -v p="$W/" 'index($5, p) == 1 { print $5 }' /proc/self/mountinfo | sort -r); do
		umount "$m" 2>/dev/null || umount -l "$m"
	done
	rm -rf "$W"
}
trap cleanup EXIT

SRC=$W/src
echo "making the tree in $SRC ..."
mkdir -p "$SRC"
for d in $(seq 1 500); do
	mkdir "$SRC/d$d"
	for f in $(seq 1 100); do
		printf 'file %d/%d\n%0*d\n' "$d" "$f" $(((d * f) % 4000)) 0 >"$SRC/d$d/f$f"
	done
done
for i in 1 2 3; do head -c $((64 * 1024 * 1024)) /dev/urandom >"$SRC/large$i"; done
truncate -s 1G "$SRC/sparse" && echo end >>"$SRC/sparse"
ln "$SRC/large1" "$SRC/d1/hardlink"
sync
echo "tree: $(find "$SRC" | wc -l) entries, $(du -sh "$SRC" | cut -f1)"

fresh_tmpfs() {
	mkdir -p "$1"
	mount -t tmpfs -o size=2G,nr_inodes=200000 bench "$1"
}

now() { date +%s%N; }
ms() { echo $((($2 - $1) / 1000000)); }

run_tar() {
	fresh_tmpfs "$W/tar"
	local t0=$(now)
	(cd "$SRC" && tar cf - .) | (cd "$W/tar" && tar xf -)
	local t1=$(now)
	umount "$W/tar"
	ms "$t0" "$t1"
}

run_cp() {
	fresh_tmpfs "$W/cp"
	local t0=$(now)
	cp -a "$SRC/." "$W/cp/"
	local t1=$(now)
	umount "$W/cp"
	ms "$t0" "$t1"
}

cat >"$W/storaged.conf" <<EOT
[area bench]
path = $SRC
backend = tmpfs
size = 2G
inodes = 200000
persist = no
EOT
chmod 0644 "$W/storaged.conf"
: >"$W/fstab"
run_storaged() {
	local sd=("$STORAGED" -q -c "$W/storaged.conf" -f "$W/fstab" --state-dir "$W/run")
	local t0=$(now)
	"${sd[@]}" start >"$W/sd.out" 2>&1 || { cat "$W/sd.out"; exit 1; }
	local t1=$(now)
	"${sd[@]}" stop >/dev/null 2>&1
	ms "$t0" "$t1"
}

best() { sort -n | head -1; }
declare -A t
for m in storaged tar cp; do
	for r in $(seq 1 "$RUNS"); do
		sync; echo 3 >/proc/sys/vm/drop_caches 2>/dev/null || true
		v=$("run_$m")
		echo "  $m run $r: ${v}ms"
		t[$m]="${t[$m]:-} $v"
	done
done
s=$(echo ${t[storaged]} | tr ' ' '\n' | best)
a=$(echo ${t[tar]} | tr ' ' '\n' | best)
c=$(echo ${t[cp]} | tr ' ' '\n' | best)
o=$((a < c ? a : c))
printf '\nbest of %d (cold cache each run):\n' "$RUNS"
printf '  storaged seed   %6d ms\n  tar | tar       %6d ms\n  cp -a           %6d ms\n' "$s" "$a" "$c"
printf '  storaged / best other = %s\n' "$(awk -v s="$s" -v o="$o" 'BEGIN { printf "%.2f", s / o }')"

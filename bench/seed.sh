#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Seed benchmark: the same tree (50 000 small files in 500 directories plus a
# few large ones, some sparse, some hard links) copied onto a fresh tmpfs
# five ways: storaged's seed (`storaged start` with a tmpfs area,
# persist = no: survey + mount + libarchive copy + bind), `tar cf - . | (cd
# DST && tar xf -)`, `cp -a`, and two parallel peers: `cp -a` of each
# top-level entry under `xargs -P 16` (as many processes as storaged-copy
# has workers) and under `xargs -P $(nproc)`.  Every copy is checked for
# completeness (number of entries, total apparent size with each link
# counted).  Prints each time and storaged's ratio to the best of the others.
# Run as root:  STORAGED=path/to/storaged [NICE=-10] bench/seed.sh [runs]
# shellcheck source=bench/lib.sh
. "$(dirname "$0")/lib.sh"
RUNS=${1:-3}
bench_count "runs (the argument)" "$RUNS"
bench_setup seed

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
# What a complete copy has: entries (the top directory included) and the
# sum of the sizes of all but directories (whose sizes differ between
# ext4 and tmpfs), every link counted (a parallel `cp -a` per top-level
# entry cannot keep the hard link across entries: it copies it twice,
# which this count accepts; a sparse file counts its size).
census() { find "$1" -printf '%y %s\n' | awk '{ n++ } $1 != "d" { b += $2 } END { print n, b }'; }
WANT=$(census "$SRC")
echo "tree: ${WANT% *} entries, ${WANT#* } bytes apparent, $(du -sh "$SRC" | cut -f1) on disk"
complete() { # DIR METHOD
	local got
	got=$(census "$1")
	[ "$got" = "$WANT" ] || bench_die "$2: incomplete copy: $got (entries bytes), expected $WANT"
}

fresh_tmpfs() {
	mkdir -p "$1"
	mount -t tmpfs -o size=2G,nr_inodes=200000 bench "$1"
}

run_tar() {
	fresh_tmpfs "$W/tar"
	tstart
	(cd "$SRC" && tar cf - .) | (cd "$W/tar" && tar xf -)
	tstop
	complete "$W/tar" tar
	umount "$W/tar"
}

run_cp() {
	fresh_tmpfs "$W/cp"
	tstart
	cp -a "$SRC/." "$W/cp/"
	tstop
	complete "$W/cp" cp
	umount "$W/cp"
}

# xargs -P N: one `cp -a` per top-level entry, N at a time, claimed in
# turn as processes finish (as storaged-copy's workers claim entries).
run_cpP() { # N
	local dst=$W/cp$1
	fresh_tmpfs "$dst"
	tstart
	(cd "$SRC" && find . -mindepth 1 -maxdepth 1 -print0 | xargs -0 -r -P "$1" -n 1 cp -a -t "$dst/")
	tstop
	complete "$dst" "cp -a | xargs -P $1"
	umount "$dst"
}
run_cpP16() { run_cpP 16; }
NPROC=$(nproc)
run_cpPn() { run_cpP "$NPROC"; }

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
	tstart
	"${sd[@]}" start >"$W/sd.out" 2>&1 || { cat "$W/sd.out"; exit 1; }
	tstop
	complete "$SRC" storaged # the area's tmpfs, bound over $SRC
	"${sd[@]}" stop >/dev/null 2>&1
}

best() { printf '%s\n' "$@" | sort -n | head -1; }
declare -A t
METHODS="storaged tar cp cpP16 cpPn"
for r in $(seq 1 "$RUNS"); do # methods interleaved: load changes hit all
	for m in $METHODS; do
		drop_caches
		"run_$m"
		echo "  $m run $r: ${ELAPSED}ms"
		t[$m]="${t[$m]:-} $ELAPSED"
	done
done
declare -A b
for m in $METHODS; do b[$m]=$(best ${t[$m]}); done
o=$(best "${b[tar]}" "${b[cp]}" "${b[cpP16]}" "${b[cpPn]}")
p=$(best "${b[cpP16]}" "${b[cpPn]}")
printf '\nbest of %d (cold cache each run), load average %s:\n' "$RUNS" "$(cut -d' ' -f1-3 /proc/loadavg)"
printf '  storaged seed          %6d ms\n' "${b[storaged]}"
printf '  tar | tar              %6d ms\n' "${b[tar]}"
printf '  cp -a                  %6d ms\n' "${b[cp]}"
printf '  cp -a, xargs -P 16     %6d ms\n' "${b[cpP16]}"
printf '  cp -a, xargs -P %-2d     %6d ms\n' "$NPROC" "${b[cpPn]}"
r=$(ratio "${b[storaged]}" "$o")
printf '  storaged / best other = %s (goal <= 1.0: %s)\n' "$r" "$(verdict "$r" 1.0)"
printf '  storaged / best parallel cp = %s\n' "$(ratio "${b[storaged]}" "$p")"

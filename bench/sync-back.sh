#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Sync-back benchmark (issue 15): a persist tmpfs area of 20 000 files in
# 200 directories, 64 MiB in all, over a directory on its own ext4 (a
# loop device, so that syncfs() flushes this benchmark's data only).
#
#  incremental: 1% of the files changed in the area each round (160
#    rewritten, 20 deleted, 20 new), then `storaged sync` against
#    `rsync -a --delete AREA/ COPY/` of the same change into a copy of the
#    directory on the same filesystem (the copy is kept equal to the
#    directory: both start each round from the same state);
#  full: the directory (through the area's private lower view) and the
#    copy emptied, then `storaged sync` against `rsync -a AREA/ COPY/`.
#
# rsync does not fsync; storaged's sync is durable when it returns (two
# syncfs(), copy_sync.c): "rsync+syncfs" (rsync, then `sync -f`) is shown
# beside it for what durability costs.  Median of ROUNDS (5), with the
# spread (min-max).  Run as root:  bench/sync-back.sh
. "$(dirname "$0")/lib.sh"
ROUNDS=${ROUNDS:-5}
NDIRS=200
NFILES=100 # per directory
FSIZE=3355 # 20 000 x 3355 bytes = 64 MiB

command -v rsync >/dev/null || bench_die "rsync is missing (apt-get install rsync)"
bench_setup sync-back
bench_state_tmpfs

DEV=$(bench_ext4 1G "$W/fs")
P=$W/fs/dir
COPY=$W/fs/copy
bench_small_files "$P" $NDIRS $NFILES $FSIZE
cp -a "$P" "$COPY"
sync
echo "tree: $(find "$P" -type f | wc -l) files, $(du -sm "$P" | cut -f1) MiB on $DEV"

cat >"$W/conf" <<EOT
[area bench]
path = $P
backend = tmpfs
size = 512M
inodes = 100000
persist = yes
EOT
: >"$W/fstab"
sd() { "$STORAGED" -c "$W/conf" -f "$W/fstab" --state-dir "$W/run" "$@"; }
sd start >/dev/null || bench_die "storaged start failed"
LOWER=$W/run/areas/bench/lower

# change ROUND: 1% of the files, different ones each round
change() {
	python3 - "$P" "$1" $NDIRS $NFILES $FSIZE <<'EOF'
import os, sys
top, rnd, nd, nf, size = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
n = nd * nf // 100
for i in range(n):
    k = (i * 97 + rnd * 7919) % (nd * nf)
    p = "%s/d%03d/f%03d" % (top, k // nf, k % nf)
    if i < n * 8 // 10:
        if os.path.exists(p):
            with open(p, "r+b") as o:
                o.write(b"round %d " % rnd)
    elif i < n * 9 // 10:
        if os.path.exists(p):
            os.unlink(p)
    else:
        with open("%s/d%03d/new%d_%d" % (top, k // nf, rnd, i), "wb") as o:
            o.write(b"n" * size)
EOF
}

same() { diff -r --no-dereference "$1" "$2" >/dev/null; }

# one_round NAME RSYNC-OPTION...: times storaged's sync, then rsync and its
# syncfs; appends to NAME_sd, NAME_rs, NAME_rss
one_round() {
	local name=$1
	local -n t_sd=${1}_sd t_rs=${1}_rs t_rss=${1}_rss
	shift
	tstart
	sd sync bench >/dev/null || bench_die "storaged sync failed"
	tstop
	t_sd+=("$ELAPSED")
	tstart
	rsync "$@" "$P/" "$COPY/"
	tstop
	t_rs+=("$ELAPSED")
	tstart
	sync -f "$COPY"
	tstop
	t_rss+=("$((ELAPSED + ${t_rs[-1]}))")
	same "$P" "$LOWER" || bench_die "$name round: the directory differs from the area after the sync"
	same "$P" "$COPY" || bench_die "$name round: rsync's copy differs from the area"
}

inc_sd=() inc_rs=() inc_rss=()
for r in $(seq 1 "$ROUNDS"); do
	change "$r"
	sync
	one_round inc -a --delete
done

full_sd=() full_rs=() full_rss=()
for r in $(seq 1 "$ROUNDS"); do
	find "$LOWER" -mindepth 1 -delete
	find "$COPY" -mindepth 1 -delete
	sync
	one_round full -a
done
sd stop >/dev/null || bench_die "storaged stop failed"

spread() { printf '%s\n' "$@" | sort -n | sed -n '1p;$p' | paste -sd-; }
row() { # NAME GOAL PEER-ARRAY-NAME...
	local name=$1 goal=$2 m1 m2 m3
	local -n a=$3 b=$4 c=$5
	m1=$(median "${a[@]}")
	m2=$(median "${b[@]}")
	m3=$(median "${c[@]}")
	printf '| %s | %s (%s) | %s (%s) | %s (%s) | %s | **%s %s** |\n' "$name" \
		"$m1" "$(spread "${a[@]}")" "$m2" "$(spread "${b[@]}")" "$m3" "$(spread "${c[@]}")" \
		"$(ratio "$m1" "$m3")" "$(ratio "$m1" "$m2")" "$(verdict "$(ratio "$m1" "$m2")" "$goal")"
}
echo
echo "| sync | storaged ms (min-max) | rsync ms | rsync+syncfs ms | storaged / rsync+syncfs | storaged / rsync |"
echo "| --- | ---: | ---: | ---: | ---: | ---: |"
row "1% changed (goal <= 0.4)" 0.4 inc_sd inc_rs inc_rss
row "full (goal <= 1.0)" 1.0 full_sd full_rs full_rss

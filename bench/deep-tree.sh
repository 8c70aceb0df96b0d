#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# A persist tmpfs area holding one chain of directories DEPTHS deep (2000
# and 16000 by default) and a file at the bottom: `storaged start` (survey
# and seed), `storaged sync` after the bottom file changed, `storaged stop`
# after it changed again.  Each takes time and memory linear in the
# entries, whatever the depth; before the walk held a bounded stack of
# descriptors, depth 2000 took minutes and 16000 never ended.  Prints, per
# depth and step, the median and spread (min-max) of ROUNDS (3) runs in
# ms (wall clock and CPU), and the largest RSS of storaged and its copy helper (/usr/bin/time:
# the children's getrusage) in KiB.  Run as root:  bench/deep-tree.sh
. "$(dirname "$0")/lib.sh"
ROUNDS=${ROUNDS:-3}
DEPTHS=${DEPTHS:-2000 16000}
bench_count ROUNDS "$ROUNDS"
for d in $DEPTHS; do bench_count DEPTHS "$d"; done
command -v python3 >/dev/null || bench_die "python3 is missing (it makes the deep tree)"
[ -x /usr/bin/time ] || bench_die "/usr/bin/time is missing (apt-get install time)"
bench_setup deep-tree
bench_state_tmpfs
: >"$W/fstab"

# deep OP DIR DEPTH TEXT: make the chain, or rewrite its bottom file
deep() {
	python3 - "$@" <<'EOF'
import os, sys
op, top, depth, text = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
fd = os.open(top, os.O_RDONLY | os.O_DIRECTORY)
for i in range(depth):
    if op == "make":
        os.mkdir("d", dir_fd=fd)
    nfd = os.open("d", os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=fd)
    os.close(fd)
    fd = nfd
f = os.open("bottom", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644, dir_fd=fd)
os.write(f, text.encode())
EOF
}

# timed STEP ARGS: runs storaged, appends to $W/STEP the ms it took, the
# CPU ms (user and system, storaged and its helper: steadier than the
# wall clock on a busy machine) and the max RSS (KiB)
timed() {
	local step=$1
	shift
	tstart
	/usr/bin/time -f '%U %S %M' -o "$W/rss" "$STORAGED" -c "$W/conf" -f "$W/fstab" --state-dir "$W/run" "$@" \
		>"$W/out" 2>&1 || { cat "$W/out"; bench_die "storaged $* failed"; }
	tstop
	tail -1 "$W/rss" | awk -v e="$ELAPSED" '{ printf "%d %d %d\n", e, ($1 + $2) * 1000, $3 }' >>"$W/$step"
}

for depth in $DEPTHS; do
	for step in start sync stop; do : >"$W/$step"; done
	for round in $(seq 1 "$ROUNDS"); do
		P=$W/dir-$depth-$round
		mkdir -p "$P"
		deep make "$P" "$depth" first
		cat >"$W/conf" <<EOT
[area deep]
path = $P
backend = tmpfs
size = 256M
persist = yes
EOT
		timed start start
		deep write "$P" "$depth" second
		timed sync sync deep
		deep write "$P" "$depth" third
		timed stop stop
		rm -rf "$P"
	done
	for step in start sync stop; do
		# shellcheck disable=SC2046 # the numbers, one argument each
		echo "depth $depth, $step: $(spread $(cut -d' ' -f1 "$W/$step")) ms, CPU $(spread $(cut -d' ' -f2 "$W/$step")) ms, max RSS $(spread $(cut -d' ' -f3 "$W/$step")) KiB"
	done
done

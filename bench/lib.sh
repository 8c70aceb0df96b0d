# shellcheck shell=bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Shared helpers for the benchmarks in bench/.  A script sources this file and
# calls `bench_setup NAME`; it then has its own scratch directory $W (below
# /tmp), and the EXIT trap undoes everything the script made, even when it
# fails or is interrupted: every mount below $W (deepest first), the btrfs
# registrations and loop devices IT attached (listed in $W/loops), extra
# files it registered with `bench_own_file` (e.g. a /sbin/mount.TYPE helper),
# then $W itself.  Nothing else is touched: no /etc/fstab, no host mount, no
# other loop device.

set -eu

STORAGED=${STORAGED:-$(cd "$(dirname "$0")/.." && pwd)/build/storaged}
W=

bench_die() {
	# also before bench_setup (argument checks): named after the script
	echo "${BENCH_NAME:-$(basename "$0" .sh)}: $*" >&2
	exit 1
}

# bench_count NAME VALUE [MIN]: VALUE (of the variable NAME) must be a whole
# number of at least MIN (default 1), else a message naming it, exit 1.
# Checked before bench_setup, so that a typo costs no images.
bench_count() {
	case $2 in
	'' | *[!0-9]*) bench_die "$1='$2': expected a whole number >= ${3:-1}" ;;
	esac
	[ "$2" -ge "${3:-1}" ] || bench_die "$1='$2': expected a whole number >= ${3:-1}"
}

bench_cleanup() {
	local rc=$? m d f
	set +e
	trap - EXIT INT TERM
	echo "$BENCH_NAME: load average at the end $(cut -d' ' -f1-3 /proc/loadavg)"
	if [ -n "$W" ] && [ -f "$W/pids" ]; then
		# processes this script started and left running: only when the
		# PID still runs a command line naming our scratch directory
		for sig in TERM KILL; do
			while read -r d; do
				tr '\0' ' ' <"/proc/$d/cmdline" 2>/dev/null | grep -qF "$W/" && kill -"$sig" "$d" 2>/dev/null
			done <"$W/pids"
			sleep 0.5
		done
	fi
	if [ -n "$W" ] && [ -d "$W" ]; then
		# deepest first; lazy only as a last resort
		for _ in 1 2 3; do
			awk -v p="$W/" 'index($5, p) == 1 || $5 == substr(p, 1, length(p) - 1) { print $5 }' \
				/proc/self/mountinfo | sort -r | while read -r m; do
				m=$(printf '%b' "$m")
				umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null
			done
		done
		if [ -f "$W/loops" ]; then
			while read -r d; do
				btrfs device scan --forget "$d" >/dev/null 2>&1
				losetup -d "$d" 2>/dev/null
			done <"$W/loops"
		fi
		# nodes that came into being while we ran, now free: removed
		# (LOOP_CTL_REMOVE, linux/loop.h; fails harmlessly on a busy one)
		if [ -f "$W/loop-nodes" ]; then
			bench_loop_nodes | grep -vxF -f "$W/loop-nodes" | sed 's/^loop//' |
				perl -e 'open(my $c, "+<", "/dev/loop-control") or exit; while (<STDIN>) { ioctl($c, 0x4C81, int($_)) }'
		fi
		if [ -f "$W/own-files" ]; then
			while read -r f; do rm -f "$f"; done <"$W/own-files"
		fi
		rm -rf "$W"
	fi
	exit "$rc"
}

# bench_setup NAME: root check, scratch directory, trap.
bench_setup() {
	BENCH_NAME=$1
	[ "$(id -u)" = 0 ] || bench_die "run as root (loop devices, mount)"
	[ -x "$STORAGED" ] || bench_die "STORAGED=$STORAGED is not executable (build first, or set STORAGED=)"
	[[ ${NICE:-0} =~ ^-?[0-9]+$ ]] || bench_die "NICE='$NICE': expected a niceness, e.g. -10"
	# the trap before anything that can fail, so that $W never outlives us
	trap bench_cleanup EXIT
	trap 'exit 130' INT TERM
	W=$(mktemp -d "/tmp/storaged-bench-$BENCH_NAME.XXXXXX")
	bench_loop_nodes >"$W/loop-nodes"
	# NICE=-10: run this script and what it times at a higher priority, for
	# steadier figures on a machine that is busy with other work (both
	# sides of every comparison get the same priority).
	if [ -n "${NICE:-}" ]; then renice -n "$NICE" -p $$ >/dev/null; fi
	echo "$BENCH_NAME: $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) CPUs, $(uname -r), load average $(cut -d' ' -f1-3 /proc/loadavg)${NICE:+, nice $NICE}; storaged: $STORAGED"
	: >"$W/loops"
	: >"$W/own-files"
}

# bench_loop IMAGE: attach IMAGE, record the device for cleanup, print it.
# (`losetup -f` creates /dev/loopN beyond loop7 on demand; a node made so is
# recorded too and removed at exit: a thousand idle nodes left behind slow
# every later scan of the machine's block devices.)
bench_loop() {
	local d
	d=$(losetup -f --show "$1") || bench_die "losetup -f $1 failed"
	echo "$d" >>"$W/loops"
	echo "$d"
}

# bench_loop_nodes: the loop device nodes of the machine, one a line.
bench_loop_nodes() { ls /sys/block | grep '^loop[0-9]' || true; }

# bench_unloop DEV...: forget and detach devices this script attached.
bench_unloop() {
	local d
	for d in "$@"; do
		btrfs device scan --forget "$d" >/dev/null 2>&1 || true
		losetup -d "$d"
		grep -vxF "$d" "$W/loops" >"$W/loops.new" || true
		mv "$W/loops.new" "$W/loops"
	done
}

# bench_own_pid PID: a process of ours to end on exit.
bench_own_pid() {
	echo "$1" >>"$W/pids"
}

# bench_own_file PATH: remove PATH on exit.
bench_own_file() {
	echo "$1" >>"$W/own-files"
}

# bench_ext4 SIZE DIR: an ext4 of SIZE (truncate's units) on a loop
# device of our own, mounted on DIR, so that syncfs() there flushes this
# benchmark's data only; prints the device.
bench_ext4() {
	local img=$W/ext4.$RANDOM.img d
	truncate -s "$1" "$img"
	mkfs.ext4 -q -F "$img"
	d=$(bench_loop "$img")
	mkdir -p "$2"
	mount "$d" "$2"
	echo "$d"
}

# bench_small_files DIR NDIRS NFILES SIZE: NDIRS directories d000, d001...
# in DIR (made), each of NFILES files f000, f001... of SIZE bytes, their
# contents told apart by their names.
bench_small_files() {
	python3 - "$@" <<'EOF'
import os, sys
top, nd, nf, size = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
for d in range(nd):
    os.makedirs("%s/d%03d" % (top, d))
    for f in range(nf):
        with open("%s/d%03d/f%03d" % (top, d, f), "wb") as o:
            o.write((b"%d/%d " % (d, f)) * (size // 8) + b"\n" * (size - (size // 8) * len(b"%d/%d " % (d, f))))
EOF
}

# The state directory lives on a tmpfs, as /run/storaged does at boot.
bench_state_tmpfs() {
	mkdir -p "$W/run"
	mount -t tmpfs -o size=16M,mode=0755 bench-state "$W/run"
}

# bash's $EPOCHREALTIME: no fork, so the clock costs nothing (a `date`
# process costs several ms on a small VM).
# Use as `tstart; CMD; tstop` then $ELAPSED (ms); no subshell either.
tstart() { T0=${EPOCHREALTIME/[.,]/}; }
# shellcheck disable=SC2034 # ELAPSED is read by the scripts
tstop() {
	local t=${EPOCHREALTIME/[.,]/}
	ELAPSED=$(((t - T0) / 1000))
}

# median of the numbers given as arguments
median() {
	printf '%s\n' "$@" | sort -n | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else print int((v[NR / 2] + v[NR / 2 + 1]) / 2) }'
}

# ratio A B -> "A/B" with two decimals
ratio() {
	awk -v a="$1" -v b="$2" 'BEGIN { if (b == 0) print "inf"; else printf "%.2f", a / b }'
}

# verdict RATIO GOAL -> PASS when RATIO <= GOAL
verdict() {
	awk -v r="$1" -v g="$2" 'BEGIN { print (r != "inf" && r + 0 <= g + 0) ? "PASS" : "MISS" }'
}

# check_nesting FILE: FILE has lines "TARGET PARENT" (PARENT "/" for "any");
# every TARGET must be mounted once, and its mount's parent in
# /proc/self/mountinfo must be the mount on PARENT.  Prints what is wrong.
check_nesting() {
	python3 - "$1" <<'EOF'
import sys
def unescape(s):
    return s.encode().decode("unicode_escape")
by_id, top = {}, {}
for line in open("/proc/self/mountinfo"):
    f = line.split()
    by_id[f[0]] = (f[1], unescape(f[4]))
for mid, (parent, target) in by_id.items():
    top.setdefault(target, []).append(by_id.get(parent, (None, "/"))[1])
bad = 0
for line in open(sys.argv[1]):
    target, parent = line.split()
    if target not in top:
        print("not mounted:", target); bad += 1
    elif len(top[target]) > 1:
        print("%s: mounted %d times (on %s)" % (target, len(top[target]), ", ".join(top[target]))); bad += 1
    elif parent != "/" and top[target][0] != parent:
        print("%s: its parent mount is %s, expected %s" % (target, top[target][0], parent)); bad += 1
sys.exit(1 if bad else 0)
EOF
}

# unmount_below DIR: every mount below DIR (not DIR itself), deepest first,
# repeated so that mounts hidden below others are found too.
unmount_below() {
	local m k
	for k in 1 2 3 4 5 6; do
		awk -v p="$1/" 'index($5, p) == 1 { print $5 }' /proc/self/mountinfo | grep -q . || return 0
		awk -v p="$1/" 'index($5, p) == 1 { print $5 }' /proc/self/mountinfo | sort -r | while read -r m; do
			m=$(printf '%b' "$m")
			if [ "$k" -lt 4 ]; then umount "$m" 2>/dev/null || true; else umount -l "$m" 2>/dev/null || true; fi
		done
	done
	return 0
}

drop_caches() {
	sync
	echo 3 >/proc/sys/vm/drop_caches
}

# spread A B C... -> "MEDIAN (MIN-MAX)" of the numbers given
spread() {
	printf '%s\n' "$@" | sort -n | awk '{ v[NR] = $1 } END {
		m = NR % 2 ? v[(NR + 1) / 2] : int((v[NR / 2] + v[NR / 2 + 1]) / 2)
		printf "%d (%d-%d)", m, v[1], v[NR] }'
}

#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Memory benchmark (issue 6, benchmark 4).  The demo's setup in a scratch
# directory: a btrfs RAID1 over two loop devices (forgotten by the kernel,
# as at boot), mounted by storaged, with a bind of a directory on it and a
# tmpfs below it (entries listed children first).
#
#   1. peak RSS of `storaged start` (GNU time -v, "Maximum resident set
#      size"; the mount children are forks of storaged, their peak is
#      included), then `storaged stop`; `storaged --version` for scale;
#   2. the resident process: `storaged --foreground start`, then EVENTS
#      loop attach/detach cycles (each one an add + change + remove of a
#      block device; one full pass per event after the 250 ms settle time;
#      the images cycle through empty, ext4 and a one-device btrfs), one
#      every PAUSE seconds; VmRSS/VmHWM from /proc/PID/status after the
#      first pass and after the events.
#
# Goal: under 4 MiB resident (VmRSS of the resident process after the
# events; the peak of `storaged start` is reported against the same bound).
#
#   STORAGED=path/to/storaged EVENTS=150 PAUSE=0.35 bench/memory.sh
. "$(dirname "$0")/lib.sh"
EVENTS=${EVENTS:-150}
PAUSE=${PAUSE:-0.35}
GOAL_KIB=4096
[ -x /usr/bin/time ] || { echo "needs GNU time (Debian package 'time')" >&2; exit 1; }
bench_setup memory
bench_state_tmpfs

echo "making the demo's RAID1 in $W ..."
truncate -s 512M "$W/a.img" "$W/b.img"
A=$(bench_loop "$W/a.img")
B=$(bench_loop "$W/b.img")
mkfs.btrfs -q -f -K -L benchmem -d raid1 -m raid1 "$A" "$B" >/dev/null
FSID=$(blkid -p -o value -s UUID "$A")
mkdir -p "$W/mnt" "$W/srv/data" "$W/srv/build"
mount "$A" "$W/mnt"
mkdir "$W/mnt/build"
echo "built on the RAID1" >"$W/mnt/build/README"
umount "$W/mnt"
btrfs device scan --forget "$A" "$B"
cat >"$W/fstab" <<EOT
tmpfs              $W/srv/data/tmp  tmpfs  size=64M,nr_inodes=10k,noauto,x-storaged,X-mount.mkdir  0 0
$W/srv/data/build  $W/srv/build     none   bind,noauto,x-storaged                               0 0
UUID=$FSID  $W/srv/data  btrfs  noatime,noauto,x-storaged  0 0
EOT
printf '[storaged]\ndevice-timeout = 10s\n' >"$W/storaged.conf"
chmod 0644 "$W/storaged.conf"
SD=("$STORAGED" -c "$W/storaged.conf" -f "$W/fstab" --state-dir "$W/run")
mounted() { findmnt -n "$W/srv/data" >/dev/null && findmnt -n "$W/srv/data/tmp" >/dev/null && findmnt -n "$W/srv/build" >/dev/null; }
maxrss() { sed -n 's/.*Maximum resident set size (kbytes): //p' "$1"; }

# 1. one-shot start
/usr/bin/time -v -o "$W/time.version" "$STORAGED" --version >/dev/null
/usr/bin/time -v -o "$W/time.start" "${SD[@]}" start >"$W/out.start" 2>&1 ||
	{ cat "$W/out.start" >&2; bench_die "storaged start failed"; }
mounted || bench_die "storaged start did not mount the demo entries"
/usr/bin/time -v -o "$W/time.stop" "${SD[@]}" stop >"$W/out.stop" 2>&1 ||
	{ cat "$W/out.stop" >&2; bench_die "storaged stop failed"; }
btrfs device scan --forget "$A" "$B"
RSS_VERSION=$(maxrss "$W/time.version")
RSS_START=$(maxrss "$W/time.start")
RSS_STOP=$(maxrss "$W/time.stop")

# 2. resident
truncate -s 128M "$W/ev0.img" "$W/ev1.img" "$W/ev2.img"
mkfs.ext4 -q -F -E nodiscard "$W/ev1.img"
mkfs.btrfs -q -f -K "$W/ev2.img" >/dev/null
"${SD[@]}" --foreground start >"$W/out.resident" 2>&1 &
PID=$!
bench_own_pid "$PID"
for _ in $(seq 1 100); do
	grep -q 'resident:' "$W/out.resident" && mounted && break
	sleep 0.1
done
grep -q 'resident:' "$W/out.resident" && mounted || { cat "$W/out.resident" >&2; bench_die "resident storaged did not come up"; }
sleep 0.5
status() { awk -v k="$1:" '$1 == k { print $2 }' "/proc/$PID/status"; }
RSS0=$(status VmRSS) HWM0=$(status VmHWM)
echo "resident storaged (pid $PID) up: VmRSS $RSS0 KiB, VmHWM $HWM0 KiB; $EVENTS attach/detach cycles, one every ${PAUSE}s ..."
declare -a SAMPLES
for ((e = 0; e < EVENTS; e++)); do
	d=$(bench_loop "$W/ev$((e % 3)).img")
	sleep "$PAUSE"
	bench_unloop "$d"
	sleep "$PAUSE"
	[ $((e % 50)) = 49 ] && SAMPLES+=("$((e + 1)):$(status VmRSS)")
	kill -0 "$PID" 2>/dev/null || { cat "$W/out.resident" >&2; bench_die "resident storaged died"; }
done
sleep 1
RSS1=$(status VmRSS) HWM1=$(status VmHWM)
mounted || bench_die "the demo entries are no longer mounted"
# where the resident memory is: totals, and the mappings with the most Rss
awk '/^(Rss|Pss|Pss_Anon|Pss_File|Shared_Clean|Private_Clean|Private_Dirty|Anonymous):/ { printf "%s %s KiB  ", $1, $2 } END { print "" }' \
	"/proc/$PID/smaps_rollup" >"$W/rollup"
# the libraries that only libarchive (the seed copy) brings in
ARCH=$(ldd "$STORAGED" | awk '/libarchive/ { print $3 }')
if [ -n "$ARCH" ]; then
	ldd "$ARCH" | awk '{ print $1 }' | sort -u >"$W/libs.arch"
	# direct dependencies (DT_NEEDED) other than libarchive, with theirs
	for n in $(readelf -d "$STORAGED" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | grep -v libarchive); do
		echo "$n"
		l=$(ldd "$STORAGED" | awk -v n="$n" '$1 == n { print $3 }')
		[ -n "$l" ] && ldd "$l" | awk '{ print $1 }'
	done | sort -u >"$W/libs.other"
	ONLY_ARCH="${ARCH##*/} $(comm -23 "$W/libs.arch" "$W/libs.other" | tr '\n' ' ')"
fi
python3 - "/proc/$PID/smaps" ${ONLY_ARCH:-} >"$W/bymap" <<'EOF'
import sys, collections
rss, anon, name = collections.Counter(), collections.Counter(), None
for line in open(sys.argv[1]):
    f = line.split()
    if "-" in f[0] and len(f) >= 5 and not f[0].endswith(":"):
        name = f[5] if len(f) > 5 else "[anon]"
        name = name.rsplit("/", 1)[-1]
    elif f[0] == "Rss:":
        rss[name] += int(f[1])
    elif f[0] == "Anonymous:":
        anon[name] += int(f[1])
for n, v in rss.most_common(12):
    print("    %-28s Rss %5d KiB (anonymous %d)" % (n, v, anon[n]))
only = [a.split(".so")[0] for a in sys.argv[2:]]
if only:
    tot = sum(v for n, v in rss.items() if n.split(".so")[0] in only)
    print("  libarchive and the %d libraries only it pulls in: Rss %d KiB (%s)" % (len(only) - 1, tot, " ".join(sorted(only))))
EOF
kill -TERM "$PID"
wait "$PID" || true
: >"$W/pids"
"${SD[@]}" stop >/dev/null 2>&1 || true

echo
echo "storaged --version           peak RSS $RSS_VERSION KiB (libraries alone)"
echo "storaged start (demo)        peak RSS $RSS_START KiB"
echo "storaged stop                peak RSS $RSS_STOP KiB"
echo "resident, after first pass   VmRSS $RSS0 KiB  VmHWM $HWM0 KiB"
echo "resident, after $EVENTS cycles   VmRSS $RSS1 KiB  VmHWM $HWM1 KiB  (samples every 50 cycles: ${SAMPLES[*]})"
echo "resident growth              $((RSS1 - RSS0)) KiB over $EVENTS attach/detach cycles"
echo "resident after the events:   $(cat "$W/rollup")"
echo "  largest mappings (Rss):"
cat "$W/bymap"
for what in "storaged start peak:$RSS_START" "resident VmRSS:$RSS1" "resident VmHWM:$HWM1"; do
	v=${what##*:}
	printf 'goal < %d KiB: %-22s %6d KiB = %s of the goal -> %s\n' "$GOAL_KIB" "${what%:*}" "$v" \
		"$(ratio "$v" "$GOAL_KIB")" "$([ "$v" -lt "$GOAL_KIB" ] && echo PASS || echo MISS)"
done

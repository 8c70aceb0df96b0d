#!/bin/bash
# A mount helper that hangs (a dead NFS server, a helper that never
# returns) is killed at the entry's deadline together with everything it
# started, so that it cannot mount behind storaged's back after the entry
# was reported failed; the other entries go on.  The helper is placed in a
# private mount namespace (an overlay on the helper directory), so the
# host's /sbin is never touched and every mount made here vanishes with it.
. "$(dirname "$0")/lib.sh"
setup
need_private_helpers
mkdir -p "$SCRATCH/m"
PIDS=$SCRATCH/helper.pids
# when the helper's child would mount: 3 s past the deadline (1 s), which
# storaged meets late on a loaded machine (the ASan pass beside the guest:
# at 1 s past it, the child once mounted first)
LATE=4
cat >"$SCRATCH/upper/mount.hangtest" <<EOT
#!/bin/sh
# mount.hangtest SPEC DIR: records its pid and its children's, hangs, then
# mounts; a child in a session of its own (as a FUSE daemon or mount.nfs
# retrying in the background) would mount $LATE s later, past the deadline.
setsid sh -c 'sleep $LATE; mount -t tmpfs -o size=1M late "\$0"' "\$2" </dev/null >/dev/null 2>&1 &
echo "\$!" >>"$PIDS"
sleep 30 &
echo "\$\$ \$!" >>"$PIDS"
wait
mount -t tmpfs -o size=1M hangtest "\$2"
EOT
chmod 0755 "$SCRATCH/upper/mount.hangtest"
cat >"$FSTAB" <<EOT
hang   $SCRATCH/m/hung        hangtest  noauto,x-storaged,X-mount.mkdir,x-storaged.mount-timeout=1s  0 0
tmpfs  $SCRATCH/m/hung/below  tmpfs     noauto,x-storaged,X-mount.mkdir  0 0
tmpfs  $SCRATCH/m/other       tmpfs     noauto,x-storaged,X-mount.mkdir,size=1M  0 0
EOT

# In the namespace: start, then look for the helper's processes and its mount.
in_helper_ns '
	"$3" -c "$4" -f "$5" --state-dir "$6" start
	echo "exit $?"
	# past the time the child would mount ($7 s after the helper began,
	# the deadline 1 s after)
	sleep "$7"
	# a killed process whose parent is gone may stay a zombie (state Z)
	# where PID 1 does not reap: that one is dead
	for pid in $(cat "$2/helper.pids" 2>/dev/null); do
		st=$(sed "s/.*) //" "/proc/$pid/stat" 2>/dev/null | cut -d" " -f1)
		[ -n "$st" ] && [ "$st" != Z ] && echo "alive $pid ($st)"
	done
	mountpoint -q "$2/m/hung" && echo "hung mounted"
	mountpoint -q "$2/m/other" && echo "other mounted"
	umount "$2/m/other" 2>/dev/null
	exit 0
' "$SBIN" "$SCRATCH" "$STORAGED" "$CONF" "$FSTAB" "$STATE" "$LATE" >"$SCRATCH/out" 2>&1
sed 's/^/  | /' "$SCRATCH/out"
grep -q "^exit 1$" "$SCRATCH/out" || fail "start did not exit 1 for the hung entry"
grep -q "did not finish within 1s" "$SCRATCH/out" || fail "no deadline message"
[ -s "$PIDS" ] || fail "the helper never ran"
grep -q "^alive " "$SCRATCH/out" && fail "the hung helper or its child survived the deadline"
grep -q "^hung mounted$" "$SCRATCH/out" && fail "the hung entry got mounted"
grep -q "^other mounted$" "$SCRATCH/out" || fail "the independent entry was not mounted"
grep "$SCRATCH/m/hung/below" "$SCRATCH/out" | grep -q "not done" || fail "the entry below the hung one was not skipped"

note "storaged killed (kill -9) while the helper hangs: worker and helper die with it, and stop leaves alone what someone else mounts there later"
: >"$PIDS"
rm -rf "${STATE:?}"/*
sed -i 's/mount-timeout=1s/mount-timeout=60s/' "$FSTAB"
in_helper_ns '
	"$3" -c "$4" -f "$5" --state-dir "$6" start &
	sd=$!
	for _ in $(seq 1 50); do [ -s "$2/helper.pids" ] && break; sleep 0.1; done
	kill -9 "$sd"
	wait "$sd" 2>/dev/null
	# they die at once; a survivor is still there 5 s later
	for _ in $(seq 1 50); do
		alive=
		for pid in $(cat "$2/helper.pids" 2>/dev/null); do
			st=$(sed "s/.*) //" "/proc/$pid/stat" 2>/dev/null | cut -d" " -f1)
			[ -n "$st" ] && [ "$st" != Z ] && alive="$alive$pid ($st) "
		done
		[ -z "$alive" ] && break
		sleep 0.1
	done
	[ -n "$alive" ] && echo "alive $alive"
	mount -t tmpfs -o size=1M someone-else "$2/m/hung"
	"$3" -c "$4" -f "$5" --state-dir "$6" stop
	mountpoint -q "$2/m/hung" && echo "foreign mount kept"
	umount "$2/m/hung" "$2/m/other" 2>/dev/null
	exit 0
' "$SBIN" "$SCRATCH" "$STORAGED" "$CONF" "$FSTAB" "$STATE" >"$SCRATCH/out2" 2>&1
sed 's/^/  | /' "$SCRATCH/out2"
[ -s "$PIDS" ] || fail "the helper never ran in the second start"
grep -q "^alive " "$SCRATCH/out2" && fail "the worker's helper outlived a storaged killed by kill -9"
grep -q "^foreign mount kept$" "$SCRATCH/out2" || fail "stop unmounted what someone else mounted where storaged was killed mid-mount"
exit 0

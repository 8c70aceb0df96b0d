#!/bin/bash
# The SysV script's verbs against a test config, fstab and state directory
# (STORAGED_DEFAULTS points the script at them), with a tmpfs entry and a
# two-disk btrfs RAID1 on loop devices whose members the kernel forgot:
# LSB exit codes, idempotent start and stop, dryrun changing nothing, and
# the same without /lib/lsb/init-functions.
. "$(dirname "$0")/../integration/lib.sh"
. "$(dirname "$0")/lib.sh"
SCRATCH=
setup
command -v mkfs.btrfs >/dev/null || skip "mkfs.btrfs missing (btrfs-progs)"

INIT=$SCRATCH/init.d/storaged
mkdir -p "$SCRATCH/init.d"
initscript "$INIT"

mkraid1 bootunits 300M
mkdir -p "$SCRATCH/data" "$SCRATCH/tmp"
cat >"$FSTAB" <<EOT
UUID=$FSID  $SCRATCH/data  btrfs  noatime,noauto,x-storaged  0 0
tmpfs  $SCRATCH/data/tmp  tmpfs  size=8M,nr_inodes=1k,noauto,x-storaged,X-mount.mkdir  0 0
tmpfs  $SCRATCH/tmp  tmpfs  size=4M,noauto,_netdev  0 0
EOT
printf '[storaged]\ndevice-timeout = 10s\n' >"$CONF"
DEFAULTS=$SCRATCH/default-storaged
printf 'STORAGED_OPTS="-c %s -f %s --state-dir %s"\n' "$CONF" "$FSTAB" "$STATE" >"$DEFAULTS"

# verb WANT ARGS...: runs the script, keeps its output in $OUT.
verb() {
	local want=$1 rc
	shift
	OUT=$(STORAGED_BIN=$STORAGED STORAGED_DEFAULTS=$DEFAULTS \
		STORAGED_PIDFILE=$SCRATCH/none.pid "$INIT" "$@" 2>&1)
	rc=$?
	printf '%s\n' "$OUT" | sed 's/^/  | /'
	[ "$rc" = "$want" ] || fail "storaged $* exited $rc, expected $want"
	note "'$*' -> $rc"
}
all_mounted() {
	findmnt -rn -o FSTYPE --mountpoint "$SCRATCH/data" | grep -qx btrfs || fail "RAID1 not mounted"
	is_mountpoint "$SCRATCH/data/tmp" || fail "nested tmpfs not mounted"
	is_mountpoint "$SCRATCH/tmp" || fail "_netdev tmpfs not mounted"
	for m in data data/tmp tmp; do
		[ "$(mount_count "$SCRATCH/$m")" = 1 ] || fail "$m mounted $(mount_count "$SCRATCH/$m") times"
	done
}
none_mounted() {
	for m in data/tmp data tmp; do
		is_mountpoint "$SCRATCH/$m" && fail "$SCRATCH/$m still mounted"
	done
	return 0
}

verb 3 status
before=$(mount_snapshot)
verb 0 dryrun
expect_out "register $A"
expect_out "on $SCRATCH/data/tmp"
[ "$(mount_snapshot)" = "$before" ] || fail "dryrun changed the mount table"
[ ! -e "$STATE/state" ] || fail "dryrun wrote state"
if mount -t btrfs "$A" "$SCRATCH/data" 2>/dev/null; then
	fail "after dryrun a plain mount works: dryrun registered a member"
fi

verb 0 start
all_mounted
verb 0 status
expect_out "is active"
verb 0 start
all_mounted
verb 0 reload
all_mounted
verb 0 force-reload
verb 0 restart
all_mounted
verb 0 stop
none_mounted
verb 3 status
verb 0 stop
verb 0 restart
all_mounted
verb 0 stop

note "a resident storaged (its lock held, its pidfile): reload sends SIGHUP, stop SIGTERM"
# the stand-in takes the signals' default actions even where this test
# was started with them ignored (nohup: SIGHUP), and holds the resident's
# lock beside the pid file for its lifetime, as a resident does (fd 9
# stays open across the exec)
sleep300() { (exec 9>"$SCRATCH/resident" && flock -n 9 && exec env --default-signal=HUP,TERM sleep 300) & }
sleep300
RES=$!
echo "$RES" >"$SCRATCH/none.pid"
verb 0 reload
sleep 0.2
kill -0 "$RES" 2>/dev/null && fail "reload did not signal the resident process"
wait "$RES" 2>/dev/null
[ -n "$(findmnt -rn --mountpoint "$SCRATCH/data")" ] && fail "reload with a resident process ran a pass"
sleep300
RES=$!
echo "$RES" >"$SCRATCH/none.pid"
verb 0 stop
kill -0 "$RES" 2>/dev/null && fail "stop left the resident process"
wait "$RES" 2>/dev/null
rm -f "$SCRATCH/none.pid"

note "a pid file left by a killed resident, its pid now another process's: not signalled"
env --default-signal=HUP,TERM sleep 300 &
RES=$!
echo "$RES" >"$SCRATCH/none.pid"
verb 0 stop
kill -0 "$RES" 2>/dev/null || fail "stop signalled a process that only a stale pid file named"
kill "$RES"
wait "$RES" 2>/dev/null
rm -f "$SCRATCH/none.pid"

note "usage errors: LSB 2"
verb 2 bogus
verb 2
verb 2 start extra

note "configuration error: LSB 6 (not configured), nothing mounted"
printf '[storaged]\nno-such-key = 1\n' >"$CONF"
verb 6 start
none_mounted
verb 6 dryrun
printf '[storaged]\ndevice-timeout = 10s\n' >"$CONF"

note "binary missing (removed, not purged): start/stop 0, status 4"
OUT=$(STORAGED_BIN=$SCRATCH/nonexistent STORAGED_DEFAULTS=$DEFAULTS "$INIT" start 2>&1) ||
	fail "start without binary: $?"
STORAGED_BIN=$SCRATCH/nonexistent STORAGED_DEFAULTS=$DEFAULTS "$INIT" status >/dev/null 2>&1
[ $? = 4 ] || fail "status without binary should be 4"

if [ -d /lib/lsb ] && command -v unshare >/dev/null; then
	note "without /lib/lsb/init-functions (hidden in a private mount namespace)"
	mkdir -p "$SCRATCH/empty"
	out=$(unshare -m --propagation private sh -c '
		mount --bind "$1" /lib/lsb || exit 99
		shift
		"$@" start; a=$?; "$@" status >/dev/null; b=$?; "$@" stop; c=$?; "$@" status >/dev/null; d=$?
		echo "rc=$a,$b,$c,$d"' sh "$SCRATCH/empty" \
		env STORAGED_BIN="$STORAGED" STORAGED_DEFAULTS="$DEFAULTS" "$INIT" 2>&1)
	printf '%s\n' "$out" | sed 's/^/  | /'
	printf '%s\n' "$out" | grep -qx 'rc=0,0,0,3' || fail "verbs without init-functions"
	none_mounted
fi
exit 0

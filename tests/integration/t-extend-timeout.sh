#!/bin/bash
# EXTEND_TIMEOUT_USEC= (sd_notify(3)): under a service manager, `start`
# keeps the manager's start timeout ahead of its waits, so that a
# device-timeout longer than the unit's TimeoutStartSec= needs no drop-in.
# A RAID1 with its second member missing, device-timeout = 2s, degraded
# mounts allowed, a listener on NOTIFY_SOCKET standing in for systemd:
# the extension comes as the wait begins and reaches past the wait's end,
# READY=1 comes after the degraded mount; without NOTIFY_SOCKET nothing
# is sent and the start does the same.
. "$(dirname "$0")/lib.sh"
setup
command -v mkfs.btrfs >/dev/null || skip "mkfs.btrfs missing (btrfs-progs)"
command -v python3 >/dev/null || skip "python3 missing (the NOTIFY_SOCKET listener)"

mkraid1 ext-timeout 512M
detach "$B"
cat >"$FSTAB" <<EOT
UUID=$FSID  $SCRATCH/m/data  btrfs  noatime,noauto,x-storaged,X-mount.mkdir  0 0
EOT
printf '[storaged]\ndevice-timeout = 2s\ndegraded = after-timeout\n' >"$CONF"

CLEANUP_HOOK=stop_listener
stop_listener() { [ -n "${LISTENER:-}" ] && kill "$LISTENER" 2>/dev/null; }
notify_listen "$SCRATCH/notify" "$SCRATCH/notes"

note "start under a service manager, a member missing: 2 s of waiting"
OUT=$(NOTIFY_SOCKET=$SCRATCH/notify sd start 2>&1)
rc=$?
printf '%s\n' "$OUT" | sed 's/^/  | /'
[ "$rc" = 3 ] || fail "start exited $rc, expected 3 (mounted degraded by consent)"
is_mountpoint "$SCRATCH/m/data" || fail "the RAID1 was not mounted degraded"
for _ in $(seq 20); do grep -q 'READY=1' "$SCRATCH/notes" 2>/dev/null && break; sleep 0.1; done
sed 's/^/  notify: /' "$SCRATCH/notes"
ext=$(grep -m1 'EXTEND_TIMEOUT_USEC=' "$SCRATCH/notes") || fail "no EXTEND_TIMEOUT_USEC= while start waited"
usec=$(printf '%s\n' "$ext" | sed -n 's/.*EXTEND_TIMEOUT_USEC=\([0-9]*\).*/\1/p')
[ -n "$usec" ] || fail "EXTEND_TIMEOUT_USEC= without a number: $ext"
# it covers what is left of the 2 s wait when it is sent, and a margin
[ "$usec" -ge 2000000 ] || fail "EXTEND_TIMEOUT_USEC=$usec does not reach past the 2 s wait"
[ "$usec" -le 120000000 ] || fail "EXTEND_TIMEOUT_USEC=$usec: more than the wait and a margin"
# sent as the wait began, before READY=1
n_ext=$(grep -n -m1 'EXTEND_TIMEOUT_USEC=' "$SCRATCH/notes" | cut -d: -f1)
n_ready=$(grep -n -m1 'READY=1' "$SCRATCH/notes" | cut -d: -f1)
[ -n "$n_ready" ] || fail "no READY=1"
[ "$n_ext" -lt "$n_ready" ] || fail "the extension came after READY=1"
grep -q 'STATUS=waiting up to 2s for btrfs' "$SCRATCH/notes" || fail "no STATUS= for the wait"
# on the listener's clock the 2 s wait lies between the extension and READY=1
t_ext=$(printf '%s\n' "$ext" | cut -d' ' -f1)
t_ready=$(grep -m1 'READY=1' "$SCRATCH/notes" | cut -d' ' -f1)
python3 -c "import sys; sys.exit(0 if float(sys.argv[2]) - float(sys.argv[1]) >= 1.5 else 1)" "$t_ext" "$t_ready" ||
	fail "the extension came ${t_ext}s, READY=1 ${t_ready}s: not before the 2 s wait"
grep -c 'EXTEND_TIMEOUT_USEC=' "$SCRATCH/notes" | grep -qx '[1-3]' ||
	fail "$(grep -c 'EXTEND_TIMEOUT_USEC=' "$SCRATCH/notes") extensions for one 2 s wait: expected one (a few at most)"
run_sd 0 stop

note "without a service manager: no datagram, the same outcome"
forget "$A"
: >"$SCRATCH/notes"
run_sd 3 start
is_mountpoint "$SCRATCH/m/data" || fail "not mounted without NOTIFY_SOCKET"
sleep 0.5
[ -s "$SCRATCH/notes" ] && fail "datagrams without NOTIFY_SOCKET: $(cat "$SCRATCH/notes")"
run_sd 0 stop
exit 0

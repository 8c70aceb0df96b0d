#!/bin/bash
# Resident mode (--foreground): a RAID1 member attached while storaged
# waits is registered and its entry mounted; a member that comes after the
# device timeout failed the entry is picked up by the resident loop;
# SIGHUP applies a new fstab entry; SIGTERM leaves with the mounts in place.
# READY=1 reaches $NOTIFY_SOCKET.
. "$(dirname "$0")/lib.sh"
setup
command -v mkfs.btrfs >/dev/null || skip "mkfs.btrfs missing (btrfs-progs)"
command -v python3 >/dev/null || skip "python3 missing (notify socket listener)"

mkraid1 "" 512M
detach "$B"
mkdir -p "$SCRATCH/data" "$SCRATCH/late"
echo "UUID=$FSID  $SCRATCH/data  btrfs  noatime,noauto,x-storaged,x-storaged.device-timeout=20s  0 0" >"$FSTAB"

# A notify socket listener: writes every datagram it receives to a file.
python3 - "$SCRATCH/notify.sock" "$SCRATCH/notify.log" <<'PY' &
import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(sys.argv[1])
with open(sys.argv[2], "a", buffering=1) as log:
    while True:
        log.write(s.recv(4096).decode() + "\n")
PY
LISTENER=$!
for _ in $(seq 50); do [ -S "$SCRATCH/notify.sock" ] && break; sleep 0.1; done

# The binary itself in the background (not the sd function, whose subshell
# would receive the signals).
NOTIFY_SOCKET=$SCRATCH/notify.sock "$STORAGED" -c "$CONF" -f "$FSTAB" --state-dir "$STATE" \
	--foreground start >"$SCRATCH/out" 2>&1 &
SD=$!
stop_all() { kill "$SD" "$LISTENER" 2>/dev/null; wait "$SD" "$LISTENER" 2>/dev/null; }
CLEANUP_HOOK=stop_all

# How fast it reacts is a benchmark's business (bench/); here only that the
# arrival, not the deadline, ends the wait: the mount comes well before the
# 20 s device timeout.
note "member attached once start waits for it: registered and mounted when it arrives"
for _ in $(seq 100); do grep -q 'STATUS=waiting' "$SCRATCH/notify.log" 2>/dev/null && break; sleep 0.1; done
grep -q 'STATUS=waiting' "$SCRATCH/notify.log" || note "no STATUS=waiting on NOTIFY_SOCKET after 10 s: attaching now"
B=$(attach "$SCRATCH/img/b.img")
t0=$(date +%s%N)
for _ in $(seq 150); do is_mountpoint "$SCRATCH/data" && break; sleep 0.1; done
is_mountpoint "$SCRATCH/data" || { cat "$SCRATCH/out"; fail "not mounted 15 s after the member arrived"; }
note "mounted $((($(date +%s%N) - t0) / 1000000)) ms after the member was attached"
btrfs filesystem show "$SCRATCH/data" | grep -q "Total devices 2" || fail "not two devices"
for _ in $(seq 50); do grep -q READY=1 "$SCRATCH/notify.log" 2>/dev/null && break; sleep 0.1; done
grep -q READY=1 "$SCRATCH/notify.log" || fail "no READY=1 on NOTIFY_SOCKET"

note "SIGHUP with a new fstab entry: mounted"
echo "tmpfs  $SCRATCH/late  tmpfs  size=4M,noauto,x-storaged  0 0" >>"$FSTAB"
kill -HUP "$SD"
for _ in $(seq 50); do is_mountpoint "$SCRATCH/late" && break; sleep 0.1; done
is_mountpoint "$SCRATCH/late" || { cat "$SCRATCH/out"; fail "SIGHUP did not mount the new entry"; }
[ "$(mount_count "$SCRATCH/data")" = 1 ] || fail "SIGHUP mounted the RAID1 twice"

note "SIGTERM: exit 0, mounts stay"
kill -TERM "$SD"
wait "$SD"
rc=$?
[ "$rc" = 0 ] || { cat "$SCRATCH/out"; fail "exit $rc after SIGTERM"; }
is_mountpoint "$SCRATCH/data" || fail "SIGTERM unmounted the RAID1"
run_sd 0 stop
is_mountpoint "$SCRATCH/data" && fail "stop left the RAID1 mounted"

note "a member arriving after the device timeout failed the entry"
forget "$A"
detach "$B"
sed -i 's/device-timeout=20s/device-timeout=1s/' "$FSTAB"
"$STORAGED" -c "$CONF" -f "$FSTAB" --state-dir "$STATE" --foreground start >"$SCRATCH/out2" 2>&1 &
SD=$!
for _ in $(seq 200); do grep -q "devid 2 missing" "$SCRATCH/out2" && break; sleep 0.1; done
grep -q "devid 2 missing" "$SCRATCH/out2" || { cat "$SCRATCH/out2"; fail "no failure message after the timeout"; }
is_mountpoint "$SCRATCH/data" && fail "mounted without its second member"
B=$(attach "$SCRATCH/img/b.img")
for _ in $(seq 50); do is_mountpoint "$SCRATCH/data" && break; sleep 0.1; done
is_mountpoint "$SCRATCH/data" || { cat "$SCRATCH/out2"; fail "the resident loop did not mount it when the member came"; }
kill -TERM "$SD"
wait "$SD" || fail "exit status after SIGTERM"
run_sd 0 stop

note "--daemon: start returns after the first pass; the resident process keeps a pid file"
run_sd 0 --daemon start
is_mountpoint "$SCRATCH/data" || fail "--daemon start did not mount"
[ -s "$STATE/storaged.pid" ] || fail "no pid file"
pid=$(cat "$STATE/storaged.pid")
kill -0 "$pid" || fail "resident process $pid not running"
kill -TERM "$pid"
for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
kill -0 "$pid" 2>/dev/null && fail "resident process ignored SIGTERM"
[ -e "$STATE/storaged.pid" ] && fail "pid file left behind"
run_sd 0 stop

note "one resident per state directory; stop ends it"
run_sd 0 --daemon start
pid=$(cat "$STATE/storaged.pid")
run_sd 0 --daemon start
expect_out "already handles devices"
[ "$(cat "$STATE/storaged.pid")" = "$pid" ] || fail "a second resident replaced the first one's pid file"
run_sd 0 stop
expect_out "stopping the resident storaged (pid $pid)"
# stop returns once the resident released its lock, which it does on its
# way out: what runs after (LeakSanitizer's scan at exit, on a loaded
# machine) is given 10 s; a zombie not yet reaped by init counts as gone
for _ in $(seq 100); do
	state=$(ps -o stat= -p "$pid" 2>/dev/null)
	case "$state" in "" | Z*) break ;; esac
	sleep 0.1
done
case "$state" in "" | Z*) ;; *) fail "stop left the resident running ($state) 10 s after it returned" ;; esac
is_mountpoint "$SCRATCH/data" && fail "stop left the RAID1 mounted"
exit 0

#!/bin/bash
# A reload right after readiness: `systemctl reload` sends SIGHUP as soon
# as READY=1 is out, and `kill -HUP $(cat storaged.pid)` may follow a
# `--daemon start` at once.  SIGHUP ends a process that has not blocked it
# (signal(7)): the resident storaged must take it as a reload however
# early it comes.  The CI run of d42b625 lost its resident so, under load.
. "$(dirname "$0")/lib.sh"
setup
command -v python3 >/dev/null || skip "python3 missing (notify socket listener)"

mkdir -p "$SCRATCH/t"
echo "tmpfs  $SCRATCH/t  tmpfs  size=4M,noauto,x-storaged  0 0" >"$FSTAB"

# A service manager's socket that sends SIGHUP to the sender of its first
# READY=1 the moment it arrives (the sender's pid from SCM_CREDENTIALS, as
# systemd reads it), then logs what it did.
python3 - "$SCRATCH/notify.sock" "$SCRATCH/notify.log" <<'PY' &
import os, signal, socket, struct, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.setsockopt(socket.SOL_SOCKET, socket.SO_PASSCRED, 1)
s.bind(sys.argv[1])
reloaded = set()
with open(sys.argv[2], "a", buffering=1) as log:
    while True:
        msg, anc, _, _ = s.recvmsg(4096, socket.CMSG_SPACE(12))
        pid = next(struct.unpack("iII", d[:12])[0] for lvl, typ, d in anc
                   if lvl == socket.SOL_SOCKET and typ == socket.SCM_CREDENTIALS)
        text = msg.decode(errors="replace")
        if "READY=1" in text.split("\n") and pid not in reloaded:
            reloaded.add(pid)
            os.kill(pid, signal.SIGHUP)
            log.write("sent SIGHUP to %d\n" % pid)
        log.write(text.replace("\n", "|") + "\n")
PY
LISTENER=$!
for _ in $(seq 50); do [ -S "$SCRATCH/notify.sock" ] && break; sleep 0.1; done
[ -S "$SCRATCH/notify.sock" ] || fail "the notification listener did not start"
SD=
stop_all() { kill "$SD" "$LISTENER" 2>/dev/null; wait "$SD" "$LISTENER" 2>/dev/null; }
CLEANUP_HOOK=stop_all

ROUNDS=5
for round in $(seq "$ROUNDS"); do
	note "round $round/$ROUNDS: --foreground under a service manager, SIGHUP the moment READY=1 arrives"
	: >"$SCRATCH/notify.log"
	NOTIFY_SOCKET=$SCRATCH/notify.sock "$STORAGED" -c "$CONF" -f "$FSTAB" --state-dir "$STATE" \
		--foreground start >"$SCRATCH/out" 2>&1 &
	SD=$!
	for _ in $(seq 100); do grep -q "RELOADING=1" "$SCRATCH/notify.log" && break
		kill -0 "$SD" 2>/dev/null || break; sleep 0.1; done
	kill -0 "$SD" 2>/dev/null || { wait "$SD"; rc=$?; cat "$SCRATCH/out" "$SCRATCH/notify.log"
		fail "the resident ended on a SIGHUP sent at READY=1 (exit $rc)"; }
	grep -q "RELOADING=1" "$SCRATCH/notify.log" || { cat "$SCRATCH/out" "$SCRATCH/notify.log"
		fail "no reload after the SIGHUP sent at READY=1"; }
	is_mountpoint "$SCRATCH/t" || fail "the entry is not mounted"
	kill -TERM "$SD"
	wait "$SD" || { cat "$SCRATCH/out"; fail "exit $? after SIGTERM"; }
	SD=
	grep -q "SIGHUP: reloading" "$SCRATCH/out" || { cat "$SCRATCH/out"; fail "the reload is not logged"; }
done

for round in $(seq "$ROUNDS"); do
	note "round $round/$ROUNDS: --daemon start, SIGHUP to the pid file's process at once"
	run_sd 0 --daemon start
	pid=$(cat "$STATE/storaged.pid")
	kill -HUP "$pid" || fail "no resident process $pid"
	sleep 0.5
	kill -0 "$pid" 2>/dev/null || fail "the resident ($pid) ended on a SIGHUP sent as start returned"
	run_sd 0 stop
done
exit 0

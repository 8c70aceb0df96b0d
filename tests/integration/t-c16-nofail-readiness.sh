#!/bin/bash
# C16: readiness waits only for what the boot needs.  An absent `nofail`
# disk must not hold READY=1 (systemd's Type=notify) nor the return of the
# one-shot `start` under SysV init for its device timeout: both come as
# soon as the other entries are done; the nofail entry goes on waiting in
# the background up to its own timeout, is mounted if its disk comes, and
# `status` shows it waiting, then its outcome.
. "$(dirname "$0")/lib.sh"
setup
command -v mkfs.ext4 >/dev/null || skip "mkfs.ext4 missing"
command -v python3 >/dev/null || skip "python3 missing (the NOTIFY_SOCKET listener)"

dev=$(mkloop usb 32M)
mkfs.ext4 -q "$dev" || fail "mkfs.ext4"
UUID=$(blkid -o value -s UUID "$dev")
detach "$dev"
IMG=$SCRATCH/img/usb.img
# the bounds below tell "did not wait" from "waited device-timeout": a
# third of it, both scaled (a slow, busy guest); speed is bench/'s
printf '[storaged]\ndevice-timeout = %ss\n' $((12 * TIME_SCALE)) >"$CONF"
cat >"$FSTAB" <<EOT
UUID=$UUID  $SCRATCH/m/usb  ext4   defaults,nofail,noauto,x-storaged,X-mount.mkdir  0 0
tmpfs       $SCRATCH/m/tmp  tmpfs  size=8M,noauto,x-storaged,X-mount.mkdir          0 0
EOT

wait_for() { # wait_for SECONDS CMD...: until CMD succeeds
	local n=$(($1 * 10))
	shift
	while [ "$n" -gt 0 ]; do
		"$@" && return 0
		sleep 0.1
		n=$((n - 1))
	done
	return 1
}
bg_done() { # the start left in the background has ended ("[-]": never this line)
	! pgrep -f -- "[-]-state-dir $STATE start" >/dev/null
}
status_of() { # status_of MOUNTPOINT: its line in `storaged status`
	sd status 2>&1 | grep -F "$1 "
}

note "under a service manager (NOTIFY_SOCKET): READY=1 while the nofail disk is absent"
CLEANUP_HOOK=stop_listener
stop_listener() { kill "$LISTENER" 2>/dev/null; }
notify_listen "$SCRATCH/notify" "$SCRATCH/notes"
t0=$(date +%s.%N)
NOTIFY_SOCKET=$SCRATCH/notify sd start >"$SCRATCH/start.out" 2>&1 &
SD=$!
wait_for $((4 * TIME_SCALE)) grep -q "READY=1" "$SCRATCH/notes" || { cat "$SCRATCH/start.out"; sd status; fail "no READY=1 within $((4 * TIME_SCALE)) s"; }
ready=$(python3 -c "import sys; print('%.3f' % (float(sys.argv[1]) - float(sys.argv[2])))" \
	"$(date +%s.%N)" "$t0")
note "READY=1 seen $ready s after start: $(grep -m1 READY=1 "$SCRATCH/notes" | cut -d" " -f2-)"
is_mountpoint "$SCRATCH/m/tmp" || fail "READY=1 before the tmpfs was mounted"
python3 -c "import sys; sys.exit(0 if float(sys.argv[1]) < float(sys.argv[2]) else 1)" "$ready" "$((4 * TIME_SCALE))" ||
	fail "READY=1 came after $ready s: it waited for the device-timeout ($((12 * TIME_SCALE)) s)"
kill -0 "$SD" 2>/dev/null || fail "storaged did not stay for the nofail entry"
status_of "$SCRATCH/m/usb" | grep -q "waiting" || fail "status does not show the nofail entry waiting: $(status_of "$SCRATCH/m/usb")"
note "status: $(status_of "$SCRATCH/m/usb")"
note "the disk comes: the nofail entry is mounted in the background"
dev=$(attach "$IMG")
wait "$SD"
rc=$?
sed 's/^/  | /' "$SCRATCH/start.out"
[ "$rc" = 0 ] || fail "start exited $rc"
is_mountpoint "$SCRATCH/m/usb" || fail "the nofail entry was not mounted when its disk came"
status_of "$SCRATCH/m/usb" | grep -q "done" || fail "status does not show the nofail entry done"
run_sd 0 stop
detach "$dev"

note "under SysV init: the one-shot start returns at once; the nofail entry waits in the background"
s=$(date +%s%N)
sd start >"$SCRATCH/sysv.out" 2>&1
rc=$?
e=$(( ($(date +%s%N) - s) / 1000000 ))
note "start returned $rc after $e ms"
[ "$rc" = 0 ] || fail "start exited $rc"
[ "$e" -lt $((4000 * TIME_SCALE)) ] || fail "start took $e ms with the nofail disk absent: it waited for the device-timeout"
is_mountpoint "$SCRATCH/m/tmp" || fail "start returned before the tmpfs was mounted"
status_of "$SCRATCH/m/usb" | grep -q "waiting" || fail "status does not show the nofail entry waiting"
note "a second start (the pass after the network) takes the wait over instead of finding the state locked"
sd start >"$SCRATCH/sysv-b.out" 2>&1 || { sed 's/^/  | /' "$SCRATCH/sysv-b.out"; fail "the second start failed"; }
dev=$(attach "$IMG")
wait_for $((12 * TIME_SCALE)) is_mountpoint "$SCRATCH/m/usb" || fail "the nofail entry was not mounted in the background"
wait_for $((5 * TIME_SCALE)) bg_done || fail "the background start did not end"
sed 's/^/  | /' "$SCRATCH/sysv.out" "$SCRATCH/sysv-b.out"
grep -q "another storaged is running" "$SCRATCH/sysv-b.out" && fail "the second start found the state locked"
status_of "$SCRATCH/m/usb" | grep -q "done" || fail "status does not show the nofail entry done"
run_sd 0 stop
detach "$dev"

note "the disk never comes: the nofail entry fails alone at its own timeout, after the start returned"
# twice what start may take here (its bound below): a start slowed down
# (the emulated guest beside other work) must not outlast the timeout
NOFAIL_TIMEOUT=$((6 * TIME_SCALE))
sed -i "s/nofail,noauto/nofail,x-systemd.device-timeout=${NOFAIL_TIMEOUT}s,noauto/" "$FSTAB"
# a script reading start's output: it gets it whole as start returns, and
# is not held until the background wait ends (a command's output ends
# when it exits: the rest goes to syslog, and status has the outcome)
s=$(date +%s%N)
out=$(sd start 2>&1)
rc=$?
e=$(( ($(date +%s%N) - s) / 1000000 ))
printf '%s\n' "$out" | sed 's/^/  | /'
note "start returned $rc after $e ms, its output read to its end"
[ "$rc" = 0 ] || fail "start exited $rc"
[ "$e" -lt $((NOFAIL_TIMEOUT * 1000 / 2)) ] || fail "reading start's output took $e ms: the background wait ($NOFAIL_TIMEOUT s) held it"
printf '%s\n' "$out" | grep -q "1 nofail entry goes on waiting for its device" ||
	fail "start's output does not say the nofail entry goes on waiting"
printf '%s\n' "$out" | tail -n 1 | grep -q "1 mounted" || fail "start's output does not end with its closing count"
bg_done && fail "the background start ended before the device timeout: nothing tested"
wait_for $((NOFAIL_TIMEOUT + 8)) bg_done || fail "the background start did not end"
sd status 2>&1 | grep -q "not found after ${NOFAIL_TIMEOUT}s" || { sd status; fail "status does not say why the nofail entry failed"; }
run_sd 0 stop
note "nothing written to start's output after it returned"
sd start >"$SCRATCH/sysv2.out" 2>&1 || fail "start failed"
cp "$SCRATCH/sysv2.out" "$SCRATCH/sysv2.at-return"
wait_for $((NOFAIL_TIMEOUT + 8)) bg_done || fail "the background start did not end"
sed 's/^/  | /' "$SCRATCH/sysv2.out"
cmp -s "$SCRATCH/sysv2.out" "$SCRATCH/sysv2.at-return" ||
	fail "the background wait wrote to the output of a start that had returned"
status_of "$SCRATCH/m/usb" | grep -Eq "skipped|failed" || fail "status does not show the nofail entry's outcome"
run_sd 0 stop
exit 0

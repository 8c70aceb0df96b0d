#!/bin/bash
# C02: a RAID1 member never comes.  storaged waits at most device-timeout,
# names the missing devid, does not mount degraded without permission, and
# still mounts the independent entries.  With nofail the same is a warning,
# in status once the background wait for it ended.
. "$(dirname "$0")/lib.sh"
setup
command -v mkfs.btrfs >/dev/null || skip "mkfs.btrfs missing (btrfs-progs)"

mkraid1 c02 512M
detach "$B"
mkdir -p "$SCRATCH/req" "$SCRATCH/tmp"

note "the fault: the remaining member alone does not mount"
if mount -t btrfs "$A" "$SCRATCH/req" 2>/dev/null; then fail "mounted without its second member"; fi
forget "$A"

cat >"$FSTAB" <<EOT
UUID=$FSID  $SCRATCH/req  btrfs  noatime,noauto,x-storaged  0 0
tmpfs  $SCRATCH/tmp  tmpfs  size=8M,noauto,x-storaged  0 0
EOT
printf '[storaged]\ndevice-timeout = 2s\ndegraded = no\n' >"$CONF"

t0=$(date +%s)
run_sd 1 start
t1=$(date +%s)
[ $((t1 - t0)) -le 20 ] || fail "waited $((t1 - t0))s for a 2s device-timeout"
expect_out "1 of 2 members present after 2s, devid 2 missing"
expect_out "degraded mounts are not allowed"
expect_out "$FSID"
is_mountpoint "$SCRATCH/req" && fail "the incomplete RAID1 was mounted"
is_mountpoint "$SCRATCH/tmp" || fail "the independent tmpfs was not mounted"
run_sd 1 status
expect_out "failed"
run_sd 0 stop

note "SIGINT during the wait: a clean stop, recorded, exit 1"
forget "$A"
sed -i 's/x-storaged  0 0$/x-storaged,x-storaged.device-timeout=60s  0 0/' "$FSTAB"
"$STORAGED" -c "$CONF" -f "$FSTAB" --state-dir "$STATE" start >"$SCRATCH/int.out" 2>&1 &
pid=$!
for _ in $(seq 100); do is_mountpoint "$SCRATCH/tmp" && break; sleep 0.1; done
kill -INT "$pid"
wait "$pid"
rc=$?
cat "$SCRATCH/int.out" | sed 's/^/  | /'
[ "$rc" = 1 ] || fail "exit $rc after SIGINT, expected 1"
grep -q "Interrupt: stopping" "$SCRATCH/int.out" || fail "no message about the interruption"
run_sd 1 status
expect_out "interrupted"
run_sd 0 stop
is_mountpoint "$SCRATCH/tmp" && fail "stop after an interrupted start left the tmpfs"

note "with nofail: the same message as a warning, exit 0"
cat >"$FSTAB" <<EOT
UUID=$FSID  $SCRATCH/req  btrfs  noatime,noauto,nofail,x-storaged  0 0
tmpfs  $SCRATCH/tmp  tmpfs  size=8M,noauto,x-storaged  0 0
EOT
forget "$A"
run_sd 0 start
# start returns once the entries the boot needs are done; the nofail
# entry's wait goes on in the background (its messages to syslog), and
# status has its outcome
expect_out "1 nofail entry goes on waiting"
for _ in $(seq 100); do pgrep -f -- "[-]-state-dir $STATE start" >/dev/null || break; sleep 0.1; done
pgrep -f -- "[-]-state-dir $STATE start" >/dev/null && fail "the background wait did not end"
OUT=$(sd status 2>&1)
printf '%s\n' "$OUT" | sed 's/^/  | /'
expect_out "1 of 2 members present after 2s, devid 2 missing"
is_mountpoint "$SCRATCH/req" && fail "the incomplete RAID1 was mounted"
is_mountpoint "$SCRATCH/tmp" || fail "tmpfs not mounted"
run_sd 0 stop
exit 0

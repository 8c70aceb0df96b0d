#!/bin/bash
# A wait that follows the members: with settle-time, each member that
# arrives during the wait re-arms a quiet period after it, so a third disk
# that comes after device-timeout (counted from the first member), but
# within the quiet period of the second one, is waited for: the RAID1 is
# mounted complete, not refused.  --dry-run states the wait.
. "$(dirname "$0")/lib.sh"
setup
command -v mkfs.btrfs >/dev/null || skip "mkfs.btrfs missing (btrfs-progs)"

A=$(mkloop a 512M)
B=$(mkloop b 512M)
C=$(mkloop c 512M)
mkfs.btrfs -q -f -L settle -d raid1 -m raid1 "$A" "$B" "$C" >/dev/null || fail "mkfs.btrfs"
FSID=$(blkid -o value -s UUID "$A")
forget "$A" "$B" "$C"
detach "$B"
detach "$C"
mkdir -p "$SCRATCH/data"
echo "UUID=$FSID  $SCRATCH/data  btrfs  noatime,noauto,x-storaged  0 0" >"$FSTAB"
# degraded = no: had the wait ended at device-timeout, the entry would fail
printf '[storaged]\ndevice-timeout = 30s\ndegraded = no\n[btrfs LABEL=settle]\ndevice-timeout = 6s\nsettle-time = 30s\nsettle-limit = 2min\n' >"$CONF"

note "the plan states the wait"
run_sd 1 --dry-run
expect_out "1/3 members present, devids 2, 3 missing; wait up to 6s after the first member, 30s after the last arrival (at most 126s), then fail"

note "B arrives during the wait, C after the device-timeout but within B's quiet period"
"$STORAGED" -c "$CONF" -f "$FSTAB" --state-dir "$STATE" -v start >"$SCRATCH/out" 2>&1 &
SD=$!
stop_sd() { kill "$SD" 2>/dev/null; wait "$SD" 2>/dev/null; }
CLEANUP_HOOK=stop_sd
for _ in $(seq 100); do grep -q "^status = waiting" "$STATE/state" 2>/dev/null && break; sleep 0.1; done
grep -q "^status = waiting" "$STATE/state" || { cat "$SCRATCH/out"; fail "storaged did not start waiting"; }
t0=$(date +%s)
B=$(attach "$SCRATCH/img/b.img")
for _ in $(seq 100); do grep -q "devid 2 ($B) seen" "$SCRATCH/out" && break; sleep 0.1; done
grep -q "devid 2 ($B) seen" "$SCRATCH/out" || { cat "$SCRATCH/out"; fail "storaged did not see B arrive"; }
# past the 6s device-timeout of the first member: only B's quiet period
# keeps the wait open now
while [ $(($(date +%s) - t0)) -lt 8 ]; do sleep 0.5; done
kill -0 "$SD" 2>/dev/null || { cat "$SCRATCH/out"; fail "storaged ended its wait at device-timeout"; }
C=$(attach "$SCRATCH/img/c.img")
wait "$SD"
rc=$?
CLEANUP_HOOK=
OUT=$(cat "$SCRATCH/out")
printf '%s\n' "$OUT" | sed 's/^/  | /'
[ "$rc" = 0 ] || fail "start exited $rc, expected 0 (all members waited for)"
expect_out "assembled, 3/3 members"
expect_out "a member arrived: waiting"
expect_out "btrfs $FSID: decision=complete members=3/3"
is_mountpoint "$SCRATCH/data" || fail "not mounted"
opts=$(findmnt -rn -o OPTIONS --mountpoint "$SCRATCH/data")
case ",$opts," in *,degraded,*) fail "mounted degraded: $opts" ;; esac
note "who arrived when: C after the device-timeout"
arrivals=$(sd status --json 2>/dev/null | python3 -c '
import json, sys
print([r["arrivals"] for r in json.load(sys.stdin)["status"] if r["kind"] == "btrfs"][0])')
note "arrivals: $arrivals"
at=$(printf '%s\n' "$arrivals" | sed -n "s/.*devid 3 [^ ]* at +\([0-9]*\)\..*/\1/p")
[ -n "$at" ] && [ "$at" -ge 6 ] || fail "C's arrival (+${at:-?}s) is not after the 6s device-timeout: $arrivals"
run_sd 0 stop
exit 0

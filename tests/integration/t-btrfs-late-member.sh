#!/bin/bash
# A member that comes back after its RAID1 was mounted degraded, in
# resident mode (--foreground): storaged registers it and says what the
# kernel does with it, which this test reads back from the kernel itself:
# Linux (fs/btrfs/volumes.c device_list_add(), "When FS is already
# mounted") clears the member's MISSING bit but opens no block device for
# it, so devinfo/2/missing turns 0 while devinfo/2/writeable stays 0 and
# devices/ has no link for it: unused until the next mount.  status stays
# degraded (exit 3) and says so, the metrics count it unused, and the one
# command storaged names completes the repair: the filesystem mounted
# again, complete, and the returned member current (read-only: it missed
# no write).
. "$(dirname "$0")/lib.sh"
setup
command -v mkfs.btrfs >/dev/null || skip "mkfs.btrfs missing (btrfs-progs)"

mkraid1 late 512M
detach "$B"
mkdir -p "$SCRATCH/data"
echo "UUID=$FSID  $SCRATCH/data  btrfs  noatime,noauto,x-storaged  0 0" >"$FSTAB"
printf '[storaged]\ndevice-timeout = 1s\n[btrfs LABEL=late]\ndegraded = read-only\n' >"$CONF"
SYS=/sys/fs/btrfs/$FSID

"$STORAGED" -c "$CONF" -f "$FSTAB" --state-dir "$STATE" --foreground start >"$SCRATCH/out" 2>&1 &
SD=$!
stop_sd() { kill "$SD" 2>/dev/null; wait "$SD" 2>/dev/null; }
CLEANUP_HOOK=stop_sd
for _ in $(seq 200); do grep -q "^storaged: resident:" "$SCRATCH/out" && break; sleep 0.1; done
grep -q "^storaged: resident:" "$SCRATCH/out" || { cat "$SCRATCH/out"; fail "not resident after the first pass"; }
is_mountpoint "$SCRATCH/data" || { cat "$SCRATCH/out"; fail "not mounted degraded"; }
[ "$(cat "$SYS/devinfo/2/missing")" = 1 ] || fail "devid 2 not missing after the degraded mount"

if [ "${LATE_BY:-storaged}" = scan ]; then
	# as udev's 64-btrfs.rules does on its event, before storaged's pass
	note "B comes back: registered by btrfs device scan before storaged's pass"
	kill -STOP "$SD"
	B=$(attach "$SCRATCH/img/b.img")
	btrfs device scan "$B" >/dev/null 2>&1 || { kill -CONT "$SD"; fail "btrfs device scan $B"; }
	kill -CONT "$SD"
else
	note "B comes back: registered by the resident storaged"
	B=$(attach "$SCRATCH/img/b.img")
fi
for _ in $(seq 100); do grep -q "came back after the degraded mount" "$SCRATCH/out" && break; sleep 0.1; done
OUT=$(cat "$SCRATCH/out")
printf '%s\n' "$OUT" | sed 's/^/  | /'
# registered by storaged, or before its pass by udev's rule (the guest)
expect_out "btrfs $FSID: devid 2 ($B) came back after the degraded mount on $SCRATCH/data: registered"
expect_out "the kernel no longer counts it missing but does not use it while the filesystem is mounted; to complete the repair: umount $SCRATCH/data && $(sd_self) start (read-only: it missed no write)"

note "what the kernel did: MISSING cleared, no block device opened"
[ "$(cat "$SYS/devinfo/2/missing")" = 0 ] || fail "devid 2 still missing: the kernel did not take the registration"
[ "$(cat "$SYS/devinfo/2/writeable")" = 0 ] || fail "devid 2 writeable: the kernel opened it while mounted"
[ -e "$SYS/devices/$(basename "$B")" ] && fail "devices/ links $B: the kernel opened it while mounted"
btrfs filesystem show "$SCRATCH/data" | grep -q "devid *2 .* path $B$" || fail "btrfs filesystem show does not name $B for devid 2"
btrfs filesystem show "$SCRATCH/data" | grep -q MISSING && fail "btrfs filesystem show still says MISSING"

note "status and metrics: still degraded, devid 2 back but unused"
run_sd 3 status
expect_out "the kernel does not use devid 2: it came back while the filesystem was mounted read-only degraded"
expect_out "to take it back, unmount $SCRATCH/data and mount it again (umount $SCRATCH/data && $(sd_self) start; read-only, it missed no write)"
# no scrub on the read-only mount (EROFS), nor one needed after it
expect_no_out "scrub"
expect_out "devid 2 $B back after the mount: registered, unused until mounted again"
OUT=$(sd status --format=prometheus 2>&1)
expect_out "^storaged_btrfs_members_unused{fsid=\"$FSID\",label=\"late\"} 1$"
expect_out "^storaged_btrfs_members_missing{fsid=\"$FSID\",label=\"late\"} 0$"
expect_out "^storaged_btrfs_degraded{fsid=\"$FSID\",label=\"late\"} 1$"
sd status --json 2>/dev/null | python3 -c '
import json, sys
r = [r for r in json.load(sys.stdin)["status"] if r["kind"] == "btrfs"][0]
assert r["late"].startswith("devid 2 "), r
assert r["decision"] == "read-only-by-policy", r' || fail "status --json: no late member"

note "a second event pass registers nothing twice"
passes=$(grep -c "still DEGRADED" "$SCRATCH/out")
kill -HUP "$SD"
for _ in $(seq 100); do [ "$(grep -c "still DEGRADED" "$SCRATCH/out")" -gt "$passes" ] && break; sleep 0.1; done
[ "$(grep -c "still DEGRADED" "$SCRATCH/out")" -gt "$passes" ] || fail "no pass after SIGHUP"
[ "$(grep -c "came back after the degraded mount" "$SCRATCH/out")" = 1 ] || fail "registered and told twice"
stop_sd
CLEANUP_HOOK=

note "the command storaged named completes the repair"
umount "$SCRATCH/data" || fail "umount"
run_sd 0 start
expect_out "assembled, 2/2 members"
expect_no_out "stale"
[ "$(cat "$SYS/devinfo/2/writeable")" = 1 ] || fail "devid 2 not in use after the mount"
run_sd 0 status
run_sd 0 stop
exit 0

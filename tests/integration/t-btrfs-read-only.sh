#!/bin/bash
# degraded = read-only: a RAID1 with a member missing is mounted
# ro,degraded after the timeout, so the member present is not written
# alone and the missing one never falls behind unseen; an "rw" of the
# entry does not make it writable.  Status, metrics and the exit status
# are those of a degraded mount (3).  x-storaged.degraded on the entry is
# the entry's own consent to a writable degraded mount.  What storaged
# advises for the read-only mount works there: a replace after a remount
# read-write (a replace on the read-only mount fails with EROFS), and the
# plan's "will fail" without the policy names the knobs that allow it.
. "$(dirname "$0")/lib.sh"
setup
command -v mkfs.btrfs >/dev/null || skip "mkfs.btrfs missing (btrfs-progs)"

mkraid1 ro-pol 512M
detach "$B"
mkdir -p "$SCRATCH/data"
echo "UUID=$FSID  $SCRATCH/data  btrfs  rw,noatime,noauto,x-storaged  0 0" >"$FSTAB"
MP=$SCRATCH/data
RO_FIX="unmount $MP and mount it again (umount $MP && $(sd_self) start; read-only, it missed no write), or put a new disk in its place, which needs the mount writable: mount -o remount,rw,degraded $MP && btrfs replace start 2 NEWDEV $MP; a bind of it left mounted keeps it as it is: unmount each of its mounts (findmnt -S UUID=$FSID)"

note "without a policy, the plan's will-fail names the knobs that allow a degraded mount"
printf '[storaged]\ndevice-timeout = 2s\n' >"$CONF"
run_sd 1 --dry-run
expect_out "attach them, or allow a degraded mount: set degraded = read-only or after-timeout in its \[btrfs $FSID\] section or \[storaged\] of $CONF, or add x-storaged.degraded to the fstab entry"

printf '[storaged]\ndevice-timeout = 2s\ndegraded = read-only\n' >"$CONF"
note "the plan says what happens after the wait"
run_sd 0 --dry-run
expect_out "wait up to 2s, then mount read-only degraded (degraded = read-only)"

note "start: ro,degraded after the timeout, exit 3"
run_sd 3 start
expect_out "mounting $SCRATCH/data DEGRADED (-o ro,degraded)"
expect_out "decision=read-only-by-policy members=1/2"
expect_out "mounting $MP DEGRADED (-o ro,degraded) as the policy allows: once the member is back, $RO_FIX \*\*\*"
findmnt -rn -S "UUID=$FSID" -o TARGET | grep -qxF "$MP" || fail "the advice's findmnt -S UUID=$FSID does not list $MP"
vfs=$(findmnt -rn -o VFS-OPTIONS --mountpoint "$SCRATCH/data") || fail "not mounted"
fso=$(findmnt -rn -o FS-OPTIONS --mountpoint "$SCRATCH/data")
case ",$vfs," in *,ro,*) ;; *) fail "not mounted read-only: $vfs" ;; esac
case ",$fso," in *,degraded,*) ;; *) fail "not mounted degraded: $fso" ;; esac
if touch "$SCRATCH/data/x" 2>/dev/null; then fail "the read-only degraded mount took a write"; fi

note "status and metrics: as for degraded, and the decision"
run_sd 3 status
expect_out "degraded"
expect_out "read-only (degraded = read-only): 1 of 2 members present after 2s, devid 2 missing"
expect_out "decision read-only-by-policy"
expect_out "the kernel reports devid 2 missing: mounted read-only degraded; once it is back, $RO_FIX"
OUT=$(sd status --format=prometheus 2>&1)
expect_out "^storaged_btrfs_degraded{fsid=\"$FSID\",label=\"ro-pol\"} 1$"
expect_out "^storaged_btrfs_decision{fsid=\"$FSID\",decision=\"read-only-by-policy\"} 1$"
expect_out "^storaged_entry_state{kind=\"mount\",entry=\"$SCRATCH/data\",state=\"degraded\"} 1$"
run_sd 0 stop
forget "$A"

note "x-storaged.degraded on the entry: the entry's consent to a writable degraded mount"
echo "UUID=$FSID  $SCRATCH/data  btrfs  noatime,noauto,x-storaged,x-storaged.degraded  0 0" >"$FSTAB"
run_sd 3 start
expect_out "decision=degraded-by-policy"
vfs=$(findmnt -rn -o VFS-OPTIONS --mountpoint "$SCRATCH/data") || fail "not mounted"
case ",$vfs," in *,rw,*) ;; *) fail "not mounted writable: $vfs" ;; esac
run_sd 0 stop
forget "$A"

note "a [btrfs] section's read-only over [storaged]'s after-timeout"
echo "UUID=$FSID  $SCRATCH/data  btrfs  noatime,noauto,x-storaged  0 0" >"$FSTAB"
printf '[storaged]\ndevice-timeout = 2s\ndegraded = after-timeout\n[btrfs LABEL=ro-pol]\ndegraded = read-only\n' >"$CONF"
run_sd 3 start
vfs=$(findmnt -rn -o VFS-OPTIONS --mountpoint "$SCRATCH/data") || fail "not mounted"
case ",$vfs," in *,ro,*) ;; *) fail "the section's read-only was not applied: $vfs" ;; esac

note "the advice works: a new disk in devid 2's place after the remount read-write it names"
C=$(mkloop c 512M)
run_sd 3 status
fix=$(printf '%s\n' "$OUT" | grep -o "mount -o remount,rw,degraded [^ ]* && btrfs replace start 2 NEWDEV [^ ;)]*" | head -1)
[ -n "$fix" ] || fail "status advises no replace"
if btrfs replace start -B 2 "$C" "$MP" 2>"$SCRATCH/replace.err"; then fail "a replace on the read-only mount worked: the advice's remount is not needed"; fi
note "  the replace alone: $(cat "$SCRATCH/replace.err")"
eval "${fix/NEWDEV/-B $C}" || fail "the advised '$fix' failed"
btrfs filesystem show "$MP" | grep -q MISSING && fail "devid 2 still missing after the replace"
btrfs filesystem show "$MP" | grep -q "devid *2 .* path $C$" || fail "devid 2 is not $C after the replace"
run_sd 3 status
expect_no_out "the kernel reports devid 2 missing"
run_sd 0 stop
exit 0

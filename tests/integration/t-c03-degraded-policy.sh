#!/bin/bash
# C03: degrade only by explicit policy, after the timeout, never when the
# set is complete.
. "$(dirname "$0")/lib.sh"
setup
command -v mkfs.btrfs >/dev/null || skip "mkfs.btrfs missing (btrfs-progs)"

mkraid1 c03 512M
mkdir -p "$SCRATCH/data"
echo "UUID=$FSID  $SCRATCH/data  btrfs  noatime,noauto,x-storaged  0 0" >"$FSTAB"
printf '[storaged]\ndevice-timeout = 2s\ndegraded = after-timeout\n' >"$CONF"

note "both members present: mounted at once, not degraded"
run_sd 0 start
expect_out "assembled, 2/2 members"
expect_no_out "after 2s"
run_sd 0 status
expect_out "2/2 members"
opts=$(findmnt -rn -o OPTIONS --mountpoint "$SCRATCH/data") || fail "not mounted"
case ",$opts," in *,degraded,*) fail "complete set mounted degraded: $opts" ;; esac
run_sd 0 stop
forget "$A" "$B"

note "B detached: mounted degraded after the timeout, loudly, exit 3 (done, degraded)"
detach "$B"
t0=$(date +%s%N)
run_sd 3 start
[ $((($(date +%s%N) - t0) / 1000000)) -ge 1900 ] || fail "degraded before the timeout"
opts=$(findmnt -rn -o OPTIONS --mountpoint "$SCRATCH/data") || fail "not mounted"
case ",$opts," in *,degraded,*) ;; *) fail "not mounted degraded: $opts" ;; esac
expect_out "DEGRADED"
expect_out "devid 2 missing"
run_sd 3 status
expect_out "degraded"
expect_out "1 of 2 members present after 2s, devid 2 missing"
expect_out "decision degraded-by-policy"
note "the same words from a record of an older storaged, which kept them as its reason (and decided nothing it recorded)"
new_status=$(printf '%s\n' "$OUT" | sed 's/; decision [a-z-]*//')
sed -i -e '/^members_present = /d' -e '/^members_expected = /d' -e '/^waited_usec = /d' \
	-e '/^decision = /d' -e '/^wait_policy = /d' -e '/^arrivals = /d' \
	-e 's/^members_note = .*/reason = 1\\040of\\0402\\040members\\040present\\040after\\0402s,\\040devid\\0402\\040missing/' "$STATE/state"
grep -q '^members_' "$STATE/state" && fail "the state file still has the new keys"
run_sd 3 status
[ "$OUT" = "$new_status" ] || fail "status of the old record differs: '$OUT' against '$new_status'"
# a second pass (storaged-remote.service's) must not say "all done" over
# it; a bind of a directory of it is the same filesystem, counted once
mkdir -p "$SCRATCH/data/sub" "$SCRATCH/bind"
echo "$SCRATCH/data/sub  $SCRATCH/bind  none  bind,noauto,x-storaged  0 0" >>"$FSTAB"
run_sd 3 start
run_sd 3 start
expect_out "1 btrfs filesystem mounted earlier is still DEGRADED"
sed -i '$d' "$FSTAB"
run_sd 0 stop
forget "$A"

note "degraded = no: as C02, exit 1"
printf '[storaged]\ndevice-timeout = 2s\ndegraded = no\n' >"$CONF"
run_sd 1 start
is_mountpoint "$SCRATCH/data" && fail "mounted although degraded = no"

note "x-storaged.degraded on the entry allows it even with degraded = no"
forget "$A"
echo "UUID=$FSID  $SCRATCH/data  btrfs  noatime,noauto,x-storaged,x-storaged.degraded,x-storaged.device-timeout=1s  0 0" >"$FSTAB"
run_sd 3 start
opts=$(findmnt -rn -o OPTIONS --mountpoint "$SCRATCH/data") || fail "not mounted"
case ",$opts," in *,degraded,*) ;; *) fail "not mounted degraded: $opts" ;; esac
run_sd 0 stop
exit 0

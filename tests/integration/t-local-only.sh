#!/bin/bash
# start --local (the early boot pass under systemd): a network filesystem,
# what nests below it and what waits on it are left for the start after the
# network is up, at once and without failing; everything else is mounted.
# The next plain start tries them.  No network is needed: the server is in
# TEST-NET-1 (RFC 5737) and nothing may try to reach it in --local.
. "$(dirname "$0")/lib.sh"
setup

mkdir -p "$SCRATCH/nfs" "$SCRATCH/local" "$SCRATCH/src"
cat >"$FSTAB" <<EOT
192.0.2.1:/export  $SCRATCH/nfs        nfs    noauto,x-storaged,x-storaged.mount-timeout=3s  0 0
tmpfs              $SCRATCH/nfs/cache  tmpfs  noauto,x-storaged,size=1M,X-mount.mkdir  0 0
tmpfs              $SCRATCH/local      tmpfs  noauto,x-storaged,size=1M  0 0
$SCRATCH/src       $SCRATCH/local/b    none   bind,noauto,x-storaged,X-mount.mkdir  0 0
tmpfs              $SCRATCH/after      tmpfs  noauto,x-storaged,size=1M,X-mount.mkdir,x-storaged.requires=$SCRATCH/nfs  0 0
EOT

run_sd 0 --dry-run start --local
printf '%s\n' "$OUT" | grep "on $SCRATCH/nfs type nfs" | grep -q "later: needs the network" ||
	fail "dry-run does not leave the nfs entry for later"
printf '%s\n' "$OUT" | grep "on $SCRATCH/nfs/cache " | grep -q "later: waits on a step" ||
	fail "dry-run does not leave the entry below nfs for later"
printf '%s\n' "$OUT" | grep "on $SCRATCH/after " | grep -q "later:" ||
	fail "dry-run does not leave the entry that requires nfs for later"
printf '%s\n' "$OUT" | grep "on $SCRATCH/local " | grep -q "later" && fail "a local entry is left for later"

run_sd 0 start --local
is_mountpoint "$SCRATCH/local" || fail "local tmpfs not mounted"
is_mountpoint "$SCRATCH/local/b" || fail "bind below the local tmpfs not mounted"
is_mountpoint "$SCRATCH/nfs" && fail "nfs mounted in --local"
is_mountpoint "$SCRATCH/nfs/cache" && fail "an entry below nfs was mounted on the bare directory"
[ -d "$SCRATCH/nfs/cache" ] && fail "X-mount.mkdir ran below the nfs mount point that is not there"
is_mountpoint "$SCRATCH/after" && fail "an entry that requires nfs was mounted"
expect_out "left for the start after the network is up"

run_sd 0 status
printf '%s\n' "$OUT" | grep "$SCRATCH/nfs" | grep -q "waiting" || fail "status does not show nfs waiting"
expect_out "needs the network"

note "a plain start tries the network entry (no server: it fails, the local ones stay)"
run_sd 1 start
is_mountpoint "$SCRATCH/local" || fail "plain start lost the local mount"
run_sd 1 status
printf '%s\n' "$OUT" | grep "$SCRATCH/nfs" | grep -q "failed" || fail "status does not show nfs failed after a plain start"
run_sd 0 stop
is_mountpoint "$SCRATCH/local" && fail "stop left the local tmpfs"
exit 0

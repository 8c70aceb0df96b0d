#!/bin/bash
# C17: a filesystem on an iSCSI LUN (`_netdev`, often with
# x-systemd.requires=iscsi.service) in the early pass.  The LUN appears
# only after the network: `start --local` leaves the entry for the later
# pass at once instead of spending the device timeout on it; the later
# `start` mounts it.  Also `_netdev` alone on an absent device, and an
# entry ordered after network-online.target.
. "$(dirname "$0")/lib.sh"
setup
command -v mkfs.ext4 >/dev/null || skip "mkfs.ext4 missing (e2fsprogs)"

LUN=$(mkloop lun 64M)
mkfs.ext4 -q -F -L c17lun "$LUN" || fail "mkfs"
UUID=$(blkid -s UUID -o value "$LUN")
NBD=$(mkloop nbd 64M)
mkfs.ext4 -q -F -L c17nbd "$NBD" || fail "mkfs"
detach "$LUN"
detach "$NBD"
mkdir -p "$SCRATCH/m/lun" "$SCRATCH/m/nbd" "$SCRATCH/m/local" "$SCRATCH/m/q"
printf '[storaged]\ndevice-timeout = 10s\n' >"$CONF"
cat >"$FSTAB" <<EOT
UUID=$UUID    $SCRATCH/m/lun    ext4   defaults,_netdev,x-systemd.requires=iscsi.service,noauto  0 0
LABEL=c17nbd  $SCRATCH/m/nbd    ext4   defaults,_netdev,noauto  0 0
tmpfs         $SCRATCH/m/q      tmpfs  size=1M,noauto,x-storaged,x-systemd.after=network-online.target  0 0
tmpfs         $SCRATCH/m/local  tmpfs  size=1M,noauto,x-storaged  0 0
EOT

# No peer fault to show: systemd orders _netdev mounts after
# remote-fs-pre.target, which is what --local must do by itself.

run_sd 0 --dry-run start --local
printf '%s\n' "$OUT" | grep "on $SCRATCH/m/lun " | grep -q "later:" || fail "dry-run does not leave the LUN for later"
printf '%s\n' "$OUT" | grep "on $SCRATCH/m/nbd " | grep -q "later:" || fail "dry-run does not leave the absent _netdev device for later"
printf '%s\n' "$OUT" | grep "on $SCRATCH/m/q " | grep -q "later:" || fail "dry-run does not leave the network-online entry for later"
printf '%s\n' "$OUT" | grep "wait for UUID=$UUID" | grep -q "later:" || fail "dry-run waits for the LUN in the early pass"

t0=$(date +%s%N)
run_sd 0 start --local
t1=$(date +%s%N)
ms=$(((t1 - t0) / 1000000))
note "early pass took ${ms} ms"
[ "$ms" -lt $((1000 * TIME_SCALE)) ] || fail "the early pass took $ms ms: it waited on what needs the network"
is_mountpoint "$SCRATCH/m/local" || fail "local entry not mounted in the early pass"
is_mountpoint "$SCRATCH/m/lun" && fail "LUN mounted in the early pass"
expect_out "left for the start after the network is up"

note "the network is up: the LUN appears"
LUN=$(attach "$SCRATCH/img/lun.img")
NBD=$(attach "$SCRATCH/img/nbd.img")
udevadm settle 2>/dev/null || true
run_sd 0 start
[ "$(findmnt -rn -o SOURCE --mountpoint "$SCRATCH/m/lun")" = "$LUN" ] || fail "later start did not mount the LUN"
[ "$(findmnt -rn -o SOURCE --mountpoint "$SCRATCH/m/nbd")" = "$NBD" ] || fail "later start did not mount the _netdev device"
is_mountpoint "$SCRATCH/m/q" || fail "later start did not mount the network-online entry"
run_sd 0 stop
is_mountpoint "$SCRATCH/m/lun" && fail "stop left the LUN mounted"
exit 0

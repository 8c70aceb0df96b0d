#!/bin/bash
# Two devices with one tag (a cloned ext4, two filesystems given one
# label): mount(8) silently mounts one of them; storaged mounts neither
# and names both.  Members of one btrfs filesystem share UUID= and LABEL=
# and are no conflict.
. "$(dirname "$0")/lib.sh"
setup
command -v mkfs.ext4 >/dev/null || skip "mkfs.ext4 missing (e2fsprogs)"

A=$(mkloop a 32M)
mkfs.ext4 -q -F -L duptag "$A" || fail "mkfs.ext4"
UUID=$(blkid -o value -s UUID "$A")
cp --sparse=always "$SCRATCH/img/a.img" "$SCRATCH/img/b.img" || fail "cp"
B=$(attach "$SCRATCH/img/b.img")
C=$(mkloop c 32M)
mkfs.ext4 -q -F -L duptag2 "$C" || fail "mkfs.ext4"
D=$(mkloop d 32M)
mkfs.ext4 -q -F -L duptag2 "$D" || fail "mkfs.ext4"
mkdir -p "$SCRATCH/m/a" "$SCRATCH/m/b" "$SCRATCH/m/c" "$SCRATCH/m/t"

note "the fault: mount(8) takes one of the two devices without a word"
mount "LABEL=duptag2" "$SCRATCH/m/c" || fail "mount LABEL=duptag2"
note "mount LABEL=duptag2 mounted $(findmnt -rn -o SOURCE --mountpoint "$SCRATCH/m/c")"
umount "$SCRATCH/m/c"

cat >"$FSTAB" <<EOT
UUID=$UUID    $SCRATCH/m/a  ext4   noauto,x-storaged          0 0
LABEL=duptag  $SCRATCH/m/b  ext4   noauto,x-storaged          0 0
LABEL=duptag2 $SCRATCH/m/c  auto   noauto,x-storaged          0 0
tmpfs         $SCRATCH/m/t  tmpfs  size=4M,noauto,x-storaged  0 0
EOT
printf '[storaged]\ndevice-timeout = 5s\n' >"$CONF"

note "--dry-run shows the conflicts"
run_sd 1 --dry-run
expect_out "'UUID=$UUID' names two devices, '$A' (ext4) and '$B' (ext4)"

note "start: the three entries fail naming both devices each, the tmpfs is mounted"
run_sd 1 start
expect_out "'UUID=$UUID' names two devices, '$A' (ext4) and '$B' (ext4).*new UUID"
expect_out "'LABEL=duptag' names two devices, '$A' (ext4) and '$B' (ext4).*new LABEL"
expect_out "'LABEL=duptag2' names two devices, '$C' (ext4) and '$D' (ext4)"
for m in a b c; do
	is_mountpoint "$SCRATCH/m/$m" && fail "$SCRATCH/m/$m mounted from an ambiguous tag"
done
is_mountpoint "$SCRATCH/m/t" || fail "the independent tmpfs was not mounted"
run_sd 1 status # 1: entries failed
expect_out "names two devices"
run_sd 0 stop

note "the label made unique again: mounted from the device storaged resolved"
e2label "$D" other || fail "e2label"
run_sd 1 start
is_mountpoint "$SCRATCH/m/c" || fail "LABEL=duptag2 not mounted once unique"
[ "$(findmnt -rn -o SOURCE --mountpoint "$SCRATCH/m/c")" = "$C" ] || fail "LABEL=duptag2 not mounted from $C"
run_sd 0 stop

if command -v mkfs.btrfs >/dev/null; then
	note "btrfs RAID1 members share LABEL=: no conflict"
	E=$(mkloop e 512M)
	F=$(mkloop f 512M)
	mkfs.btrfs -q -f -L duptag3 -d raid1 -m raid1 "$E" "$F" >/dev/null || fail "mkfs.btrfs"
	forget "$E" "$F"
	echo "LABEL=duptag3  $SCRATCH/m/a  btrfs  noauto,x-storaged  0 0" >"$FSTAB"
	run_sd 0 start
	is_mountpoint "$SCRATCH/m/a" || fail "the RAID1 by LABEL= was not mounted"
	run_sd 0 stop
fi
exit 0

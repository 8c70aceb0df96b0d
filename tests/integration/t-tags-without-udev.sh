#!/bin/bash
# Tags without udev links (early boot, no udevd, a container): LABEL= and
# UUID= resolve from storaged's own inventory, and that device node is what
# the mount is given.  The peer, mount(8), resolves tags through
# /dev/disk/by-* (libblkid's EVALUATE=udev; its default "udev,scan" falls
# back to probing every device); with udev evaluation only and no link it
# cannot find the device.
. "$(dirname "$0")/lib.sh"
setup
command -v mkfs.ext4 >/dev/null || skip "mkfs.ext4 missing (e2fsprogs)"

LABEL=nolink$$
A=$(mkloop a 32M)
mkfs.ext4 -q -F -L "$LABEL" "$A" || fail "mkfs.ext4"
UUID=$(blkid -o value -s UUID "$A")
command -v udevadm >/dev/null && udevadm settle 2>/dev/null
# the links udev may have made for this test's own device: gone, as without udevd
for l in "/dev/disk/by-label/$LABEL" "/dev/disk/by-uuid/$UUID"; do
	if [ -L "$l" ]; then
		note "removing udev's link $l to $A (this test's device)"
		rm -f "$l"
	fi
done
# libblkid (and so libmount and mount(8)) evaluates tags by udev links only
printf 'EVALUATE=udev\n' >"$SCRATCH/blkid.conf"
export BLKID_CONF=$SCRATCH/blkid.conf
mkdir -p "$SCRATCH/m/l" "$SCRATCH/m/u"

note "the fault: without the link, mount LABEL= finds no device"
if mount "LABEL=$LABEL" "$SCRATCH/m/l" 2>"$SCRATCH/mount.err"; then
	umount "$SCRATCH/m/l"
	fail "mount LABEL=$LABEL found the device without a udev link"
fi
sed 's/^/  | /' "$SCRATCH/mount.err"

cat >"$FSTAB" <<EOT
LABEL=$LABEL  $SCRATCH/m/l  ext4  noauto,x-storaged  0 0
UUID=$UUID    $SCRATCH/m/u  auto  noauto,x-storaged  0 0
EOT
printf '[storaged]\ndevice-timeout = 1s\n' >"$CONF"

note "storaged mounts both from the device it probed"
run_sd 0 start
for m in l u; do
	is_mountpoint "$SCRATCH/m/$m" || fail "$SCRATCH/m/$m not mounted"
	[ "$(findmnt -rn -o SOURCE --mountpoint "$SCRATCH/m/$m")" = "$A" ] || fail "$SCRATCH/m/$m not mounted from $A"
done
run_sd 0 stop
is_mountpoint "$SCRATCH/m/l" && fail "stop left $SCRATCH/m/l"

note "a tag no device has: a bounded wait, then a clear failure"
echo "LABEL=absent$$  $SCRATCH/m/l  ext4  noauto,x-storaged  0 0" >"$FSTAB"
run_sd 1 start
expect_out "device LABEL=absent$$ not found after 1s"
run_sd 0 stop
exit 0

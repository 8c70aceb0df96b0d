#!/bin/bash
# A btrfs RAID1 whose two members are LUKS (dm-crypt) volumes, as in an
# encrypted RAID1 install: the members exist only once unlocked
# (/dev/mapper/NAME appears on `cryptsetup open`).  storaged started while
# both are locked waits for them, and when they are unlocked during
# device-timeout it assembles the filesystem from the mapper devices and
# mounts it complete, not degraded; with one member left locked it fails
# naming the missing devid, mounts nothing degraded and leaves the
# unlocked volume open (unlocking and locking are not storaged's).
. "$(dirname "$0")/lib.sh"
setup
command -v mkfs.btrfs >/dev/null || skip "mkfs.btrfs missing (btrfs-progs)"
command -v cryptsetup >/dev/null || skip "cryptsetup missing (cryptsetup-bin)"
if ! grep -qw crypt <(dmsetup targets 2>/dev/null); then
	modprobe dm_crypt 2>/dev/null
	grep -qw crypt <(dmsetup targets 2>/dev/null) ||
		skip "no dm-crypt in this kernel (modprobe dm_crypt failed: CONFIG_DM_CRYPT)"
fi

MAPS=()
luks_cleanup() {
	local m d
	findmnt -rn -o TARGET | awk -v s="$SCRATCH" 'index($0, s) == 1' | sort -r |
		while read -r m; do umount "$m" 2>/dev/null || umount -l "$m"; done
	for m in "${MAPS[@]}"; do
		d=/dev/mapper/$m
		[ -e "$d" ] || continue
		btrfs device scan --forget "$d" >/dev/null 2>&1
		cryptsetup close "$m" 2>/dev/null
	done
}
CLEANUP_HOOK=luks_cleanup

KEY=$SCRATCH/key
head -c 64 /dev/urandom >"$KEY"
# open NAME DEV: unlock (PBKDF2 with few iterations: seconds, not minutes,
# under emulation; the key is a file, not a passphrase)
luks_open() {
	cryptsetup open --type luks2 --key-file "$KEY" "$2" "$1" || fail "cryptsetup open $2 as $1"
}
luks_close() {
	forget "/dev/mapper/$1"
	cryptsetup close "$1" || fail "cryptsetup close $1"
}
A=$(mkloop a 512M)
B=$(mkloop b 512M)
for d in "$A" "$B"; do
	cryptsetup luksFormat -q --type luks2 --pbkdf pbkdf2 --pbkdf-force-iterations 1000 \
		--key-file "$KEY" "$d" || fail "cryptsetup luksFormat $d"
done
MA=storaged-it-luks-a-$$
MB=storaged-it-luks-b-$$
MAPS=("$MA" "$MB")
luks_open "$MA" "$A"
luks_open "$MB" "$B"
mkfs.btrfs -q -f -L luksraid1 -d raid1 -m raid1 "/dev/mapper/$MA" "/dev/mapper/$MB" >/dev/null ||
	fail "mkfs.btrfs on the unlocked volumes"
FSID=$(blkid -p -o value -s UUID "/dev/mapper/$MA")
[ -n "$FSID" ] || fail "no btrfs UUID on /dev/mapper/$MA"
luks_close "$MA"
luks_close "$MB"
mkdir -p "$SCRATCH/data"
echo "UUID=$FSID  $SCRATCH/data  btrfs  noatime,noauto,x-storaged  0 0" >"$FSTAB"

note "both locked at start, unlocked 2 s and 4 s later: mounted complete"
printf '[storaged]\ndevice-timeout = 60s\ndegraded = no\n' >"$CONF"
sd start >"$SCRATCH/out" 2>&1 &
SD=$!
sleep 2
luks_open "$MA" "$A"
sleep 2
luks_open "$MB" "$B"
wait "$SD"
rc=$?
sed 's/^/  | /' "$SCRATCH/out"
[ "$rc" = 0 ] || fail "start exited $rc with both members unlocked during device-timeout"
is_mountpoint "$SCRATCH/data" || fail "the RAID1 was not mounted"
opts=$(findmnt -rn -o OPTIONS --mountpoint "$SCRATCH/data")
case ",$opts," in *,degraded,*) fail "mounted degraded with both members: $opts" ;; esac
btrfs filesystem show "$SCRATCH/data" >"$SCRATCH/show" 2>&1 || fail "btrfs filesystem show"
grep -q "Total devices 2" "$SCRATCH/show" || { cat "$SCRATCH/show"; fail "not two devices"; }
grep -q missing "$SCRATCH/show" && { cat "$SCRATCH/show"; fail "a member is missing"; }
for m in "$MA" "$MB"; do
	grep -q "$(readlink -f "/dev/mapper/$m")\|/dev/mapper/$m" "$SCRATCH/show" ||
		{ cat "$SCRATCH/show"; fail "/dev/mapper/$m is not a member of the mounted RAID1"; }
done
echo data >"$SCRATCH/data/file" || fail "cannot write to the RAID1"
run_sd 0 stop
is_mountpoint "$SCRATCH/data" && fail "stop left the RAID1 mounted"
[ -e "/dev/mapper/$MA" ] && [ -e "/dev/mapper/$MB" ] || fail "stop closed a LUKS volume"

note "member 2 left locked: refused naming devid 2, volume 1 left open"
luks_close "$MB"
forget "/dev/mapper/$MA"
printf '[storaged]\ndevice-timeout = 3s\ndegraded = no\n' >"$CONF"
run_sd 1 start
expect_out "1 of 2 members present after 3s, devid 2 missing"
expect_out "$FSID"
is_mountpoint "$SCRATCH/data" && fail "the incomplete RAID1 was mounted"
[ -e "/dev/mapper/$MA" ] || fail "storaged closed the unlocked volume"
run_sd 0 stop
exit 0

#!/bin/bash
# A stale RAID1 member: it was away while the filesystem was mounted
# degraded and written to, so its superblock generation is behind.  The
# peer (btrfs device scan + mount) mounts it without a word; storaged says
# so at start, in `scan` and in `status`, and stale-member = refuse | scrub
# refuses the mount or starts a scrub after it.
. "$(dirname "$0")/lib.sh"
setup
command -v mkfs.btrfs >/dev/null || skip "mkfs.btrfs missing (btrfs-progs)"

A=$(mkloop a 512M)
B=$(mkloop b 512M)
mkfs.btrfs -q -f -L stale -d raid1 -m raid1 "$A" "$B" >/dev/null || fail "mkfs.btrfs"
FSID=$(blkid -o value -s UUID "$A")
forget "$A" "$B"
mkdir -p "$SCRATCH/m/data"

gen() {
	btrfs inspect-internal dump-super "$1" | awk '$1 == "generation" { print $2 }'
}

note "devid 2 away: mounted degraded, written to, unmounted"
detach "$B"
mount -t btrfs -o degraded "$A" "$SCRATCH/m/data" || fail "degraded mount"
dd if=/dev/urandom of="$SCRATCH/m/data/written-while-away" bs=1M count=4 status=none || fail "write"
sync
umount "$SCRATCH/m/data" || fail "umount"
forget "$A"
B=$(attach "$SCRATCH/img/b.img")
GA=$(gen "$A")
GB=$(gen "$B")
[ "$GB" -lt "$GA" ] || fail "devid 2 is not behind: generations $GA and $GB"
note "generations: devid 1 $GA, devid 2 $GB"

note "the fault: btrfs device scan + mount (read-only, to keep it stale) mounts without a word"
btrfs device scan "$A" >/dev/null && btrfs device scan "$B" >/dev/null || fail "btrfs device scan"
mount -t btrfs -o ro "$A" "$SCRATCH/m/data" 2>"$SCRATCH/mount.err" || fail "mount: $(cat "$SCRATCH/mount.err")"
[ -s "$SCRATCH/mount.err" ] && fail "mount said something: $(cat "$SCRATCH/mount.err")"
umount "$SCRATCH/m/data"
forget "$A" "$B"
[ "$(gen "$B")" = "$GB" ] || fail "the read-only mount changed devid 2's generation"

want="devid 2 ('$B') is stale: generation $GB against $GA"

note "scan shows the stale member, and exits 1"
run_scan 1
expect_out "$want"
expect_out "run a scrub"

note "stale-member = refuse: not mounted, with the reason"
echo "UUID=$FSID  $SCRATCH/m/data  btrfs  noauto,x-storaged  0 0" >"$FSTAB"
printf '[storaged]\ndevice-timeout = 5s\nstale-member = refuse\n' >"$CONF"
run_sd 1 start
expect_out "$want"
expect_out "stale-member = refuse"
is_mountpoint "$SCRATCH/m/data" && fail "mounted despite stale-member = refuse"
run_sd 1 status # 1: an entry failed
expect_out "stale-member = refuse"
run_sd 0 stop

note "stale-member = warn (the default), mounted read-only: warned at start, shown in status"
echo "UUID=$FSID  $SCRATCH/m/data  btrfs  ro,noauto,x-storaged  0 0" >"$FSTAB"
printf '[storaged]\ndevice-timeout = 5s\n' >"$CONF"
run_sd 0 start
expect_out "warning: .*$want"
is_mountpoint "$SCRATCH/m/data" || fail "not mounted with stale-member = warn"
run_sd 0 status
expect_out "is stale: generation $GB against $GA"
run_sd 0 stop
[ "$(gen "$B")" = "$GB" ] || fail "the read-only mount changed devid 2's generation"

note "stale-member = scrub: mounted, and a scrub started on it"
command -v btrfs >/dev/null || skip "btrfs missing (btrfs-progs)"
echo "UUID=$FSID  $SCRATCH/m/data  btrfs  noauto,x-storaged  0 0" >"$FSTAB"
printf '[storaged]\ndevice-timeout = 5s\nstale-member = scrub\n' >"$CONF"
run_sd 0 start
expect_out "scrub started"
is_mountpoint "$SCRATCH/m/data" || fail "not mounted with stale-member = scrub"
for _ in $(seq 100); do
	st=$(btrfs scrub status "$SCRATCH/m/data" 2>&1)
	printf '%s\n' "$st" | grep -q "Status:.*finished" && break
	sleep 0.3
done
printf '%s\n' "$st" | sed 's/^/  | /'
printf '%s\n' "$st" | grep -q "Status:.*finished" || fail "no finished scrub on $SCRATCH/m/data"
[ "$(wc -c <"$SCRATCH/m/data/written-while-away")" = $((4 * 1024 * 1024)) ] || fail "data lost"
run_sd 0 stop
[ "$(gen "$B")" = "$(gen "$A")" ] || fail "devid 2 still behind after the scrub: $(gen "$B") against $(gen "$A")"
run_scan 0
expect_no_out "is stale"
exit 0

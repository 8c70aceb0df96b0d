#!/bin/bash
# A stale RAID1 member: it was away while the filesystem was mounted
# degraded and written to, so its superblock generation is behind.  The
# peer (btrfs device scan + mount) mounts it without a word; storaged says
# so at start, in `scan` and in `status`, and stale-member = refuse | scrub
# refuses the mount or starts a scrub after it.  The advice works where
# it is given (a read-only mount is remounted read-write first), and once
# a scrub has finished status says nothing more of the member.
. "$(dirname "$0")/lib.sh"
setup
command -v mkfs.btrfs >/dev/null || skip "mkfs.btrfs missing (btrfs-progs)"

mkraid1 stale 512M
# btrfs-progs records each scrub in /var/lib/btrfs/scrub.status.FSID
# (which status reads): this filesystem's record goes with it
[ -d /var/lib/btrfs ] && SCRUB_DIR_WAS=1 || SCRUB_DIR_WAS=
drop_scrub_record() {
	rm -f "/var/lib/btrfs/scrub.status.$FSID"
	[ -n "$SCRUB_DIR_WAS" ] || rmdir /var/lib/btrfs 2>/dev/null
}
CLEANUP_HOOK=drop_scrub_record
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

# a copy of the stale member, to make it stale again after a part that
# brings it up to date
cp --sparse=always "$SCRATCH/img/b.img" "$SCRATCH/img/b-stale.img" || fail "cp"

note "scan shows the stale member, and exits 1; not mounted: no mount point to name"
run_scan 1
expect_out "$want"
expect_out "only a scrub rewrites what it missed: mount the filesystem, then run \`btrfs scrub start\` on its mount point"
expect_no_out "MOUNTPOINT"

note "stale-member = refuse: not mounted, with the reason"
echo "UUID=$FSID  $SCRATCH/m/data  btrfs  noauto,x-storaged  0 0" >"$FSTAB"
printf '[storaged]\ndevice-timeout = 5s\nstale-member = refuse\n' >"$CONF"
run_sd 1 start
expect_out "$want"
expect_out "stale-member = refuse"
is_mountpoint "$SCRATCH/m/data" && fail "mounted despite stale-member = refuse"
expect_out "btrfs $FSID: decision=stale-refused members=2/2"
run_sd 1 status # 1: an entry failed
expect_out "stale-member = refuse"
grep -q "^decision = stale-refused" "$STATE/state" || fail "no stale-refused decision in the state"
run_sd 0 stop

note "stale-member = warn (the default), mounted read-only: warned at start, shown in status"
echo "UUID=$FSID  $SCRATCH/m/data  btrfs  ro,noauto,x-storaged  0 0" >"$FSTAB"
printf '[storaged]\ndevice-timeout = 5s\n' >"$CONF"
run_sd 0 start
RO_FIX="only a scrub rewrites what it missed, and none can on a read-only mount: run \`mount -o remount,rw $SCRATCH/m/data\`, then \`btrfs scrub start $SCRATCH/m/data\`"
expect_out "warning: .*$want.*: $RO_FIX"
is_mountpoint "$SCRATCH/m/data" || fail "not mounted with stale-member = warn"
if btrfs scrub start -B "$SCRATCH/m/data" >/dev/null 2>&1; then fail "a scrub on the read-only mount worked: the advice's remount is not needed"; fi
run_sd 0 status
expect_out "is stale: generation $GB against $GA"
expect_out "$RO_FIX"
note "scan names the mount point it is mounted on"
run_scan 1
expect_out "$RO_FIX"
run_sd 0 stop
[ "$(gen "$B")" = "$GB" ] || fail "the read-only mount changed devid 2's generation"

note "stale-member = warn, mounted read-write: once a commit has written every superblock, status says so from the superblocks (live), and still advises the scrub"
echo "UUID=$FSID  $SCRATCH/m/data  btrfs  noauto,x-storaged  0 0" >"$FSTAB"
run_sd 0 start
expect_out "$want"
touch "$SCRATCH/m/data/commit" && sync -f "$SCRATCH/m/data/commit"
[ "$(gen "$B")" = "$(gen "$A")" ] || fail "devid 2's generation has not caught up after a commit: $(gen "$B") against $(gen "$A")"
run_sd 0 status
expect_no_out "is stale: generation $GB against $GA of the others; it was away while the filesystem was written to: only"
expect_out "$want.* (when assembled); its generation has caught up since: only a scrub rewrites what it missed: run \`btrfs scrub start $SCRATCH/m/data\`"
note "the scrub status advises, finished: status no longer shows the stale member"
btrfs scrub start -B "$SCRATCH/m/data" >"$SCRATCH/scrub.out" 2>&1 || fail "btrfs scrub start -B: $(cat "$SCRATCH/scrub.out")"
run_sd 0 status
expect_no_out "is stale"
expect_no_out "scrub"
run_sd 0 stop
note "devid 2 made stale again (the copy made above)"
detach "$B"
forget "$A"
cp --sparse=always "$SCRATCH/img/b-stale.img" "$SCRATCH/img/b.img" || fail "cp"
B=$(attach "$SCRATCH/img/b.img")
forget "$A" "$B"
[ "$(gen "$B")" = "$GB" ] || fail "devid 2 is not stale again: $(gen "$B")"
want="devid 2 ('$B') is stale: generation $GB against $(gen "$A")"
GA=$(gen "$A")

note "stale-member = scrub: mounted, and a scrub started on it"
command -v btrfs >/dev/null || skip "btrfs missing (btrfs-progs)"
echo "UUID=$FSID  $SCRATCH/m/data  btrfs  noauto,x-storaged  0 0" >"$FSTAB"
printf '[storaged]\ndevice-timeout = 5s\nstale-member = scrub\n' >"$CONF"
run_sd 0 start
expect_out "scrub started"
expect_out "storaged starts a scrub once it has mounted it on $SCRATCH/m/data (stale-member = scrub)"
expect_no_out "run \`btrfs scrub start"
is_mountpoint "$SCRATCH/m/data" || fail "not mounted with stale-member = scrub"
for _ in $(seq 100); do
	st=$(btrfs scrub status "$SCRATCH/m/data" 2>&1)
	printf '%s\n' "$st" | grep -q "Status:.*finished" && break
	sleep 0.3
done
printf '%s\n' "$st" | sed 's/^/  | /'
printf '%s\n' "$st" | grep -q "Status:.*finished" || fail "no finished scrub on $SCRATCH/m/data"
[ "$(wc -c <"$SCRATCH/m/data/written-while-away")" = $((4 * 1024 * 1024)) ] || fail "data lost"
note "status: storaged's scrub finished, nothing more of the stale member, no advice"
run_sd 0 status
expect_no_out "is stale"
expect_no_out "run \`btrfs scrub start"
run_sd 0 stop
[ "$(gen "$B")" = "$(gen "$A")" ] || fail "devid 2 still behind after the scrub: $(gen "$B") against $(gen "$A")"
run_scan 0
expect_no_out "is stale"
exit 0

#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# C18: an area over a directory that is itself a mount point (/var/log on
# its own volume).  storaged knows its own mounts by their IDs, never by
# "something is mounted on the path": the area is set up over the volume,
# seeded from it, and synced back into it by `sync` and `stop`.  It used to
# be skipped as "already mounted": start exited 0 with nothing done.
. "$(dirname "$0")/lib-area.sh"
command -v mkfs.ext4 >/dev/null || skip "mkfs.ext4 missing"

V=$SCRATCH/m/varlog
mkdir -p "$V"
truncate -s 64M "$SCRATCH/vol.img"
mkfs.ext4 -q -F "$SCRATCH/vol.img" || fail "mkfs.ext4"
mount -o loop "$SCRATCH/vol.img" "$V" || skip "cannot loop-mount an image here"
mkdir -p "$V/nginx" && echo "old line" >"$V/nginx/access.log" && echo sys >"$V/syslog"
write_conf <<EOT
[area varlog]
path = $V
backend = tmpfs
size = 32M
persist = yes
EOT
VOLDEV=$(findmnt -rn -o MAJ:MIN --mountpoint "$V")

# The peer: mount(8) knows mounts by their path only; "something is mounted
# there" says nothing about who mounted it (what the old planner tested).
findmnt -rn --mountpoint "$V" >/dev/null || fail "the volume is not mounted"
pass "peer: findmnt sees a mount on $V although no area is set up there"

expect_rc 0 start
[ "$(findmnt -rn -o FSTYPE --mountpoint "$V" | tail -1)" = tmpfs ] ||
	{ cat "$OUT"; fail "the area is not over the volume (start exited 0 with nothing done)"; }
[ "$(cat "$V/nginx/access.log")" = "old line" ] || fail "the area was not seeded from the volume"
expect_rc 0 status
grep -E "^area +varlog +$V +active" "$OUT" >/dev/null || { cat "$OUT"; fail "status does not show the area active"; }
pass "set up over the volume, seeded from it"

echo "new line" >>"$V/nginx/access.log"
echo fresh >"$V/new.log"
expect_rc 0 sync varlog
LOWER=$RUN/areas/varlog/lower
[ "$(findmnt -rn -o MAJ:MIN --mountpoint "$LOWER")" = "$VOLDEV" ] || fail "the private lower view is not the volume"
grep -q "new line" "$LOWER/nginx/access.log" && [ -f "$LOWER/new.log" ] || fail "sync did not write into the volume"
rm "$V/syslog"
expect_rc 0 stop
[ "$(findmnt -rn -o MAJ:MIN --mountpoint "$V")" = "$VOLDEV" ] || fail "stop did not leave the volume mounted on $V"
[ "$(findmnt -rn --mountpoint "$V" | wc -l)" = 1 ] || fail "stop left more than the volume on $V"
[ "$(tail -1 "$V/nginx/access.log")" = "new line" ] && [ "$(cat "$V/new.log")" = fresh ] ||
	fail "stop did not sync back into the volume"
[ -e "$V/syslog" ] && fail "a file deleted in the area is still on the volume"
pass "sync and stop write back into the volume; the volume stays mounted"

# a second start after stop sets it up again (identity, not the path)
expect_rc 0 start
[ "$(findmnt -rn -o FSTYPE --mountpoint "$V" | tail -1)" = tmpfs ] || fail "second start did nothing"
expect_rc 0 start
[ "$(findmnt -rn --mountpoint "$V" | wc -l)" = 2 ] || fail "a start while active mounted again"
[ -s "$OUT" ] && { cat "$OUT"; fail "a start while active says something"; }
expect_rc 0 stop
[ "$(findmnt -rn --mountpoint "$V" | wc -l)" = 1 ] || fail "stop left the area"
pass "start is idempotent by the area's mount ID"

#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# C19: an area over a directory with a filesystem mounted below it
# (/var/log/audit on its own partition below a RAM /var/log).  The audit
# filesystem stays visible at its path: carried onto the area, never copied
# into RAM nor synced into the directory below it, and left mounted where it
# was by stop.  A filesystem mounted on the area after start makes stop fail
# once, naming it and how to free it, never "busy" for ever.
. "$(dirname "$0")/lib-area.sh"
command -v mkfs.ext4 >/dev/null || skip "mkfs.ext4 missing"

V=$SCRATCH/m/varlog
mkdir -p "$V/nginx" "$V/audit" && echo "old line" >"$V/nginx/access.log"
# Shared, as every mount is where systemd is PID 1 (it makes "/" rshared
# at boot), whatever the mount this test runs on: the mounts below get
# peer groups of their own, and a clone of one is its peer.  Private
# first: a bind of a shared mount is its peer, and each mount below
# would show twice.
mount --bind "$SCRATCH/m" "$SCRATCH/m" && mount --make-private "$SCRATCH/m" &&
	mount --make-shared "$SCRATCH/m" || fail "cannot make $SCRATCH/m a shared mount"
echo "under the mount" >"$V/audit/hidden"
truncate -s 64M "$SCRATCH/audit.img"
mkfs.ext4 -q -F "$SCRATCH/audit.img" || fail "mkfs.ext4"
mount -o loop "$SCRATCH/audit.img" "$V/audit" || skip "cannot loop-mount an image here"
echo "audit record" >"$V/audit/audit.log"
AUDITDEV=$(findmnt -rn -o MAJ:MIN --mountpoint "$V/audit")
# one deeper down, with a mount below it in turn
mkdir -p "$V/nginx/spool" && mount -t tmpfs spool "$V/nginx/spool"
mkdir "$V/nginx/spool/in" && mount -t tmpfs spoolin "$V/nginx/spool/in" && echo queued >"$V/nginx/spool/in/q"
write_conf <<EOT
[area varlog]
path = $V
backend = tmpfs
size = 32M
persist = yes
EOT

# The peer: a plain mount over the directory (what a naive RAM /var/log
# does) hides the filesystem below it.
mount -t tmpfs none "$V"
[ -e "$V/audit/audit.log" ] && fail "peer: a plain tmpfs over $V still shows the audit filesystem"
umount "$V"
pass "peer: a plain mount over $V hides $V/audit"

expect_rc 0 start
[ "$(findmnt -rn -o FSTYPE --mountpoint "$V" | tail -1)" = tmpfs ] || fail "the area is not over $V"
[ "$(cat "$V/nginx/access.log")" = "old line" ] || fail "not seeded"
[ "$(cat "$V/audit/audit.log" 2>/dev/null)" = "audit record" ] || fail "the audit filesystem is hidden by the area"
[ "$(findmnt -rn -o MAJ:MIN --mountpoint "$V/audit" | tail -1)" = "$AUDITDEV" ] || fail "$V/audit is not the audit filesystem"
[ "$(cat "$V/nginx/spool/in/q" 2>/dev/null)" = queued ] || fail "the filesystems below $V/nginx are hidden by the area"
AREA=$RUN/areas/varlog/area
[ -e "$AREA/audit/audit.log" ] && fail "the audit filesystem was copied into RAM"
expect_rc 0 status
grep -E "^area +varlog +$V +active" "$OUT" >/dev/null || { cat "$OUT"; fail "status does not show the area active"; }
pass "the audit filesystem stays visible at $V/audit, not copied into RAM"

echo "audit 2" >>"$V/audit/audit.log"
echo "new line" >>"$V/nginx/access.log"
expect_rc 0 sync varlog
LOWER=$RUN/areas/varlog/lower
[ -e "$LOWER/audit/audit.log" ] && fail "sync copied the audit filesystem into the directory below it"
[ "$(cat "$LOWER/audit/hidden")" = "under the mount" ] || fail "sync lost what the audit mount hides"
grep -q "new line" "$LOWER/nginx/access.log" || fail "sync did not write back"
[ -e "$LOWER/nginx/spool/in" ] && fail "sync copied a filesystem mounted below $V/nginx into the directory"
expect_rc 0 stop
[ "$(findmnt -rn --mountpoint "$V" | wc -l)" = 0 ] || fail "stop left something on $V"
[ "$(findmnt -rn -o MAJ:MIN --mountpoint "$V/audit")" = "$AUDITDEV" ] || fail "stop did not leave the audit filesystem mounted"
[ "$(findmnt -rn --mountpoint "$V/audit" | wc -l)" = 1 ] || fail "stop left a second mount on $V/audit"
[ "$(tail -1 "$V/audit/audit.log")" = "audit 2" ] || fail "a write to $V/audit did not land on the audit filesystem"
[ "$(tail -1 "$V/nginx/access.log")" = "new line" ] || fail "stop did not sync back"
[ "$(cat "$V/nginx/spool/in/q" 2>/dev/null)" = queued ] ||
	{ grep -F "$SCRATCH" /proc/self/mountinfo; fail "stop did not leave $V/nginx/spool/in mounted"; }
[ "$(findmnt -rn --mountpoint "$V/nginx/spool" | wc -l)" = 1 ] || fail "stop left a second mount on $V/nginx/spool"
umount "$V/audit"
[ "$(ls -A "$V/audit")" = hidden ] || fail "something was synced into the directory below the audit mount: $(ls -A "$V/audit")"
pass "sync and stop leave the audit filesystem out; stop leaves it mounted"

# a process in the area holds it: stop fails naming it, and the audit
# filesystem stays visible meanwhile; once it is gone stop finishes
mount -o loop "$SCRATCH/audit.img" "$V/audit"
expect_rc 0 start
hold_in "$V/nginx"
expect_rc 1 stop
grep -q "pid $HOLDER" "$OUT" || { cat "$OUT"; fail "stop does not name the process that holds the area"; }
[ "$(head -1 "$V/audit/audit.log" 2>/dev/null)" = "audit record" ] || fail "a stop that failed busy hid the audit filesystem"
kill $HOLDER && wait $HOLDER 2>/dev/null
expect_rc 0 stop
[ "$(findmnt -rn -o MAJ:MIN --mountpoint "$V/audit")" = "$AUDITDEV" ] || fail "the audit filesystem is not mounted after stop"
[ "$(findmnt -rn --mountpoint "$V/audit" | wc -l)" = 1 ] || fail "stop left a second mount on $V/audit"
pass "stop held by a process: names it, the audit filesystem stays visible, then finishes"

# mounted below the area after start: visible; stop names it once
expect_rc 0 start
mkdir -p "$V/late"
mount -t tmpfs late "$V/late"
echo x >"$V/late/f"
expect_rc 1 stop
grep -q "$V/late.*umount $V/late" "$OUT" || { cat "$OUT"; fail "stop does not name the mount made after start and how to free it"; }
[ "$(cat "$V/audit/audit.log" | head -1)" = "audit record" ] || fail "the failed stop hid the audit filesystem"
umount "$V/late"
expect_rc 0 stop
[ "$(findmnt -rn --mountpoint "$V" | wc -l)" = 0 ] || fail "stop left something on $V"
[ "$(findmnt -rn -o MAJ:MIN --mountpoint "$V/audit")" = "$AUDITDEV" ] || fail "the audit filesystem is not mounted after stop"
pass "a mount made after start: stop names it, then finishes once it is unmounted"

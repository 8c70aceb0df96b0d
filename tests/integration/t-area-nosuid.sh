#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# C20: an area is mounted nosuid,nodev by default, both the area's own
# mount and its bind over the directory, so that a set-user-ID file a user
# plants in the directory does not run with root's rights from the area;
# "nosuid = no" and "nodev = no" ask otherwise.  And start names, with its
# pid, a process whose working directory is in the directory it covers.
. "$(dirname "$0")/lib-area.sh"

command -v findmnt >/dev/null || skip "findmnt missing"
command -v setpriv >/dev/null || skip "setpriv missing"

P=$SCRATCH/dir
mkdir -p "$P"
chmod 0755 "$SCRATCH" "$P"
cp "$(command -v id)" "$P/suid-id"
chown root:root "$P/suid-id"
chmod 4755 "$P/suid-id"
AREA=$RUN/areas/s/area

# opts MOUNTPOINT: the per-mount options of what is on top of it
opts() { findmnt -n -o VFS-OPTIONS --mountpoint "$1" | tail -n 1; }
has() { case ",$1," in *",$2,"*) return 0 ;; esac; return 1; }

conf() {
	write_conf <<EOT
[area s]
path = $P
backend = tmpfs
size = 16M
$1
EOT
}

conf ""
hold_in "$P"
SLEEP=$HOLDER
expect_rc 0 start
kill "$SLEEP" 2>/dev/null
wait "$SLEEP" 2>/dev/null
grep -q "pid $SLEEP (sleep) has its working directory under $P" "$OUT" ||
	{ cat "$OUT"; fail "start did not name pid $SLEEP, whose working directory is in $P"; }
pass "start names the process with its working directory in the directory"
for m in "$AREA" "$P"; do
	o=$(opts "$m")
	has "$o" nosuid && has "$o" nodev || fail "$m is mounted '$o', not nosuid,nodev"
done
[ -u "$P/suid-id" ] || fail "the seed lost the set-user-ID bit"
euid=$(setpriv --reuid=65534 --regid=65534 --clear-groups "$P/suid-id" -u 2>/dev/null) ||
	skip "cannot run a program from $P as uid 65534"
[ "$euid" = 65534 ] || fail "a set-user-ID file in the area ran with euid $euid"
pass "the area and its bind are nosuid,nodev; a set-user-ID file runs as its caller"
expect_rc 0 stop
is_mountpoint "$P" && fail "still covered after stop"

conf "nosuid = no
nodev = no"
expect_rc 0 start
for m in "$AREA" "$P"; do
	o=$(opts "$m")
	has "$o" nosuid && fail "$m is mounted nosuid ('$o') with nosuid = no"
	has "$o" nodev && fail "$m is mounted nodev ('$o') with nodev = no"
done
expect_rc 0 stop
is_mountpoint "$P" && fail "still covered after stop"
pass "nosuid = no, nodev = no: neither"
exit 0

#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# C26: one entry's failure is that entry's.  In a shared persist area
# (1777) user A holds a write lease on a file of theirs and a fanotify
# listener denies every open of a third file: the sync waits for the lease
# as any opener does (at most /proc/sys/fs/lease-break-time), commits every
# other change, names the file it could not read and says where it is
# kept (exit 1); once it is readable the next sync takes it (exit 0).  The
# sync deletes on disk only what the area once had: a socket in the
# directory, which the seed does not copy, stays; `seed = no` with
# `persist = yes`, which would empty the directory at the first sync, is
# refused and changes nothing.  The same with the directory on a loop
# ext4 (the lower filesystem a real persist area has) instead of the
# test's filesystem; a file removed from the area while the sync runs (the
# sync goes on, the next one carries the deletion); names that are not
# valid UTF-8, synced as any other and named legibly in the error.
. "$(dirname "$0")/lib-area.sh"

DENY=${DENY_OPEN:-$(dirname "$STORAGED")/tests/integration/deny-open}
[ -x "$DENY" ] || skip "deny-open not built at '$DENY'"
# the lease holder runs as a user: a python3 that users can run
PY=/usr/bin/python3
[ -x "$PY" ] || skip "no /usr/bin/python3 (the lease holder and the socket)"
LBT=/proc/sys/fs/lease-break-time
OLD_LBT=$(cat $LBT)
PIDS=""
LOOP=""
c26_cleanup() {
	for p in $PIDS; do kill "$p" 2>/dev/null; done
	wait 2>/dev/null
	echo "$OLD_LBT" >$LBT
	cleanup
	[ -n "$LOOP" ] && losetup -d "$LOOP"
}
trap c26_cleanup EXIT
echo 1 >$LBT # the kernel's wait for a lease holder, in seconds

chmod 0755 "$SCRATCH" # the users reach the directory

# lease_and_denied P: the area over P; a socket, a leased file, a file no
# open may read
lease_and_denied() {
P=$1
mkdir -p "$P/sub"
chmod 1777 "$P"
echo old-a >"$P/a-file" && chown 1234:1234 "$P/a-file"
echo old-b >"$P/sub/b-file" && chown 1235:1235 "$P/sub/b-file" "$P/sub"
echo old-d >"$P/denied" && chown 1235:1235 "$P/denied"
"$PY" -c 'import socket,sys; socket.socket(socket.AF_UNIX).bind(sys.argv[1])' "$P/sock"
[ -S "$P/sock" ] || fail "could not make the socket"

write_conf <<EOT
[area shared]
path = $P
backend = tmpfs
size = 64M
mode = 1777
persist = yes
EOT
LOWER=$RUN/areas/shared/lower
expect_rc 0 start
sleep 0.1 # past the coarse clock tick (1-10 ms) of the seed's baseline
as() { local u=$1; shift; setpriv --reuid="$u" --regid="$u" --clear-groups "$@"; }
as 1234 sh -c "echo new-a >'$P/a-file'"
as 1235 sh -c "echo new-b >'$P/sub/b-file'"
as 1235 sh -c "echo new-d >'$P/denied'"
expect_rc 0 sync shared
[ -S "$LOWER/sock" ] || fail "the sync deleted the socket of the directory, which the area never had"
pass "a socket of the directory (not seeded) survives the sync"

as 1234 sh -c "echo newer-a >'$P/a-file'"
as 1235 sh -c "echo newer-b >'$P/sub/b-file'"
as 1235 sh -c "echo newer-d >'$P/denied'"
# user A's write lease; SIGIO ignored: the holder never gives it up, the
# kernel breaks it after lease-break-time
setpriv --reuid=1234 --regid=1234 --clear-groups "$PY" -c '
import fcntl, os, signal, sys, time
signal.signal(signal.SIGIO, signal.SIG_IGN)
fd = os.open(sys.argv[1], os.O_RDWR)
fcntl.fcntl(fd, 1024, fcntl.F_WRLCK)  # F_SETLEASE
print("ready", flush=True)
time.sleep(60)' "$P/a-file" >"$SCRATCH/lease.out" 2>&1 &
PIDS="$PIDS $!"
"$DENY" "$P/denied" 60 >"$SCRATCH/deny.out" 2>&1 &
PIDS="$PIDS $!"
for i in $(seq 50); do
	grep -q ready "$SCRATCH/lease.out" && grep -q ready "$SCRATCH/deny.out" && break
	sleep 0.1
done
grep -q ready "$SCRATCH/lease.out" || fail "the lease holder did not start: $(cat "$SCRATCH/lease.out")"
grep -q ready "$SCRATCH/deny.out" || { grep -q "Invalid\|not supported" "$SCRATCH/deny.out" && skip "no fanotify permission events"; fail "deny-open did not start: $(cat "$SCRATCH/deny.out")"; }
cat "$P/denied" 2>/dev/null && fail "deny-open does not deny"

t0=$(date +%s)
expect_rc 1 sync shared
t=$(($(date +%s) - t0))
cat "$OUT"
[ "$t" -le $((1 + 5)) ] || fail "the sync took ${t}s with a lease-break-time of 1s"
[ "$(cat "$LOWER/sub/b-file")" = newer-b ] || fail "user B's change was not synced because of other users' files"
[ "$(cat "$LOWER/a-file")" = newer-a ] || fail "the leased file was not synced after lease-break-time"
pass "a leased file is synced after the kernel's lease-break-time (${t}s), other files too"
grep -q "'denied'" "$OUT" || fail "the error does not name the file that could not be read"
grep -q "$P" "$OUT" || fail "the error does not say where the file is kept"
[ "$(cat "$LOWER/denied")" = new-d ] || fail "the directory lost the old version of the unreadable file"
kill $PIDS 2>/dev/null
wait 2>/dev/null
PIDS=""
[ "$(cat "$P/denied")" = newer-d ] || fail "the area lost the unreadable file"
pass "an unreadable file is named, kept in the area, its old version in the directory; the rest is synced (exit 1)"

expect_rc 0 sync shared
[ "$(cat "$LOWER/denied")" = newer-d ] || fail "the next sync did not take the file once readable"
expect_rc 0 stop
[ -S "$P/sock" ] || fail "stop deleted the socket of the directory"
[ "$(cat "$P/denied")" = newer-d ] && [ "$(cat "$P/a-file")" = newer-a ] || fail "stop lost a file"
pass "once readable the file is synced; the socket is still there after stop"
}

lease_and_denied "$SCRATCH/dir"

echo "# the directory on a loop ext4"
command -v mkfs.ext4 >/dev/null || skip "mkfs.ext4 missing"
truncate -s 64M "$SCRATCH/ext4.img"
mkfs.ext4 -q -F "$SCRATCH/ext4.img" || fail "mkfs.ext4"
LOOP=$(losetup -f --show "$SCRATCH/ext4.img") || fail "losetup"
mkdir -p "$SCRATCH/ext4"
mount -t ext4 "$LOOP" "$SCRATCH/ext4" || fail "mounting the ext4"
chmod 0755 "$SCRATCH/ext4"
lease_and_denied "$SCRATCH/ext4/dir"
pass "on ext4: the same"

# persist_conf NAME DIR: a persist area NAME over DIR
persist_conf() {
	write_conf <<EOT
[area $1]
path = $2
backend = tmpfs
size = 64M
persist = yes
EOT
}

echo "# a file removed from the area while the sync reads the area"
P=$SCRATCH/ext4/vanish
mkdir -p "$P/sub"
for f in a b c; do echo "old $f" >"$P/sub/$f"; done
persist_conf vanish "$P"
LOWER=$RUN/areas/vanish/lower
expect_rc 0 start
sleep 0.1
for f in a b c; do echo "new $f" >"$P/sub/$f"; done
echo other >"$P/other"
# the first of a and b that the sync opens makes the other vanish
"$DENY" --vanish "$P/sub/a" "$P/sub/b" 60 >"$SCRATCH/vanish.out" 2>&1 &
PIDS="$PIDS $!"
for i in $(seq 50); do grep -q ready "$SCRATCH/vanish.out" && break; sleep 0.1; done
grep -q ready "$SCRATCH/vanish.out" || fail "deny-open --vanish did not start: $(cat "$SCRATCH/vanish.out")"
sd sync vanish
rc=$?
cat "$OUT"
kill $PIDS 2>/dev/null
wait 2>/dev/null
PIDS=""
gone=a
[ -e "$P/sub/a" ] && gone=b
[ ! -e "$P/sub/$gone" ] || fail "neither a nor b vanished: $(cat "$SCRATCH/vanish.out")"
kept=$([ $gone = a ] && echo b || echo a)
[ "$rc" = 0 ] || fail "a file removed during the sync failed the sync (exit $rc)"
[ "$(cat "$LOWER/sub/$kept")" = "new $kept" ] && [ "$(cat "$LOWER/sub/c")" = "new c" ] &&
	[ "$(cat "$LOWER/other")" = other ] || fail "the other changes were not synced"
case "$(cat "$LOWER/sub/$gone" 2>/dev/null)" in
"old $gone" | "new $gone" | "") ;;
*) fail "the vanished file is torn in the directory" ;;
esac
expect_rc 0 sync vanish
[ ! -e "$LOWER/sub/$gone" ] || fail "the next sync did not carry the deletion of '$gone'"
expect_rc 0 stop
[ ! -e "$P/sub/$gone" ] && [ "$(cat "$P/sub/$kept")" = "new $kept" ] || fail "stop lost a change"
pass "a file removed during the sync: the sync goes on (exit 0), the next carries the deletion"

echo "# names that are not valid UTF-8"
P=$SCRATCH/ext4/names
L1=$'caf\xe9'          # Latin-1
L2=$'bad\xff\xfe'      # never UTF-8
L3=$'dir\xc3'          # a cut sequence, a directory
mkdir -p "$P/$L3"
echo "old 1" >"$P/$L1"
echo "old 3" >"$P/$L3/inner"
persist_conf names "$P"
LOWER=$RUN/areas/names/lower
expect_rc 0 start
[ "$(cat "$P/$L1")" = "old 1" ] && [ "$(cat "$P/$L3/inner")" = "old 3" ] || fail "the seed lost a non-UTF-8 name"
sleep 0.1
echo "new 1" >"$P/$L1"
echo "new 2" >"$P/$L2"
echo "new 3" >"$P/$L3/inner"
expect_rc 0 sync names
[ "$(cat "$LOWER/$L1")" = "new 1" ] && [ "$(cat "$LOWER/$L2")" = "new 2" ] &&
	[ "$(cat "$LOWER/$L3/inner")" = "new 3" ] || fail "a non-UTF-8 name was not synced"
pass "non-UTF-8 names are seeded and synced"
echo "newer 2" >"$P/$L2"
echo "newer 1" >"$P/$L1"
"$DENY" "$P/$L2" 60 >"$SCRATCH/deny.out" 2>&1 &
PIDS="$PIDS $!"
for i in $(seq 50); do grep -q ready "$SCRATCH/deny.out" && break; sleep 0.1; done
grep -q ready "$SCRATCH/deny.out" || fail "deny-open did not start: $(cat "$SCRATCH/deny.out")"
expect_rc 1 sync names
cat "$OUT"
[ "$(cat "$LOWER/$L1")" = "newer 1" ] || fail "the other change was not synced"
[ "$(cat "$LOWER/$L2")" = "new 2" ] || fail "the directory lost the old version of the unreadable file"
grep -qF 'bad\377\376' "$OUT" || fail "the error does not name the file as bad\\377\\376 (octal, as for control characters)"
LC_ALL=C grep -q $'\xff' "$OUT" && fail "the error carries the raw bytes of the name (journald keeps it as a blob)"
python3 -c 'import sys; open(sys.argv[1], "rb").read().decode("utf-8")' "$OUT" || fail "the output is not UTF-8"
kill $PIDS 2>/dev/null
wait 2>/dev/null
PIDS=""
expect_rc 0 stop
[ "$(cat "$P/$L2")" = "newer 2" ] || fail "stop lost the file"
pass "a non-UTF-8 name that fails the sync is named escaped, the rest synced"

# seed = no, persist = yes: the first sync would delete all the directory held
P=$SCRATCH/dir
echo keep >"$P/kept"
write_conf <<EOT
[area noseed]
path = $P
backend = tmpfs
size = 64M
seed = no
persist = yes
EOT
sd start
rc=$?
[ "$rc" != 0 ] || fail "seed = no with persist = yes was accepted"
grep -q "seed" "$OUT" || { cat "$OUT"; fail "the refusal does not say why"; }
is_mountpoint "$P" && fail "the refused area was mounted"
[ "$(cat "$P/kept")" = keep ] && [ -S "$P/sock" ] || fail "the refused area changed the directory"
pass "seed = no with persist = yes is refused (exit $rc), the directory unchanged"

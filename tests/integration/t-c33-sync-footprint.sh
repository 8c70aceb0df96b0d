#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# C33: the sync's footprint on the directory's filesystem is bounded by
# what the owner could write, and gone when the sync ends.  A persist
# area over a directory of user 1234 on a 32 MiB ext4 (5 % reserved for
# root) gets a 40 MB file: the sync fails (exit 1) before it writes it,
# the filesystem's free space is what it was before, another user can
# still write, the error names the user's directory and the numbers, and
# `status` does not call the area interrupted.  The room the error
# reports is exact: a file one byte larger than it is refused, a file of
# that size syncs; a smaller version of it then waits for room (its old
# version goes only once the new one is in place), which deleting it
# makes.  A new tree that does not fit leaves nothing either; nor does
# one with more files than the filesystem has free inodes, said as such.
# The same against a user's disk quota, blocks and inodes, where this
# kernel has ext4 quotas.
. "$(dirname "$0")/lib-area.sh"

command -v mkfs.ext4 >/dev/null || skip "mkfs.ext4 missing"
LOOPS=""
c33_cleanup() {
	cleanup
	for l in $LOOPS; do losetup -d "$l"; done
}
trap c33_cleanup EXIT

chmod 0755 "$SCRATCH"
as() { local u=$1; shift; setpriv --reuid="$u" --regid="$u" --clear-groups "$@"; }

# small_ext4 NAME SIZE [MKFS OPTIONS...]: an ext4 of SIZE on a loop device,
# mounted on $SCRATCH/NAME (mount options in $MOPTS)
small_ext4() {
	local name=$1 size=$2 loop
	shift 2
	truncate -s "$size" "$SCRATCH/$name.img"
	mkfs.ext4 -q -F "$@" "$SCRATCH/$name.img" || fail "mkfs.ext4 $*"
	loop=$(losetup -f --show "$SCRATCH/$name.img") || fail "losetup"
	LOOPS="$LOOPS $loop"
	mkdir -p "$SCRATCH/$name"
	mount -t ext4 ${MOPTS:+-o "$MOPTS"} "$loop" "$SCRATCH/$name" || return 1
	chmod 0755 "$SCRATCH/$name"
}

# avail FS: bytes free for users other than root (statvfs f_bavail)
avail() {
	sync -f "$1"
	stat -f -c '%a %S' "$1" | awk '{ printf "%d\n", $1 * $2 }'
}

# area_over NAME DIR: a persist area NAME over DIR (user 1234's), started
area_over() {
	mkdir -p "$2"
	chown 1234:1234 "$2"
	write_conf <<EOT
[area $1]
path = $2
backend = tmpfs
size = 64M
persist = yes
EOT
	expect_rc 0 start
	sleep 0.1 # past the coarse clock tick of the seed's baseline
}

# no_leftovers DIR: nothing of the sync is left in the directory
no_leftovers() {
	local left
	left=$(find "$RUN/areas/$1/lower" -maxdepth 1 -name '.storaged-sync.*')
	[ -z "$left" ] || fail "the failed sync left its working directory: $left"
}

echo "# reserve: a 40 MB file, a 32 MiB ext4"
small_ext4 small 32M -m 5 || fail "mounting the ext4"
FS=$SCRATCH/small
P=$FS/home
mkdir -p "$FS/shared" && chmod 1777 "$FS/shared"
area_over c33 "$P"
LOWER=$RUN/areas/c33/lower
as 1234 dd if=/dev/urandom of="$P/big" bs=1M count=40 status=none || fail "writing the area"
before=$(avail "$FS")
expect_rc 1 sync c33
cat "$OUT"
after=$(avail "$FS")
[ "$after" = "$before" ] || fail "the failed sync took $((before - after)) bytes of the filesystem's free space ($before before, $after after)"
no_leftovers c33
as 1235 dd if=/dev/zero of="$FS/shared/other" bs=1M count=1 status=none ||
	fail "another user cannot write 1 MB after the failed sync"
rm -f "$FS/shared/other"
pass "a sync that does not fit fails (exit 1), the free space is as before ($before bytes), another user can write"

grep -qF "'$P'" "$OUT" || fail "the error does not name the user's directory '$P'"
grep -qF "$RUN/areas" "$OUT" && fail "the error names the internal path below the state directory"
grep -q "uid 1234" "$OUT" || fail "the error does not say for whom the room was counted"
need=$(sed -n 's/.*need at least \([0-9]*\) bytes.*/\1/p' "$OUT")
room=$(sed -n 's/.* has \([0-9]*\) bytes free for uid 1234.*/\1/p' "$OUT")
[ -n "$need" ] && [ -n "$room" ] || fail "the error does not say how much is needed and free"
[ "$need" -ge $((40 << 20)) ] && [ "$room" -lt $((40 << 20)) ] || fail "needs $need, $room free: not the numbers of a 40 MB file"
[ "$room" -le "$before" ] && [ "$room" -ge $((before - 8192)) ] ||
	fail "the room reported ($room) is not the free space for users ($before, less the sync's working directory)"
pass "the error names '$P' and the cause: needs $need bytes, $room free for uid 1234"

sd status
cat "$OUT"
grep -qi interrupted "$OUT" && fail "status calls the area interrupted after a sync that failed"
grep -qF "$RUN/areas" "$OUT" && fail "status names the internal path"
grep -qF "its last sync back into '$P' failed while copying: no room for the changed files: they need at least $need bytes" "$OUT" ||
	fail "status does not say why the last sync failed"
pass "status says why the last sync back into '$P' failed, not that it was interrupted"

echo "# exactly the room the error reported"
as 1234 truncate -s $((room + 1)) "$P/big"
expect_rc 1 sync c33
room2=$(sed -n 's/.* has \([0-9]*\) bytes free for uid 1234.*/\1/p' "$OUT")
[ "$room2" = "$room" ] || { cat "$OUT"; fail "the room is $room2 at the second failed sync, $room at the first"; }
[ "$(avail "$FS")" = "$before" ] || fail "the second failed sync took free space"
no_leftovers c33
pass "a file one byte larger than the room is refused"
as 1234 truncate -s "$room" "$P/big"
expect_rc 0 sync c33
cmp -s "$P/big" "$LOWER/big" || fail "the file that fits exactly was not synced"
no_leftovers c33
pass "a file of exactly the room syncs ($room bytes)"

echo "# after room was made, a sync succeeds"
# a replaced file's new version is written before its old one goes (one
# atomic rename): with the filesystem full, even a smaller one waits
as 1234 truncate -s 1M "$P/big"
expect_rc 1 sync c33
grep -q "need at least 1048576 bytes, the directory's filesystem has 0 bytes free" "$OUT" ||
	{ cat "$OUT"; fail "the error does not say that the smaller version needs room too"; }
sd status
grep -q "its last sync back .* failed" "$OUT" || fail "status does not say the last sync failed"
no_leftovers c33
cmp -s "$P/big" "$LOWER/big" && fail "the smaller version was synced with no room for it"
[ "$(stat -c %s "$LOWER/big")" = "$room" ] || fail "the directory lost the old version"
# a deletion costs nothing and makes the room
as 1234 mv "$P/big" "$P/big.1"
as 1234 rm "$P/big.1"
expect_rc 0 sync c33
[ ! -e "$LOWER/big" ] || fail "the deletion was not synced"
sd status
grep -q "failed" "$OUT" && { cat "$OUT"; fail "status still says a sync failed after one succeeded"; }
as 1234 truncate -s 1M "$P/big"
as 1234 sh -c "echo small >'$P/small'"
expect_rc 0 sync c33
cmp -s "$P/big" "$LOWER/big" && [ "$(cat "$LOWER/small")" = small ] || fail "the sync after making room lost a change"
expect_rc 0 stop
[ "$(cat "$P/small")" = small ] && [ "$(stat -c %s "$P/big")" = $((1 << 20)) ] || fail "stop lost a change"
pass "with room made, sync and stop succeed"

echo "# a new directory of files that does not fit"
area_over c33 "$P"
as 1234 mkdir -p "$P/tree/a/b"
for i in 1 2 3 4; do as 1234 dd if=/dev/zero of="$P/tree/a/b/f$i" bs=1M count=8 status=none; done
before=$(avail "$FS")
expect_rc 1 sync c33
cat "$OUT"
[ "$(avail "$FS")" = "$before" ] || fail "the failed sync of a new tree took free space"
no_leftovers c33
[ ! -e "$LOWER/tree" ] || fail "a part of the new tree reached the directory"
grep -q "need at least" "$OUT" || fail "the error does not say what the new tree needs"
rm -rf "$P/tree"
expect_rc 0 sync c33
expect_rc 0 stop
pass "a new tree that does not fit: refused, free space as before, nothing of it in the directory"

echo "# inodes: a new directory of 60 files, 37 inodes free"
small_ext4 inodes 8M -N 48 || fail "mounting the ext4 with 48 inodes"
FS=$SCRATCH/inodes
P=$FS/home
area_over ino "$P"
LOWER=$RUN/areas/ino/lower
as 1234 mkdir "$P/many"
for i in $(seq 60); do as 1234 touch "$P/many/m$i"; done
expect_rc 1 sync ino
cat "$OUT"
grep -q "they need at least [0-9]* inodes, the directory's filesystem has [0-9]* inodes free for uid 1234" "$OUT" ||
	fail "the error does not say the inodes are short, with the numbers"
grep -q "'n[0-9]*/" "$OUT" && fail "the error names the sync's working directory, not the user's"
no_leftovers ino
[ ! -e "$LOWER/many" ] || fail "a part of the new directory reached the directory"
for i in $(seq 11 60); do rm "$P/many/m$i"; done
expect_rc 0 sync ino
[ "$(find "$LOWER/many" -type f | wc -l)" = 10 ] || fail "the directory of 10 files was not synced"
expect_rc 0 stop
pass "a new directory past the free inodes: refused as such, with the numbers; within them: synced"

echo "# quota"
# quota_case: the same against uid 1234's disk quota; returns 1 (said
# why) where this machine cannot have one: the reserve parts stand alone
quota_case() {
	command -v setquota >/dev/null || { echo "skip: setquota missing (the quota package)"; return 1; }
	MOPTS=usrquota small_ext4 quota 64M -O quota 2>/dev/null || {
		echo "skip: an ext4 with -O quota does not mount here (a kernel without CONFIG_QFMT_V2?): $(dmesg 2>/dev/null | tail -n 1)"
		return 1
	}
	FS=$SCRATCH/quota
	P=$FS/home
	area_over q "$P"
	LOWER=$RUN/areas/q/lower
	setquota -u 1234 0 2048 0 0 "$FS" || fail "setquota"
	as 1234 dd if=/dev/zero of="$P/big" bs=1M count=4 status=none || fail "writing the area"
	before=$(avail "$FS")
	expect_rc 1 sync q
	cat "$OUT"
	[ "$(avail "$FS")" = "$before" ] || fail "the failed sync took free space"
	no_leftovers q
	grep -q "uid 1234 need at least [0-9]* bytes, its disk quota leaves it [0-9]* bytes" "$OUT" ||
		fail "the error does not say uid 1234's quota is the cause, with the numbers"
	[ ! -e "$LOWER/big" ] || fail "the file over the quota reached the directory"
	as 1234 truncate -s 1M "$P/big"
	expect_rc 0 sync q
	cmp -s "$P/big" "$LOWER/big" || fail "the file within the quota was not synced"
	pass "past uid 1234's quota: refused with the numbers; within it: synced"

	# the inode quota: 20 new files where uid 1234 may make 10 more inodes
	used=$(find "$LOWER" -uid 1234 | wc -l) # all of uid 1234's inodes there
	setquota -u 1234 0 0 0 $((used + 10)) "$FS" || fail "setquota (inodes)"
	as 1234 mkdir "$P/many"
	for i in $(seq 1 20); do as 1234 touch "$P/many/f$i"; done
	expect_rc 1 sync q
	cat "$OUT"
	no_leftovers q
	grep -q "uid 1234 need at least [0-9]* inodes, its disk quota leaves it 10 inodes" "$OUT" ||
		fail "the error does not say uid 1234's inode quota is the cause, with the numbers"
	[ ! -e "$LOWER/many" ] || fail "a part of the new directory reached the directory"
	for i in $(seq 6 20); do rm "$P/many/f$i"; done
	expect_rc 0 sync q
	[ "$(find "$LOWER/many" -type f | wc -l)" = 5 ] || fail "the directory of 5 files was not synced"
	expect_rc 0 stop
	pass "past uid 1234's inode quota: refused with the numbers; within it: synced"
}
quota_case
exit 0

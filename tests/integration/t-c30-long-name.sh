#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# C30: one entry the directory cannot take costs that entry, never the
# area.  A persist area; an entry changed on both sides (in the area, and
# in the directory through a path that reaches it under the area) whose
# name is 244 bytes long (81 CJK characters and one byte): the area's
# version goes beside it under a name that fits NAME_MAX (the name cut at
# a character boundary, never inside a UTF-8 sequence), the message names
# both, an ordinary change (`work`) is synced, the next sync redoes
# nothing, stop unmounts (exit 1: the conflict is said).  Its neighbours in
# the same sync: a name of exactly NAME_MAX bytes, a long-named entry that
# became a directory in the area, two long names whose shortened forms
# would be the same, a long name that is not UTF-8 (cut at a byte).
# Then the write side, with the directory on a loop ext4 of 1 KiB blocks
# without extents (files of at most 16 GiB, xattrs of at most a block):
# an immutable file there (the rename over it fails, EPERM; deleting
# another fails too: nothing of the area to keep), a 20 GiB
# sparse file (EFBIG), alone and in a new directory (left out whole), an
# xattr larger than a block (ENOSPC: that
# attribute alone is lost, with a warning); every other change is synced;
# stop keeps the area's versions of what the sync could not carry in
# '.storaged-rescue/AREA-TIME' of the directory and unmounts, or, when even
# that fails (the 20 GiB file), keeps the area mounted and says so.
. "$(dirname "$0")/lib-area.sh"

LOOP=""
c30_cleanup() {
	[ -n "${IMM:-}" ] && chattr -i "$IMM" "$IMM"2 2>/dev/null
	cleanup
	[ -n "$LOOP" ] && losetup -d "$LOOP"
}
trap c30_cleanup EXIT

rep() { local i; for i in $(seq "$2"); do printf '%s' "$1"; done; }
L244=$(rep 中 81)x           # 244 bytes
L255=$(rep 中 85)            # 255 bytes: NAME_MAX
LDIR=$(rep 字 80)dd          # 242 bytes, a directory in the area
LA=$(rep 同 80)aaaaaaaaaa    # 250 bytes, the same first 240 as LB
LB=$(rep 同 80)bbbbbbbbbb
LX=$(printf 'a%.0s' $(seq 200))$(printf '\xff%.0s' $(seq 50)) # 250 bytes, not UTF-8
NAMES=("$L244" "$L255" "$LDIR" "$LA" "$LB" "$LX")

P=$SCRATCH/dir
mkdir -p "$P" "$SCRATCH/alt"
for n in "${NAMES[@]}"; do echo old >"$P/$n"; done
echo old-work >"$P/work"
printf '[area long]\npath = %s\nbackend = tmpfs\nsize = 64M\npersist = yes\n' "$P" | write_conf
LOWER=$RUN/areas/long/lower
expect_rc 0 start
sleep 0.1 # past the area's baseline (a clock tick: 1-10 ms)

# both_sides NAME...: each changed in the area, then in the directory
# itself, reached under the area (LDIR becomes a directory in the area)
both_sides() {
	local n
	for n in "$@"; do
		if [ "$n" = "$LDIR" ]; then
			rm "$P/$n" && mkdir "$P/$n" && echo inside >"$P/$n/f"
		else
			echo "area $n" >"$P/$n"
		fi
	done
	mount --bind "$SCRATCH" "$SCRATCH/alt" || fail "cannot bind $SCRATCH"
	for n in "$@"; do echo "dir $n" >"$SCRATCH/alt/dir/$n"; done
	umount "$SCRATCH/alt"
}

# the area's version of NAME beside it: the one entry of the lower
# directory, other than NAME, that holds it
beside_of() {
	local n=$1 want=$2 f found=""
	for f in "$LOWER"/*; do
		[ "$f" = "$LOWER/$n" ] && continue
		[ -f "$f" ] && [ "$(cat "$f")" = "$want" ] && found=$f
		[ -d "$f" ] && [ "$want" = DIR ] && [ "$(cat "$f/f" 2>/dev/null)" = inside ] && found=$f
	done
	[ -n "$found" ] || return 1
	basename "$found"
}

# check_beside NAME: the directory's version kept, the area's beside it
# under a name that fits (cut at a character boundary when UTF-8)
check_beside() {
	local n=$1 want="area $1" b len
	[ "$n" = "$LDIR" ] && want=DIR
	[ "$(cat "$LOWER/$n")" = "dir $n" ] || fail "the directory's version of a long name was not kept"
	b=$(beside_of "$n" "$want") || fail "the area's version of a $(printf %s "$n" | wc -c)-byte name was lost"
	len=$(printf %s "$b" | wc -c)
	[ "$len" -le 255 ] || fail "a name beside of $len bytes"
	case "$b" in *.storaged-area | *.storaged-area.[0-9]*) ;; *) fail "'$b' is not a name beside" ;; esac
	if [ "$n" != "$LX" ]; then
		python3 -c 'import sys; sys.argv[1].encode("utf-8", "surrogateescape").decode("utf-8")' "$b" ||
			fail "the name beside '$b' cuts a UTF-8 character"
	fi
	echo "$b" >>"$SCRATCH/besides"
	BESIDE=$b
}

both_sides "$L244"
echo new-work >"$P/work"
expect_rc 1 sync long
cat "$OUT"
[ "$(cat "$LOWER/work")" = new-work ] || fail "C30: 'work' did not reach the directory"
check_beside "$L244"
grep -F "'$L244'" "$OUT" | grep -F "'$BESIDE'" >/dev/null ||
	fail "the message does not name the entry and where the area's version went"
pass "C30: a 244-byte name changed on both sides: 'work' is synced, the area's version beside as '$BESIDE' (exit 1, said)"

BESIDE244=$BESIDE
expect_rc 0 sync long
[ -s "$OUT" ] && { cat "$OUT"; fail "the next sync was not quiet"; }
pass "the baseline moved on: the next sync is quiet (exit 0)"
expect_rc 1 status
grep -F "$BESIDE" "$OUT" >/dev/null || { cat "$OUT"; fail "status no longer says where the area's version went"; }
pass "status goes on naming the entry kept on both sides (exit 1) until stop"

both_sides "$L255" "$LDIR" "$LA" "$LB" "$LX"
expect_rc 1 sync long
cat "$OUT"
for n in "$L255" "$LDIR" "$LA" "$LB" "$LX"; do check_beside "$n"; done
[ "$(sort -u "$SCRATCH/besides" | wc -l)" = 6 ] || fail "two entries share a name beside"
pass "a name of 255 bytes, a directory, shortened names that would collide, a non-UTF-8 name: each area version beside under a name that fits"

echo newer-work >"$P/work"
expect_rc 1 stop
grep -F "an earlier sync back" "$OUT" | grep -F "$BESIDE244" >/dev/null ||
	{ cat "$OUT"; fail "stop does not say again what an earlier sync kept on both sides"; }
is_mountpoint "$P" && fail "stop left the area mounted"
[ "$(cat "$P/work")" = newer-work ] && [ "$(cat "$P/$L244")" = "dir $L244" ] || fail "stop lost a change"
pass "stop syncs and unmounts the area"

echo "# the write side, on a loop ext4 of 1 KiB blocks without extents"
command -v mkfs.ext4 >/dev/null || skip "mkfs.ext4 missing"
command -v chattr >/dev/null || skip "chattr missing"
truncate -s 64M "$SCRATCH/ext4.img"
mkfs.ext4 -q -F -b 1024 -O ^extent,^64bit "$SCRATCH/ext4.img" || fail "mkfs.ext4"
LOOP=$(losetup -f --show "$SCRATCH/ext4.img") || fail "losetup"
mkdir -p "$SCRATCH/ext4"
mount -t ext4 "$LOOP" "$SCRATCH/ext4" || fail "mounting the ext4"
P=$SCRATCH/ext4/dir
mkdir -p "$P/sub"
echo old >"$P/imm"
echo old >"$P/imm2"
echo old >"$P/big"
echo old >"$P/xattr"
echo old-work >"$P/sub/work"
chattr +i "$P/imm" "$P/imm2" || skip "no immutable flag on ext4"
IMM=$P/imm
printf '[area w]\npath = %s\nbackend = tmpfs\nsize = 64M\npersist = yes\n' "$P" | write_conf
LOWER=$RUN/areas/w/lower
expect_rc 0 start
sleep 0.1
chattr -i "$P/imm" && echo area-imm >"$P/imm"
chattr -i "$P/imm2" && rm "$P/imm2"
truncate -s 20G "$P/big"
echo area-xattr >"$P/xattr"
# user.* xattrs on tmpfs came with Linux 6.6: before, that part alone is left out
XATTRS=yes
set_xattr "$P/xattr" user.small s && set_xattr "$P/xattr" user.big "$(rep y 6000)" || XATTRS=
echo new-work >"$P/sub/work"
echo new >"$P/new"
mkdir -p "$P/newdir/in" && echo ok >"$P/newdir/ok" && truncate -s 20G "$P/newdir/in/huge"
mkdir -p "$P/newdir2" && echo ok2 >"$P/newdir2/ok"

expect_rc 1 sync w
cat "$OUT"
[ "$(cat "$LOWER/sub/work")" = new-work ] && [ "$(cat "$LOWER/new")" = new ] ||
	fail "changes were not synced because of entries the directory refused"
[ "$(cat "$LOWER/imm")" = old ] && [ "$(cat "$LOWER/big")" = old ] || fail "a refused entry lost its old version"
[ "$(cat "$P/imm")" = area-imm ] && [ "$(stat -c %s "$P/big")" = 21474836480 ] || fail "the area lost a refused entry"
grep "'imm'" "$OUT" | grep -q "not permitted" || fail "the error does not name 'imm' and why"
grep "'big'" "$OUT" | grep -q "too large" || fail "the error does not name 'big' and why"
[ "$(cat "$LOWER/imm2")" = old ] || fail "an immutable file deleted in the area is gone"
grep "'imm2'" "$OUT" | grep -q "deleting" || fail "the error does not name 'imm2', whose deletion failed"
[ ! -e "$LOWER/newdir" ] || fail "a new directory was synced without its file"
grep "'newdir'" "$OUT" | grep -q "newdir/in/huge" || fail "the error does not name the file of the new directory that failed"
[ "$(cat "$LOWER/newdir2/ok")" = ok2 ] || fail "a new directory beside the failed one was not synced"
pass "an immutable file (EPERM), a file too large (EFBIG), a new directory holding one: skipped, named, kept in the area; the rest synced"
if [ -n "$XATTRS" ]; then
	[ "$(cat "$LOWER/xattr")" = area-xattr ] || fail "an xattr the directory refuses cost the file"
	[ "$(get_xattr "$LOWER/xattr" user.small)" = s ] || fail "the xattr the directory takes was lost"
	grep "'xattr'" "$OUT" | grep -q "user.big" || fail "no warning names the file and the xattr lost"
	pass "an xattr larger than the directory's filesystem takes: that xattr alone is lost, with a warning"
else
	echo "# no user xattrs on this kernel's tmpfs (before Linux 6.6): the refused xattr is not tried"
fi

expect_rc 1 stop
cat "$OUT"
is_mountpoint "$P" || fail "stop unmounted the area while a file of it could be kept nowhere"
grep -q "'big'" "$OUT" || fail "stop does not say what it could not keep"
pass "stop: an entry even the rescue cannot keep (20 GiB): the area stays mounted, said (exit 1)"

rm "$P/big" "$P/newdir/in/huge"
expect_rc 1 stop
cat "$OUT"
is_mountpoint "$P" && fail "stop left the area mounted"
R=$(echo "$P"/.storaged-rescue/w-*)
[ -d "$R" ] || fail "no rescue directory in '$P/.storaged-rescue'"
grep -qF "$R" "$OUT" || fail "stop does not say where it kept the area's versions"
n=$(awk -F '\t' '$2 == "imm" { print $1 }' "$R/index")
[ -n "$n" ] && [ "$(cat "$R/$n")" = area-imm ] || fail "the area's version of 'imm' is not in the rescue directory: $(cat "$R/index")"
[ "$(wc -l <"$R/index")" = 1 ] || fail "the rescue directory holds more than 'imm' (a deletion has nothing to keep): $(cat "$R/index")"
[ "$(cat "$P/imm2")" = old ] || fail "stop lost the immutable file whose deletion failed"
[ "$(stat -c '%a %u' "$P/.storaged-rescue")" = "700 $(stat -c %u "$P")" ] || fail "the rescue directory is not the directory owner's, 0700"
[ "$(cat "$P/imm")" = old ] && [ "$(cat "$P/sub/work")" = new-work ] || fail "stop changed what the sync had done"
[ ! -e "$P/big" ] || fail "the deletion of 'big' was not synced"
[ "$(cat "$P/newdir/ok")" = ok ] || fail "the new directory was not synced once it could be"
pass "stop keeps the area's version of what it could not sync in '$R' (index: number, path) and unmounts"

#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The three-way rule of a persist area's sync back (copy_sync.c) where a
# whole directory is deleted, renamed or replaced on one side while a
# file in it changes on the other: the change is never dropped.  The
# directory is reached underneath through a bind of its parent (U).
# Each case used to exit 0 and lose the file's change:
#  1. the area deletes (or renames) sub, a file in it is edited
#     underneath (also when a sync in between kept that file): the
#     directory's sub stays, reported (exit 1); a file too (kept before,
#     but not reported);
#  2. the area replaces sub by a file, a file in sub is edited underneath:
#     the directory's sub stays, the area's file beside it;
#  3. underneath, sub is replaced by a link (or a file) while the area
#     edits a file in it: the area's sub is written beside it;
#  4. NAME.storaged-area exists already (the user's, or an earlier
#     conflict's edited since): the area's version gets a free name
#     (NAME.storaged-area.1), the error names it;
#  5. a file (or a directory holding one) edited in the area is deleted
#     underneath: the area's version comes back, reported (exit 1).
. "$(dirname "$0")/lib-area.sh"

P=$SCRATCH/dir
U=$SCRATCH/alt/dir
mkdir -p "$SCRATCH/alt"
write_conf <<EOT
[area d]
path = $P
backend = tmpfs
size = 64M
persist = yes
EOT

# fresh: P holds sub/x and sub/f; the area is started over it, and the
# directory is reachable at U
fresh() {
	umount "$SCRATCH/alt" 2>/dev/null
	rm -rf "$P" && mkdir -p "$P/sub"
	echo old >"$P/sub/x"
	echo old >"$P/sub/f"
	expect_rc 0 start
	mount --bind "$SCRATCH" "$SCRATCH/alt" || fail "cannot bind $SCRATCH"
	sleep 0.1 # past the baselines (a clock tick: 1-10 ms)
}

# stop_conflict ENTRY...: the stop exits 1 naming each entry, leaves no
# mount, and a second stop finds nothing left to do
stop_conflict() {
	umount "$SCRATCH/alt"
	expect_rc 1 stop
	for e in "$@"; do
		grep -q "area 'd'.*'$e'.*compare the two and keep what you need" "$OUT" ||
			{ cat "$OUT"; fail "stop's error does not name '$e'"; }
	done
	[ -z "$(scratch_mounts)" ] || fail "stop left mounts: $(scratch_mounts)"
	expect_rc 0 stop
}

# 1. the area deletes sub, sub/x is edited underneath
fresh
echo under >"$U/sub/x"
rm -r "$P/sub"
stop_conflict sub
[ "$(cat "$P/sub/x" 2>&1)" = under ] || fail "1: the edit underneath of a directory the area deleted is lost"
pass "1: the area deletes a directory, a file in it edited underneath: kept, exit 1"

# 1b. the same with a sync in between (which kept sub/x the directory's)
fresh
echo under >"$U/sub/x"
expect_rc 0 sync d
sleep 0.1
rm -r "$P/sub"
stop_conflict sub
[ "$(cat "$P/sub/x" 2>&1)" = under ] || fail "1b: the edit a sync kept is lost when the area deletes its directory"
pass "1b: the same after a sync that kept the file: kept, exit 1"

# 1c. the area renames sub
fresh
echo under >"$U/sub/x"
mv "$P/sub" "$P/moved"
stop_conflict sub
[ "$(cat "$P/sub/x" 2>&1)" = under ] || fail "1c: the edit underneath of a directory the area renamed is lost"
[ "$(cat "$P/moved/x" 2>&1)" = old ] || fail "1c: the area's renamed directory is not synced"
pass "1c: the area renames a directory, a file in it edited underneath: both kept, exit 1"

# 1d. the same for a file: the area deletes sub/x, it is edited underneath
fresh
echo under >"$U/sub/x"
rm "$P/sub/x"
stop_conflict sub/x
[ "$(cat "$P/sub/x" 2>&1)" = under ] || fail "1d: the edit underneath of a file the area deleted is lost"
pass "1d: the area deletes a file edited underneath: kept, exit 1"

# 2. the area replaces sub by a file
fresh
echo under >"$U/sub/x"
rm -r "$P/sub" && echo "area file" >"$P/sub"
stop_conflict sub sub.storaged-area
[ "$(cat "$P/sub/x" 2>&1)" = under ] || fail "2: the edit underneath of a directory the area replaced by a file is lost"
[ "$(cat "$P/sub.storaged-area" 2>&1)" = "area file" ] || fail "2: the area's file is not beside the directory"
pass "2: the area replaces a directory by a file, a file in it edited underneath: both kept, exit 1"

# 3. underneath, sub becomes a link (then a file) while the area edits sub/f
for kind in link file; do
	fresh
	echo area >"$P/sub/f"
	rm -r "$U/sub"
	if [ $kind = link ]; then ln -s /nonexistent "$U/sub"; else echo "dir file" >"$U/sub"; fi
	stop_conflict sub sub.storaged-area
	[ "$(cat "$P/sub.storaged-area/f" 2>&1)" = area ] || fail "3: the area's edit in a directory replaced underneath by a $kind is lost"
	if [ $kind = link ]; then [ -L "$P/sub" ]; else [ "$(cat "$P/sub")" = "dir file" ]; fi ||
		fail "3: the directory's $kind is not kept"
	pass "3: underneath, a directory replaced by a $kind while the area edits a file in it: both kept, exit 1"
done

# 4. sub/f.storaged-area is the user's own: the area's version gets a free name
fresh
umount "$SCRATCH/alt"
expect_rc 0 stop
echo mine >"$P/sub/f.storaged-area"
expect_rc 0 start
mount --bind "$SCRATCH" "$SCRATCH/alt"
sleep 0.1
echo area >"$P/sub/f"
echo under >"$U/sub/f"
stop_conflict sub/f sub/f.storaged-area.1
[ "$(cat "$P/sub/f.storaged-area")" = mine ] || fail "4: the user's sub/f.storaged-area was overwritten"
[ "$(cat "$P/sub/f.storaged-area.1" 2>&1)" = area ] || fail "4: the area's version is not at the free name"
[ "$(cat "$P/sub/f")" = under ] || fail "4: the directory's version is not kept"
pass "4: NAME.storaged-area taken: the area's version at NAME.storaged-area.1, named"

# 4b. an earlier sync's sub/f.storaged-area, edited since underneath (an
# untouched one takes the area's latest: t-area-stop-sync-conflict.sh)
fresh
echo area >"$P/sub/f"
echo under >"$U/sub/f"
expect_rc 1 sync d
[ "$(cat "$U/sub/f.storaged-area" 2>&1)" = area ] || fail "4b: the sync's conflict copy is not there"
echo merged >"$U/sub/f.storaged-area"
sleep 0.1
echo "area again" >"$P/sub/f"
stop_conflict sub/f sub/f.storaged-area.1
[ "$(cat "$P/sub/f.storaged-area")" = merged ] || fail "4b: the edited conflict copy was overwritten"
[ "$(cat "$P/sub/f.storaged-area.1" 2>&1)" = "area again" ] || fail "4b: the area's latest is not at the free name"
pass "4b: an earlier conflict copy edited underneath: the area's latest at the next free name"

# 5. edited in the area, deleted underneath: restored and reported
fresh
echo area >"$P/sub/f"
rm "$U/sub/f"
stop_conflict sub/f
[ "$(cat "$P/sub/f" 2>&1)" = area ] || fail "5: the area's edit of a file deleted underneath is lost"
pass "5: a file edited in the area, deleted underneath: the area's restored, exit 1"

# 5b. the same for the directory holding it
fresh
echo area >"$P/sub/f"
rm -r "$U/sub"
stop_conflict sub
[ "$(cat "$P/sub/f" 2>&1)" = area ] || fail "5b: the area's edit in a directory deleted underneath is lost"
pass "5b: a file edited in the area, its directory deleted underneath: the area's restored, exit 1"

# controls: one side's changes alone go through, exit 0
fresh
rm -r "$P/sub"
mkdir "$P/new" && echo new >"$P/new/n"
echo under >"$U/u"
umount "$SCRATCH/alt"
expect_rc 0 stop
[ ! -e "$P/sub" ] && [ "$(cat "$P/new/n")" = new ] && [ "$(cat "$P/u")" = under ] ||
	fail "control: a deletion, a new directory of the area, a new file underneath: not all synced"
fresh
rm "$U/sub/x"
# a new file in a directory whose mtime is set back (as tar(1) does) is
# still new, not one deleted underneath
echo new >"$P/sub/new" && touch -d '2001-02-03' "$P/sub"
# a file renamed underneath is not one the area deleted
mv "$U/sub/f" "$U/sub/g"
umount "$SCRATCH/alt"
expect_rc 0 stop
[ ! -e "$P/sub/x" ] && [ "$(cat "$P/sub/new")" = new ] && [ "$(cat "$P/sub/g")" = old ] && [ ! -e "$P/sub/f" ] ||
	fail "control: one change on each side: not both kept"
[ -z "$(scratch_mounts)" ] || fail "stop left mounts: $(scratch_mounts)"
pass "controls: changes of one side alone, exit 0"

#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# C27: someone else unmounted the bind of a persist area over its
# directory before `stop`.  The three-way rule, by the baselines of the
# seed and the last sync: a directory unchanged since is synced as usual
# (a warning, exit 0); where both sides changed, an entry changed on one
# side carries over (area or directory, deletions too) and one changed on
# both keeps the directory's version in place and the area's beside it
# under a name the error gives (exit 1).  The area's data is never just
# dropped, and not kept only under the state directory.  The same when
# the bind was moved elsewhere (mount --move) instead; and when someone
# stacked a bind over the directory (of another directory, or of the
# directory itself): stop syncs the area, leaves their mount and says
# what to unmount, the next stop finishes.
. "$(dirname "$0")/lib-area.sh"

P=$SCRATCH/dir
conf() {
	write_conf <<EOT
[area lost]
path = $P
backend = tmpfs
size = 64M
persist = yes
EOT
}
AREA=$RUN/areas/lost/area

# 1. the directory did not change while uncovered
mkdir -p "$P/sub"
echo old >"$P/sub/f"
conf
expect_rc 0 start
sleep 0.1
echo new >"$P/sub/f"
echo made >"$P/made"
expect_rc 0 sync lost
sleep 0.1
echo newer >"$P/sub/f"
umount "$P" || fail "could not unmount the bind"
is_mountpoint "$P" && fail "still covered"
expect_rc 0 stop
grep -q warning "$OUT" || fail "no warning that the bind had gone: $(cat "$OUT")"
[ "$(cat "$P/sub/f")" = newer ] && [ "$(cat "$P/made")" = made ] || fail "the area was not synced back"
[ -z "$(scratch_mounts)" ] || fail "stop left mounts: $(scratch_mounts)"
pass "bind gone, directory unchanged: synced back with a warning (exit 0)"

# 2. both sides changed
rm -rf "$P" && mkdir -p "$P/sub"
for f in same area-chg dir-chg both-chg dir-del area-del; do echo "old $f" >"$P/sub/$f"; done
expect_rc 0 start
sleep 0.1
echo "area" >"$P/sub/area-chg"
echo "area" >"$P/sub/both-chg"
rm "$P/sub/area-del"
echo "area" >"$P/sub/area-new"
umount "$P" || fail "could not unmount the bind"
sleep 0.1 # past the directory's baseline (a clock tick: 1-10 ms)
echo "dir" >"$P/sub/dir-chg"
echo "dir" >"$P/sub/both-chg"
rm "$P/sub/dir-del"
echo "dir" >"$P/sub/dir-new"
echo "area later" >"$AREA/sub/area-new"
expect_rc 1 stop
cat "$OUT"
grep -q "both-chg" "$OUT" && grep -q "both-chg.storaged-area" "$OUT" ||
	fail "the error does not name the entry changed on both sides and where the area's version is"
[ "$(cat "$P/sub/both-chg")" = dir ] && [ "$(cat "$P/sub/both-chg.storaged-area")" = area ] ||
	fail "changed on both sides: not both versions kept"
[ "$(cat "$P/sub/area-chg")" = area ] || fail "the area's change was lost"
[ "$(cat "$P/sub/dir-chg")" = dir ] || fail "the directory's change was overwritten"
[ "$(cat "$P/sub/area-new")" = "area later" ] || fail "the area's new file was lost"
[ "$(cat "$P/sub/dir-new")" = dir ] || fail "the directory's new file was deleted"
[ "$(cat "$P/sub/same")" = "old same" ] || fail "an unchanged file changed"
[ ! -e "$P/sub/area-del" ] || fail "the area's deletion was not carried over"
[ ! -e "$P/sub/dir-del" ] || fail "the directory's deletion was undone"
[ -z "$(scratch_mounts)" ] || fail "stop left mounts: $(scratch_mounts)"
[ ! -e "$RUN/areas/lost" ] || fail "the area's state was kept (under the state directory only)"
pass "bind gone, both changed: one-side changes carried over, both-side kept twice (exit 1)"

# The scratch directory as a private mount of its own: `mount --move`
# refuses a mount below a shared one (the host's / usually is).  Undone
# last, after every mount below it.
c27_cleanup() {
	local m
	for m in $(scratch_mounts); do umount "$m" 2>/dev/null || umount -l "$m"; done
	mountpoint -q "$SCRATCH" && { umount "$SCRATCH" || umount -l "$SCRATCH"; }
	cleanup
}
trap c27_cleanup EXIT
mount --bind "$SCRATCH" "$SCRATCH" && mount --make-private "$SCRATCH" || fail "a private mount of the scratch directory"

# 3. the bind was moved elsewhere (mount --move), not unmounted
rm -rf "$P" && mkdir -p "$P/sub" "$SCRATCH/moved"
for f in same area-chg dir-chg; do echo "old $f" >"$P/sub/$f"; done
expect_rc 0 start
sleep 0.1
echo "area" >"$P/sub/area-chg"
echo "area" >"$P/new-in-area"
mount --move "$P" "$SCRATCH/moved" || fail "could not move the bind"
is_mountpoint "$P" && fail "still covered after the move"
sleep 0.1 # past the directory's baseline (a clock tick: 1-10 ms)
echo "dir" >"$P/sub/dir-chg"
echo "area later" >"$SCRATCH/moved/sub/area-chg" # written through the moved bind
expect_rc 0 stop
cat "$OUT"
grep -q "warning.*moved" "$OUT" || fail "no warning that the bind was moved"
[ "$(cat "$P/sub/area-chg")" = "area later" ] && [ "$(cat "$P/new-in-area")" = area ] ||
	fail "the area's changes were not synced back after the move"
[ "$(cat "$P/sub/dir-chg")" = dir ] || fail "the directory's change was overwritten"
[ "$(cat "$P/sub/same")" = "old same" ] || fail "an unchanged file changed"
is_mountpoint "$SCRATCH/moved" && fail "stop left the moved bind at $SCRATCH/moved"
[ -z "$(scratch_mounts | grep -vxF "$SCRATCH")" ] || fail "stop left mounts: $(scratch_mounts)"
[ ! -e "$RUN/areas/lost" ] || fail "the area's state was kept"
pass "bind moved elsewhere: synced back by the three-way rule, the moved bind undone (exit 0)"

# 4. someone else stacked a bind of another directory over the directory
rm -rf "$P" "$SCRATCH/theirs" && mkdir -p "$P/sub" "$SCRATCH/theirs"
echo old >"$P/sub/f"
echo theirs >"$SCRATCH/theirs/t"
expect_rc 0 start
sleep 0.1
echo new >"$P/sub/f"
mount --bind "$SCRATCH/theirs" "$P" || fail "could not stack a bind over $P"
echo "theirs later" >"$P/t" # their file, in their directory
echo "area later" >"$AREA/sub/f"
sd stop
rc=$?
cat "$OUT"
umount "$P" 2>/dev/null # theirs, if stop left it (it must)
[ "$(cat "$SCRATCH/theirs/t")" = "theirs later" ] || fail "their directory changed"
[ ! -e "$SCRATCH/theirs/sub" ] || fail "the area was synced into their directory"
if [ "$rc" = 0 ]; then
	[ "$(cat "$P/sub/f")" = "area later" ] || fail "stop exited 0 without syncing the area back"
else
	# refused: the area stays, synced or not, and says why
	grep -q "$P" "$OUT" || fail "stop refused without naming the directory"
	[ -e "$RUN/areas/lost" ] || [ "$(cat "$P/sub/f")" = "area later" ] ||
		fail "stop failed, the area is gone and its data was not synced"
	expect_rc 0 stop
	[ "$(cat "$P/sub/f")" = "area later" ] || fail "the area's change was lost once their bind was gone"
fi
[ -z "$(scratch_mounts | grep -vxF "$SCRATCH")" ] || fail "stop left mounts: $(scratch_mounts)"
pass "another bind stacked over the directory: theirs untouched, the area's data synced back (first stop exit $rc)"

# 5. a second bind of the directory itself stacked over it (mount --bind P P)
rm -rf "$P" && mkdir -p "$P/sub"
echo old >"$P/sub/f"
expect_rc 0 start
sleep 0.1
mount --bind "$P" "$P" || fail "could not stack a bind of $P over itself"
echo "through the stack" >"$P/sub/f" # lands in the area: the stack is the area's tmpfs
sd stop
rc=$?
cat "$OUT"
umount "$P" 2>/dev/null
if [ "$rc" != 0 ]; then
	expect_rc 0 stop
fi
[ "$(cat "$P/sub/f")" = "through the stack" ] || fail "what was written through the stacked bind was lost"
[ -z "$(scratch_mounts | grep -vxF "$SCRATCH")" ] || fail "stop left mounts: $(scratch_mounts)"
pass "the directory's own bind stacked over it: its writes synced back (first stop exit $rc)"

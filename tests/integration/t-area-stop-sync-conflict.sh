#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# A stop whose sync back of a persist area meets an entry changed on both
# sides (in the area, and in the directory through another way to it
# while the area covered it, or while someone had uncovered it): the sync
# keeps the directory's version in place and the area's beside it (the
# three-way rule of copy_sync.c).  stop exits 1 naming the area, the entry
# and what to do; the state then says so: `status` shows the area failed,
# exit 1, until the next stop (or start) clears it.  Stop used to unlink
# the area's record while leaving it mounted over the directory: `status`
# printed nothing (exit 0) and the next stop left the bind behind.
. "$(dirname "$0")/lib-area.sh"

P=$SCRATCH/dir
write_conf <<EOT
[area both]
path = $P
backend = tmpfs
size = 64M
persist = yes
EOT

# after_conflict: the stop that met the conflict has run
after_conflict() {
	grep -q "area 'both'.*'sub/f'.*sub/f.storaged-area.*compare the two and keep what you need" "$OUT" ||
		{ cat "$OUT"; fail "stop's error does not name the area, the entry and what to do"; }
	[ -z "$(scratch_mounts)" ] || fail "stop left mounts: $(scratch_mounts)"
	[ "$(cat "$P/sub/f")" = dir ] && [ "$(cat "$P/sub/f.storaged-area")" = area ] ||
		fail "not both versions kept in the directory"
	[ "$(cat "$P/sub/g")" = "area only" ] || fail "the area's other change was not synced back"
	expect_rc 1 status
	grep -E "^area +both +$P +failed .*sub/f.storaged-area" "$OUT" >/dev/null ||
		{ cat "$OUT"; fail "status does not show the area failed with the conflict"; }
	expect_rc 0 stop
	expect_rc 0 status
	grep -q "storaged has set up nothing" "$OUT" || { cat "$OUT"; fail "the next stop did not clear it"; }
}

# 1. the directory changed through another way to it while covered: a
# bind of its parent elsewhere (without the area's bind)
mkdir -p "$P/sub" "$SCRATCH/alt"
echo old >"$P/sub/f"
echo old >"$P/sub/g"
expect_rc 0 start
sleep 0.1 # past the area's baseline (a clock tick: 1-10 ms)
echo area >"$P/sub/f"
echo "area only" >"$P/sub/g"
mount --bind "$SCRATCH" "$SCRATCH/alt" || fail "cannot bind $SCRATCH"
echo dir >"$SCRATCH/alt/dir/sub/f"
umount "$SCRATCH/alt"
expect_rc 0 status
expect_rc 1 stop
after_conflict
pass "covered, changed on both sides: stop exits 1, status shows it (exit 1) until the next stop"

# 2. as C27: someone unmounted the area's bind and wrote to the directory
rm -rf "$P" && mkdir -p "$P/sub"
echo old >"$P/sub/f"
echo old >"$P/sub/g"
expect_rc 0 start
sleep 0.1
echo area >"$P/sub/f"
echo "area only" >"$P/sub/g"
umount "$P" || fail "could not unmount the bind"
sleep 0.1 # past the directory's baseline
echo dir >"$P/sub/f"
expect_rc 1 stop
after_conflict
pass "uncovered, changed on both sides: stop exits 1, status shows it (exit 1) until the next stop"

# 3. a start after such a stop sets the area up again, and status is clean
rm -rf "$P" && mkdir -p "$P/sub"
echo old >"$P/sub/f"
expect_rc 0 start
sleep 0.1
echo area >"$P/sub/f"
umount "$P"
sleep 0.1
echo dir >"$P/sub/f"
expect_rc 1 stop
expect_rc 0 start
expect_rc 0 status
grep -E "^area +both +$P +active" "$OUT" >/dev/null || { cat "$OUT"; fail "status after start: not the area active alone"; }
[ "$(grep -c "^area" "$OUT")" = 1 ] || { cat "$OUT"; fail "status lists the area twice"; }
expect_rc 0 stop
[ -z "$(scratch_mounts)" ] || fail "stop left mounts: $(scratch_mounts)"
pass "a start after it sets the area up again: status clean"

# 4. a sync (not a stop) meets the conflict, the area stays mounted: it
# exits 1 naming the entry, without calling the committed sync failed
rm -rf "$P" && mkdir -p "$P/sub"
echo old >"$P/sub/f"
expect_rc 0 start
sleep 0.1
echo area >"$P/sub/f"
mount --bind "$SCRATCH" "$SCRATCH/alt" || fail "cannot bind $SCRATCH"
echo dir >"$SCRATCH/alt/dir/sub/f"
umount "$SCRATCH/alt"
expect_rc 1 sync both
grep -q "'sub/f'.*sub/f.storaged-area" "$OUT" || { cat "$OUT"; fail "sync's error does not name the entry"; }
grep -q "sync back failed\|not unique" "$OUT" && { cat "$OUT"; fail "sync calls a committed sync with a conflict failed"; }
# status says so until the area is stopped: exit 1, naming the entry
expect_rc 1 status
grep -q "found 1 entry changed both.*sub/f.storaged-area" "$OUT" || { cat "$OUT"; fail "status does not name the entry kept on both sides"; }
grep -q "its last sync back failed" "$OUT" && { cat "$OUT"; fail "status tells to fix a sync that only kept an entry on both sides"; }
sleep 0.1
echo "area again" >"$P/sub/f" # the area goes on with it
# the stop after it keeps the directory's version (the conflict is open
# until the area is gone), the area's latest beside it
expect_rc 1 stop
# its own sync found the conflict again: said once, not again as an
# earlier sync's (a fresh user's trial counted three)
[ "$(grep -c "'sub/f'" "$OUT")" = 1 ] || { cat "$OUT"; fail "stop names the conflict more than once"; }
[ "$(cat "$P/sub/f")" = dir ] || fail "the stop after a sync's conflict replaced the directory's version: '$(cat "$P/sub/f")'"
[ "$(cat "$P/sub/f.storaged-area")" = "area again" ] || fail "the area's latest version is not beside it"
[ -z "$(scratch_mounts)" ] || fail "stop left mounts: $(scratch_mounts)"
expect_rc 0 stop
pass "a sync that meets a conflict exits 1 naming it; the stop after it keeps the directory's version"

# 5. the directory changed alone (the area not): a sync keeps the
# directory's version and entry, and so does every sync after it, the
# stop's too, while what the area changes afterwards is synced as usual
rm -rf "$P" && mkdir -p "$P/sub"
echo orig >"$P/sub/f1"
echo orig >"$P/sub/g"
expect_rc 0 start
sleep 0.1
mount --bind "$SCRATCH" "$SCRATCH/alt" || fail "cannot bind $SCRATCH"
echo under >"$SCRATCH/alt/dir/sub/f1"
echo keep >"$SCRATCH/alt/dir/sub/only-under"
umount "$SCRATCH/alt"
expect_rc 0 sync both
sleep 0.1
echo "area's" >"$P/sub/g"
touch "$P/sub/new"
expect_rc 0 sync both
expect_rc 0 stop
[ "$(cat "$P/sub/f1")" = under ] || fail "a later sync or the stop replaced the directory's sub/f1: '$(cat "$P/sub/f1")'"
[ "$(cat "$P/sub/only-under" 2>&1)" = keep ] || fail "a later sync or the stop deleted the directory's sub/only-under"
[ "$(cat "$P/sub/g")" = "area's" ] && [ -e "$P/sub/new" ] || fail "the area's later changes were not synced back"
[ -z "$(scratch_mounts)" ] || fail "stop left mounts: $(scratch_mounts)"
pass "what a sync kept of the directory's stays at every later sync and at the stop"

# 6. a sync of an area whose bind someone unmounted: one error, saying
# what to do (stop), not also "run storaged sync" (which fails again)
rm -rf "$P" && mkdir -p "$P/sub"
echo old >"$P/sub/f"
expect_rc 0 start
umount "$P" || fail "could not unmount the bind"
expect_rc 1 sync both
grep -q "\`$(sd_self) stop\` says what becomes of its content" "$OUT" || { cat "$OUT"; fail "sync of an uncovered area does not point to stop"; }
grep -q "run \`$(sd_self) sync both\`" "$OUT" && { cat "$OUT"; fail "sync of an uncovered area also says to sync again"; }
sd stop >/dev/null 2>&1
[ -z "$(scratch_mounts)" ] || fail "stop left mounts: $(scratch_mounts)"
pass "a sync of an uncovered area says one thing: stop"

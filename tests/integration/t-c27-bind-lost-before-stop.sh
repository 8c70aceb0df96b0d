#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# C27: someone else unmounted the bind of a persist area over its
# directory before `stop`.  The three-way rule, by the baselines of the
# seed and the last sync: a directory unchanged since is synced as usual
# (a warning, exit 0); where both sides changed, an entry changed on one
# side carries over (area or directory, deletions too) and one changed on
# both keeps the directory's version in place and the area's beside it
# under a name the error gives (exit 1).  The area's data is never just
# dropped, and not kept only under the state directory.
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
sleep 1
echo new >"$P/sub/f"
echo made >"$P/made"
expect_rc 0 sync lost
sleep 1
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
sleep 1
echo "area" >"$P/sub/area-chg"
echo "area" >"$P/sub/both-chg"
rm "$P/sub/area-del"
echo "area" >"$P/sub/area-new"
umount "$P" || fail "could not unmount the bind"
sleep 1 # past the directory's baseline
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

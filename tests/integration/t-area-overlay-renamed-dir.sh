#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# seed = overlay, persist = yes: a directory renamed in the area after a
# sync carried it reaches the directory whole at the next `sync`.  The
# sync applied only upper-layer entries whose ctime moved since the last
# one; a file keeps its ctime when a directory above it is renamed, so the
# renamed directory was made empty in the directory while the old name's
# whiteout deleted the files there: on the disk they were gone until
# `stop` (a power cut lost them), status said the sync was ok (found by a
# fresh user's trial).  Also a rename over another directory (rm -rf e &&
# mv d e) and one of a directory inside a renamed one.
. "$(dirname "$0")/lib-area.sh"

P=$SCRATCH/data
LOWER=$RUN/areas/o/lower
mkdir -p "$P"
write_conf <<EOT
[area o]
path = $P
backend = tmpfs
size = 64M
seed = overlay
persist = yes
EOT
expect_rc 0 start
# a tick past each sync's stamp (it keeps whole seconds)
pause() { sleep 1.1; }
mkdir -p "$P/build/sub" "$P/d" "$P/e"
echo obj >"$P/build/a.o" && echo deep >"$P/build/sub/b.o"
echo "was d" >"$P/d/only" && echo "d's same" >"$P/d/same"
echo "e's old" >"$P/e/old" && echo "e's same, longer" >"$P/e/same"
expect_rc 0 sync o
pause
expect_rc 0 sync o # nothing new: the directories are in the directory since
pause
mv "$P/build" "$P/build.old"
rm -rf "$P/e" && mv "$P/d" "$P/e"
expect_rc 0 sync o
# what the disk holds now: the directory underneath, through the area's
# private view of it
for f in build.old/a.o build.old/sub/b.o e/only e/same; do
	[ -f "$LOWER/$f" ] || fail "after the sync, '$f' is not in the directory: $(cd "$LOWER" && find . | LC_ALL=C sort | tr '\n' ' ')"
done
[ ! -e "$LOWER/build" ] && [ ! -e "$LOWER/d" ] && [ ! -e "$LOWER/e/old" ] || fail "the renamed-away names are still in the directory"
[ "$(cat "$LOWER/e/same")" = "d's same" ] || fail "e/same in the directory is e's old one, not d's"
pass "renamed directories reach the directory whole at the next sync"
pause
mv "$P/build.old/sub" "$P/build.old/sub2" && mv "$P/build.old" "$P/build.older"
expect_rc 0 sync o
[ "$(cat "$LOWER/build.older/sub2/b.o" 2>&1)" = deep ] && [ "$(cat "$LOWER/build.older/a.o" 2>&1)" = obj ] ||
	fail "a directory renamed inside a renamed one: $(cd "$LOWER" && find . | LC_ALL=C sort | tr '\n' ' ')"
pass "a directory renamed inside a renamed one, at the next sync"
# a file made in the area with three names, in three directories: one
# inode on the disk too (each name was copied apart)
pause
echo linked >"$P/new" && ln "$P/new" "$P/e/new2" && ln "$P/new" "$P/build.older/new3"
expect_rc 0 sync o
links() { stat -c %h:%i "$@" | sort -u | tr '\n' ' '; }
[ "$(links "$LOWER/new" "$LOWER/e/new2" "$LOWER/build.older/new3")" = "$(links "$LOWER/new")" ] &&
	[ "$(stat -c %h "$LOWER/new")" = 3 ] ||
	fail "three names of one file in the area are not one file in the directory: $(links "$LOWER/new" "$LOWER/e/new2" "$LOWER/build.older/new3")"
pass "hard links made in the area are hard links in the directory"
expect_rc 0 stop
[ "$(stat -c %h "$P/new")" = 3 ] && [ "$(cat "$P/e/new2")" = linked ] || fail "stop: the three names are not one file"
[ "$(cat "$P/build.older/sub2/b.o")" = deep ] && [ "$(cat "$P/e/only")" = "was d" ] || fail "stop: the tree is not the area's"
[ -z "$(scratch_mounts)" ] || fail "stop left mounts: $(scratch_mounts)"
pass "stop: the area's tree, its hard links"

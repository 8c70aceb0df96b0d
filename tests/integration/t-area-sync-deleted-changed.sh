#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The three-way rule of a persist area's sync back (copy_sync_kept.c) for
# an entry that was there at the last sync, deleted on one side and
# changed on the other, while the directory holding it also had names
# added.  The directory underneath is reached through a bind of its
# parent made before `start` (V, kept private: the area's mount does not
# show there).  Both used to be kept silently, exit 0:
#  1. deleted in the area, changed underneath, at the area's root (where
#     the sync's own working directory is made) and below it, with names
#     added underneath: the directory's version stays, reported (exit 1);
#  2. changed in the area, deleted underneath, with names added in the
#     area: the area's version comes back, reported (exit 1);
#  3. both at once among one-side changes, renames on either side and new
#     names on both: the two conflicts reported, nothing else;
#  4. renamed in the area and then changed, nothing changed underneath:
#     the area's alone, carried, exit 0.  At the root this was reported
#     as deleted underneath (exit 1): the lower root's mtime, which told
#     whether a name was removed there, is moved by each sync's own
#     working directory.
. "$(dirname "$0")/lib-area.sh"

W=$SCRATCH/work
P=$W/proj
V=$SCRATCH/view
mkdir -p "$W" "$V"
persist_conf "$P"

# fresh: P holds f1..f13, d/f and the same in sub/, V shows P's parent
# underneath
fresh() {
	umount "$V" 2>/dev/null
	rm -rf "$P" && mkdir -p "$P/d" "$P/sub/d"
	echo old >"$P/d/f" && echo old >"$P/sub/d/f"
	for i in $(seq 1 13); do
		echo "old $i" >"$P/f$i"
		echo "old $i" >"$P/sub/f$i"
	done
	mount --bind "$W" "$V" && mount --make-private "$V" || fail "cannot bind $W at $V"
	expect_rc 0 start
	echo area >"$P/probe"
	[ ! -e "$V/proj/probe" ] || fail "$V/proj shows the area, not the directory underneath"
	rm "$P/probe"
	sleep 0.1 # past the baselines (a clock tick: 1-10 ms)
}

# stop_reports ENTRY:WHAT... -- OTHER...: the stop exits 1 naming each
# ENTRY with WHAT became of it, and no OTHER entry; a second stop has
# nothing to do
stop_reports() {
	local a
	umount "$V"
	expect_rc 1 stop
	while [ $# -gt 0 ] && [ "$1" != -- ]; do
		grep -q "'${1%%:*}' (${1#*:}" "$OUT" || { cat "$OUT"; fail "stop's error does not name '${1%%:*}' (${1#*:})"; }
		shift
	done
	[ $# -gt 0 ] && shift
	for a in "$@"; do
		grep -q "'$a'" "$OUT" && { cat "$OUT"; fail "'$a' (one side's change) reported as a conflict"; }
	done
	[ -z "$(scratch_mounts)" ] || fail "stop left mounts: $(scratch_mounts)"
	expect_rc 0 stop
}

DEL_AREA="deleted in the area, changed in the directory"
DEL_DIR="deleted in the directory, changed in the area"

# 1. deleted in the area, changed underneath: at the root, then in sub
# with a name added underneath
fresh
rm "$P/f13"
sleep 0.1
echo dirchg >>"$V/proj/f13"
stop_reports "f13:$DEL_AREA"
[ "$(cat "$P/f13" 2>&1)" = "$(printf 'old 13\ndirchg')" ] || fail "1: the directory's version of f13 is not kept"
pass "1: deleted in the area, changed underneath, at the area's root: kept, exit 1"

fresh
rm "$P/sub/f13"
sleep 0.1
echo dirchg >>"$V/proj/sub/f13"
echo new >"$V/proj/sub/dirnew"
stop_reports "sub/f13:$DEL_AREA" -- sub/dirnew
[ "$(cat "$P/sub/f13" 2>&1)" = "$(printf 'old 13\ndirchg')" ] || fail "1b: the directory's version of sub/f13 is not kept"
[ "$(cat "$P/sub/dirnew" 2>&1)" = new ] || fail "1b: the directory's new file is lost"
pass "1b: the same in a directory that had a name added underneath: kept, exit 1"

# 2. changed in the area (which added a name beside it), deleted underneath;
# also after a sync, whose working directory in the lower root moved the
# root's mtime (the root's names are then told by the record of the mtime
# the sync left: COPY_LOWER_ROOT_XATTR)
for d in "" sub/ "sync "{,sub/}; do
	fresh
	synced=
	[ "${d#sync }" = "$d" ] || { expect_rc 0 sync && sleep 0.1 && d=${d#sync } && synced=", after a sync"; }
	echo areachg >>"$P/${d}f10"
	echo new >"$P/${d}areanew"
	sleep 0.1
	rm "$V/proj/${d}f10"
	stop_reports "${d}f10:$DEL_DIR" -- "${d}areanew"
	[ "$(cat "$P/${d}f10" 2>&1)" = "$(printf 'old 10\nareachg')" ] || fail "2: the area's version of ${d}f10 is not back"
	[ "$(cat "$P/${d}areanew" 2>&1)" = new ] || fail "2: the area's new file ${d}areanew is lost"
	pass "2: changed in the area beside a new name, deleted underneath (in '${d:-the root}'$synced): restored, exit 1"
done

# 3. several changes at once, in both directories
for d in "" sub/; do
	fresh
	rm "$P/${d}f13"               # conflict: changed underneath
	echo areachg >>"$P/${d}f10"   # conflict: deleted underneath
	echo areachg >>"$P/${d}f1"    # the area's alone
	rm "$P/${d}f2"                # the area's alone
	mv "$P/${d}f3" "$P/${d}f3a"   # renamed in the area
	echo new >"$P/${d}areanew"
	sleep 0.1
	echo dirchg >>"$V/proj/${d}f13"
	rm "$V/proj/${d}f10"
	echo dirchg >>"$V/proj/${d}f4"         # the directory's alone
	rm "$V/proj/${d}f5"                    # the directory's alone
	mv "$V/proj/${d}f6" "$V/proj/${d}f6d"  # renamed underneath
	echo new >"$V/proj/${d}dirnew"
	stop_reports "${d}f13:$DEL_AREA" "${d}f10:$DEL_DIR" -- \
		"$d"{f1,f2,f3,f3a,f4,f5,f6,f6d,areanew,dirnew}
	q="$P/$d"
	[ "$(cat "${q}f13")" = "$(printf 'old 13\ndirchg')" ] && [ "$(cat "${q}f10")" = "$(printf 'old 10\nareachg')" ] ||
		fail "3: a conflict's kept version is wrong"
	[ "$(cat "${q}f1")" = "$(printf 'old 1\nareachg')" ] && [ ! -e "${q}f2" ] && [ ! -e "${q}f3" ] &&
		[ "$(cat "${q}f3a")" = "old 3" ] && [ "$(cat "${q}areanew")" = new ] || fail "3: the area's changes are not all synced"
	[ "$(cat "${q}f4")" = "$(printf 'old 4\ndirchg')" ] && [ ! -e "${q}f5" ] && [ ! -e "${q}f6" ] &&
		[ "$(cat "${q}f6d")" = "old 6" ] &&
		[ "$(cat "${q}dirnew")" = new ] || fail "3: the directory's changes are not all kept"
	pass "3: several changes at once (in '${d:-the root}'): the two conflicts reported, nothing else, exit 1"
done

# 4. renamed in the area and changed, nothing changed underneath: at the
# first stop, and after a sync (which made and deleted its working
# directory in the lower root)
for d in "" sub/ "sync "{,sub/}; do
	fresh
	synced=
	[ "${d#sync }" = "$d" ] || { expect_rc 0 sync && sleep 0.1 && d=${d#sync } && synced=", after a sync"; }
	mv "$P/${d}d" "$P/${d}d2" && echo new >"$P/${d}d2/g"       # a directory renamed, a file added in it
	mv "$P/${d}f1" "$P/${d}f1b" && echo more >>"$P/${d}f1b" # a file renamed, then changed
	umount "$V"
	expect_rc 0 stop
	[ -z "$(scratch_mounts)" ] || fail "4: stop left mounts: $(scratch_mounts)"
	[ ! -e "$P/${d}d" ] && [ "$(cat "$P/${d}d2/f")" = old ] && [ "$(cat "$P/${d}d2/g")" = new ] ||
		fail "4: the renamed directory ${d}d2 is not in the directory as the area had it"
	[ ! -e "$P/${d}f1" ] && [ "$(cat "$P/${d}f1b")" = "$(printf 'old 1\nmore')" ] ||
		fail "4: the renamed file ${d}f1b is not in the directory as the area had it"
	pass "4: renamed and changed in the area (in '${d:-the root}'$synced): carried, exit 0"
done

#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# A directory renamed over another in the area, `rm -rf e && mv d e` (a
# rotation: rm -rf backup.1 && mv backup.0 backup.1), with nothing changed
# in the directory underneath, at the root and below it, with and without
# a name added to it after the rename, synced by `sync` or by `stop`.  The
# sync enters the pair e/e; a file of the old d that the lower e lacks has
# a ctime older than the area's baseline (a rename moves only the renamed
# directory's), and was taken as "deleted in the directory, unchanged in
# the area": not copied, while the lower d, gone from the area, was
# deleted.  The file was in neither, exit 0 (found by a hostile trial).
# An entry is deleted in the directory only where the directory's names
# changed, and a directory renamed in the area makes what it holds
# changed (copy_sync.c, sync_level.moved).
. "$(dirname "$0")/lib-area.sh"

P=$SCRATCH/proj
persist_conf "$P"

for q in "" sub/ "sync " "sync sub/" "add " "add sub/"; do
	s=${q%% *} && [ "$s" = sync ] || [ "$s" = add ] && q=${q#* } || s=
	rm -rf "$P" && mkdir -p "$P/${q}d" "$P/${q}e"
	echo "was d/only" >"$P/${q}d/only"
	echo "d's same" >"$P/${q}d/same"
	echo "e's old one" >"$P/${q}e/old"
	echo "e's same, longer" >"$P/${q}e/same"
	expect_rc 0 start
	sleep 0.1
	rm -rf "$P/${q}e" && mv "$P/${q}d" "$P/${q}e"
	[ "$s" != add ] || echo new >"$P/${q}e/new" # its names changed too
	[ "$s" != sync ] || { expect_rc 0 sync && sleep 0.1; }
	expect_rc 0 stop
	[ -z "$(scratch_mounts)" ] || fail "stop left mounts: $(scratch_mounts)"
	[ ! -e "$P/${q}d" ] && [ ! -e "$P/${q}e/old" ] || fail "${q}: the area's deletions are not synced"
	[ "$(cat "$P/${q}e/same")" = "d's same" ] || fail "${q}: e/same is not d's"
	[ "$(cat "$P/${q}e/only" 2>&1)" = "was d/only" ] ||
		fail "'${q}d' renamed over '${q}e' in the area: its file 'only' is lost (${s:-stop}: $(ls "$P/${q}e" | tr '\n' ' '))"
	[ "$s" != add ] || [ "$(cat "$P/${q}e/new" 2>&1)" = new ] || fail "${q}: e/new is lost"
	case $s in sync) how="by sync" ;; add) how="a name added to it, at stop" ;; *) how="at stop" ;; esac
	pass "'${q}d' renamed over '${q}e' in the area ($how): synced whole"
done

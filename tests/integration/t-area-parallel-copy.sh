#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The parallel copy of storaged-copy (--jobs N, used for every seed and sync
# back) keeps what the one-process copy keeps: a tree of several top-level
# directories, and hard links between them (deferred to the parent's last
# pass), seeded by storaged and compared with a tree listing; the helper run
# directly with --jobs 1 and --jobs 4, on a tree whose top-level directories
# are split into units and on one with enough top-level entries not to be;
# a filesystem mounted below the source is not entered in either.
. "$(dirname "$0")/lib-area.sh"

HELPER=$STORAGED_COPY
[ -x "$HELPER" ] || fail "no storaged-copy at '$HELPER' (beside $STORAGED, or set STORAGED_COPY)"

# deep_tree DIR N: N top-level directories, nested, with modes and times
# that a copy must set after the contents (no hard links)
deep_tree() {
	local d=$1 i
	for i in $(seq 1 "$2"); do
		mkdir -p "$d/top$i/a/b" "$d/top$i/c"
		echo "$i" >"$d/top$i/a/b/file"
		printf 'y%.0s' $(seq 1 3000) >"$d/top$i/c/text"
		ln -s ../c/text "$d/top$i/a/link"
		truncate -s 8M "$d/top$i/c/sparse"
		chmod 0705 "$d/top$i/a"
		chown 1234:4321 "$d/top$i/c/text"
		touch -d '2002-03-04 05:06:07.5' "$d/top$i/a/b" "$d/top$i/a" "$d/top$i"
	done
	mkfifo "$d/top1/fifo"
	echo top >"$d/topfile"
	set_xattr "$d/top2/a/b/file" user.storaged kept 2>/dev/null || true
}

# linked_tree DIR: hard links across top-level directories, from a deep
# directory to a top-level file, and inside one directory
linked_tree() {
	local d=$1
	deep_tree "$d" 3
	ln "$d/topfile" "$d/top1/a/b/to-top"
	ln "$d/top2/a/b/file" "$d/top3/c/to-top2"
	ln "$d/top3/a/b/file" "$d/top3/a/b/same-dir"
	touch -d '2003-01-01' "$d/top1/a/b" "$d/top3/c" "$d/top3/a/b"
}

same_tree() { # SRC DST WHAT
	diff -u <(tree_stat "$1") <(tree_stat "$2") || fail "$3: tree differs (stat)"
	diff -r --no-dereference -x fifo "$1" "$2" || fail "$3: contents differ"
}

# 1. storaged's seed, several top-level directories, no hard links
deep_tree "$SCRATCH/par" 4
tree_stat "$SCRATCH/par" >"$SCRATCH/par.before"
# 2. storaged's seed with hard links across the units
linked_tree "$SCRATCH/lnk"
tree_stat "$SCRATCH/lnk" >"$SCRATCH/lnk.before"
write_conf <<EOT
[area par]
path = $SCRATCH/par
backend = tmpfs
size = 128M
inodes = 1000

[area lnk]
path = $SCRATCH/lnk
backend = tmpfs
size = 128M
inodes = 1000
EOT
expect_rc 0 start
for a in par lnk; do
	is_mountpoint "$SCRATCH/$a" || fail "$a: not covered"
	diff -u "$SCRATCH/$a.before" <(tree_stat "$SCRATCH/$a") || fail "$a: seeded tree differs (stat)"
	diff -r --no-dereference -x fifo "$RUN/areas/$a/lower" "$SCRATCH/$a" || fail "$a: contents differ"
done
l=$SCRATCH/lnk
[ "$(stat -c %i "$l/topfile")" = "$(stat -c %i "$l/top1/a/b/to-top")" ] &&
	[ "$(stat -c %i "$l/top2/a/b/file")" = "$(stat -c %i "$l/top3/c/to-top2")" ] &&
	[ "$(stat -c %i "$l/top3/a/b/file")" = "$(stat -c %i "$l/top3/a/b/same-dir")" ] ||
	fail "lnk: a hard link was split by the parallel copy"
[ "$(stat -c %b "$SCRATCH/par/top1/c/sparse")" -lt 100 ] || fail "par: sparse file filled in"
pass "parallel seed: tree identical, hard links across units kept"

# sync back goes through the same copy
echo changed >"$SCRATCH/lnk/top2/a/b/file"
expect_rc 0 sync lnk
[ "$(cat "$RUN/areas/lnk/lower/top3/c/to-top2")" = changed ] || fail "sync back lost the change"
[ "$(stat -c %h "$RUN/areas/lnk/lower/top3/c/to-top2")" = 2 ] || fail "sync back split a hard link"
expect_rc 0 stop
pass "parallel sync back keeps hard links"

# 3. the helper directly: split (few top-level entries) and unsplit (many)
linked_tree "$SCRATCH/few"
mkdir -p "$SCRATCH/few/top2/mnt"
mount -t tmpfs -o size=1M hidden "$SCRATCH/few/top2/mnt"
echo hidden >"$SCRATCH/few/top2/mnt/inside"
mkdir -p "$SCRATCH/many"
for i in $(seq 1 80); do mkdir "$SCRATCH/many/d$i" && echo "$i" >"$SCRATCH/many/d$i/f"; done
ln "$SCRATCH/many/d1/f" "$SCRATCH/many/d80/link"
touch -d '2004-01-01' "$SCRATCH/many/d80" "$SCRATCH/many/d1"
for t in few many; do
	for j in 1 4; do
		mkdir "$SCRATCH/$t.j$j"
		"$HELPER" --jobs "$j" "$SCRATCH/$t" "$SCRATCH/$t.j$j" || fail "$t: storaged-copy --jobs $j failed"
	done
	same_tree "$SCRATCH/$t.j1" "$SCRATCH/$t.j4" "$t: --jobs 4 against --jobs 1"
	[ "$(stat -c %Y "$SCRATCH/$t.j4")" = "$(stat -c %Y "$SCRATCH/$t")" ] || fail "$t: root mtime not kept"
done
[ -d "$SCRATCH/few.j4/top2/mnt" ] && [ ! -e "$SCRATCH/few.j4/top2/mnt/inside" ] ||
	fail "few: the filesystem mounted below the source was entered"
[ "$(stat -c %i "$SCRATCH/many.j4/d1/f")" = "$(stat -c %i "$SCRATCH/many.j4/d80/link")" ] ||
	fail "many: hard link split"
pass "storaged-copy --jobs 4 equals --jobs 1 (split and unsplit units, mount not entered)"

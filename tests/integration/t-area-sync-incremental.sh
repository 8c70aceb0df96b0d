#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The sync back copies only what changed (issue 15): after `start` (the
# seed sets the area's baseline) a sync with one file changed leaves every
# other file of the directory the same inode; a change that keeps size and
# mtime (mtime set back: `rsync -a` misses it, shown first) is found by its
# ctime; deletions, new files, new directories and a directory's mode
# reach the directory; the directory equals the area after each sync and
# after stop, and no working directory is left.
. "$(dirname "$0")/lib-area.sh"

P=$SCRATCH/dir
mkdir -p "$P/a/b" "$P/gone.d"
for i in $(seq 1 50); do echo "file $i" >"$P/a/f$i"; done
echo same-size-A >"$P/a/b/same"
echo bye >"$P/gone"
echo x >"$P/gone.d/x"
ln "$P/a/f1" "$P/a/b/link1"

# the peer: rsync's quick check (size and mtime) misses a change that
# keeps both
if command -v rsync >/dev/null; then
	mkdir "$SCRATCH/peer-src" "$SCRATCH/peer-dst"
	echo same-size-A >"$SCRATCH/peer-src/f"
	rsync -a "$SCRATCH/peer-src/" "$SCRATCH/peer-dst/"
	m=$(stat -c %y "$SCRATCH/peer-src/f")
	echo same-size-B >"$SCRATCH/peer-src/f" && touch -d "$m" "$SCRATCH/peer-src/f"
	rsync -a "$SCRATCH/peer-src/" "$SCRATCH/peer-dst/"
	[ "$(cat "$SCRATCH/peer-dst/f")" = same-size-A ] && echo "peer: rsync -a kept the old content of a file changed with its mtime set back"
fi

write_conf <<EOT
[area inc]
path = $P
backend = tmpfs
size = 64M
persist = yes
EOT
LOWER=$RUN/areas/inc/lower
expect_rc 0 start
getfattr -n trusted.storaged.synced --only-values "$P" >/dev/null 2>&1 ||
	fail "the seed left no baseline on the area's root"

inodes() { (cd "$LOWER" && find . -path './.storaged-sync.*' -prune -o -printf '%i %p\n' | sort -k2); }
before=$(inodes)
sleep 0.1 # past the coarse clock tick (1-10 ms) of the baseline
m=$(stat -c %y "$P/a/b/same")
echo same-size-B >"$P/a/b/same" && touch -d "$m" "$P/a/b/same"
echo "file 7 changed" >"$P/a/f7"
rm "$P/gone" && rm -r "$P/gone.d"
mkdir -p "$P/new/deep" && echo new >"$P/new/deep/n"
chmod 0700 "$P/a"
expect_rc 0 sync inc
[ "$(cat "$LOWER/a/b/same")" = same-size-B ] || fail "a change with the same size and mtime was not synced"
[ "$(cat "$LOWER/a/f7")" = "file 7 changed" ] || fail "the changed file was not synced"
[ ! -e "$LOWER/gone" ] && [ ! -e "$LOWER/gone.d" ] || fail "deleted entries are still in the directory"
[ "$(cat "$LOWER/new/deep/n")" = new ] || fail "the new directory was not synced"
[ "$(stat -c %a "$LOWER/a")" = 700 ] || fail "the directory's new mode was not synced"
[ "$(stat -c %i "$LOWER/a/f1")" = "$(stat -c %i "$LOWER/a/b/link1")" ] || fail "a hard link was split"
diff -r --no-dereference "$P" "$LOWER" || fail "the directory differs from the area"
after=$(inodes)
kept=$(join -1 2 -2 2 <(echo "$before") <(echo "$after") | awk '$2 == $3' | wc -l)
copied=$(join -1 2 -2 2 <(echo "$before") <(echo "$after") | awk '$2 != $3 { print $1 }' | grep -v '^\.$' | tr '\n' ' ')
[ "$copied" = "./a/b/same ./a/f7 " ] || fail "the sync replaced more than the changed files: $copied"
pass "sync copied the 2 changed files and the new tree, kept $kept entries in place, applied deletions"
[ -z "$(ls -A "$LOWER" | grep -E '^\.storaged-sync\.')" ] || fail "a working directory was left"

# nothing changed: nothing replaced
before=$(inodes)
expect_rc 0 sync inc
[ "$before" = "$(inodes)" ] || fail "a sync with nothing changed replaced files"
pass "a sync with nothing changed replaces nothing"

echo last >"$P/a/f50"
expect_rc 0 stop
[ "$(cat "$P/a/f50")" = last ] || fail "stop did not sync the last change"
[ "$(stat -c %a "$P/a")" = 700 ] || fail "stop: mode"
pass "stop synced the last change"

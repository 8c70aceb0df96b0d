#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# persist = yes: `sync NAME` while active and `stop` copy the area back:
# changed files changed, new files there, deleted files and directories gone,
# owner/mode/xattrs kept, no sync leftovers.
. "$(dirname "$0")/lib-area.sh"

P=$SCRATCH/work
make_tree "$P"
mkdir -p "$P/gone/deep" && echo bye >"$P/gone/deep/x" && echo bye >"$P/gone.txt"
write_conf <<EOT
[area keep]
path = $P
backend = tmpfs
size = 64M
persist = yes
EOT
expect_rc 0 start
LOWER=$RUN/areas/keep/lower
echo changed >"$P/file"
echo new >"$P/sub/newfile"
mkdir -p "$P/newdir/x" && echo n >"$P/newdir/x/y" && chown 1234:4321 "$P/newdir/x/y" && chmod 4711 "$P/newdir/x/y"
rm -rf "$P/gone" "$P/gone.txt"
set_xattr "$P/newdir/x/y" user.k v 2>/dev/null && xattr=yes || xattr=no
expect_rc 0 sync keep
is_mountpoint "$P" || fail "sync uncovered the directory"
diff -r --no-dereference -x fifo -x chardev "$P" "$LOWER" || fail "after sync NAME: lower differs from the area"
diff -u <(tree_stat "$P") <(tree_stat "$LOWER") || fail "after sync NAME: metadata differs"
ls -A "$LOWER" | grep -qE '^\.storaged-sync\.' && fail "sync left its working directory: $(ls -A "$LOWER" | grep storaged-sync)"
pass "sync NAME while active"

echo "last words" >"$P/sub/deeper/text"
rm "$P/symlink"
tree_stat "$P" >"$SCRATCH/area.final"
expect_rc 0 stop
is_mountpoint "$P" && fail "still covered after stop"
diff -u "$SCRATCH/area.final" <(tree_stat "$P") || fail "stop did not sync back"
[ "$(cat "$P/sub/deeper/text")" = "last words" ] && [ ! -e "$P/symlink" ] && [ ! -e "$P/gone" ] || fail "content"
[ $xattr = no ] || [ "$(get_xattr "$P/newdir/x/y" user.k)" = v ] || fail "xattr lost in sync"
ls -A "$P" | grep -q storaged-sync && fail "sync leftovers in $P"
pass "persist round trip (xattrs: $xattr)"

# persist = no discards the area
sed -i 's/persist = yes/persist = no/' "$CONF"
expect_rc 0 start
echo discard >"$P/file"
expect_rc 0 stop
[ "$(cat "$P/file")" = changed ] || fail "persist = no wrote back"
pass "persist = no discards"

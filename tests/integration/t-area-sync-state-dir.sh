#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# `storaged sync` reads the area records in the state directory and copies
# what they name, as root, so it trusts the directory as start, stop and
# status do (statedir_check()): one others can write, a symbolic link, or
# one below a directory another user could replace is refused with exit
# status 4 and the same advice, and nothing is synced or recorded.
. "$(dirname "$0")/lib-area.sh"

P=$SCRATCH/work
mkdir -p "$P"
echo before >"$P/file"
write_conf <<EOT
[storaged]
sync-interval = 0

[area a]
path = $P
backend = tmpfs
size = 16M
persist = yes
EOT
expect_rc 0 start
echo changed >"$P/file"

# what a sync would change: the synced copy, the area records, the sync
# times status and the metrics read
snapshot() { find "$RUN" -printf '%p %s %T@ %m\n' 2>/dev/null | sort; }
unchanged() {
	[ "$(cat "$RUN/areas/a/lower/file")" = before ] || fail "$1: the change was synced"
	[ "$(snapshot)" = "$BEFORE" ] || fail "$1: the state directory changed"
}

# sync_in DIR WANT ARGS...: storaged sync with --state-dir DIR
sync_in() {
	local dir=$1 want=$2 rc
	shift 2
	"$STORAGED" -c "$CONF" -f "$FSTAB" --state-dir "$dir" sync "$@" >"$OUT" 2>&1
	rc=$?
	[ "$rc" = "$want" ] || { cat "$OUT"; fail "sync --state-dir $dir $* exited $rc, expected $want"; }
}
expect() { grep -qF -- "$1" "$OUT" || { cat "$OUT"; fail "no '$1' in what sync said"; }; }

# refused DIR WHY WORDS...: `sync` and `sync a` with --state-dir DIR exit
# 4, say each of WORDS, and change nothing
refused() {
	local dir=$1 why=$2 arg w
	shift 2
	BEFORE=$(snapshot)
	for arg in "" a; do
		sync_in "$dir" 4 $arg
		for w in "$@"; do expect "$w"; done
		unchanged "sync $arg $why"
	done
}

chmod 0777 "$RUN"
refused "$RUN" "in a state directory others can write" \
	"state directory '$RUN' is owned by uid 0, mode 0777" "chmod go-w $RUN"
chmod 0755 "$RUN"
pass "a state directory others can write: sync refuses with start's words, syncs nothing"

ln -s "$RUN" "$SCRATCH/link"
refused "$SCRATCH/link" "through a linked state directory" \
	"state directory '$SCRATCH/link' is a symbolic link" "--state-dir $RUN"
pass "a symbolic link as the state directory: sync refuses, the real path named"

chmod 0777 "$SCRATCH"
refused "$RUN" "below a directory others can write" "'$SCRATCH' above it is owned by uid 0, mode 0777"
chmod 0700 "$SCRATCH"
pass "below a directory others can write: sync refuses"

expect_rc 0 sync a
[ "$(cat "$RUN/areas/a/lower/file")" = changed ] || fail "sync in the trusted state directory did not sync"
expect_rc 0 stop
pass "the advice works: the trusted state directory syncs"

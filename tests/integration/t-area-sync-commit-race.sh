#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Issue 42 (a fresh user's trial): what is changed or made in the
# directory (through another path to it) between a sync's walk and its
# rename of that entry is the directory's.  The sync's step 4 moved out of
# the directory whatever held the name by then, and removed it with its
# working directory: a file rewritten there was overwritten, a directory
# made there in place of a file was deleted with all below it, exit 0.
# Each case holds the sync at its one rename (strace delays it 2 s) while
# the directory's entry changes underneath:
#  rewrite: g, changed in the area, rewritten in the directory;
#  swap:    y, changed in the area, replaced there by a directory;
#  delete:  d, deleted in the area, rewritten in the directory;
#  made:    n, new in the area, made in the directory too.
# The directory's version stays in place, the area's goes beside it
# (NAME.storaged-area), the sync names it and exits 1; the next sync keeps
# both and is silent; stop leaves both.
. "$(dirname "$0")/lib-area.sh"
. "$(dirname "$0")/lib-live.sh"
need_fault_injection

P=$SCRATCH/proj
mkdir -p "$P"
echo "old g" >"$P/g"
echo "old y" >"$P/y"
echo "old d" >"$P/d"
quiet_persist_conf "$P"
expect_rc 0 start

# held CASE UNDERNEATH...: a sync of the area's one change, held at its
# rename while the shell command UNDERNEATH changes the directory
held() {
	local case=$1 pid
	shift
	# LeakSanitizer reads its own process through ptrace: not under strace
	ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" \
		strace -f -qq -o /dev/null -e trace=renameat2 -e inject=renameat2:delay_enter=2000000:when=1 \
		"$STORAGED" -c "$CONF" -f "$FSTAB" --state-dir "$RUN" sync p >"$OUT" 2>&1 &
	pid=$!
	wait_intent || fail "$case: the sync never recorded its intent"
	eval "$*"
	wait $pid
	echo $? >"$SCRATCH/rc"
}

# both CASE NAME WANT-DIRECTORY'S WANT-AREA'S: the held sync said NAME,
# exit 1; the directory's NAME is WANT-DIRECTORY'S (a file's content, or
# "dir:FILE=CONTENT"), the area's beside it; the next sync is silent
both() {
	local case=$1 name=$2 lower=$3 area=$4
	[ "$(cat "$SCRATCH/rc")" = 1 ] || { cat "$OUT"; fail "$case: the sync exited $(cat "$SCRATCH/rc"), expected 1"; }
	grep -q "'$name'" "$OUT" || { cat "$OUT"; fail "$case: the sync does not name '$name'"; }
	case $lower in
	dir:*)
		lower=${lower#dir:}
		[ "$(cat "$LOWER/$name/${lower%%=*}" 2>/dev/null)" = "${lower#*=}" ] ||
			fail "$case: the directory made at '$name' underneath lost '${lower%%=*}': $(ls -la "$LOWER" "$LOWER/$name" 2>&1)"
		;;
	*)
		[ "$(cat "$LOWER/$name" 2>/dev/null)" = "$lower" ] ||
			fail "$case: the directory's '$name' is '$(cat "$LOWER/$name" 2>&1)', not its own '$lower'"
		;;
	esac
	if [ -n "$area" ]; then
		[ "$(cat "$LOWER/$name.storaged-area" 2>/dev/null)" = "$area" ] ||
			fail "$case: the area's version is not beside it: $(ls "$LOWER")"
		grep -q "$name.storaged-area" "$OUT" || { cat "$OUT"; fail "$case: the sync does not say where the area's version is"; }
	fi
	sleep 0.1
	expect_rc 0 sync p
	[ -s "$OUT" ] && { cat "$OUT"; fail "$case: the next sync was not silent"; }
	[ -n "$area" ] && area=", the area's beside it"
	pass "$case: changed underneath between the walk and the rename: the directory's stays$area, exit 1"
}

sleep 0.1
echo "area g" >"$P/g"
held rewrite 'echo "directory g" >"$LOWER/g"'
both rewrite g "directory g" "area g"

echo "area y" >"$P/y"
held swap 'rm "$LOWER/y"; mkdir "$LOWER/y"; echo precious >"$LOWER/y/inner"'
both swap y "dir:inner=precious" "area y"

rm "$P/d"
held delete 'echo "directory d" >"$LOWER/d"'
both delete d "directory d" ""

echo "area n" >"$P/n"
held made 'echo "directory n" >"$LOWER/n"'
both made n "directory n" "area n"

expect_rc 0 sync p
expect_rc 1 stop
for f in g y/inner d n; do [ -e "$P/$f" ] || fail "after stop: $f is gone: $(ls -R "$P")"; done
[ "$(cat "$P/g")" = "directory g" ] && [ "$(cat "$P/g.storaged-area")" = "area g" ] ||
	fail "after stop: g and its area version: $(ls "$P")"
pass "stop leaves both versions of each"

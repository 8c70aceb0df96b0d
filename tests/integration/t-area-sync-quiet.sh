#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Quiet on success, as mount -a is: `sync` and `sync NAME` say "synced
# back" (in stop's words) only for an area whose sync copied, deleted or
# kept something; a sync that found nothing changed prints nothing, and
# exits 0.  A resident's periodic sync is silent likewise.
. "$(dirname "$0")/lib-area.sh"

P=$SCRATCH/work
Q=$SCRATCH/other
mkdir -p "$P" "$Q"
echo before >"$P/file"
echo before >"$Q/file"
write_conf <<EOT
[storaged]
sync-interval = 0

[area a]
path = $P
backend = tmpfs
size = 16M
persist = yes

[area b]
path = $Q
backend = tmpfs
size = 16M
persist = yes
EOT
expect_rc 0 start

# silent: nothing but the exit status, not even an info line
quiet() {
	expect_rc 0 "$@"
	[ ! -s "$OUT" ] || { cat "$OUT"; fail "storaged $* printed this, though nothing changed since the last sync"; }
}

note_synced() { grep -qF "area '$1': synced back into '$2'" "$OUT" || { cat "$OUT"; fail "$3: no 'synced back into' line for '$1'"; }; }

quiet sync a
quiet sync
pass "a sync of unchanged areas prints nothing"

echo changed >"$P/file"
expect_rc 0 sync a
note_synced a "$P" "sync a after a change"
[ "$(wc -l <"$OUT")" = 1 ] || { cat "$OUT"; fail "sync a printed more than its one line"; }
[ "$(cat "$RUN/areas/a/lower/file")" = changed ] || fail "the change is not in the directory"
quiet sync a
pass "sync a says it synced, in stop's words, when it copied; then nothing"

rm "$Q/file"
expect_rc 0 sync
note_synced b "$Q" "sync after a deletion in b"
! grep -q "area 'a'" "$OUT" || { cat "$OUT"; fail "sync spoke of 'a', which did not change"; }
[ ! -e "$RUN/areas/b/lower/file" ] || fail "the deletion is not in the directory"
quiet sync
pass "sync says which area it synced a deletion of, and only that one"

echo at-stop >"$P/file"
expect_rc 0 stop
note_synced a "$P" "stop"
! grep -q "synced back into '$Q'" "$OUT" || { cat "$OUT"; fail "stop says it synced b, which did not change"; }
[ "$(cat "$P/file")" = at-stop ] || fail "stop did not carry a's change into '$P'"
pass "stop says 'synced back into' in the same words, of the area that changed only"

expect_rc 0 start
expect_rc 0 stop
! grep -q "synced back" "$OUT" || { cat "$OUT"; fail "a stop after a boot that changed nothing says it synced"; }
pass "a stop after a boot that changed nothing says nothing of a sync"

# --- seed = overlay: a sync applies what changed since the last one (by
# ctime); one right after another has nothing to apply.  Its stamp once
# was the clock minus a second: a sync within a second of the last one
# copied again what that one had copied, and said "synced back" again.
O=$SCRATCH/ov
mkdir -p "$O/keep"
echo before >"$O/file"
write_conf <<EOT
[storaged]
sync-interval = 0

[area c]
path = $O
backend = tmpfs
size = 16M
inodes = 1000
seed = overlay
persist = yes
EOT
expect_rc 0 start
quiet sync c
echo changed >"$O/file"
mkdir "$O/newdir"
echo new >"$O/newdir/f"
expect_rc 0 sync c
note_synced c "$O" "sync c (overlay) after a change"
[ "$(cat "$RUN/areas/c/lower/file")" = changed ] || fail "the overlay's change is not in the directory"
lower_ctime=$(stat -c %Z.%z "$RUN/areas/c/lower/file")
quiet sync c
quiet sync
[ "$(stat -c %Z.%z "$RUN/areas/c/lower/file")" = "$lower_ctime" ] || fail "the sync with nothing to do rewrote 'file'"
pass "overlay: a sync right after a sync prints nothing and rewrites nothing"

# never missed: a change right after a sync (in the same clock tick as its
# stamp, most of these times) is carried by the next one, a file's data,
# a new file and a mode alike
for i in $(seq 1 30); do
	expect_rc 0 sync c
	echo "v$i" >"$O/file"
	echo "n$i" >"$O/newdir/n$i"
	chmod 0600 "$O/keep"
	expect_rc 0 sync c
	note_synced c "$O" "sync c after write $i"
	[ "$(cat "$RUN/areas/c/lower/file")" = "v$i" ] || fail "write $i right after a sync was not carried by the next sync"
	[ "$(cat "$RUN/areas/c/lower/newdir/n$i" 2>/dev/null)" = "n$i" ] || fail "new file $i right after a sync was not carried"
	[ "$(stat -c %a "$RUN/areas/c/lower/keep")" = 600 ] || fail "chmod $i right after a sync was not carried"
	chmod 0755 "$O/keep"
done
expect_rc 0 sync c
quiet sync c
pass "overlay: a change right after a sync is carried by the next one (30 times)"
lower_ctime=$(stat -c %Z.%z "$RUN/areas/c/lower/file")
expect_rc 0 stop
! grep -q "synced back" "$OUT" || { cat "$OUT"; fail "an overlay stop after a sync that left nothing to do says it synced"; }
[ "$(stat -c %Z.%z "$O/file")" = "$lower_ctime" ] || fail "the overlay stop after a quiet sync rewrote 'file'"
pass "overlay: a stop after a quiet sync writes nothing and says nothing of a sync"
[ "$(cat "$O/file")" = v30 ] || fail "stop did not leave the last write in '$O'"

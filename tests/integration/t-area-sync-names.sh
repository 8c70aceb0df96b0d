#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# C21: storaged's working names are never a user's.  A user's file and
# directories named like the sync's working directory (.storaged-sync.NEW,
# .storaged-sync.x, .storaged-sync.<32 hex>, even root-owned-looking 0700)
# are seeded into the area, synced back with their content, and survive
# start, sync and stop; recovery never deletes a planted one; a sync leaves
# no working directory behind.
. "$(dirname "$0")/lib-area.sh"

P=$SCRATCH/home/dir
PLANT=.storaged-sync.0123456789abcdef0123456789abcdef
mkdir -p "$P/sub"
echo base >"$P/base"
echo "user NEW" >"$P/.storaged-sync.NEW"
mkdir "$P/.storaged-sync.x" && echo "user x" >"$P/.storaged-sync.x/f"
mkdir -m 0700 "$P/$PLANT" && echo "planted" >"$P/$PLANT/keep"
chown -R 1234:1234 "$SCRATCH/home"

write_conf <<EOT
[area names]
path = $P
backend = tmpfs
size = 64M
seed = yes
persist = yes
EOT
LOWER=$RUN/areas/names/lower

# only .storaged-sync.<32 hex> entries of the user's besides these
leftovers() {
	ls -A "$1" | grep -E '^\.storaged-sync\.[0-9a-f]{32}$' | grep -vx "$PLANT"
}

expect_rc 0 start
[ "$(cat "$P/.storaged-sync.NEW")" = "user NEW" ] || fail "the user's .storaged-sync.NEW was not seeded"
[ "$(cat "$P/.storaged-sync.x/f")" = "user x" ] || fail "the user's .storaged-sync.x was not seeded"
[ "$(cat "$P/$PLANT/keep")" = planted ] || fail "the planted $PLANT was not seeded"
pass "start seeds the user's entries named like storaged's"

echo "user NEW 2" >"$P/.storaged-sync.NEW"
echo "user x 2" >"$P/.storaged-sync.x/f"
echo "planted 2" >"$P/$PLANT/keep"
expect_rc 0 sync names
[ "$(cat "$LOWER/.storaged-sync.NEW")" = "user NEW 2" ] || fail "sync: .storaged-sync.NEW"
[ "$(cat "$LOWER/.storaged-sync.x/f")" = "user x 2" ] || fail "sync: .storaged-sync.x"
[ "$(cat "$LOWER/$PLANT/keep")" = "planted 2" ] || fail "sync: $PLANT"
[ -z "$(leftovers "$LOWER")" ] || fail "sync left its working directory: $(leftovers "$LOWER")"
diff -r --no-dereference "$P" "$LOWER" || fail "after sync: the directory differs from the area"
pass "sync copies them back, leaves nothing of its own"

# a sync killed while copying leaves its marked working directory; the next
# sync removes it and nothing of the user's
head -c $((64 * 1024 * 1024 - 8 * 1024 * 1024)) /dev/zero >"$P/big" 2>/dev/null || true
"$STORAGED" -c "$CONF" -f "$FSTAB" --state-dir "$RUN" sync names >/dev/null 2>&1 &
pid=$!
for _ in $(seq 1 200); do
	[ -n "$(leftovers "$LOWER")" ] && break
	sleep 0.01
done
kill -9 $pid 2>/dev/null
wait $pid 2>/dev/null
left=$(leftovers "$LOWER")
if [ -n "$left" ]; then
	how=$(stat -c %u:%a "$LOWER/$left" 2>&1)
	[ "$how" = 0:700 ] || fail "the working directory $left is not root's 0700: $how"
	getfattr -n trusted.storaged.sync --only-values "$LOWER/$left" 2>/dev/null | grep -qx names ||
		echo "note: no trusted.storaged.sync mark (killed before it, or no trusted xattrs)"
	pass "killed sync left $left"
fi
rm -f "$P/big"
expect_rc 0 sync names
[ -z "$(leftovers "$LOWER")" ] || fail "recovery left a working directory: $(leftovers "$LOWER")"
[ "$(cat "$LOWER/$PLANT/keep")" = "planted 2" ] || fail "recovery touched the user's $PLANT"
pass "recovery removes only the sync's own working directory"

expect_rc 0 stop
[ "$(cat "$P/.storaged-sync.NEW")" = "user NEW 2" ] || fail "stop: .storaged-sync.NEW"
[ "$(cat "$P/.storaged-sync.x/f")" = "user x 2" ] || fail "stop: .storaged-sync.x"
[ "$(cat "$P/$PLANT/keep")" = "planted 2" ] || fail "stop: $PLANT"
[ "$(stat -c %u "$P/.storaged-sync.NEW")" = 1234 ] || fail "stop: owner of .storaged-sync.NEW"
[ -z "$(leftovers "$P")" ] || fail "stop left a working directory"
pass "stop keeps them"

# a start after a crash (a reboot emptied the record): recovery deletes
# nothing of the user's, not even a root-owned 0700 one without the mark
mkdir -m 0700 "$P/.storaged-sync.ffffffffffffffffffffffffffffffff"
echo root >"$P/.storaged-sync.ffffffffffffffffffffffffffffffff/f"
# ...and the working directory of a sync killed before a reboot, known by
# its mark alone, is removed before the seed (not where /tmp has no
# trusted xattrs)
MARKED=.storaged-sync.eeeeeeeeeeeeeeeeeeeeeeeeeeeeeeee
mkdir -m 0700 "$P/$MARKED" && echo old >"$P/$MARKED/f"
setfattr -n trusted.storaged.sync -v names "$P/$MARKED" 2>/dev/null || rm -rf "${P:?}/$MARKED"
marked=no
[ -e "$P/$MARKED" ] && marked=yes
expect_rc 0 start
[ $marked = no ] || [ ! -e "$P/$MARKED" ] || fail "start kept a marked working directory of this area"
[ -e "$P/.storaged-sync.ffffffffffffffffffffffffffffffff/f" ] || fail "start deleted an unmarked root-owned directory"
[ "$(cat "$P/$PLANT/keep")" = "planted 2" ] || fail "start touched the user's $PLANT"
[ "$(cat "$P/.storaged-sync.NEW")" = "user NEW 2" ] || fail "start: .storaged-sync.NEW"
expect_rc 0 stop
[ -e "$P/.storaged-sync.ffffffffffffffffffffffffffffffff/f" ] && [ -e "$P/.storaged-sync.x/f" ] ||
	fail "the user's entries did not survive the second stop"
pass "start and stop after a crash delete nothing unmarked (a marked one: $marked, removed)"

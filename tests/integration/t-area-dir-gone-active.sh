#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# A persist area whose directory stops being at its path while the area is
# active: deleted (from a mount namespace where the area does not cover
# it: the kernel then detaches the bind over it), moved away (the same
# way), or its parent renamed.  The area's RAM is then the only place its
# content is.  `sync` and `stop` pointed at each other (each said to run
# the other) while nothing was kept, and `stop` reported a sync back into
# the old path.  Neither may report success; `stop` keeps the area's whole
# tree in the nearest existing directory above the path, on the
# directory's filesystem (.storaged-rescue/AREA-TIME), and says where in
# one line (found by a user's trial).
. "$(dirname "$0")/lib-area.sh"

D=$SCRATCH/disk
P=$D/top/p
mkdir -p "$D"
mount -t tmpfs -o size=16M storaged-disk "$D" || skip "cannot mount a tmpfs"

# reset: what a failed check left (the area still set up) goes away
reset() {
	local m
	for m in $(scratch_mounts); do [ "$m" = "$D" ] || umount -l "$m" 2>/dev/null; done
	rm -rf "$RUN" "${D:?}"/* "$D"/.storaged-rescue
}

for seed in copy overlay; do
	for how in deleted moved parent; do
		t="$seed, $how"
		reset
		mkdir -p "$P" && echo old >"$P/old"
		persist_conf "$P" "$([ $seed = overlay ] && echo overlay)"
		expect_rc 0 start
		echo precious >"$P/new" && echo changed >"$P/old"
		case $how in
		deleted) unshare -m sh -c 'umount "$1" && rm -rf "$1"' - "$P" ;;
		moved) unshare -m sh -c 'umount "$1" && mv "$1" "$1.away"' - "$P" ;;
		parent) mv "$D/top" "$D/top2" ;;
		esac || fail "$t: could not do it"
		sd sync p && { cat "$OUT"; fail "$t: sync reported success"; }
		grep -q "'$P'" "$OUT" || { cat "$OUT"; fail "$t: sync does not name '$P'"; }
		grep -q "area 'p': synced back into" "$OUT" && { cat "$OUT"; fail "$t: sync says it synced"; }
		cp "$OUT" "$SCRATCH/sync.out"
		sd stop && { cat "$OUT"; fail "$t: stop reported success"; }
		grep -q "area 'p': synced back into" "$OUT" && { cat "$OUT"; fail "$t: stop says it synced"; }
		# the two must not send the user to each other
		grep -q ' stop`' "$SCRATCH/sync.out" && grep -q ' sync p`' "$OUT" &&
			{ cat "$SCRATCH/sync.out" "$OUT"; fail "$t: sync and stop each say to run the other"; }
		kept=$(sed -n "s/.*whole tree is kept in '\([^']*\)'.*/\1/p" "$OUT")
		[ -n "$kept" ] || { cat "$OUT"; fail "$t: stop does not say where the area's tree is kept"; }
		grep -q "1 area removed (1 with its content kept apart); see" "$OUT" ||
			{ cat "$OUT"; fail "$t: stop's closing line does not count the area removed, kept apart"; }
		[ "$(cat "$kept/new" 2>&1)" = precious ] && [ "$(cat "$kept/old" 2>&1)" = changed ] ||
			{ cat "$OUT"; fail "$t: the area's files are not in '$kept': $(ls -A "$kept" 2>&1 | tr '\n' ' ')"; }
		case $kept in "$D"/*) ;; *) fail "$t: kept outside the directory's filesystem: '$kept'" ;; esac
		[ "$(scratch_mounts)" = "$D" ] || fail "$t: stop left mounts: $(scratch_mounts)"
		pass "$t: not reported synced; the area's whole tree kept in ${kept#"$D"/}"
	done
done
# the other way `sync` offers: a directory moved back syncs as before
reset
mkdir -p "$P"
persist_conf "$P"
expect_rc 0 start
echo back >"$P/new"
mv "$D/top" "$D/top2"
sd sync p && { cat "$OUT"; fail "moved back: sync reported success before"; }
mv "$D/top2" "$D/top"
expect_rc 0 sync p
expect_rc 0 stop
[ "$(cat "$P/new" 2>&1)" = back ] && [ ! -e "$D/.storaged-rescue" ] || fail "moved back: the area is not synced into '$P'"
pass "the directory moved back: synced into it"

#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# C21: the seed and the sync back copy a tree its unprivileged owner can
# change while the copy runs.  The owner (uid 65534, by setpriv) swaps a
# directory of the tree with a symbolic link to a root-only directory
# (renameat2 RENAME_EXCHANGE, started by inotify when the copy reaches it,
# tests/race/swapper.c), over and over during each copy.  Nothing of that
# root-only directory may ever reach the copy: no file with its content,
# no root-owned or setuid file where the tree had none.
# C21_ROUNDS (default 5) seeds and syncs are raced; the counts are printed.
. "$(dirname "$0")/lib-area.sh"

SWAPPER_BUILT=${RACE_SWAPPER:-$(dirname "$STORAGED")/tests/race/swapper}
[ -x "$SWAPPER_BUILT" ] || skip "no $SWAPPER_BUILT (make check builds it)"
command -v setpriv >/dev/null || skip "setpriv missing"
ROUNDS=${C21_ROUNDS:-5}
NOBODY=65534
NFILES=150

chmod 0755 "$SCRATCH"
install -m 0755 "$SWAPPER_BUILT" "$SCRATCH/swapper"
# the root-only target: setuid root files holding a secret, named as the
# user's files so that a copy following the link finds them
V=$SCRATCH/vroot
mkdir -m 0755 "$V"
for i in $(seq 1 $NFILES); do
	echo ROOTSECRET >"$V/x$i" && chmod 04700 "$V/x$i" && ln "$V/x$i" "$V/y$i"
done
# the user's tree: t/ holds files with two links each (copied last by the
# old copy, by path), tl is the link the attacker swaps in for t; one level
# down (a/), where the old parallel copy splits its units
H=$SCRATCH/home/dir
A=$H/a
mkdir -p "$A/t"
for i in $(seq 1 $NFILES); do echo userdata >"$A/t/x$i" && ln "$A/t/x$i" "$A/t/y$i"; done
ln -s "$V" "$A/tl"
chmod 0755 "$SCRATCH/home"
chown -R $NOBODY:$NOBODY "$H"

as_user() { setpriv --reuid=$NOBODY --regid=$NOBODY --clear-groups "$@"; }

# escaped DIR: prints what in DIR came from the root-only directory
# (directories aside: a failed sync leaves storaged's own, root-only)
escaped() {
	find "$1" ! -type d \( -user 0 -o -perm -4000 -o -perm -2000 \) -print
	grep -rl ROOTSECRET "$1"
}

# race DIR CMD...: runs storaged CMD while the user swaps DIR/t and DIR/tl;
# leaves the swap count in $SCRATCH/swaps and storaged's status in $rc
race() {
	local dir=$1 pid
	shift
	rm -f "$SCRATCH/stop"
	as_user "$SCRATCH/swapper" "$dir" t tl "$SCRATCH/stop" 200000 >"$SCRATCH/swaps" &
	pid=$!
	sleep 0.2 # the watch is in place
	sd "$@"
	rc=$?
	[ "$rc" = 0 ] || sed "s/^/# storaged $*: /" "$OUT" | head -3
	touch "$SCRATCH/stop"
	wait $pid || fail "the swapper failed"
}

write_conf <<EOT
[area race]
path = $H
backend = tmpfs
size = 64M
inodes = 4000
persist = yes
EOT

seed_esc=0 seed_ok=0 sync_esc=0 sync_ok=0 swaps=0
for r in $(seq 1 "$ROUNDS"); do
	race "$A" start
	[ "$rc" = 0 ] && seed_ok=$((seed_ok + 1))
	swaps=$((swaps + $(cat "$SCRATCH/swaps")))
	if is_mountpoint "$H" && [ -n "$(escaped "$H")" ]; then
		seed_esc=$((seed_esc + 1))
		echo "# seed $r escaped: $(escaped "$H" | head -3 | tr '\n' ' ')"
	fi
	# a seed may refuse a tree changing under it; the sync needs an area
	is_mountpoint "$H" || sd start || { cat "$OUT"; fail "start without a race failed"; }
	if is_mountpoint "$H"; then
		# the area is the user's again for the sync rounds: reset it
		rm -rf "$A/t" "$A/tl" && mkdir "$A/t"
		for i in $(seq 1 $NFILES); do echo userdata >"$A/t/x$i" && ln "$A/t/x$i" "$A/t/y$i"; done
		ln -s "$V" "$A/tl"
		chown -R $NOBODY:$NOBODY "$A"
		race "$A" sync race
		[ "$rc" = 0 ] && sync_ok=$((sync_ok + 1))
		swaps=$((swaps + $(cat "$SCRATCH/swaps")))
		if [ -n "$(escaped "$RUN/areas/race/lower")" ]; then
			sync_esc=$((sync_esc + 1))
			echo "# sync $r escaped: $(escaped "$RUN/areas/race/lower" | head -3 | tr '\n' ' ')"
		fi
	fi
	# a sync that met the seed's swaps as changes of the directory keeps
	# both versions of what the area changed too, and so does the stop
	# (exit 1, the area removed and recorded failed: a second stop clears)
	if ! sd stop; then
		grep -q "changed both in the directory" "$OUT" || { cat "$OUT"; fail "stop failed"; }
		sd stop || { cat "$OUT"; fail "the stop after one that kept entries twice failed"; }
	fi
	# the directory after stop is the user's alone again
	rm -rf "$A/t" "$A/tl" "$A"/*.storaged-area && mkdir "$A/t"
	for i in $(seq 1 $NFILES); do echo userdata >"$A/t/x$i" && ln "$A/t/x$i" "$A/t/y$i"; done
	ln -s "$V" "$A/tl"
	chown -R $NOBODY:$NOBODY "$H"
	chmod 0755 "$H"
	for f in "$V"/x*; do [ "$(stat -c %a:%u "$f")" = 4700:0 ] || fail "$f was changed"; done
done
echo "# C21: $ROUNDS seeds ($seed_ok succeeded): $seed_esc escaped; $ROUNDS syncs ($sync_ok succeeded): $sync_esc escaped; $swaps swaps"
[ "$swaps" -gt 0 ] || fail "the swapper never ran: the race was not exercised"
[ "$seed_esc" = 0 ] || fail "$seed_esc of $ROUNDS seeds copied from the root-only directory"
[ "$sync_esc" = 0 ] || fail "$sync_esc of $ROUNDS syncs copied from the root-only directory"
pass "C21: no seed or sync followed the swapped link ($ROUNDS each)"

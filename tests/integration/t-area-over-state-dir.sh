#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# An area over storaged's own state directory.  Found by a new user's
# trial: an area whose path held the state directory (path = P/anc,
# --state-dir P/anc/run) passed `check` ("no step will fail") and
# started; the area's tmpfs then covered the records and private mounts
# storaged keeps there, so status called the bind "unmounted by someone
# else", sync failed, stop could not undo it, and the way out by hand
# lost the file written in the area while stop exited 0.
#
# check refuses such an area at its path line (exit 2), as it does one
# over the state directory itself or inside it; start refuses that area
# alone (exit 1) and sets up the rest.
. "$(dirname "$0")/lib-area.sh"

SDIR=$SCRATCH/anc/run
mkdir -p "$SCRATCH/good" "$SCRATCH/anc"
echo data >"$SCRATCH/good/f"
sd2() { "$STORAGED" -c "$CONF" -f "$FSTAB" --state-dir "$SDIR" "$@" >"$OUT" 2>&1; }

write_conf <<EOT
[area good]
path = $SCRATCH/good
backend = tmpfs
size = 16M
persist = yes

[area anc]
path = $SCRATCH/anc
backend = tmpfs
size = 16M
persist = yes
EOT
sd2 check
rc=$?
[ $rc = 2 ] || { cat "$OUT"; fail "check of an area that holds the state directory exited $rc, expected 2"; }
grep -q "$CONF:8: area 'anc': path '$SCRATCH/anc' holds storaged's state directory '$SDIR'" "$OUT" ||
	{ cat "$OUT"; fail "check did not name the area's path line and the state directory"; }
pass "check refuses an area that holds the state directory, at its path line"

sd2 start
rc=$?
[ $rc = 1 ] || { cat "$OUT"; fail "start exited $rc, expected 1 (the bad area refused alone)"; }
mountpoint -q "$SCRATCH/good" || { cat "$OUT"; fail "start did not set up the good area beside the refused one"; }
! mountpoint -q "$SCRATCH/anc" || fail "start covered the state directory with the refused area"
sd2 stop
rc=$?
[ $rc = 0 ] || { cat "$OUT"; fail "stop exited $rc"; }
! mountpoint -q "$SCRATCH/good" || fail "stop left the good area mounted"
[ "$(cat "$SCRATCH/good/f")" = data ] || fail "the good area's file is not in its directory after stop"
pass "start refuses that area alone and sets up the other; stop undoes it"

# the state directory itself, and a directory inside it
for path in "$RUN" "$RUN/inner"; do
	mkdir -p "$path"
	write_conf <<EOT
[area own]
path = $path
backend = tmpfs
size = 16M
EOT
	sd check
	rc=$?
	[ $rc = 2 ] || { cat "$OUT"; fail "check of an area on '$path' (state directory '$RUN') exited $rc, expected 2"; }
	grep -q "area 'own': path '$path' \(is\|lies inside\) storaged's state directory" "$OUT" ||
		{ cat "$OUT"; fail "check did not say why an area on '$path' is refused"; }
done
pass "check refuses an area on the state directory and one inside it"

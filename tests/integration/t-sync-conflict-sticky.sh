#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# An entry changed on both sides is said by the sync that finds it (exit 1),
# and the baseline moves past it: the next sync is quiet.  But until the
# area is torn down `status` goes on naming it (exit 1), and `stop` says it
# again, exits 1 and records the area failed with it: a conflict found by a
# periodic sync, logged once, is not lost from sight (a fresh user's trial
# found status and stop clean after one sync).
. "$(dirname "$0")/lib-area.sh"

P=$SCRATCH/m1
mkdir -p "$P"
echo base >"$P/a"
echo base >"$P/b"
write_conf <<EOT
[storaged]
sync-interval = 0

[area m]
path = $P
backend = tmpfs
size = 8M
persist = yes
EOT
LOWER=$RUN/areas/m/lower
expect_rc 0 start
echo area >"$P/a"
echo lower >"$LOWER/a"
expect_rc 1 sync m
grep -q "a.storaged-area" "$OUT" || { cat "$OUT"; fail "the sync does not name the entry kept on both sides"; }
expect_rc 0 sync m
[ -s "$OUT" ] && { cat "$OUT"; fail "the next sync repeated the conflict"; }
expect_rc 1 status
grep -q "a.storaged-area" "$OUT" || { cat "$OUT"; fail "status forgot the entry kept on both sides"; }
pass "the conflict: said by its sync, then by status (exit 1), not by every sync"

# the stop that status advises, as it is written there (it named an area,
# which stop refuses: exit 2)
advice=$(grep -o '`[^`]* stop[^`]*`' "$OUT" | tr -d '`')
[ -n "$advice" ] || { cat "$OUT"; fail "status does not say which stop names the conflict again"; }
echo changed >"$P/b"
set -- $advice # the scratch paths have no blanks
shift # "storaged": this build's
"$STORAGED" "$@" >"$OUT" 2>&1
rc=$?
[ $rc = 1 ] || { cat "$OUT"; fail "the stop status advises ($advice) exits $rc, not 1"; }
grep -q "an earlier sync back.*a.storaged-area" "$OUT" || { cat "$OUT"; fail "stop does not say the earlier conflict again"; }
is_mountpoint "$P" && fail "stop left the area mounted"
[ "$(cat "$P/a")" = lower ] && [ "$(cat "$P/a.storaged-area")" = area ] && [ "$(cat "$P/b")" = changed ] ||
	fail "stop lost a version"
expect_rc 1 status
grep -q "failed" "$OUT" || { cat "$OUT"; fail "status after stop does not show the area failed"; }
pass "stop says it again, exits 1, and status shows the area failed until the next start"

#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# SIGTERM while an area is being seeded ends the copy at once: storaged does
# not wait for the copy to finish, reports the interruption, covers nothing,
# leaves no copy helper running, and `stop` finds nothing to undo.  The copy
# is held still deterministically: the helper takes a shared flock() on the
# directory before it copies, and this test holds an exclusive one.
. "$(dirname "$0")/lib-area.sh"
command -v flock >/dev/null || skip "flock(1) missing (util-linux)"

P=$SCRATCH/work
make_tree "$P"
write_conf <<EOT
[area build]
path = $P
backend = tmpfs
size = 64M
EOT
LOCKER=""
# the lock holder goes first at exit, so that the helper (if a bug left it)
# is not stuck on it
trap '[ -n "$LOCKER" ] && kill "$LOCKER" 2>/dev/null; cleanup' EXIT
flock -x "$P" sleep 60 &
LOCKER=$!
sleep 0.2

"$STORAGED" -c "$CONF" -f "$FSTAB" --state-dir "$RUN" start >"$OUT" 2>&1 &
SD=$!
for _ in $(seq 1 100); do
	pgrep -f "storaged-copy .*$SCRATCH" >/dev/null && break
	sleep 0.1
done
pgrep -f "storaged-copy .*$SCRATCH" >/dev/null || { cat "$OUT"; fail "the copy helper never started"; }
kill -TERM "$SD"
for _ in $(seq 1 50); do
	kill -0 "$SD" 2>/dev/null || break
	sleep 0.1
done
if kill -0 "$SD" 2>/dev/null; then
	kill -KILL "$SD"
	fail "storaged did not end within 5 s of SIGTERM while the seed copy was held"
fi
wait "$SD"
rc=$?
sed 's/^/  | /' "$OUT"
[ "$rc" = 1 ] || fail "start exited $rc after SIGTERM, expected 1"
grep -q "interrupted" "$OUT" || fail "no word of the interruption"
sleep 0.3
pgrep -f "storaged-copy .*$SCRATCH" >/dev/null && fail "a copy helper outlived the interrupted start"
is_mountpoint "$P" && fail "the directory was covered by a half-seeded area"
[ -z "$(scratch_mounts)" ] || fail "the interrupted setup left mounts behind: $(scratch_mounts)"
kill "$LOCKER" 2>/dev/null
LOCKER=""
expect_rc 0 stop
[ -z "$(scratch_mounts)" ] || fail "mounts left after stop: $(scratch_mounts)"
pass "SIGTERM during the seed"

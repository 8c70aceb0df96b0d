#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# A persist area is synced back every sync-interval by a resident storaged,
# without any stop: a power cut loses at most one interval.  An area with
# sync-interval = 0 is not; `storaged sync` without a name syncs every
# persist area; status and status --json say when the last sync was.  An
# interval that finds nothing changed prints nothing.
. "$(dirname "$0")/lib-area.sh"

P=$SCRATCH/work
Q=$SCRATCH/other
mkdir -p "$P" "$Q"
echo before >"$P/file"
echo before >"$Q/file"
write_conf <<EOT
[storaged]
sync-interval = 0

[area keep]
path = $P
backend = tmpfs
size = 16M
persist = yes
sync-interval = 2s

[area other]
path = $Q
backend = tmpfs
size = 16M
persist = yes
EOT
sd check || { cat "$OUT"; fail "check refuses sync-interval"; }

"$STORAGED" -c "$CONF" -f "$FSTAB" --state-dir "$RUN" --foreground start >"$SCRATCH/resident.log" 2>&1 &
SD=$!
trap 'kill "$SD" 2>/dev/null; wait "$SD" 2>/dev/null; cleanup' EXIT
for _ in $(seq 100); do is_mountpoint "$P" && is_mountpoint "$Q" && break; sleep 0.1; done
is_mountpoint "$P" && is_mountpoint "$Q" || { cat "$SCRATCH/resident.log"; fail "areas not set up"; }
for _ in $(seq 50); do [ -f "$RUN/storaged.pid" ] && break; sleep 0.1; done
kill -0 "$SD" 2>/dev/null || { cat "$SCRATCH/resident.log"; fail "storaged --foreground did not stay"; }

echo periodic >"$P/file"
echo new >"$P/added"
echo not-yet >"$Q/file"
# due 2 s after the resident began or last synced: 6 s is three intervals
for _ in $(seq 60); do
	[ "$(cat "$RUN/areas/keep/lower/file")" = periodic ] && break
	sleep 0.1
done
[ "$(cat "$RUN/areas/keep/lower/file")" = periodic ] && [ -f "$RUN/areas/keep/lower/added" ] ||
	{ cat "$SCRATCH/resident.log"; fail "the change is not on the directory 6 s after it, with sync-interval = 2s"; }
is_mountpoint "$P" || fail "the periodic sync uncovered the directory"
[ "$(cat "$RUN/areas/other/lower/file")" = before ] || fail "sync-interval = 0 was synced periodically"
pass "periodic sync: the change is on disk without a stop"

# a second change goes down too: the schedule goes on after a sync
echo again >"$P/file"
for _ in $(seq 60); do [ "$(cat "$RUN/areas/keep/lower/file")" = again ] && break; sleep 0.1; done
[ "$(cat "$RUN/areas/keep/lower/file")" = again ] || fail "the second interval did not sync"
pass "periodic sync: again one interval later"

# The schedule is on the monotonic clock: the record's wall-clock time is
# for people.  A wall clock stepped back a day after a sync (NTP, a CMOS
# clock) makes that sync look a day ahead; the next sync still comes one
# interval after it.  The record keeps the monotonic time and the boot.
read -r _ word mono boot <"$RUN/last-sync/keep"
[ "$word" = ok ] && [ -n "$mono" ] && [ "$boot" = "$(cat /proc/sys/kernel/random/boot_id)" ] ||
	fail "the last-sync record has no monotonic time of this boot: $(cat "$RUN/last-sync/keep")"
ahead=$(($(date +%s) + 86400))
printf '%s ok %s %s\n' "$ahead" "$mono" "$boot" >"$RUN/last-sync/keep"
echo stepped >"$P/file"
for _ in $(seq 60); do [ "$(cat "$RUN/areas/keep/lower/file")" = stepped ] && break; sleep 0.1; done
[ "$(cat "$RUN/areas/keep/lower/file")" = stepped ] ||
	{ cat "$SCRATCH/resident.log"; fail "a last sync whose wall clock is a day ahead stopped the periodic sync"; }
# a record of an older storaged (no monotonic time), a day ahead: due at once
printf '%s ok\n' "$ahead" >"$RUN/last-sync/keep"
echo stepped-again >"$P/file"
for _ in $(seq 60); do [ "$(cat "$RUN/areas/keep/lower/file")" = stepped-again ] && break; sleep 0.1; done
[ "$(cat "$RUN/areas/keep/lower/file")" = stepped-again ] ||
	{ cat "$SCRATCH/resident.log"; fail "an older record a day ahead stopped the periodic sync"; }
pass "periodic sync: a wall clock a day ahead moves no sync"

# quiet on success: the intervals that find nothing changed say nothing
# (the line of the sync that brought "again" follows its renames: counted
# once the log stood still for 1.5 s)
said=$(grep -c "synced back" "$SCRATCH/resident.log")
for _ in $(seq 10); do
	sleep 1.5
	[ "$(grep -c "synced back" "$SCRATCH/resident.log")" = "$said" ] && break
	said=$(grep -c "synced back" "$SCRATCH/resident.log")
done
[ "$said" -ge 1 ] || { cat "$SCRATCH/resident.log"; fail "the periodic sync of a change said nothing"; }
sleep 5 # two intervals and more, nothing changed
[ "$(grep -c "synced back" "$SCRATCH/resident.log")" = "$said" ] ||
	{ cat "$SCRATCH/resident.log"; fail "the periodic sync printed 'synced back' though nothing changed"; }
pass "periodic sync: silent when nothing changed"

expect_rc 0 sync
[ "$(cat "$RUN/areas/other/lower/file")" = not-yet ] || fail "sync without a name did not sync 'other'"
pass "sync without a name syncs every persist area"

expect_rc 0 status
grep -E "^area +keep .*last sync [0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:]{8}Z ok" "$OUT" ||
	{ cat "$OUT"; fail "status does not show the last sync of 'keep'"; }
expect_rc 0 status --json
python3 - "$OUT" <<'PY' || { cat "$OUT"; fail "status --json: no numeric last_sync"; }
import json, sys, time
rows = {r["what"]: r for r in json.load(open(sys.argv[1]))["status"] if r["kind"] == "area"}
for name in ("keep", "other"):
    t = rows[name]["last_sync"]
    assert isinstance(t, int) and abs(time.time() - t) < 60, (name, t)
    assert rows[name]["last_sync_ok"] is True, name
PY
pass "status and --json show the last sync"

# The configuration goes wrong while the areas are set up: a line outside
# any section makes it unusable as a whole; then a valid one lacks
# [area keep]; then there is no file.  The area's RAM holds the work
# either way: the resident goes on syncing it by the sync-interval it was
# set up with (its record), and 'other', set up with none, is still not
# synced periodically.
periodic_sync_of() { # CONTENT WHAT
	echo "$1" >"$P/file"
	for _ in $(seq 60); do [ "$(cat "$RUN/areas/keep/lower/file")" = "$1" ] && break; sleep 0.1; done
	[ "$(cat "$RUN/areas/keep/lower/file")" = "$1" ] ||
		{ cat "$SCRATCH/resident.log"; fail "$2 stopped the periodic sync of an active area"; }
}
cp "$CONF" "$SCRATCH/conf.good"
{ echo "stray line"; cat "$SCRATCH/conf.good"; } >"$CONF"
kill -HUP "$SD"
echo other-unsynced >"$Q/file"
periodic_sync_of unusable "a configuration that cannot be used"
printf '[storaged]\nsync-interval = 0\n\n[area other]\npath = %s\nbackend = tmpfs\nsize = 16M\npersist = yes\n' \
	"$Q" >"$CONF"
kill -HUP "$SD"
periodic_sync_of no-section "taking its section out of the configuration"
rm "$CONF"
kill -HUP "$SD"
periodic_sync_of no-file "removing the configuration file"
[ "$(cat "$RUN/areas/other/lower/file")" = not-yet ] || fail "'other' (sync-interval 0) was synced periodically"
cp "$SCRATCH/conf.good" "$CONF"
pass "periodic sync: goes on by the area's own interval without its section or a usable configuration"

kill "$SD"
wait "$SD" 2>/dev/null
expect_rc 0 stop
[ "$(cat "$P/file")" = no-file ] && [ "$(cat "$Q/file")" = other-unsynced ] || fail "stop lost the data"
pass "stop after periodic syncs"

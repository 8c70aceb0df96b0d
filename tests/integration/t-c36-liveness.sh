#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Liveness from the kernel, not from a pid file (issue 42 item 6, C36):
# - a resident storaged is shown by status while it holds its lock, and no
#   longer once SIGKILL ended it, though its pid file stays behind;
# - a pid file naming a live process that is not the resident (a `sleep`,
#   as a reused pid would) is neither shown as a resident nor signalled
#   by `stop`;
# - a waiting.pid naming a live storaged that does not wait (another
#   state directory's resident) is not ended by the next `start`;
# - a `start` killed while it waits for a btrfs member: its record, and
#   the fstab entry's that waits for it, show as "interrupted", exit 1,
#   not "waiting" for ever nor unlisted (table, --json, metrics).
. "$(dirname "$0")/lib.sh"
setup
SLEEP=
SD=
OTHER=
stop_all() {
	for p in $SD $OTHER $SLEEP; do kill -9 "$p" 2>/dev/null; done
	wait 2>/dev/null
}
CLEANUP_HOOK=stop_all

# start_resident DIR: a resident storaged (--foreground) on state
# directory DIR, its pid in $! ; waits for its pid file
start_resident() {
	"$STORAGED" -c "$CONF" -f "$FSTAB" --state-dir "$1" --foreground start >>"$SCRATCH/resident.log" 2>&1 &
	for _ in $(seq 100); do [ -s "$1/storaged.pid" ] && break; sleep 0.1; done
	[ -s "$1/storaged.pid" ] || { cat "$SCRATCH/resident.log"; fail "the resident wrote no pid file in $1"; }
}

note "a resident is shown while it lives"
start_resident "$STATE"
SD=$!
run_sd 0 status
expect_out "resident storaged: pid $SD "

note "...and not once SIGKILL ended it: its pid file stays, the kernel dropped its lock"
kill -9 "$SD"
wait "$SD" 2>/dev/null
[ "$(cat "$STATE/storaged.pid")" = "$SD" ] || fail "the pid file did not stay behind (nothing to test)"
run_sd 0 status
expect_no_out "resident storaged"

note "a pid file naming a live process that is not a resident (a reused pid)"
sleep 300 &
SLEEP=$!
echo "$SLEEP" >"$STATE/storaged.pid"
run_sd 0 status
expect_no_out "resident storaged"
run_sd 0 stop
expect_no_out "stopping the resident"
kill -0 "$SLEEP" 2>/dev/null || fail "stop signalled the process a stale pid file named"

note "a waiting.pid naming a live storaged that does not wait is left alone by start"
start_resident "$SCRATCH/other"
OTHER=$!
echo "$OTHER" >"$STATE/waiting.pid"
run_sd 0 start
expect_no_out "ending the start"
sleep 0.5
kill -0 "$OTHER" 2>/dev/null || fail "start ended another state directory's resident named by a stale waiting.pid"
run_sd 0 stop

command -v mkfs.btrfs >/dev/null || skip "mkfs.btrfs missing (btrfs-progs): the killed wait is not tested"
note "a start killed while it waits for a member: interrupted, not waiting"
mkraid1 "" 256M
detach "$B"
mkdir -p "$SCRATCH/data"
echo "UUID=$FSID  $SCRATCH/data  btrfs  noauto,x-storaged,x-storaged.device-timeout=60s  0 0" >"$FSTAB"
"$STORAGED" -c "$CONF" -f "$FSTAB" --state-dir "$STATE" start >"$SCRATCH/start.log" 2>&1 &
SD=$!
for _ in $(seq 100); do
	sd status --json 2>/dev/null | grep -q '"status": *"waiting"' && break
	sleep 0.1
done
run_sd 0 status
expect_out "waiting"
expect_no_out "interrupted"
kill -9 "$SD"
wait "$SD" 2>/dev/null
run_sd 1 status
expect_out "interrupted"
expect_out "start\` completes it"
# the fstab entry that waited is listed, interrupted too (C36)
expect_out "^mount  *$SCRATCH/data .*interrupted"
run_sd 1 status --json
expect_out '"status": "interrupted"'
expect_out "\"what\": \"$SCRATCH/data\""
run_sd 1 status --format=prometheus
expect_out "storaged_entry_state{kind=\"mount\",entry=\"$SCRATCH/data\",state=\"interrupted\"} 1"
expect_out "storaged_entry_state{kind=\"btrfs\",entry=\"$FSID\",state=\"interrupted\"} 1"
run_sd 0 stop

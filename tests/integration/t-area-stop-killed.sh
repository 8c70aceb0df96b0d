#!/bin/bash
# A stop of a persist area killed while it syncs back: `status` says the
# stop was interrupted and the area is still there (the mount table agrees),
# exits 1, the metrics say "interrupted", and a stop run again finishes the
# sync (the directory then holds what the area held).  The same for a
# `storaged sync` killed midway.  The kill is made while the copy helper
# holds itself with SIGSTOP, so that it lands inside the sync, not by
# timing.
. "$(dirname "$0")/lib.sh"
setup
command -v python3 >/dev/null || skip "python3 missing (reads the JSON)"
P=$SCRATCH/data
mkdir -p "$P"
cat >"$CONF" <<EOT
[storaged]
[area a]
path = $P
size = 256M
inodes = 10000
persist = yes
EOT
HELD=
held_cleanup() { [ -n "$HELD" ] && kill -KILL "$HELD" 2>/dev/null; return 0; }
CLEANUP_HOOK=held_cleanup

run_sd 0 start
for d in 1 2 3 4; do
	mkdir -p "$P/$d"
	for i in $(seq 20); do head -c 4096 /dev/urandom >"$P/$d/$i"; done
done
head -c $((32 * 1024 * 1024)) /dev/urandom >"$P/big"
(cd "$P" && find . -type f -exec md5sum {} + | LC_ALL=C sort -k 2) >"$SCRATCH/sums"

# A storaged beside a copy helper that stops itself (SIGSTOP) before it
# runs the real one: the sync is held inside, for as long as it takes.
mkdir -p "$SCRATCH/bin"
cp "$STORAGED" "$SCRATCH/bin/storaged"
cat >"$SCRATCH/bin/storaged-copy" <<EOT
#!/bin/sh
echo \$\$ >"$SCRATCH/held.pid"
kill -STOP \$\$
exec "$STORAGED_COPY" "\$@"
EOT
chmod 0755 "$SCRATCH/bin/storaged" "$SCRATCH/bin/storaged-copy"

# kill_midway ARGS...: storaged ARGS in the background, killed (SIGKILL)
# while its copy helper is held, and the helper after it
kill_midway() {
	local pid n=0
	rm -f "$SCRATCH/held.pid"
	"$SCRATCH/bin/storaged" -c "$CONF" -f "$FSTAB" --state-dir "$STATE" "$@" >"$SCRATCH/killed.out" 2>&1 &
	pid=$!
	until [ -s "$SCRATCH/held.pid" ]; do
		n=$((n + 1))
		[ "$n" -le 3000 ] || fail "storaged $* ran no copy helper: $(cat "$SCRATCH/killed.out")"
		kill -0 "$pid" 2>/dev/null || fail "storaged $* ended before its copy helper ran: $(cat "$SCRATCH/killed.out")"
		sleep 0.01
	done
	HELD=$(cat "$SCRATCH/held.pid")
	kill -KILL "$pid"
	wait "$pid" 2>/dev/null
	kill -KILL "$HELD"
	HELD=
}

# state_json: the area's STATUS in status --json
state_json() {
	sd status --json 2>/dev/null | python3 -c '
import json, sys
print([e["status"] for e in json.load(sys.stdin)["status"] if e["kind"] == "area"][0])'
}

note "a stop killed while it syncs back"
kill_midway stop
is_mountpoint "$P" || fail "the area is gone after a killed stop: nothing to test"
run_sd 1 status
expect_out "interrupted"
expect_out "a \`storaged stop\` was interrupted while it synced it back and tore it down: the area is still over '$P'"
expect_out "run \`$(sd_self) stop\` again to finish"
[ "$(state_json)" = interrupted ] || fail "status --json says $(state_json), not interrupted"
run_sd 1 status --format=prometheus
expect_out "storaged_area_state{area=\"a\",path=\"$P\",state=\"interrupted\"} 1"
expect_out "storaged_area_state{area=\"a\",path=\"$P\",state=\"active\"} 0"

note "stop again: it finishes, and the directory holds what the area held"
run_sd 0 stop
expect_out "area 'a': synced back into '$P'"
is_mountpoint "$P" && fail "the area is still mounted after the second stop"
(cd "$P" && find . -type f -exec md5sum {} + | LC_ALL=C sort -k 2) | diff "$SCRATCH/sums" - ||
	fail "the directory differs from what the area held"
run_sd 0 status
expect_out "storaged has set up nothing"

note "a sync killed midway: interrupted, until a sync finishes it"
run_sd 0 start
head -c $((32 * 1024 * 1024)) /dev/urandom >"$P/big"
kill_midway sync a
run_sd 1 status
expect_out "a sync back was interrupted"
expect_out "run \`$(sd_self) sync a\` or \`$(sd_self) stop\` to finish"
run_sd 0 sync a
run_sd 0 status
[ "$(state_json)" = active ] || fail "status --json says $(state_json) after a finished sync, not active"
run_sd 0 stop
exit 0

#!/bin/bash
# `status`, `status --json` and `status --format=prometheus` render one
# snapshot of the system (status_report.h) and exit alike, as storaged(8)
# says under METRICS ("exits as storaged status does"): 1 for an area
# nearly full and for one whose last sync back failed, 4 for a
# --state-dir that does not exist.  The metrics once summed only the
# records and the areas' states, and exited 0 for all three.
. "$(dirname "$0")/lib.sh"
setup
P=$SCRATCH/data
mkdir -p "$P"
cat >"$CONF" <<EOT
[storaged]
[area a]
path = $P
size = 1M
inodes = 100
persist = yes
EOT

# every_format WANT: status exits WANT in each of its formats
every_format() {
	local f
	for f in "" --json --format=prometheus; do
		run_sd "$1" status $f
	done
}

run_sd 0 start
is_mountpoint "$P" || fail "the area is not mounted"
every_format 0

note "an area nearly full: 1 in every format"
head -c 960000 /dev/zero >"$P/big"
every_format 1
expect_out "storaged_area_used_bytes{area=\"a\",path=\"$P\"} [0-9]\{6,\}"
rm "$P/big"
every_format 0

note "an area whose last sync back failed: 1 in every format"
# what `storaged sync` records of a sync that failed (status_prom_note_sync())
mkdir -p "$STATE/last-sync"
printf '%s failed\n' "$(date +%s)" >"$STATE/last-sync/a"
every_format 1
expect_out "storaged_area_last_sync_success{area=\"a\",path=\"$P\"} 0"
run_sd 0 sync a
every_format 0
expect_out "storaged_area_last_sync_success{area=\"a\",path=\"$P\"} 1"
run_sd 0 stop

note "a --state-dir that does not exist: 4 in every format"
for f in "" --json --format=prometheus; do
	in_state_dir "$SCRATCH/nothing" 4 status $f
	expect_out "'$SCRATCH/nothing': no such directory"
done
exit 0

#!/bin/bash
# What `status` says of an area is what the kernel says of it: size, use
# and inodes in --json are df's numbers (statvfs), an area at 90 % or more
# of its bytes or inodes is warned about with the limit to raise and makes
# status exit 1 (NEARLY FULL; FULL once none is left and writes fail), the
# last sync's time and result are shown, and stop says "synced back"
# exactly when it synced (the directory then has the change).
. "$(dirname "$0")/lib.sh"
setup
command -v python3 >/dev/null || skip "python3 missing (reads the JSON)"
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

# field NAME: NAME of area a in status --json
field() {
	sd status --json 2>/dev/null | python3 -c '
import json, sys
for e in json.load(sys.stdin)["status"]:
    if e["kind"] == "area" and e["what"] == "a":
        print(e[sys.argv[1]])' "$1"
}
# df_of COLUMN: df's figure for the area, bytes or a count
df_of() { df -B1 --output="$1" "$P" | tail -n 1 | tr -d ' '; }

run_sd 0 start
is_mountpoint "$P" || fail "the area is not mounted"
note "the numbers are df's"
run_sd 0 status
for pair in size_bytes:size used_bytes:used avail_bytes:avail inodes:itotal inodes_used:iused; do
	[ "$(field "${pair%%:*}")" = "$(df_of "${pair#*:}")" ] ||
		fail "status --json ${pair%%:*} = $(field "${pair%%:*}"), df ${pair#*:} = $(df_of "${pair#*:}")"
done
[ "$(field nearly_full)" = False ] || fail "an empty area is nearly full"
[ "$(field last_sync_ok)" = None ] || fail "last_sync_ok is $(field last_sync_ok) before any sync, not null"
[ "$(field last_sync)" = None ] || fail "last_sync is $(field last_sync) before any sync, not null"

note "bytes at 90 % or more: a warning naming size=, exit 1"
head -c 960000 /dev/zero >"$P/big"
pct=$(df --output=pcent "$P" | tail -n 1 | tr -dc 0-9)
[ "$pct" -ge 90 ] || fail "the test's file fills only $pct %"
run_sd 1 status
expect_out "area 'a' on $P is nearly full: $pct% of its bytes"
expect_out "raise size="
expect_out "NEARLY FULL"
[ "$(field nearly_full)" = True ] || fail "JSON: not nearly_full at $pct %"
rm "$P/big"
run_sd 0 status

note "inodes at 90 % or more: a warning naming inodes="
for i in $(seq 95); do : >"$P/f$i"; done
ipct=$(df --output=ipcent "$P" | tail -n 1 | tr -dc 0-9)
[ "$ipct" -ge 90 ] || fail "the test's files use only $ipct % of the inodes"
run_sd 1 status
expect_out "$ipct% of its inodes"
expect_out "raise inodes="
expect_out "(NEARLY FULL)"
expect_no_out "(FULL"
[ "$(field full)" = False ] || fail "JSON: full with inodes left"

note "every inode used (writes fail, ENOSPC): FULL, not nearly"
i=0
while { : >"$P/g$i"; } 2>/dev/null; do i=$((i + 1)); [ $i -lt 1000 ] || fail "no ENOSPC after 1000 files"; done
[ "$(df --output=iavail "$P" | tail -n 1 | tr -d ' ')" = 0 ] || fail "ENOSPC with inodes left"
run_sd 1 status
expect_out "area 'a' on $P is full: [0-9]*% of its bytes and 100% of its inodes used (out of inodes (100 of 100): writers see 'No space left on device'); raise inodes="
expect_out "(FULL: out of inodes (100 of 100))"
expect_no_out "NEARLY FULL"
expect_no_out "nearly full"
[ "$(field full)" = True ] || fail "JSON: not full with no inode left"
[ "$(field nearly_full)" = True ] || fail "JSON: nearly_full (90 % or more) false when full"
rm -f "$P"/f* "$P"/g*

note "every byte used: FULL, raise size="
head -c 2000000 /dev/zero >"$P/big" 2>/dev/null && fail "a 2 MB file fits a 1M area"
[ "$(df -B1 --output=avail "$P" | tail -n 1 | tr -d ' ')" = 0 ] || fail "ENOSPC with bytes left"
run_sd 1 status
expect_out "area 'a' on $P is full: 100% of its bytes and [0-9]*% of its inodes used (out of bytes (1M of 1M): writers see 'No space left on device'); raise size= in"
expect_out "(FULL: out of bytes (1M of 1M))"
expect_no_out "NEARLY FULL"
[ "$(field full)" = True ] || fail "JSON: not full with no byte left"
rm -f "$P/big"
run_sd 0 status
[ "$(field full)" = False ] || fail "JSON: full once emptied"

note "the last sync: time and result in the table and the JSON"
echo kept >"$P/kept"
before=$(date +%s)
run_sd 0 sync a
run_sd 0 status
expect_out "last sync"
t=$(field last_sync)
[ "$t" -ge "$before" ] && [ "$t" -le "$(($(date +%s) + 1))" ] || fail "last_sync $t is not the sync just made (after $before)"
[ "$(field last_sync_ok)" = True ] || fail "last_sync_ok is not true after a good sync"

note "stop says 'synced back' when it synced, and the directory has the change"
echo at-stop >"$P/at-stop"
run_sd 0 stop
expect_out "area 'a': synced back into '$P'"
[ "$(cat "$P/at-stop" 2>/dev/null)" = at-stop ] || fail "stop said synced back, the directory lacks the change"

note "an area set up anew after the stop has not been synced: no last sync"
run_sd 0 start
[ "$(field last_sync_ok)" = None ] || fail "a new area shows the last sync of the one before it ($(field last_sync_ok))"
run_sd 0 status
expect_no_out "last sync"
run_sd 0 stop

note "an area without persist: no such words"
sed -i '/^persist/d' "$CONF"
run_sd 0 start
run_sd 0 stop
expect_no_out "synced back"
exit 0

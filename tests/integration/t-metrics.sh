#!/bin/bash
# Issue 14, metrics for the fleet: `storaged status --format=prometheus` and
# metrics-textfile = (written atomically after each start, sync and stop) on
# a real btrfs RAID1 and a persist RAM area, checked with
# `promtool check metrics`: members present/expected, mounted, degraded,
# stale members, the area's bytes and inodes, the last sync, each entry's
# state.  The example alerting rules pass `promtool check rules`.
. "$(dirname "$0")/lib.sh"
setup
command -v mkfs.btrfs >/dev/null || skip "mkfs.btrfs missing (btrfs-progs)"
TOP=${TOPSRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
if ! command -v promtool >/dev/null && command -v apt-get >/dev/null; then
	note "installing prometheus for promtool (tools/install-deps.sh installs it)"
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends prometheus >/dev/null 2>&1
fi
command -v promtool >/dev/null || skip "promtool missing and Debian's prometheus package cannot be installed here"

note "the example alerting rules"
promtool check rules "$TOP/conf/storaged-alerts.yml" || fail "promtool check rules conf/storaged-alerts.yml"
# the alerts on the metrics' own age, fired on series of known age
promtool test rules "$TOP/tests/fixtures/prometheus/storaged-alerts-test.yml" ||
	fail "promtool test rules tests/fixtures/prometheus/storaged-alerts-test.yml"

# check_metrics FILE: promtool's format and naming checks (its lint
# included), with what it says shown.
check_metrics() {
	promtool check metrics <"$1" >"$SCRATCH/promtool.out" 2>&1
	local rc=$?
	sed 's/^/  promtool: /' "$SCRATCH/promtool.out"
	[ "$rc" = 0 ] && [ ! -s "$SCRATCH/promtool.out" ] || fail "promtool check metrics $1: exit $rc"
}
# expect_metric FILE REGEX: a sample line matching REGEX (ERE) is in FILE.
expect_metric() {
	grep -Eq -- "$2" "$1" || { grep -v '^#' "$1" | sed 's/^/  | /'; fail "$1 lacks /$2/"; }
}

mkraid1 metrics 512M
D=$SCRATCH/data
K=$SCRATCH/keep
TF=$SCRATCH/textfile/storaged.prom
mkdir -p "$D" "$K" "$SCRATCH/textfile"
echo seed >"$K/seed"
echo "UUID=$FSID  $D  btrfs  noatime,noauto,x-storaged  0 0" >"$FSTAB"
cat >"$CONF" <<EOT
[storaged]
device-timeout = 1s
degraded = after-timeout
metrics-textfile = $TF

[area keep]
path = $K
backend = tmpfs
size = 16M
inodes = 1000
persist = yes
EOT
fs="fsid=\"$FSID\",label=\"metrics\""
ar="area=\"keep\",path=\"$K\""

note "start, both members present"
run_sd 0 start
[ -f "$TF" ] || fail "start wrote no $TF"
[ "$(stat -c %a "$TF")" = 644 ] || fail "$TF has mode $(stat -c %a "$TF"), expected 644"
check_metrics "$TF"
expect_metric "$TF" "^storaged_build_info\\{version=\"[0-9][^\"]*\"\\} 1\$"
ts=$(awk '$1 == "storaged_metrics_timestamp_seconds" { print $2 }' "$TF")
[ -n "$ts" ] && [ $(($(date +%s) - ts)) -ge 0 ] && [ $(($(date +%s) - ts)) -le 120 ] ||
	fail "storaged_metrics_timestamp_seconds '$ts' is not the time of the start"
expect_metric "$TF" "^storaged_btrfs_members_present\\{$fs\\} 2\$"
expect_metric "$TF" "^storaged_btrfs_members_expected\\{$fs\\} 2\$"
expect_metric "$TF" "^storaged_btrfs_mounted\\{$fs\\} 1\$"
expect_metric "$TF" "^storaged_btrfs_degraded\\{$fs\\} 0\$"
expect_metric "$TF" "^storaged_btrfs_members_stale\\{$fs\\} 0\$"
expect_metric "$TF" "^storaged_area_size_bytes\\{$ar\\} 16777216\$"
expect_metric "$TF" "^storaged_area_inodes\\{$ar\\} 1000\$"
expect_metric "$TF" "^storaged_area_inodes_used\\{$ar\\} [1-9][0-9]*\$"
expect_metric "$TF" "^storaged_entry_state\\{kind=\"mount\",entry=\"$D\",state=\"done\"\\} 1\$"
expect_metric "$TF" "^storaged_entry_state\\{kind=\"mount\",entry=\"$D\",state=\"failed\"\\} 0\$"
expect_metric "$TF" "^storaged_entry_state\\{kind=\"area\",entry=\"keep\",state=\"done\"\\} 1\$"
expect_metric "$TF" "^storaged_entry_duration_seconds\\{kind=\"mount\",entry=\"$D\"\\} [0-9]+\\.[0-9]{6}\$"
grep -q '^storaged_area_last_sync' "$TF" && fail "a last sync before any sync"

note "status --format=prometheus prints what the textfile holds"
sd status --format=prometheus >"$SCRATCH/status.prom" 2>"$SCRATCH/status.err" ||
	{ cat "$SCRATCH/status.err"; fail "status --format=prometheus failed"; }
check_metrics "$SCRATCH/status.prom"
# (the same but for the time each was collected)
diff -u <(grep -v '^storaged_metrics_timestamp_seconds ' "$TF") \
	<(grep -v '^storaged_metrics_timestamp_seconds ' "$SCRATCH/status.prom") ||
	fail "the textfile and status --format=prometheus differ"
run_sd 2 status --format=yaml
expect_out "only 'prometheus'"
run_sd 2 scan --format=prometheus

note "sync: the last sync's time and result"
head -c 1M /dev/urandom >"$K/blob"
t0=$(date +%s)
run_sd 0 sync keep
check_metrics "$TF"
expect_metric "$TF" "^storaged_area_last_sync_success\\{$ar\\} 1\$"
ts=$(grep -F "storaged_area_last_sync_timestamp_seconds{$ar} " "$TF" | awk '{ print $2 }')
[ -n "$ts" ] && [ "$ts" -ge "$t0" ] && [ "$ts" -le "$(date +%s)" ] || fail "last sync time '$ts' not in [$t0, now]"
expect_metric "$TF" "^storaged_area_used_bytes\\{$ar\\} [0-9]{7,}\$"
left=$(find "$SCRATCH/textfile" -mindepth 1 ! -name storaged.prom)
[ -z "$left" ] || fail "left in the textfile directory: $left"

note "stop: the textfile says nothing is set up any more"
run_sd 0 stop
check_metrics "$TF"
expect_metric "$TF" "^storaged_btrfs_mounted\\{$fs\\} 0\$"
grep -q '^storaged_entry_state{' "$TF" && fail "entries left after stop"
grep -q '^storaged_area_' "$TF" && fail "areas left after stop"
forget "$A" "$B"

note "B detached: mounted degraded after the timeout; the metrics say so"
detach "$B"
run_sd 3 start # 3: done, degraded (storaged(8) EXIT STATUS)
check_metrics "$TF"
expect_metric "$TF" "^storaged_btrfs_members_present\\{$fs\\} 1\$"
expect_metric "$TF" "^storaged_btrfs_members_expected\\{$fs\\} 2\$"
expect_metric "$TF" "^storaged_btrfs_degraded\\{$fs\\} 1\$"
expect_metric "$TF" "^storaged_entry_state\\{kind=\"mount\",entry=\"$D\",state=\"degraded\"\\} 1\$"
expect_metric "$TF" "^storaged_entry_duration_seconds\\{kind=\"mount\",entry=\"$D\"\\} [0-9]"
# writes that only A gets: B falls behind
head -c 4M /dev/urandom >"$D/only-on-a"
sync -f "$D/only-on-a"
run_sd 0 stop
forget "$A"

note "B back: a stale member (its generation is behind A's)"
B=$(attach "$SCRATCH/img/b.img")
sd status --format=prometheus >"$SCRATCH/status.prom" 2>"$SCRATCH/status.err" ||
	{ cat "$SCRATCH/status.err"; fail "status --format=prometheus failed"; }
check_metrics "$SCRATCH/status.prom"
expect_metric "$SCRATCH/status.prom" "^storaged_btrfs_members_present\\{$fs\\} 2\$"
expect_metric "$SCRATCH/status.prom" "^storaged_btrfs_members_stale\\{$fs\\} 1\$"
forget "$A" "$B"
exit 0

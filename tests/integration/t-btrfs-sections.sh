#!/bin/bash
# [btrfs FSID] and [btrfs LABEL=NAME] sections: two RAID1s, each with one
# member missing, take their own device-timeout and degraded policy over
# [storaged]'s: one is mounted degraded after its 2s, the other refused
# after its 3s, long before [storaged]'s 60s.  Each decision is recorded
# (state, status --json, metrics) and logged in one "decision=" line.
# check warns (does not fail) about a section that matches nothing here.
. "$(dirname "$0")/lib.sh"
setup
command -v mkfs.btrfs >/dev/null || skip "mkfs.btrfs missing (btrfs-progs)"

P1=$(mkloop p1 512M)
P2=$(mkloop p2 512M)
Q1=$(mkloop q1 512M)
Q2=$(mkloop q2 512M)
mkfs.btrfs -q -f -L pol-p -d raid1 -m raid1 "$P1" "$P2" >/dev/null || fail "mkfs.btrfs p"
mkfs.btrfs -q -f -L pol-q -d raid1 -m raid1 "$Q1" "$Q2" >/dev/null || fail "mkfs.btrfs q"
P=$(blkid -o value -s UUID "$P1")
Q=$(blkid -o value -s UUID "$Q1")
# the FSID as `btrfs filesystem show` prints it
btrfs filesystem show "$P1" | grep -q "uuid: $P" || fail "btrfs filesystem show prints another uuid than blkid's $P"
forget "$P1" "$P2" "$Q1" "$Q2"
mkdir -p "$SCRATCH/p" "$SCRATCH/q"
cat >"$FSTAB" <<EOT
UUID=$P  $SCRATCH/p  btrfs  noatime,noauto,x-storaged  0 0
LABEL=pol-q  $SCRATCH/q  btrfs  noatime,noauto,x-storaged  0 0
EOT
cat >"$CONF" <<EOT
[storaged]
device-timeout = 60s
degraded = no

[btrfs $(echo "$P" | tr a-f A-F)]
device-timeout = 2s
degraded = after-timeout

[btrfs LABEL=pol-q]
device-timeout = 3s

[btrfs LABEL=pol-nowhere]
degraded = after-timeout
EOT

note "check: the section for no filesystem here is a warning, the others match"
run_sd 0 check
expect_out "warning: .*storaged.conf:12: \[btrfs LABEL=pol-nowhere\] matches no btrfs filesystem on this machine now"
expect_no_out "pol-q\] matches no"
expect_no_out "matches no btrfs filesystem.*$P"
forget "$P1" "$P2" "$Q1" "$Q2"

note "one member of each missing: the plan shows each filesystem's own wait and policy"
detach "$P2"
detach "$Q2"
run_sd 1 --dry-run
expect_out "assemble btrfs ${P:0:8}… 'pol-p'  (1/2 members present, devid 2 missing; wait up to 2s, then mount degraded)"
expect_out "assemble btrfs ${Q:0:8}… 'pol-q'  (1/2 members present, devid 2 missing; wait up to 3s, then fail)"

note "start: P degraded after 2s, Q refused after 3s, not 60s"
t0=$(date +%s)
run_sd 1 start
t1=$(date +%s)
[ $((t1 - t0)) -le 30 ] || fail "waited $((t1 - t0))s: [storaged]'s 60s, not the sections' 2s and 3s"
expect_out "1 of 2 members present after 2s, devid 2 missing; mounting $SCRATCH/p DEGRADED"
expect_out "btrfs $Q: 1 of 2 members present after 3s, devid 2 missing; not mounting: degraded mounts are not allowed"
# its section sets no degraded =: the advice names the file of [storaged]
expect_out "not mounting: degraded mounts are not allowed (set degraded = read-only or after-timeout in its \[btrfs $Q\] section or \[storaged\] of $CONF, or add"
expect_out "btrfs $P: decision=degraded-by-policy members=1/2 waited=2s wait=\"up to 2s\" arrived=\"devid 1 $P1 at +0.[0-9]s\" missing=\"devid 2 missing\""
expect_out "btrfs $Q: decision=refused members=1/2 waited=3s wait=\"up to 3s\" arrived=\"devid 1 $Q1 at +0.[0-9]s\""
[ "$(printf '%s\n' "$OUT" | grep -c "decision=")" = 2 ] || fail "not one decision line per filesystem"
opts=$(findmnt -rn -o OPTIONS --mountpoint "$SCRATCH/p") || fail "P not mounted"
case ",$opts," in *,degraded,*) ;; *) fail "P not mounted degraded: $opts" ;; esac
is_mountpoint "$SCRATCH/q" && fail "Q mounted although its policy is [storaged]'s degraded = no"

note "the state, status --json and the metrics say the same"
grep -q "^decision = degraded-by-policy" "$STATE/state" || fail "no decision in the state"
run_sd 1 status
expect_out "decision degraded-by-policy"
expect_out "decision refused"
sd status --json >"$SCRATCH/status.json" 2>/dev/null
python3 - "$SCRATCH/status.json" "$P" "$Q" "$P1" <<'PY' || fail "status --json lacks the decisions"
import json, sys
d = json.load(open(sys.argv[1]))
fs = {r["what"]: r for r in d["status"] if r["kind"] == "btrfs"}
p, q = fs[sys.argv[2]], fs[sys.argv[3]]
assert p["decision"] == "degraded-by-policy", p
assert q["decision"] == "refused", q
assert p["wait"] == "up to 2s" and q["wait"] == "up to 3s", (p, q)
assert p["arrivals"].startswith("devid 1 %s at +0." % sys.argv[4]), p
assert p["waited_ms"] == 2000 and q["waited_ms"] == 3000, (p, q)
PY
sd status --format=prometheus >"$SCRATCH/metrics" 2>/dev/null
grep -qx "storaged_btrfs_decision{fsid=\"$P\",decision=\"degraded-by-policy\"} 1" "$SCRATCH/metrics" || fail "metrics: P's decision"
grep -qx "storaged_btrfs_decision{fsid=\"$Q\",decision=\"refused\"} 1" "$SCRATCH/metrics" || fail "metrics: Q's decision"
grep -qx "storaged_btrfs_decision{fsid=\"$Q\",decision=\"degraded-by-policy\"} 0" "$SCRATCH/metrics" || fail "metrics: Q's other decisions"
grep -qx "storaged_btrfs_wait_seconds{fsid=\"$Q\"} 3.000" "$SCRATCH/metrics" || fail "metrics: Q's wait"
run_sd 0 stop
exit 0

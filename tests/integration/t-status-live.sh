#!/bin/bash
# Issue 13: `status` shows the live system, not only the saved state.  A
# mount storaged made and someone unmounted by hand shows as gone, one with
# another mount over it as replaced, both exit 1 (not as storaged left
# it); as left, exit 0.  The JSON is valid and typed (python3's parser):
# empty arrays are [], numbers are numbers, "recorded" keeps what the state
# says.  Degraded (exit 3) is t-c03-degraded-policy.sh's.
. "$(dirname "$0")/lib.sh"
setup

# json_check EXPR: `status --json` parses, and the Python EXPR over it
# (bound to d) is true.
json_check() {
	sd status --json >"$SCRATCH/status.json" 2>/dev/null
	python3 - "$SCRATCH/status.json" "$1" <<'EOF' || fail "status --json: $1"
import json, sys
d = json.load(open(sys.argv[1]))
sys.exit(0 if eval(sys.argv[2]) else 1)
EOF
}

mkdir -p "$SCRATCH/t"
echo "tmpfs  $SCRATCH/t  tmpfs  noauto,x-storaged,size=1M  0 0" >"$FSTAB"
run_sd 0 start
expect_out "^storaged: 1 mounted$"
run_sd 0 status
expect_out "done"
json_check 'd["status"][0]["status"] == "done" and d["status"][0]["recorded"] is None'
json_check 'isinstance(d["status"][0]["mount_id"], int) and d["status"][0]["nofail"] is False'

note "unmounted by hand: gone, exit 1"
umount "$SCRATCH/t" || fail "umount"
run_sd 1 status
expect_out "gone"
expect_out "unmounted since storaged mounted it"
json_check 'd["status"][0]["status"] == "gone" and d["status"][0]["recorded"] == "done"'
run_sd 0 stop

note "another mount over storaged's: replaced, exit 1"
run_sd 0 start
mount -t tmpfs -o size=1M other "$SCRATCH/t" || fail "mount over"
run_sd 1 status
expect_out "replaced"
expect_out "mounted over it on $SCRATCH/t now: other (tmpfs"
umount "$SCRATCH/t" || fail "umount over"
run_sd 0 status
run_sd 0 stop

note "an empty plan's JSON: an empty array, not [null]"
: >"$FSTAB"
sd --dry-run --json 2>/dev/null | python3 -m json.tool >/dev/null || fail "empty plan JSON invalid"
sd status --json 2>/dev/null | python3 -m json.tool >/dev/null || fail "empty status JSON invalid"
sd scan --json 2>/dev/null | python3 -c 'import json,sys; d=json.load(sys.stdin); sys.exit(0 if all(isinstance(f["missing"], list) and None not in f["missing"] for f in d["filesystems"]) else 1)' ||
	fail "scan --json: missing is not a list without null"
exit 0

#!/bin/bash
# C22: x-systemd.before= on entry A names B's mount unit; B's helper mounts
# only once A is mounted.  storaged orders A before B, as x-systemd.after=
# on B would, in --dry-run and in start; an x-systemd.* option storaged
# cannot honour is named by check with FILE:LINE, never dropped unseen.
# The helper /sbin/mount.c22fs exists only in a private mount namespace.
. "$(dirname "$0")/lib.sh"
setup
need_private_helpers
cat >"$SCRATCH/upper/mount.c22fs" <<EOT
#!/bin/sh
# mount.c22fs SPEC DIR -o OPTS: works only once $SCRATCH/a is mounted.
mountpoint -q "$SCRATCH/a" || { echo "mount.c22fs: $SCRATCH/a is not mounted yet" >&2; exit 32; }
mount -t tmpfs -o size=1M c22b "\$2"
EOT
chmod 0755 "$SCRATCH/upper/mount.c22fs"
mkdir -p "$SCRATCH/a" "$SCRATCH/b"
# B's unit name as systemd-escape --path gives it: "-" separates components
UNIT_B=$(printf '%s' "${SCRATCH#/}/b" | sed 's/-/\\x2d/g; s|/|-|g').mount
cat >"$FSTAB" <<EOT
srvB   $SCRATCH/b  c22fs  noauto,x-storaged  0 0
tmpfs  $SCRATCH/a  tmpfs  size=1M,noauto,x-storaged,x-systemd.before=$UNIT_B  0 0
EOT

in_helper_ns '
	"$1" -c "$2" -f "$3" --state-dir "$4" --dry-run; echo "dry-run exit $?"
	"$1" -c "$2" -f "$3" --state-dir "$4" start; echo "start exit $?"
	mountpoint -q "$5/b" && echo "b mounted"
	"$1" -c "$2" -f "$3" --state-dir "$4" stop >/dev/null 2>&1
	exit 0
' "$STORAGED" "$CONF" "$FSTAB" "$STATE" "$SCRATCH" >"$SCRATCH/out" 2>&1
sed 's/^/  | /' "$SCRATCH/out"
a=$(grep -n "on $SCRATCH/a " "$SCRATCH/out" | head -1 | cut -d: -f1)
b=$(grep -n "on $SCRATCH/b " "$SCRATCH/out" | head -1 | cut -d: -f1)
[ -n "$a" ] && [ -n "$b" ] && [ "$a" -lt "$b" ] || fail "--dry-run does not put A (before= B) first"
grep "on $SCRATCH/b " "$SCRATCH/out" | grep -q "x-systemd.before=" || fail "--dry-run shows no x-systemd.before= edge on B"
grep -q "dry-run exit 0" "$SCRATCH/out" || fail "--dry-run failed"
grep -q "start exit 0" "$SCRATCH/out" || fail "start failed: B ran before A"
grep -q "b mounted" "$SCRATCH/out" || fail "B not mounted"

note "an option storaged cannot honour is named by check with FILE:LINE"
cat >"$FSTAB" <<EOT
tmpfs  $SCRATCH/a  tmpfs  size=1M,noauto,x-storaged,x-systemd.makefs  0 0
EOT
run_sd 0 check
printf '%s\n' "$OUT" | grep -q "$FSTAB:1:.*x-systemd.makefs" || fail "check does not name x-systemd.makefs with FILE:LINE"
exit 0

#!/bin/bash
# The predictions agree with what start meets.  For every rule of
# src/world/predict.c's rules[] one entry (or area) it must catch and one
# near miss it must let through, all in one config and fstab: `--dry-run
# --json` names the steps that will fail (or be skipped for waiting on
# one), `start` on the same inputs then records some as failed or skipped
# (status --json), and the two sets of mount and area steps must be equal
# (a wait is judged by the mounts that wait on it: start records no wait).
# A rule that predicts a failure start does not meet (it would make
# `check` refuse a config that works), or a failure of these kinds that
# start meets and no rule saw, fails the test with the step's target.  Rules without a row here are covered elsewhere: the copy helper
# (t-dry-run-predicts.sh, it needs the binary moved), btrfs members
# (t-dry-run-predicts.sh, t-c03-degraded-policy.sh), ext inode tables of
# a zram area (the golden scenario predicted-failures).
. "$(dirname "$0")/lib.sh"
setup
command -v python3 >/dev/null || skip "python3 missing (reads the --dry-run --json plan)"
S=$SCRATCH
mkdir -p "$S/low" "$S/low2" "$S/up" "$S/src" \
	"$S"/m{1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18}
: >"$S/file"
: >"$S/empty"
: >"$S/empty2"
echo data >"$S/low/f"

# block-source: an ext4 image over 1 KiB (libmount makes the loop device),
# a 0-byte file and a directory (ENOTBLK)
EXT4=
if command -v mkfs.ext4 >/dev/null; then
	truncate -s 16M "$S/img/fs.img"
	mkfs.ext4 -q -F "$S/img/fs.img" || fail "mkfs.ext4"
	EXT4=1
fi

printf '[storaged]\ndevice-timeout = 1s\n[area big]\npath = %s\nsize = 10T\ninodes = 1000\nseed = no\n[area small]\npath = %s\nsize = 16M\ninodes = 1000\nseed = no\n' \
	"$S/area-big" "$S/area-small" >"$CONF"
mkdir -p "$S/area-big" "$S/area-small"
# an overlay area's own inodes (area_precheck.h): 6 are too few, 7 enough
if grep -qw overlay /proc/filesystems; then
	printf '[area ovl-few]\npath = %s\nsize = 16M\ninodes = 6\nseed = overlay\n[area ovl-enough]\npath = %s\nsize = 16M\ninodes = 7\nseed = overlay\n' \
		"$S/area-ovl-few" "$S/area-ovl-enough" >>"$CONF"
	mkdir -p "$S/area-ovl-few" "$S/area-ovl-enough"
fi

{
	# fstype: a typo; a known type
	echo "none  $S/m1  brtfs  noauto,x-storaged  0 0"
	echo "tmpfs  $S/m2  tmpfs  noauto,x-storaged,size=1M  0 0"
	# skip: waits on m1, which fails
	echo "tmpfs  $S/m1/below  tmpfs  noauto,x-storaged,X-mount.mkdir,size=1M  0 0"
	# overlay-layers: no lower layer; upper without work; two lowers
	echo "overlay  $S/m3  overlay  noauto,x-storaged,upperdir=$S/up,workdir=$S/src  0 0"
	echo "overlay  $S/m4  overlay  noauto,x-storaged,lowerdir=$S/low,upperdir=$S/up  0 0"
	echo "overlay  $S/m5  overlay  noauto,x-storaged,lowerdir=$S/low:$S/low2  0 0"
	# overlay-dirs: a lower layer that does not exist
	echo "overlay  $S/m6  overlay  noauto,x-storaged,lowerdir=$S/low:$S/nolow  0 0"
	# tmpfs-numbers: no such suffix; a suffix and hex inodes; a share of
	# RAM; a digit after the suffix
	echo "tmpfs  $S/m7  tmpfs  noauto,x-storaged,size=10q  0 0"
	echo "tmpfs  $S/m8  tmpfs  noauto,x-storaged,size=1m,nr_inodes=0x400  0 0"
	echo "tmpfs  $S/m9  tmpfs  noauto,x-storaged,size=1%  0 0"
	echo "tmpfs  $S/m10  tmpfs  noauto,x-storaged,nr_inodes=1k2  0 0"
	# degraded-btrfs-only
	echo "tmpfs  $S/m11  tmpfs  noauto,x-storaged,size=1M,degraded  0 0"
	# mount-point: missing; missing with X-mount.mkdir; below a file
	echo "tmpfs  $S/nowhere  tmpfs  noauto,x-storaged,size=1M  0 0"
	echo "tmpfs  $S/made/here  tmpfs  noauto,x-storaged,X-mount.mkdir,size=1M  0 0"
	echo "tmpfs  $S/file/sub  tmpfs  noauto,x-storaged,X-mount.mkdir,size=1M  0 0"
	# mount-point: a file, for a filesystem (a bind may mount on a file)
	echo "tmpfs  $S/empty  tmpfs  noauto,x-storaged,size=1M  0 0"
	# source-exists: a bind of nothing; a bind of a directory
	echo "$S/gone  $S/m12  none  bind,noauto,x-storaged  0 0"
	echo "$S/src  $S/m13  none  bind,noauto,x-storaged  0 0"
	# wait-device: a label nobody has, for one second
	echo "LABEL=storaged-agree-absent  $S/m14  ext4  noauto,x-storaged  0 0"
	if [ -n "$EXT4" ]; then
		# block-source and source-exists (loop)
		echo "$S/src  $S/m15  ext4  noauto,x-storaged  0 0"
		echo "$S/empty2  $S/m16  ext4  noauto,x-storaged  0 0"
		echo "$S/img/fs.img  $S/m17  ext4  noauto,x-storaged  0 0"
		echo "$S/img/none.img  $S/m18  ext4  loop,noauto,x-storaged  0 0"
	fi
} >"$FSTAB"

note "--dry-run: what the rules predict"
PLAN=$(sd --dry-run --json 2>"$S/dry.err")
rc=$?
sed 's/^/  | /' "$S/dry.err"
[ "$rc" = 1 ] || fail "--dry-run --json exited $rc, expected 1 (steps that will fail)"
[ -n "$PLAN" ] || fail "--dry-run --json printed no plan"

note "start: what the system says"
run_sd 1 start
STATUS=$(sd status --json 2>/dev/null) || true

# Each mount and area step: whether --dry-run said it will fail (or be
# skipped), against what start recorded (status --json: failed or
# skipped, or else).  A wait's prediction is checked through the mounts
# that wait on it: start records no wait of its own.
PLAN=$PLAN STATUS=$STATUS python3 - <<'EOT' || fail "--dry-run and start disagree (above)"
import json, os, sys
plan = json.loads(os.environ["PLAN"])["plan"]
status = json.loads(os.environ["STATUS"] or '{"status": []}')["status"]
met = {}
for r in status:
    met[(r["kind"], r["what"])] = r["status"] in ("failed", "skipped")
bad = n_pred = n_ok = 0
for s in plan:
    if s["action"] not in ("mount", "area"):
        continue
    # a mount is recorded by its mount point, an area by its name
    key = (s["action"], s["target"] if s["action"] == "mount" else s["source"])
    if s["fails"]:
        n_pred += 1
    else:
        n_ok += 1
    if key not in met:
        print("  start recorded nothing for step %d (%s %s)" % (s["step"], *key), file=sys.stderr)
        bad = 1
    elif s["fails"] and not met[key]:
        print("  predicted to fail, but start did not fail it: step %d (%s %s)" % (s["step"], *key), file=sys.stderr)
        bad = 1
    elif not s["fails"] and met[key]:
        print("  start failed it, but no rule predicted it: step %d (%s %s)" % (s["step"], *key), file=sys.stderr)
        bad = 1
print("# %d mount and area steps predicted to fail, %d not" % (n_pred, n_ok))
# the rows above are there to be caught: a run that predicts almost
# nothing, or lets nothing through, proves nothing
if n_pred < 12 or n_ok < 8:
    print("  only %d predicted and %d let through: the scenario no longer exercises the rules" % (n_pred, n_ok), file=sys.stderr)
    bad = 1
sys.exit(bad)
EOT
run_sd 0 stop
exit 0

#!/bin/bash
# check, --dry-run and start count one plan's failures the same way: the
# failures that can be known beforehand are one set in all three.  check
# prints each at the level it counts it (an error line per failure, a
# warning per nofail one); --dry-run's closing line counts the same
# steps; start's failures are those plus what only running finds (here:
# one), and `status --json` records what start counted.  Each exit status
# follows its count.  One fstab and config with several kinds of failure
# known beforehand: a missing mount point, a type typo, an area larger
# than memory, a btrfs member missing without the degraded policy, a
# device that is absent, and steps that wait on failing ones.
. "$(dirname "$0")/lib.sh"
setup
command -v mkfs.btrfs >/dev/null || skip "mkfs.btrfs missing (btrfs-progs)"
command -v python3 >/dev/null || skip "python3 missing (reads status --json)"
S=$SCRATCH

mkraid1 "" 512M
detach "$B"
mkdir -p "$S/typo" "$S/ok" "$S/bt" "$S/nf" "$S/lab" "$S/req" "$S/bind" "$S/mode" "$S/area-big"

printf '[storaged]\ndevice-timeout = 1s\ndegraded = no\n[area big]\npath = %s\nsize = 10T\ninodes = 1000\nseed = no\n' \
	"$S/area-big" >"$CONF"
cat >"$FSTAB" <<EOT
none  $S/typo  brtfs  noauto,x-storaged  0 0
tmpfs  $S/typo/below  tmpfs  noauto,x-storaged,X-mount.mkdir,size=1M  0 0
tmpfs  $S/nowhere  tmpfs  noauto,x-storaged,size=1M  0 0
$S/nowhere  $S/bind  none  bind,noauto,x-storaged  0 0
UUID=$FSID  $S/bt  btrfs  noauto,x-storaged  0 0
LABEL=storaged-counts-absent  $S/lab  ext4  noauto,x-storaged  0 0
tmpfs  $S/req  tmpfs  noauto,x-storaged,size=1M,x-storaged.requires=LABEL=storaged-counts-absent  0 0
tmpfs  $S/nf  tmpfs  noauto,x-storaged,nofail,size=1M,degraded  0 0
tmpfs  $S/mode  tmpfs  noauto,x-storaged,size=1M,mode=9  0 0
tmpfs  $S/ok  tmpfs  noauto,x-storaged,size=1M  0 0
EOT

# closing TEXT WORDS: the number before WORDS in TEXT's last line, 0 if none.
closing() {
	printf '%s\n' "$1" | tail -1 | grep -o "[0-9]* $2" | head -1 | cut -d' ' -f1 | grep . || echo 0
}

# The failures known beforehand: the type typo, the missing mount point,
# the area, the btrfs without its member, the absent device (at its
# mount: start fails it, it does not skip it); skipped: the mount below
# the typo, the bind of the missing mount point, the one requiring the
# absent device.  Tolerated: the nofail one.  mode=9 only start finds.
WANT_FAILED=8 WANT_SKIPPED=3 WANT_NOFAIL=1

note "check: one error line per failure, the closing line counts them"
OUT=$(sd check 2>&1)
rc=$?
printf '%s\n' "$OUT" | sed 's/^/  | /'
[ "$rc" = 1 ] || fail "check exited $rc, expected 1"
c_failed=$(closing "$OUT" 'steps\? will fail')
c_skipped=$(closing "$OUT" skipped)
c_nofail=$(closing "$OUT" 'nofail steps\? will fail')
[ "$(printf '%s\n' "$OUT" | grep -c '^storaged: error: \([^ ]*:[0-9]*: \)\?step ')" = "$c_failed" ] ||
	fail "check's error lines are not its closing count $c_failed"
[ "$(printf '%s\n' "$OUT" | grep -c '^storaged: error: \([^ ]*:[0-9]*: \)\?step .*: will be skipped: ')" = "$c_skipped" ] ||
	fail "check's skip lines are not its closing count $c_skipped"
[ "$(printf '%s\n' "$OUT" | grep -c '^storaged: warning: \([^ ]*:[0-9]*: \)\?step .*(nofail: not counted as a failure)$')" = "$c_nofail" ] ||
	fail "check's nofail lines are not its closing count $c_nofail"
[ "$c_failed/$c_skipped/$c_nofail" = "$WANT_FAILED/$WANT_SKIPPED/$WANT_NOFAIL" ] ||
	fail "check counts $c_failed failed ($c_skipped skipped), $c_nofail nofail; expected $WANT_FAILED ($WANT_SKIPPED), $WANT_NOFAIL"
expect_no_out "mode"
# each names where to change it: the wait for the absent label the first
# fstab line naming it (6), the area its section (line 4 of the config)
printf '%s\n' "$OUT" | grep -q "^storaged: $FSTAB:6: step [0-9]*, wait for LABEL=storaged-counts-absent: will fail: " ||
	fail "check's notice of the failing wait does not name the fstab line of the entry that waits"
printf '%s\n' "$OUT" | grep -q "^storaged: error: $CONF:4: step [0-9]*, area big " ||
	fail "check's error of the area does not name its [area] section's line"

note "--dry-run: the same closing line"
OUT=$(sd --dry-run 2>&1 >/dev/null)
rc=$?
printf '%s\n' "$OUT" | sed 's/^/  | /'
[ "$rc" = 1 ] || fail "--dry-run exited $rc, expected 1"
d="$(closing "$OUT" 'steps\? will fail')/$(closing "$OUT" skipped)/$(closing "$OUT" 'nofail steps\? will fail')"
[ "$d" = "$c_failed/$c_skipped/$c_nofail" ] || fail "--dry-run counts $d, check $c_failed/$c_skipped/$c_nofail"
OUT=$(sd --dry-run --json 2>&1 >/dev/null)
[ "$(printf '%s\n' "$OUT" | tail -1)" = "$(sd check 2>&1 | tail -1)" ] || fail "--dry-run --json ends otherwise than check"

note "start: those failures, and the one only running finds"
run_sd 1 start
s_failed=$(closing "$OUT" failed)
s_skipped=$(closing "$OUT" skipped)
s_nofail=$(closing "$OUT" 'failed with nofail')
[ "$s_failed/$s_skipped/$s_nofail" = "$((c_failed + 1))/$c_skipped/$c_nofail" ] ||
	fail "start counts $s_failed failed ($s_skipped skipped), $s_nofail nofail; check $c_failed ($c_skipped), $c_nofail, and one more (mode=9) for start"
expect_out "mount tmpfs on $S/mode: mount failed"
is_mountpoint "$S/ok" || fail "the entry without a fault was not mounted"

note "status: records what start counted"
run_sd 1 status
sd status --json | python3 -c '
import json, sys
want_failed, want_skipped, want_nofail = map(int, sys.argv[1:])
st = json.load(sys.stdin)["status"]
bad = [r for r in st if r["status"] in ("failed", "skipped")]
got = (sum(1 for r in bad if not r["nofail"]),
       sum(1 for r in bad if not r["nofail"] and r["status"] == "skipped"),
       sum(1 for r in bad if r["nofail"]))
if got != (want_failed, want_skipped, want_nofail):
    sys.exit("status records %d failed (%d skipped), %d nofail; start counted %d (%d), %d" % (got + (want_failed, want_skipped, want_nofail)))
' "$s_failed" "$s_skipped" "$s_nofail" || fail "status disagrees with start"
run_sd 0 stop

note "only nofail failures: a warning, exit 0, in all three"
printf '[storaged]\n' >"$CONF"
cat >"$FSTAB" <<EOT
tmpfs  $S/nf  tmpfs  noauto,x-storaged,nofail,size=1M,degraded  0 0
tmpfs  $S/ok  tmpfs  noauto,x-storaged,size=1M  0 0
EOT
run_sd 0 check
expect_out "^storaged: warning: 1 nofail step will fail$"
OUT=$(sd --dry-run 2>&1 >/dev/null)
rc=$?
[ "$rc" = 0 ] || fail "--dry-run exited $rc with only a nofail failure"
expect_out "^storaged: warning: 1 nofail step will fail$"
run_sd 0 start
expect_out "^storaged: 1 mounted, 1 failed with nofail$"
run_sd 0 stop
exit 0

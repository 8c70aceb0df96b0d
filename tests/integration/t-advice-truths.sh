#!/bin/bash
# What storaged tells a new administrator, checked against what it does:
# - an area whose path = is a symbolic link (or missing) is named with the
#   config's file:line, as the other area errors are, also when it is
#   found only as it runs (below a filesystem mounted first);
# - --dry-run shows as a mount's options exactly those start hands on to
#   mount: not X-mount.*, x-* or comment=, which libmount and storaged act
#   on or skip and never pass to the kernel or a mount helper;
# - advice to run storaged again carries the -c, -f and --state-dir in
#   use, quoted for the shell: pasted, it does what it says.
. "$(dirname "$0")/lib.sh"
setup
mkdir -p "$SCRATCH/real"
ln -s real "$SCRATCH/link"

note "an area's path that is a symbolic link: the error names the config's file:line"
cat >"$CONF" <<EOT
[storaged]

[area viaLink]
path = $SCRATCH/link

[area gone]
path = $SCRATCH/missing
EOT
for args in "--dry-run" "check" "start"; do
	# shellcheck disable=SC2086 # one word per option
	run_sd 1 $args
	expect_out "path '$SCRATCH/link': it, or a directory above it, is a symbolic link or not a directory.*give the real directory's path in path= ($CONF:4)"
	expect_out "path '$SCRATCH/missing': No such file or directory.*($CONF:7)"
done
is_mountpoint "$SCRATCH/link" && fail "an area was set up over the link"
is_mountpoint "$SCRATCH/real" && fail "an area was set up through the link"
run_sd 0 stop

note "an area planned on a filesystem mounted first: its error when it runs names file:line too"
mkdir -p "$SCRATCH/later"
cat >"$CONF" <<EOT
[storaged]

[area below]
path = $SCRATCH/later/sub
EOT
echo "tmpfs  $SCRATCH/later  tmpfs  size=1M,noauto,x-storaged  0 0" >"$FSTAB"
run_sd 1 --dry-run
expect_out "will fail: area 'below': its directory '$SCRATCH/later/sub' will not exist: .*(path = at $CONF:4;"
run_sd 1 start
expect_out "path '$SCRATCH/later/sub': No such file or directory; create the directory on the filesystem it is on, or correct path= ($CONF:4)"
run_sd 0 stop
: >"$FSTAB"

note "--dry-run's mount options are those start passes on"
printf '[storaged]\n' >"$CONF"
echo "tmpfs  $SCRATCH/made/here  tmpfs  size=1M,X-mount.mkdir=0750,noauto,x-storaged,mode=0711,x-initrd.mount,comment=tmp,nofail,X-mount.mode=0700  0 0" >"$FSTAB"
run_sd 0 --dry-run
expect_out "^1 mount tmpfs on $SCRATCH/made/here type tmpfs -o size=1M,mode=0711  (nofail)\$"
sd --dry-run --json 2>/dev/null | python3 -c '
import json, sys
opts = json.load(sys.stdin)["plan"][0]["options"]
sys.exit(opts != "size=1M,mode=0711")' || fail "--dry-run --json: options other than size=1M,mode=0711"
run_sd 0 start
is_mountpoint "$SCRATCH/made/here" || fail "X-mount.mkdir: start did not make and mount $SCRATCH/made/here"
opts=$(findmnt -rn -o OPTIONS --mountpoint "$SCRATCH/made/here")
printf '%s\n' "$opts" | grep -q "size=1024k" || fail "mounted with '$opts', not size=1M"
printf '%s\n' "$opts" | grep -q "mode=711" || fail "mounted with '$opts', not mode=0711"
run_sd 0 stop

# advised CMD: the storaged command in $OUT's line matching CMD's verb,
# between backticks or single quotes, as printed
advised() {
	printf '%s\n' "$OUT" | grep -o "[\`']storaged [^\`]*$1[\`']" | head -n 1 | sed "s/^.//; s/.$//"
}
# paste CMD EXPECTED_EXIT: runs CMD as a user pasting it would (the binary
# under test for "storaged"), keeps its output in $OUT
paste_advice() {
	local rc
	[ -n "$1" ] || fail "no advice to paste"
	case "$1" in storaged\ *) ;; *) fail "advice '$1' is not a storaged command" ;; esac
	OUT=$(eval "\"\$STORAGED\" ${1#storaged }" 2>&1)
	rc=$?
	printf '%s\n' "$OUT" | sed 's/^/  | /'
	[ "$rc" = "$2" ] || fail "pasted '$1' exited $rc, expected $2"
}

note "advice carries -c, -f and --state-dir, quoted: pasted, it works"
mkdir -p "$SCRATCH/it's here" "$SCRATCH/data"
CONF="$SCRATCH/it's here/my storaged.conf"
FSTAB="$SCRATCH/it's here/fs tab"
STATE="$SCRATCH/it's here/run state"
cat >"$CONF" <<EOT
[storaged]
[area keep]
path = $SCRATCH/data
persist = yes
EOT
echo "tmpfs  $SCRATCH/nowhere/m  tmpfs  size=1M,noauto,x-storaged  0 0" >"$FSTAB"
chmod 0644 "$CONF" "$FSTAB"
# a --state-dir that does not exist: exit 4 for sync as for status and stop
run_sd 4 sync keep
expect_out "--state-dir '$SCRATCH/it's here/run state': no such directory"
mkdir "$STATE"
run_sd 1 sync keep
expect_out "(\`storaged -c '$SCRATCH/it'\\\\''s here/my storaged.conf' -f '$SCRATCH/it'\\\\''s here/fs tab' --state-dir '$SCRATCH/it'\\\\''s here/run state' start\` sets it up)"
paste_advice "$(advised start)" 1
is_mountpoint "$SCRATCH/data" || fail "the pasted start did not set up the area"
expect_out "see \`storaged -c .* status\`"
paste_advice "$(advised status)" 1
expect_out "keep"
expect_out "$SCRATCH/nowhere/m"
run_sd 2 sync other
paste_advice "$(advised status)" 1
expect_out "keep"
run_sd 0 stop
is_mountpoint "$SCRATCH/data" && fail "stop left the area"
exit 0

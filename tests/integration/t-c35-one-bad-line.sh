#!/bin/bash
# C35: at boot one bad line or key costs that item only.  An fstab with a
# btrfs RAID1 and a tmpfs for storaged, and beside them a line check rightly
# refuses: a second line on one directory through a symbolic link (C24), a
# misspelt x-storaged. option, a line libmount cannot read; or a bad key in
# one [area] or [btrfs] section of storaged.conf.  check and --dry-run
# refuse (exit 2, FILE:LINE); start mounts everything that does not depend
# on the bad item, fails that item as a step at FILE:LINE, exits 1, counts
# it, and status (table, --json, metrics) shows it; the next start says the
# same.  Only an error within no item stops start, in one line.
. "$(dirname "$0")/lib.sh"
setup
command -v mkfs.btrfs >/dev/null || skip "mkfs.btrfs missing (btrfs-progs)"

mkraid1 c35 512M
mkdir -p "$SCRATCH/data" "$SCRATCH/c35/run" "$SCRATCH/c35/var" "$SCRATCH/tmp" "$SCRATCH/opt" \
	"$SCRATCH/good" "$SCRATCH/bad"
ln -s ../run "$SCRATCH/c35/var/run"
echo seed >"$SCRATCH/good/f"
echo seed >"$SCRATCH/bad/f"
BASECONF='[storaged]
device-timeout = 10s'
printf '%s\n' "$BASECONF" >"$CONF"

# the two lines unrelated to any bad one: lines 1 and 2 of every fstab here
good_lines() {
	cat <<EOT
UUID=$FSID  $SCRATCH/data  btrfs  noatime,noauto,x-storaged  0 0
tmpfs  $SCRATCH/tmp  tmpfs  size=8M,noauto,x-storaged  0 0
EOT
}

# up WHAT: the tmpfs is mounted once; the RAID1 too unless WHAT is "no-raid"
up() {
	[ "$(mount_count "$SCRATCH/tmp")" = 1 ] || fail "$1: the tmpfs on $SCRATCH/tmp is not mounted once"
	[ "$1" = no-raid ] && return
	findmnt -rn -o FSTYPE --mountpoint "$SCRATCH/data" | grep -qx btrfs || fail "$1: the RAID1 is not mounted"
	[ "$(mount_count "$SCRATCH/data")" = 1 ] || fail "$1: the RAID1 is mounted more than once"
}

# strict WHERE...: check and --dry-run refuse, naming each FILE:LINE
strict() {
	local cmd w
	for cmd in check --dry-run; do
		run_sd 2 "$cmd"
		for w in "$@"; do
			printf '%s\n' "$OUT" | grep -q "error: $w: " || fail "$cmd does not name $w"
		done
	done
}

# refused ID COUNT: the item ID (FILE:LINE for an fstab line, an area's
# name) is a failed step in $OUT, the closing line says COUNT, and
# status, status --json and the metrics show it failed
refused() {
	local id=$1 count=$2
	printf '%s\n' "$OUT" | grep "error: " | grep -q "refused, $id\|refused, .*$id" ||
		fail "start does not fail $id as a step"
	printf '%s\n' "$OUT" | tail -n 1 | grep -qF "$count" || fail "the closing line does not say $count"
	run_sd 1 status
	printf '%s\n' "$OUT" | grep -F -- "$(basename "$id")" | grep -q "failed" || fail "status does not show $id failed"
	sd status --json | python3 -c '
import json, sys
ids = [e["what"] for e in json.load(sys.stdin)["status"] if e["status"] == "failed"]
sys.exit(0 if sys.argv[1] in ids else 1)' "${3:-$id}" || fail "status --json does not show ${3:-$id} failed"
	sd status --format=prometheus | grep -F "entry=\"${3:-$id}\",state=\"failed\"} 1" >/dev/null ||
		fail "the metrics do not count ${3:-$id} failed"
}

stop_all() {
	sd stop >/dev/null 2>&1
	[ -z "$(mount_snapshot)" ] || fail "stop left mounts: $(mount_snapshot)"
	rm -rf "$STATE"
}

note "1. two lines on one directory through a link, and a mount below the second"
{
	good_lines
	cat <<EOT
tmpfs  $SCRATCH/c35/var/run  tmpfs  size=1M,noauto,x-storaged  0 0
tmpfs  $SCRATCH/c35/run      tmpfs  size=2M,noauto,x-storaged  0 0
tmpfs  $SCRATCH/c35/run/sub  tmpfs  size=1M,noauto,x-storaged  0 0
EOT
} >"$FSTAB"
strict "$FSTAB:4"
run_sd 1 start
up "duplicate"
# one mount per mount point, the first line's (as systemd-fstab-generator)
[ "$(mount_count "$SCRATCH/c35/run")" = 1 ] || fail "not one mount on $SCRATCH/c35/run"
findmnt -rn -o OPTIONS --mountpoint "$SCRATCH/c35/run" | grep -q "size=1024k" || fail "the mount on $SCRATCH/c35/run is not line 3's"
# what waits on the refused line fails as a dependant, said and counted
printf '%s\n' "$OUT" | grep "error: " | grep "$SCRATCH/c35/run/sub" | grep -q "which failed" ||
	fail "the mount below the refused line is not failed as its dependant"
is_mountpoint "$SCRATCH/c35/run/sub" && fail "$SCRATCH/c35/run/sub mounted though the line it waits for is refused"
refused "$FSTAB:4" "2 failed (1 skipped"
note "the next start, nothing changed, says the same"
run_sd 1 start
up "duplicate, second start"
[ "$(mount_count "$SCRATCH/c35/run")" = 1 ] || fail "second start: not one mount on $SCRATCH/c35/run"
refused "$FSTAB:4" "2 failed (1 skipped"
stop_all

note "2. a misspelt x-storaged. option, and a line libmount cannot read"
{
	good_lines
	echo "tmpfs  $SCRATCH/opt  tmpfs  size=1M,noauto,x-storaged,x-storaged.mount-timout=5s  0 0"
	echo "tmpfs-with-two-fields $SCRATCH/opt2"
} >"$FSTAB"
strict "$FSTAB:3" "$FSTAB:4"
run_sd 1 start
up "misspelt option"
is_mountpoint "$SCRATCH/opt" && fail "the line with the misspelt option was mounted"
printf '%s\n' "$OUT" | grep -q "refused, $FSTAB:4: malformed line" || fail "the unreadable line is not a failed step"
refused "$FSTAB:3" "2 failed"
note "the line corrected: start mounts it, and nothing failed is left in status"
sed -i -e 's/mount-timout/mount-timeout/' -e 4d "$FSTAB"
run_sd 0 check
run_sd 0 start
is_mountpoint "$SCRATCH/opt" || fail "the corrected line is not mounted"
run_sd 0 status
stop_all

note "3. a bad key in one [area], and an area below a refused line"
good_lines >"$FSTAB"
echo "tmpfs  $SCRATCH/opt  tmpfs  size=1M,noauto,x-storaged,x-storaged.mount-timout=5s  0 0" >>"$FSTAB"
cat >"$CONF" <<EOT
$BASECONF

[area bad]
path = $SCRATCH/bad
size = 4M
sizee = 4M

[area good]
path = $SCRATCH/good
size = 4M

[area below]
path = $SCRATCH/opt/dir
size = 4M
EOT
strict "$CONF:7" "$FSTAB:3"
run_sd 1 start
up "bad area key"
findmnt -rn -o FSTYPE --mountpoint "$SCRATCH/good" | grep -qx tmpfs || fail "the good area is not set up"
is_mountpoint "$SCRATCH/bad" && fail "the refused area was set up"
printf '%s\n' "$OUT" | grep "error: " | grep "area below" | grep -q "which failed" ||
	fail "the area below the refused line is not failed as its dependant"
refused "$CONF:7" "3 failed (1 skipped" bad
run_sd 1 start
refused "$CONF:7" "3 failed (1 skipped" bad
stop_all

note "4. a bad key in the RAID1's [btrfs] section: its mount fails, the rest comes up"
good_lines >"$FSTAB"
printf '%s\n\n[btrfs %s]\ndegraded = sometimes\n' "$BASECONF" "$FSID" >"$CONF"
strict "$CONF:5"
run_sd 1 start
up no-raid
is_mountpoint "$SCRATCH/data" && fail "the RAID1 was mounted though its [btrfs] section is refused"
refused "$CONF:5" "1 failed" "$SCRATCH/data"
stop_all

note "5. an error within no item ([storaged]) stops start, in one line"
good_lines >"$FSTAB"
printf '%s\njobs = many\n' "$BASECONF" >"$CONF"
strict "$CONF:3"
run_sd 2 start
[ -z "$(mount_snapshot)" ] || fail "start mounted something over an unusable configuration"
[ "$(printf '%s\n' "$OUT" | grep -c "cannot be used, so nothing is set up")" = 1 ] ||
	fail "start does not say in one line that it sets up nothing"
exit 0

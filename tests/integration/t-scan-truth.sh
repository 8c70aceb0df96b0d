#!/bin/bash
# `storaged scan` exits 0 only when every btrfs filesystem it shows is
# complete, current and unambiguous; a device it cannot open is listed with
# the reason (text and JSON) and makes it exit 1 only where it could be a
# missing member.  What scan shows is compared with btrfs-progs' view
# (dump-super, btrfs filesystem show) and the loop devices this test made.
# (A host disk the sandbox keeps from root, EPERM, is listed the same way.)
. "$(dirname "$0")/lib.sh"
setup
command -v mkfs.btrfs >/dev/null || skip "mkfs.btrfs missing (btrfs-progs)"
command -v python3 >/dev/null || skip "python3 missing (reads the JSON)"

mkraid1 truth 256M
C=$(mkloop c 64M)

# scan_json LIST KEY VALUE FIELD: FIELD of the entry of LIST
# ("filesystems", "unreadable") in scan --json whose KEY is VALUE, as text
scan_json() {
	sd scan --json 2>/dev/null | python3 -c '
import json, sys
lst, key, value, field = sys.argv[1:]
for e in json.load(sys.stdin)[lst]:
    if e[key] == value:
        v = e[field]
        print(" ".join(map(str, v)) if isinstance(v, list) else v)' "$@"
}
own() { scan_json filesystems fsid "$FSID" "$1"; }
unreadable() { scan_json unreadable device "$1" "$2"; }

note "complete and current: exit 0; members and count as the superblock says"
run_scan 0
expect_out "$FSID"
total=$(btrfs inspect-internal dump-super "$A" | awk '$1 == "num_devices" { print $2 }')
[ "$(own expected)" = "$total" ] || fail "scan expects $(own expected) members, the superblock $total"
[ "$(own present)" = 2 ] || fail "scan shows $(own present) members present"
[ "$(own members)" = "$A $B" ] || fail "scan's members '$(own members)' are not '$A $B'"
[ -z "$(own problems)" ] || fail "problems listed for a sound filesystem: $(own problems)"
# by devid (A is 1, B is 2): a name sort puts /dev/loop10 before /dev/loop9
shown=$(btrfs filesystem show "$FSID" 2>/dev/null | awk '$1 == "devid" { print $2, $NF }' | sort -n | awk '{ print $2 }' | tr '\n' ' ')
[ "$shown" = "$A $B " ] || fail "btrfs filesystem show lists '$shown', scan '$A $B'"

# deny DEV: storaged cannot open DEV (EACCES), as a host disk an LSM or a
# sandbox keeps from root: mode 000, and storaged runs without
# CAP_DAC_OVERRIDE (the permission events of fanotify are for regular files)
command -v setpriv >/dev/null || skip "setpriv missing (util-linux)"
DENIED=
deny() {
	DENIED=$1
	DENIED_MODE=$(stat -c %a "$1")
	chmod 000 "$1" || fail "chmod $1"
}
undeny() {
	chmod "$DENIED_MODE" "$DENIED"
	DENIED=
}
stop_deny() { [ -n "$DENIED" ] && undeny; }
CLEANUP_HOOK=stop_deny
sd() {
	setpriv --bounding-set -dac_override,-dac_read_search \
		"$STORAGED" -c "$CONF" -f "$FSTAB" --state-dir "$STATE" "$@"
}

note "a device that is no member cannot be opened: listed with the reason, exit 0"
deny "$C"
run_scan 0
expect_out "'$C' could not be read (cannot open: Permission denied)"
[ "$(unreadable "$C" error)" = "Permission denied" ] || fail "JSON: no reason for $C"
[ "$(unreadable "$C" stage)" = open ] || fail "JSON: $C not listed as failing at open"
[ -z "$(unreadable "$C" could_be_member_of)" ] || fail "JSON: $C taken for a member of $(unreadable "$C" could_be_member_of)"
undeny

note "a member cannot be opened: the filesystem is incomplete, the device could be its member: exit 1"
deny "$B"
run_scan 1
expect_out "'$B' could not be read (cannot open: Permission denied)"
expect_out "could be a missing member of $FSID"
[ "$(own present)" = 1 ] || fail "scan shows $(own present) members present with $B unreadable"
[ "$(own problems)" = incomplete ] || fail "JSON problems '$(own problems)', not 'incomplete'"
[ "$(unreadable "$B" could_be_member_of)" = "$FSID" ] || fail "JSON: $B not named as a possible member of $FSID"
run_scan 1 --json
printf '%s\n' "$OUT" | grep -v '^storaged:' | python3 -m json.tool >/dev/null || fail "scan --json is not JSON"
undeny
run_scan 0

note "a member detached: incomplete, exit 1, the missing devid shown"
detach "$B"
run_scan 1
[ "$(own missing)" = 2 ] || fail "scan's missing devids '$(own missing)', not 2"
[ "$(own problems)" = incomplete ] || fail "JSON problems '$(own problems)', not 'incomplete'"

# As the host's root disk in a sandbox: EPERM on open, no udevd to say
# what it holds, but mounted, so the mount table does.
note "a mounted ext4 device cannot be opened, a member is missing: no missing member, exit 1 for the member alone"
command -v mkfs.ext4 >/dev/null || skip "mkfs.ext4 missing (e2fsprogs)"
E=$(mkloop e 64M)
mkfs.ext4 -q -F "$E" >/dev/null || fail "mkfs.ext4 $E"
mkdir -p "$SCRATCH/ext4"
mount "$E" "$SCRATCH/ext4" || fail "mount $E"
deny "$E"
run_scan 1
expect_out "'$E' could not be read (cannot open: Permission denied)"
# where udevd runs, its database says it first
if grep -qs '^E:ID_FS_TYPE=' "/run/udev/data/b$((16#$(stat -c %t "$E")))$(printf ':%d' "0x$(stat -c %T "$E")")"; then
	expect_out "udev says ext4"
	said=udev
else
	expect_out "the mount table says ext4 (mounted on $SCRATCH/ext4): not a missing member"
	said=mounts
fi
[ "$(unreadable "$E" type)" = ext4 ] || fail "JSON: type of $E '$(unreadable "$E" type)', not ext4"
[ "$(unreadable "$E" source)" = "$said" ] || fail "JSON: source of $E '$(unreadable "$E" source)', not $said"
[ -z "$(unreadable "$E" could_be_member_of)" ] || fail "JSON: mounted ext4 $E taken for a member of $(unreadable "$E" could_be_member_of)"
[ "$(own missing)" = 2 ] || fail "scan's missing devids '$(own missing)', not 2"
undeny
umount "$SCRATCH/ext4" || fail "umount $E"
exit 0

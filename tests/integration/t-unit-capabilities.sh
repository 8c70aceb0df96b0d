#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# storaged under exactly the capability bounding set its units give it
# (CapabilityBoundingSet= of systemd/storaged.service.in and
# storaged-remote.service.in, read from the files, as setpriv(1) sets it),
# so that a hardening step cannot silently take a feature away.  With
# kernel.dmesg_restrict=1 (Debian's default) reading /dev/kmsg needs
# CAP_SYSLOG: without it a failed mount lost the kernel's reason ("the
# kernel says: ..."; C14).  Checked under each unit's set: a normal start
# (a tmpfs, an ext4 on a loop device, an area seeded from a directory
# holding another user's unreadable file) and stop, and a failed ext4
# mount that carries the kernel's own words.
. "$(dirname "$0")/lib.sh"
setup
command -v setpriv >/dev/null || skip "setpriv missing (util-linux)"
command -v mkfs.ext4 >/dev/null || skip "mkfs.ext4 missing (e2fsprogs)"
[ "$(cat /proc/sys/kernel/dmesg_restrict 2>/dev/null)" = 1 ] ||
	note "kernel.dmesg_restrict is not 1 here: the kernel log is open to all, CAP_SYSLOG is not put to the test"
units=$(cd "$(dirname "$0")/../.." && pwd)/systemd

# "CAP_SYS_ADMIN CAP_CHOWN" -> "-all,+sys_admin,+chown" (setpriv's names)
bounding_set() {
	local caps c out=-all
	caps=$(sed -n 's/^CapabilityBoundingSet=//p' "$1")
	[ -n "$caps" ] || fail "no CapabilityBoundingSet= in $1"
	for c in $caps; do
		c=${c#CAP_}
		out="$out,+${c,,}"
	done
	echo "$out"
}

dev=$(mkloop ext 64M)
mkfs.ext4 -q -F "$dev" >/dev/null || fail "mkfs.ext4"
m=$SCRATCH/m
mkdir -p "$m/t" "$m/e" "$m/bad" "$SCRATCH/area"
echo secret >"$SCRATCH/area/other"
chown 65534:65534 "$SCRATCH/area/other"
chmod 0600 "$SCRATCH/area/other"
cat >"$CONF" <<EOT
[area capcheck]
path = $SCRATCH/area
backend = tmpfs
size = 16M
EOT
good() {
	cat >"$FSTAB" <<EOT
tmpfs $m/t tmpfs size=8M,mode=0755,noauto,x-storaged 0 0
$dev  $m/e ext4  noatime,noauto,x-storaged 0 0
EOT
}

for unit in storaged.service.in storaged-remote.service.in; do
	set_=$(bounding_set "$units/$unit")
	note "$unit: setpriv --bounding-set=$set_"
	sdcap() { setpriv --bounding-set="$set_" -- "$STORAGED" -c "$CONF" -f "$FSTAB" --state-dir "$STATE" "$@"; }
	good
	OUT=$(sdcap start 2>&1) || { printf '%s\n' "$OUT"; fail "$unit: start under the unit's capabilities failed"; }
	printf '%s\n' "$OUT" | sed 's/^/  | /'
	is_mountpoint "$m/t" && is_mountpoint "$m/e" && is_mountpoint "$SCRATCH/area" ||
		fail "$unit: not everything mounted"
	[ "$(cat "$SCRATCH/area/other")" = secret ] || fail "$unit: the area's seed lost another user's file"
	OUT=$(sdcap stop 2>&1) || { printf '%s\n' "$OUT"; fail "$unit: stop failed"; }

	note "$unit: a failed mount carries the kernel's reason"
	echo "$dev $m/bad ext4 c39nosuchoption,noauto,x-storaged 0 0" >"$FSTAB"
	OUT=$(sdcap start 2>&1) && fail "$unit: a mount with an unknown ext4 option succeeded"
	printf '%s\n' "$OUT" | sed 's/^/  | /'
	expect_out "the kernel says: .*c39nosuchoption"
	sdcap stop >/dev/null 2>&1
done
echo "PASS: $TEST_NAME"
exit 0

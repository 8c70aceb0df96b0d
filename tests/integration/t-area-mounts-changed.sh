#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# An area's mounts changed under storaged by someone else: its bind over
# the directory unmounted by hand, moved elsewhere, or covered by another
# mount.  status shows gone / covered; sync and stop say what happened.  A
# persist area whose directory was uncovered is not synced by `sync`;
# `stop` syncs it back by the three-way rule (what was written to the
# directory meanwhile stays, t-c27-bind-lost-before-stop.sh has the
# cases), warning that the bind was gone.  A covered area is synced; stop
# names the mount over it and how to free it, then finishes.
. "$(dirname "$0")/lib-area.sh"

# a private mount of our own, so that mount --move works below it
mkdir -p "$SCRATCH/m"
mount -t tmpfs scratch "$SCRATCH/m" && mount --make-private "$SCRATCH/m" || skip "cannot mount a tmpfs"
P=$SCRATCH/m/work
Q=$SCRATCH/m/elsewhere
mkdir -p "$P" "$Q"
echo old >"$P/file"
write_conf <<EOT
[area w]
path = $P
backend = tmpfs
size = 16M
persist = yes
EOT
AREA=$RUN/areas/w/area

status_is() { # STATE PATTERN: status exits 1 while an area is gone
	expect_rc "$([ "$1" = gone ] && echo 1 || echo 0)" status
	grep -E "^area +w +$P +$1 .*$2" "$OUT" >/dev/null || { cat "$OUT"; fail "status does not show '$1 ... $2'"; }
}

for how in unmounted moved; do
	echo old >"$P/file"
	expect_rc 0 start
	status_is active ""
	echo "written in RAM" >"$P/file"
	case $how in
	unmounted) umount "$P" ;;
	moved) mount --move "$P" "$Q" ;;
	esac
	echo "written on disk" >"$P/disk-only"
	status_is gone "$how"
	expect_rc 1 start
	grep -q "area 'w' was set up, but its bind .*$how.*run \`$(sd_self) stop\` first" "$OUT" ||
		{ cat "$OUT"; fail "$how: start does not refuse the area whose bind is gone"; }
	[ "$(cat "$AREA/file")" = "written in RAM" ] || fail "$how: start dropped the area's content"
	expect_rc 1 sync w
	grep -q "area 'w'.*$how.*not synced back" "$OUT" || { cat "$OUT"; fail "$how: sync does not say why it did not sync"; }
	expect_rc 0 stop
	grep -q "warning: area 'w'.*$how.*syncing it back, keeping what was written to '$P'" "$OUT" ||
		{ cat "$OUT"; fail "$how: stop does not warn that the bind was gone"; }
	[ "$(cat "$P/disk-only")" = "written on disk" ] || fail "$how: the file written to the uncovered directory was lost"
	[ "$(cat "$P/file")" = "written in RAM" ] || fail "$how: the area's change was not synced back"
	[ -z "$(findmnt -rn -o TARGET | grep -F "$SCRATCH/m/")" ] || fail "$how: mounts left: $(findmnt -rn -o TARGET | grep -F "$SCRATCH/m/")"
	[ -d "$RUN/areas/w" ] && fail "$how: the area's record is left"
	rm -f "$P/disk-only"
	pass "$how: status says gone; sync refuses; stop syncs back keeping the directory's new file"
done

# covered: the directory stays hidden behind the area, the sync is safe
echo old >"$P/file"
expect_rc 0 start
echo "written in RAM" >"$P/file"
mount -t tmpfs over "$P"
status_is covered "over \(tmpfs\)"
expect_rc 0 sync w
grep -q "area 'w'.*over (tmpfs) was mounted over it" "$OUT" || { cat "$OUT"; fail "covered: sync does not warn"; }
expect_rc 1 stop
grep -q "over (tmpfs) was mounted on $P after start.*umount $P" "$OUT" || { cat "$OUT"; fail "covered: stop does not name the mount over the area"; }
umount "$P"
expect_rc 0 stop
[ "$(cat "$P/file")" = "written in RAM" ] || fail "covered: stop did not sync back"
is_mountpoint "$P" && fail "covered: stop left a mount on $P"
pass "covered: status says so; synced; stop names the mount over it, then finishes"

# persist = no: nothing to sync back; stop finishes and says what it found
sed -i 's/persist = yes/persist = no/' "$CONF"
expect_rc 0 start
umount "$P"
expect_rc 0 stop
grep -q "area 'w'.*unmounted by someone else" "$OUT" || { cat "$OUT"; fail "persist = no: stop does not say the bind was gone"; }
pass "persist = no: stop finishes and says the bind was gone"

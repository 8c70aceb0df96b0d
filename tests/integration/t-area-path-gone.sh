#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# An area's directory is often a user's (~/rpmbuild): when its owner renames
# it away, or puts a symbolic link in its place, that area fails (exit 1,
# saying why) and the rest of the pass still runs.  It used to be a
# configuration error (exit 2, nothing done), so any user could stop the
# boot pass.  check and --dry-run predict the failure.
. "$(dirname "$0")/lib-area.sh"

U=$SCRATCH/home/u
mkdir -p "$U/rb" "$SCRATCH/m"
chmod 0755 "$SCRATCH" "$SCRATCH/home"
chown 65534:65534 "$U" "$U/rb"
write_conf <<EOT
[area rb]
path = $U/rb
size = 16M
inodes = 1000
EOT
echo "tmpfs $SCRATCH/m tmpfs size=1M,noauto,x-storaged 0 0" >"$FSTAB"

for how in renamed link; do
	case $how in
	renamed) setpriv --reuid=65534 --regid=65534 --clear-groups mv "$U/rb" "$U/gone" ;;
	link) setpriv --reuid=65534 --regid=65534 --clear-groups ln -s "$U/gone" "$U/rb" ;;
	esac
	expect_rc 1 --dry-run
	grep -q "will fail: path '$U/rb'" "$OUT" || { cat "$OUT"; fail "$how: the dry-run does not show the area failing"; }
	expect_rc 1 check
	expect_rc 1 start
	grep -q "area rb.*path '$U/rb'" "$OUT" || { cat "$OUT"; fail "$how: start does not name the area and its path"; }
	is_mountpoint "$SCRATCH/m" || { cat "$OUT"; fail "$how: the fstab entry was not mounted"; }
	is_mountpoint "$U/gone" && fail "$how: the renamed directory was covered"
	expect_rc 0 stop
	is_mountpoint "$SCRATCH/m" && fail "$how: stop left the entry mounted"
	pass "$how: the area fails alone; the tmpfs entry is mounted"
done
[ -z "$(scratch_mounts)" ] || fail "mounts left: $(scratch_mounts)"

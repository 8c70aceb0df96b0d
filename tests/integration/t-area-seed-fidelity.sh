#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# A seeded area (tmpfs and zram/ext4) is identical to its directory: owners,
# modes (setuid/setgid), times, symlinks, hard links, xattrs, device nodes,
# fifos, sparse files, empty directories; the root keeps owner and mode.
. "$(dirname "$0")/lib-area.sh"

backends="tmpfs"
[ -w /sys/class/zram-control/hot_add ] && command -v mkfs.ext4 >/dev/null && backends="tmpfs zram"

declare -A XATTR # per backend: are xattrs checked
for b in $backends; do
	make_tree "$SCRATCH/$b"
	xattr=no
	set_xattr "$SCRATCH/$b/file" user.storaged "kept" 2>/dev/null && xattr=yes
	if [ $xattr = yes ] && [ "$b" = tmpfs ] && ! tmpfs_user_xattrs; then
		echo "# tmpfs here has no user.* xattrs (before Linux 6.6): not checked on tmpfs"
		xattr=no
	fi
	XATTR[$b]=$xattr
	tree_stat "$SCRATCH/$b" >"$SCRATCH/$b.before"
	stat -c '%a %u %g' "$SCRATCH/$b" >"$SCRATCH/$b.root"
	cat >>"$SCRATCH/conf.txt" <<EOT
[area fid$b]
path = $SCRATCH/$b
backend = $b
size = 64M
inodes = 1000

EOT
done
write_conf <"$SCRATCH/conf.txt"

expect_rc 0 start
for b in $backends; do
	d=$SCRATCH/$b
	is_mountpoint "$d" || fail "$b: $d is not covered"
	case $b in
	tmpfs) findmnt -n -o FSTYPE "$d" | grep -qx tmpfs || fail "$b: not a tmpfs" ;;
	zram) findmnt -n -o SOURCE "$d" | grep -q '^/dev/zram' || fail "$b: not on a zram device" ;;
	esac
	tree_stat "$d" >"$SCRATCH/$b.after"
	diff -u "$SCRATCH/$b.before" "$SCRATCH/$b.after" || fail "$b: tree differs (stat)"
	diff -r --no-dereference -x fifo -x chardev "$RUN/areas/fid$b/lower" "$d" || fail "$b: contents differ"
	[ "$(stat -c '%a %u %g' "$d")" = "$(cat "$SCRATCH/$b.root")" ] || fail "$b: root owner/mode"
	[ "$(stat -c %i "$d/file")" = "$(stat -c %i "$d/sub/hardlink")" ] || fail "$b: hard link split"
	[ "$(stat -c %b "$d/sparse")" -lt 100 ] || fail "$b: sparse file filled in ($(stat -c %b "$d/sparse") blocks)"
	[ -u "$d/setuid" ] || fail "$b: setuid bit lost"
	[ -c "$d/chardev" ] && [ -p "$d/fifo" ] || fail "$b: device node or fifo lost"
	[ ! -e "$d/lost+found" ] || fail "$b: lost+found appeared"
	xattr=${XATTR[$b]}
	if [ $xattr = yes ]; then
		[ "$(get_xattr "$d/file" user.storaged)" = kept ] || fail "$b: xattr lost"
	fi
	pass "$b: seeded tree identical (xattrs: $xattr)"
done

expect_rc 0 status
for b in $backends; do
	grep -q "fid$b" "$OUT" || { cat "$OUT"; fail "status does not show fid$b"; }
done

# running twice mounts nothing twice
n=$(grep -c "$SCRATCH" /proc/self/mountinfo)
expect_rc 0 start
[ "$(grep -c "$SCRATCH" /proc/self/mountinfo)" = "$n" ] || fail "second start mounted again"

expect_rc 0 stop
[ -z "$(scratch_mounts)" ] || fail "mounts left after stop: $(scratch_mounts)"
for b in $backends; do
	diff -u "$SCRATCH/$b.before" <(tree_stat "$SCRATCH/$b") || fail "$b: directory changed by start/stop"
done
pass "stop left nothing mounted"

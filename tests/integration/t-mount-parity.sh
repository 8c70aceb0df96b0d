#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The same fstab lines through mount(8) and through `storaged start`, one
# table: each row mounted by `mount --fstab FSTAB TARGET` (libmount does its
# userspace steps: names to numbers, absent security modules' options
# dropped, the read-only retry), its `findmnt -no OPTIONS,FSTYPE,SOURCE`
# kept and unmounted; then all rows by storaged, which mounts a tmpfs and
# a bind itself (fsopen/fsconfig, open_tree) and the rest through libmount.
# Both must show the same.  Nothing is normalised: the rows use the same
# mount points and devices, one after the other.  (C39's kind.)
. "$(dirname "$0")/lib.sh"
setup
command -v mkfs.ext4 >/dev/null || skip "mkfs.ext4 missing (e2fsprogs)"
command -v useradd >/dev/null || skip "useradd missing (passwd)"

U=sdpar$$ G=sdparg$$
drop_ids() {
	userdel "$U" >/dev/null 2>&1
	groupdel "$G" >/dev/null 2>&1
}
CLEANUP_HOOK=drop_ids
groupadd --system "$G" || fail "groupadd"
useradd --system --no-create-home --no-user-group -g "$G" -s /usr/sbin/nologin "$U" || fail "useradd"

rw=$(mkloop rw 64M)
mkfs.ext4 -q -F "$rw" >/dev/null || fail "mkfs.ext4"
truncate -s 64M "$SCRATCH/img/wp.img"
mkfs.ext4 -q -F "$SCRATCH/img/wp.img" >/dev/null || fail "mkfs.ext4"
wp=$(losetup -r -f --show "$SCRATCH/img/wp.img") || fail "losetup -r"
echo "$wp" >>"$SCRATCH/loops"
mkdir -p "$SCRATCH/bindsrc"
m=$SCRATCH/m

# NAME SOURCE FSTYPE OPTIONS (x-storaged,noauto added)
rows="uidname tmpfs tmpfs size=16M,uid=$U,gid=$G,mode=775,noatime
numeric tmpfs tmpfs size=8M,uid=4242,gid=4243,mode=750
gidonly tmpfs tmpfs size=8M,gid=$G
useruid tmpfs tmpfs size=8M,uid=useruid,gid=usergid
flags tmpfs tmpfs nosuid,nodev,noexec,size=8M,nr_inodes=1k
ro tmpfs tmpfs ro,size=4M
bind $SCRATCH/bindsrc none bind
bindro $SCRATCH/bindsrc none bind,ro,nosuid
ext4 $rw ext4 noatime,errors=remount-ro
writeprotected $wp ext4 defaults"
[ -e /sys/fs/selinux/enforce ] ||
	rows="$rows
selinux tmpfs tmpfs size=4M,context=\"system_u:object_r:tmp_t:s0\",rootcontext=system_u:object_r:tmp_t:s0"
[ -e /sys/fs/smackfs ] || rows="$rows
smack tmpfs tmpfs size=4M,smackfsdef=_"

: >"$FSTAB"
while read -r name src type opts; do
	mkdir -p "$m/$name"
	echo "$src $m/$name $type $opts,x-storaged,noauto 0 0" >>"$FSTAB"
done <<<"$rows"
cat "$FSTAB" | sed 's/^/  fstab: /'

note "mount(8), row by row"
while read -r name _; do
	out=$(mount --fstab "$FSTAB" "$m/$name" 2>&1) || fail "mount(8) failed on row $name: $out"
	[ -n "$out" ] && note "mount(8) on $name: $out"
	findmnt -no OPTIONS,FSTYPE,SOURCE --mountpoint "$m/$name" >"$SCRATCH/mount.$name"
	umount "$m/$name" || fail "umount $m/$name"
done <<<"$rows"

note "storaged"
run_sd 0 check
run_sd 0 start
expect_out "$m/writeprotected: WARNING: source write-protected, mounted read-only"
bad=0
while read -r name _; do
	findmnt -no OPTIONS,FSTYPE,SOURCE --mountpoint "$m/$name" >"$SCRATCH/sd.$name"
	if cmp -s "$SCRATCH/mount.$name" "$SCRATCH/sd.$name"; then
		echo "  same  $name: $(cat "$SCRATCH/sd.$name")"
	else
		echo "  DIFF  $name: mount(8): $(cat "$SCRATCH/mount.$name")"
		echo "        $name: storaged: $(cat "$SCRATCH/sd.$name")"
		bad=1
	fi
done <<<"$rows"
run_sd 0 stop
[ "$bad" = 0 ] || fail "storaged mounts differ from mount(8)'s"
echo "PASS: $TEST_NAME"
exit 0

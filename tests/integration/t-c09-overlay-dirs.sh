#!/bin/bash
# C09: every path an entry uses is a dependency.  An overlay whose upperdir
# and workdir live on a filesystem fstab lists later: `mount -a` mounts the
# overlay first and its writes land on the bare directory, hidden once the
# real filesystem is mounted over it.  storaged orders the filesystem
# first and says why; so too for a bind source reached through a symbolic
# link and an image file (loop-mounted by mount(8)) on that filesystem.
. "$(dirname "$0")/lib.sh"
setup
command -v mkfs.ext4 >/dev/null || skip "mkfs.ext4 missing (e2fsprogs)"
grep -qw overlay /proc/filesystems || modprobe overlay 2>/dev/null
grep -qw overlay /proc/filesystems || skip "no overlay filesystem"

DEV=$(mkloop data 64M)
mkfs.ext4 -q -F -L c09data "$DEV" || fail "mkfs"
M=$SCRATCH/m
mkdir -p "$M/lower" "$M/merged" "$M/data" "$M/b" "$M/iso"
echo lower >"$M/lower/from-lower"
# the filesystem: upper/ and work/ for the overlay, a shared directory,
# and an image file
mount "$DEV" "$M/data" || fail "mount data to prepare it"
mkdir -p "$M/data/upper" "$M/data/work" "$M/data/share"
echo shared >"$M/data/share/file"
truncate -s 8M "$M/data/small.img" && mkfs.ext4 -q -F "$M/data/small.img" || fail "mkfs image"
umount "$M/data" || fail "umount data"
# the bare directories below, as the reporter had them
mkdir -p "$M/data/upper" "$M/data/work"
ln -s "$M/data/share" "$SCRATCH/link"

note "the peer: mount -a -T mounts in file order, the overlay on the bare directory"
PEER=$SCRATCH/fstab.peer
cat >"$PEER" <<EOT
overlay  $M/merged  overlay  lowerdir=$M/lower,upperdir=$M/data/upper,workdir=$M/data/work  0 0
$DEV     $M/data    ext4     defaults  0 0
EOT
if mount -a -T "$PEER" 2>/dev/null; then
	echo written >"$M/merged/new-file"
	[ -e "$M/data/upper/new-file" ] && fail "peer: the write reached the ext4 filesystem; the fault is gone?"
	note "peer: the write went to the bare directory under $M/data (lost)"
	umount "$M/merged" "$M/data" || fail "umount peer mounts"
	rm -f "$M/data/upper/new-file"
else
	note "peer: mount -a failed here; going on with storaged"
	umount "$M/merged" 2>/dev/null
	umount "$M/data" 2>/dev/null
fi

cat >"$FSTAB" <<EOT
overlay           $M/merged  overlay  lowerdir=$M/lower,upperdir=$M/data/upper,workdir=$M/data/work,noauto,x-storaged  0 0
$SCRATCH/link     $M/b       none     bind,noauto,x-storaged  0 0
$M/data/small.img $M/iso     ext4     noauto,x-storaged  0 0
$DEV              $M/data    ext4     defaults,noauto,x-storaged  0 0
EOT

run_sd 0 --dry-run start
line_of() { printf '%s\n' "$OUT" | grep -n "$1" | head -1 | cut -d: -f1; }
d=$(line_of "mount $DEV on $M/data ")
o=$(line_of "mount overlay on $M/merged ")
b=$(line_of "on $M/b ")
i=$(line_of "on $M/iso ")
[ -n "$d" ] && [ -n "$o" ] && [ "$d" -lt "$o" ] || fail "dry-run does not order $M/data before the overlay"
[ -n "$b" ] && [ "$d" -lt "$b" ] || fail "dry-run does not order $M/data before the bind through a link"
[ -n "$i" ] && [ "$d" -lt "$i" ] || fail "dry-run does not order $M/data before the image file on it"
expect_out "upperdir=$M/data/upper is below $M/data"
expect_out "bind source $SCRATCH/link resolves to $M/data/share, below $M/data"
expect_out "image file $M/data/small.img is below $M/data"

run_sd 0 start
[ "$(findmnt -rn -o SOURCE --mountpoint "$M/data")" = "$DEV" ] || fail "data not mounted"
is_mountpoint "$M/merged" || fail "overlay not mounted"
echo written >"$M/merged/new-file" || fail "write through the overlay"
[ -e "$M/data/upper/new-file" ] || fail "the write did not land in upper/ on the ext4 filesystem"
[ "$(cat "$M/b/file" 2>/dev/null)" = shared ] || fail "bind through the link does not show the filesystem's directory"
is_mountpoint "$M/iso" || fail "image file not mounted"
run_sd 0 stop
is_mountpoint "$M/data" && fail "stop left data mounted"
[ -e "$M/data/upper/new-file" ] && fail "the write is on the bare directory"
exit 0

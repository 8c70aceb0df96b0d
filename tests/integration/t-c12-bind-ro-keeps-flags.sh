#!/bin/bash
# C12: a bind never gains a right its source's mount lacks.  `bind,ro` of a
# directory on a nosuid,nodev filesystem: mount(8) of util-linux 2.38 makes
# the bind, then remounts it with only `ro`, and the view loses nosuid,nodev.
# storaged adds the flags asked for to the source mount's (open_tree(2) keeps
# them, mount_setattr(2) adds), for every flag of the kind.
. "$(dirname "$0")/lib.sh"
setup
command -v mkfs.ext4 >/dev/null || skip "mkfs.ext4 missing"

# opts MOUNTPOINT: the per-mount (VFS) options the kernel shows
opts() {
	findmnt -rn -o VFS-OPTIONS --mountpoint "$1" | tail -n 1
}
has_opt() {
	case ",$(opts "$1")," in *",$2,"*) return 0 ;; esac
	return 1
}

dev=$(mkloop src 64M)
mkfs.ext4 -q "$dev" || fail "mkfs.ext4"
mkdir -p "$SCRATCH/src" "$SCRATCH/m/view" "$SCRATCH/m/peer"
mount -o nosuid,nodev,noexec "$dev" "$SCRATCH/src" || fail "mount the source"
mkdir -p "$SCRATCH/src/pub" "$SCRATCH/src/dir2"

note "the peer: mount(8) $(mount --version | sed -n 's/.*util-linux \([0-9.]*\).*/\1/p') with bind,ro"
mount -o bind,ro "$SCRATCH/src/pub" "$SCRATCH/m/peer" || fail "peer bind,ro"
note "peer view: $(opts "$SCRATCH/m/peer")"
if has_opt "$SCRATCH/m/peer" nosuid && has_opt "$SCRATCH/m/peer" nodev; then
	note "this mount(8) keeps the source's flags"
else
	note "the fault: the peer's read-only view lost nosuid/nodev"
fi
umount "$SCRATCH/m/peer"

cat >"$FSTAB" <<EOT
$SCRATCH/src/pub   $SCRATCH/m/view  none  bind,ro,noauto,x-storaged  0 0
$SCRATCH/src/dir2  $SCRATCH/m/v2    none  bind,noatime,noauto,x-storaged,X-mount.mkdir  0 0
$SCRATCH/src       $SCRATCH/m/v3    none  rbind,nosymfollow,noauto,x-storaged,X-mount.mkdir  0 0
EOT
run_sd 0 start
for m in view v2 v3; do
	note "$m: $(opts "$SCRATCH/m/$m")"
	for o in nosuid nodev noexec; do
		has_opt "$SCRATCH/m/$m" $o || fail "$m lost the source's $o"
	done
done
has_opt "$SCRATCH/m/view" ro || fail "view is not read-only"
has_opt "$SCRATCH/m/v2" noatime || fail "v2 lacks noatime"
has_opt "$SCRATCH/m/v2" ro && fail "v2 became read-only"
has_opt "$SCRATCH/m/v3" nosymfollow || fail "v3 lacks nosymfollow"
run_sd 0 stop
for m in view v2 v3; do
	is_mountpoint "$SCRATCH/m/$m" && fail "stop left $m mounted"
done
umount "$SCRATCH/src"
exit 0

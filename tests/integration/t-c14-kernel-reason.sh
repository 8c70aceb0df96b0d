#!/bin/bash
# C14: a failed mount carries the kernel's own reason.  mount(8) of
# util-linux 2.38 says only "wrong fs type, bad option, bad superblock ...";
# the filesystem said why in the kernel log.  storaged puts the kernel's
# words in its log and in `status`: from the kernel log for a mount by
# mount(2) (here btrfs: `subvol` and `subvolid` that do not agree), from the
# new mount API's own error log for one by fsopen(2) (here a tmpfs with a
# bad size).
. "$(dirname "$0")/lib.sh"
setup
command -v mkfs.btrfs >/dev/null || skip "mkfs.btrfs missing (btrfs-progs)"
command -v btrfs >/dev/null || skip "btrfs missing (btrfs-progs)"

dev=$(mkloop c14 256M)
mkfs.btrfs -q -f "$dev" >/dev/null || fail "mkfs.btrfs"
mkdir -p "$SCRATCH/top" "$SCRATCH/m/home" "$SCRATCH/m/peer" "$SCRATCH/m/t"
mount "$dev" "$SCRATCH/top" || fail "mount top"
btrfs -q subvolume create "$SCRATCH/top/home" >/dev/null || fail "subvolume create"
umount "$SCRATCH/top"

note "the peer: mount(8) says only its generic text"
peer=$(mount -t btrfs -o subvol=home,subvolid=5 "$dev" "$SCRATCH/m/peer" 2>&1) && fail "the peer mounted"
note "peer: $peer"

cat >"$FSTAB" <<EOT
$dev   $SCRATCH/m/home  btrfs  subvol=home,subvolid=5,noauto,x-storaged  0 0
tmpfs  $SCRATCH/m/t     tmpfs  size=12Q,noauto,x-storaged  0 0
EOT
run_sd 1 start
# btrfs: "subvol 'home' does not match subvolid 5" (the wording of fs/btrfs/super.c)
expect_out "the kernel says: .*subvol.*home.*does not match subvolid 5"
expect_out "the kernel says: .*tmpfs.*size"
run_sd 1 status # 1: entries failed
printf '%s\n' "$OUT" | grep "$SCRATCH/m/home" | grep -q "subvol.*does not match subvolid" ||
	fail "status lacks the kernel's reason for $SCRATCH/m/home"
is_mountpoint "$SCRATCH/m/home" && fail "the mismatched entry got mounted"
run_sd 0 stop

note "a mount helper's failure carries its own words (mount.nfs, mount.cifs say why on stderr)"
need_private_helpers
cat >"$SCRATCH/upper/mount.c14fs" <<'EOT'
#!/bin/sh
echo "mount.c14fs: access denied by server while mounting $1" >&2
exit 32
EOT
chmod 0755 "$SCRATCH/upper/mount.c14fs"
echo "srv:/exp  $SCRATCH/m/h  c14fs  noauto,x-storaged,X-mount.mkdir  0 0" >"$FSTAB"
in_helper_ns '
	"$3" -c "$4" -f "$5" --state-dir "$6" start; echo "exit $?"
	"$3" -c "$4" -f "$5" --state-dir "$6" status
' "$SBIN" "$SCRATCH" "$STORAGED" "$CONF" "$FSTAB" "$STATE" >"$SCRATCH/out" 2>&1
sed 's/^/  | /' "$SCRATCH/out"
grep -q "^exit 1$" "$SCRATCH/out" || fail "the failed helper did not fail the start"
grep "$SCRATCH/m/h" "$SCRATCH/out" | grep "failed" | grep -q "status 32: mount.c14fs: access denied by server" ||
	fail "status lacks the helper's own words"
run_sd 0 stop
exit 0

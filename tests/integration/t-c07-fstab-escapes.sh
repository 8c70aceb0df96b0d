#!/bin/bash
# C07: octal escapes in fs_spec and fs_file are decoded; a malformed line
# is reported with file and line even with nofail, and nothing is done
# (strict: exit 2).  A second run sees the mount and does nothing.
. "$(dirname "$0")/lib.sh"
setup
command -v mkfs.ext4 >/dev/null || skip "mkfs.ext4 missing (e2fsprogs)"

DEV=$(mkloop vol 64M)
mkfs.ext4 -q -F -L "c07 vol" "$DEV" || fail "mkfs"
mkdir -p "$SCRATCH/with space"
ESC=$(printf '%s' "$SCRATCH" | sed 's/ /\\040/g')
cat >"$FSTAB" <<EOT
LABEL=c07\\040vol  $ESC/with\\040space  ext4  defaults,noauto,x-storaged  0 0
/dev/null         $SCRATCH/broken line    ext4  defaults,nofail,noauto,x-storaged  0 0
EOT
# the malformed line is refused alone, at boot (C35): the first is mounted
run_sd 1 start
expect_out "refused, $FSTAB:2: malformed line"
[ "$(findmnt -rn -o SOURCE --mountpoint "$SCRATCH/with space")" = "$DEV" ] || fail "the good line is not mounted beside the malformed one"
run_sd 2 check
expect_out "$FSTAB:2"

sed -i 2d "$FSTAB"
run_sd 0 start
[ "$(findmnt -rn -o SOURCE --mountpoint "$SCRATCH/with space")" = "$DEV" ] || fail "label with a space not mounted on the directory with a space"
note "second run: already mounted, nothing done"
run_sd 0 start
[ "$(mount_count "$SCRATCH/with space")" = 1 ] || fail "mounted twice"
run_sd 0 stop
is_mountpoint "$SCRATCH/with space" && fail "stop left it mounted"

note "a newline in a mount point (\\012) is mounted, and logged on one line"
mkdir -p "$SCRATCH/new
line"
cat >"$FSTAB" <<EOT
tmpfs  $ESC/new\\012line  tmpfs  size=1M,noauto,x-storaged  0 0
EOT
run_sd 0 start
is_mountpoint "$SCRATCH/new
line" || fail "the mount point with a newline was not mounted"
printf '%s\n' "$OUT" | grep -qF "mounted tmpfs on $SCRATCH/new\\012line" || fail "the log line does not show the newline as \\012"
run_sd 0 stop
exit 0

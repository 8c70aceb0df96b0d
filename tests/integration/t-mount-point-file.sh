#!/bin/bash
# A mount point that is a regular file: check, start and status all say
# it is not a directory (start and status used to say the kernel's
# "Invalid argument", which names no cause).
. "$(dirname "$0")/lib.sh"
setup
touch "$SCRATCH/file"
printf 'tmpfs %s tmpfs size=1M,noauto,x-storaged 0 0\n' "$SCRATCH/file" >"$FSTAB"
WANT="mount point '$SCRATCH/file' is not a directory; correct the fstab entry"
run_sd 1 check
expect_out "$WANT"
run_sd 1 start
expect_out "$WANT"
expect_no_out "Invalid argument"
is_mountpoint "$SCRATCH/file" && fail "something was mounted on the file"
run_sd 1 status
expect_out "$WANT"
exit 0

#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# t-c36-stop-kill-every-step.sh with seed = overlay, the session's work
# also renaming a directory (copied up whole, a whiteout where it was)
# and deleting and making one again (an opaque one): a stop unmounts the
# overlay, applies its upper layer to the directory (copies renamed into
# place, whiteouts as deletions, opaque directories pruned, metadata),
# records that and undoes the private mounts.  Killed at each call of
# those steps in turn (stop_kill_every_step in lib-live.sh), the next stop
# applies the upper layer again: the directory then holds exactly what
# the overlay showed, no change lost, none kept twice as a conflict,
# nothing of storaged's own left in it.
. "$(dirname "$0")/lib-area.sh"
. "$(dirname "$0")/lib-live.sh"
need_fault_injection
need_python3
grep -qw overlay /proc/filesystems || modprobe -q overlay 2>/dev/null
grep -qw overlay /proc/filesystems || skip "this kernel has no overlay filesystem"

# a copying stop's calls, and the apply's own (more of them: it writes
# each changed entry's copy, renames it into place, sets its metadata)
stop_kill_every_step overlay "umount2:8 mount_setattr:4 renameat:14 renameat2:4 rename:6 unlink:6
	unlinkat:8 mkdirat:4 rmdir:8 fsync:24 syncfs:4 fsetxattr:4 fchownat:12 fchmodat:12 utimensat:12
	pwrite64:8 write:14 openat:100 clone3:4"

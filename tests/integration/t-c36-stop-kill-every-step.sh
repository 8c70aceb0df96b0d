#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# C36's kind for `stop`: whatever instant a stop is killed at, the work
# written in a persist area is not lost, `status` tells the live system
# and the next `stop` finishes the job.  A start (a tmpfs fstab entry, a
# bind below it, a persist area seeded by copying) is followed by changes
# in the area (a new file, an appended one, a deleted one, a chmod), then
# `stop` is killed (SIGKILL, strace's fault injection: the process
# entering the call dies before the call is made, the copy helper as well
# as storaged) at each call in turn of those that make a stop's effects:
# unmounts, the sync's writes, renames, fsyncs and extended attributes,
# the records' removal (stop_kill_every_step in lib-live.sh;
# t-c36-stop-kill-overlay.sh runs it with seed = overlay).  After each kill:
# - `status` reports every mount the live mount table still shows below
#   the test's directory and exits non-zero over a stop half done, never
#   "set up nothing" over a live mount (lib-live.sh);
# - the next `stop` exits 0 and leaves nothing mounted, and the area's
#   directory holds exactly what the area showed before the killed stop:
#   no change lost, none put beside as a conflict, nothing of storaged's
#   own left in it.
. "$(dirname "$0")/lib-area.sh"
. "$(dirname "$0")/lib-live.sh"
need_fault_injection
need_python3

stop_kill_every_step yes "$C36_STOP_CALLS"

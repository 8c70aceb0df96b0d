#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# A resident after --daemon has no terminal and no caller's stderr left: it
# logs to syslog(3) when something listens on /dev/log, else to the kernel's
# log.  Without the fallback a machine with no syslog daemon and no journal
# (sysvinit without rsyslog) lost every message the resident wrote:
# syslog(3) drops what no one listens for.  Run in a private mount
# namespace in which /dev/log is no socket (/dev/null bound over it where it
# exists), read back from /dev/kmsg.
. "$(dirname "$0")/lib.sh"
setup
[ -r /dev/kmsg ] || skip "/dev/kmsg cannot be read here"
command -v python3 >/dev/null || skip "python3 missing"
command -v unshare >/dev/null || skip "unshare missing (util-linux)"

cat >"$SCRATCH/run.sh" <<EOT
mount --make-rprivate / || exit 99
if [ -e /dev/log ]; then mount --bind /dev/null /dev/log || exit 99; fi
"$STORAGED" -c "$CONF" -f "$FSTAB" --state-dir "$STATE" --daemon start || exit
pid=\$(cat "$STATE/storaged.pid") || exit
# the resident's first message, then a shutdown's SIGTERM
for _ in \$(seq $((100 * TIME_SCALE))); do
	dmesg | grep -q "storaged\\[\$pid\\]: resident: handling devices" && break
	sleep 0.1
done
kill -TERM "\$pid"
for _ in \$(seq 100); do kill -0 "\$pid" 2>/dev/null || exit 0; sleep 0.1; done
echo "the resident \$pid did not leave at SIGTERM" >&2
kill -KILL "\$pid"
exit 1
EOT

OUT=$(kmsg_run unshare -m bash "$SCRATCH/run.sh")
[ "$(printf "%s\n" "$OUT" | head -1)" = "exit 99" ] && fail "unshare -m: cannot hide /dev/log in a private mount namespace"
printf '%s\n' "$OUT" | sed 's/^/  | /'
expect_out "^exit 0$"
expect_no_out "^stderr:"
expect_out "^kmsg: 6;storaged\[[0-9]*\]: resident: handling devices as they appear"
expect_out "^kmsg: 6;storaged\[[0-9]*\]: Terminated: leaving"
echo "PASS: $TEST_NAME: a resident with nothing on /dev/log logs to the kernel's log"
exit 0

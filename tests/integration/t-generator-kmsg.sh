#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The generator logs where systemd.generator(7) says a generator must: the
# kernel log (/dev/kmsg), because at boot its stderr goes nowhere; and a bad
# area never fails the boot: the generator exits 0, the area is named in
# the kernel log, the good areas still get their drop-ins.  Read back from
# /dev/kmsg from the sequence number it had before the run (dmesg's way);
# without /dev/kmsg to write to (here: run as an unprivileged user) the
# messages go to stderr.
. "$(dirname "$0")/lib.sh"
setup
[ -r /dev/kmsg ] || skip "/dev/kmsg cannot be read here"
command -v python3 >/dev/null || skip "python3 missing"

mkdir -p "$SCRATCH/good" "$SCRATCH/out"
cat >"$CONF" <<EOT
[area good]
path = $SCRATCH/good
backend = tmpfs
size = 16M

[area bad]
path = $SCRATCH/bad
backend = tmpfs
size = lots
EOT

OUT=$(kmsg_run "$STORAGED" -q -c "$CONF" --state-dir "$STATE" systemd-generator "$SCRATCH/out" "$SCRATCH/out" "$SCRATCH/out")
printf '%s\n' "$OUT" | sed 's/^/  | /'
expect_out "^exit 0$"
expect_out "^kmsg: 3;storaged-generator\[[0-9]*\]: $CONF:9: .*lots"
expect_no_out "^stderr:"
unit=$(systemd-escape --path --suffix=mount "$SCRATCH/good" 2>/dev/null) ||
	unit=$(printf '%s' "${SCRATCH#/}/good" | sed 's|/|-|g').mount
[ -f "$SCRATCH/out/$unit.d/50-storaged.conf" ] || fail "the good area has no drop-in ($unit) beside the bad one"

note "a drop-in that cannot be written: the area named, exit 0"
chmod 0755 "$SCRATCH" # the unprivileged user reads the configuration
chmod 0555 "$SCRATCH/out"
rm -rf "$SCRATCH/out/"*
OUT=$(kmsg_run setpriv --reuid=65534 --regid=65534 --clear-groups "$STORAGED" -q -c "$CONF" --state-dir "$STATE" systemd-generator "$SCRATCH/out" "$SCRATCH/out" "$SCRATCH/out")
printf '%s\n' "$OUT" | sed 's/^/  | /'
expect_out "^exit 0$"
note "no /dev/kmsg to write to (an unprivileged user): stderr"
expect_out "^stderr: storaged: error: area 'good': its mounts are not ordered before storaged's units"
expect_no_out "^kmsg: .*storaged-generator"
echo "PASS: $TEST_NAME"
exit 0

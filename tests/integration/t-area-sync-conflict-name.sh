#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# A sync conflict on an entry whose name holds a newline: the message
# names it whole, the newline written \012 as every log line writes a
# control character (log.c, as mountinfo does), on one line, and status
# shows the same name.  The message used to end at the newline: the
# helper's one-line report was cut there.
. "$(dirname "$0")/lib-area.sh"

P=$SCRATCH/dir
printf '[area nl]\npath = %s\nbackend = tmpfs\nsize = 16M\npersist = yes\n' "$P" | write_conf
NAME=$(printf 'a\nb')
mkdir -p "$P" "$SCRATCH/alt"
echo old >"$P/$NAME"
expect_rc 0 start
sleep 0.1 # past the area's baseline (a clock tick: 1-10 ms)
echo area >"$P/$NAME"
mount --bind "$SCRATCH" "$SCRATCH/alt" || fail "cannot bind $SCRATCH"
echo dir >"$SCRATCH/alt/dir/$NAME"
umount "$SCRATCH/alt"
expect_rc 1 stop
grep -F "area 'nl': synced back" "$OUT" | grep -qF 'a\012b.storaged-area' ||
	{ cat "$OUT"; fail "the conflict message does not name 'a\\012b' and its copy on its line"; }
grep -F "area 'nl': synced back" "$OUT" | grep -qF "compare the two and keep what you need" ||
	{ cat "$OUT"; fail "the conflict message was cut"; }
[ "$(cat "$P/$NAME.storaged-area")" = area ] || fail "the area's version was not kept beside"
expect_rc 1 status
grep -F 'a\012b.storaged-area' "$OUT" >/dev/null || { cat "$OUT"; fail "status does not show the name escaped"; }
expect_rc 0 stop
pass "a newline in a conflicting name: one whole message, the name escaped as \\012"

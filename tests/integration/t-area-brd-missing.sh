#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# backend = brd without the brd driver: a clear error saying how to enable
# it, exit 1, nothing covered.
. "$(dirname "$0")/lib-area.sh"

[ -e /sys/module/brd ] && skip "the brd driver is present here: this test covers its absence"
P=$SCRATCH/ram
mkdir -p "$P"
echo data >"$P/f"
write_conf <<EOT
[area ramdisk]
path = $P
backend = brd
size = 32M
EOT
expect_rc 1 start
grep -q "brd driver not present: load it with 'modprobe brd rd_nr=1 rd_size=32768'" "$OUT" || { cat "$OUT"; fail "error does not say how to enable brd"; }
grep -q "backend = tmpfs" "$OUT" || { cat "$OUT"; fail "error does not offer another backend"; }
is_mountpoint "$P" && fail "directory covered"
[ -z "$(scratch_mounts)" ] || fail "mounts left: $(scratch_mounts)"
pass "$(grep -o "brd driver.*" "$OUT" | head -1)"

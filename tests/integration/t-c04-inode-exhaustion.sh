#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# C04: a tmpfs out of inodes long before bytes.  3000 small files do not fit
# into inodes = 2000: the pre-flight check says so (inodes, not bytes) before
# anything covers the directory; inodes = 10k and inodes = auto work.
. "$(dirname "$0")/lib-area.sh"

P=$SCRATCH/persist
mkdir -p "$P"
for i in $(seq 1 3000); do echo "$i" >"$P/f$i"; done
sum_before=$(tree_stat "$P" | md5sum)

conf() {
	write_conf <<EOT
[area c04]
path = $P
backend = tmpfs
size = 64M
inodes = $1
EOT
}

conf 2000
expect_rc 1 start
grep -q "seed needs 3001 inodes but the area has 2000" "$OUT" || { cat "$OUT"; fail "message does not name the inode shortage"; }
grep -q "1001 short" "$OUT" || { cat "$OUT"; fail "message does not say by how much"; }
is_mountpoint "$P" && fail "directory covered after a failed pre-flight"
[ -z "$(scratch_mounts)" ] || fail "mounts left: $(scratch_mounts)"
[ ! -e "$RUN/areas/c04" ] || fail "state left behind"
[ "$(tree_stat "$P" | md5sum)" = "$sum_before" ] || fail "directory changed"
pass "inodes = 2000 refused before mounting: $(grep -o 'seed needs.*' "$OUT")"

conf 10k
expect_rc 0 start
is_mountpoint "$P" || fail "inodes = 10k: not covered"
[ "$(df --output=itotal "$P" | tail -1 | tr -d ' ')" = 10240 ] || fail "df -i does not show 10240"
[ "$(ls "$P" | wc -l)" = 3000 ] || fail "not all files seeded"
expect_rc 0 stop
pass "inodes = 10k: df -i shows 10240"

conf auto
expect_rc 0 start
itotal=$(df --output=itotal "$P" | tail -1 | tr -d ' ')
[ "$itotal" -ge 6002 ] || fail "inodes = auto gave only $itotal"
expect_rc 0 status
expect_rc 0 stop
pass "inodes = auto: $itotal inodes"

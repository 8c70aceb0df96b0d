#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# A sync back killed with SIGKILL at several points leaves every file either
# its complete old or its complete new version (never truncated, never
# missing unless deleted in the area); the next sync recovers and completes.
. "$(dirname "$0")/lib-area.sh"

# The trees on an ext4 of the test's own (a loop device, detached as the
# cleanup unmounts it): the sync's commit point, syncfs(2), then waits for
# this filesystem alone, not for all that the rest of the machine wrote to
# the disk under /tmp (which made most of the test's time, and its spread).
D=$SCRATCH
if command -v mkfs.ext4 >/dev/null && truncate -s 256M "$SCRATCH/disk.img" &&
	mkfs.ext4 -q -F "$SCRATCH/disk.img" && mkdir -p "$SCRATCH/disk" &&
	mount -o loop "$SCRATCH/disk.img" "$SCRATCH/disk"; then
	D=$SCRATCH/disk
else
	echo "# no loop-mounted ext4 here: the trees stay in $SCRATCH"
fi
P=$D/tree
REF=$D/ref
DIRS=$(seq -w 1 40)
FILES=$(seq 1 30)
pad_old=$(printf 'o%.0s' $(seq 1 3000))
pad_new=$(printf 'n%.0s' $(seq 1 7000))

# write_version ROOT old|new: every file self-describing, so a torn one shows
write_version() {
	local d i pad=$pad_old
	[ "$2" = new ] && pad=$pad_new
	for d in $DIRS; do
		mkdir -p "$1/$d"
		for i in $FILES; do
			[ "$2" = new ] && [ "$i" = 7 ] && continue # deleted in the area
			printf '%s:%s/%s:%sEND\n' "$2" "$d" "$i" "$pad" >"$1/$d/$i"
		done
	done
	head -c $((4 * 1024 * 1024)) /dev/zero | tr '\0' "${2:0:1}" >"$1/01/big"
}

write_version "$REF/old" old
write_version "$REF/new" new
(cd "$REF/old" && md5sum */*) >"$SCRATCH/sum.old"
(cd "$REF/new" && md5sum */*) >"$SCRATCH/sum.new"
cp -a "$REF/old" "$P"

write_conf <<EOT
[area sk]
path = $P
backend = tmpfs
size = 256M
persist = yes
EOT
expect_rc 0 start
LOWER=$RUN/areas/sk/lower
rm -rf "$P"/* && cp -a "$REF/new/." "$P/"

# every file of the lower directory is its complete old or new version;
# none missing except the ones the area deleted; prints how many are new
check_lower() {
	(cd "$LOWER" && md5sum */*) | awk -v old="$SCRATCH/sum.old" -v new="$SCRATCH/sum.new" '
		BEGIN { while ((getline l < old) > 0) { split(l, f, "  "); o[f[2]] = f[1] }
			while ((getline l < new) > 0) { split(l, f, "  "); n[f[2]] = f[1] } }
		{ split($0, f, "  "); seen[f[2]] = 1
		  if (f[1] == n[f[2]]) nn++; else if (f[1] != o[f[2]]) { print "torn: " f[2]; bad = 1 } }
		END { for (k in o) if (!(k in seen) && (k in n)) { print "missing: " k; bad = 1 }
		      print nn + 0 " new"; exit bad }'
}

# The lower directory is storaged's own while the area covers it: rewriting
# it here, behind storaged's back, would read to the sync's three-way rule
# as changes made in the uncovered directory (which win over unchanged area
# entries).  Dropping the directory's baseline (the area root's
# trusted.storaged.lower-synced) takes the directory as unchanged, and the
# area's baseline (trusted.storaged.synced, "SEC.NSEC") moved past the
# rewrite keeps it out of the span between the two baselines: a sync cut
# after its intent sets the directory's baseline when the next one
# completes it, and a rewrite inside that span is the directory's change
# made during the cut sync (copy_sync_kept.c, in_last_sync()).  So the
# kills below test what they are for: every file old or new, and recovery.
reset_lower() {
	rm -rf "${LOWER:?}"/* && cp -a "$REF/old/." "$LOWER/" && sync -f "$LOWER"
	setfattr -x trusted.storaged.lower-synced "$RUN/areas/sk/area" 2>/dev/null
	setfattr -n trusted.storaged.synced -v "$(date +%s.%N)" "$RUN/areas/sk/area"
}

# how long one full sync takes here, to spread the kills over it
t0=$(date +%s%N)
expect_rc 0 sync sk
dur=$((($(date +%s%N) - t0) / 1000000))
check_lower >/dev/null || fail "a clean sync left old or torn files"
echo "a full sync takes ${dur}ms"

for pct in 5 25 50 75 90 100; do
	reset_lower
	ms=$((dur * pct / 100))
	"$STORAGED" -c "$CONF" -f "$FSTAB" --state-dir "$RUN" sync sk >/dev/null 2>&1 &
	pid=$!
	sleep "$(printf '%d.%03d' $((ms / 1000)) $((ms % 1000)))"
	kill -9 $pid 2>/dev/null && how=killed || how=finished
	wait $pid 2>/dev/null
	res=$(check_lower) || { echo "$res"; fail "after SIGKILL at ${ms}ms: a file is neither old nor new"; }
	pass "SIGKILL at ${ms}ms ($how): every file complete, $(echo "$res" | tail -1)"
	expect_rc 0 sync sk
	res=$(check_lower) || { echo "$res"; fail "the sync after the kill at ${ms}ms"; }
	[ "$(echo "$res" | tail -1)" = "$(wc -l <"$SCRATCH/sum.new") new" ] || fail "recovery sync incomplete: $res"
	left=$(ls -A "$LOWER" | grep -E '^\.storaged-sync\.[0-9a-f]{32}$')
	[ -z "$left" ] || fail "leftover working directory after recovery: $left"
done
expect_rc 0 stop
(cd "$P" && md5sum */*) | diff -q - "$SCRATCH/sum.new" >/dev/null || fail "final stop did not sync everything"
pass "final stop synced everything"

#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# C32: a sync cut at any instant ends as an uninterrupted one would.  The
# sync back of a persist area is killed (SIGKILL, by strace's fault
# injection: the process dies as it enters the system call, before the
# call is made) at each system call of its commit in turn: every rename
# into place, every change of a directory's metadata, each syncfs(2),
# each write of the sync's own records (xattrs on the area's root), and
# the making and removal of its working directory.  After
# each kill the next `sync` must reach the uninterrupted result: exit 0,
# nothing reported as changed on both sides, nothing put beside, the
# directory equal to the area; and `stop` exits 0 with the same tree.
. "$(dirname "$0")/lib-area.sh"
. "$(dirname "$0")/lib-live.sh"
need_fault_injection

# the directory on an ext4 of its own (a loop device, gone with the
# cleanup's unmount): syncfs(2) waits for it alone
D=$SCRATCH
if command -v mkfs.ext4 >/dev/null && truncate -s 128M "$SCRATCH/disk.img" &&
	mkfs.ext4 -q -F "$SCRATCH/disk.img" && mkdir -p "$SCRATCH/disk" &&
	mount -o loop "$SCRATCH/disk.img" "$SCRATCH/disk"; then
	D=$SCRATCH/disk
fi
P=$D/tree
mkdir -p "$P/a" "$P/b/c" "$P/r0"
for i in $(seq 1 8); do
	echo "old a$i" >"$P/a/f$i"
	echo "old b$i" >"$P/b/c/g$i"
done
echo top >"$P/top"
write_conf <<EOT
[storaged]
sync-interval = 0

[area k]
path = $P
backend = tmpfs
size = 32M
persist = yes
EOT
LOWER=$RUN/areas/k/lower
expect_rc 0 start

# change ROUND: a change of every kind in the area
change() {
	local r=$1 i
	for i in 1 2 3 4; do echo "round $r a$i" >"$P/a/f$i"; done
	for i in 5 6; do echo "round $r b$i" >"$P/b/c/g$i"; done
	rm -f "$P/a/f$((7 + r % 2))"
	echo "round $r" >"$P/a/f$((7 + (r + 1) % 2))"
	mkdir -p "$P/new$r/deep" && echo "new $r" >"$P/new$r/deep/file"
	rm -rf "$P/new$((r - 1))"
	chmod $((r % 2 ? 750 : 755)) "$P/b"
	echo "round $r" >"$P/top"
	# a directory of the root, renamed and written into: the sync's
	# own working directory in the lower root must not make it look
	# deleted there (a false conflict)
	mv "$P/r$((r - 1))" "$P/r$r" && echo "round $r" >"$P/r$r/f$r"
}

# same_trees: the directory (through the area's private view) is the area
same_trees() {
	diff <(tree_stat "$P" | grep -v ' s ') <(tree_stat "$LOWER" | grep -v ' s ') >"$SCRATCH/diff" ||
		{ cat "$SCRATCH/diff"; fail "$1: the directory is not the area"; }
	diff -r "$P" "$LOWER" >/dev/null || fail "$1: the directory's content is not the area's"
}

round=0
kills=0
for sc in renameat2 fchown fchmod utimensat fsetxattr syncfs mkdirat unlinkat; do
	for when in $(seq 1 "${C36_KILL_STRIDE:-1}" 40); do # C36_KILL_STRIDE: every Nth (tests/guest/guest-suite)
		round=$((round + 1))
		echo "# kill at $sc #$when"
		change $round
		strace -f -qq -o /dev/null -e trace=$sc -e inject=$sc:signal=KILL:when=$when \
			"$STORAGED" -c "$CONF" -f "$FSTAB" --state-dir "$RUN" sync k >"$OUT" 2>&1
		rc=$?
		if [ $rc = 0 ]; then
			# this call was not made that often: the sync went through
			same_trees "after an uncut sync ($sc #$when)"
			break
		fi
		kills=$((kills + 1))
		expect_rc 0 sync k
		grep -q "changed both\|beside it" "$OUT" &&
			{ cat "$OUT"; fail "the sync after a kill at $sc #$when reports its own work as a conflict"; }
		find "$LOWER" -name '*.storaged-area*' | grep -q . &&
			fail "a kill at $sc #$when put something beside: $(find "$LOWER" -name '*.storaged-area*')"
		same_trees "after a kill at $sc #$when and one more sync"
	done
done
[ $kills -ge 10 ] || fail "only $kills kills: the commit was not cut where it should be"
pass "killed at each of $kills system calls of a commit, the next sync reached the uninterrupted result"

change $((round + 1))
strace -f -qq -o /dev/null -e trace=renameat2 -e inject=renameat2:signal=KILL:when=3 \
	"$STORAGED" -c "$CONF" -f "$FSTAB" --state-dir "$RUN" sync k >"$OUT" 2>&1
expect_rc 0 stop
grep -q "changed both\|beside it" "$OUT" && { cat "$OUT"; fail "stop after a killed sync reports a conflict"; }
find "$P" -name '*.storaged-area*' | grep -q . && fail "stop after a killed sync put something beside"
[ "$(cat "$P/top")" = "round $((round + 1))" ] || fail "stop after a killed sync lost the change"
pass "stop after a sync killed in its renames: exit 0, nothing beside, the change on the disk"

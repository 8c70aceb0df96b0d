# SPDX-License-Identifier: GPL-2.0-or-later
# Shared by the RAM area tests (t-area-*.sh, t-c04/c05/c08-*.sh); sourced.
# Each test gets its own scratch directory, config, empty fstab and state
# directory; cleanup unmounts everything below the scratch directory and
# releases only zram devices this test (or storaged for it) created.
set -u

skip() { echo "SKIP: $*"; exit 77; }
fail() { echo "FAIL: $*"; exit 1; }
pass() { echo "ok: $*"; }
. "$(dirname "${BASH_SOURCE[0]}")/lib-hold.sh"

[ "$(id -u)" = 0 ] || skip "must run as root"
[ -n "${STORAGED:-}" ] && [ -x "$STORAGED" ] || skip "STORAGED is not set to the storaged binary"
# its copy helper: beside it in a build tree, STORAGED_COPY when installed
STORAGED_COPY=${STORAGED_COPY:-$(dirname "$STORAGED")/storaged-copy}

SCRATCH=$(mktemp -d /tmp/storaged-area.XXXXXX) || exit 1
RUN=$SCRATCH/run
CONF=$SCRATCH/storaged.conf
FSTAB=$SCRATCH/fstab
OUT=$SCRATCH/out
: >"$FSTAB"
ZRAM_MINE=""

scratch_mounts() {
	awk -v p="$SCRATCH/" 'index($5, p) == 1 { print $5 }' /proc/self/mountinfo | sort -r
}

zram_release() {
	echo 1 >"/sys/block/zram$1/reset" 2>/dev/null
	echo "$1" >/sys/class/zram-control/hot_remove 2>/dev/null
}

cleanup() {
	local i m f id
	for i in 1 2 3 4 5; do
		[ -z "$(scratch_mounts)" ] && break
		for m in $(scratch_mounts); do
			umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null
		done
	done
	for f in "$RUN"/areas/*/state; do
		[ -f "$f" ] || continue
		grep -q '^backend = zram' "$f" || continue
		id=$(sed -n 's/^resource = //p' "$f")
		# a record of an older storaged
		[ -n "$id" ] || ! grep -q '^zram_created = yes' "$f" ||
			id=$(sed -n 's/^zram_id = //p' "$f")
		[ -n "$id" ] && [ "$id" -ge 0 ] && zram_release "$id"
	done
	for id in $ZRAM_MINE; do zram_release "$id"; done
	rm -rf "$SCRATCH"
}
trap cleanup EXIT

# write_conf: config text on stdin, root-owned 0644
write_conf() {
	cat >"$CONF"
	chown root:root "$CONF"
	chmod 0644 "$CONF"
}

# persist_conf PATH [SEED]: one area, p: PATH on a 64 MiB tmpfs,
# persist = yes, seed = SEED when given (overlay)
persist_conf() {
	write_conf <<EOT
[area p]
path = $1
backend = tmpfs
size = 64M
persist = yes
${2:+seed = $2}
EOT
}

# quiet_persist_conf PATH: one area, p: PATH on a 16 MiB tmpfs, persist
# = yes, no timed sync (each sync is the test's); its private view of
# the directory, another path to it, in $LOWER
quiet_persist_conf() {
	write_conf <<EOT
[storaged]
sync-interval = 0

[area p]
path = $1
backend = tmpfs
size = 16M
persist = yes
EOT
	LOWER=$RUN/areas/p/lower
}

# sd ARGS...: run storaged on this test's files; output in $OUT
sd() {
	"$STORAGED" -c "$CONF" -f "$FSTAB" --state-dir "$RUN" "$@" >"$OUT" 2>&1
}

# sd_self: the command storaged's advice tells the user to run when sd ran
# it ("storaged" and sd's -c, -f, --state-dir; these paths need no quoting)
sd_self() {
	printf 'storaged -c %s -f %s --state-dir %s' "$CONF" "$FSTAB" "$RUN"
}

# expect_rc WANT ARGS...
expect_rc() {
	local want=$1 rc
	shift
	sd "$@"
	rc=$?
	[ "$rc" = "$want" ] || { cat "$OUT"; fail "storaged $* exited $rc, expected $want"; }
}

is_mountpoint() { mountpoint -q "$1"; }

need_zram() {
	[ -w /sys/class/zram-control/hot_add ] || skip "no zram-control in sysfs"
	command -v mkfs.ext4 >/dev/null || skip "mkfs.ext4 missing"
}

# listing of a tree: path type mode uid gid size mtime nlink target (root
# excluded; directory sizes are the filesystem's own business)
tree_stat() {
	(cd "$1" && find . -mindepth 1 -printf '%p %y %m %U %G %s %T@ %n %l\n' |
		awk '$2 == "d" { $6 = "-" } { print }' | sort)
}

set_xattr() {
	if command -v setfattr >/dev/null; then
		setfattr -n "$2" -v "$3" "$1"
	elif command -v python3 >/dev/null; then
		python3 -c 'import os,sys; os.setxattr(sys.argv[1], sys.argv[2], sys.argv[3].encode(), follow_symlinks=False)' "$1" "$2" "$3"
	else
		return 1
	fi
}

get_xattr() {
	if command -v getfattr >/dev/null; then
		getfattr --only-values -n "$2" "$1" 2>/dev/null
	else
		python3 -c 'import os,sys; sys.stdout.write(os.getxattr(sys.argv[1], sys.argv[2], follow_symlinks=False).decode())' "$1" "$2" 2>/dev/null
	fi
}

# tmpfs_user_xattrs: whether this kernel's tmpfs takes user.* xattrs
# (Linux 6.6 and later: mm/shmem.c, shmem_xattr_handler_set; before, only
# trusted.* and security.*)
tmpfs_user_xattrs() {
	local d=$SCRATCH/xattr-probe rc
	mkdir -p "$d"
	mount -t tmpfs -o size=1M storaged-probe "$d" || return 1
	touch "$d/f"
	set_xattr "$d/f" user.storaged probe 2>/dev/null
	rc=$?
	umount "$d"
	rmdir "$d"
	return $rc
}

# make_tree DIR: the kinds of files a seed must keep
make_tree() {
	local d=$1
	mkdir -p "$d/sub/deeper" "$d/empty" "$d/other"
	echo "hello" >"$d/file"
	printf 'x%.0s' $(seq 1 5000) >"$d/sub/deeper/text"
	ln "$d/file" "$d/sub/hardlink"
	ln -s file "$d/symlink"
	ln -s /nonexistent/target "$d/sub/dangling"
	cp /bin/true "$d/setuid" && chmod 4755 "$d/setuid"
	chmod 2750 "$d/other"
	echo owned >"$d/other/owned" && chown 1234:4321 "$d/other/owned" "$d/other"
	truncate -s 20M "$d/sparse" && echo tail >>"$d/sparse"
	mknod "$d/chardev" c 1 3
	mkfifo "$d/fifo"
	touch -d '2001-02-03 04:05:06.789' "$d/file" "$d/sub"
	chmod 0751 "$d"
	chown 1234:4321 "$d"
}

# need_overlay: skips where the kernel has no overlay filesystem
need_overlay() {
	grep -qw overlay /proc/filesystems || modprobe -q overlay 2>/dev/null
	grep -qw overlay /proc/filesystems || skip "this kernel has no overlay filesystem"
}

# mmap_writer PATH: a program that maps PATH (4 KiB at least) shared, as
# sqlite in WAL mode, LMDB or an editor with mmap do, writes "first"
# through the mapping and waits; mmap_second_write then has it write
# "second" through the same mapping (on tmpfs the page, dirty and
# writable already, takes no fault: no time of the file moves), close and
# exit.  Needs python3.
mmap_writer() {
	command -v python3 >/dev/null || skip "no python3 (the mmap writer)"
	rm -f "$SCRATCH/ready" "$SCRATCH/go"
	python3 - "$1" "$SCRATCH/ready" "$SCRATCH/go" <<'PY' &
import mmap, os, sys, time
path, ready, go = sys.argv[1:4]
fd = os.open(path, os.O_RDWR)
m = mmap.mmap(fd, 4096)
m[0:5] = b"first"
open(ready, "w").close()
while not os.path.exists(go):
    time.sleep(0.01)
m[0:6] = b"second"
m.flush()
m.close()
os.close(fd)
PY
	MMAP_WRITER=$!
	for _ in $(seq 1 500); do [ -e "$SCRATCH/ready" ] && break; sleep 0.01; done
	[ -e "$SCRATCH/ready" ] || { kill "$MMAP_WRITER"; fail "the mmap writer did not start"; }
}

mmap_second_write() {
	sleep 0.05
	touch "$SCRATCH/go"
	wait "$MMAP_WRITER" || fail "the mmap writer failed"
}

# shellcheck shell=bash
# Shared helpers for storaged's integration tests.  Each test sources this
# file, calls `setup`, and gets its own scratch directory, loop devices,
# config, fstab and state directory.  The EXIT trap undoes everything the
# test made, even when it fails: mounts below the scratch directory, btrfs
# registrations and loop devices it attached, then the directory itself.
# Nothing outside the scratch directory and the test's own devices is touched.

set -u
. "$(dirname "${BASH_SOURCE[0]}")/lib-hold.sh"

TEST_NAME=$(basename "$0" .sh)
# The binary under test: the build tree's, or STORAGED (an installed
# /usr/sbin/storaged, as in the qemu guest of tests/guest/), with its copy
# helper beside it in a build tree, STORAGED_COPY when installed
# (LIBEXECDIR/storaged/storaged-copy).
STORAGED=${STORAGED:-$(cd "$(dirname "$0")/../.." && pwd)/build/storaged}
STORAGED_COPY=${STORAGED_COPY:-$(dirname "$STORAGED")/storaged-copy}
SCRATCH=
# How many times slower than natively this machine runs storaged: 3 in the
# qemu guest of tests/guest/ (TCG emulation).  Limits that tell "did not
# wait" from "waited device-timeout" (a second against 10 s) are scaled
# by it; they stay well below the timeouts they guard.
TIME_SCALE=${STORAGED_TEST_TIME_SCALE:-1}

skip() {
	echo "SKIP: $TEST_NAME: $*"
	exit 77
}

# In a subshell (A=$(mkloop ...)) exit alone would end only the subshell
# and the test would go on with an empty name: the test's own shell is
# told too (setup's USR1 trap), and ends failed.
fail() {
	echo "FAIL: $TEST_NAME: $*" >&2
	[ "$BASH_SUBSHELL" -gt 0 ] && kill -USR1 $$ 2>/dev/null
	exit 1
}

note() {
	echo "# $*"
}

cleanup() {
	local rc=$? m d
	set +e
	# A test's own cleanup first (background processes it started).
	[ -n "${CLEANUP_HOOK:-}" ] && "$CLEANUP_HOOK"
	if [ -n "$SCRATCH" ] && [ -d "$SCRATCH" ]; then
		# Deepest mount points first; lazy as a last resort so that a
		# busy mount cannot make the next run fail.
		for _ in 1 2 3; do
			findmnt -rn -o TARGET | awk -v s="$SCRATCH" 'index($0, s) == 1' | sort -r |
				while read -r m; do
					m=$(printf '%b' "$m")
					umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null
				done
		done
	fi
	# The loop devices this test attached, recorded by mkloop (which runs
	# in a subshell, so a file and not a variable carries the list).
	if [ -n "$SCRATCH" ] && [ -f "$SCRATCH/loops" ]; then
		while read -r d; do
			btrfs device scan --forget "$d" >/dev/null 2>&1
			losetup -d "$d" 2>/dev/null
		done <"$SCRATCH/loops"
	fi
	[ -n "$SCRATCH" ] && rm -rf "$SCRATCH"
	exit "$rc"
}

setup() {
	[ "$(id -u)" = 0 ] || skip "needs root (loop devices, mount)"
	[ -e /dev/loop-control ] || skip "no /dev/loop-control: this machine has no loop devices"
	[ -x "$STORAGED" ] || fail "storaged binary not found at '$STORAGED' (build first)"
	SCRATCH=$(mktemp -d "/tmp/storaged-$TEST_NAME.XXXXXX") || fail "mktemp"
	trap cleanup EXIT
	trap 'exit 130' INT TERM
	trap 'exit 1' USR1
	mkdir -p "$SCRATCH/img"
	CONF=$SCRATCH/storaged.conf
	FSTAB=$SCRATCH/fstab
	STATE=$SCRATCH/run
	printf '[storaged]\n' >"$CONF"
	: >"$FSTAB"
	chmod 0644 "$CONF" "$FSTAB"
}

# mkloop NAME SIZE: a sparse image attached to a new loop device; prints it.
mkloop() {
	local img=$SCRATCH/img/$1.img dev
	truncate -s "$2" "$img" || fail "truncate $img"
	dev=$(losetup -f --show "$img") || fail "losetup $img"
	echo "$dev" >>"$SCRATCH/loops"
	echo "$dev"
}

# attach IMG: attach an existing image of this test; prints the device.
attach() {
	local dev
	dev=$(losetup -f --show "$1") || fail "losetup $1"
	echo "$dev" >>"$SCRATCH/loops"
	echo "$dev"
}

# forget DEV...: make the kernel forget btrfs members (they were registered
# by mkfs.btrfs, as udev would do on a real machine).
forget() {
	local d
	for d in "$@"; do
		btrfs device scan --forget "$d" >/dev/null 2>&1 || true
	done
}

# detach DEV: detach one of this test's loop devices early.  It leaves the
# list, so that cleanup cannot detach the number after another test took it.
detach() {
	forget "$1"
	losetup -d "$1" || fail "losetup -d $1"
	grep -vxF -- "$1" "$SCRATCH/loops" >"$SCRATCH/loops.new"
	mv "$SCRATCH/loops.new" "$SCRATCH/loops"
}

# mkraid1 LABEL SIZE: a two-device btrfs RAID1 (data and metadata) labelled
# LABEL (none when empty) on two new loop devices of SIZE, images a and b.
# Sets A and B (devids 1 and 2) and FSID (its UUID) for the caller, and
# leaves neither member registered: the kernel forgets both, as a test wants
# that starts from a boot where udev has not scanned them yet.  A test that
# wants another profile, a third device or the members registered does its
# own mkfs.btrfs or scan.
mkraid1() {
	A=$(mkloop a "$2") || exit 1
	B=$(mkloop b "$2") || exit 1
	mkfs.btrfs -q -f -L "$1" -d raid1 -m raid1 "$A" "$B" >/dev/null || fail "mkfs.btrfs"
	FSID=$(blkid -o value -s UUID "$A")
	[ -n "$FSID" ] || fail "no btrfs UUID on $A"
	forget "$A" "$B"
}

# notify_listen SOCKET NOTES: a service manager's notification socket
# (sd_notify(3)) bound at SOCKET by a python3 listener in the background
# ($LISTENER; ended by the test's CLEANUP_HOOK): each datagram is appended
# to NOTES as one line, "SECONDS MESSAGE" (seconds since the listener
# started, the message's newlines as '|'); it exits 30 s after the last.
notify_listen() {
	local n=50
	python3 - "$(date +%s.%N)" "$1" "$2" <<'EOT' &
import socket, sys, time
t0 = float(sys.argv[1])
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(sys.argv[2])
s.settimeout(30)
with open(sys.argv[3], "a", buffering=1) as out:
    while True:
        try:
            msg = s.recv(4096).decode(errors="replace")
        except socket.timeout:
            break
        out.write("%.3f %s\n" % (time.time() - t0, msg.replace("\n", "|")))
EOT
	LISTENER=$!
	while [ ! -S "$1" ] && [ "$n" -gt 0 ]; do
		sleep 0.1
		n=$((n - 1))
	done
	[ -S "$1" ] || fail "the notification listener did not start"
}

sd() {
	"$STORAGED" -c "$CONF" -f "$FSTAB" --state-dir "$STATE" "$@"
}

# sd_self: the command storaged's advice tells the user to run when sd ran
# it ("storaged" and sd's -c, -f, --state-dir); for paths that need no
# quoting for the shell, as setup's.
sd_self() {
	printf 'storaged -c %s -f %s --state-dir %s' "$CONF" "$FSTAB" "$STATE"
}

# run_sd EXPECTED_EXIT ARGS...: runs storaged, keeps its output in $OUT.
run_sd() {
	local want=$1 rc
	shift
	OUT=$(sd "$@" 2>&1)
	rc=$?
	printf '%s\n' "$OUT" | sed 's/^/  | /'
	[ "$rc" = "$want" ] || fail "storaged $* exited $rc, expected $want"
}

# in_state_dir DIR EXPECTED ARGS...: run_sd with DIR as the state directory
in_state_dir() {
	local dir=$1 want=$2 rc
	shift 2
	OUT=$("$STORAGED" -c "$CONF" -f "$FSTAB" --state-dir "$dir" "$@" 2>&1)
	rc=$?
	printf '%s\n' "$OUT" | sed 's/^/  | /'
	[ "$rc" = "$want" ] || fail "storaged --state-dir $dir $* exited $rc, expected $want"
}

# run_scan EXPECTED [ARGS...]: storaged scan, which exits 1 exactly when a
# btrfs filesystem it shows is incomplete, stale or ambiguous: EXPECTED for
# the test's own ($FSID, or every filesystem when unset); a filesystem of
# the machine's own with a problem also makes it 1.
run_scan() {
	local want=$1 rc others
	shift
	OUT=$(sd scan "$@" 2>&1)
	rc=$?
	printf '%s\n' "$OUT" | sed 's/^/  | /'
	others=$(sd scan --json 2>/dev/null | python3 -c '
import json, sys
own = sys.argv[1]
print(sum(1 for f in json.load(sys.stdin)["filesystems"] if f["problems"] and f["fsid"] != own))' "${FSID:-}")
	[ "${others:-0}" != 0 ] && [ -n "${FSID:-}" ] && want=1
	[ "$rc" = "$want" ] || fail "storaged scan $* exited $rc, expected $want"
}

expect_out() {
	printf '%s\n' "$OUT" | grep -q -- "$1" || fail "output lacks '$1'"
}

expect_no_out() {
	if printf '%s\n' "$OUT" | grep -q -- "$1"; then
		fail "output has '$1'"
	fi
}

is_mountpoint() {
	findmnt -rn --mountpoint "$1" >/dev/null
}

mount_count() {
	findmnt -rn --mountpoint "$1" | wc -l
}

# The mounts below this test's scratch directory (the only ones it or
# storaged may change): other work on the machine does not disturb it.
mount_snapshot() {
	findmnt -rn -o ID,TARGET,SOURCE,FSTYPE,OPTIONS | awk -v s="$SCRATCH" 'index($2, s) == 1'
}

# need_private_helpers: mount helpers (/sbin/mount.TYPE) written to
# $SCRATCH/upper are seen only inside in_helper_ns, through an overlay on
# the helper directory in a private mount namespace: the host's /sbin is
# never touched, and every mount made there vanishes with the namespace.
need_private_helpers() {
	command -v unshare >/dev/null || skip "unshare missing (util-linux)"
	# a module on Debian's kernel, listed once loaded (a mount would load it)
	grep -qw overlay /proc/filesystems || modprobe overlay 2>/dev/null
	grep -qw overlay /proc/filesystems || skip "no overlay filesystem in this kernel (needed to add a mount helper privately)"
	SBIN=$(readlink -f /sbin)
	mkdir -p "$SCRATCH/upper" "$SCRATCH/work"
}

# in_helper_ns SCRIPT ARGS...: bash -c SCRIPT ARGS in that namespace;
# exits 77 (skip) when the overlay cannot be mounted there.
in_helper_ns() {
	local script=$1 rc
	shift
	unshare -m --propagation private /bin/bash -c '
		mount -t overlay overlay -o "lowerdir=$1,upperdir=$2/upper,workdir=$2/work" "$1" || exit 99
		shift 2
		s=$1
		shift
		eval "$s"
	' in-helper-ns "$SBIN" "$SCRATCH" "$script" "$@"
	rc=$?
	[ "$rc" = 99 ] && skip "cannot mount an overlay in a private mount namespace here"
	return $rc
}

# kmsg_run CMD...: runs CMD; prints "exit N", its stderr, then each kernel
# log record written meanwhile as "PRIORITY;TEXT"
kmsg_run() {
	python3 - "$@" <<'PY'
import os, subprocess, sys
fd = os.open("/dev/kmsg", os.O_RDONLY | os.O_NONBLOCK)
os.lseek(fd, 0, os.SEEK_END)
p = subprocess.run(sys.argv[1:], stderr=subprocess.PIPE, stdin=subprocess.DEVNULL)
print("exit", p.returncode)
for line in p.stderr.decode(errors="replace").splitlines():
    print("stderr:", line)
while True:
    try:
        rec = os.read(fd, 8192).decode(errors="replace")
    except BlockingIOError:
        break
    except BrokenPipeError:  # overwritten meanwhile: go on from the next
        continue
    head, _, text = rec.partition(";")
    print("kmsg: %d;%s" % (int(head.split(",")[0]) & 7, text.split("\n")[0]))
PY
}

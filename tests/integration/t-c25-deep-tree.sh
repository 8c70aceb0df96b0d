#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# A user's chain of directories 16000 deep in a persist area (C25): the
# start (survey and seed), a sync back after the bottom file changed, and
# stop keep the tree exact: its depth, the file's content, the mode, mtime
# and an xattr of a few levels.  Only correctness is checked here; the
# times are bench/deep-tree.sh's.
. "$(dirname "$0")/lib-area.sh"

command -v python3 >/dev/null || skip "python3 missing (it makes and reads the deep tree)"
DEPTH=${C25_DEPTH:-16000}
# The user's directory on a tmpfs of the test's own: making and removing
# 16000 directories on the disk under /tmp cost most of the test's time
# (a journal, discards), and the depth, not the filesystem, is what is
# tested.  A directory below its root, as on a real disk: the lower bind
# mount's root is then not the filesystem's (the kernel checks each ".."
# there).  The cleanup unmounts it with the test's other mounts.
mkdir -p "$SCRATCH/fs"
mount -t tmpfs -o size=256M,mode=0755 c25-disk "$SCRATCH/fs" || fail "mounting the tmpfs for the tree"
P=$SCRATCH/fs/dir
mkdir -p "$P"

# deep OP DIR [ARGS]: the chain DIR/d/d/... (paths are far past PATH_MAX:
# every call is relative to the parent's descriptor)
deep() {
	python3 - "$@" <<'EOF'
import os, sys
op, top = sys.argv[1], sys.argv[2]
depth = int(os.environ["DEPTH"])
# levels with metadata of their own: mode, mtime (ns), trusted xattr
marks = {1: 0o750, 2: 0o705, depth // 2: 0o711, depth - 1: 0o755}
def mark_of(i):
    return marks[i], 981173106_000000000 + i * 1000, b"level %d" % i
fd = os.open(top, os.O_RDONLY | os.O_DIRECTORY)
if op == "make":
    # only the marked levels stay open (their metadata is set bottom-up,
    # after their children are made): a descriptor per level would take
    # 16000 of a default RLIMIT_NOFILE of 1024
    fds = {}
    for i in range(1, depth + 1):
        os.mkdir("d", 0o755, dir_fd=fd)
        child = os.open("d", os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=fd)
        if i - 1 not in marks:
            os.close(fd)
        fd = child
        if i in marks:
            fds[i] = fd
    with open(os.open("bottom", os.O_WRONLY | os.O_CREAT, 0o640, dir_fd=fd), "w") as f:
        f.write(sys.argv[3])
    for i in sorted(marks, reverse=True):
        mode, ns, xa = mark_of(i)
        os.fchmod(fds[i], mode)
        os.setxattr(fds[i], "trusted.c25", xa)
        os.utime(fds[i], ns=(ns, ns))
    sys.exit(0)
if op == "write":
    for i in range(depth):
        child = os.open("d", os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=fd)
        os.close(fd)
        fd = child
    fl = os.open("bottom", os.O_WRONLY | os.O_TRUNC, dir_fd=fd)
    os.write(fl, sys.argv[3].encode())
    sys.exit(0)
# check: depth, the bottom file, the marked levels' metadata
want, errs, level = sys.argv[3], [], 0
while True:
    names = sorted(os.listdir(fd))
    if level in marks:
        mode, ns, xa = mark_of(level)
        st = os.fstat(fd)
        if st.st_mode & 0o7777 != mode:
            errs.append("level %d: mode %o, expected %o" % (level, st.st_mode & 0o7777, mode))
        if st.st_mtime_ns != ns:
            errs.append("level %d: mtime %d, expected %d" % (level, st.st_mtime_ns, ns))
        try:
            got = os.getxattr(fd, "trusted.c25")
        except OSError as e:
            got = str(e).encode()
        if got != xa:
            errs.append("level %d: xattr %r, expected %r" % (level, got, xa))
    if level == depth:
        if names != ["bottom"]:
            errs.append("level %d holds %s, expected the file alone" % (level, names))
        else:
            st = os.stat("bottom", dir_fd=fd, follow_symlinks=False)
            with open(os.open("bottom", os.O_RDONLY | os.O_NOFOLLOW, dir_fd=fd)) as f:
                got = f.read()
            if got != want or st.st_mode & 0o7777 != 0o640:
                errs.append("bottom file: %r mode %o, expected %r mode 640" % (got, st.st_mode & 0o7777, want))
        break
    if names != ["d"]:
        errs.append("level %d holds %s, expected 'd' alone" % (level, names))
        break
    nfd = os.open("d", os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=fd)
    os.close(fd)
    fd, level = nfd, level + 1
for e in errs[:10]:
    print(e)
sys.exit(1 if errs else 0)
EOF
}
export DEPTH

deep make "$P" first || fail "making the $DEPTH-deep tree"
deep check "$P" first || fail "the tree made is not the one checked (test bug)"

write_conf <<EOT
[area deep]
path = $P
backend = tmpfs
size = 256M
persist = yes
EOT
LOWER=$RUN/areas/deep/lower
expect_rc 0 start
is_mountpoint "$P" || fail "the area is not mounted over $P"
deep check "$P" first || fail "the seed did not copy the $DEPTH-deep tree exactly"
pass "start surveyed and seeded a $DEPTH-deep tree exactly"

deep write "$P" second || fail "changing the bottom file in the area"
expect_rc 0 sync deep
deep check "$LOWER" second || fail "the sync back did not leave the $DEPTH-deep tree exact on disk"
pass "sync carried the bottom file's change down $DEPTH levels, metadata kept"

deep write "$P" third || fail "changing the bottom file in the area"
expect_rc 0 stop
is_mountpoint "$P" && fail "the area is still mounted after stop"
deep check "$P" third || fail "stop did not leave the $DEPTH-deep tree exact on disk"
pass "stop left the $DEPTH-deep tree exact on disk"

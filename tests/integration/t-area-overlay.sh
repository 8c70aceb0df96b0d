#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# seed = overlay (issue 40 item 1): the directory stays as overlayfs's
# lower layer and the area holds the upper one.  Over a 20 000-file
# directory on an ext4 of its own (a loop device), start reads nothing of
# the tree (its open and getdents calls counted against a copying seed's;
# the times are printed) and leaves less than 4 MiB used in the
# area (statvfs of the tmpfs, as `status` shows it); every kind of change
# made in the area (write, append, chmod, delete, rename of a directory,
# delete then re-create, new directories, symlinks) reaches the directory
# by `sync` (while mounted, twice: the second one after changes to what
# the first one synced) and by `stop`, exactly as the area showed it, also
# after the kernel dropped its cached view of the layers; a sync killed at
# several points leaves every file its complete old or new version, and
# the next sync completes it.  `check` refuses a directory that is itself
# on an overlay.  The overlay unmounted by someone else: stop applies the
# upper layer all the same and says what that replaces; the private view
# of the directory unmounted: the first stop keeps the area and names the
# overlay as where its content is, the next one discards it.
. "$(dirname "$0")/lib-area.sh"

# a distribution kernel has it as a module, which a mount loads
grep -qw overlay /proc/filesystems || modprobe -q overlay 2>/dev/null
grep -qw overlay /proc/filesystems || skip "this kernel has no overlay filesystem"
command -v mkfs.ext4 >/dev/null || skip "mkfs.ext4 missing"
command -v python3 >/dev/null || skip "python3 missing"
truncate -s 512M "$SCRATCH/disk.img" && mkfs.ext4 -q -F -N 120000 "$SCRATCH/disk.img" &&
	mkdir -p "$SCRATCH/disk" && mount -o loop "$SCRATCH/disk.img" "$SCRATCH/disk" ||
	skip "cannot mount an ext4 image on a loop device"
D=$SCRATCH/disk
P=$D/tree
LOWER=$RUN/areas/ov/lower

# The tree: DIRS directories of 200 files each, of which the kill test
# rewrites KILL_DIRS (from d010); fewer in the emulated guest
# (T_AREA_OVERLAY_DIRS, T_AREA_OVERLAY_KILL_DIRS; 100 and 20 natively).
DIRS=${T_AREA_OVERLAY_DIRS:-100}
KILL_DIRS=${T_AREA_OVERLAY_KILL_DIRS:-20}
KILL_FILES=$((KILL_DIRS * 200))
[ "$DIRS" -ge $((10 + KILL_DIRS)) ] || fail "T_AREA_OVERLAY_DIRS=$DIRS: at least $((10 + KILL_DIRS)) needed"
python3 - "$P" "$DIRS" <<'EOF'
import os, sys
root = sys.argv[1]
for d in range(int(sys.argv[2])):
    os.makedirs(f"{root}/d{d:03}")
    for f in range(200):
        with open(f"{root}/d{d:03}/f{f:03}", "w") as o:
            o.write(f"old {d}/{f}\n")
EOF
n=$(find "$P" -type f | wc -l)
[ "$n" = $((DIRS * 200)) ] || fail "the tree has $n files, not $((DIRS * 200))"

conf() {
	write_conf <<EOT
[area ov]
path = $P
backend = tmpfs
size = 256M
inodes = 100k
seed = $1
persist = $2
EOT
}
# timed CMD...: runs it, its time in ms into $MS
timed() {
	local t0
	t0=$(date +%s%N)
	"$@"
	MS=$((($(date +%s%N) - t0) / 1000000))
}

# --- start: a copying seed against the overlay, each the best of 3 (the
# machine may be busy with other work), page cache warm for both
best_start() {
	local i best=
	for i in 1 2 3; do
		timed expect_rc 0 start
		[ -z "$best" ] || [ "$MS" -lt "$best" ] && best=$MS
		[ "$i" = 3 ] || expect_rc 0 stop
	done
	BEST=$best
}
conf yes no
best_start
t_copy=$BEST
expect_rc 0 stop
conf overlay yes
best_start
t_ovl=$BEST
used=$(df -B1 --output=used "$RUN/areas/ov/area" | tail -1)
echo "start: copying seed ${t_copy} ms, overlay ${t_ovl} ms; area used after start: $used bytes"
# What makes the overlay's start a constant is that it reads nothing of
# the tree: counted in system calls, not timed (the times above vary with
# the machine and the build: 45 ms against 347 under ASan).  The copying
# seed opens each of the 20 000 files; the overlay's start opens its own
# few dozen things and each directory once (the walk for filesystems
# nested below the directory), never a file: under a tenth of the files.
# calls VAR: the openat and getdents64 calls of a start, its children's
# too, into VAR.  LeakSanitizer reads the process it checks through ptrace
# and fails under strace: leak checking is off for this one run.
calls() {
	expect_rc 0 stop
	ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" \
		strace -f -qq -c -o "$SCRATCH/calls" -e trace=openat,openat2,getdents64 \
		"$STORAGED" -c "$CONF" -f "$FSTAB" --state-dir "$RUN" start >"$SCRATCH/calls.out" 2>&1 ||
		{ cat "$SCRATCH/calls.out"; fail "start under strace failed"; }
	printf -v "$1" %s "$(awk '$NF == "openat" || $NF == "openat2" || $NF == "getdents64" { n += $4 } END { print n + 0 }' "$SCRATCH/calls")"
}
if command -v strace >/dev/null; then
	calls n_ovl
	conf yes no
	calls n_copy
	echo "start: copying seed $n_copy openat/getdents64 calls, overlay $n_ovl"
	[ "$n_copy" -ge $((DIRS * 200)) ] || fail "the copying seed made $n_copy calls for $((DIRS * 200)) files: the count misses them"
	[ "$n_ovl" -lt $((DIRS * 200 / 10)) ] || fail "the overlay's start made $n_ovl openat/getdents64 calls for $((DIRS * 200)) files: it reads them"
	expect_rc 0 stop
	conf overlay yes
	expect_rc 0 start
fi
[ "$used" -lt $((4 * 1024 * 1024)) ] || fail "the overlay area uses $used bytes after start"
findmnt -n -o FSTYPE --mountpoint "$P" | grep -qx overlay || fail "what covers $P is no overlay"
expect_rc 0 status
grep -q "active" "$OUT" || { cat "$OUT"; fail "status does not show the overlay area active"; }
pass "overlay start in ${t_ovl} ms (copying seed: ${t_copy} ms), $used bytes of RAM used"

# --- every kind of change
echo new >"$P/new-file"                        # write
echo more >>"$P/d000/f000"                      # append
chmod 0600 "$P/d000/f001"                       # chmod only (metacopy off: copied up)
chown 1234:4321 "$P/d000/f002"                  # owner only
rm "$P/d000/f003"                               # delete
mv "$P/d001" "$P/d001-renamed"                  # rename of a directory of the lower layer
rm "$P/d001-renamed/f000"                       # ... and a delete in it
rm "$P/d002/f004" && echo again >"$P/d002/f004" # delete then re-create a file
rm -r "$P/d003" && mkdir "$P/d003" && echo only >"$P/d003/only" # ... a directory
mkdir -p "$P/newdir/deep" && echo deep >"$P/newdir/deep/x"     # new directories
mkdir -p "$P/keep/sub" && echo y >"$P/keep/sub/y" && echo z >"$P/keep/sub/z"
ln -s ../new-file "$P/d004/link"                # symlink
chmod 0700 "$P/d005"                            # a directory's mode

# listing of a tree with each file's content: a directory's link count
# and mtime aside (an overlay shows 1 link for a merged directory; a sync
# back renames in and out of directories)
snap() {
	tree_stat "$1" | awk '$2 == "d" { $7 = "-"; $8 = "-" } { print }'
	(cd "$1" && find . -type f -exec md5sum {} + | sort -k2)
}
# the lower layer as the directory will be: without the working directory
# a sync may have been killed in
snap_lower() { snap "$LOWER" | grep -v '\.storaged-sync\.'; }

want=$(snap "$P")
expect_rc 0 sync ov
diff <(echo "$want") <(snap_lower) || fail "after sync, the directory differs from the area"
pass "sync: every kind of change reached the directory"

# --- changes to what the first sync put in the directory
rm "$P/newdir/deep/x"                  # a file the sync created, in a directory it created
rm "$P/keep/sub/y"                     # ... the same in one that stays where it is
mv "$P/newdir" "$P/newdir2"            # a directory it created, renamed
rm "$P/new-file" && mkdir "$P/new-file" # a file it created, replaced by a directory
echo "changed again" >"$P/d000/f000"
want2=$(snap "$P")
[ "$want2" != "$want" ] || fail "the changes are not visible in the area"
# the overlay looks at both layers afresh: what the first sync put in the
# lower layer must not show through (a file deleted in a directory that
# sync created must stay deleted)
echo 3 >/proc/sys/vm/drop_caches
diff <(echo "$want2") <(snap "$P") || fail "after the first sync and dropped caches, the area shows another tree"
expect_rc 0 sync ov
diff <(echo "$want2") <(snap_lower) || fail "after the second sync, the directory differs from the area"
echo 3 >/proc/sys/vm/drop_caches
diff <(echo "$want2") <(snap "$P") || fail "after the second sync and dropped caches, the area shows another tree"
pass "a second sync, after changes to what the first synced, leaves the directory as the area"

# --- stop: what changed since the last sync, the overlay unmounted first
echo last >"$P/d006/f000"
rm -r "$P/d007"
want3=$(snap "$P")
expect_rc 0 stop
findmnt --mountpoint "$P" >/dev/null && fail "something is still mounted on $P after stop"
diff <(echo "$want3") <(snap "$P" | grep -v '\.storaged-sync\.') || fail "after stop, the directory differs from what the area showed"
ls -A "$P" | grep -q '^\.storaged-sync\.' && fail "a sync's working directory was left in $P"
pass "stop: the directory is what the area showed"

# --- a sync killed at several points: each file old or new, then complete
expect_rc 0 start
# write_ver VER: KILL_FILES files of the area rewritten, each saying its version
write_ver() {
	python3 - "$P" "$1" "$KILL_DIRS" <<'EOF'
import sys
for d in range(10, 10 + int(sys.argv[3])):
    for f in range(200):
        with open(f"{sys.argv[1]}/d{d:03}/f{f:03}", "w") as o:
            o.write(f"{sys.argv[2]} {d}/{f}\n")
EOF
}
# check_ver OLD NEW: every one of them in the directory is its complete
# OLD or NEW version; prints how many are NEW
check_ver() {
	python3 - "$LOWER" "$1" "$2" "$KILL_DIRS" <<'EOF'
import sys
root, old, new = sys.argv[1:4]
n_new, bad = 0, 0
for d in range(10, 10 + int(sys.argv[4])):
    for f in range(200):
        p = f"{root}/d{d:03}/f{f:03}"
        try:
            s = open(p).read()
        except FileNotFoundError:
            print("missing:", p); bad = 1; continue
        if s == f"{new} {d}/{f}\n":
            n_new += 1
        elif s != f"{old} {d}/{f}\n":
            print("torn:", p, repr(s)); bad = 1
print(n_new)
sys.exit(bad)
EOF
}
write_ver v0
timed expect_rc 0 sync ov
t_sync=$MS
[ "$(check_ver old v0)" = "$KILL_FILES" ] || fail "a full sync of $KILL_FILES changed files left some old"
echo "a sync of $KILL_FILES changed files takes ${t_sync} ms"
prev=v0
for pct in 10 40 70 95; do
	write_ver "v$pct"
	ms=$((t_sync * pct / 100))
	"$STORAGED" -c "$CONF" -f "$FSTAB" --state-dir "$RUN" sync ov >/dev/null 2>&1 &
	pid=$!
	sleep "$(printf '%d.%03d' $((ms / 1000)) $((ms % 1000)))"
	kill -9 $pid 2>/dev/null && how=killed || how=finished
	wait $pid 2>/dev/null
	res=$(check_ver "$prev" "v$pct") || { echo "$res"; fail "after SIGKILL at ${ms} ms a file is neither old nor new"; }
	expect_rc 0 sync ov
	[ "$(check_ver "$prev" "v$pct")" = "$KILL_FILES" ] || fail "the sync after the kill at ${ms} ms did not complete"
	ls -A "$LOWER" | grep -q '^\.storaged-sync\.' && fail "a working directory is left after the sync that followed the kill"
	ls -A "$P" | grep -q '^\.storaged-sync\.' && fail "the area shows a sync's working directory"
	pass "SIGKILL at ${ms} ms ($how, $(echo "$res" | tail -1) of $KILL_FILES new): every file complete; the next sync completed"
	prev=v$pct
done
want4=$(snap "$P")
expect_rc 0 stop
diff <(echo "$want4") <(snap "$P") || fail "after the kills and stop, the directory differs from what the area showed"
pass "after the kills, stop left the directory as the area showed it"

# --- check refuses a directory that is itself on an overlay
mkdir -p "$SCRATCH/o/l" "$SCRATCH/o/u" "$SCRATCH/o/w" "$SCRATCH/o/m"
mount -t overlay storaged-test -o "lowerdir=$SCRATCH/o/l,upperdir=$SCRATCH/o/u,workdir=$SCRATCH/o/w" "$SCRATCH/o/m" ||
	fail "cannot mount a test overlay"
mkdir "$SCRATCH/o/m/dir"
write_conf <<EOT
[area oo]
path = $SCRATCH/o/m/dir
size = 16M
seed = overlay
EOT
expect_rc 1 check
grep -q "itself on an overlay" "$OUT" || { cat "$OUT"; fail "check does not say why it refuses a directory on an overlay"; }
expect_rc 1 start
grep -q "itself on an overlay" "$OUT" || { cat "$OUT"; fail "start does not say why it refuses a directory on an overlay"; }
pass "check and start refuse a directory on an overlay"

# --- the overlay unmounted by someone else: stop applies the upper layer
# all the same, says what that replaces, and keeps the directory's own
# writes where the area changed nothing
conf overlay yes
expect_rc 0 start
echo area >"$P/d008/f000"
echo area >"$P/d008/new"
rm -r "$P/d011" && mkdir "$P/d011" && echo area >"$P/d011/only"
umount "$P" || fail "cannot unmount the overlay over $P"
echo dir >"$P/d008/f000"  # under a name the area changed too
echo dir >"$P/d009/f000"  # where the area changed nothing
echo dir >"$P/d011/f001"  # in a directory the area made again
expect_rc 0 stop
grep -q "was unmounted by someone else: its upper layer is applied to '$P' all the same" "$OUT" ||
	{ cat "$OUT"; fail "stop does not say the overlay was gone and what applying its upper layer replaces"; }
[ "$(cat "$P/d008/f000")" = area ] && [ "$(cat "$P/d008/new")" = area ] && [ "$(cat "$P/d011/only")" = area ] ||
	fail "the area's changes were not applied after the overlay was gone"
[ "$(cat "$P/d009/f000")" = dir ] || fail "a write to the directory where the area changed nothing was lost"
[ ! -e "$P/d011/f001" ] || fail "a directory the area made again kept what the directory had in it"
pass "the overlay gone: stop applied the upper layer, said what it replaced, kept the directory's other writes"

# --- the private view of the directory (the lower layer) unmounted by
# someone else: the first stop keeps the area and names the overlay's
# merged view, not the bare upper layer, as where to copy from
expect_rc 0 start
echo kept >"$P/d012/f000"
umount "$LOWER" || fail "cannot unmount $LOWER"
expect_rc 1 stop
grep -q "they are kept in '$P': copy what you need from there" "$OUT" ||
	{ cat "$OUT"; fail "the first stop without the lower layer's view does not name the overlay as where the content is"; }
[ "$(cat "$P/d012/f000")" = kept ] || fail "the area's content is not in the overlay after the first stop"
expect_rc 1 stop
grep -q "its content was discarded" "$OUT" || { cat "$OUT"; fail "the second stop does not say it discarded the content"; }
findmnt --mountpoint "$P" >/dev/null && fail "something is still mounted on $P after the second stop"
pass "the lower layer's view gone: the first stop kept the area and named the overlay, the next discarded it"

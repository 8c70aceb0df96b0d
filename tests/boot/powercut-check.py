#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""The trees and the checks of the power-cut test (t-powercut-qemu.sh).

  powercut-check.py gen DIR
      DIR/old: the directory's old version (each file says "old:PATH:",
      padding, "END"); DIR/chg: what the guest copies over the area
      (changed and new files, new directories, with the new directories'
      modes); DIR/chg.delete: what the guest deletes first; DIR/trees.json:
      every path's old and new version.
  powercut-check.py cuts DIR PHASE TREE N SCRATCH [AREA]
      N power cuts spread over the writes of DIR/PHASE.log
      (powercut-disk.py): for each, the disk as the cut left it (the base,
      what was flushed or written FUA before the cut, a random half of the
      4 KiB pieces written since the last flush), then e2fsck (the
      journal replayed, as the next mount would; then a read-only pass
      that must find nothing), the tree TREE read out with debugfs and
      checked: each path its old or its new version (a file's content, a
      directory, its mode), never torn, never missing; what is neither
      (left-over working files) is listed.  storaged's working directory
      (.storaged-sync.<32 hex>) must carry its mark (for the area AREA,
      default pc) or be empty, so that
      the next start removes it before it seeds.  Prints one line per cut and a
      summary "PHASE: N cuts, T torn, M missing, ..."; exit status 1 when
      any cut is not clean.  The images are made in SCRATCH (a tmpfs).
  powercut-check.py gen-periodic DIR N
      The periodic phase's trees: DIR/per/g0 the directory's first
      version (on the disk), DIR/per/chgK and chgK.delete what the guest
      does to the area in generation K (1..N), DIR/per.json each
      generation's whole tree.
  powercut-check.py periodic DIR TREE N SCRATCH IMAGE SYNCED
      The cut between periodic syncs.  First N cuts spread over the
      writes of DIR/periodic.log, each with its own expectation: the
      guest marked in the log each periodic sync it saw complete
      ("SYNCED K": generation K was written before that sync began), so
      a cut after the mark of K and before the next must find every path
      of TREE at generation K, or K+1 where the next sync had begun:
      never older (at most one interval lost), never torn.  Then IMAGE,
      the disk as the real cut (qemu killed) left it, must hold
      generation SYNCED exactly: everything up to the last completed
      periodic sync, nothing half synced.
"""
import json
import os
import random
import re
import shutil
import struct
import subprocess
import sys

NDIRS, NFILES = 40, 75


def content(ver, path, size):
    return ("%s:%s:" % (ver, path)).encode() + (b"o" if ver == "old" else b"n") * size + b"END\n"


def gen(top):
    rnd = random.Random(12)
    old, new = {}, {}
    for d in range(NDIRS):
        dp = "d%02d" % d
        old[dp] = new[dp] = ("d", 0o755)
        for f in range(NFILES):
            p = "%s/f%02d" % (dp, f)
            old[p] = new[p] = ("f", rnd.randrange(100, 3000))
    for i in range(4):
        old["big%d" % i] = new["big%d" % i] = ("f", 512 * 1024)
    files = sorted(p for p in old if old[p][0] == "f")
    changed, deleted = [], []
    for p in files:
        x = rnd.random()
        if x < 0.30:
            size = old[p][1] if rnd.random() < 0.3 else rnd.randrange(100, 3000)
            if p.startswith("big"):
                size = old[p][1]
            new[p] = ("f", size)
            changed.append(p)
        elif x < 0.33:
            del new[p]
            deleted.append(p)
    for i in range(90):
        new["d%02d/new%02d" % (i % NDIRS, i)] = ("f", rnd.randrange(100, 3000))
    for d in ("d38", "d39"):  # deleted directories
        for p in [p for p in new if p == d or p.startswith(d + "/")]:
            del new[p]
        deleted.append(d)
    for d in ("n0", "n1"):  # new directories
        new[d] = ("d", 0o755)
        for f in range(20):
            new["%s/f%02d" % (d, f)] = ("f", rnd.randrange(100, 3000))
    # a file becomes a directory, a directory becomes a file
    deleted.append("d00/f00")
    new["d00/f00"] = ("d", 0o755)
    new["d00/f00/inner"] = ("f", 300)
    deleted.append("d01")
    for p in [p for p in new if p.startswith("d01/")]:
        del new[p]
    new["d01"] = ("f", 700)
    for d in ("d02", "d03", "d04"):  # new modes
        new[d] = ("d", 0o700)
    for tree, vers in (("old", old), ("chg", new)):
        for p in sorted(vers):
            kind, arg = vers[p]
            if tree == "chg" and old.get(p) == vers[p] and p not in changed and kind == "f":
                continue
            full = os.path.join(top, tree, p)
            if kind == "d":
                os.makedirs(full, exist_ok=True)
                os.chmod(full, arg)
            else:
                os.makedirs(os.path.dirname(full), exist_ok=True)
                with open(full, "wb") as f:
                    f.write(content("old" if tree == "old" else "new", p, arg))
    for tree, vers in (("chg", new),):
        for p in sorted(vers, reverse=True):
            if vers[p][0] == "d":
                os.chmod(os.path.join(top, tree, p), vers[p][1])
    with open(os.path.join(top, "chg.delete"), "w") as f:
        f.write("\n".join(deleted) + "\n")
    with open(os.path.join(top, "trees.json"), "w") as f:
        json.dump({"old": old, "new": new}, f)
    print("trees: %d paths old, %d new; %d files changed, %d deleted, %d added"
          % (len(old), len(new), len(changed), len(deleted), len(set(new) - set(old))))


def read_log(path):
    ents = []
    with open(path, "rb") as f:
        b = f.read()
    i = 0
    while i + 14 <= len(b):
        t, off, n, fua = struct.unpack_from("<cQIB", b, i)
        i += 14
        ents.append((t, off, b[i:i + n], fua))
        i += n
    return ents


def crash_image(base, ents, k, seed, out):
    """the disk after a cut before entry k"""
    img = bytearray(base)
    last_flush = max([i for i in range(k) if ents[i][0] == b"F"], default=-1)
    rnd = random.Random(seed)
    for i in range(k):
        t, off, data, fua = ents[i]
        if t != b"W":
            continue
        if i < last_flush or fua:
            img[off:off + len(data)] = data
            continue
        # not flushed: each 4 KiB piece may have reached the disk or not
        for p in range(0, len(data), 4096):
            if rnd.random() < 0.5:
                img[off + p:off + min(p + 4096, len(data))] = data[p:p + 4096]
    with open(out, "wb") as f:
        f.write(img)


def state(root, p):
    full = os.path.join(root, p)
    if not os.path.lexists(full):
        return None
    st = os.lstat(full)
    if os.path.isdir(full) and not os.path.islink(full):
        return ("d", st.st_mode & 0o7777)
    with open(full, "rb") as f:
        return ("f", f.read())


def matches(s, ver, p, want):
    if want is None:
        return s is None
    if s is None:
        return False
    if want[0] == "d":
        return s[0] == "d" and s[1] == want[1]
    if s[0] != "f":
        return False
    # content(ver, p, size), without building it
    head, pad = ("%s:%s:" % (ver, p)).encode(), b"o" if ver == "old" else b"n"
    b = s[1]
    return (len(b) == len(head) + want[1] + 4 and b.startswith(head) and b.endswith(b"END\n")
            and b.count(pad, len(head), len(b) - 4) == want[1])


def check_tree(root, trees):
    old, new = trees["old"], trees["new"]
    res = {"torn": [], "missing": [], "wrong": [], "new": 0, "old": 0, "extra": []}
    gone = set()  # directories absent or not directories here: skip below
    for p in sorted(set(old) | set(new)):
        parent = os.path.dirname(p)
        if parent and parent in gone:
            continue
        s = state(root, p)
        o, n = old.get(p), new.get(p)
        if s is None or s[0] != "d":
            gone.add(p)
        if matches(s, "new", p, n) and n is not None:
            res["new"] += 1
        elif matches(s, "old", p, o) or matches(s, "new", p, n):
            res["old"] += 1 if o is not None else 0
        elif s is None:
            res["missing"].append(p)
        elif s[0] == "f" and "f" in (o or ("",))[0] + (n or ("",))[0]:
            res["torn"].append(p)
        else:
            res["wrong"].append(p)
    known = set(old) | set(new)
    for dirpath, dirs, files in os.walk(root):
        for name in dirs + files:
            rel = os.path.relpath(os.path.join(dirpath, name), root)
            if rel not in known:
                res["extra"].append(rel)
        dirs[:] = [d for d in dirs if os.path.relpath(os.path.join(dirpath, d), root) in known]
    return res


def run(cmd):
    return subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT).returncode


AREA = "pc"  # the guest's area (t-powercut-qemu.sh)


def sync_marked(img, tree, name, area=AREA):
    """whether the working directory NAME carries the sync's mark for area"""
    out = subprocess.run(["debugfs", "-R", "ea_get /%s/%s trusted.storaged.sync" % (tree, name), img],
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT).stdout.decode()
    return ('= "%s"' % area) in out


def sync_workdir_ok(img, tree, name, area=AREA):
    """whether the next start removes the working directory NAME: marked
    for area, or empty (cut before its mark reached the disk: storaged
    removes one that is root's, 0700, unmarked and empty)"""
    if sync_marked(img, tree, name, area):
        return True
    out = subprocess.run(["debugfs", "-R", "ls -p /%s/%s" % (tree, name), img],
                         stdout=subprocess.PIPE, stderr=subprocess.DEVNULL).stdout.decode()
    names = [ln.split("/")[5] for ln in out.splitlines() if ln.count("/") >= 6]
    return bool(names) and all(n in (".", "..") for n in names)


def cuts(top, phase, tree, n, scratch, area=AREA):
    trees = json.load(open(os.path.join(top, "trees.json")))
    with open(os.path.join(top, phase + ".base"), "rb") as f:
        base = f.read()
    ents = read_log(os.path.join(top, phase + ".log"))
    writes = [i for i, e in enumerate(ents) if e[0] == b"W"]
    if not writes:
        print("%s: no writes logged" % phase)
        return 1
    # cut before the k-th write, spread from the first write to past the last
    points = sorted({writes[min(len(writes) - 1, (j * len(writes)) // n)] for j in range(n)} | {len(ents)})
    img, out = os.path.join(scratch, phase + ".img"), os.path.join(scratch, phase + ".out")
    tot = {"torn": 0, "missing": 0, "wrong": 0, "unclean": 0, "leftover": 0, "bad": 0}
    for j, k in enumerate(points):
        crash_image(base, ents, k, 1000 * j + 7, img)
        # the journal replayed, as the next mount does; then nothing to fix
        replay = run(["e2fsck", "-E", "journal_only", "-y", img])
        clean = run(["e2fsck", "-fn", img]) == 0 and replay in (0, 1)
        shutil.rmtree(out, ignore_errors=True)
        os.makedirs(out)
        run(["debugfs", "-R", "rdump /%s %s" % (tree, out), img])
        r = check_tree(os.path.join(out, tree), trees)
        left, work = [], 0
        for e in r["extra"]:
            if re.fullmatch(r"\.storaged-sync\.[0-9a-f]{32}", e.split("/")[0]):
                if "/" not in e and not sync_workdir_ok(img, tree, e, area):
                    left.append(e + " (unmarked, not empty)")
                work += "/" not in e
                continue
            left.append(e)
        bad = bool(r["torn"] or r["missing"] or r["wrong"] or not clean)
        tot["torn"] += len(r["torn"])
        tot["missing"] += len(r["missing"])
        tot["wrong"] += len(r["wrong"])
        tot["unclean"] += 0 if clean else 1
        tot["leftover"] += 1 if left else 0
        tot["bad"] += 1 if bad else 0
        print("%s cut %2d at log entry %5d/%d: fsck %s (replay %d), %4d new %4d old, %d torn, %d missing, "
              "%d wrong, %d left over%s%s" % (phase, j + 1, k, len(ents), "clean" if clean else "NOT CLEAN",
                                            replay, r["new"], r["old"], len(r["torn"]), len(r["missing"]),
                                            len(r["wrong"]), len(left),
                                            ", storaged's marked working directory" if work else "",
                                            (": " + " ".join((r["torn"] + r["missing"] + r["wrong"])[:3]))
                                            if bad else ""))
    print("%s: %d cuts over %d writes: %d torn files, %d missing, %d wrong, %d cuts not fsck-clean, "
          "%d cuts with left-over files, %d cuts not consistent"
          % (phase, len(points), len(writes), tot["torn"], tot["missing"], tot["wrong"], tot["unclean"],
             tot["leftover"], tot["bad"]))
    return 1 if tot["bad"] else 0


def pcontent(g, p, size):
    return ("g%d:%s:" % (g, p)).encode() + b"x" * size + b"END\n"


def gen_periodic(top, n):
    """generation 0 on the disk, then n generations of changes to the area"""
    rnd = random.Random(29)
    cur = {}
    for d in range(10):
        cur["d%d" % d] = ("d", 0o755)
        for f in range(20):
            cur["d%d/f%02d" % (d, f)] = ("f", 0, rnd.randrange(50, 9000))
    cur["stamp"] = ("f", 0, 10)
    states = [dict(cur)]
    base = os.path.join(top, "per")

    def write(tree, p, v):
        full = os.path.join(base, tree, p)
        if v[0] == "d":
            os.makedirs(full, exist_ok=True)
            return
        os.makedirs(os.path.dirname(full), exist_ok=True)
        with open(full, "wb") as f:
            f.write(pcontent(v[1], p, v[2]))

    for p in sorted(cur):
        write("g0", p, cur[p])
    for g in range(1, n + 1):
        files = sorted(p for p in cur if cur[p][0] == "f" and p != "stamp")
        deleted = rnd.sample(files, 4)
        for p in deleted:
            del cur[p]
        changed = rnd.sample([p for p in files if p not in deleted], 25) + ["stamp"]
        for p in changed:
            cur[p] = ("f", g, cur[p][2] if rnd.random() < 0.3 else rnd.randrange(50, 9000))
        nd = "n%d" % g
        cur[nd] = ("d", 0o755)
        for f in range(8):
            cur["%s/f%d" % (nd, f)] = ("f", g, rnd.randrange(50, 9000))
            changed.append("%s/f%d" % (nd, f))
        for i in range(3):
            p = "d%d/new%d-%d" % (rnd.randrange(10), g, i)
            cur[p] = ("f", g, rnd.randrange(50, 9000))
            changed.append(p)
        os.makedirs(os.path.join(base, "chg%d" % g, nd))
        for p in changed:
            write("chg%d" % g, p, cur[p])
        with open(os.path.join(base, "chg%d.delete" % g), "w") as f:
            f.write("\n".join(deleted) + "\n")
        states.append(dict(cur))
    with open(os.path.join(top, "per.json"), "w") as f:
        json.dump(states, f)
    print("periodic trees: %d paths, %d generations of ~45 changes" % (len(states[0]), n))


def generation_of(root, states, allowed):
    """Per path of TREE: which of the @allowed generations it is in.
    Returns (counts per generation, paths in none of them)."""
    counts, bad = {g: 0 for g in allowed}, []
    paths = set()
    for g in allowed:
        paths |= set(states[g])
    for p in sorted(paths):
        full = os.path.join(root, p)
        have = None
        if os.path.lexists(full):
            if os.path.isdir(full) and not os.path.islink(full):
                have = ("d",)
            else:
                with open(full, "rb") as f:
                    have = ("f", f.read())
        hit = None
        for g in allowed:
            want = states[g].get(p)
            if want is None:
                ok = have is None
            elif want[0] == "d":
                ok = have == ("d",)
            else:
                ok = have is not None and have[0] == "f" and have[1] == pcontent(want[1], p, want[2])
            if ok:
                hit = g if hit is None else hit
                if states[g].get(p) != states[allowed[0]].get(p):
                    hit = g
        if hit is None:
            bad.append(p)
        else:
            counts[hit] += 1
    for dirpath, dirs, files in os.walk(root):
        for name in dirs + files:
            rel = os.path.relpath(os.path.join(dirpath, name), root)
            if rel not in paths:
                bad.append(rel + " (extra)")
        dirs[:] = [d for d in dirs if os.path.relpath(os.path.join(dirpath, d), root) in paths]
    return counts, bad


PER_AREA = "per"  # the periodic phase's area


def without_marked_work(img, tree, bad):
    """@bad less storaged's working directory that the next start removes
    before it seeds (marked, and what is in it; or unmarked and empty)"""
    keep = []
    for e in bad:
        top = e.split("/")[0].replace(" (extra)", "")
        if re.fullmatch(r"\.storaged-sync\.[0-9a-f]{32}", top) and sync_workdir_ok(img, tree, top, PER_AREA):
            continue
        keep.append(e)
    return keep


def read_image(img, tree, out):
    """fsck after the journal's replay, as the next mount; TREE dumped to out"""
    replay = run(["e2fsck", "-E", "journal_only", "-y", img])
    clean = run(["e2fsck", "-fn", img]) == 0 and replay in (0, 1)
    shutil.rmtree(out, ignore_errors=True)
    os.makedirs(out)
    run(["debugfs", "-R", "rdump /%s %s" % (tree, out), img])
    return clean, os.path.join(out, tree)


def periodic(top, tree, n, scratch, final, synced):
    states = json.load(open(os.path.join(top, "per.json")))
    with open(os.path.join(top, "periodic.base"), "rb") as f:
        base = f.read()
    ents = read_log(os.path.join(top, "periodic.log"))
    marks = [(i, int(e[2].split()[1])) for i, e in enumerate(ents) if e[0] == b"M"]
    writes = [i for i, e in enumerate(ents) if e[0] == b"W"]
    points = sorted({writes[min(len(writes) - 1, (j * len(writes)) // n)] for j in range(n)} |
                    {i + 1 for i, _ in marks} | {len(ents)}) if writes else [len(ents)]
    img, out = os.path.join(scratch, "periodic.img"), os.path.join(scratch, "periodic.out")
    bad_cuts = 0
    for j, k in enumerate(points):
        g = max([m for i, m in marks if i < k], default=0)
        allowed = [g] + ([g + 1] if g + 1 < len(states) else [])
        crash_image(base, ents, k, 2000 * j + 11, img)
        clean, root = read_image(img, tree, out)
        counts, bad = generation_of(root, states, allowed)
        bad = without_marked_work(img, tree, bad)
        ok = clean and not bad
        bad_cuts += 0 if ok else 1
        print("periodic cut %2d at log entry %5d/%d, after the sync of generation %d: fsck %s, %s%s"
              % (j + 1, k, len(ents), g, "clean" if clean else "NOT CLEAN",
                 ", ".join("%d at generation %d" % (counts[a], a) for a in allowed),
                 "" if ok else ", %d older or torn: %s" % (len(bad), " ".join(bad[:4]))))
    # the real cut: the disk as qemu's death left it
    shutil.copy(final, img)
    clean, root = read_image(img, tree, out)
    found = {}
    for g in range(len(states)):
        counts, bad = generation_of(root, states, [g])
        if not without_marked_work(img, tree, bad):
            found[g] = True
    whole = sorted(found)
    print("periodic: %d cuts over %d writes and %d periodic syncs, %d not consistent; "
          "the real cut: fsck %s, the tree %s, expected generation %d (the last completed periodic sync)"
          % (len(points), len(writes), len(marks), bad_cuts, "clean" if clean else "NOT CLEAN",
             "is generation %d" % whole[0] if whole else "is no single generation (torn or mixed)", synced))
    return 1 if bad_cuts or not clean or synced not in found else 0


def main():
    if sys.argv[1] == "gen":
        gen(sys.argv[2])
        return 0
    if sys.argv[1] == "gen-periodic":
        gen_periodic(sys.argv[2], int(sys.argv[3]))
        return 0
    if sys.argv[1] == "periodic":
        return periodic(sys.argv[2], sys.argv[3], int(sys.argv[4]), sys.argv[5], sys.argv[6], int(sys.argv[7]))
    return cuts(sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5]), sys.argv[6], *sys.argv[7:8])


if __name__ == "__main__":
    sys.exit(main())

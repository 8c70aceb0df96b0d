# SPDX-License-Identifier: GPL-2.0-or-later
# `storaged status --json` held against the live mount table, for the
# tests that kill a command at every step (lib-live.sh, t-c36-*.sh):
#   python3 status-vs-live.py JSON NOW AREAS PATH [INTERRUPTED]
# JSON: status --json's output; NOW: the live mounts below the test's
# directory, "TARGET ..." a line; AREAS: the state directory's areas/;
# PATH: an area's directory; INTERRUPTED: how many rows the table says
# interrupted.  Exits 1, saying why, when a row is waiting or mounting
# (no storaged is at work), a live mount has no row that says it is
# mounted or half set up, or the JSON counts other rows interrupted.
import json
import sys

out, now, areas, path = sys.argv[1:5]
text = open(out).read()
rows = json.loads(text)["status"] if text.strip() else []
bad = []
for r in rows:
    if r["status"] in ("waiting", "mounting"):
        bad.append("%s %s is %s with no storaged at work" % (r["kind"], r["what"], r["status"]))
if len(sys.argv) > 5 and sum(1 for r in rows if r["status"] == "interrupted") != int(sys.argv[5]):
    bad.append("the JSON and the table do not count the same rows interrupted")
for line in open(now):
    target = line.split(" ")[0]
    if target.startswith(areas) or target == path:
        name = target[len(areas):].split("/")[0] if target.startswith(areas) else None
        ok = [r for r in rows if r["kind"] == "area" and (r["what"] == name or r["source"] == path)
              and r["status"] in ("active", "interrupted", "degraded")]
    else:
        ok = [r for r in rows if r["kind"] == "mount" and r["what"] == target
              and r["status"] in ("done", "interrupted", "degraded")]
    if not ok:
        bad.append("%s is mounted, status does not say so" % target)
for b in bad:
    print(b)
sys.exit(1 if bad else 0)

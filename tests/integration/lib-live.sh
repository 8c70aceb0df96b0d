# SPDX-License-Identifier: GPL-2.0-or-later
# Sourced by the tests that kill a command at every step (t-c36-*.sh),
# after lib-area.sh: `status` held against the live mount table.  Uses
# the caller's $P (area k's directory); check_status counts in
# $unrecorded the kills that left area k mounted without its record.

# live: the mounts below the scratch directory, as findmnt shows them
live() { findmnt -rn -o TARGET,FSTYPE,FSROOT | awk -v p="$SCRATCH/" 'index($1, p) == 1' | LC_ALL=C sort; }

# check_status WHERE: status against the live mount table
check_status() {
	local where=$1 rc
	live >"$SCRATCH/now"
	sd status
	rc=$?
	cp "$OUT" "$SCRATCH/status.txt"
	if [ -s "$SCRATCH/now" ] && grep -q "set up nothing" "$SCRATCH/status.txt"; then
		cat "$SCRATCH/now" "$SCRATCH/status.txt"
		fail "$where: status says nothing is set up over live mounts"
	fi
	if [ "$rc" = 0 ] && ! cmp -s "$SCRATCH/now" "$SCRATCH/whole" && [ -s "$SCRATCH/now" ]; then
		cat "$SCRATCH/now" "$SCRATCH/status.txt"
		fail "$where: status exits 0 over a start half done"
	fi
	if grep -q "its filesystem still mounted" "$SCRATCH/status.txt" && ! grep -q "^$RUN/areas/k/area " "$SCRATCH/now"; then
		cat "$SCRATCH/now" "$SCRATCH/status.txt"
		fail "$where: status says the area's filesystem is still mounted, the mount table does not"
	fi
	sd status --json
	python3 - "$OUT" "$SCRATCH/now" "$SCRATCH/" "$RUN/areas/" "$P" <<'EOF' || { cat "$SCRATCH/now" "$SCRATCH/status.txt" "$OUT"; fail "$where: status --json against the live mount table"; }
import json, sys
out, now, scratch, areas, path = sys.argv[1:]
text = open(out).read()
rows = json.loads(text)["status"] if text.strip() else []
bad = []
for r in rows:
    if r["status"] in ("waiting", "mounting"):
        bad.append("%s %s is %s with no storaged at work" % (r["kind"], r["what"], r["status"]))
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
EOF
	# a setup killed before it wrote the area's record: said so, with
	# what is mounted and what to run
	if grep -q "^$RUN/areas/k/area " "$SCRATCH/now" && [ ! -e "$RUN/areas/k/state" ]; then
		unrecorded=$((unrecorded + 1))
		grep -q "a \`start\` was killed while it set the area up: its filesystem is mounted on '$RUN/areas/k/area'" "$SCRATCH/status.txt" &&
			grep -q "\`$(sd_self) start\` sets it up again, \`$(sd_self) stop\` undoes it" "$SCRATCH/status.txt" ||
			{ cat "$SCRATCH/status.txt"; fail "$where: status does not say the area's setup was killed"; }
	fi
	if grep -q "interrupted" "$SCRATCH/status.txt"; then
		sd status --format=prometheus
		grep -q 'state="interrupted"} 1' "$OUT" ||
			{ cat "$SCRATCH/status.txt" "$OUT"; fail "$where: the metrics do not say interrupted"; }
	fi
}


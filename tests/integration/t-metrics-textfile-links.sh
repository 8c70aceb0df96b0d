#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Root follows no user's link to the metrics textfile (issue 39 item 5):
# metrics-textfile = is written in the directory a descriptor walk opened
# (mount/safepath.h), never by name, so that the owner of a directory on
# the way (node_exporter's textfile directory is often the prometheus
# user's) cannot make root write storaged.prom into another directory:
#  - a link a user owns, on the way, is not followed: nothing is written
#    where it points, and a warning names the link and its owner;
#  - a directory a user owns, reached without links, is written to (the
#    file root's, 0644, no temporary file left);
#  - root's link in root's directory is followed;
#  - the user swapping their directory for a link to another one while
#    starts write the metrics never has the file written there.
. "$(dirname "$0")/lib-area.sh"
command -v setpriv >/dev/null || skip "setpriv missing"
NOBODY=$(id -u nobody) || skip "no user nobody"
# the user's loop of the race below, stopped before the scratch directory goes
SWAPPER=
cleanup_all() {
	[ -z "$SWAPPER" ] || { kill "$SWAPPER"; wait "$SWAPPER"; } 2>/dev/null
	cleanup
}
trap cleanup_all EXIT

U=$SCRATCH/u
VICTIM=$SCRATCH/victim
mkdir -p "$U/real" "$VICTIM"
chmod 0755 "$SCRATCH"
chown nobody "$U" "$U/real"
ln -s "$VICTIM" "$U/m"
chown -h nobody "$U/m"

# conf_textfile PATH: a configuration that only writes the metrics there
conf_textfile() {
	write_conf <<EOT
[storaged]
metrics-textfile = $1
EOT
}

conf_textfile "$U/m/storaged.prom"
expect_rc 0 start
[ -z "$(ls -A "$VICTIM")" ] || fail "root wrote through uid $NOBODY's link: $(ls -A "$VICTIM")"
grep -q "metrics-textfile '$U/m/storaged.prom': not written: '$U/m' is a symbolic link owned by uid $NOBODY" "$OUT" ||
	{ cat "$OUT"; fail "no warning naming the user's link"; }
pass "a user's link to another directory: not followed, named"

conf_textfile "$U/real/storaged.prom"
expect_rc 0 start
f=$U/real/storaged.prom
[ -f "$f" ] && grep -q '^storaged_build_info' "$f" || { cat "$OUT"; fail "no metrics in $f"; }
[ "$(stat -c '%u %a' "$f")" = "0 644" ] || fail "$f is $(stat -c '%u %a' "$f"), expected root's 0644"
[ "$(ls -A "$U/real")" = storaged.prom ] || fail "left in $U/real: $(ls -A "$U/real")"
pass "a directory uid $NOBODY owns: written, root's 0644, no temporary file left"

ln -s "$U/real" "$SCRATCH/rootlink"
rm "$f"
conf_textfile "$SCRATCH/rootlink/storaged.prom"
expect_rc 0 start
[ -f "$f" ] || { cat "$OUT"; fail "root's link in root's directory not followed"; }
pass "root's link in root's directory: followed"

# the race: nobody swaps u/d between a directory and a link to the victim
# as fast as it can while starts write the metrics
conf_textfile "$U/d/storaged.prom"
setpriv --reuid="$NOBODY" --regid="$(id -g nobody)" --clear-groups bash -c '
	cd "$1" || exit 1
	while [ -e "$1" ]; do
		rm -rf d; mkdir d
		rm -rf d; ln -s "$2" d
	done' swapper "$U" "$VICTIM" 2>/dev/null &
SWAPPER=$!
for i in $(seq 1 40); do
	sd start
done
kill "$SWAPPER" 2>/dev/null
wait "$SWAPPER" 2>/dev/null
SWAPPER=
[ -z "$(ls -A "$VICTIM")" ] || fail "root wrote into the victim directory during the swap race: $(ls -A "$VICTIM")"
pass "40 starts while uid $NOBODY swaps its directory for a link: nothing written through the link"

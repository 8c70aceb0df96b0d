#!/bin/bash
# What the documentation a new administrator reads first lists is what the
# program has: every long option of storaged (its getopt table in
# src/cli/main.c) is named in README.md, storaged(8) and --help, and every
# configuration key (the key table in src/parse/config.c) is shown in
# conf/storaged.conf and described in storaged.conf(5).
set -u
top=${TOPSRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
rc=0
opts=$(sed -n 's/^[[:space:]]*{ "\([a-z-]*\)", \(no\|required\)_argument.*/\1/p' "$top/src/cli/main.c")
[ -n "$opts" ] || { echo "FAIL: no long options read from src/cli/main.c"; exit 1; }
help=$(sed -n '/^static void usage/,/^}/p' "$top/src/cli/main.c")
# the man pages' source without roff's escapes ("\-\-local" is "--local")
man8=$(sed 's/\\//g' "$top/man/storaged.8")
man5=$(sed 's/\\//g' "$top/man/storaged.conf.5")
for o in $opts; do
	grep -q -- "--$o" "$top/README.md" || { echo "FAIL: README.md does not name --$o"; rc=1; }
	printf '%s\n' "$man8" | grep -q -- "--$o" || { echo "FAIL: storaged(8) does not name --$o"; rc=1; }
	printf '%s\n' "$help" | grep -q -- "--$o" || { echo "FAIL: --help does not name --$o"; rc=1; }
done
keys=$(sed -n 's/^[[:space:]]*{ SECTION_[A-Z]*, "\([a-z-]*\)",.*/\1/p' "$top/src/parse/config.c" | sort -u)
[ -n "$keys" ] || { echo "FAIL: no keys read from src/parse/config.c"; exit 1; }
for k in $keys; do
	grep -qE "^[#;]? ?$k = " "$top/conf/storaged.conf" || { echo "FAIL: conf/storaged.conf does not show '$k'"; rc=1; }
	printf '%s\n' "$man5" | grep -qE "^\.B[IR]* (.*[\" ])?$k( |=|$)" ||
		{ echo "FAIL: storaged.conf(5) does not describe '$k'"; rc=1; }
done
[ $rc = 0 ] && echo "ok: $(echo $opts | wc -w) options, $(echo $keys | wc -w) keys listed"
exit $rc

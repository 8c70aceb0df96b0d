#!/bin/bash
# The man pages render without warnings (mandoc -T lint), and every option
# that `storaged --help` lists is documented in storaged(8).
set -u
top=${TOPSRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
command -v mandoc >/dev/null || { echo "SKIP: mandoc missing (apt-get install mandoc)"; exit 77; }
mandoc -T lint -W warning "$top/man/storaged.8" "$top/man/storaged.conf.5" || exit 1
if [ -n "${STORAGED:-}" ] && [ -x "$STORAGED" ]; then
	for opt in $("$STORAGED" --help | grep -oE -- '--[a-z-]+' | sort -u); do
		grep -q -- "$(printf '%s' "$opt" | sed 's/-/\\\\-/g')" "$top/man/storaged.8" ||
			{ echo "FAIL: $opt is not documented in storaged.8"; exit 1; }
	done
fi
# Every key of the example config is documented in storaged.conf(5).
for key in $(sed -n 's/^#\{0,1\} *\([a-z-]*\) *=.*/\1/p' "$top/conf/storaged.conf" | sort -u); do
	grep -q "^\.BI\{0,1\}R\{0,1\} $(printf '%s' "$key" | sed 's/-/\\\\-/g')=" "$top/man/storaged.conf.5" ||
		grep -q "$(printf '%s' "$key" | sed 's/-/\\\\-/g')=" "$top/man/storaged.conf.5" ||
		{ echo "FAIL: key '$key' of conf/storaged.conf is not in storaged.conf.5"; exit 1; }
done
exit 0

#!/bin/bash
# What storaged tells a new administrator, checked against what it does:
# - an area whose path = is a symbolic link (or missing) is named with the
#   config's file:line, as the other area errors are.
. "$(dirname "$0")/lib.sh"
setup
mkdir -p "$SCRATCH/real"
ln -s real "$SCRATCH/link"

note "an area's path that is a symbolic link: the error names the config's file:line"
cat >"$CONF" <<EOT
[storaged]

[area viaLink]
path = $SCRATCH/link

[area gone]
path = $SCRATCH/missing
EOT
for args in "--dry-run" "check" "start"; do
	# shellcheck disable=SC2086 # one word per option
	run_sd 1 $args
	expect_out "path '$SCRATCH/link': not a directory, or a symbolic link.*($CONF:4)"
	expect_out "path '$SCRATCH/missing': No such file or directory.*($CONF:7)"
done
is_mountpoint "$SCRATCH/link" && fail "an area was set up over the link"
is_mountpoint "$SCRATCH/real" && fail "an area was set up through the link"
run_sd 0 stop
exit 0

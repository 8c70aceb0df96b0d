#!/bin/bash
# Hostile input, `storaged start` (root: a start that got past the parsers
# would mount): every fixture of tests/fixtures/bad/ and the two generated
# fstabs give exit 2 with a message per expected line, leave the mount
# table as it was and write no state directory (lib-hostile.sh).  The same
# corpus through `storaged check`, which needs no root, is
# t-hostile-check.sh.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-hostile.sh"
setup

HOSTILE_CMDS=start
hostile_run
exit 0

#!/bin/bash
# Issue 14, logs the journal understands: when stderr is the stream systemd
# connected to the journal ($JOURNAL_STREAM = its device:inode, as
# systemd.exec(5) sets it), each line begins with its sd-daemon priority
# ("<3>" error, "<4>" warning, "<6>" info, "<7>" debug) in place of
# "storaged: error: " (the journal names the program itself); with stderr
# anywhere else, or no JOURNAL_STREAM, the lines are as before.  (The qemu
# boot test reads the real journal: journalctl -p.)
. "$(dirname "$0")/lib.sh"
setup

# an error: an unknown key
printf '[storaged]\ncolour = blue\n' >"$CONF"
err=$SCRATCH/stderr
: >"$err"
stream=$(stat -c '%d:%i' "$err")

note "stderr is the journal's stream"
JOURNAL_STREAM=$stream "$STORAGED" -c "$CONF" -f "$FSTAB" --state-dir "$STATE" check 2>>"$err"
[ $? = 2 ] || fail "check of a bad config did not exit 2"
sed 's/^/  | /' "$err"
grep -Eq "^<3>[^<]*colour" "$err" || fail "the error has no <3> prefix"
grep -Ev '^<[0-7]>' "$err" | grep -q . && fail "a line without its priority prefix"
grep -q 'storaged: ' "$err" && fail "a second 'storaged: LEVEL:' prefix in the journal"

note "info lines carry <6> (debug's <7>: tests/unit/test_log, the boot test)"
printf '[storaged]\n' >"$CONF"
: >"$err"
JOURNAL_STREAM=$stream "$STORAGED" -v -c "$CONF" -f "$FSTAB" --state-dir "$STATE" start 2>>"$err"
sed 's/^/  | /' "$err"
grep -Eq '^<[67]>' "$err" || fail "no <6> info or <7> debug line"
grep -Ev '^<[0-7]>' "$err" | grep -q . && fail "a line without its priority prefix"
grep -q 'storaged: ' "$err" && fail "a second 'storaged: LEVEL:' prefix in the journal"

note "stderr elsewhere (JOURNAL_STREAM inherited, stream redirected): no prefix"
printf '[storaged]\ncolour = blue\n' >"$CONF"
JOURNAL_STREAM=$stream "$STORAGED" -c "$CONF" -f "$FSTAB" --state-dir "$STATE" check 2>"$SCRATCH/other"
sed 's/^/  | /' "$SCRATCH/other"
grep -q '^storaged: error: .*colour' "$SCRATCH/other" || fail "the error is missing or prefixed"
grep -q '^<' "$SCRATCH/other" && fail "a prefix although stderr is not the journal's stream"
"$STORAGED" -c "$CONF" -f "$FSTAB" --state-dir "$STATE" check 2>"$SCRATCH/other"
grep -q '^<' "$SCRATCH/other" && fail "a prefix without JOURNAL_STREAM"
exit 0

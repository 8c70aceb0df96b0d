#!/bin/bash
# Warnings about the configuration, where a user sees them and no more:
#  - an fstab option that is a misspelling of a select option (x-storged)
#    or of x-storaged: the line is not silently left out;
#  - the warnings of a configuration are printed by check and --dry-run
#    every time, by start once per boot (the state directory is in /run)
#    and configuration: a repeated start that changes nothing prints
#    nothing; a changed configuration's warnings are printed again.
. "$(dirname "$0")/lib.sh"
setup

note "misspelt select options"
mkdir -p "$SCRATCH/a" "$SCRATCH/b" "$SCRATCH/c"
cat >"$FSTAB" <<EOT
tmpfs  $SCRATCH/a  tmpfs  size=1M,noauto,x-storged  0 0
tmpfs  $SCRATCH/b  tmpfs  size=1M,noauto,X-Storaged  0 0
tmpfs  $SCRATCH/c  tmpfs  size=1M,noauto,x-storaged,x-storage.requires=$SCRATCH/a  0 0
EOT
for cmd in check --dry-run start; do
	run_sd 0 $cmd
	expect_out "fstab:1: option 'x-storged' looks like a misspelling of 'x-storaged': as written, the line carries no select option"
	expect_out "fstab:2: option 'X-Storaged' looks like a misspelling of 'x-storaged'"
	expect_out "fstab:3: option 'x-storage.requires=\?.*' looks like a misspelling of 'x-storaged'"
done
is_mountpoint "$SCRATCH/a" && fail "a line with a misspelt select option was mounted"
is_mountpoint "$SCRATCH/c" || fail "the x-storaged line was not mounted"

note "a repeated start prints nothing, the warnings included; -v shows them"
run_sd 0 start
[ -z "$OUT" ] || fail "a repeated start printed: $OUT"
run_sd 0 -v start
expect_out "debug: .*fstab:1: option 'x-storged' looks like a misspelling"
note "check and --dry-run still warn"
run_sd 0 check
expect_out "fstab:1: option 'x-storged'"
run_sd 0 --dry-run
expect_out "fstab:1: option 'x-storged'"
note "a changed configuration warns again at start"
sed -i 's/x-storged/x-storagd/' "$FSTAB"
run_sd 0 start
expect_out "fstab:1: option 'x-storagd' looks like a misspelling"
run_sd 0 stop
exit 0

#!/bin/bash
# stop of a busy mount names the command that shows who holds it, with the
# mount point quoted for the shell: read back by sh, it is the mount
# point, one word, whatever its spaces and quotes.
. "$(dirname "$0")/lib.sh"
setup
MP="$SCRATCH/it's a dir"
mkdir -p "$MP"
# fstab(5) writes a space as \040
printf '%s  %s  tmpfs  size=1M,noauto,x-storaged  0 0\n' tmpfs "$(printf '%s' "$MP" | sed 's/ /\\040/g')" >"$FSTAB"
run_sd 0 start
is_mountpoint "$MP" || fail "not mounted on '$MP'"
hold_in "$MP"
BUSY=$HOLDER
busy_cleanup() { kill "$BUSY" 2>/dev/null; wait "$BUSY" 2>/dev/null; return 0; }
CLEANUP_HOOK=busy_cleanup

run_sd 1 stop
expect_out "cannot unmount"
arg=$(printf '%s\n' "$OUT" | sed -n 's/.*(fuser -vm \(.*\)) and run `storaged [^`]*stop` again.*/\1/p')
[ -n "$arg" ] || fail "no fuser advice in the output"
eval "set -- $arg"
[ "$#" = 1 ] && [ "$1" = "$MP" ] || fail "the advice's argument reads back as $# word(s), '$*', not '$MP'"
is_mountpoint "$MP" || fail "stop unmounted a busy mount"

busy_cleanup
BUSY=
run_sd 0 stop
is_mountpoint "$MP" && fail "still mounted after the second stop"
exit 0

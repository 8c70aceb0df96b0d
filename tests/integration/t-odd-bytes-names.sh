#!/bin/bash
# A name that is not UTF-8 (Linux paths are bytes) reads the same in the
# messages and in the `status` table: each byte that is not part of a
# UTF-8 sequence as \ooo, as mountinfo writes it (text_escape_controls()).
# The table wrote \xNN (libsmartcols' own escape) where the messages
# wrote \377.
. "$(dirname "$0")/lib.sh"
setup

mp=$(printf '%s/odd\377name' "$SCRATCH")
mkdir -p "$mp"
printf 'tmpfs  %s  tmpfs  size=1M,noauto,x-storaged  0 0\n' "$mp" >"$FSTAB"
shown="$SCRATCH/odd\\\\377name" # grep: the text \377

run_sd 0 start
expect_out "mounted tmpfs on $shown"
run_sd 0 status
expect_out "^mount  *$shown  *tmpfs  *done"
expect_no_out 'odd\\xff'
LC_ALL=C grep -q $'\xff' <<<"$OUT" && fail "status printed the raw byte"
# a one-letter cell is whole (the first try at this escaped each cell into
# a buffer too short for text_escape_controls(), and a short name vanished)
mkdir -p "$SCRATCH/w"
printf '[area w]\npath = %s/w\nsize = 8M\nseed = no\n' "$SCRATCH" >"$CONF"
sd stop >/dev/null 2>&1
run_sd 0 start
run_sd 0 status
expect_out "^area  *w  *"
# --raw is lsblk's machine format, left to libsmartcols: \xNN, never doubled
LC_ALL=C run_sd 0 status --raw
expect_out 'odd\\xffname'
expect_no_out 'x5c377'
run_sd 0 stop
expect_out "unmounted $shown"
exit 0

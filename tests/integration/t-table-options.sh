#!/bin/bash
# util-linux's table conventions for `status` and `scan`, as findmnt and
# lsblk have them: -o/--output picks columns and their order (+LIST adds
# to the default ones, any case), --raw escapes blanks (\x20) and prints
# the table alone, --noheadings drops the heading line; --json keeps only
# the -o columns; a column that does not exist, one named twice, and a
# table option where there is no table are usage errors (exit 2) that
# list the columns; -V is --version.  Golden outputs, the scratch paths
# replaced by @SCRATCH@.  scan reads a fixture inventory
# (STORAGED_INVENTORY), so the machine's own devices do not show.
. "$(dirname "$0")/lib.sh"
setup
P="$SCRATCH/my build"
mkdir -p "$P"
cat >"$CONF" <<EOT
[storaged]
[area build]
path = $P
size = 16M
inodes = 1000
EOT

# golden NAME ARGS...: storaged ARGS... prints exactly the text on stdin
# (stdout only; @SCRATCH@ for the scratch directory) and exits 0.
golden() {
	local name=$1 got rc
	shift
	got=$(sd "$@" 2>"$SCRATCH/err")
	rc=$?
	[ "$rc" = 0 ] || { cat "$SCRATCH/err"; fail "$name: storaged $* exited $rc"; }
	{ [ -z "$got" ] || printf '%s\n' "$got"; } | sed "s|$SCRATCH|@SCRATCH@|g" >"$SCRATCH/got"
	diff -u - "$SCRATCH/got" || fail "$name: storaged $* printed otherwise (diff above: - expected, + got)"
}

# usage_error PATTERN ARGS...: exit 2, nothing on stdout, PATTERN on stderr
usage_error() {
	local pat=$1 rc
	shift
	sd "$@" >"$SCRATCH/out" 2>"$SCRATCH/err"
	rc=$?
	sed 's/^/  | /' "$SCRATCH/err"
	[ "$rc" = 2 ] || fail "storaged $* exited $rc, expected 2"
	[ -s "$SCRATCH/out" ] && fail "storaged $* printed on stdout: $(cat "$SCRATCH/out")"
	grep -q -- "$pat" "$SCRATCH/err" || fail "storaged $*: no '$pat' in the message"
	# one form for every usage error: program, level, command, message
	grep -q "^storaged: error: " "$SCRATCH/err" || fail "storaged $*: not 'storaged: error: ...'"
}

run_sd 0 start
is_mountpoint "$P" || fail "the area is not mounted"

note "status -o: the columns asked for, in that order"
golden "status -o" status -o STATUS,KIND,WHAT,SIZE_BYTES,INODES,NOFAIL <<'EOT'
STATUS   KIND  WHAT  SIZE_BYTES INODES NOFAIL
active   area  build   16777216   1000      0
EOT
note "status -o +LIST: the default columns, then these; names in any case"
sd status -o +inodes,Full >"$SCRATCH/plus" || fail "status -o +inodes,Full"
head -n 1 "$SCRATCH/plus" | grep -Eq '^KIND +WHAT +SOURCE +STATUS +DETAIL +INODES +FULL$' ||
	fail "status -o +inodes,Full: heading '$(head -n 1 "$SCRATCH/plus")'"
note "status -o +LIST naming a default column: no error, shown once where it is (lsblk -o +NAME)"
sd status -o +kind,INODES,Kind >"$SCRATCH/plus" || fail "status -o +kind,INODES,Kind"
head -n 1 "$SCRATCH/plus" | grep -Eq '^KIND +WHAT +SOURCE +STATUS +DETAIL +INODES$' ||
	fail "status -o +kind,INODES,Kind: heading '$(head -n 1 "$SCRATCH/plus")'"
note "status: sizes in DETAIL as lsblk prints them (519.2M, 16M, 0B), never 531616K"
sd status -o DETAIL >"$SCRATCH/detail" || fail "status -o DETAIL"
grep -Eq '^tmpfs storaged-build: [0-9]+(\.[0-9])?[BKMGTPE] of 16M used, [0-9]+ of 1000 inodes$' "$SCRATCH/detail" ||
	{ cat "$SCRATCH/detail"; fail "status: DETAIL's sizes are not lsblk's"; }
note "status --raw: a blank in a cell is \\x20, one space between cells, no resident line"
golden "status --raw" status --raw -o KIND,WHAT,SOURCE,STATUS <<'EOT'
KIND WHAT SOURCE STATUS
area build @SCRATCH@/my\x20build active
EOT
note "status --noheadings: no heading line"
golden "status --noheadings" status --noheadings -o WHAT,SOURCE <<'EOT'
build @SCRATCH@/my build
EOT
golden "status -r --noheadings" status -r --noheadings -o INODES <<'EOT'
1000
EOT
note "status --json -o: only those keys"
golden "status --json -o" status --json -o kind,what,inodes <<'EOT'
{
   "status": [
      {
         "kind": "area",
         "what": "build",
         "inodes": 1000
      }
   ]
}
EOT
note "status without the options: the five default columns, as before"
sd status >"$SCRATCH/plain" || fail "status"
head -n 1 "$SCRATCH/plain" | grep -Eq '^KIND +WHAT +SOURCE +STATUS +DETAIL$' ||
	fail "status: heading '$(head -n 1 "$SCRATCH/plain")'"

note "usage errors: exit 2, the columns listed"
usage_error "-o 'SIZE': no such column; the columns: KIND, WHAT, SOURCE, STATUS, DETAIL, RECORDED," status -o KIND,SIZE
usage_error "-o 'kind': named twice" status -o KIND,kind
usage_error "-o 'KIND,': an empty column name" status -o KIND,
usage_error "^storaged: error: status: --raw is for the table; --json has none" status --raw --json
usage_error "--noheadings is for the table; --json has none" status --noheadings --json
usage_error "-o/--output is for the table; --format=prometheus has none" status -o KIND --format=prometheus
usage_error "-o/--output does nothing for this command" check -o KIND
usage_error "^storaged: error: stop: --raw does nothing for this command" stop --raw
usage_error "^storaged: error: status: -o 'NOPE': no such column" status -o NOPE
usage_error "^storaged: error: unknown command 'stats'" stats
usage_error "-o 'MEMBERS': no such column; the columns: KIND," status -o MEMBERS
run_sd 0 stop

note "status --raw with nothing set up: an empty table (nothing, as findmnt), no sentence"
golden "status --raw, nothing" status --raw -o KIND,WHAT </dev/null

note "scan on a fixture inventory (a RAID1 with devid 2 missing)"
export STORAGED_INVENTORY=$TOPSRCDIR/tests/golden/degraded-allowed/inventory.ini
[ -f "$STORAGED_INVENTORY" ] || fail "no $STORAGED_INVENTORY"
scan_golden() { # NAME ARGS...: as golden, scan exits 1 (the RAID1 is incomplete)
	local name=$1 got rc
	shift
	got=$(sd scan "$@" 2>"$SCRATCH/err")
	rc=$?
	[ "$rc" = 1 ] || { cat "$SCRATCH/err"; fail "$name: storaged scan $* exited $rc, expected 1"; }
	diff -u - <(printf '%s\n' "$got") || fail "$name: storaged scan $* printed otherwise"
}
scan_golden "scan -o" -o label,present,expected,PROBLEMS <<'EOT'
LABEL PRESENT EXPECTED PROBLEMS
c03         1        2 incomplete
EOT
scan_golden "scan --raw" --raw -o FSID,MEMBERS,MISSING <<'EOT'
FSID MEMBERS MISSING
5e81a0c4-7d2b-4b8e-9c1f-0a1b2c3d4e5f /dev/loop0 devid\x202\x20missing
EOT
scan_golden "scan --noheadings" --noheadings -o +SEEDS <<'EOT'
5e81a0c4-7d2b-4b8e-9c1f-0a1b2c3d4e5f c03         1        2 /dev/loop0 1      devid 2 missing 
EOT
scan_golden "scan --json -o" --json -o fsid,missing <<'EOT'
{
   "filesystems": [
      {
         "fsid": "5e81a0c4-7d2b-4b8e-9c1f-0a1b2c3d4e5f",
         "missing": [
             2
         ]
      }
   ],
   "unreadable": [

   ]
}
EOT
usage_error "-o 'KIND': no such column; the columns: FSID, LABEL, PRESENT," scan -o KIND
# a fixture is for plans: start and sync would act on the live system
# as the fixture shows it (start ran, exit 0, on a fake mount table)
usage_error "^storaged: error: start: STORAGED_INVENTORY is set: .*start would act on the live system as that file shows it: unset it" start
usage_error "^storaged: error: sync: STORAGED_INVENTORY is set: " sync
[ -z "$(findmnt -rn -o TARGET | grep -F "$SCRATCH")" ] || fail "start under a fixture mounted something"
sd --dry-run >/dev/null 2>&1
[ $? != 2 ] || fail "--dry-run refused under a fixture"

note "scan without btrfs: the devices counted in words, never 'device(s)'"
printf '[device /dev/vda1]\ntype = ext4\nuuid = 3b1d0f62-0d0c-4b7a-9f59-2c7a1d5e8b10\ndevno = 252:1\n' >"$SCRATCH/one.ini"
: >"$SCRATCH/none.ini"
STORAGED_INVENTORY=$SCRATCH/one.ini golden "scan, one device" scan <<'EOT'
no btrfs filesystem found on 1 block device
EOT
STORAGED_INVENTORY=$SCRATCH/none.ini golden "scan, no device" scan <<'EOT'
no btrfs filesystem found: no block devices
EOT

note "-V and --version; --help lists every column -o takes"
v=$("$STORAGED" -V) || fail "storaged -V"
[ "$v" = "$("$STORAGED" --version)" ] || fail "-V prints '$v', --version otherwise"
case $v in "storaged "[0-9]*) ;; *) fail "-V prints '$v'" ;; esac
help=$("$STORAGED" --help)
for cmd in status scan; do
	# the names the error message lists are the ones --help lists
	listed=$(sd "$cmd" -o NO_SUCH 2>&1 | sed -n "s/.*the columns: \(.*\) (see .*/\1/p" | tr -d ' ' | tr ',' '\n')
	[ -n "$listed" ] || fail "$cmd -o NO_SUCH lists no columns"
	in_help=$(printf '%s\n' "$help" | sed -n "/^Columns of $cmd /,/^\$/p" | awk 'NR > 1 && NF { print ($1 == "*") ? $2 : $1 }')
	[ "$listed" = "$in_help" ] || fail "--help's columns of $cmd differ from -o's: $(diff <(echo "$in_help") <(echo "$listed") | tr '\n' ' ')"
	for c in $listed; do
		sd "$cmd" -o "$c" >/dev/null 2>&1
		[ $? != 2 ] || fail "$cmd -o $c refused"
	done
done
exit 0

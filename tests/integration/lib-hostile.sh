# shellcheck shell=bash
# The hostile-input corpus run, shared by t-hostile-check.sh (`storaged
# check`, needs no root) and t-hostile-input.sh (`storaged start`, root):
# every malformed config and fstab of tests/fixtures/bad/ (see its README:
# one row per fixture with the expected exit, lines and setup), plus a
# 10 000-entry fstab and an fstab over 4 MiB made here, gives the expected
# exit (2), a message "FILE:LINE:" for each expected line ("FILE:" for
# file-level problems), leaves the mount table as it was and writes no
# state directory.  Every case runs; the failures are listed together at
# the end.  `start` refuses an error within one fstab line, [area] or
# [btrfs] section alone (storaged(8), A BAD LINE AT BOOT): where check
# exits 2 it may exit 1, having failed those items as steps (each line
# still named) and set up the rest, which its `stop` then undoes: the
# mount table is compared after that stop.
#
# The caller sources lib.sh, makes $SCRATCH, $CONF ("[storaged]"), $FSTAB
# (empty) and $STATE (absent), sets HOSTILE_CMDS (the storaged commands to
# run on each input), and calls hostile_run.  A setup "owner=UID" that
# cannot be applied (no real root: a user namespace maps uid 0 only) skips
# that row, noted, when HOSTILE_OWNER_MAY_FAIL is set.

export LC_ALL=C # fixtures hold NUL bytes and invalid UTF-8
BAD=${TOPSRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/fixtures/bad
PROBLEMS=()
CASES=0
SKIPPED=0

# The whole mount table, except the scratch directories of other storaged
# tests that may run at the same time (all are /tmp/storaged-*): every path
# a fixture names lies in ours, which is compared.
mounts() {
	mount_snapshot | awk -v own="$SCRATCH" '
		{ other = 0
		  for (i = 1; i <= NF; i++)
			if ($i ~ "^/tmp/storaged-" && index($i, own) != 1) other = 1 }
		!other'
}
problem() {
	PROBLEMS+=("$*")
	echo "  !! $*"
}

# expect_where FILE LINES OUTPUT: LINES is "file" or a comma list of lines.
expect_where() {
	local file=$1 lines=$2 out=$3 l
	if [ "$lines" = file ]; then
		printf '%s\n' "$out" | grep -aqF -- "$file: " ||
			problem "$(basename "$file"): no file-level message '$file: ...'"
		return
	fi
	for l in ${lines//,/ }; do
		printf '%s\n' "$out" | grep -aqF -- "$file:$l: " ||
			problem "$(basename "$file"): no message for line $l ('$file:$l: ...')"
	done
}

# check_mounts NAME CMD: the mount table is as before.  A change that names
# nothing in our scratch directory (where every path of every fixture lies)
# was made by another process on this machine: shown, not counted, and the
# table taken again as the reference.
check_mounts() {
	local now diff m
	now=$(mounts)
	[ "$now" = "$BEFORE" ] && return
	diff=$(diff <(printf '%s\n' "$BEFORE") <(printf '%s\n' "$now") | grep '^[<>]')
	printf '%s\n' "$diff" | sed 's/^/  mount table: /'
	if printf '%s\n' "$diff" | grep -qF -- "$SCRATCH"; then
		problem "$1: storaged $2 changed the mount table"
		findmnt -rn -o TARGET | awk -v s="$SCRATCH" 'index($0, s) == 1' | sort -r |
			while read -r m; do umount -l "$m"; done
	else
		note "the mount table changed outside $SCRATCH: another process, not storaged"
	fi
	BEFORE=$(mounts)
}

# run_case CONF FSTAB FILE EXIT LINES: each of $HOSTILE_CMDS on one input.
run_case() {
	local conf=$1 fstab=$2 file=$3 want=$4 lines=$5 cmd out rc
	CASES=$((CASES + 1))
	for cmd in $HOSTILE_CMDS; do
		out=$(timeout 120 "$STORAGED" -c "$conf" -f "$fstab" --state-dir "$STATE" "$cmd" 2>&1)
		rc=$?
		printf '%s\n' "$out" | head -n 5 | cut -c1-200 | sed "s#^#  $cmd | #"
		if [ "$cmd" = start ] && [ "$want" = 2 ] && [ "$rc" = 1 ]; then
			printf '%s\n' "$out" | grep -q "refused, " ||
				problem "$(basename "$file"): storaged start exited 1 and refused no item"
			"$STORAGED" -c "$conf" -f "$fstab" --state-dir "$STATE" stop >/dev/null 2>&1
			rm -rf "$STATE"
		fi
		[ "$rc" = "$want" ] || { [ "$cmd" = start ] && [ "$want" = 2 ] && [ "$rc" = 1 ]; } ||
			problem "$(basename "$file"): storaged $cmd exited $rc, expected $want"
		expect_where "$file" "$lines" "$out"
		if [ -e "$STATE" ]; then
			problem "$(basename "$file"): storaged $cmd created the state directory"
			rm -rf "$STATE"
		fi
		check_mounts "$(basename "$file")" "$cmd"
	done
}

# apply_setup FILE SETUP: "-", "mode=0666" or "owner=UID".  Returns 1 when
# the owner cannot be given here and HOSTILE_OWNER_MAY_FAIL is set.
apply_setup() {
	case $2 in
	-) ;;
	mode=*) chmod "${2#mode=}" "$1" || fail "chmod ${2#mode=} $1" ;;
	owner=*)
		chown "${2#owner=}" "$1" 2>/dev/null && return 0
		[ -n "${HOSTILE_OWNER_MAY_FAIL:-}" ] || fail "chown ${2#owner=} $1"
		return 1
		;;
	*) fail "README: unknown setup '$2'" ;;
	esac
}

hostile_run() {
	[ -f "$BAD/README" ] || fail "no fixture table at '$BAD/README'"
	MNT=$SCRATCH/mnt
	IN=$SCRATCH/in
	mkdir -p "$MNT" "$IN"
	GOOD_CONF=$CONF    # "[storaged]"
	EMPTY_FSTAB=$FSTAB # empty
	BEFORE=$(mounts)
	note "fixtures of $BAD"
	listed=0
	while IFS=$'\t' read -r name want lines how what; do
		case $name in '' | '#'*) continue ;; esac
		listed=$((listed + 1))
		[ -f "$BAD/$name" ] || {
			problem "README lists '$name', which does not exist"
			continue
		}
		note "$name: $what"
		in=$IN/$name
		sed "s|@MNT@|$MNT|g" "$BAD/$name" >"$in" || fail "cannot copy $name"
		chmod 0644 "$in"
		apply_setup "$in" "$how" || {
			note "$name: skipped: '$how' needs real root (a user namespace maps uid 0 only)"
			SKIPPED=$((SKIPPED + 1))
			continue
		}
		case $name in
		*.conf) run_case "$in" "$EMPTY_FSTAB" "$in" "$want" "$lines" ;;
		*.fstab) run_case "$GOOD_CONF" "$in" "$in" "$want" "$lines" ;;
		*) problem "README: '$name' is neither a .conf nor a .fstab" ;;
		esac
	done <"$BAD/README"
	for f in "$BAD"/*.conf "$BAD"/*.fstab; do
		grep -q "^$(basename "$f")	" "$BAD/README" || problem "$(basename "$f") has no row in README"
	done
	[ "$listed" -ge 40 ] || problem "only $listed fixtures listed; the corpus must hold at least 40"

	note "generated: a 10 000-entry fstab, the last line repeating the first mount point"
	big=$IN/f-10000-entries.fstab
	for i in $(seq 1 9999); do
		echo "tmpfs $MNT/d$i tmpfs size=1M,noauto,x-storaged 0 0"
	done >"$big"
	echo "tmpfs $MNT/d1 tmpfs size=1M,noauto,x-storaged 0 0" >>"$big"
	run_case "$GOOD_CONF" "$big" "$big" 2 10000

	note "generated: an fstab over the 4 MiB limit"
	huge=$IN/f-over-4mib.fstab
	yes '# a comment line that pads this fstab beyond the four MiB storaged reads' |
		head -c $((4 * 1024 * 1024 + 4096)) >"$huge"
	run_case "$GOOD_CONF" "$huge" "$huge" 2 file

	note "$CASES cases, ${#PROBLEMS[@]} problems, $SKIPPED fixtures skipped"
	if [ ${#PROBLEMS[@]} -gt 0 ]; then
		printf '  %s\n' "${PROBLEMS[@]}" >&2
		fail "${#PROBLEMS[@]} problems with hostile input"
	fi
}

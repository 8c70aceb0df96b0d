#!/bin/bash
# The SysV script's LSB header, read by Debian's own parser (insserv) in a
# copy of Debian 12's rcS world: no warning about storaged, no loop, and the
# boot order we promise: after udev, $local_fs and networking, before
# mountnfs and everything that requires $remote_fs; at shutdown after
# sendsigs and before networking and umountfs.  Also: POSIX sh syntax (sh
# -n, dash -n, checkbashisms when installed) and the chkconfig line.
. "$(dirname "$0")/lib.sh"
scratch
need_tool insserv insserv

D=$SCRATCH/etc/init.d
mkdir -p "$D" "$SCRATCH/etc/insserv/overrides" "$SCRATCH/dep"
for l in S 0 1 2 3 4 5 6; do mkdir -p "$SCRATCH/etc/rc$l.d"; done
initscript "$D/storaged"

# One stub per Debian script, carrying its real header.
awk -v d="$D" '
	/^=== / { f = d "/" $2; print "#!/bin/sh" > f; next }
	f != "" { print > f }
' "$HERE/debian-initscripts.headers"
for f in "$D"/*; do
	[ "$(basename "$f")" = storaged ] || echo 'exit 0' >>"$f"
	chmod 0755 "$f"
done

note "sh syntax"
sh -n "$D/storaged" || fail "sh -n"
if command -v dash >/dev/null; then dash -n "$D/storaged" || fail "dash -n"; fi
if command -v checkbashisms >/dev/null; then
	checkbashisms "$D/storaged" || fail "checkbashisms"
else
	note "checkbashisms not installed (devscripts): skipped that check"
fi
grep -Eq '^# chkconfig: [0-6]+ [0-9]+ [0-9]+$' "$D/storaged" || fail "no valid chkconfig: line"
grep -Eq '^# description: ' "$D/storaged" || fail "no chkconfig description: line"
for tag in Provides Required-Start Required-Stop Should-Start Should-Stop \
	X-Start-Before Default-Start Default-Stop Short-Description Description; do
	sed -n '/^### BEGIN INIT INFO/,/^### END INIT INFO/p' "$D/storaged" |
		grep -Eq "^# $tag:[[:space:]]+[^[:space:]]" || fail "LSB header lacks $tag"
done

note "insserv"
cd "$D" || fail "cd"
out=$(insserv -p "$D" -o "$SCRATCH/etc/insserv/overrides" -c "$HERE/insserv.conf" \
	-i "$SCRATCH/dep" -n -s -v 2>&1)
rc=$?
printf '%s\n' "$out" | sed 's/^/  | /'
[ "$rc" = 0 ] || fail "insserv exited $rc"
printf '%s\n' "$out" | grep -E '^insserv: ' | grep -Ev '^insserv: (Loading |dryrun, )' |
	grep -Eiq 'storaged|loop|broken|missing|warning' &&
	fail "insserv complains (see above)"

# seq KIND LEVEL SCRIPT: its sequence number in insserv's -s output.
seq_of() {
	printf '%s\n' "$out" | awk -F: -v k="$1" -v l="$2" -v s="$3" '
		$1 == k && $4 == s && index(" " $3 " ", " " l " ") { print $2 + 0; exit }'
}
before() { # KIND LEVEL A B: A runs before B
	local a b
	a=$(seq_of "$1" "$2" "$3")
	b=$(seq_of "$1" "$2" "$4")
	[ -n "$a" ] || fail "$3 not in the $1 sequence of runlevel $2"
	[ -n "$b" ] || fail "$4 not in the $1 sequence of runlevel $2"
	[ "$a" -lt "$b" ] || fail "$1 $2: $3 ($a) should come before $4 ($b)"
	note "$1 $2: $3 ($a) before $4 ($b)"
}
for s in udev mountkernfs.sh checkfs.sh mountall.sh networking; do
	before S S "$s" storaged
done
for s in mountnfs.sh mountnfs-bootclean.sh bootmisc.sh; do
	before S S storaged "$s"
done
for l in 0 6; do
	before K "$l" sendsigs storaged
	before K "$l" storaged networking
	before K "$l" storaged umountfs
done
[ -z "$(seq_of S 2 storaged)" ] || fail "storaged should start in rcS only"

note "a header that reaches into \$remote_fs would loop (why X-Start-Before names mountnfs)"
sed -i 's/^# X-Start-Before:.*/# X-Start-Before:    $remote_fs/' "$D/storaged"
loop=$(insserv -p "$D" -o "$SCRATCH/etc/insserv/overrides" -c "$HERE/insserv.conf" \
	-i "$SCRATCH/dep" -n -s 2>&1)
printf '%s\n' "$loop" | grep -q 'loop' || fail "insserv did not detect the loop: parser not really used?"
exit 0

#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# C23: a mount helper (/sbin/mount.TYPE) is called as mount(8) calls it,
# "SOURCE MOUNTPOINT -o OPTS", with the entry's own mount point (never
# /proc/self/fd/N) and without storaged's own options; utab and findmnt
# show that mount point.  A helper that exits 0 with nothing mounted is a
# failure naming the helper and the mount point.  While the owner of a
# directory on the way keeps exchanging it with a link to a root-owned
# one, nothing the helper mounts may stay on the link's target.
# The helper /sbin/mount.c23fs exists only in a private mount namespace
# (an overlay on the helper directory, lib.sh); utab is the test's own
# file (LIBMOUNT_UTAB), so the host's /run/mount/utab is never written.
. "$(dirname "$0")/lib.sh"
setup
need_private_helpers
. "$(dirname "$0")/lib-c20.sh"

N=${C23_RACE_STARTS:-30}
c20_home
c20_root_dir "$SCRATCH/target"
c20_user_dir h
mkdir -p "$SCRATCH/m/a" "$SCRATCH/m/b"
# the attackers are held (SIGSTOP) between rounds: woken to end them
c23_end_attackers() {
	c20_resume 2>/dev/null
	c20_stop_attackers
}
CLEANUP_HOOK=c23_end_attackers

cat >"$SCRATCH/upper/mount.c23fs" <<EOT
#!/bin/sh
# mount.c23fs SPEC DIR [-o OPTS]: logs its arguments; a SPEC "nothing:..."
# exits 0 with nothing mounted; else a tmpfs on DIR by the name it was
# given (mount(8) writes that name to utab: --no-canonicalize).
printf '%s\n' "\$*" >>"$SCRATCH/helper.argv"
case "\$1" in nothing:*) exit 0 ;; esac
opts=size=1M
[ "\${3:-}" = -o ] && opts="\$opts,\$4"
exec mount --no-canonicalize -t tmpfs -o "\$opts" "\$1" "\$2"
EOT
chmod 0755 "$SCRATCH/upper/mount.c23fs"
: >"$SCRATCH/helper.argv"
export LIBMOUNT_UTAB=$SCRATCH/utab
cat >"$FSTAB" <<EOT
srvA  $SCRATCH/m/a  c23fs  rw,noauto,x-storaged,x-c23.tag,x-storaged.mount-timeout=20s  0 0
EOT

# The race runs outside the namespace: renames are seen in both.
c20_attack h "$SCRATCH/target"
c20_pause

in_helper_ns '
	S=$1 SD=$2 CONF=$3 FSTAB=$4 STATE=$5 N=$6 SWAP_PIDS=$7
	sd() { "$SD" -c "$CONF" -f "$FSTAB" --state-dir "$STATE" "$@"; }
	mounted_on() { awk -v p="$1" '\''$5 == p { f = 1 } END { exit !f }'\'' /proc/self/mountinfo; }
	echo "== peer"
	mkdir -p "$S/m/peer"
	mount -t c23fs -o rw,x-c23.tag srvA "$S/m/peer"; echo "peer exit $?"
	echo "peer argv: $(tail -n 1 "$S/helper.argv" | sed "s|$S/m/peer|$S/m/a|")"
	umount "$S/m/peer"
	echo "== real path"
	sd start; echo "start exit $?"
	echo "argv: $(tail -n 1 "$S/helper.argv")"
	echo "findmnt: $(findmnt -rn -o TARGET,SOURCE,FSTYPE --mountpoint "$S/m/a")"
	echo "findmnt options: $(findmnt -m -rn -o OPTIONS --mountpoint "$S/m/a")"
	echo "utab: $(cat "$S/utab" 2>/dev/null)"
	sd stop; echo "stop exit $?"
	mounted_on "$S/m/a" && echo "still mounted after stop"
	echo "== nothing mounted"
	echo "nothing:/x  $S/m/b  c23fs  noauto,x-storaged,x-storaged.mount-timeout=20s  0 0" >"$FSTAB"
	t0=$(date +%s)
	sd start; echo "nothing exit $? after $(( $(date +%s) - t0 )) s"
	sd stop >/dev/null 2>&1
	echo "== race"
	echo "srvR  $S/home/u/h  c23fs  noauto,x-storaged  0 0" >"$FSTAB"
	kill -CONT $SWAP_PIDS
	ok=0 esc=0 stop_esc=0 undone=0 refused=0
	i=0
	# N starts, then on until one has mounted as asked (at most 10 N): a
	# start wins against the swapper 1 time in 5 to 10
	while [ "$i" -lt "$N" ] || { [ "$ok" = 0 ] && [ "$i" -lt $((10 * N)) ]; }; do
		i=$((i + 1))
		sd start >"$S/race.out" 2>&1; rc=$?
		grep -q "was renamed or replaced" "$S/race.out" && undone=$((undone + 1))
		if mounted_on "$S/target"; then
			esc=$((esc + 1)); sed "s/^/#   start $i: /" "$S/race.out"
		elif [ "$rc" = 0 ]; then ok=$((ok + 1))
		else refused=$((refused + 1)); fi
		[ "$refused" -le 3 ] && [ "$rc" != 0 ] && sed "s/^/#   start $i: /" "$S/race.out"
		sd stop >/dev/null 2>&1
		mounted_on "$S/target" && stop_esc=$((stop_esc + 1))
		kill -STOP $SWAP_PIDS
		for _ in 1 2 3; do
			awk -v s="$S/" '\''index($5, s) == 1 { print $5 }'\'' /proc/self/mountinfo |
				sort -r | while read -r m; do umount -l "$m"; done
		done
		kill -CONT $SWAP_PIDS
	done
	kill -STOP $SWAP_PIDS
	echo "race: starts $i; mounted on the real directory: $ok; refused: $refused; helper mounts found elsewhere and undone: $undone; escapes: $esc; after stop: $stop_esc"
	exit 0
' "$SCRATCH" "$STORAGED" "$CONF" "$FSTAB" "$STATE" "$N" "$C20_PIDS" >"$SCRATCH/out" 2>&1
c23_end_attackers
sed 's/^/  | /' "$SCRATCH/out"

out() { grep -q -- "$1" "$SCRATCH/out"; }
out "^start exit 0$" || fail "start with the helper failed"
out "^peer exit 0$" || fail "mount(8) itself could not run the helper"
argv=$(sed -n 's/^argv: //p' "$SCRATCH/out")
peer=$(sed -n 's/^peer argv: //p' "$SCRATCH/out")
[ "$argv" = "$peer" ] || fail "the helper was called as '$argv', mount(8) calls it as '$peer'"
case $argv in "srvA $SCRATCH/m/a "*) ;; *) fail "the helper's mount point is not $SCRATCH/m/a: '$argv'" ;; esac
out "^findmnt: $SCRATCH/m/a srvA tmpfs$" || fail "findmnt does not show srvA on $SCRATCH/m/a"
out "^findmnt options: .*x-c23.tag" || fail "findmnt lacks the entry's x-c23.tag (utab not matched)"
out "^utab: .*TARGET=$SCRATCH/m/a " || fail "utab does not record $SCRATCH/m/a"
out "/proc/self/fd" && fail "a /proc/self/fd name reached the helper, utab or the output"
out "^stop exit 0$" || fail "stop failed"
out "still mounted after stop" && fail "stop did not unmount the helper's mount"
out "^nothing exit 1 " || fail "a helper that mounted nothing was not a failure"
out "mount.c23fs.*$SCRATCH/m/b" || fail "the failure does not name the helper and the mount point"
s=$(sed -n 's/^nothing exit 1 after \([0-9]*\) s$/\1/p' "$SCRATCH/out")
[ -n "$s" ] && [ "$s" -lt $((5 * TIME_SCALE)) ] || fail "the failure waited ${s:-?} s (the mount timeout), not failing at once"
out "^race: " || fail "the race did not run"
esc=$(sed -n 's/^race: .*escapes: \([0-9]*\); after stop: \([0-9]*\)$/\1 \2/p' "$SCRATCH/out")
[ "$esc" = "0 0" ] || fail "helper mounts escaped to the link's target (start, stop): $esc"
ok=$(sed -n 's/^race: .*real directory: \([0-9]*\);.*/\1/p' "$SCRATCH/out")
[ "${ok:-0}" -gt 0 ] || fail "no start mounted on the real directory: the race was not exercised"
exit 0

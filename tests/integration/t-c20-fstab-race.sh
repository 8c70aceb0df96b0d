#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# C20 for fstab entries: the user who owns $SCRATCH/home/u keeps exchanging
# a name there with a symbolic link while storaged starts and stops.
#  - tmpfs: mount point home/u/mnt, link to the root-owned "target";
#  - bind target: home/u/bt, link to "target";
#  - bind source: home/u/src, link to the root-owned "secret", bound on
#    the root-owned "bindtgt": the secret must never show there.
# Every start mounts on (or from) the real directory or refuses.
. "$(dirname "$0")/lib.sh"
setup
. "$(dirname "$0")/lib-c20.sh"

N=${C20_FSTAB_STARTS:-100}
c20_home
c20_root_dir "$SCRATCH/target"
c20_root_dir "$SCRATCH/secret"
c20_root_dir "$SCRATCH/bindsrc"
mkdir -p "$SCRATCH/bindtgt"

# race KIND NAME LINK_TARGET FSTAB_LINE: N starts and stops; escapes counted.
race() {
	local kind=$1 name=$2 to=$3 line=$4 i rc ok=0 refused=0 esc=0 stop_esc=0 tidy=0
	c20_user_dir "$name"
	echo "$line" >"$FSTAB"
	c20_attack "$name" "$to"
	i=0
	# N starts, then on until one has mounted as asked (at most 10 N): a
	# start wins against the swapper 1 time in 5 to 10
	while [ "$i" -lt "$N" ] || { [ "$ok" = 0 ] && [ "$i" -lt $((10 * N)) ]; }; do
		i=$((i + 1))
		sd start >"$SCRATCH/out" 2>&1
		rc=$?
		if escaped "$kind"; then
			esc=$((esc + 1))
		elif [ "$rc" = 0 ]; then
			ok=$((ok + 1))
		else
			refused=$((refused + 1))
		fi
		sd stop >"$SCRATCH/out.stop" 2>&1
		escaped "$kind" && stop_esc=$((stop_esc + 1))
		if awk -v s="$SCRATCH/" 'index($5, s) == 1 { f = 1 } END { exit !f }' /proc/self/mountinfo; then
			tidy=$((tidy + 1))
			note "$kind: start $i (exit $rc) left after stop:" \
				"$(awk -v s="$SCRATCH/" 'index($5, s) == 1 { print $1, $5 }' /proc/self/mountinfo | tr '\n' ' ')"
			sed 's/^/#   start: /' "$SCRATCH/out" | tail -n 5
			sed 's/^/#   stop: /' "$SCRATCH/out.stop" | tail -n 5
			c20_pause
			c20_unmount_all
			c20_resume
		fi
	done
	c20_stop_attackers
	c20_unmount_all
	note "$kind: starts: $i; mounted as asked: $ok; refused: $refused; escapes: $esc; after stop: $stop_esc; stop left mounts: $tidy"
	ESC=$((ESC + esc + stop_esc))
	LEFT=$((LEFT + tidy))
	SUMMARY="$SUMMARY $kind=$esc+$stop_esc"
	LEFT_SUMMARY="$LEFT_SUMMARY $kind=$tidy"
	[ "$ok" -gt 0 ] || NONE="$NONE $kind"
}

# escaped KIND: the target covered, or the secret shown through the bind.
escaped() {
	case $1 in
	bind-source) [ -e "$SCRATCH/bindtgt/rootfile" ] ;;
	*) c20_mounted_on "$SCRATCH/target" ;;
	esac
}

ESC=0 LEFT=0 SUMMARY= LEFT_SUMMARY= NONE=
race tmpfs mnt "$SCRATCH/target" \
	"tmpfs  $SCRATCH/home/u/mnt  tmpfs  size=4M,noauto,x-storaged  0 0"
race bind-target bt "$SCRATCH/target" \
	"$SCRATCH/bindsrc  $SCRATCH/home/u/bt  none  bind,noauto,x-storaged  0 0"
race bind-source src "$SCRATCH/secret" \
	"$SCRATCH/home/u/src  $SCRATCH/bindtgt  none  bind,noauto,x-storaged  0 0"
note "escapes (start+stop):$SUMMARY"
note "stops that left mounts behind:$LEFT_SUMMARY (total $LEFT)"
c20_mounted_on "$SCRATCH/target" && fail "the host has a mount on the target"
c20_mounted_on "$SCRATCH/bindtgt" && fail "the host still has the bind on bindtgt"
[ "$ESC" = 0 ] || fail "$ESC mounts escaped to a directory of the user's choosing"
# A mount made while the user had just exchanged the names sits on
# "NAME.lnk" (the real directory, under its new name): stop finds it by its
# never-reused ID and unmounts it there.
[ "$LEFT" = 0 ] || fail "$LEFT stops left mounts behind:$LEFT_SUMMARY"
[ -z "$NONE" ] || fail "no start mounted for:$NONE: the race was not exercised"
exit 0

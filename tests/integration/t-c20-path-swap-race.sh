#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# C20: an area over ~/rpmbuild while its owner keeps exchanging rpmbuild
# with a symbolic link to a root-owned directory.  Every start must set the
# area up on the real rpmbuild or refuse; nothing may ever be mounted on
# the link's target (and stop must not unmount anything there either).
. "$(dirname "$0")/lib.sh"
setup
. "$(dirname "$0")/lib-c20.sh"

N=${C20_STARTS:-150}
c20_home
c20_user_dir rpmbuild
c20_root_dir "$SCRATCH/target"
cat >>"$CONF" <<EOT
[area rb]
path = $SCRATCH/home/u/rpmbuild
backend = tmpfs
size = 16M
EOT
c20_attack rpmbuild "$SCRATCH/target"

ok=0 refused=0 escapes=0 stop_escapes=0 other=0
i=0
# N starts, then on until one has mounted as asked (at most 10 N): a
# start wins against the swapper 1 time in 5 to 10
while [ "$i" -lt "$N" ] || { [ "$ok" = 0 ] && [ "$i" -lt $((10 * N)) ]; }; do
	i=$((i + 1))
	sd start >"$SCRATCH/out" 2>&1
	rc=$?
	if c20_mounted_on "$SCRATCH/target"; then
		escapes=$((escapes + 1))
		note "start $i mounted on the target (exit $rc)"
	elif [ "$rc" = 0 ]; then
		ok=$((ok + 1))
	else
		refused=$((refused + 1))
	fi
	sd stop >"$SCRATCH/out.stop" 2>&1
	src=$?
	if c20_mounted_on "$SCRATCH/target"; then
		stop_escapes=$((stop_escapes + 1))
	fi
	if [ "$src" != 0 ] || c20_mounted_on "$SCRATCH/target" ||
		awk -v s="$SCRATCH/" 'index($5, s) == 1 { f = 1 } END { exit !f }' /proc/self/mountinfo; then
		# what stop could not undo: tidied with the attacker held, so
		# that the next start begins from a clean slate
		other=$((other + 1))
		c20_pause
		c20_unmount_all
		c20_restore rpmbuild
		rm -rf "$STATE"
		c20_resume
	fi
done
c20_stop_attackers
note "starts: $i; area on rpmbuild: $ok; refused: $refused; mounted on the target: $escapes; target still covered after stop: $stop_escapes; stop left mounts behind: $other"
c20_mounted_on "$SCRATCH/target" && fail "the host has a mount on the target"
[ "$escapes" = 0 ] || fail "$escapes of $i starts mounted the area on the target"
[ "$stop_escapes" = 0 ] || fail "$stop_escapes of $i stops left the target covered"
[ "$ok" -gt 0 ] || fail "no start set the area up: the race was not exercised"
exit 0

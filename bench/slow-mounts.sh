#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Slow-mounts benchmark (issue 6, benchmark 3).  25 entries of type
# `slowfs`, whose mount helper /sbin/mount.slowfs (made by this script,
# removed when it exits) sleeps 1 s and then mounts a tmpfs on the target:
#
#   20 independent   $W/m/s1 ... $W/m/s20
#   a chain of 5     $W/m/c1, $W/m/c1/c2, ... $W/m/c1/c2/c3/c4/c5
#
# listed in that order (the chain last, parents first), mounted by
#
#   storaged start   with jobs = 8
#   mount -a -T      one at a time, in fstab order
#   mount -a -F -T   one process per entry, all at once, in no order
#
# The ideal is the critical path: the chain takes 5 s and the other 20
# helper-seconds fit in the 7 slots left beside it, so a scheduler that
# starts the longest chain first finishes in about 5 s (level-by-level waves
# take 7 s).  Goal: storaged <= 1.2 x 5 s with the order right.
#
# Every helper appends "TARGET START END" (epoch seconds) to a log, from
# which the script checks that each chain member started after its parent
# had been mounted and counts how many helpers ran at once; it also checks
# /proc/self/mountinfo: all 25 mounted, each chain member exactly once and
# on top of its parent.  Each method is run ROUNDS times (median reported).
#
#   STORAGED=path/to/storaged ROUNDS=2 bench/slow-mounts.sh
. "$(dirname "$0")/lib.sh"
ROUNDS=${ROUNDS:-2}
METHODS=${METHODS:-storaged mount mount_F}
IDEAL=5
GOAL=1.2
HELPER=/sbin/mount.slowfs
bench_setup slow
[ -e "$HELPER" ] && bench_die "$HELPER already exists (someone else's?); not touching it"
bench_state_tmpfs
M=$W/m
LOG=$W/helper.log

bench_own_file "$HELPER"
cat >"$HELPER" <<EOT
#!/bin/sh
# Made by storaged's bench/slow-mounts.sh (scratch $W); removed when it exits.
# mount.slowfs SOURCE TARGET [-o OPTIONS]: sleep 1 s, then mount a tmpfs.
t0=\$(date +%s.%N)
sleep 1
mount -i -t tmpfs -o size=1M "\$1" "\$2" || exit 32
echo "\$2 \$t0 \$(date +%s.%N)" >>"$LOG"
EOT
chmod 0755 "$HELPER"

: >"$W/fstab.sd"
: >"$W/fstab.mount"
: >"$W/expect"
entry() { # TARGET PARENT
	echo "slow $1 slowfs noauto,x-storaged,X-mount.mkdir 0 0" >>"$W/fstab.sd"
	echo "slow $1 slowfs X-mount.mkdir 0 0" >>"$W/fstab.mount"
	echo "$1 $2" >>"$W/expect"
}
mkdir -p "$M"
for i in $(seq 1 20); do entry "$M/s$i" /; done
p=/ t=$M
for k in 1 2 3 4 5; do
	t=$t/c$k
	entry "$t" "$p"
	p=$t
done
CHAIN=$(awk '$2 != "/" || $1 ~ /\/c1$/ { print $1 }' "$W/expect")

printf '[storaged]\njobs = 8\nmount-timeout = 60s\n' >"$W/storaged.conf"
chmod 0644 "$W/storaged.conf"
SD=("$STORAGED" -q -c "$W/storaged.conf" -f "$W/fstab.sd" --state-dir "$W/run")

run_storaged() { "${SD[@]}" start >"$W/out" 2>&1 || { cat "$W/out" >&2; bench_die "storaged start failed"; }; }
run_mount() { mount -a -T "$W/fstab.mount" >"$W/out" 2>&1 || { cat "$W/out" >&2; bench_die "mount -a failed"; }; }
run_mount_F() { mount -a -F -T "$W/fstab.mount" >"$W/out" 2>&1 || true; }

reset() {
	unmount_below "$M"
	rm -rf "${M:?}/c1" "${W:?}/run/"*
	: >"$LOG"
}

# From the helper log: "ORDER ok|WRONG (details)" and the peak concurrency.
analyse_log() {
	python3 - "$LOG" $CHAIN <<'EOF'
import sys
log, chain = sys.argv[1], sys.argv[2:]
rows = {}
for line in open(log):
    t, a, b = line.split()
    rows[t] = (float(a), float(b))
wrong = []
for parent, child in zip(chain, chain[1:]):
    if child not in rows or parent not in rows:
        wrong.append("%s or its parent not mounted by the helper" % child.rsplit("/", 1)[1])
    elif rows[child][0] < rows[parent][1]:
        wrong.append("%s started %.2f s before %s was mounted" % (child.rsplit("/", 1)[1],
                     rows[parent][1] - rows[child][0], parent.rsplit("/", 1)[1]))
ev = sorted([(a, 1) for a, b in rows.values()] + [(b, -1) for a, b in rows.values()], key=lambda e: (e[0], e[1]))
cur = peak = 0
for _, d in ev:
    cur += d
    peak = max(peak, cur)
print("order=%s peak=%d helpers=%d%s" % ("ok" if not wrong else "WRONG", peak, len(rows),
      (" (" + "; ".join(wrong) + ")") if wrong else ""))
EOF
}

declare -A T INFO
echo "25 slowfs entries (1 s helper each): 20 independent + a chain of 5, in $M"
for ((r = 1; r <= ROUNDS; r++)); do
	for m in $METHODS; do
		reset
		tstart
		"run_$m"
		tstop
		T[$m]="${T[$m]:-} $ELAPSED"
		a=$(analyse_log)
		if nest=$(check_nesting "$W/expect" 2>&1); then nest="nesting ok"; else nest="nesting WRONG: $(echo "$nest" | grep -c .) problem(s): $(echo "$nest" | head -3 | tr '\n' ';')"; fi
		echo "  run $r ${m/_F/ -F}: ${ELAPSED} ms, $a, $nest"
		INFO[$m]="${a%% (*}, $(echo "$nest" | sed 's/\(problem(s)\).*/\1/')"
		case $m in
		storaged | mount)
			case "$a $nest" in
			*order=ok*"nesting ok"*) ;;
			*) bench_die "$m got the order wrong" ;;
			esac
			;;
		esac
	done
done
reset
ideal=$((IDEAL * 1000))
echo
printf 'median of %d runs:\n' "$ROUNDS"
printf '  ideal (critical path)   %6d ms\n' "$ideal"
# only the methods METHODS ran; storaged against each other one it ran beside
vs() { [ -n "${s:-}" ] && printf '   storaged / %s = %s' "$1" "$(ratio "$s" "$2")"; }
# shellcheck disable=SC2086
if [ -n "${T[storaged]:-}" ]; then
	s=$(median ${T[storaged]})
	printf '  storaged start, jobs 8  %6d ms  = %s x ideal   (%s)\n' "$s" "$(ratio "$s" "$ideal")" "${INFO[storaged]}"
fi
# shellcheck disable=SC2086
if [ -n "${T[mount]:-}" ]; then
	a=$(median ${T[mount]})
	printf '  mount -a                %6d ms  = %s x ideal%s   (%s)\n' "$a" "$(ratio "$a" "$ideal")" "$(vs "mount -a" "$a")" "${INFO[mount]}"
fi
# shellcheck disable=SC2086
if [ -n "${T[mount_F]:-}" ]; then
	f=$(median ${T[mount_F]})
	printf '  mount -a -F             %6d ms  = %s x ideal%s   (%s)\n' "$f" "$(ratio "$f" "$ideal")" "$(vs "mount -a -F" "$f")" "${INFO[mount_F]}"
fi
[ -z "${s:-}" ] || printf '  goal: storaged <= %s x ideal with the order right -> %s\n' "$GOAL" "$(verdict "$(ratio "$s" "$ideal")" "$GOAL")"

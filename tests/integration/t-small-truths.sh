#!/bin/bash
# Small things storaged says, each checked against the system:
# - `seed = no` with the default sizes (auto) plans and sets up an empty
#   area of the size the plan names (findmnt's size= and nr_inodes=);
# - `size = 100%` (documented, tmpfs's own size=100%) is set up at MemTotal:
#   the memory check compares RAM + swap with RAM + swap, not MemAvailable;
 name the same files after a resident storaged
#   changed to /: SIGHUP reloads them (a new fstab entry gets mounted);
# - an option the command would ignore is a usage error that changes
#   nothing (start --json, status --local, scan --dry-run).
. "$(dirname "$0")/lib.sh"
setup
mkdir -p "$SCRATCH/data" "$SCRATCH/m1" "$SCRATCH/m2"
head -c 100000 /dev/urandom >"$SCRATCH/data/kept"

note "seed = no, size and inodes auto: the area is set up empty, sized as planned"
cat >"$CONF" <<EOT
[storaged]
[area build]
path = $SCRATCH/data
seed = no
EOT
run_sd 0 --dry-run
plan=$OUT
size=$(printf '%s\n' "$plan" | sed -n 's/.* size=\([0-9]*\)M (auto.*/\1/p')
inodes=$(printf '%s\n' "$plan" | sed -n 's/.* nr_inodes=\([0-9]*\) (auto.*/\1/p')
[ -n "$size" ] && [ -n "$inodes" ] || fail "the plan names no auto size and inodes"
run_sd 0 start
is_mountpoint "$SCRATCH/data" || fail "the seed = no area is not mounted"
opts=$(findmnt -rn -o OPTIONS --mountpoint "$SCRATCH/data" | tail -n 1)
printf '%s\n' "$opts" | grep -q "size=$((size * 1024))k" || fail "mounted with '$opts', the plan said size=${size}M"
printf '%s\n' "$opts" | grep -q "nr_inodes=$inodes" || fail "mounted with '$opts', the plan said nr_inodes=$inodes"
[ -z "$(ls -A "$SCRATCH/data")" ] || fail "seed = no copied: $(ls -A "$SCRATCH/data")"
run_sd 0 stop
[ -f "$SCRATCH/data/kept" ] || fail "the directory lost its file"
printf '[storaged]\n' >"$CONF"

note "size = 100%: of RAM, as tmpfs's size=100%; accepted and set up at MemTotal"
cat >"$CONF" <<EOT
[storaged]
[area all]
path = $SCRATCH/data
size = 100%
inodes = 1000
seed = no
EOT
run_sd 0 check
run_sd 0 --dry-run
expect_out "(100% of RAM)"
total_k=$(awk '/^MemTotal:/ { print $2 }' /proc/meminfo)
run_sd 0 start
opts=$(findmnt -rn -o OPTIONS --mountpoint "$SCRATCH/data" | tail -n 1)
size_k=$(printf '%s\n' "$opts" | sed -n 's/.*size=\([0-9]*\)k.*/\1/p')
[ -n "$size_k" ] && [ "$size_k" -le "$total_k" ] && [ "$size_k" -ge $((total_k - 4)) ] ||
	fail "size = 100% mounted with '$opts', MemTotal is ${total_k}k"
run_sd 0 stop
note "...while a size above RAM + swap is still refused without force = yes"
swap_k=$(awk '/^SwapTotal:/ { print $2 }' /proc/meminfo)
sed -i "s/^size = .*/size = $((total_k + swap_k + 1024))k/" "$CONF"
run_sd 1 check
expect_out "above RAM + swap"
expect_out "force = yes"
printf '[storaged]\n' >"$CONF"

note "options a command would ignore: usage errors, nothing changed"
echo "tmpfs  $SCRATCH/m1  tmpfs  size=1M,noauto,x-storaged  0 0" >"$FSTAB"
rm -rf "$STATE"
for args in "start --json" "status --local" "scan --dry-run" "check --json" "stop --foreground" \
	"--dry-run --foreground start" "status --json --format=prometheus"; do
	# shellcheck disable=SC2086 # one word per option
	run_sd 2 $args
	expect_out "storaged"
	is_mountpoint "$SCRATCH/m1" && fail "'$args' mounted"
	[ -e "$STATE" ] && fail "'$args' made the state directory"
done
expect_out "two formats"

note "relative -c and -f: the resident reloads them at SIGHUP"
cp "$CONF" "$SCRATCH/rel.conf"
chmod 0644 "$SCRATCH/rel.conf"
(cd "$SCRATCH" && "$STORAGED" -c rel.conf -f fstab --state-dir "$STATE" --daemon start) ||
	fail "start --daemon with relative paths failed"
for _ in $(seq 50); do [ -s "$STATE/storaged.pid" ] && break; sleep 0.1; done
pid=$(cat "$STATE/storaged.pid" 2>/dev/null)
[ -n "$pid" ] && kill -0 "$pid" 2>/dev/null || fail "no resident storaged"
stop_resident() { kill "$pid" 2>/dev/null; }
CLEANUP_HOOK=stop_resident
is_mountpoint "$SCRATCH/m1" || fail "the first pass did not mount $SCRATCH/m1"
[ "$(readlink "/proc/$pid/cwd")" = / ] || fail "the resident did not change to /"
echo "tmpfs  $SCRATCH/m2  tmpfs  size=1M,noauto,x-storaged  0 0" >>"$FSTAB"
kill -HUP "$pid"
for _ in $(seq 50); do is_mountpoint "$SCRATCH/m2" && break; sleep 0.1; done
is_mountpoint "$SCRATCH/m2" || fail "SIGHUP did not read the relative fstab again: $SCRATCH/m2 not mounted"
kill -0 "$pid" 2>/dev/null || fail "the resident left at SIGHUP"
run_sd 0 stop
is_mountpoint "$SCRATCH/m1" || is_mountpoint "$SCRATCH/m2" && fail "stop left a mount"
# it has left once it is gone or a zombie (its parent, the subshell, is
# gone: whoever reaps orphans here may be slower than this test)
for _ in $(seq 50); do
	st=$(awk '{ print $3 }' "/proc/$pid/stat" 2>/dev/null)
	[ -z "$st" ] || [ "$st" = Z ] && break
	sleep 0.1
done
[ -z "$st" ] || [ "$st" = Z ] || fail "stop did not end the resident (pid $pid, state $st)"
exit 0

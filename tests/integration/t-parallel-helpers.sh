#!/bin/bash
# Mounts run in parallel up to `jobs`, in dependency order, through a mount
# helper (/sbin/mount.TYPE) that takes a second: concurrency and order are
# checked from the helper's own log, not from elapsed time.  The helper is
# placed in a private mount namespace (an overlay on the helper directory),
# so the host's /sbin is never touched and every mount made here vanishes
# with the namespace.
. "$(dirname "$0")/lib.sh"
setup
need_private_helpers
mkdir -p "$SCRATCH/m"
LOG=$SCRATCH/helper.log
cat >"$SCRATCH/upper/mount.slowtest" <<EOT
#!/bin/sh
# mount.slowtest SPEC DIR [-o OPTS]: logs, waits a second, mounts a tmpfs.
# storaged gives the mount point as /proc/self/fd/N (C20): logged by its path
mp=\$(readlink -f "\$2")
echo "start \$mp" >>"$LOG"
sleep 1
mount -t tmpfs -o size=1M slowtest "\$2"
rc=\$?
echo "end \$mp" >>"$LOG"
exit \$rc
EOT
chmod 0755 "$SCRATCH/upper/mount.slowtest"
{
	for i in 1 2 3 4 5 6; do
		echo "slow$i  $SCRATCH/m/i$i  slowtest  noauto,x-storaged,X-mount.mkdir  0 0"
	done
	echo "slowc  $SCRATCH/m/c/c2/c3  slowtest  noauto,x-storaged,X-mount.mkdir  0 0"
	echo "slowc  $SCRATCH/m/c/c2  slowtest  noauto,x-storaged,X-mount.mkdir  0 0"
	echo "slowc  $SCRATCH/m/c  slowtest  noauto,x-storaged,X-mount.mkdir  0 0"
} >"$FSTAB"
printf '[storaged]\njobs = 3\n' >"$CONF"

in_helper_ns 'exec "$1" -c "$2" -f "$3" --state-dir "$4" start' \
	"$STORAGED" "$CONF" "$FSTAB" "$STATE" >"$SCRATCH/out" 2>&1
rc=$?
sed 's/^/  | /' "$SCRATCH/out"
[ "$rc" = 0 ] || fail "storaged start exited $rc"
sed 's/^/  log: /' "$LOG"
[ "$(grep -c '^end ' "$LOG")" = 9 ] || fail "not every helper ran to its end"

# Concurrency: how many helpers ran at once, from the log's order of events.
max=$(awk '/^start /{n++; if (n > m) m = n} /^end /{n--} END {print m}' "$LOG")
note "at most $max helpers at once (jobs = 3)"
[ "$max" -le 3 ] || fail "$max mounts ran at once, more than jobs = 3"
[ "$max" -ge 2 ] || fail "the independent mounts did not run in parallel"

# Order: each level of the chain starts only after its parent ended.
line() { grep -n "^$1 $SCRATCH/m/$2\$" "$LOG" | cut -d: -f1; }
[ "$(line end c)" -lt "$(line start c/c2)" ] || fail "c/c2 started before c was mounted"
[ "$(line end c/c2)" -lt "$(line start c/c2/c3)" ] || fail "c/c2/c3 started before c/c2 was mounted"
# The chain, the longest path, starts in the first wave.
[ "$(line start c)" -le 3 ] || fail "the critical chain was not started first"
exit 0

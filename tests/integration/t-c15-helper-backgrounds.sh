#!/bin/bash
# C15: a mount helper that exits 0 before anything is mounted (mount.nfs
# with `bg`, a helper that mounts later).  The peer, mount(8), takes the
# helper's 0 as the fact.  storaged checks the mount table: the entry is
# reported "not yet mounted", followed up, recorded only once its mount is
# there, and `stop` undoes that mount; `bg` never reaches the helper; a
# helper whose mount never comes fails at the entry's deadline, and its
# child cannot mount behind storaged's back afterwards.
# The stand-in helper /sbin/mount.c15fs exists only in a private mount
# namespace (an overlay on the helper directory): the host's /sbin is never
# touched.
. "$(dirname "$0")/lib.sh"
setup
need_private_helpers
cat >"$SCRATCH/upper/mount.c15fs" <<EOT
#!/bin/sh
# mount.c15fs SPEC DIR -o OPTS: records its options, forks a child in a
# session of its own that mounts a tmpfs on DIR 1 s later, exits 0 at once.
echo "\$4" >>"$SCRATCH/helper.opts"
case "\$1" in never:*) delay=30 ;; *) delay=1 ;; esac
setsid sh -c 'sleep \$1; mount -t tmpfs -o size=1M c15late "\$0"' "\$2" "\$delay" </dev/null >/dev/null 2>&1 &
echo "\$!" >>"$SCRATCH/helper.pids"
exit 0
EOT
chmod 0755 "$SCRATCH/upper/mount.c15fs"
cat >"$FSTAB" <<EOT
tmpfs        $SCRATCH/top      tmpfs   size=4M,noauto,x-storaged,X-mount.mkdir  0 0
server:/exp  $SCRATCH/top/nfs  c15fs   bg,noauto,x-storaged,X-mount.mkdir       0 0
EOT

in_helper_ns '
	sd() { "$3" -c "$4" -f "$5" --state-dir "$6" "$@"; }
	S=$2
	echo "== peer"
	mkdir -p "$S/peer"
	mount -t c15fs -o bg server:/exp "$S/peer"; echo "peer exit $?"
	mountpoint -q "$S/peer" && echo "peer: mounted at once" || echo "peer: nothing mounted after exit 0"
	# the late mount comes: tidied away before storaged runs
	for _ in $(seq 100); do mountpoint -q "$S/peer" && break; sleep 0.1; done
	umount "$S/peer" 2>/dev/null
	: >"$S/helper.opts"
	echo "== storaged"
	"$3" -c "$4" -f "$5" --state-dir "$6" start; echo "start exit $?"
	mountpoint -q "$S/top/nfs" && echo "nfs mounted"
	findmnt -rn -o SOURCE --mountpoint "$S/top/nfs"
	"$3" -c "$4" -f "$5" --state-dir "$6" status
	"$3" -c "$4" -f "$5" --state-dir "$6" stop; echo "stop exit $?"
	mountpoint -q "$S/top/nfs" && echo "nfs still mounted after stop"
	mountpoint -q "$S/top" && echo "top still mounted after stop"
	echo "== never"
	sed -i "s|^server:/exp .*|never:/exp  $S/top/nfs  c15fs  bg,noauto,x-storaged,X-mount.mkdir,x-storaged.mount-timeout=1s  0 0|" "$5"
	: >"$S/helper.pids"
	"$3" -c "$4" -f "$5" --state-dir "$6" start; echo "start2 exit $?"
	# the helper'"'"'s child must be gone with the deadline (a zombie is dead)
	for pid in $(cat "$S/helper.pids"); do
		st=$(sed "s/.*) //" "/proc/$pid/stat" 2>/dev/null | cut -d" " -f1)
		[ -n "$st" ] && [ "$st" != Z ] && echo "alive $pid ($st)"
	done
	"$3" -c "$4" -f "$5" --state-dir "$6" stop >/dev/null 2>&1
	exit 0
' "$SBIN" "$SCRATCH" "$STORAGED" "$CONF" "$FSTAB" "$STATE" >"$SCRATCH/out" 2>&1
sed 's/^/  | /' "$SCRATCH/out"
note "the helper got the options: $(tr '\n' ' ' <"$SCRATCH/helper.opts")"
grep -q "^peer exit 0$" "$SCRATCH/out" || fail "the peer did not exit 0"
grep -q "^peer: nothing mounted after exit 0$" "$SCRATCH/out" || fail "the peer's fault did not show"
grep -q "^start exit 0$" "$SCRATCH/out" || fail "start did not wait for the late mount"
grep -q "not yet mounted" "$SCRATCH/out" || fail "no 'not yet mounted' report"
grep -q "^nfs mounted$" "$SCRATCH/out" || fail "the late mount is not there after start"
grep -q "^c15late$" "$SCRATCH/out" || fail "not the helper's mount"
grep -q "^stop exit 0$" "$SCRATCH/out" || fail "stop failed"
grep -q "still mounted after stop" "$SCRATCH/out" && fail "stop did not undo the late mount"
grep -qw "bg" "$SCRATCH/helper.opts" && fail "bg reached the helper: $(cat "$SCRATCH/helper.opts")"
grep -q "^start2 exit 1$" "$SCRATCH/out" || fail "a mount that never comes did not fail"
grep -q "did not finish within 1s" "$SCRATCH/out" || fail "no deadline message for the mount that never came"
grep -q "^alive " "$SCRATCH/out" && fail "the helper's child survived the deadline"
exit 0

#!/bin/bash
# A resident storaged (--foreground) with an entry whose device is absent:
# each pass on an event or a SIGHUP that changes nothing must not log the
# same "1 waiting for its device" again (issue 43: three times in 3 s);
# it says it again when the count changes.
. "$(dirname "$0")/lib.sh"
setup

printf '[storaged]\ndevice-timeout = 1s\n' >"$CONF"
echo "UUID=0b7c3a52-4d1e-4c55-9a3e-5d6f00c0ffee  $SCRATCH/m/a  ext4  noauto,x-storaged,X-mount.mkdir  0 0" >"$FSTAB"
"$STORAGED" -c "$CONF" -f "$FSTAB" --state-dir "$STATE" --foreground start >"$SCRATCH/out" 2>&1 &
SD=$!
stop_sd() { kill "$SD" 2>/dev/null; wait "$SD" 2>/dev/null; }
CLEANUP_HOOK=stop_sd
for _ in $(seq 100); do grep -q "not found after 1s" "$SCRATCH/out" && break; sleep 0.1; done
grep -q "not found after 1s" "$SCRATCH/out" || { cat "$SCRATCH/out"; fail "no timeout for the absent device"; }
said() { grep -c "waiting for" "$SCRATCH/out"; }

note "three passes that change nothing: at most one line about the waiting entry"
n0=$(said)
for i in 1 2 3; do
	kill -HUP "$SD"
	sleep 0.7
	dev=$(mkloop "quiet$i" 1M) && detach "$dev"
done
sleep 0.5
sed 's/^/  | /' "$SCRATCH/out"
n=$(said)
[ $((n - n0)) -le 1 ] || fail "the resident said the same waiting count $((n - n0)) times"

note "a second absent entry: the count changed, said once more"
echo "UUID=0b7c3a52-4d1e-4c55-9a3e-5d6f00c0ffef  $SCRATCH/m/b  ext4  noauto,x-storaged,X-mount.mkdir  0 0" >>"$FSTAB"
kill -HUP "$SD"
for _ in $(seq 50); do [ "$(said)" -gt "$n" ] && break; sleep 0.1; done
sed 's/^/  | /' "$SCRATCH/out"
[ "$(said)" -gt "$n" ] || fail "the new waiting count was not said"
grep -q "2 waiting for devices" "$SCRATCH/out" || fail "no '2 waiting for devices' once the count changed"
stop_sd
CLEANUP_HOOK=
run_sd 0 stop
exit 0

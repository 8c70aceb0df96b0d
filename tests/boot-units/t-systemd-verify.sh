#!/bin/bash
# The systemd units as `make install` installs them (DESTDIR, @sbindir@
# substituted), checked offline by `systemd-analyze verify` together with the
# mount units that systemd-fstab-generator makes from an fstab mixing
# storaged's entries (noauto) with ordinary ones that wait for storaged
# (x-systemd.requires=storaged.service) or that storaged nests below
# (x-systemd.before=storaged.service): no error, no ordering cycle.  A
# control run shows that a cycle (storaged.service after the network) is
# detected in the same setup, and grep asserts the ordering facts.
# PID 1 need not be systemd: verify works on unit files.
. "$(dirname "$0")/lib.sh"
scratch
need_tool systemd-analyze systemd
GEN=/lib/systemd/system-generators/systemd-fstab-generator
[ -x "$GEN" ] || GEN=/usr/lib/systemd/system-generators/systemd-fstab-generator
[ -x "$GEN" ] || skip "systemd-fstab-generator not found"
[ -f "$BUILDDIR/Makefile" ] || skip "no build tree at $BUILDDIR (run from make check)"

note "make install DESTDIR=..."
D=$SCRATCH/root
env -u MAKEFLAGS -u MFLAGS make -s -C "$BUILDDIR" DESTDIR="$D" \
	install-sbinPROGRAMS install-systemdsystemunitDATA install-initscriptSCRIPTS \
	install-systemdsystemgeneratorSCRIPTS >"$SCRATCH/install.log" 2>&1 ||
	{ cat "$SCRATCH/install.log"; fail "make install"; }
U=$(dirname "$(find "$D" -name storaged.service -print -quit)")
[ -f "$U/storaged.service" ] || fail "storaged.service not installed"
[ -f "$U/storaged-remote.service" ] || fail "storaged-remote.service not installed"
[ -f "$U/storaged-sync.service" ] && [ -f "$U/storaged-sync.timer" ] || fail "storaged-sync.service/.timer not installed"
find "$D" -path '*/init.d/storaged' -perm -0100 | grep -q . || fail "init script not installed executable"

# The installed units name the installed binary: its path below DESTDIR.
exe=$(sed -n 's/^ExecStart=\([^ ]*\) .*/\1/p' "$U/storaged.service")
[ -x "$D$exe" ] || fail "ExecStart=$exe, but make install put no binary at that path"
grep -q "^ExecStart=$exe .*sync$" "$U/storaged-sync.service" || fail "storaged-sync.service does not run \`storaged sync\`"
grep -q '@sbindir@' "$U"/*.service && fail "@sbindir@ left in the installed units"

# A system whose fstab has storaged entries, ordinary mounts that depend on
# storaged, and a network entry; the generator writes the mount units.
W=$SCRATCH/units
mkdir -p "$W"
cat >"$SCRATCH/fstab" <<EOT
/dev/vdb1  /srv  ext4  defaults,x-systemd.before=storaged.service  0 2
UUID=5e81f5a2-1111-2222-3333-444455556666  /srv/data  btrfs  noatime,noauto,x-storaged  0 0
tmpfs  /srv/data/tmp  tmpfs  size=8M,noauto,x-storaged  0 0
UUID=5e81f5a2-1111-2222-3333-444455556666  /home  btrfs  subvol=home,x-systemd.requires=storaged.service  0 0
srv:/export  /mnt/nfs  nfs  noauto,_netdev,x-storaged  0 0
EOT
SYSTEMD_FSTAB=$SCRATCH/fstab SYSTEMD_PROC_CMDLINE='' "$GEN" "$W" "$W" "$W" || fail "fstab generator"
# As installed, but with the DESTDIR the real system would not have.
for u in storaged.service storaged-remote.service storaged-sync.service storaged-sync.timer; do
	sed "s|$exe|$D$exe|g" "$U/$u" >"$W/$u"
done
# A stand-in for systemd-networkd-wait-online (default dependencies, so
# after sysinit.target): what makes "before local-fs.target but after the
# network" a cycle on a real system even when this host enables none.
cat >"$W/test-wait-online.service" <<EOT
[Unit]
Description=stand-in for a network wait-online service
Before=network-online.target
[Service]
Type=oneshot
ExecStart=/bin/true
EOT
mkdir -p "$W/network-online.target.wants"
ln -s ../test-wait-online.service "$W/network-online.target.wants/"

verify() {
	OUT=$(cd "$W" && systemd-analyze verify --man=no "$@" 2>&1)
	RC=$?
	printf '%s\n' "$OUT" | sed 's/^/  | /'
}
mounts=$(cd "$W" && ls ./*.mount)
note "verify the units and the generated mount units"
# shellcheck disable=SC2086
verify ./storaged.service ./storaged-remote.service ./storaged-sync.service ./storaged-sync.timer $mounts
[ "$RC" = 0 ] || fail "systemd-analyze verify exited $RC"
[ -z "$OUT" ] || fail "systemd-analyze verify printed diagnostics"

note "the generator orders the mounts of RAM areas before storaged's units"
G=$(find "$D" -path '*/system-generators/storaged-generator' -perm -0100 -print -quit)
[ -n "$G" ] || fail "storaged-generator not installed executable"
grep -q "^exec $exe .*systemd-generator" "$G" || fail "the generator does not run the installed storaged"
printf '[storaged]\n[area rpm-build]\npath = /srv/data/build\n' >"$SCRATCH/gen.conf"
chmod 0644 "$SCRATCH/gen.conf"
"$D$exe" -c "$SCRATCH/gen.conf" systemd-generator "$W" "$W" "$W" || fail "systemd-generator failed"
for p in /srv/data/build /run/storaged/areas/rpm-build/area /run/storaged/areas/rpm-build/lower; do
	u=$(systemd-escape --path --suffix=mount "$p")
	f=$W/$u.d/50-storaged.conf
	[ -f "$f" ] || fail "no drop-in for $u"
	grep -q '^Before=storaged.service storaged-remote.service$' "$f" || fail "$u is not ordered before storaged"
done
# The area's bind over its directory, as systemd sees it once mounted.
cat >"$W/srv-data-build.mount" <<EOT
[Mount]
What=/run/storaged/areas/rpm-build/area
Where=/srv/data/build
Options=bind
EOT
verify ./storaged.service ./storaged-remote.service ./srv-data-build.mount
[ "$RC" = 0 ] || fail "systemd-analyze verify with the generator's drop-ins exited $RC"
printf '%s\n' "$OUT" | grep -q 'ordering cycle' && fail "the generator's drop-ins make an ordering cycle"

note "control: storaged.service ordered after the network is reported as a cycle"
cp "$W/storaged.service" "$SCRATCH/good.service"
sed -i 's/^Before=local-fs.target$/&\nWants=network-online.target\nAfter=network-online.target/' \
	"$W/storaged.service"
verify ./storaged.service ./home.mount
printf '%s\n' "$OUT" | grep -q 'ordering cycle' || fail "the control cycle was not detected"
cp "$SCRATCH/good.service" "$W/storaged.service"

note "ordering facts"
S=$U/storaged.service
R=$U/storaged-remote.service
has() { grep -Eq "^$2" "$1" || fail "$(basename "$1") lacks '$2'"; }
lacks() { grep -Eq "^$2" "$1" && fail "$(basename "$1") must not have '$2'"; return 0; }
has "$S" 'Type=notify$'
has "$S" 'NotifyAccess=exec$'
has "$S" 'RemainAfterExit=yes$'
has "$S" 'DefaultDependencies=no$'
has "$S" 'Before=.*\blocal-fs\.target\b'
has "$S" 'After=.*\bsystemd-udevd\.service\b'
has "$S" 'Conflicts=.*\bumount\.target\b'
has "$S" 'Before=.*\bumount\.target\b'
has "$S" 'ExecStop=/.*/storaged .*stop$'
has "$S" 'ExecReload='
has "$S" 'TimeoutStartSec='
has "$S" 'WantedBy=local-fs\.target$'
lacks "$S" '(After|Wants|Requires)=.*network'
lacks "$S" '(After|Wants|Requires)=.*udev-settle'
has "$R" 'Type=notify$'
has "$R" 'After=.*\bnetwork-online\.target\b'
has "$R" 'Wants=.*\bnetwork-online\.target\b'
has "$R" 'Before=.*\bremote-fs\.target\b'
has "$R" 'After=.*\bstoraged\.service\b'
has "$R" 'WantedBy=remote-fs\.target$'
# Hardening that keeps the host's mount namespace (each setting is
# seccomp or the bounding set): present in all three services, and
# nothing that gives a service a mount namespace of its own.
Y=$U/storaged-sync.service
has "$R" 'NotifyAccess=exec$'
has "$Y" 'NotifyAccess=exec$'
for f in "$S" "$R" "$Y"; do
	for k in 'SystemCallArchitectures=native$' 'LockPersonality=yes$' 'MemoryDenyWriteExecute=yes$' \
		'RestrictRealtime=yes$' 'RestrictNamespaces=yes$' 'CapabilityBoundingSet=CAP_SYS_ADMIN ' \
		'RestrictAddressFamilies=AF_UNIX AF_NETLINK'; do
		has "$f" "$k"
	done
	lacks "$f" '(ProtectSystem|ProtectHome|PrivateTmp|PrivateDevices|PrivateMounts|PrivateNetwork|PrivateUsers|ProtectKernelTunables|ProtectKernelModules|ProtectKernelLogs|ProtectControlGroups|ProtectClock|ProtectHostname|ProtectProc|ReadOnlyPaths|ReadWritePaths|InaccessiblePaths|TemporaryFileSystem|BindPaths|BindReadOnlyPaths|RootDirectory|RootImage|MountFlags|NetworkNamespacePath)='
	for c in CAP_SYS_ADMIN CAP_DAC_OVERRIDE CAP_DAC_READ_SEARCH CAP_CHOWN CAP_FOWNER CAP_FSETID CAP_MKNOD \
		CAP_LINUX_IMMUTABLE CAP_SETFCAP; do
		has "$f" "CapabilityBoundingSet=.*\\b$c\\b"
	done
done
lacks "$S" 'RestrictAddressFamilies=.*AF_INET'
lacks "$Y" 'RestrictAddressFamilies=.*AF_INET'
has "$R" 'CapabilityBoundingSet=.*\bCAP_NET_BIND_SERVICE\b'
# the units that mount read the kernel's reason for a failed one back
# (dmesg_restrict=1 hides it without CAP_SYSLOG; t-unit-capabilities)
has "$S" 'CapabilityBoundingSet=.*\bCAP_SYSLOG\b'
has "$R" 'CapabilityBoundingSet=.*\bCAP_SYSLOG\b'
# What systemd makes of them (verify parsed them above without a word):
# the sandbox as `systemd-analyze security` scores it, for the log.
if systemd-analyze security --help 2>/dev/null | grep -q -- '--offline'; then
	(cd "$W" && systemd-analyze security --offline=yes --no-pager ./storaged.service 2>&1 | tail -n 1 | sed 's/^/  | /')
fi
# TimeoutStartSec must cover device-timeout + mount-timeout (90s + 90s).
t=$(sed -n 's/^TimeoutStartSec=//p' "$S")
case "$t" in
infinity) ;;
*min) [ "${t%min}" -ge 3 ] || fail "TimeoutStartSec=$t is shorter than the default device + mount timeouts" ;;
*) fail "TimeoutStartSec=$t: expected minutes or infinity" ;;
esac
# The generated units: storaged's entries are not pulled in by anything,
# the dependent one is ordered after storaged.service.
[ ! -e "$W/local-fs.target.requires/srv-data.mount" ] || fail "the generator pulls in a noauto entry"
grep -q '^After=storaged.service' "$W/home.mount" || fail "x-systemd.requires did not order home.mount"
grep -q '^Before=storaged.service' "$W/srv.mount" || fail "x-systemd.before did not order srv.mount"
exit 0

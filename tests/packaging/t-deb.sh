#!/bin/bash
# The Debian package: the 3.0 (quilt) source package from the dist tarball
# and debian/, `dpkg-buildpackage -us -uc` (debhelper's dh sequence; lib.sh,
# deb_build), then lintian --pedantic on the .changes, source and binary
# (no error, warning, info or pedantic tag; the ones kept are overridden in
# debian/ with the reason, and none of them is an error tag), what a
# distribution expects of the source (the systemd-dev | systemd build
# dependency, debian/upstream/metadata, a debian/copyright that names
# every file with a copyright notice),
# and the package's contents: binary, copy helper, units, generator, init
# script, man pages, completion, the conffiles, and maintainer scripts that
# enable storaged both the systemd and the SysV way without starting it.
. "$(dirname "$0")/lib.sh"
package_opt_in Debian
[ -d "$TOPSRCDIR/debian" ] || skip "no debian/ here: the dist tarball does not carry it (Makefile.am)"
need_tool dpkg-buildpackage dpkg-dev
need_tool dh debhelper
need_tool lintian lintian
need_tool fakeroot fakeroot
command -v dpkg-checkbuilddeps >/dev/null && { dpkg-checkbuilddeps "$TOPSRCDIR/debian/control" 2>&1 ||
	skip "build dependencies missing (apt-get build-dep, or tools/install-deps.sh)"; }
scratch

# built from the tree's dist tarball, or the build of the same tree that
# the qemu boot test made (lib.sh)
t0=$(date +%s)
deb_build
note "package: $(($(date +%s) - t0))s"
deb=$DEB
changes=$DEB_CHANGES
grep -qx '3.0 (quilt)' "$TOPSRCDIR/debian/source/format" || fail "debian/source/format is not 3.0 (quilt)"
grep -q "storaged_$PKG_VERSION.orig.tar.gz" "$changes" || fail "$(basename "$changes") has no orig tarball"
grep -q "storaged_$PKG_VERSION-[^ ]*.debian.tar" "$changes" || fail "$(basename "$changes") has no .debian.tar"

note "lintian --pedantic $(basename "$changes")"
# No error, warning, info or pedantic tag (E:, W:, I:, P:): the ones kept
# are overridden (with the reason) in debian/storaged.lintian-overrides and
# debian/source/lintian-overrides, and listed (O:) with their reasons (N:).
# One run, its lines read (lintian takes half a minute here): its exit
# status would count the overridden tags that --show-overrides lists
# (exit 2 with nothing but O: lines), so --fail-on none, and a non-zero
# exit is lintian's own failure.
t0=$(date +%s)
lintian --pedantic -I --fail-on none --display-info --show-overrides "$changes" >"$SCRATCH/lintian.log" 2>&1
lrc=$?
grep -v '^running with root' "$SCRATCH/lintian.log" | sed 's/^/    /'
grep -Eq '^[EWIP]: ' "$SCRATCH/lintian.log" && fail "lintian reports tags (the E:, W:, I:, P: lines above)"
[ "$lrc" = 0 ] || fail "lintian exited $lrc"
note "lintian: $(($(date +%s) - t0))s"
# No error tag is overridden (an error is fixed, not explained): every
# tag the overrides name, and every one lintian listed as overridden (O:),
# is of another severity in lintian's own tag descriptions.
for tag in $(sed -n 's/^O: [^:]*: \([^ ]*\).*/\1/p' "$SCRATCH/lintian.log"; \
	sed -n 's/^\([a-z0-9][a-z0-9.+-]*\)\( .*\)\{0,1\}$/\1/p' "$TOPSRCDIR"/debian/*lintian-overrides \
		"$TOPSRCDIR"/debian/source/lintian-overrides); do
	f=$(find /usr/share/lintian/tags -name "$tag.tag" | head -n 1)
	[ -n "$f" ] || fail "lintian knows no tag '$tag' (overridden in debian/)"
	grep -qx 'Severity: error' "$f" && fail "the error tag '$tag' is overridden"
done

# What a distribution expects of the source package: the build dependency
# for systemd.pc from Debian 13 on, DEP-12 upstream metadata, and a
# debian/copyright that names every file of the tarball that carries a
# copyright notice (those not storaged's own: Autoconf's, Automake's).
grep -Eq '^ +systemd-dev \| systemd,' "$TOPSRCDIR/debian/control" ||
	fail "debian/control: no 'systemd-dev | systemd' build dependency"
grep -q '^Name: storaged$' "$TOPSRCDIR/debian/upstream/metadata" 2>/dev/null ||
	fail "no debian/upstream/metadata naming storaged"
dist_tarball
mkdir -p "$SCRATCH/orig"
tar -xzf "$TARBALL" -C "$SCRATCH/orig" --strip-components=1 || fail "unpacking $TARBALL"
(cd "$SCRATCH/orig" && grep -rlI -E '^[#/*dnl ]*Copyright (\(C\)|©) [0-9]' . | sed 's|^\./||' | grep -vx COPYING) |
	while read -r f; do
		grep -Eq "^(Files: +| +)$f\$" "$TOPSRCDIR/debian/copyright" ||
			fail "$f has a copyright notice that debian/copyright does not name"
	done || exit 1

dpkg-deb -c "$deb" | awk '{ sub(/^\./, "", $6); print $6 }' | sed -e 's|/$||' -e '/^$/d' >"$SCRATCH/files"
note "files:"
sed 's/^/    /' "$SCRATCH/files"
expect_files "$SCRATCH/files" \
	/usr/sbin/storaged \
	/usr/libexec/storaged/storaged-copy \
	/lib/systemd/system/storaged.service \
	/lib/systemd/system/storaged-remote.service \
	/lib/systemd/system/storaged-sync.service \
	/lib/systemd/system/storaged-sync.timer \
	/lib/systemd/system-generators/storaged-generator \
	/lib/systemd/system-sleep/storaged \
	/etc/init.d/storaged \
	/etc/default/storaged \
	/etc/storaged.conf \
	/usr/share/man/man8/storaged.8.gz \
	/usr/share/man/man5/storaged.conf.5.gz \
	/usr/share/bash-completion/completions/storaged

ctl=$SCRATCH/control
dpkg-deb -e "$deb" "$ctl" || fail "dpkg-deb -e"
for f in /etc/storaged.conf /etc/init.d/storaged /etc/default/storaged; do
	grep -qxF "$f" "$ctl/conffiles" || fail "$f is not a conffile"
done
# Enabled the Debian way: update-rc.d for SysV, deb-systemd-helper for both
# units; never started by the installation (see debian/rules).
grep -q 'update-rc.d storaged defaults' "$ctl/postinst" || fail "postinst does not run update-rc.d"
grep -q 'deb-systemd-helper.*enable.*storaged.service' "$ctl/postinst" ||
	fail "postinst does not enable storaged.service"
grep -q 'storaged-remote.service' "$ctl/postinst" || fail "postinst does not enable storaged-remote.service"
grep -q 'storaged-sync.timer' "$ctl/postinst" || fail "postinst does not enable storaged-sync.timer"
grep -Eq 'invoke-rc.d .*storaged start|deb-systemd-invoke (start|restart)' "$ctl/postinst" &&
	fail "postinst starts storaged"
# Removal stops it (persist areas synced back), an upgrade does not.
grep -q 'deb-systemd-invoke stop storaged-sync.timer storaged-remote.service storaged.service' "$ctl/prerm" ||
	fail "prerm does not stop storaged at removal"
[ ! -e "$ctl/preinst" ] || ! grep -q 'stop' "$ctl/preinst" || fail "preinst stops storaged at upgrade"
# The initramfs-tools hook brings the trigger that rebuilds the initrd at
# installation and upgrade (debian/README.source).
grep -qx 'activate-noawait update-initramfs' "$ctl/triggers" 2>/dev/null ||
	fail "no update-initramfs trigger in the package"

# The installed files agree: the units, the generator and the script name
# the packaged binary, which finds the packaged copy helper.
x=$SCRATCH/x
dpkg-deb -x "$deb" "$x" || fail "dpkg-deb -x"
grep -q '^ExecStart=/usr/sbin/storaged ' "$x/lib/systemd/system/storaged.service" ||
	fail "storaged.service does not run /usr/sbin/storaged"
grep -q 'exec /usr/sbin/storaged ' "$x/lib/systemd/system-generators/storaged-generator" ||
	fail "the generator does not run /usr/sbin/storaged"
grep -q 'STORAGED_BIN:-/usr/sbin/storaged}' "$x/etc/init.d/storaged" ||
	fail "the init script does not run /usr/sbin/storaged"
grep -aq /usr/libexec/storaged/storaged-copy "$x/usr/sbin/storaged" ||
	fail "storaged does not look for its helper in /usr/libexec/storaged"
[ -x "$x/usr/sbin/storaged" ] && "$x/usr/sbin/storaged" --version | grep -q '0\.1\.0' ||
	fail "the packaged storaged does not run"
exit 0

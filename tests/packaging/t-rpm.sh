#!/bin/bash
# The RPM packages: rpmbuild -ba with storaged.spec from the tree's `make
# dist` tarball (as `rpmbuild -tb` would; lib.sh, dist_tarball, shared with
# the Debian build) in a scratch _topdir, with Debian's rpm.  --nodeps:
# BuildRequires name Fedora packages that no rpm database here knows; the
# Debian build dependencies stand in for them.  No debuginfo subpackage
# (Debian's rpm lacks find-debuginfo).  Then rpmlint on the spec, the
# source and the binary RPMs (no error but the false positives of this
# environment that tests/packaging/rpmlintrc filters, each with the
# reason), the file lists, the configuration files and the scriptlets.
# With %fedora or %rhel defined (rpmspec, no build) the spec makes no SysV
# init script subpackage: Fedora's guidelines forbid SysV scripts.  The
# dracut module's directories are owned, dracut not required.
. "$(dirname "$0")/lib.sh"
package_opt_in RPM
need_tool rpmbuild rpm
need_tool cpio cpio
need_tool rpmlint rpmlint
scratch

dist_tarball
v=$PKG_VERSION
tarball=$TARBALL

top=$SCRATCH/rpmbuild
mkdir -p "$top/SOURCES" "$top/SPECS"
cp "$tarball" "$top/SOURCES/"
tar -xzf "$tarball" -C "$top/SPECS" --strip-components=1 "storaged-$v/storaged.spec" ||
	fail "storaged.spec is not in the dist tarball"
spec=$top/SPECS/storaged.spec
grep -q '@PACKAGE_VERSION@' "$spec" && fail "storaged.spec was not substituted"
# Source0 is a URL whose file name is the dist tarball's (the spec says why)
src0=$(rpmspec -P "$spec" 2>/dev/null | sed -n 's/^Source0: *//p')
case $src0 in
*://*/"storaged-$v.tar.gz") ;;
*) fail "Source0 is not a URL of storaged-$v.tar.gz: '$src0'" ;;
esac
[ -n "$(rpmspec -q --qf '%{URL}\n' "$spec" 2>/dev/null | head -n 1)" ] || fail "no URL: in storaged.spec"
# Fedora forbids SysV init scripts: there (and on RHEL) no sysvinit
# subpackage and no script in the main one; elsewhere (this build: Debian's
# rpm defines neither) the subpackage, unless --without sysvinit.
pkgs() { rpmspec -q --qf '%{NAME}\n' "$@" "$spec" 2>/dev/null | sort | tr '\n' ' '; }
for def in 'fedora 41' 'rhel 9'; do
	[ "$(pkgs --define "$def")" = "storaged " ] ||
		fail "with %$def, storaged.spec makes the packages '$(pkgs --define "$def")', not storaged alone"
	rpmspec -P --define "$def" "$spec" 2>/dev/null | grep -q '^rm -f .*/init\.d/storaged$' ||
		fail "with %$def, %install does not remove the init script make install put"
done
[ "$(pkgs --without sysvinit)" = "storaged " ] || fail "--without sysvinit still makes '$(pkgs --without sysvinit)'"
[ "$(pkgs)" = "storaged storaged-sysvinit " ] || fail "without %fedora, storaged.spec makes '$(pkgs)'"
# The build root's post-processing as on Fedora: Debian's rpm runs its
# brp-* scripts with /bin/sh, dash there, and brp-compress (a bash script
# in all but its first line: `read -d`) fails on every file ("Illegal
# option -d"), leaving the man pages uncompressed; Fedora's /bin/sh is
# bash.  So the same scripts, in the same order, run with bash.
post=$(rpm --eval '%{__os_install_post}' | sed -n 's|^[[:space:]]*\(/usr/lib/rpm/brp-\)|bash \1|p' | paste -sd ';')
[ -n "$post" ] || fail "no brp scripts in rpm's %__os_install_post"
note "rpmbuild -ba storaged.spec"
t0=$(date +%s)
clean_env rpmbuild -ba --nodeps --define "_topdir $top" --define 'debug_package %{nil}' \
	--define "__os_install_post $post" "$spec" >"$SCRATCH/rpmbuild.log" 2>&1 ||
	{ tail -n 60 "$SCRATCH/rpmbuild.log"; fail "rpmbuild failed"; }
note "rpmbuild: $(($(date +%s) - t0))s"
grep -E '^(Wrote|warning):' "$SCRATCH/rpmbuild.log" | sed 's/^/    /'
grep -q '^warning:' "$SCRATCH/rpmbuild.log" && fail "rpmbuild warnings (above)"

rpm=$(ls "$top"/RPMS/*/"storaged-$v"-1*.rpm 2>/dev/null | grep -v sysvinit | head -n 1)
sysv=$(ls "$top"/RPMS/*/"storaged-sysvinit-$v"-1*.rpm 2>/dev/null | head -n 1)
srpm=$(ls "$top"/SRPMS/"storaged-$v"-1*.src.rpm 2>/dev/null | head -n 1)
[ -f "$rpm" ] || fail "no storaged-$v-1 rpm"
[ -f "$sysv" ] || fail "no storaged-sysvinit-$v-1 rpm"
[ -f "$srpm" ] || fail "no storaged-$v-1 source rpm"

# rpmlint: no error left but the documented false positives (rpmlintrc);
# its warnings are listed.
note "rpmlint storaged.spec $(basename "$srpm") $(basename "$rpm") $(basename "$sysv")"
t0=$(date +%s)
rpmlint -r "$TOPSRCDIR/tests/packaging/rpmlintrc" "$spec" "$srpm" "$rpm" "$sysv" >"$SCRATCH/rpmlint.log" 2>&1
rlrc=$?
sed 's/^/    /' "$SCRATCH/rpmlint.log"
note "rpmlint: exit $rlrc, $(($(date +%s) - t0))s"
grep -Eq '^[^ ]+: E: ' "$SCRATCH/rpmlint.log" && fail "rpmlint reports errors (E: above)"
grep -Eq '[0-9]+ packages and [0-9]+ specfiles checked; 0 errors' "$SCRATCH/rpmlint.log" ||
	fail "rpmlint did not report 0 errors"
rpm -qlp "$rpm" >"$SCRATCH/files" 2>/dev/null || fail "rpm -qlp $rpm"
rpm -qlp "$sysv" >"$SCRATCH/sysv-files" 2>/dev/null || fail "rpm -qlp $sysv"
note "$(basename "$rpm"):"
sed 's/^/    /' "$SCRATCH/files"
note "$(basename "$sysv"):"
sed 's/^/    /' "$SCRATCH/sysv-files"
expect_files "$SCRATCH/files" \
	/usr/sbin/storaged \
	/usr/libexec/storaged/storaged-copy \
	/usr/lib/systemd/system/storaged.service \
	/usr/lib/systemd/system/storaged-remote.service \
	/usr/lib/systemd/system/storaged-sync.service \
	/usr/lib/systemd/system/storaged-sync.timer \
	/usr/lib/systemd/system-generators/storaged-generator \
	/usr/lib/systemd/system-sleep/storaged \
	/etc/storaged.conf \
	/etc/sysconfig/storaged \
	/usr/share/bash-completion/completions/storaged
# Compressed by brp-compress (above); %_initddir is /etc/rc.d/init.d on
# Fedora and /etc/init.d in Debian's rpm macros.
grep -qx '/usr/share/man/man8/storaged\.8\.gz' "$SCRATCH/files" || fail "no storaged.8.gz"
grep -qx '/usr/share/man/man5/storaged\.conf\.5\.gz' "$SCRATCH/files" || fail "no storaged.conf.5.gz"
initscript=$(grep -Ex '/etc/(rc\.d/)?init\.d/storaged' "$SCRATCH/sysv-files") ||
	fail "no init script in the sysvinit package"
# The licence as %license; no initramfs-tools files (Fedora has none); the
# init script subpackage holds no binary.
grep -Eqx '/usr/share/licenses/storaged(-[0-9.]+)?/COPYING' "$SCRATCH/files" || fail "no %license COPYING"
# The dracut module's directories are owned (storaged does not require
# dracut, so nothing else need own them where it is not installed).
expect_files "$SCRATCH/files" /usr/lib/dracut /usr/lib/dracut/modules.d /usr/lib/dracut/modules.d/90storaged
rpm -qp --requires "$rpm" 2>/dev/null | grep -q '^dracut' && fail "storaged requires dracut"
grep -q initramfs-tools "$SCRATCH/files" && fail "initramfs-tools files in the RPM: $(grep initramfs-tools "$SCRATCH/files")"
[ "$(rpm -qp --qf '%{ARCH}' "$sysv" 2>/dev/null)" = noarch ] || fail "the sysvinit subpackage is not noarch"

rpm -qcp "$rpm" 2>/dev/null >"$SCRATCH/config"
expect_files "$SCRATCH/config" /etc/storaged.conf /etc/sysconfig/storaged
rpm -qp --scripts "$rpm" >"$SCRATCH/scripts" 2>/dev/null
rpm -qp --scripts "$sysv" >"$SCRATCH/sysv-scripts" 2>/dev/null
grep -q 'preset storaged.service storaged-remote.service storaged-sync.timer' "$SCRATCH/scripts" ||
	fail "%post does not preset the units"
grep -q 'disable.*storaged.service storaged-remote.service storaged-sync.timer' "$SCRATCH/scripts" ||
	fail "%preun does not disable the units"
grep -q 'try-restart' "$SCRATCH/scripts" && fail "an upgrade restarts storaged"
grep -q 'chkconfig --add storaged' "$SCRATCH/sysv-scripts" || fail "no chkconfig --add"
grep -q 'chkconfig --del storaged' "$SCRATCH/sysv-scripts" || fail "no chkconfig --del"

# The packaged files agree with each other.
x=$SCRATCH/x
mkdir -p "$x"
(cd "$x" && rpm2cpio "$rpm" | cpio -idm --quiet && rpm2cpio "$sysv" | cpio -idm --quiet) ||
	fail "rpm2cpio"
grep -q '^ExecStart=/usr/sbin/storaged ' "$x/usr/lib/systemd/system/storaged.service" ||
	fail "storaged.service does not run /usr/sbin/storaged"
grep -q 'STORAGED_BIN:-/usr/sbin/storaged}' "$x$initscript" ||
	fail "the init script does not run /usr/sbin/storaged"
grep -aq /usr/libexec/storaged/storaged-copy "$x/usr/sbin/storaged" ||
	fail "storaged does not look for its helper in /usr/libexec/storaged"
exit 0

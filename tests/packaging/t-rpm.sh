#!/bin/bash
# The RPM packages: `make dist`, then rpmbuild -bb with storaged.spec from
# that tarball (as `rpmbuild -tb` would) in a scratch _topdir, with Debian's
# rpm.  --nodeps: BuildRequires name Fedora packages that no rpm database
# here knows; the Debian build dependencies stand in for them.  No debuginfo
# subpackage (Debian's rpm lacks find-debuginfo).  Then the file lists, the
# configuration files and the scriptlets.
. "$(dirname "$0")/lib.sh"
package_opt_in RPM
need_tool rpmbuild rpm
need_tool cpio cpio
need_tool autoreconf autoconf
scratch

src=$SCRATCH/src
copy_tree "$src"
note "make dist"
(cd "$src" && clean_env autoreconf -fi && mkdir b && cd b && clean_env ../configure -q &&
	clean_env make -s dist) >"$SCRATCH/dist.log" 2>&1 ||
	{ tail -n 40 "$SCRATCH/dist.log"; fail "make dist failed"; }
tarball=$src/b/storaged-0.1.0.tar.gz
[ -f "$tarball" ] || fail "make dist made no storaged-0.1.0.tar.gz"

top=$SCRATCH/rpmbuild
mkdir -p "$top/SOURCES" "$top/SPECS"
cp "$tarball" "$top/SOURCES/"
tar -xzf "$tarball" -C "$top/SPECS" --strip-components=1 storaged-0.1.0/storaged.spec ||
	fail "storaged.spec is not in the dist tarball"
grep -q '@PACKAGE_VERSION@' "$top/SPECS/storaged.spec" && fail "storaged.spec was not substituted"
note "rpmbuild -bb storaged.spec"
clean_env rpmbuild -bb --nodeps --define "_topdir $top" --define 'debug_package %{nil}' \
	"$top/SPECS/storaged.spec" >"$SCRATCH/rpmbuild.log" 2>&1 ||
	{ tail -n 60 "$SCRATCH/rpmbuild.log"; fail "rpmbuild failed"; }
grep -E '^(Wrote|warning):' "$SCRATCH/rpmbuild.log" | sed 's/^/    /'
grep -q '^warning:' "$SCRATCH/rpmbuild.log" && fail "rpmbuild warnings (above)"

rpm=$(ls "$top"/RPMS/*/storaged-0.1.0-1*.rpm 2>/dev/null | grep -v sysvinit | head -n 1)
sysv=$(ls "$top"/RPMS/*/storaged-sysvinit-0.1.0-1*.rpm 2>/dev/null | head -n 1)
[ -f "$rpm" ] || fail "no storaged-0.1.0-1 rpm"
[ -f "$sysv" ] || fail "no storaged-sysvinit-0.1.0-1 rpm"
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
	/etc/storaged.conf \
	/etc/sysconfig/storaged \
	/usr/share/bash-completion/completions/storaged
# Compressed by brp-compress on Fedora, not by Debian's rpm; %_initddir is
# /etc/rc.d/init.d on Fedora and /etc/init.d in Debian's rpm macros.
grep -Eqx '/usr/share/man/man8/storaged\.8(\.gz)?' "$SCRATCH/files" || fail "no storaged.8"
grep -Eqx '/usr/share/man/man5/storaged\.conf\.5(\.gz)?' "$SCRATCH/files" || fail "no storaged.conf.5"
initscript=$(grep -Ex '/etc/(rc\.d/)?init\.d/storaged' "$SCRATCH/sysv-files") ||
	fail "no init script in the sysvinit package"
# The licence as %license; no initramfs-tools files (Fedora has none); the
# init script subpackage holds no binary.
grep -Eqx '/usr/share/licenses/storaged(-[0-9.]+)?/COPYING' "$SCRATCH/files" || fail "no %license COPYING"
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

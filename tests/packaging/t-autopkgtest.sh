#!/bin/bash
# The Debian package's autopkgtest (debian/tests/control): `autopkgtest
# CHANGES -- null` on the source and binary package that deb_build made
# (lib.sh).  The null runner's testbed is this machine itself: it installs
# the package here (apt, with the tests' dependencies) and runs the tests
# here as root.  It declares isolation-machine, so the integration test
# (loop devices, btrfs) runs too, with nothing around it: no container, no
# revert afterwards.  So this test runs only where storaged is not already
# installed, purges the package at the end, and, like every loop-device
# test, must not run beside another (tests/integration/: one at a time).
# Skipped where the testbed cannot run the integration test (no loop
# devices: autopkgtest reports it skipped).
. "$(dirname "$0")/lib.sh"
package_opt_in "Debian (autopkgtest)"
[ -d "$TOPSRCDIR/debian" ] || skip "no debian/ here: the dist tarball does not carry it (Makefile.am)"
[ "$(id -u)" = 0 ] || skip "needs root: autopkgtest's null runner installs the package on this machine"
need_tool dpkg-buildpackage dpkg-dev
need_tool dh debhelper
need_tool fakeroot fakeroot
need_tool autopkgtest autopkgtest
if st=$(dpkg-query -W -f='${db:Status-Status} ${Version}' storaged 2>/dev/null) &&
	[ "${st%% *}" != not-installed ] && [ "${st%% *}" != config-files ]; then
	skip "storaged is installed on this machine ($st): the null runner would replace it"
fi
scratch
purge() {
	local rc=$?
	# only what this test installed: storaged was not installed before
	dpkg-query -W -f='${db:Status-Status}' storaged 2>/dev/null | grep -qx installed &&
		{ dpkg --purge storaged >"$SCRATCH/purge.log" 2>&1 || cat "$SCRATCH/purge.log"; }
	[ -n "$SCRATCH" ] && rm -rf "$SCRATCH"
	exit "$rc"
}
trap purge EXIT

# The package's own build test (dh_auto_test) is t-deb's: a checked
# build of this tree is reused when there is one.
deb_build nocheck
note "autopkgtest $(basename "$DEB_CHANGES") -- null"
t0=$(date +%s)
autopkgtest --output-dir "$SCRATCH/out" --summary-file "$SCRATCH/summary" \
	"$DEB_CHANGES" -- null >"$SCRATCH/autopkgtest.log" 2>&1
rc=$?
note "autopkgtest: exit $rc, $(($(date +%s) - t0))s"
sed 's/^/    /' "$SCRATCH/autopkgtest.log" | tail -n 80
note "summary:"
sed 's/^/    /' "$SCRATCH/summary"
grep -q '^smoke *PASS' "$SCRATCH/summary" || fail "the smoke test did not pass"
# 0: every test passed; 2: some skipped (the integration test, when this
# machine has no loop devices: its own report says which)
case $rc in
0) grep -q '^integration *PASS' "$SCRATCH/summary" || fail "the integration test did not pass" ;;
2)
	grep -q '^integration *SKIP' "$SCRATCH/summary" || fail "autopkgtest exit 2 but the integration test was not skipped"
	skip "the integration test skipped here: $(grep -h '^SKIP: ' "$SCRATCH"/out/integration-stdout 2>/dev/null | head -n 3 | tr '\n' ' ')"
	;;
*) fail "autopkgtest exit $rc (log above: $SCRATCH/autopkgtest.log)" ;;
esac
exit 0

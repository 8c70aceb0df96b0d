# shellcheck shell=bash
# Shared helpers for the packaging tests: scratch, skip, fail, note and
# need_tool come from the boot-unit tests' lib.sh.
. "$(dirname "$0")/../boot-units/lib.sh"

# Building a package compiles storaged again from scratch (minutes each):
# opt-in, as the qemu boot test is.  STORAGED_PACKAGE_TEST=0 leaves the
# packages out even under CI=true: the sanitizer pass sets it, as a
# package build compiles its own storaged and uses nothing of the
# instrumented build, and would only build the same packages again.
package_opt_in() {
	[ "${STORAGED_PACKAGE_TEST:-}" = 0 ] &&
		skip "STORAGED_PACKAGE_TEST=0: the $1 package is not built in this pass"
	[ "${CI:-}" = true ] || [ "${STORAGED_PACKAGE_TEST:-0}" = 1 ] ||
		skip "opt-in: set STORAGED_PACKAGE_TEST=1 (or CI=true) to build the $1 package (a full build, minutes)"
}

# copy_tree DEST [PATH...]: the source tree as it is checked out (tracked
# and new files, not what .gitignore excludes: no build directories, no
# generated configure), or, outside a git checkout (a dist tarball), all
# of it but the build directories; only the PATHs (below the tree's top)
# when given.
copy_tree() {
	local dest=$1
	shift
	mkdir -p "$dest"
	if git -C "$TOPSRCDIR" rev-parse --git-dir >/dev/null 2>&1; then
		(cd "$TOPSRCDIR" && git ls-files -z -c -o --exclude-standard -- "$@" | xargs -0 tar -cf - --no-recursion) |
			tar -xf - -C "$dest" || fail "copying the source tree"
	else
		(cd "$TOPSRCDIR" && tar -cf - --exclude='./build*' --exclude=./autom4te.cache "${@:-.}") |
			tar -xf - -C "$dest" || fail "copying the source tree"
	fi
}

# A package build runs its own make: nothing of the make that runs this
# test (jobserver, variables) nor of its test environment leaks into it.
clean_env() {
	env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL -u MAKEOVERRIDES -u STORAGED -u TOPSRCDIR \
		-u CFLAGS -u LDFLAGS -u CPPFLAGS "$@"
}

# expect_files LIST PATH...: each PATH is a line of LIST (file list).
expect_files() {
	local list=$1 p
	shift
	for p in "$@"; do
		grep -qxF -- "$p" "$list" || fail "$p is not in the package (file list: $list)"
	done
}

# tree_key: a hash of the source tree as copy_tree copies it (names and
# contents), so that a package built from it can be reused until it changes.
tree_key() {
	if git -C "$TOPSRCDIR" rev-parse --git-dir >/dev/null 2>&1; then
		(cd "$TOPSRCDIR" && git ls-files -z -c -o --exclude-standard | sort -z |
			xargs -0 sha256sum -- 2>&1)
	else
		(cd "$TOPSRCDIR" && find . \( -path './build*' -o -path ./autom4te.cache \) -prune -o \
			-type f -print0 | sort -z | xargs -0 sha256sum --)
	fi | sha256sum | cut -c1-16
}

# PKG_VERSION: the upstream version, as configure.ac's AC_INIT declares it
# (the dist tarball's, the RPM's and the Debian package's upstream part).
PKG_VERSION=$(sed -n 's/^AC_INIT(\[storaged\], *\[\([^]]*\)\].*/\1/p' "$TOPSRCDIR/configure.ac")

# pkg_lock, pkg_unlock: one .deb build at a time in $PKG_TOP (the tests,
# the qemu boot tests and the guest suite may ask at once: the first
# builds, the others wait and reuse).  fd 8.  The dist tarball has its own
# lock (fd 9, taken inside this one, never the other way round), so that
# the RPM build does not wait for a .deb build.
PKG_TOP=$BUILDDIR/tests/packaging
pkg_lock() {
	mkdir -p "$PKG_TOP"
	exec 8>"$PKG_TOP/.deb.lock"
	flock 8
}
pkg_unlock() { exec 8>&-; }

# pkg_prune PREFIX KEEP...: removes $PKG_TOP/PREFIX-* but the KEEP ones
# (older trees' builds).
pkg_prune() {
	local prefix=$1 old k
	shift
	for old in "$PKG_TOP/$prefix"-*; do
		[ -e "$old" ] || continue
		for k in "$@"; do [ "$old" = "$PKG_TOP/$k" ] && continue 2; done
		rm -rf "$old"
	done
}

# dist_tarball: `make dist` of this source tree, once per tree_key, into
# $PKG_TOP/dist-KEY/storaged-VERSION.tar.gz (sets TARBALL).  A configure
# of its own in an empty directory (VPATH, from the tree's generated
# configure: no autoreconf, seconds): `make dist` in a build tree would
# also ship what lies in its tests/ (EXTRA_DIST names the directory), the
# packages built below it included.  Under its own lock (fd 9).
dist_tarball() {
	local key dir
	key=$(tree_key)
	dir=$PKG_TOP/dist-$key
	TARBALL=$dir/storaged-$PKG_VERSION.tar.gz
	mkdir -p "$PKG_TOP"
	exec 9>"$PKG_TOP/.dist.lock"
	flock 9
	if ! [ -f "$dir/complete" ]; then
		pkg_prune dist "dist-$key"
		rm -rf "$dir"
		[ -x "$TOPSRCDIR/configure" ] ||
			{ exec 9>&- 8>&-; fail "no configure in $TOPSRCDIR (run autoreconf -fi, or tools/build.sh)"; }
		mkdir -p "$dir/b"
		note "make dist (configure in $dir/b)"
		(cd "$dir/b" && clean_env "$TOPSRCDIR/configure" -q && clean_env make -s dist) >"$dir/dist.log" 2>&1 ||
			{ exec 9>&- 8>&-; tail -n 40 "$dir/dist.log"; fail "make dist failed (log: $dir/dist.log)"; }
		mv "$dir/b/storaged-$PKG_VERSION.tar.gz" "$TARBALL" ||
			{ exec 9>&- 8>&-; fail "make dist made no storaged-$PKG_VERSION.tar.gz"; }
		rm -rf "$dir/b"
		touch "$dir/complete"
	fi
	exec 9>&-
}

# deb_build [nocheck]: the Debian source package (3.0 (quilt): the dist
# tarball as storaged_VERSION.orig.tar.gz, the tree's debian/ as its
# .debian.tar.xz) and the .deb, `dpkg-buildpackage -us -uc` in the
# unpacked tarball, built once per tree_key and kept with the .dsc, the
# .changes, .buildinfo and build log in $PKG_TOP/deb-KEY/ (older trees'
# builds are removed): t-deb.sh, the qemu boot tests and the guest suite
# share it.  With nocheck, a caller that needs the package and not its
# build's own test run (dh_auto_test: the unit tests, which the tree's
# make check runs anyway) reuses the checked build when there is one, or
# builds with DEB_BUILD_OPTIONS="nocheck parallel=2" into
# deb-KEY-nocheck (a minute rather than ten on two CPUs); the callers
# without it never take a nocheck build.  Sets DEB (the storaged .deb),
# DEB_CHANGES (source and binary) and DEB_DSC.  Serialised by pkg_lock, so
# that two tests asking at once build it once.
deb_build() {
	local key dir opts= src
	key=$(tree_key)
	dir=$PKG_TOP/deb-$key
	pkg_lock
	if [ "${1:-}" = nocheck ] && ! [ -f "$dir/complete" ]; then
		dir=$dir-nocheck
		opts="nocheck parallel=2"
	fi
	if [ -f "$dir/complete" ]; then
		note "reusing the .deb built from this tree: $dir"
	else
		[ -d "$TOPSRCDIR/debian" ] ||
			{ pkg_unlock; fail "no debian/ in $TOPSRCDIR (the Debian packaging is in storaged's repository, not in its dist tarball)"; }
		pkg_prune deb "deb-$key" "deb-$key-nocheck"
		rm -rf "$dir"
		dist_tarball
		src=$dir/src/storaged-$PKG_VERSION
		mkdir -p "$dir/src"
		cp "$TARBALL" "$dir/src/storaged_$PKG_VERSION.orig.tar.gz" &&
			tar -xzf "$TARBALL" -C "$dir/src" || { pkg_unlock; fail "unpacking $TARBALL"; }
		# debian/ is the tree's: the tarball has none (Makefile.am)
		copy_tree "$src" debian
		note "dpkg-buildpackage -us -uc${opts:+ (DEB_BUILD_OPTIONS=$opts)} in $src"
		(cd "$src" && clean_env ${opts:+DEB_BUILD_OPTIONS="$opts"} dpkg-buildpackage -us -uc) \
			>"$dir/build.log" 2>&1 ||
			{ pkg_unlock; tail -n 60 "$dir/build.log"; fail "dpkg-buildpackage failed (log: $dir/build.log)"; }
		mv "$dir"/src/*.deb "$dir"/src/*.changes "$dir"/src/*.buildinfo "$dir"/src/*.dsc \
			"$dir"/src/*.debian.tar.* "$dir"/src/*.orig.tar.* "$dir/" ||
			{ pkg_unlock; fail "dpkg-buildpackage left no .deb/.changes/.buildinfo/.dsc"; }
		rm -rf "$dir/src"
		touch "$dir/complete"
	fi
	pkg_unlock
	DEB=$(ls "$dir/storaged_$PKG_VERSION"-*_*.deb 2>/dev/null | head -n 1)
	DEB_CHANGES=$(ls "$dir/storaged_$PKG_VERSION"-*_*.changes 2>/dev/null | grep -v '_source\.changes$' | head -n 1)
	DEB_DSC=$(ls "$dir/storaged_$PKG_VERSION"-*.dsc 2>/dev/null | head -n 1)
	[ -f "$DEB" ] || fail "no storaged_$PKG_VERSION-*.deb in $dir"
	[ -f "$DEB_CHANGES" ] || fail "no .changes in $dir"
	[ -f "$DEB_DSC" ] || fail "no .dsc in $dir"
}

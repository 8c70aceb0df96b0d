# shellcheck shell=bash
# Shared helpers for the packaging tests: scratch, skip, fail, note and
# need_tool come from the boot-unit tests' lib.sh.
. "$(dirname "$0")/../boot-units/lib.sh"

# Building a package compiles storaged again from scratch (a minute or two
# each): opt-in, as the qemu boot test is.
package_opt_in() {
	[ "${CI:-}" = true ] || [ "${STORAGED_PACKAGE_TEST:-0}" = 1 ] ||
		skip "opt-in: set STORAGED_PACKAGE_TEST=1 (or CI=true) to build the $1 package (a full build, minutes)"
}

# copy_tree DEST: the source tree as it is checked out (tracked and new
# files, not what .gitignore excludes: no build directories, no generated
# configure), or, outside a git checkout (a dist tarball), all of it but
# the build directories.
copy_tree() {
	mkdir -p "$1"
	if git -C "$TOPSRCDIR" rev-parse --git-dir >/dev/null 2>&1; then
		(cd "$TOPSRCDIR" && git ls-files -z -c -o --exclude-standard | xargs -0 tar -cf - --no-recursion) |
			tar -xf - -C "$1" || fail "copying the source tree"
	else
		(cd "$TOPSRCDIR" && tar -cf - --exclude='./build*' --exclude=./autom4te.cache .) |
			tar -xf - -C "$1" || fail "copying the source tree"
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

# deb_build [nocheck]: the .deb of this source tree, `dpkg-buildpackage
# -us -uc -b` from a copy of it, built once per tree_key and kept with its
# .changes, .buildinfo and build log in $BUILDDIR/tests/packaging/deb-KEY/
# (older trees' builds are removed): t-deb.sh, the qemu boot tests and the
# guest suite share it.  With nocheck, a caller that needs the package and
# not its build's own test run (dh_auto_test: the unit tests, which the
# tree's make check runs anyway) reuses the checked build when there is
# one, or builds with DEB_BUILD_OPTIONS="nocheck parallel=2" into
# deb-KEY-nocheck (a minute rather than ten on two CPUs); the callers
# without it never take a nocheck build.  Sets DEB (the storaged .deb) and
# DEB_CHANGES.  Serialised by a lock, so that two tests asking at once
# build it once.
deb_build() {
	local key dir top=$BUILDDIR/tests/packaging old opts=
	key=$(tree_key)
	dir=$top/deb-$key
	mkdir -p "$top"
	exec 8>"$top/.deb.lock"
	flock 8
	if [ "${1:-}" = nocheck ] && ! [ -f "$dir/complete" ]; then
		dir=$dir-nocheck
		opts="nocheck parallel=2"
	fi
	if [ -f "$dir/complete" ]; then
		note "reusing the .deb built from this tree: $dir"
	else
		for old in "$top"/deb-*; do
			case $old in "$top/deb-$key" | "$top/deb-$key-nocheck") [ "$old" = "$dir" ] || continue ;; esac
			[ -e "$old" ] && rm -rf "$old"
		done
		mkdir -p "$dir/src"
		copy_tree "$dir/src/storaged-0.1.0"
		note "dpkg-buildpackage -us -uc -b${opts:+ (DEB_BUILD_OPTIONS=$opts)} in $dir/src/storaged-0.1.0"
		(cd "$dir/src/storaged-0.1.0" && clean_env ${opts:+DEB_BUILD_OPTIONS="$opts"} dpkg-buildpackage -us -uc -b) \
			>"$dir/build.log" 2>&1 ||
			{ exec 8>&-; tail -n 60 "$dir/build.log"; fail "dpkg-buildpackage failed (log: $dir/build.log)"; }
		mv "$dir"/src/*.deb "$dir"/src/*.changes "$dir"/src/*.buildinfo "$dir/" ||
			{ exec 8>&-; fail "dpkg-buildpackage left no .deb/.changes/.buildinfo"; }
		rm -rf "$dir/src"
		touch "$dir/complete"
	fi
	exec 8>&-
	DEB=$(ls "$dir"/storaged_0.1.0_*.deb 2>/dev/null | head -n 1)
	DEB_CHANGES=$(ls "$dir"/storaged_0.1.0_*.changes 2>/dev/null | head -n 1)
	[ -f "$DEB" ] || fail "no storaged_0.1.0_*.deb in $dir"
	[ -f "$DEB_CHANGES" ] || fail "no .changes in $dir"
}

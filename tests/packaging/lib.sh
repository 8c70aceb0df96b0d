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

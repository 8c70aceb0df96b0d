# shellcheck shell=bash
# Shared helpers for the boot-unit tests (SysV script, systemd units).
# Each test gets its own scratch directory, removed on exit.

set -u

HERE=$(cd "$(dirname "$0")" && pwd)
TOPSRCDIR=${TOPSRCDIR:-$(cd "$HERE/../.." && pwd)}
# TEST_NAME, STORAGED, skip, fail, note: as in the integration tests
. "$TOPSRCDIR/tests/integration/lib.sh"
BUILDDIR=$(dirname "$STORAGED")

boot_cleanup() {
	local rc=$?
	set +e
	[ -n "$SCRATCH" ] && rm -rf "$SCRATCH"
	exit "$rc"
}

scratch() {
	SCRATCH=$(mktemp -d "/tmp/storaged-$TEST_NAME.XXXXXX") || fail "mktemp"
	trap boot_cleanup EXIT
	trap 'exit 130' INT TERM
}

# need_tool CMD PACKAGE: installs the Debian package when CMD is missing
# and we are root (tools/install-deps.sh normally did it); skips only when
# it truly cannot be had.
need_tool() {
	command -v "$1" >/dev/null 2>&1 && return 0
	[ -x "/usr/sbin/$1" ] || [ -x "/sbin/$1" ] && { PATH=$PATH:/usr/sbin:/sbin; return 0; }
	if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
		note "installing $2 for $1"
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$2" \
			>/dev/null 2>&1
		PATH=$PATH:/usr/sbin:/sbin
		command -v "$1" >/dev/null 2>&1 && return 0
	fi
	skip "$1 not available and package $2 cannot be installed here"
}

# initscript DEST: the SysV script as `make` builds it (@sbindir@
# substituted), or, outside a build tree, substituted here the same way.
initscript() {
	if [ -f "$BUILDDIR/initscripts/storaged" ]; then
		cp "$BUILDDIR/initscripts/storaged" "$1"
	else
		sed -e 's|@sbindir[@]|/usr/sbin|g' "$TOPSRCDIR/initscripts/storaged.in" >"$1"
	fi
	chmod 0755 "$1"
	grep -q '@sbindir@' "$1" && fail "@sbindir@ left in $1"
	return 0
}

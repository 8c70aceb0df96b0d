#!/bin/bash
# Hostile input, `storaged check`: every fixture of tests/fixtures/bad/ and
# the two generated fstabs give exit 2 with a message per expected line,
# leave the mount table as it was and write no state directory
# (lib-hostile.sh).
#
# Needs no root.  storaged reads only root-owned configs and fstabs, so a
# non-root run happens in a user namespace where the caller is uid 0 and
# its files are root's (unshare --map-root-user).  There only uid 0 is
# mapped: the fixture whose setup gives it another owner is skipped (noted;
# t-hostile-input.sh and a root run of this test cover it).  Exit 77 only
# when neither root nor a user namespace is available.
. "$(dirname "$0")/lib.sh"

if [ "$(id -u)" != 0 ]; then
	[ -z "${STORAGED_HOSTILE_USERNS:-}" ] || fail "still not uid 0 inside the user namespace"
	unshare --map-root-user true 2>/dev/null ||
		skip "not root, and no user namespace (unshare --map-root-user) in which the inputs are root's"
	STORAGED_HOSTILE_USERNS=1 exec unshare --map-root-user bash "$0" "$@"
fi
[ -n "${STORAGED_HOSTILE_USERNS:-}" ] && HOSTILE_OWNER_MAY_FAIL=1
. "$(dirname "$0")/lib-hostile.sh"

[ -x "$STORAGED" ] || fail "storaged binary not found at '$STORAGED' (build first)"
SCRATCH=$(mktemp -d "/tmp/storaged-$TEST_NAME.XXXXXX") || fail "mktemp"
trap cleanup EXIT
trap 'exit 130' INT TERM
CONF=$SCRATCH/storaged.conf
FSTAB=$SCRATCH/fstab
STATE=$SCRATCH/run
printf '[storaged]\n' >"$CONF"
: >"$FSTAB"
chmod 0644 "$CONF" "$FSTAB"

HOSTILE_CMDS=check
hostile_run
exit 0

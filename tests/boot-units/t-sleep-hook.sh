#!/bin/bash
# The system-sleep hook (systemd/storaged-sleep.in, installed as
# system-sleep/storaged) against a test config and state directory
# (STORAGED_DEFAULTS points it at them), as systemd-sleep runs it:
# - `pre suspend` (and `pre hibernate`) syncs a persist area's change back
#   into its directory before the machine would sleep, and prints nothing;
# - `post suspend` does nothing;
# - a sync that fails, or runs out of STORAGED_SLEEP_TIMEOUT, never fails
#   or holds the sleep: exit 0, a message saying what to run, back within
#   the bound.
. "$(dirname "$0")/../integration/lib.sh"
. "$(dirname "$0")/lib.sh"
SCRATCH=
setup

HOOK=$SCRATCH/storaged-sleep
if [ -f "$BUILDDIR/systemd/storaged-sleep" ]; then
	cp "$BUILDDIR/systemd/storaged-sleep" "$HOOK"
else
	sed -e 's|@sbindir[@]|/usr/sbin|g' "$TOPSRCDIR/systemd/storaged-sleep.in" >"$HOOK"
fi
chmod 0755 "$HOOK"
grep -q '@sbindir@' "$HOOK" && fail "@sbindir@ left in $HOOK"

P=$SCRATCH/work
mkdir -p "$P"
echo before >"$P/file"
cat >"$CONF" <<EOT
[storaged]
sync-interval = 0
[area work]
path = $P
backend = tmpfs
size = 16M
persist = yes
EOT
DEFAULTS=$SCRATCH/default-storaged
printf 'STORAGED_OPTS="-c %s -f %s --state-dir %s"\n' "$CONF" "$FSTAB" "$STATE" >"$DEFAULTS"
LOWER=$STATE/areas/work/lower/file

# hook WANT ARGS...: runs the hook as systemd-sleep does; output in $OUT
hook() {
	local want=$1 rc
	shift
	OUT=$(STORAGED_BIN=${BIN:-$STORAGED} STORAGED_DEFAULTS=$DEFAULTS "$HOOK" "$@" 2>&1)
	rc=$?
	printf '%s\n' "$OUT" | sed 's/^/  | /'
	[ "$rc" = "$want" ] || fail "the hook '$*' exited $rc, expected $want"
}

run_sd 0 start
is_mountpoint "$P" || fail "the area is not set up"
[ "$(cat "$LOWER")" = before ] || fail "the directory under the area is not where the test looks: $LOWER"

note "pre suspend: the change is synced into the directory, quietly"
echo written-before-sleep >"$P/file"
echo new >"$P/added"
hook 0 pre suspend
[ -z "$OUT" ] || fail "the hook printed something on success"
[ "$(cat "$LOWER")" = written-before-sleep ] && [ -f "$STATE/areas/work/lower/added" ] ||
	fail "pre suspend did not sync the area into its directory"
is_mountpoint "$P" || fail "the sync before sleep uncovered the directory"

note "post suspend: nothing"
echo after-resume >"$P/file"
hook 0 post suspend
[ "$(cat "$LOWER")" = written-before-sleep ] || fail "post suspend synced"

note "pre hibernate: synced too"
hook 0 pre hibernate
[ "$(cat "$LOWER")" = after-resume ] || fail "pre hibernate did not sync"

note "a failing sync: exit 0, says what to run"
BIN=$SCRATCH/failing
printf '#!/bin/sh\necho "storaged: error: area work: no room" >&2\nexit 1\n' >"$BIN"
chmod 0755 "$BIN"
hook 0 pre suspend
expect_out "before suspend failed (exit 1)"
expect_out "run \`storaged sync\` after the resume"

note "a sync that does not end: stopped after STORAGED_SLEEP_TIMEOUT, exit 0"
BIN=$SCRATCH/hanging
printf '#!/bin/sh\nexec sleep 60\n' >"$BIN"
chmod 0755 "$BIN"
t0=$(date +%s)
STORAGED_SLEEP_TIMEOUT=1 hook 0 pre suspend
[ $(($(date +%s) - t0)) -le 8 ] || fail "the hook held the sleep $(($(date +%s) - t0)) s with a 1 s timeout"
expect_out "ran out of 1s"
BIN=

run_sd 0 stop
[ "$(cat "$P/file")" = after-resume ] || fail "stop lost the data"

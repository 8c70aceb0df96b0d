#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# storaged finds its copy helper storaged-copy beside its own binary only
# when that file is root-owned and writable by root alone, else in
# LIBEXECDIR/storaged.  A copy of storaged in a scratch directory, with an
# unsafe helper beside it and no installed helper (masked in a private
# mount namespace when this machine has one), must refuse a seeded area
# with a message that names the helper and says to reinstall, run nothing
# and change nothing; with a good helper beside it, the same area works.
. "$(dirname "$0")/lib-area.sh"

HELPER=$STORAGED_COPY
[ -x "$HELPER" ] || fail "no storaged-copy at '$HELPER' (beside $STORAGED, or set STORAGED_COPY)"
BIN=$SCRATCH/bin
mkdir -p "$BIN" "$SCRATCH/dir/sub"
cp "$STORAGED" "$BIN/storaged"
echo data >"$SCRATCH/dir/sub/file"
tree_stat "$SCRATCH/dir" >"$SCRATCH/before"
# the installed helper's path, as compiled in
INSTALLED=$(strings "$STORAGED" | grep -m1 '/storaged/storaged-copy$') ||
	fail "no LIBEXECDIR/storaged/storaged-copy string in $STORAGED"
write_conf <<EOT
[area h]
path = $SCRATCH/dir
backend = tmpfs
size = 16M
inodes = 100
EOT

# run_copy_of_storaged ARGS...: $BIN/storaged with the installed helper hidden
run_copy_of_storaged() {
	local sd=("$BIN/storaged" -c "$CONF" -f "$FSTAB" --state-dir "$RUN" "$@")
	if [ -e "$INSTALLED" ]; then
		command -v unshare >/dev/null || skip "'$INSTALLED' exists and unshare is missing"
		unshare -m --propagation private sh -c 'mount -t tmpfs none "$1" && shift && exec "$@"' \
			sh "$(dirname "$INSTALLED")" "${sd[@]}" >"$OUT" 2>&1
	else
		"${sd[@]}" >"$OUT" 2>&1
	fi
}

unchanged() {
	! is_mountpoint "$SCRATCH/dir" || fail "$1: the directory was covered"
	[ -z "$(scratch_mounts)" ] || fail "$1: mounts left: $(scratch_mounts)"
	[ ! -e "$RUN/areas/h" ] || fail "$1: '$RUN/areas/h' left behind"
	[ ! -e "$SCRATCH/ran" ] || fail "$1: the unsafe helper was run"
	diff -u "$SCRATCH/before" <(tree_stat "$SCRATCH/dir") || fail "$1: the directory changed"
}

printf '#!/bin/sh\ntouch %s/ran\necho "0 "\n' "$SCRATCH" >"$BIN/storaged-copy"
for how in group-writable not-root-owned missing; do
	case $how in
	group-writable) chmod 0775 "$BIN/storaged-copy" ;;
	not-root-owned) chmod 0755 "$BIN/storaged-copy" && chown 65534 "$BIN/storaged-copy" ;;
	missing) rm -f "$BIN/storaged-copy" ;;
	esac
	run_copy_of_storaged start
	rc=$?
	[ $rc = 1 ] || { cat "$OUT"; fail "$how: start exited $rc, expected 1"; }
	grep -q "copy helper '$INSTALLED' is missing.*reinstall storaged" "$OUT" ||
		{ cat "$OUT"; fail "$how: no clear message naming '$INSTALLED'"; }
	unchanged "$how"
	pass "$how helper beside storaged: refused with a clear message, nothing changed"
done

# the control: the same copy of storaged with a good helper beside it
install -m 0755 -o root -g root "$HELPER" "$BIN/storaged-copy"
# (not in a namespace: its mounts must outlive this command for stop)
"$BIN/storaged" -c "$CONF" -f "$FSTAB" --state-dir "$RUN" start >"$OUT" 2>&1 ||
	{ cat "$OUT"; fail "start with a good helper failed"; }
is_mountpoint "$SCRATCH/dir" || fail "the area does not cover the directory"
diff -u "$SCRATCH/before" <(tree_stat "$SCRATCH/dir") || fail "seeded tree differs"
"$BIN/storaged" -c "$CONF" -f "$FSTAB" --state-dir "$RUN" stop >"$OUT" 2>&1 ||
	{ cat "$OUT"; fail "stop failed"; }
pass "a root-owned helper beside storaged is used"

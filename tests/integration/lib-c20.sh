# shellcheck shell=bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Shared by the C20 race tests (t-c20-*.sh); sourced after lib.sh's setup.
# An unprivileged user (uid 65534) owns $SCRATCH/home/u and keeps
# exchanging a name there with a symbolic link to a root-owned directory
# (c20-swap, renameat2 RENAME_EXCHANGE in a tight loop) while storaged
# starts and stops.  Nothing storaged does may land on the link's target.

C20_UID=65534
C20_SWAP=${C20_SWAP:-$(dirname "$STORAGED")/tests/integration/c20-swap}
C20_PIDS=

command -v setpriv >/dev/null || skip "setpriv missing"
[ -x "$C20_SWAP" ] || skip "c20-swap not built at '$C20_SWAP'"

c20_stop_attackers() {
	local p
	for p in $C20_PIDS; do
		kill "$p" 2>/dev/null
		wait "$p" 2>/dev/null
	done
	C20_PIDS=
}
CLEANUP_HOOK=c20_stop_attackers

# c20_home: $SCRATCH/home/u owned by the user; the scratch directory and
# home reachable by it (mktemp made the scratch directory 0700).
c20_home() {
	chmod 0755 "$SCRATCH"
	mkdir -p "$SCRATCH/home/u"
	chown "$C20_UID:$C20_UID" "$SCRATCH/home/u"
	chmod 0755 "$SCRATCH/home"
}

# c20_user_dir NAME: a directory of the user's in home, with a file in it.
c20_user_dir() {
	mkdir "$SCRATCH/home/u/$1"
	echo "user's file" >"$SCRATCH/home/u/$1/userfile"
	chown -R "$C20_UID:$C20_UID" "$SCRATCH/home/u/$1"
}

# c20_root_dir PATH: a root-owned directory with a marker in it.
c20_root_dir() {
	mkdir -p "$1"
	echo "root's file" >"$1/rootfile"
	chmod 0755 "$1"
}

# c20_attack NAME TARGET: the user's link NAME.lnk -> TARGET in home, and
# the loop exchanging NAME with it, for at most 10 minutes.
c20_attack() {
	setpriv --reuid=$C20_UID --regid=$C20_UID --clear-groups \
		ln -s "$2" "$SCRATCH/home/u/$1.lnk" || fail "ln -s as uid $C20_UID"
	setpriv --reuid=$C20_UID --regid=$C20_UID --clear-groups \
		"$C20_SWAP" "$SCRATCH/home/u" "$1" "$1.lnk" 600 &
	C20_PIDS="$C20_PIDS $!"
}

# c20_pause / c20_resume: hold the attackers while the test tidies up.
c20_pause() {
	local p
	for p in $C20_PIDS; do kill -STOP "$p"; done
}
c20_resume() {
	local p
	for p in $C20_PIDS; do kill -CONT "$p"; done
}

# c20_mounted_on PATH: true when anything is mounted on PATH (exactly).
c20_mounted_on() {
	awk -v p="$1" '$5 == p { f = 1 } END { exit !f }' /proc/self/mountinfo
}

# c20_unmount_all: everything below the scratch directory, deepest first.
c20_unmount_all() {
	local m
	for _ in 1 2 3 4 5; do
		m=$(awk -v s="$SCRATCH/" 'index($5, s) == 1 { print $5 }' /proc/self/mountinfo | sort -r)
		[ -z "$m" ] && return 0
		for m in $m; do
			umount -l "$m" 2>/dev/null
		done
	done
}

# c20_restore NAME: NAME the directory again, NAME.lnk the link.
c20_restore() {
	if [ -L "$SCRATCH/home/u/$1" ]; then
		mv -T "$SCRATCH/home/u/$1" "$SCRATCH/home/u/$1.tmp"
		mv -T "$SCRATCH/home/u/$1.lnk" "$SCRATCH/home/u/$1"
		mv -T "$SCRATCH/home/u/$1.tmp" "$SCRATCH/home/u/$1.lnk"
	fi
}

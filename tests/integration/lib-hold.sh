# shellcheck shell=bash
# Sourced by lib.sh and lib-area.sh.

# hold_in DIR: starts a process whose working directory is DIR, returns
# once it is there (a background shell may not have entered DIR before the
# next command runs); its pid in HOLDER.
hold_in() {
	(cd "$1" && exec sleep 300) &
	HOLDER=$!
	for _ in $(seq 100); do [ "$(readlink "/proc/$HOLDER/cwd")" = "$1" ] && return 0; sleep 0.05; done
	kill "$HOLDER" 2>/dev/null
	fail "the holder did not enter '$1'"
}

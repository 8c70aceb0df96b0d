#!/bin/bash
# The bash completion (completion/storaged), sourced into bash and called
# the way bash calls it (COMP_WORDS, COMP_CWORD): commands, options, files
# and directories for the options that take them, area names from the
# configuration for `sync`.  Quick, no root needed.
. "$(dirname "$0")/../boot-units/lib.sh"
scratch
. "$TOPSRCDIR/completion/storaged" || fail "sourcing completion/storaged"
complete -p storaged | grep -q -- '-F _storaged' || fail "no 'complete -F _storaged storaged'"

# complete WORD...: the completions for the command line "storaged WORD...",
# the last WORD being the one under the cursor, sorted, one a line.
complete_line() {
	COMP_WORDS=(storaged "$@")
	COMP_CWORD=$#
	COMPREPLY=()
	_storaged storaged "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD - 1]}"
	printf '%s\n' "${COMPREPLY[@]}" | sed '/^$/d' | sort
}

# expect "WORDS" "EXPECTED": EXPECTED is the sorted completions, space-separated;
# WORDS empty or ending with a space: the cursor is on a new, empty word.
expect() {
	local got words
	read -r -a words <<<"$1"
	case $1 in '' | *' ') words+=("") ;; esac
	got=$(complete_line "${words[@]}" | tr '\n' ' ' | sed 's/ $//')
	[ "$got" = "$2" ] || fail "storaged $1<TAB>: expected '$2', got '$got'"
}

# Every option of `storaged --help` is offered, and nothing that is not one.
if [ -x "${STORAGED:-}" ]; then
	help=$("$STORAGED" --help | grep -oE -- '(^|[ ,])-(-[a-z-]+|[a-z])' | tr -d ' ,' | sort -u |
		tr '\n' ' ' | sed 's/ $//')
	got=$(complete_line - | tr '\n' ' ' | sed 's/ $//')
	[ "$got" = "$help" ] || fail "options: completion offers '$got', storaged --help lists '$help'"
fi

expect "" "cat-config check scan start status stop sync systemd-generator"
expect "st" "start status stop"
expect "s" "scan start status stop sync systemd-generator"
expect "-v st" "start status stop"
expect "--dry-run --state-dir /run st" "start status stop"
expect "--st" "--state-dir"
expect "--fo" "--foreground --format"
expect "--format = " "prometheus"
expect "--format = p" "prometheus"
expect "--format pro" "prometheus"
expect "--format prometheus st" "start status stop"
expect "start --lo" "--local"
expect "status --j" "--json"
expect "scan x" ""

# Files after -c and -f, directories after --state-dir and for the
# generator, also in the --opt=VALUE form (split at '=' by bash).
mkdir -p "$SCRATCH/d/sub"
touch "$SCRATCH/d/a.conf" "$SCRATCH/d/fstab"
expect "-c $SCRATCH/d/a" "$SCRATCH/d/a.conf"
expect "--fstab $SCRATCH/d/f" "$SCRATCH/d/fstab"
expect "--state-dir $SCRATCH/d/" "$SCRATCH/d/sub"
expect "systemd-generator $SCRATCH/d/" "$SCRATCH/d/sub"
expect "--config = $SCRATCH/d/a" "$SCRATCH/d/a.conf"

# sync: the areas of the configuration named by -c (and its .d drop-ins).
conf=$SCRATCH/storaged.conf
cat >"$conf" <<EOT
[storaged]
jobs = 2
[area rpmbuild]
path = /root/rpmbuild
  [area  ccache ]   ; comment
path = /var/cache/ccache
# [area commented]
EOT
mkdir "$conf.d"
printf '[area build]\npath = /var/build\n' >"$conf.d/10-build.conf"
printf '[area ignored]\npath = /x\n' >"$conf.d/not-a-conf"
expect "-c $conf sync " "build ccache rpmbuild"
expect "--config=$conf sync r" "rpmbuild"
expect "-c $conf sync rpmbuild " ""
expect "-c $SCRATCH/missing.conf sync " ""
exit 0

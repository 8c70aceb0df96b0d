#!/bin/bash
# The bash completion (completion/storaged), sourced into bash and called
# the way bash calls it (COMP_WORDS, COMP_CWORD): commands, options, files
# and directories for the options that take them, column names for -o,
# area names for `sync` from every layer of the configuration as storaged
# reads it (the same names as the files `storaged cat-config` prints).
# Quick, no root needed (the cat-config comparison is skipped without).
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
	help=$("$STORAGED" --help | grep -oE -- '(^|[ ,])-(-[a-z-]+|[a-zA-Z])' | tr -d ' ,' | sort -u |
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
expect "-V" "-V"
expect "status --no" "--noheadings"
expect "scan --r" "--raw"

# -o: the command's columns, each name after the last comma, any case;
# both commands' before the command is known.  The lists are those of
# --help.
expect "status -o WH" "WHAT"
expect "status -o KIND,WA" "KIND,WAIT KIND,WAITED_MS"
expect "status --output +nof" "+NOFAIL"
expect "scan -o de" "DEVIDS"
expect "scan -o FSID,MI" "FSID,MISSING"
expect "-o SEE" "SEEDS"
expect "-o DE" "DECISION DETAIL DEVIDS"
expect "status -o KIND st" ""
if [ -x "${STORAGED:-}" ]; then
	for cmd in status scan; do
		want=$("$STORAGED" --help | sed -n "/^Columns of $cmd /,/^\$/p" |
			awk 'NR > 1 && NF { print ($1 == "*") ? $2 : $1 }' | sort | tr '\n' ' ' | sed 's/ $//')
		[ -n "$want" ] || fail "no columns of $cmd in storaged --help"
		expect "$cmd -o " "$want"
	done
fi

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

# The layers (STORAGED_CONFIG_DIRS stands in for /usr/lib, /run and /etc
# storaged.conf.d, as in tests/integration/t-config-layers.sh): every
# layer's areas, a higher layer's drop-in replacing the one of the same
# name below it, a link to /dev/null masking it, files not named *.conf
# not read.
L=$SCRATCH/layers
mkdir -p "$L/usr" "$L/run" "$L/etc"
printf '[storaged]\n[area main]\npath = /m\n' >"$SCRATCH/main.conf"
printf '[area vendor]\npath = /v\n[area replaced]\npath = /r\n' >"$L/usr/10-vendor.conf"
printf '[area admin]\npath = /v\n' >"$L/etc/10-vendor.conf"
printf '[area masked]\npath = /x\n' >"$L/usr/20-masked.conf"
ln -s /dev/null "$L/run/20-masked.conf"
printf '[area runtime]\npath = /y\n' >"$L/run/30-runtime.conf"
printf '[area ignored]\npath = /z\n' >"$L/etc/README"
chmod 0644 "$SCRATCH/main.conf" "$L"/*/*
export STORAGED_CONFIG_DIRS=$L/usr:$L/run:$L/etc
expect "-c $SCRATCH/main.conf sync " "admin main runtime"
# the same files as `storaged cat-config` prints (it checks owners: root)
if [ -x "${STORAGED:-}" ] && [ "$(id -u)" = 0 ]; then
	got=$(_storaged_config_files "$SCRATCH/main.conf" | tr '\n' ' ')
	want=$("$STORAGED" -c "$SCRATCH/main.conf" cat-config 2>&1 | sed -n 's/^# \(\/[^:]*\)$/\1/p' | tr '\n' ' ')
	[ "$got" = "$want" ] || fail "completion reads '$got', storaged cat-config prints '$want'"
fi
unset STORAGED_CONFIG_DIRS
exit 0

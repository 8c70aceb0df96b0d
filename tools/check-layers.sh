#!/bin/bash
# The layering rule: each folder of src/ stands on a layer, and a file may
# include the headers of its own folder and of folders on lower layers,
# never of a folder on its own layer or above.  So no folder includes one
# that includes it back, and nothing below src/cli/ includes cli/.
#
# The order, lowest first (one line each; folders on one line are peers,
# which include none of each other):
LAYERS=(
	"shared" # helpers every folder uses: strings, logging, diag, units
	"parse" # the pure parsers
	"copy devices mount state" # the tree copy, devices, mounting, run state
	"plan" # the pure planner (devices/ for the inventory's types)
	"area" # RAM areas: mounts, copies, sizes from the planner
	"world" # the loader of one pass and the predictions
	"status" # live status and metrics, over the loader
	"exec" # the executors, which report status as they go
	"cli" # main() and the commands
)
# The graph is read from the source, from every `#include "FOLDER/..."`
# line of src/*/*.[ch]; an include that fails the rule fails the test,
# naming the file, the line and, when it closes a loop of folders, the
# loop.  A folder of src/ that is on no layer fails too, as does an
# include that climbs out of its folder ("../"), which the graph could not
# see.
#
# Inside a folder the same holds between files: a room is NAME.c with its
# NAME.h, a header with no .c of its name is looked through to what it
# includes, and room A stands on room B when A.c or A.h includes B.h.  A
# loop of rooms fails (two files that include each other's header are one
# job split in two, or share a piece that belongs in a file below both),
# except the loops in KNOWN_FILE_LOOPS, which are there today and are to
# go; one of them that is gone fails too, so that the list only shrinks.
#
# Run by `make check` ($srcdir is the source tree); also by hand:
# tools/check-layers.sh.  Exit: 0 layered; 1 an include against the rule
# (each one listed), a folder on no layer, or a new (or gone) file loop.
set -uo pipefail
export LC_ALL=C

# File loops inside a folder that are known, each as its rooms in sorted
# order: a header's types used by the file whose functions use it back.
KNOWN_FILE_LOOPS=(
	"src/copy/copy src/copy/copy_budget" # copy/ is being rewritten
	"src/copy/copy src/copy/copy_fd"
	"src/mount/mount_child src/mount/mountfd_walk" # mount_child.h's types
	"src/parse/area_facts src/parse/config" # enum area_backend
	"src/plan/plan src/plan/plan_identity" # struct plan_step, struct plan_input
	"src/world/refuse src/world/world" # struct world
)

TEST_NAME=check-layers
src=${srcdir:-$(cd "$(dirname "$0")/.." && pwd)}
[ -n "${srcdir:-}" ] && src=$(cd "$srcdir" && pwd)

declare -A layer_of
for i in "${!LAYERS[@]}"; do
	for f in ${LAYERS[$i]}; do
		layer_of[$f]=$i
	done
done

fail=0
for d in "$src"/src/*/; do
	f=$(basename "$d")
	[ -n "${layer_of[$f]:-}" ] || {
		echo "FAIL: $TEST_NAME: src/$f/ is on no layer: add it to LAYERS in tools/check-layers.sh, above every folder it includes" >&2
		fail=1
	}
done

# "FROM_FOLDER FILE LINE TO_FOLDER HEADER" for every include of another
# folder of src/, and "../" ones with TO_FOLDER ".."
includes=$(cd "$src" && grep -n '^[[:space:]]*#[[:space:]]*include[[:space:]]*"' src/*/*.[ch] |
	sed -n 's|^src/\([^/]*\)/\([^:]*\):\([0-9]*\):[^"]*"\([^"]*\)".*|\1 src/\1/\2 \3 \4|p' |
	while read -r from file line header; do
		case $header in
		*../*) echo "$from $file $line .. $header" ;;
		*/*)
			to=${header%%/*}
			[ -d "$src/src/$to" ] && [ "$to" != "$from" ] && echo "$from $file $line $to $header"
			;;
		esac
	done)

# the folder graph, "FROM TO" once per pair
declare -A edges
while read -r from _ _ to _; do
	[ -n "$from" ] && [ "$to" != .. ] && edges[$from]+=" $to"
done <<<"$includes"

# A path from $1 to $2 along the graph named $3 (default: edges, the
# folders) ("a -> b -> c"), or nothing (breadth first, so the shortest).
path_between() {
	local start=$1 goal=$2 f n
	local -n graph=${3:-edges}
	local -A prev=([$start]=-)
	local queue=("$start")
	while [ ${#queue[@]} -gt 0 ]; do
		f=${queue[0]}
		queue=("${queue[@]:1}")
		if [ "$f" = "$goal" ]; then
			local p=$goal
			while [ "${prev[$f]}" != - ]; do
				f=${prev[$f]}
				p="$f -> $p"
			done
			echo "$p"
			return
		fi
		for n in ${graph[$f]:-}; do
			[ -n "${prev[$n]:-}" ] && continue
			prev[$n]=$f
			queue+=("$n")
		done
	done
}

checked=0
while read -r from file line to header; do
	[ -n "$from" ] || continue
	checked=$((checked + 1))
	if [ "$to" = .. ]; then
		echo "FAIL: $TEST_NAME: $file:$line: #include \"$header\" climbs out of src/$from/: name the folder (\"FOLDER/name.h\") so the layering can be checked" >&2
		fail=1
		continue
	fi
	lf=${layer_of[$from]:-}
	lt=${layer_of[$to]:-}
	if [ -z "$lf" ] || [ -z "$lt" ]; then
		continue # said above
	fi
	[ "$lt" -lt "$lf" ] && continue
	if [ "$lt" = "$lf" ]; then
		why="$to/ is on the same layer as $from/ (${LAYERS[$lf]})"
	else
		why="$to/ is on a layer above $from/"
	fi
	loop=$(path_between "$to" "$from")
	[ -z "$loop" ] || why="$why, and $to/ reaches back: it closes the loop $from -> $loop"
	echo "FAIL: $TEST_NAME: $file:$line: #include \"$header\" runs up: $why; move what it takes from $to/ down to a folder below $from/ (or, if $from/ truly stands on $to/, reorder LAYERS in tools/check-layers.sh)" >&2
	fail=1
done <<<"$includes"

# The file-level graph inside each folder: "src/F/FILE HEADER_PATH" for
# every include of a header of the file's own folder.
declare -A direct
while read -r file header; do
	direct[$file]+=" $header"
done < <(cd "$src" && grep -H '^[[:space:]]*#[[:space:]]*include[[:space:]]*"' src/*/*.[ch] |
	sed -n 's|^\(src/[^/]*/[^:]*\):[^"]*"\([^"]*\)".*|\1 \2|p' |
	while read -r file h; do
		dir=${file%/*}
		case $h in
		"${dir#src/}"/*) h=${h#*/} ;;
		*/*) continue ;;
		esac
		[ -e "$dir/$h" ] && echo "$file $dir/$h"
	done)

# rooms: "src/F/NAME" for each NAME.c; fedges: the rooms each stands on
declare -A fedges
for c in "$src"/src/*/*.c; do
	room=${c#"$src"/}
	room=${room%.c}
	declare -A seen=()
	todo="${direct[$room.c]:-} ${direct[$room.h]:-}"
	while [ -n "${todo// /}" ]; do
		read -r h todo <<<"$todo"
		[ -n "${seen[$h]:-}" ] && continue
		seen[$h]=1
		if [ -e "$src/${h%.h}.c" ]; then
			[ "${h%.h}" = "$room" ] || fedges[$room]+=" ${h%.h}"
		else
			todo="$todo ${direct[$h]:-}"
		fi
	done
	unset seen
done

declare -A file_loops
for a in "${!fedges[@]}"; do
	for b in ${fedges[$a]}; do
		loop=$(path_between "$b" "$a" fedges)
		[ -n "$loop" ] || continue
		key=$(echo "$a ${loop//->/}" | tr ' ' '\n' | grep . | sort -u | tr '\n' ' ')
		file_loops[${key% }]="$a -> $loop"
	done
done
for key in "${!file_loops[@]}"; do
	case " ${KNOWN_FILE_LOOPS[*]/%/|} " in *" $key|"*) continue ;; esac
	echo "FAIL: $TEST_NAME: files include each other's headers: ${file_loops[$key]}; merge them if they are one job, or move what both take down into a file below both" >&2
	fail=1
done
for key in "${KNOWN_FILE_LOOPS[@]}"; do
	[ -n "${file_loops[$key]:-}" ] && continue
	echo "FAIL: $TEST_NAME: the known file loop '$key' is gone: remove it from KNOWN_FILE_LOOPS in tools/check-layers.sh" >&2
	fail=1
done

[ "$checked" -gt 0 ] || {
	echo "FAIL: $TEST_NAME: no include of one folder of $src/src/ by another found" >&2
	exit 1
}
[ "$fail" = 0 ] || exit 1
echo "PASS: $TEST_NAME: $checked includes between the ${#layer_of[@]} folders of src/ point down the ${#LAYERS[@]} layers; no loop of files inside a folder but the ${#KNOWN_FILE_LOOPS[@]} known"

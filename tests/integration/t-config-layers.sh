#!/bin/bash
# The configuration's layers, as systemd's: drop-in directories lowest
# priority first (vendor, runtime, administrator; STORAGED_CONFIG_DIRS
# stands in for /usr/lib, /run and /etc here), a drop-in overriding the
# one of the same name below it, a link to /dev/null masking it, and
# `storaged cat-config` printing the files in effect with their names.
# Every configuration file, the main one included, is read without
# following a link and only from a root-owned directory closed to group
# and others; a refused file is an error (exit 2) that changes nothing.
# The fstab storaged reads (-f) is checked as the main file is.
. "$(dirname "$0")/lib.sh"
setup

L=$SCRATCH/layers
mkdir -p "$L/usr" "$L/run" "$L/etc" "$SCRATCH/a" "$SCRATCH/b" "$SCRATCH/c" "$SCRATCH/m"
export STORAGED_CONFIG_DIRS=$L/usr:$L/run:$L/etc
conf() { # FILE CONTENTS
	printf '%s' "$2" >"$1" && chmod 0644 "$1"
}
conf "$CONF" $'[storaged]\njobs = 2\n'
conf "$L/usr/10-build.conf" "[area build]
path = $SCRATCH/a
size = 16M
"
conf "$L/etc/10-build.conf" "[area build]
path = $SCRATCH/b
size = 16M
"
conf "$L/usr/20-cache.conf" "[area cache]
path = $SCRATCH/c
size = 16M
"
ln -s /dev/null "$L/run/20-cache.conf"
conf "$L/run/30-mail.conf" "[area mail]
path = $SCRATCH/m
size = 16M
"
conf "$L/etc/README" "not a .conf: not read"

note "the plan: build from the administrator's file, cache masked, mail from the runtime's"
run_sd 0 --dry-run
expect_out "area build tmpfs on $SCRATCH/b "
expect_no_out "on $SCRATCH/a "
expect_no_out "area cache"
expect_out "area mail tmpfs on $SCRATCH/m "

note "cat-config: the files in effect, in the order read, each named"
run_sd 0 cat-config
expected="# $CONF
[storaged]
jobs = 2

# $L/etc/10-build.conf
[area build]
path = $SCRATCH/b
size = 16M

# $L/run/20-cache.conf: masked (a link to /dev/null)

# $L/run/30-mail.conf
[area mail]
path = $SCRATCH/m
size = 16M"
[ "$OUT" = "$expected" ] || fail "cat-config printed something else; expected:
$expected"

# Each refusal: exit 2, the file named with what to do, nothing mounted.
refused() { # WHAT EXPECTED-MESSAGE
	note "refused: $1"
	mount_snapshot >"$SCRATCH/before"
	run_sd 2 start
	expect_out "$2"
	mount_snapshot | diff "$SCRATCH/before" - >/dev/null || fail "a refused configuration changed the mounts"
	[ -e "$STATE" ] && [ -n "$(ls -A "$STATE" 2>/dev/null)" ] && fail "a refused configuration wrote state"
	return 0
}

ln -s "$L/usr/20-cache.conf" "$L/etc/40-link.conf"
refused "a drop-in that is a link elsewhere" \
	"$L/etc/40-link.conf: a symbolic link: storaged follows no link among its configuration files except one to /dev/null"
rm "$L/etc/40-link.conf"

chmod 0775 "$L/run"
refused "a drop-in directory group can write" \
	"$L/run: owned by uid 0, mode 0775: storaged reads configuration only from a root-owned directory that group and others cannot write; run 'chown root:root $L/run; chmod go-w $L/run'"
chmod 0755 "$L/run"

chmod 0664 "$L/etc/10-build.conf"
refused "a drop-in group can write" "$L/etc/10-build.conf: owned by uid 0, mode 0664"
chmod 0644 "$L/etc/10-build.conf"

# the main file: in a directory of its own, checked as the drop-ins are
mkdir -p "$SCRATCH/cfg"
chmod 0755 "$SCRATCH/cfg"
cp "$CONF" "$SCRATCH/cfg/storaged.conf"
ln -s "$SCRATCH/cfg/storaged.conf" "$SCRATCH/cfg/link.conf"
REAL_CONF=$CONF
CONF=$SCRATCH/cfg/link.conf
refused "the main file is a symbolic link" \
	"$SCRATCH/cfg/link.conf: a symbolic link: storaged does not follow links to its configuration files; put the file itself there, or name the file the link points to"
ln -s "$SCRATCH/cfg" "$SCRATCH/cfglink"
CONF=$SCRATCH/cfglink/storaged.conf
refused "the main file reached through a linked directory" \
	"$SCRATCH/cfglink: not a directory, or reached through a symbolic link"
chmod 0777 "$SCRATCH/cfg"
CONF=$SCRATCH/cfg/storaged.conf
refused "the main file's directory others can write" \
	"$SCRATCH/cfg: owned by uid 0, mode 0777"
chmod 1777 "$SCRATCH/cfg"
refused "the main file in a directory like /tmp (sticky, everyone's)" \
	"$SCRATCH/cfg: mode 1777, a directory everyone may write to: storaged reads configuration only from a root-owned directory that group and others cannot write; put the file in one"
chmod 0755 "$SCRATCH/cfg"
CONF=$SCRATCH/cfg/missing.conf
refused "a main file named with -c that is not there (its drop-ins are)" \
	"$SCRATCH/cfg/missing.conf: cannot read configuration: No such file or directory"
CONF=$REAL_CONF

# the fstab storaged reads (-f): the same checks as the main file
mkdir -p "$SCRATCH/tab"
chmod 0755 "$SCRATCH/tab"
cp "$FSTAB" "$SCRATCH/tab/fstab"
ln -s "$SCRATCH/tab/fstab" "$SCRATCH/tab/link"
REAL_FSTAB=$FSTAB
FSTAB=$SCRATCH/tab/link
refused "the fstab is a symbolic link" \
	"$SCRATCH/tab/link: a symbolic link: storaged does not follow links to its configuration files; put the file itself there, or name the file the link points to"
ln -s "$SCRATCH/tab" "$SCRATCH/tablink"
FSTAB=$SCRATCH/tablink/fstab
refused "the fstab reached through a linked directory" \
	"$SCRATCH/tablink/fstab: its directory '$SCRATCH/tablink': not a directory, or reached through a symbolic link"
FSTAB=$SCRATCH/tab/fstab
chmod 0777 "$SCRATCH/tab"
refused "the fstab's directory others can write" \
	"$SCRATCH/tab/fstab: its directory '$SCRATCH/tab': owned by uid 0, mode 0777: storaged reads configuration only from a root-owned directory that group and others cannot write; run 'chown root:root $SCRATCH/tab; chmod go-w $SCRATCH/tab'"
chmod 1777 "$SCRATCH/tab"
refused "the fstab in a directory like /tmp (sticky, everyone's)" \
	"$SCRATCH/tab/fstab: its directory '$SCRATCH/tab': mode 1777, a directory everyone may write to"
run_sd 2 check
expect_out "$SCRATCH/tab/fstab: its directory '$SCRATCH/tab': mode 1777"
chmod 0755 "$SCRATCH/tab"
run_sd 0 check
FSTAB=$REAL_FSTAB

note "without STORAGED_CONFIG_DIRS a file named with -c has FILE.d only"
unset STORAGED_CONFIG_DIRS
mkdir -p "$CONF.d"
conf "$CONF.d/10-build.conf" "[area own]
path = $SCRATCH/a
size = 16M
"
run_sd 0 --dry-run
expect_out "area own tmpfs on $SCRATCH/a "
expect_no_out "area build"
run_sd 0 cat-config
expect_out "# $CONF.d/10-build.conf"
exit 0

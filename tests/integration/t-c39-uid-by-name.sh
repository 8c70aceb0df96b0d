#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# C39: Gentoo's build-in-RAM line, a tmpfs owned by a user and group named
# in the line (uid=portage,gid=portage).  mount(8) mounts it: libmount
# turns the names into numbers before mount(2) (context_mount.c
# fix_optstr(), for uid= and gid= of any filesystem).  storaged gave the
# names to fsconfig(2) and the kernel said "tmpfs: Bad value for 'uid'".
# Neighbours: numbers as they are, gid= alone, libmount's "useruid" and
# "usergid" (the caller's: root), and a name in no database, which
# `check` names with its line and `start` fails alone.
. "$(dirname "$0")/lib.sh"
setup
command -v useradd >/dev/null && command -v groupadd >/dev/null || skip "useradd/groupadd missing (passwd)"

U=sdc39u$$ G=sdc39g$$
drop_ids() {
	userdel "$U" >/dev/null 2>&1
	groupdel "$G" >/dev/null 2>&1
}
CLEANUP_HOOK=drop_ids
groupadd --system "$G" || fail "groupadd $G"
useradd --system --no-create-home --no-user-group -g "$G" -s /usr/sbin/nologin "$U" || fail "useradd $U"
uid=$(id -u "$U") gid=$(getent group "$G" | cut -d: -f3)
note "user $U is $uid, group $G is $gid"

m=$SCRATCH/m
mkdir -p "$m/portage" "$m/num" "$m/gid" "$m/self" "$m/unknown"
cat >"$FSTAB" <<EOT
tmpfs $m/portage tmpfs size=64M,uid=$U,gid=$G,mode=775,noatime,x-storaged,noauto 0 0
tmpfs $m/num     tmpfs size=8M,uid=4242,gid=4243,mode=750,x-storaged,noauto 0 0
tmpfs $m/gid     tmpfs size=8M,gid=$G,x-storaged,noauto 0 0
tmpfs $m/self    tmpfs size=8M,uid=useruid,gid=usergid,x-storaged,noauto 0 0
EOT

note "check: no step fails"
run_sd 0 check
note "start: each mounted, owners by number as mount(8) mounts them"
run_sd 0 start
[ "$(stat -c '%u %g %a' "$m/portage")" = "$uid $gid 775" ] || fail "portage: $(stat -c '%u %g %a' "$m/portage"), expected $uid $gid 775"
findmnt -no OPTIONS "$m/portage" | grep -q "uid=$uid,gid=$gid" || fail "portage: options $(findmnt -no OPTIONS "$m/portage")"
findmnt -no OPTIONS "$m/portage" | grep -q "noatime" || fail "portage: noatime lost"
[ "$(stat -c '%u %g %a' "$m/num")" = "4242 4243 750" ] || fail "num: $(stat -c '%u %g %a' "$m/num")"
[ "$(stat -c '%u %g' "$m/gid")" = "0 $gid" ] || fail "gid alone: $(stat -c '%u %g' "$m/gid")"
[ "$(stat -c '%u %g' "$m/self")" = "0 0" ] || fail "useruid/usergid: $(stat -c '%u %g' "$m/self")"
run_sd 0 status
run_sd 0 stop

note "a name in no database: check names the line, start fails that entry only"
echo "tmpfs $m/unknown tmpfs size=8M,uid=nosuchuser$$,x-storaged,noauto 0 0" >>"$FSTAB"
echo "tmpfs $m/gid tmpfs size=8M,gid=nosuchgroup$$,x-storaged,noauto 0 0" >"$SCRATCH/fstab2"
run_sd 1 check
expect_out "will fail"
expect_out "uid=nosuchuser$$.*not in the user database.*useradd --system nosuchuser$$.*uid=NUMBER.*$FSTAB:5"
run_sd 1 start
expect_out "uid=nosuchuser$$.*not in the user database"
is_mountpoint "$m/unknown" && fail "the entry with an unknown user got mounted"
is_mountpoint "$m/portage" || fail "a good entry beside the bad one was not mounted"
run_sd 1 status
run_sd 0 stop
OUT=$("$STORAGED" -c "$CONF" -f "$SCRATCH/fstab2" --state-dir "$STATE" check 2>&1)
printf '%s\n' "$OUT" | sed 's/^/  | /'
expect_out "gid=nosuchgroup$$.*not in the group database.*groupadd --system nosuchgroup$$.*gid=NUMBER"
echo "PASS: $TEST_NAME"
exit 0

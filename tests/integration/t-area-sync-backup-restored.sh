#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# A hostile trial of f1b8090 (the span rule of the sync back, issue 42): no write underneath at all; the
# user restores a backup directory in the area (mv conf conf.bad; mv
# conf.bak conf).  The last sync put conf/settings (edited in the area
# before it): its ctime falls between the area's baseline and the lower
# one, as every sync's own renames do.  The area's conf/settings now is
# conf.bak's file, unchanged since long before that sync, of another size:
# sync_lower_changed_during() takes the lower one for a change made in the
# directory during the last sync and keeps it.  After the next sync and
# stop, conf/settings on disk is the bad version, and the backup's
# content is nowhere on disk (conf.bak was moved away), exit 0: the
# area's data is lost, with no conflict reported. 
# Passed before f1b8090; fixed by leaving the span rule out below a
# directory moved in the area (it or one above it changed since the
# baseline).
. "$(dirname "$0")/lib-area.sh"

P=$SCRATCH/proj
mkdir -p "$P/conf" "$P/conf.bak"
echo "good setting" >"$P/conf/settings"
echo "good setting" >"$P/conf.bak/settings"
persist_conf "$P"
expect_rc 0 start
sleep 0.1
echo "a bad setting, longer" >"$P/conf/settings"
expect_rc 0 sync
sleep 0.1
mv "$P/conf" "$P/conf.bad" && mv "$P/conf.bak" "$P/conf"
expect_rc 0 sync
expect_rc 0 stop
[ "$(cat "$P/conf/settings")" = "good setting" ] ||
	fail "conf/settings restored in the area from conf.bak is on disk after stop as: '$(cat "$P/conf/settings")'; backup's content anywhere: $(grep -rl 'good setting' "$P" || echo nowhere)"
pass "a backup directory restored in the area reaches the disk"

#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Boot time against systemd alone: the qemu boot test
# tests/boot/t-boottime-qemu.sh with both methods, STORAGED_BOOTTIME_ROUNDS
# interleaved rounds (default 3) and the missing-disk case, which prints
# the table of bench/README.md ("Boot time against systemd").  CI runs the
# same test with storaged's boots only, for their verdicts: the comparison
# is a benchmark, timed here and never asserted in a test.
#
#   bench/boottime.sh            (as root; builds the .deb and the image)
#
# Environment: STORAGED_BOOTTIME_ROUNDS, STORAGED_BOOTTIME_CASES ("full"),
# STORAGED_BOOT_KEEP=1, STORAGED_BOOT_VERBOSE=1 (see the test's header).
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
[ "$(id -u)" = 0 ] || { echo "boottime: run as root (qemu images with mmdebstrap --mode=root)" >&2; exit 1; }
[ -x "$top/build/storaged" ] || "$top/tools/build.sh"
export STORAGED_BOOT_TEST=1 STORAGED_BOOTTIME_METHODS="storaged systemd"
export TOPSRCDIR=$top STORAGED=$top/build/storaged
unset CI
exec bash "$top/tests/boot/t-boottime-qemu.sh"

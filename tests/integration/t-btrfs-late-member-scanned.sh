#!/bin/bash
# t-btrfs-late-member.sh with the returning member registered by someone
# else before storaged's pass sees it (`btrfs device scan`, as udev's
# 64-btrfs.rules does on a system with udev): storaged must still say what
# the kernel did with it and how to complete the repair, once.
LATE_BY=scan exec bash "$(dirname "$0")/t-btrfs-late-member.sh"

#!/usr/bin/env python3
"""gpt-disk.py IMAGE NAME: a GPT on the (existing, sized) IMAGE file with one
Linux filesystem partition from 1 MiB to 1 MiB before the end, named NAME
(PARTLABEL).  Prints "OFFSET SIZE PARTUUID" (bytes) for losetup -o/--sizelimit
and for the kernel command line.

The boot tests need partitioned virtio disks (PARTUUID/PARTLABEL at boot)
and this machine has no sfdisk/sgdisk; the layout follows the UEFI
specification 2.10, section 5.3 (protective MBR, primary header at LBA 1,
128 entries of 128 bytes from LBA 2, backup entries and header at the end).
"""
import os
import struct
import sys
import uuid
import zlib

SECTOR = 512
LINUX_FS = uuid.UUID("0fc63daf-8483-4772-8e79-3d69d8477de4")


def header(lba, alt, first, last, disk_guid, entries_lba, entries_crc):
    fields = [b"EFI PART", 0x00010000, 92, 0, 0, lba, alt, first, last,
              disk_guid.bytes_le, entries_lba, 128, 128, entries_crc]
    fmt = "<8sIIII QQQQ 16s QII I"
    raw = struct.pack(fmt, *fields)
    fields[3] = zlib.crc32(raw) & 0xFFFFFFFF
    return struct.pack(fmt, *fields).ljust(SECTOR, b"\0")


def main():
    image, name = sys.argv[1], sys.argv[2]
    size = os.path.getsize(image)
    sectors = size // SECTOR
    first_usable, last_usable = 34, sectors - 34
    start, end = 2048, sectors - 2048 - 1  # 1 MiB aligned, inclusive
    part_guid = uuid.uuid4()
    entry = struct.pack("<16s16sQQQ72s", LINUX_FS.bytes_le, part_guid.bytes_le,
                        start, end, 0, name.encode("utf-16-le"))
    entries = entry.ljust(128 * 128, b"\0")
    ecrc = zlib.crc32(entries) & 0xFFFFFFFF
    disk_guid = uuid.uuid4()
    mbr = bytearray(SECTOR)
    # one partition of type 0xEE covering the disk (capped at 2^32-1)
    mbr[446:462] = struct.pack("<B3sB3sII", 0, b"\0\x02\0", 0xEE, b"\xff\xff\xff",
                               1, min(sectors - 1, 0xFFFFFFFF))
    mbr[510:512] = b"\x55\xaa"
    with open(image, "r+b") as f:
        f.write(mbr)
        f.write(header(1, sectors - 1, first_usable, last_usable, disk_guid, 2, ecrc))
        f.write(entries)
        f.seek((sectors - 33) * SECTOR)
        f.write(entries)
        f.write(header(sectors - 1, 1, first_usable, last_usable, disk_guid,
                       sectors - 33, ecrc))
    print(start * SECTOR, (end - start + 1) * SECTOR, part_guid)


if __name__ == "__main__":
    main()

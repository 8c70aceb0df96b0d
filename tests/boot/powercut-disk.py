#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""A disk with a volatile write cache, for the power-cut test (t-powercut-qemu.sh).

An NBD server (newstyle, fixed; simple replies) on a unix socket, serving
IMAGE to qemu's nbd client, which the guest sees as a virtio disk with a
write cache (write-cache=on: the guest sends flushes).  What the guest
reads is always its latest writes; what is *durable* is only what a FLUSH
covered, or a FUA write: a write the guest did not flush is in the cache,
and a power cut may lose it, or keep it, in any order.

The guest marks the phases it wants cut by writing a 4 KiB block at
MARK_OFFSET (O_DIRECT) whose text starts "BEGIN name" or "END name", right
after a `sync`.  At BEGIN the durable image is saved as DIR/name.base; until
END every write (offset, data, FUA) and every flush is logged to
DIR/name.log.  "SYNCED K" (no `sync` before it) is logged as a point of
the phase: the guest saw the periodic sync of generation K complete.  powercut-check.py then rebuilds the disk as a power cut at
any point of the log would have left it: the base, every write that a flush
or FUA made durable before that point, and a random part of the writes
after the last flush (each 4 KiB piece kept or lost on its own).  This is
what dm-log-writes records inside a guest, taken on the host instead, so
that one boot gives every cut point.

Usage: powercut-disk.py SOCKET IMAGE DIR MARK_OFFSET
Ends when the client disconnects (qemu exits or is killed); the image file
then holds the durable state.
"""
import os
import socket
import struct
import sys

NBDMAGIC = 0x4E42444D41474943
IHAVEOPT = 0x49484156454F5054
REPLY_MAGIC = 0x3E889045565A9
REQ_MAGIC = 0x25609513
SIMPLE_REPLY = 0x67446698
OPT_EXPORT_NAME, OPT_ABORT, OPT_GO = 1, 2, 7
REP_ACK, REP_INFO = 1, 3
REP_ERR_UNSUP = (1 << 31) + 1
FLAG_HAS_FLAGS, FLAG_SEND_FLUSH, FLAG_SEND_FUA = 1, 4, 8
CMD_READ, CMD_WRITE, CMD_DISC, CMD_FLUSH = 0, 1, 2, 3
CMD_FLAG_FUA = 1
EINVAL = 22


def recv(conn, n):
    b = bytearray()
    while len(b) < n:
        k = conn.recv(n - len(b))
        if not k:
            raise EOFError
        b += k
    return bytes(b)


class Disk:
    def __init__(self, image, outdir, mark):
        with open(image, "rb") as f:
            self.durable = bytearray(f.read())
        self.current = bytearray(self.durable)
        self.image, self.outdir, self.mark = image, outdir, mark
        self.pending = []  # (offset, data) written, not flushed
        self.log = None  # open log file of the phase being recorded
        self.size = len(self.durable)

    def write(self, off, data, fua):
        if off == self.mark:
            return self.marker(data)
        self.current[off:off + len(data)] = data
        if fua:
            self.durable[off:off + len(data)] = data
        else:
            self.pending.append((off, data))
        if self.log:
            self.log.write(struct.pack("<cQIB", b"W", off, len(data), fua) + data)

    def flush(self):
        for off, data in self.pending:
            self.durable[off:off + len(data)] = data
        self.pending = []
        if self.log:
            self.log.write(struct.pack("<cQIB", b"F", 0, 0, 0))

    def marker(self, data):
        words = data[:64].decode(errors="replace").split()
        if len(words) < 2:
            return
        if words[0] == "BEGIN":
            # the guest synced right before: what is still pending is
            # taken as durable (at most the marker's neighbours)
            self.flush()
            with open(os.path.join(self.outdir, words[1] + ".base"), "wb") as f:
                f.write(self.durable)
            self.log = open(os.path.join(self.outdir, words[1] + ".log"), "wb")
        elif words[0] == "SYNCED" and self.log:
            # a point in the phase, not a flush: logged as it came
            text = " ".join(words[:2]).encode()
            self.log.write(struct.pack("<cQIB", b"M", 0, len(text), 0) + text)
        elif words[0] == "END" and self.log:
            self.log.close()
            self.log = None

    def save(self):
        with open(self.image, "r+b") as f:
            f.write(self.durable)


def opt_reply(conn, opt, typ, data=b""):
    conn.sendall(struct.pack(">QIII", REPLY_MAGIC, opt, typ, len(data)) + data)


def handshake(conn, disk):
    conn.sendall(struct.pack(">QQH", NBDMAGIC, IHAVEOPT, 1 | 2))
    cflags = struct.unpack(">I", recv(conn, 4))[0]
    tflags = FLAG_HAS_FLAGS | FLAG_SEND_FLUSH | FLAG_SEND_FUA
    while True:
        magic, opt, length = struct.unpack(">QII", recv(conn, 16))
        data = recv(conn, length)
        if magic != IHAVEOPT:
            raise EOFError
        if opt == OPT_EXPORT_NAME:
            conn.sendall(struct.pack(">QH", disk.size, tflags) + (b"" if cflags & 2 else b"\0" * 124))
            return
        if opt == OPT_GO:
            opt_reply(conn, opt, REP_INFO, struct.pack(">HQH", 0, disk.size, tflags))
            opt_reply(conn, opt, REP_ACK)
            return
        if opt == OPT_ABORT:
            opt_reply(conn, opt, REP_ACK)
            raise EOFError
        opt_reply(conn, opt, REP_ERR_UNSUP)


def serve(conn, disk):
    handshake(conn, disk)
    while True:
        magic, flags, typ, handle, off, length = struct.unpack(">IHHQQI", recv(conn, 28))
        if magic != REQ_MAGIC:
            return
        if typ == CMD_DISC:
            return
        data = recv(conn, length) if typ == CMD_WRITE else b""
        err = 0 if off + length <= disk.size else EINVAL
        out = b""
        if err == 0 and typ == CMD_READ:
            out = bytes(disk.current[off:off + length])
        elif err == 0 and typ == CMD_WRITE:
            disk.write(off, data, bool(flags & CMD_FLAG_FUA))
        elif err == 0 and typ == CMD_FLUSH:
            disk.flush()
        elif err == 0:
            err = EINVAL
        conn.sendall(struct.pack(">IIQ", SIMPLE_REPLY, err, handle) + out)


def main():
    sock, image, outdir, mark = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
    disk = Disk(image, outdir, mark)
    srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    srv.bind(sock)
    srv.listen(1)
    conn, _ = srv.accept()
    try:
        serve(conn, disk)
    except (EOFError, ConnectionError):
        pass  # qemu gone: the power is cut
    if disk.log:
        disk.log.close()
    disk.save()


if __name__ == "__main__":
    main()

/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The kernel's own words on a failed mount.  mount(2) says only an
 * errno ("Invalid argument"); the filesystem says why in its log: in the
 * new mount API's error log, read(2) from the fsopen(2) descriptor (Linux
 * 5.2, Documentation/filesystems/mount_api.rst), or, where a mount went by
 * mount(2) or a helper, in the kernel log (/dev/kmsg, Documentation/ABI/
 * testing/dev-kmsg), as "BTRFS error (device loop5): subvol 'home' does
 * not match subvolid 5".
 */
#ifndef STORAGED_KERNLOG_H
#define STORAGED_KERNLOG_H

#include <stdbool.h>
#include <stddef.h>

/*
 * Opens /dev/kmsg positioned after its last record (SEEK_END), non-blocking:
 * kernlog_collect() then reads only what was logged since.  Needs
 * CAP_SYSLOG where dmesg_restrict is set.
 *
 * Returns: a descriptor (caller closes), or negative errno.
 */
int kernlog_open(void);

/*
 * @record: one /dev/kmsg record, "PRIO,SEQ,USEC,FLAGS;TEXT\n[ KEY=VALUE\n]..."
 * @device: the kernel's name of the mount's device ("loop5", "sda1",
 *          "dm-3"), or NULL
 * @fstype: the filesystem type ("btrfs"), or NULL
 * @ret_text: set to the start of TEXT
 * @ret_len: its length (up to the first '\n')
 *
 * A record is of the mount when it is a warning or worse (level <= 4) and
 * names @device as a whole word ("loop5", never "loop50"), or starts with
 * @fstype, in any case, followed by ':' or ' ' and names no device ("tmpfs:
 * Bad value for 'size'", "BTRFS: ...").  Pure: no system call.
 *
 * Returns: true when the record is of the mount.
 */
bool kernlog_match(const char *record, size_t n, const char *device, const char *fstype,
		   const char **ret_text, size_t *ret_len);

/*
 * @fd: from kernlog_open()
 * @device, @fstype: as kernlog_match()
 * @buf: the matching lines, joined by "; " (NUL-terminated, cut to @len)
 *
 * Reads every record logged since kernlog_open() (or the last call).
 *
 * Returns: how many lines matched.
 */
unsigned kernlog_collect(int fd, const char *device, const char *fstype, char *buf, size_t len);

/*
 * @fsfd: an fsopen(2) descriptor after a failed fsconfig(2)
 * @buf: its error and warning messages ("e ..." and "w ..." without the
 *       prefix), joined by "; "
 *
 * Returns: how many messages were read.
 */
unsigned kernlog_fs_context(int fsfd, char *buf, size_t len);

/*
 * @source: a mount source, "/dev/loop5", "/dev/mapper/vg-home",
 *          "/dev/disk/by-uuid/..."
 * @buf: the kernel's name of the device: the basename of the resolved
 *       path ("loop5", "dm-3"); "" when @source is no device path
 */
void kernlog_device_name(const char *source, char *buf, size_t len);

/* A mount helper's own words (mount.nfs, mount.cifs say why on stderr). */
struct kernlog_stderr {
	int capture; /* memfd that is fd 2 meanwhile, or -1 */
	int saved; /* the real fd 2, or -1 */
};

/*
 * Makes fd 2 a memfd (memfd_create(2)) that a helper run meanwhile
 * inherits; the real stderr is kept.  Not thread-safe: for a mount child.
 *
 * Returns: 0, or negative errno (then nothing changed).
 */
int kernlog_stderr_begin(struct kernlog_stderr *c);

/*
 * @buf: what was written meanwhile, its lines joined by "; " ("" for none)
 *
 * Restores fd 2 and writes there what was captured, so that it still
 * reaches storaged's log.
 */
void kernlog_stderr_end(struct kernlog_stderr *c, char *buf, size_t len);

#endif

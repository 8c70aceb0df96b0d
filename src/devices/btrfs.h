/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Multi-device btrfs: grouping members by fsid (pure) and registering them
 * with the kernel through /dev/btrfs-control (linux/btrfs.h:
 * BTRFS_IOC_SCAN_DEV, BTRFS_IOC_DEVICES_READY).
 */
#ifndef STORAGED_BTRFS_H
#define STORAGED_BTRFS_H

#include <stdbool.h>
#include <stdint.h>

#include "shared/diag.h"
#include "inventory.h"

#define BTRFS_CONTROL_PATH "/dev/btrfs-control"

struct btrfs_member {
	uint64_t devid;
	const struct block_device *dev; /* borrowed from the inventory */
	/* a seed device of this (sprout) filesystem: it carries the seed's own
	 * fsid, and the filesystem's record names it (btrfs(5), SEEDING
	 * DEVICE) */
	bool seed;
};

/* A device that carries the filesystem's fsid but is not one of its devices
 * by the filesystem's own record (the chunk tree's device items, or the
 * sys_chunk_array's stripes): storaged neither counts nor registers it. */
struct btrfs_stranger {
	const struct block_device *dev; /* borrowed */
	/* the record's device of the devid @dev claims: its dev_uuid; all
	 * zero when the record has no such devid */
	uint8_t record_uuid[16];
};

/* Two devices that claim one devid of one filesystem: a cloned disk (dd, a
 * VM snapshot attached to the same guest, a replaced disk put back). */
struct btrfs_clone {
	uint64_t devid;
	const struct block_device *a, *b; /* borrowed; @a sorts first (newest) */
};

struct btrfs_filesystem {
	char fsid[37]; /* lower-case uuid string */
	char *label; /* owned, NULL when none */
	uint64_t num_devices; /* members expected */
	/* present members: the filesystem's own devices by devid, then its
	 * seeds by devid (members[0] carries the filesystem's fsid when any
	 * does: the device to mount) */
	struct btrfs_member *members;
	size_t n_members;
	uint64_t *missing; /* devids known missing (from sys_chunk_array), sorted */
	size_t n_missing;
	uint64_t n_unknown_missing; /* missing members whose devid is unknown */
	/* devids claimed by two or more devices: neither is a member (none of
	 * them is registered), nor counted missing */
	struct btrfs_clone *clones;
	size_t n_clones;
	uint64_t generation; /* the newest superblock generation of the members (seeds aside) */
	struct btrfs_stranger *strangers; /* n_strangers of them */
	size_t n_strangers;
	size_t n_seeds; /* members that are seeds (listed last in members) */
	/* the device whose record of the filesystem's devices decided which
	 * devices are members, NULL when none could be read (then members are
	 * told by fsid and devid alone, and a devid two devices claim is a
	 * clone) */
	const struct block_device *record_from;
	/* the target of a `btrfs replace` that a power cut or an unmount
	 * interrupted (devid 0, BTRFS_DEV_REPLACE_DEVID, carrying the
	 * filesystem's fsid and written at its newest commit): not one of
	 * the devices its record names, not counted in num_devices, but the
	 * kernel needs it registered to mount the filesystem, and resumes
	 * the replace at mount (btrfs.c, is_replace_target()); NULL when
	 * none (borrowed) */
	const struct block_device *replace_target;
	/* two sets of devices carry the fsid, each named by a record that is
	 * borne out as well as the other's (filesystems made with one fsid):
	 * one device of each; then no device is a member, none is registered */
	const struct block_device *split[2];
};

struct btrfs_fs_list {
	struct btrfs_filesystem *v;
	size_t n;
};

/*
 * @inv: inventory (must outlive @ret: members borrow its devices)
 * @ret: filled on success, sorted by fsid; free with btrfs_fs_list_done()
 * @diags: a warning when two devices are the same device of one filesystem
 *         (a cloned disk or a multipath leftover): neither of them becomes
 *         a member (fs->clones lists them), or for a split; a warning per
 *         stranger (btrfs_format_stranger())
 *
 * Which devices are members is decided by the filesystem's own record of
 * its devices, as the kernel decides it when it mounts (a device item's
 * devid, dev_uuid and fsid: btrfs.c, dev_is()): among the
 * records that the devices carrying an fsid hold (inventory_read_btrfs_devs()),
 * the one borne out best (each present device it names counts for it when
 * that device's own record names it back, against it when not; then: all
 * of them present, the newest generation) names the members, seeds
 * included (a device item with another fsid: found in the whole
 * inventory); a device of the fsid it does not name is a stranger,
 * unless it is the target of a replace in progress (devid 0, the
 * record's generation or newer: btrfs_filesystem.replace_target).  Two
 * records that name different devices and are borne out as well: a split
 * (btrfs_filesystem.split, no member).  No record at all: the old rule,
 * by fsid and devid.
 *
 * Pure.  Returns: 0 or -ENOMEM.
 */
int btrfs_group(const struct inventory *inv, struct btrfs_fs_list *ret, struct diag_list *diags);

/*
 * Returns: the filesystem with @fsid (string, any case), or NULL (borrowed).
 */
const struct btrfs_filesystem *btrfs_fs_list_find(const struct btrfs_fs_list *l, const char *fsid);

/*
 * Returns: true when which devices are @fs cannot be told: two devices are
 * one member (btrfs_filesystem.clones), or two sets of devices are each a
 * whole filesystem of its fsid (btrfs_filesystem.split).
 */
bool btrfs_fs_ambiguous(const struct btrfs_filesystem *fs);

/*
 * Returns: true when every expected member is present, and @fs is not
 * ambiguous (btrfs_fs_ambiguous()).
 */
bool btrfs_filesystem_complete(const struct btrfs_filesystem *fs);

/*
 * @buf: output, e.g. "devid 2 missing" / "devids 2, 3 missing" /
 *       "1 member missing"; empty when complete
 * Returns: @buf.
 */
char *btrfs_format_missing(const struct btrfs_filesystem *fs, char *buf, size_t len);

/*
 * Returns: true when @m's superblock generation is behind the newest of
 * its filesystem @fs: it was away while the filesystem was mounted (degraded)
 * and written to, and holds old copies of the data until a scrub.
 */
bool btrfs_member_stale(const struct btrfs_filesystem *fs, const struct btrfs_member *m);

/* What `storaged scan` finds wrong with a filesystem (btrfs_fs_problems()). */
enum {
	BTRFS_FS_INCOMPLETE = 1 << 0, /* fewer members present than num_devices, or a devid missing */
	BTRFS_FS_STALE = 1 << 1, /* a member's generation behind the newest (btrfs_member_stale()) */
	BTRFS_FS_AMBIGUOUS = 1 << 2, /* btrfs_fs_ambiguous(): fs->clones, fs->split */
};

/*
 * @fs: a filesystem from btrfs_group()
 *
 * Pure.  Returns: the BTRFS_FS_* bits that apply to @fs; 0 when it is
 * complete, current and unambiguous.
 */
unsigned btrfs_fs_problems(const struct btrfs_filesystem *fs);

/*
 * Returns: the first member of @fs (in devid order) that is stale
 * (btrfs_member_stale()), borrowed from @fs; NULL when none is.
 */
const struct btrfs_member *btrfs_first_stale(const struct btrfs_filesystem *fs);

/*
 * @buf: output, e.g. "btrfs 5e81…: '/dev/loop0' and '/dev/loop1' both claim
 *       devid 1 (generations 7 and 7): a cloned disk? ..."; for a split,
 *       the two sets; empty when @fs is not ambiguous
 * Returns: @buf.
 */
char *btrfs_format_clones(const struct btrfs_filesystem *fs, char *buf, size_t len);

/*
 * @st: one of @fs->strangers
 * @buf: output, e.g. "'/dev/loop2' carries btrfs 5e81…'s fsid and claims
 *       devid 2 (dev_uuid …, generation 9), but the filesystem's own record
 *       names devid 2 as dev_uuid …: not one of its devices, ignored"
 * Returns: @buf.
 */
char *btrfs_format_stranger(const struct btrfs_filesystem *fs, const struct btrfs_stranger *st, char *buf,
			    size_t len);

/*
 * @buf: output: the members in a state of btrfs's own and the strangers,
 *       e.g. "devid 1 ('/dev/loop0') is its seed (btrfs f49d…); '/dev/loop2'
 *       is the target of a `btrfs replace` in progress ...; '/dev/loop3'
 *       carries its fsid but is not one of its devices"; empty when none
 * Returns: @buf.
 */
char *btrfs_format_states(const struct btrfs_filesystem *fs, char *buf, size_t len);

/*
 * @buf: output, e.g. "devid 2 ('/dev/loop1') is stale: generation 8 against
 *       11 of the others; it was away while the filesystem was written
 *       to"; empty when no member is stale.  The facts only: what to do
 *       depends on where it is mounted (btrfs_stale_advice()).
 * Returns: @buf.
 */
char *btrfs_format_stale(const struct btrfs_filesystem *fs, char *buf, size_t len);

/* How a mounted btrfs with a stale member stands, for btrfs_stale_advice() */
enum btrfs_stale_mount {
	STALE_SCRUB_STARTED = 1 << 0, /* storaged started a scrub of it (stale-member = scrub) */
	STALE_MOUNTED_RO = 1 << 1, /* mounted read-only: a scrub cannot write */
	STALE_MEMBER_UNUSED = 1 << 2, /* the mounted filesystem does not use the
					 stale member (back while mounted
					 degraded): no scrub reaches it */
};

/*
 * @mountpoint: where the filesystem is mounted, or NULL when it is not
 * @how: enum btrfs_stale_mount flags, for @mountpoint
 * @self: the command that runs storaged as this one was run (log_self()),
 *        NULL for "storaged"
 * @buf: what to do about a stale member, e.g. "only a scrub rewrites what
 *       it missed: run `btrfs scrub start /srv/data`" (the mount point
 *       quoted for the shell, shell_quote()); a scrub only where one can
 *       work: first the remount or the new mount it needs
 * Returns: @buf.
 */
char *btrfs_stale_advice(const char *mountpoint, unsigned how, const char *self, char *buf, size_t len);

void btrfs_fs_list_done(struct btrfs_fs_list *l);

/*
 * @devnode: block device of a btrfs member
 *
 * BTRFS_IOC_SCAN_DEV on /dev/btrfs-control: the kernel learns this member.
 *
 * Returns: 0; -ENOENT when /dev/btrfs-control does not exist (btrfs not
 * ready yet: the caller may wait); -EINVAL for a NULL or empty @devnode;
 * -ENAMETOOLONG when @devnode is longer than BTRFS_PATH_NAME_MAX (also for
 * btrfs_devices_ready()); other negative errno
 * from open/ioctl (-EINVAL: not a btrfs device).
 */
int btrfs_register_device(const char *devnode);

/*
 * @devnode: block device the kernel may have been told of (udev's
 *           64-btrfs.rules scans every btrfs device that appears)
 *
 * BTRFS_IOC_FORGET_DEV (Linux 5.0+): the kernel drops @devnode from the
 * unmounted filesystem it counted it in (fs/btrfs/volumes.c
 * btrfs_forget_devices()), so that a stranger carrying a filesystem's fsid
 * is neither counted by BTRFS_IOC_DEVICES_READY nor opened by the mount.
 *
 * Returns: 0; -ENOENT when the kernel did not have it; -EBUSY when its
 * filesystem is mounted; other negative errno as btrfs_register_device().
 */
int btrfs_forget_device(const char *devnode);

/*
 * @devnode: block device of a btrfs member
 *
 * BTRFS_IOC_DEVICES_READY.  Note: this registers @devnode as a side effect,
 * so --dry-run must never call it.
 *
 * Returns: 1 when all members of its filesystem are registered (a
 * single-device filesystem reads as ready), 0 when not, negative errno on
 * failure.  The ioctl's own answer is the other way round (btrfs_control.c).
 */
int btrfs_devices_ready(const char *devnode);

#endif

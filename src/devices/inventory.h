/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The block devices of this machine: enumerated with libudev (which reads
 * sysfs, so it works where no udevd runs), probed with libblkid, and for
 * btrfs members the superblock fields storaged needs.
 */
#ifndef STORAGED_INVENTORY_H
#define STORAGED_INVENTORY_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "parse/btrfs_sb.h"
#include "shared/diag.h"
#include "parse/fsfacts.h"

struct block_device {
	char *devnode; /* "/dev/loop0" (or an image file path in tests) */
	dev_t devno; /* 0 for image files */
	char *type; /* libblkid TYPE, NULL when none */
	char *uuid; /* libblkid UUID (for btrfs: the fsid) */
	char *uuid_sub; /* libblkid UUID_SUB (for btrfs: the device uuid) */
	char *label; /* libblkid LABEL */
	char *partuuid; /* libblkid PART_ENTRY_UUID */
	char *partlabel; /* libblkid PART_ENTRY_NAME */
	char **ids; /* strv: udev's /dev/disk/by-id/ link names, unescaped
		       (what fstab's ID= names); without udevd's database,
		       the names udev would give, from sysfs (inventory_sysfs_ids()) */
	bool is_btrfs; /* btrfs superblock read and valid */
	/* libblkid was not asked (INVENTORY_BTRFS_ONLY, no btrfs magic):
	 * type, uuid and label are NULL for want of a look, not of a
	 * filesystem */
	bool unprobed;
	struct btrfs_sb_info btrfs; /* valid when is_btrfs */
};

/* Who said what an unreadable device holds. */
enum unreadable_source {
	UNREADABLE_SAYS_NOTHING,
	UNREADABLE_BY_UDEV, /* udev's database: ID_FS_TYPE, ID_FS_UUID */
	/* the live mount table (the device is mounted): its fstype, and for
	 * btrfs the fsid whose <sysfs>/fs/btrfs/<fsid>/devices/ holds it */
	UNREADABLE_BY_MOUNTS,
};

/* A device that could not be opened or probed: it is in no list of
 * members, yet it may be one. */
struct unreadable_device {
	char *devnode; /* owned */
	dev_t devno; /* from sysfs, 0 when unknown */
	int err; /* positive errno of open(2) or of the libblkid probe */
	bool probing; /* the probe failed, not the open */
	/* what @source says the device holds (type, and for btrfs the
	 * fsid), owned, NULL when it says nothing */
	char *fs_type;
	char *fs_uuid;
	enum unreadable_source source;
	char *mountpoint; /* owned; where it is mounted (UNREADABLE_BY_MOUNTS) */
};

/* How much inventory_scan() asks of a device. */
enum inventory_depth {
	INVENTORY_FULL, /* libblkid's TYPE, UUID, LABEL of every device */
	/* the btrfs superblock alone: a device without the btrfs magic is
	 * listed unprobed.  One 4 KiB read a device instead of libblkid's
	 * ~45 (bench/README.md, "Scan"): for a plan that needs only btrfs
	 * filesystems by fsid (plan_devices_by_fsid_only()) */
	INVENTORY_BTRFS_ONLY,
};

struct inventory {
	enum inventory_depth depth; /* how it was scanned */
	struct block_device *devs;
	size_t n_devs;
	struct unreadable_device *skipped; /* owned, n_skipped of them */
	unsigned n_skipped; /* devices that could not be opened or probed */
};

/*
 * @fsid: a btrfs filesystem's fsid (string, any case)
 *
 * Pure.  Returns: true unless what @d->source says rules it out: another
 * type, btrfs with another fsid, or (the mount table) btrfs of @fsid that
 * is mounted: a member the kernel has, not a missing one.
 */
bool inventory_could_be_member(const struct unreadable_device *d, const char *fsid);

/*
 * @ret: filled on success (caller frees with inventory_done())
 * @depth: INVENTORY_FULL, or INVENTORY_BTRFS_ONLY (partitions and devices
 *         with the btrfs magic but an unusable superblock are still
 *         probed in full: PARTUUID= needs the table, and the warning below
 *         needs libblkid's word)
 * @diags: one warning per device skipped (could not open or probe: device
 *         and errno text), no error
 *
 * Enumerates the "block" subsystem, skips devices of size 0 (unbound loop
 * nodes), multipath path devices (a holder whose dm/uuid starts "mpath-",
 * or udev's DM_MULTIPATH_DEVICE_PATH=1) and devices it cannot open; probes
 * the rest with libblkid and reads btrfs superblocks itself.
 *
 * libudev always reads the real /sys: tests use a fixture
 * (inventory_load_fixture()) instead.
 *
 * Returns: 0; -ENOMEM; negative errno when enumeration itself fails.
 */
int inventory_scan(struct inventory *ret, enum inventory_depth depth, struct diag_list *diags);

/* inventory_scan() opens and probes devices on several threads: on a cold
 * cache every read is a round trip through the device (a loop device's
 * worker, a disk's queue), and one device's reads need not wait for
 * another's.  One thread per INVENTORY_DEVS_PER_THREAD devices, at most
 * INVENTORY_SCAN_THREADS_MAX (measured in bench/README.md, "Scan"). */
#define INVENTORY_DEVS_PER_THREAD 8
#define INVENTORY_SCAN_THREADS_MAX 16

/*
 * Returns: how many threads inventory_scan() probes @n_devs devices on
 * (the calling thread included), 1..INVENTORY_SCAN_THREADS_MAX.
 */
size_t inventory_scan_threads(size_t n_devs);

/*
 * @fd: open block device or image file
 *
 * Reads the primary superblock, BTRFS_SB_SIZE bytes at BTRFS_SB_OFFSET
 * (parse/btrfs_sb.h), and parses it with btrfs_sb_parse().
 *
 * Returns: as btrfs_sb_parse() (-ENODATA: no btrfs magic); -ENODATA too
 * when the device ends before the superblock does; -errno from pread(2).
 */
int inventory_read_btrfs_sb(int fd, struct btrfs_sb_info *ret);

/*
 * @fd: the device @sb was read from
 * @sb: its parsed superblock; on success sb->devs lists the device items of
 *      the filesystem's chunk tree and sb->devs_from_tree is set
 *
 * Reads the chunk tree from this device's own copy of it (the sys_chunk_array
 * maps its blocks: btrfs_sb_map_sys()), at most 64 blocks: the record the
 * kernel itself reads a filesystem's devices from (fs/btrfs/volumes.c,
 * btrfs_read_chunk_tree(), read_one_dev()).
 *
 * Returns: 0; -ENOENT when the chunk tree has no copy on this device (a
 * third device of a RAID1, or a block of a striped chunk tree that lies on
 * another device); -EOPNOTSUPP when its chunk's geometry is not one the
 * kernel mounts; other negative errno (I/O, a malformed block).  On
 * failure sb->n_devs is 0.
 */
int inventory_read_btrfs_devs(int fd, struct btrfs_sb_info *sb);

/*
 * @fd: a member of a btrfs filesystem (not the replace target: no chunk
 *      names devid 0), opened for reading
 * @member: its superblock, as inventory_read_btrfs_sb() read it
 * @ret_src_devid, @ret_state: set only on success: the device tree's
 *      DEV_REPLACE item (0, BTRFS_DEV_REPLACE_KEY, 0): the devid being
 *      replaced and the BTRFS_IOCTL_DEV_REPLACE_STATE_* of the replace
 *
 * Reads the chunk tree again for the chunks of tree blocks on this device
 * (at most BTRFS_CHUNK_MAP_MAX), the root tree for the device tree's root
 * item, and the device tree down to that item, all from this device.
 *
 * Returns: 0; -ENOENT when no replace was ever run (no item) or a block is
 * not on this device; other negative errno.
 */
int inventory_read_btrfs_replace(int fd, const struct btrfs_sb_info *member, uint64_t *ret_src_devid,
				 uint64_t *ret_state);

/*
 * @fd: open block device or regular image file
 * @d: filled in (devnode and devno are the caller's to set); on failure it
 *     may hold partial values, freed by block_device_done()
 * @ret_sb_err: 0, or the inventory_read_btrfs_sb() error of a btrfs signature whose
 *              superblock is unusable (then is_btrfs stays false)
 * @partition: probe the partition table too (PART_ENTRY_UUID/NAME); without
 *             it a valid btrfs superblock is read first and libblkid is not
 *             asked at all (as INVENTORY_BTRFS_ONLY)
 * @depth: INVENTORY_BTRFS_ONLY: no libblkid either where there is no btrfs
 *         magic (@d->unprobed); ignored for a partition
 *
 * Probes with libblkid (TYPE, UUID, UUID_SUB, LABEL, partition tags) and, for
 * btrfs, reads the primary superblock with inventory_read_btrfs_sb().
 *
 * Returns: 0, -ENOMEM, or -EIO when probing fails.
 */
int inventory_probe_fd(int fd, struct block_device *d, int *ret_sb_err, bool partition,
		       enum inventory_depth depth);

/*
 * @path: ini file, one "[device /dev/NAME]" section each with keys type,
 *        uuid, uuid_sub, label, partuuid, partlabel, devno (MAJ:MIN) and for
 *        btrfs devid, num_devices, generation, sys_devids (space-separated);
 *        ids: the ID= names of the device (space-separated);
 *        used by golden tests to plan without devices.  Parsed by inih
 *        (inventory_fixture.c): ';' comments (inline after a blank), no '#'
 *        inline comments, lines up to inih's buffer (about 200 bytes), an
 *        indented line continues the previous value; section names are cut
 *        at 49 bytes; a section without keys is not seen, and only the
 *        first malformed line is reported
 * @diags: problems with file:line
 *
 * Returns: 0; -EINVAL when errors were appended; negative errno on I/O.
 */
int inventory_load_fixture(struct inventory *ret, const char *path, struct diag_list *diags);

/*
 * @spec: fs_spec: "/dev/NAME", "UUID=", "LABEL=", "PARTUUID=", "PARTLABEL=",
 *        "ID=" (values already unescaped)
 *
 * Strings only, no I/O.  UUID= and PARTUUID= compare case-insensitively,
 * labels and ids exactly; "/dev/disk/by-{uuid,label,partuuid,partlabel,id}/X" is read as
 * the matching tag (udev's \xNN escapes decoded); any other path must equal
 * a devnode.
 *
 * Returns: the first matching device, or NULL (borrowed from @inv).
 */
const struct block_device *inventory_find(const struct inventory *inv, const char *spec);

/*
 * @spec: as inventory_find()
 * @first: the device inventory_find() returned for @spec
 *
 * Strings only.  Two members of one btrfs filesystem share UUID= and
 * LABEL= and are not a conflict (two devices claiming one devid are:
 * btrfs_group() reports them).
 *
 * Returns: another device that @spec names and that is not the same
 * filesystem as @first, or NULL (borrowed from @inv).
 */
const struct block_device *inventory_find_other(const struct inventory *inv, const char *spec,
						const struct block_device *first);

/*
 * @syspath: the device's sysfs directory ("/sys/devices/.../block/vda/vda1")
 * @partition: @syspath is a partition (its disk's names get "-partN")
 * @ret: strv the names are appended to
 *
 * The /dev/disk/by-id/ names udev's 60-persistent-storage rules give, as far
 * as sysfs alone tells them (for early boot without udevd): "virtio-SERIAL"
 * (virtio serial attribute), "nvme-MODEL_SERIAL" and "nvme-eui.X" (nvme
 * model/serial/eui attributes), "wwn-0xNAA" (a SCSI/ATA device's
 * device/wwid "naa.X"); whitespace runs become '_' as udev's
 * replace-whitespace does.  ATA/SCSI model_serial names need an INQUIRY
 * and are not made.
 *
 * Returns: 0 or -ENOMEM.
 */
int inventory_sysfs_ids(const char *syspath, bool partition, char ***ret);

/*
 * Moves @dev into @inv (on success @dev is zeroed).  Returns: 0 or -ENOMEM.
 */
int inventory_add(struct inventory *inv, struct block_device *dev);

void block_device_done(struct block_device *d);
void inventory_done(struct inventory *inv);

#endif

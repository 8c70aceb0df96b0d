/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Facts about filesystem types and fs_spec forms, in one place: which types
 * never sit on a block device, which are local or network filesystems,
 * which storaged may mount in its own process, and which fs_spec tags
 * (UUID=, LABEL=, PARTUUID=, PARTLABEL=, ID=) name a block device.
 * Strings only, no I/O.
 */
#ifndef STORAGED_FSFACTS_H
#define STORAGED_FSFACTS_H

#include <stdbool.h>

/* The fs_spec tags of fstab(5); ID= is util-linux's /dev/disk/by-id/ name. */
enum fsfacts_tag {
	FSFACTS_TAG_NONE,
	FSFACTS_TAG_UUID, /* libblkid UUID, /dev/disk/by-uuid/ */
	FSFACTS_TAG_LABEL, /* libblkid LABEL, /dev/disk/by-label/ */
	FSFACTS_TAG_PARTUUID, /* libblkid PART_ENTRY_UUID, /dev/disk/by-partuuid/ */
	FSFACTS_TAG_PARTLABEL, /* libblkid PART_ENTRY_NAME, /dev/disk/by-partlabel/ */
	FSFACTS_TAG_ID, /* udev's by-id link name (ID_SERIAL, wwn-...), /dev/disk/by-id/ */
};

/*
 * @ret_value: where the value after "TAG=" starts (borrowed from @spec),
 *             set only when a tag is returned; may be NULL
 *
 * Recognises "UUID=", "LABEL=", "PARTUUID=", "PARTLABEL=" and "ID=" as
 * fstab(5) and libmount do (mnt_valid_tagname); the value may be empty.
 *
 * Returns: the tag, or FSFACTS_TAG_NONE.
 */
enum fsfacts_tag fsfacts_tag_parse(const char *spec, const char **ret_value);

/*
 * @path: a path such as "/dev/disk/by-uuid/X"
 * @ret_value: the escaped link name after the directory (borrowed), set
 *             only when a tag is returned; may be NULL
 *
 * Returns: the tag whose udev link directory holds @path, or
 * FSFACTS_TAG_NONE.
 */
enum fsfacts_tag fsfacts_tag_from_path(const char *path, const char **ret_value);

/*
 * @ret_dir: udev's link directory for the tag ("/dev/disk/by-uuid/",
 *           static), set only when a name is returned; may be NULL
 *
 * libmount (mnt_valid_tagname) and systemd's fstab-generator take the tag
 * names in upper case only; "uuid=X" is to them a relative path.  This
 * finds the tag @spec was meant to be, whatever its case, so that the
 * parser can tell a wrong case and an empty value apart from a tag.
 *
 * Returns: the tag's name as fstab(5) spells it ("UUID=", static) when
 * @spec starts with it in any case, else NULL.
 */
const char *fsfacts_tag_name_any_case(const char *spec, const char **ret_dir);

/*
 * Returns: true when @spec is one of the tags with a non-empty value.
 */
bool fsfacts_spec_is_tag(const char *spec);

/*
 * Returns: true when @spec names a block device: a tag (even with an empty
 * value: the device is then never found) or a path below /dev/.
 */
bool fsfacts_spec_is_device(const char *spec);

/*
 * Returns: true when @spec is neither a path nor a tag (UUID=, LABEL=, ...)
 * but a name such as "tmpfs" or "server:/export": no device stands for it,
 * so a mounted filesystem is the same one only when its source is the same
 * text.  Any "NAME=" counts as a tag here: libmount reads it as one.
 */
bool fs_spec_is_name(const char *spec);

/*
 * Returns: true for a filesystem type that never sits on a block device
 * (kernel-internal, network, FUSE), whatever its source says.
 */
bool fsfacts_is_nodev(const char *fstype);

/*
 * @fstype: fstab type, e.g. "nfs4" or "fuse.sshfs"
 * @source: its fs_spec, for the old "sshfs#user@host:/dir" FUSE spelling
 *
 * libmount's list (mnt_fstype_is_netfs) and the ones it lacks, as systemd's
 * fstype_is_network(): FUSE ones by their subtype.  `_netdev` is not looked
 * at: the classic multi-device btrfs workaround puts it on local disks.
 *
 * Returns: true for a network filesystem.
 */
bool fsfacts_is_network(const char *fstype, const char *source);

/*
 * Returns: true for a type whose lookups and mounts never wait for a server
 * or a user space daemon: kernel-internal ones and those on local block
 * devices.
 */
bool fsfacts_is_local(const char *fstype);

/*
 * @unit: a systemd unit name from x-systemd.requires= or x-systemd.after=
 *
 * The units that stand for the network or what comes only after it
 * (network-online.target, remote-fs-pre.target, iscsi.service, the
 * wait-online services, VPN tunnels such as wg-quick@IFACE.service, ...):
 * an entry ordered after one cannot be mounted before the network is up.
 *
 * Returns: true for such a unit.
 */
bool fsfacts_unit_is_network(const char *unit);

/*
 * Returns: true for a device path whose device comes over the network and
 * so may appear only after it (/dev/disk/by-path/ip-… iSCSI, /dev/nbd*,
 * /dev/rbd*, /dev/etherd/…, /dev/drbd*), as if the line said `_netdev`.
 */
bool fsfacts_spec_on_network(const char *spec);

#endif

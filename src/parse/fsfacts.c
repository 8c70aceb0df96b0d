/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <string.h>

#include <libmount.h>

#include "fsfacts.h"
#include "shared/util.h"

static const struct {
	const char *name; /* "UUID=" */
	const char *dir; /* udev's link directory for it */
	enum fsfacts_tag tag;
} tags[] = {
	{ "UUID=", "/dev/disk/by-uuid/", FSFACTS_TAG_UUID },
	{ "LABEL=", "/dev/disk/by-label/", FSFACTS_TAG_LABEL },
	{ "PARTUUID=", "/dev/disk/by-partuuid/", FSFACTS_TAG_PARTUUID },
	{ "PARTLABEL=", "/dev/disk/by-partlabel/", FSFACTS_TAG_PARTLABEL },
	{ "ID=", "/dev/disk/by-id/", FSFACTS_TAG_ID },
};

/* One row per type; a type not listed has none of the facts. */
static const struct {
	const char *type;
	bool nodev; /* never on a block device */
	bool local; /* no server, no user space daemon */
} types[] = {
	/* kernel-internal */
	{ "tmpfs", true, true },
	{ "ramfs", true, true },
	{ "devtmpfs", true, true },
	{ "rootfs", false, true },
	{ "proc", true, false },
	{ "sysfs", true, false },
	{ "devpts", true, false },
	{ "cgroup", true, false },
	{ "cgroup2", true, false },
	{ "mqueue", true, false },
	{ "bpf", true, false },
	{ "overlay", true, false },
	{ "hugetlbfs", true, false },
	{ "none", true, false },
	/* network and virtual machine shares */
	{ "nfs", true, false },
	{ "nfs4", true, false },
	{ "cifs", true, false },
	{ "smb3", true, false },
	{ "9p", true, false },
	{ "virtiofs", true, false },
	/* on local block devices */
	{ "btrfs", false, true },
	{ "erofs", false, true },
	{ "exfat", false, true },
	{ "ext2", false, true },
	{ "ext3", false, true },
	{ "ext4", false, true },
	{ "f2fs", false, true },
	{ "hfsplus", false, true },
	{ "iso9660", false, true },
	{ "jfs", false, true },
	{ "nilfs2", false, true },
	{ "ntfs3", false, true },
	{ "reiserfs", false, true },
	{ "squashfs", false, true },
	{ "udf", false, true },
	{ "vfat", false, true },
	{ "xfs", false, true },
};

/* Network filesystems libmount's mnt_fstype_is_netfs() lacks (as systemd's
 * fstype_is_network(); FUSE ones by their subtype). */
static const char *const more_network[] = {
	"afs",	   "ceph",   "curlftpfs", "davfs",  "gcsfuse", "gfs",  "gfs2",	"glusterfs",
	"juicefs", "lustre", "ocfs2",	  "rclone", "s3fs",    "s3ql", "sshfs",
};

enum fsfacts_tag fsfacts_tag_parse(const char *spec, const char **ret_value)
{
	for (size_t i = 0; spec && i < ARRAY_SIZE(tags); i++)
		if (has_prefix(spec, tags[i].name)) {
			if (ret_value)
				*ret_value = spec + strlen(tags[i].name);
			return tags[i].tag;
		}
	return FSFACTS_TAG_NONE;
}

enum fsfacts_tag fsfacts_tag_from_path(const char *path, const char **ret_value)
{
	for (size_t i = 0; path && i < ARRAY_SIZE(tags); i++)
		if (has_prefix(path, tags[i].dir)) {
			if (ret_value)
				*ret_value = path + strlen(tags[i].dir);
			return tags[i].tag;
		}
	return FSFACTS_TAG_NONE;
}

/* ASCII only: strncasecmp(3) follows the locale, where a Turkish one
 * lowers 'I' to a dotless i. */
static bool has_prefix_ascii_nocase(const char *s, const char *upper)
{
	for (; *upper; s++, upper++) {
		char c = *s >= 'a' && *s <= 'z' ? (char)(*s - 'a' + 'A') : *s;

		if (c != *upper)
			return false;
	}
	return true;
}

const char *fsfacts_tag_name_any_case(const char *spec, const char **ret_dir)
{
	for (size_t i = 0; spec && i < ARRAY_SIZE(tags); i++)
		if (has_prefix_ascii_nocase(spec, tags[i].name)) {
			if (ret_dir)
				*ret_dir = tags[i].dir;
			return tags[i].name;
		}
	return NULL;
}

bool fsfacts_spec_is_tag(const char *spec)
{
	const char *v;

	return fsfacts_tag_parse(spec, &v) != FSFACTS_TAG_NONE && *v != '\0';
}

bool fsfacts_spec_is_device(const char *spec)
{
	return spec && (fsfacts_tag_parse(spec, NULL) != FSFACTS_TAG_NONE || has_prefix(spec, "/dev/"));
}

bool fs_spec_is_name(const char *spec)
{
	return spec && spec[0] != '/' && !strchr(spec, '=');
}

static int type_row(const char *fstype)
{
	for (size_t i = 0; fstype && i < ARRAY_SIZE(types); i++)
		if (strcmp(fstype, types[i].type) == 0)
			return (int)i;
	return -1;
}

bool fsfacts_is_nodev(const char *fstype)
{
	int i = type_row(fstype);

	if (i >= 0)
		return types[i].nodev;
	return fstype && has_prefix(fstype, "fuse");
}

bool fsfacts_is_network(const char *fstype, const char *source)
{
	const char *t;

	if (!fstype)
		return false;
	t = has_prefix(fstype, "fuse.") ? fstype + 5 : fstype;
	for (size_t i = 0; i < ARRAY_SIZE(more_network); i++)
		if (strcmp(t, more_network[i]) == 0)
			return true;
	/* the old spelling: "sshfs#user@host:/dir /mnt fuse" */
	if (strcmp(fstype, "fuse") == 0 && source && has_prefix(source, "sshfs#"))
		return true;
	return mnt_fstype_is_netfs(fstype) || mnt_fstype_is_netfs(t);
}

bool fsfacts_is_local(const char *fstype)
{
	int i = type_row(fstype);

	return i >= 0 && types[i].local;
}

bool fsfacts_unit_is_network(const char *unit)
{
	static const char *const units[] = {
		"network.target",
		"network-online.target",
		"remote-fs-pre.target",
		"remote-fs.target",
		"nfs-client.target",
		"iscsi.service",
		"iscsid.service",
		"iscsid.socket",
		"open-iscsi.service",
		"iscsi-init.service",
		"iscsi-onboot.service",
		"nvmf-autoconnect.service",
		"NetworkManager-wait-online.service",
		"systemd-networkd-wait-online.service",
		"ifupdown-wait-online.service",
		"ifupdown-pre.service",
		"networking.service",
		"rpcbind.service",
		"rpc-statd.service",
		"multipathd.service",
		"tailscaled.service",
		"zerotier-one.service",
	};
	/* template units, whatever the instance: "wg-quick@wg0.service" */
	static const char *const templates[] = {
		"wg-quick@",
		"openvpn@",
		"openvpn-client@",
		"nvmf-connect@",
		"iscsid@",
		"network-online@",
		"systemd-networkd-wait-online@",
	};

	for (size_t i = 0; unit && i < ARRAY_SIZE(units); i++)
		if (strcmp(unit, units[i]) == 0)
			return true;
	for (size_t i = 0; unit && i < ARRAY_SIZE(templates); i++)
		if (has_prefix(unit, templates[i]))
			return true;
	return false;
}

bool fsfacts_spec_on_network(const char *spec)
{
	static const char *const prefixes[] = {
		"/dev/disk/by-path/ip-", /* iSCSI: udev's ID_PATH "ip-ADDR:PORT-iscsi-IQN-lun-N" */
		"/dev/nbd", /* network block device */
		"/dev/rbd", /* Ceph RADOS block device */
		"/dev/etherd/", /* ATA over Ethernet */
		"/dev/drbd", /* DRBD replicated device */
	};

	for (size_t i = 0; spec && i < ARRAY_SIZE(prefixes); i++)
		if (has_prefix(spec, prefixes[i]))
			return true;
	return false;
}

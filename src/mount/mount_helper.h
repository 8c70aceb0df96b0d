/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Mount helpers (/sbin/mount.TYPE: mount.nfs, mount.cifs, mount.fuse, ...)
 * as libmount runs them.  A helper is called as mount(8) calls it, with
 * the entry's own mount point, because it checks that name, writes it to
 * utab and prints it; so it resolves the name itself, and a directory on
 * the way renamed meanwhile sends its mount elsewhere.  What it mounted is
 * therefore checked afterwards against the directory storaged walked, and
 * a mount it made elsewhere is found here.
 */
#ifndef STORAGED_MOUNT_HELPER_H
#define STORAGED_MOUNT_HELPER_H

#include <stddef.h>
#include <stdint.h>

#include "shared/spawn_helper.h" /* mount_helper_find() */

struct libmnt_table;


/*
 * @options: the options storaged hands to libmount (storaged's own and
 *           x-systemd.* already stripped)
 * @ret: those options without X-mount.* and x-mount.* (caller frees); NULL
 *       for none left
 *
 * libmount acts on X-mount.mkdir, .owner, .group and .mode by the mount
 * point's name, which, once a helper gets that name, a user may have
 * pointed elsewhere; storaged's walk made the directories already.
 *
 * Returns: 0; -ENOMEM.
 */
int mount_helper_options(const char *options, char **ret);

/*
 * @before: the mount table read before the helper ran (view_read_table())
 * @source: the source the helper was given, as the mount table shows a
 *          network or FUSE source ("server:/export", "//host/share")
 * @ret_id: the mount ID (STATX_MNT_ID, proc(5) mountinfo field 1) of the
 *          one new mount of @source
 * @ret_target: its mount point (caller frees)
 *
 * The mounts of @source in the table now that were not in @before (the
 * same ID on the same mount point): exactly one is the helper's, as far
 * as the mount table can tell; more than one (another program mounting
 * the same source meanwhile) cannot be told apart.
 *
 * Returns: 1 with @ret_id and @ret_target; 0 when there is none;
 * -EEXIST when there are several (@ret_target the first); -errno when the
 * table cannot be read.
 */
int mount_helper_mounted_elsewhere(struct libmnt_table *before, const char *source,
				   uint64_t *ret_id, char **ret_target);

#endif

/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Mount helpers as libmount runs them (mount_helper.h). */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <libmount.h>

#include "mount_helper.h"
#include "view.h"
#include "shared/util.h"

int mount_helper_options(const char *options, char **ret)
{
	char *rest = (char *)options, *name, *value, *out = NULL;
	size_t name_len, value_len;

	*ret = NULL;
	while (options && mnt_optstr_next_option(&rest, &name, &name_len, &value, &value_len) == 0) {
		_cleanup_free_ char *n = NULL, *v = NULL;

		if (name_len >= 8 && strncasecmp(name, "X-mount.", 8) == 0)
			continue;
		n = strndup(name, name_len);
		v = value ? strndup(value, value_len) : NULL;
		if (!n || (value && !v) || mnt_optstr_append_option(&out, n, v) < 0) {
			free(out);
			return -ENOMEM;
		}
	}
	*ret = out;
	return 0;
}

/* @fs was in @before: the same ID on the same mount point (an ID freed and
 * given to a new mount meanwhile has, in practice, another mount point). */
static bool was_there(struct libmnt_table *before, struct libmnt_fs *fs)
{
	struct libmnt_fs *old = view_find_id(before, (uint64_t)mnt_fs_get_id(fs));

	return old && streq(mnt_fs_get_target(old) ?: "", mnt_fs_get_target(fs) ?: "");
}

int mount_helper_mounted_elsewhere(struct libmnt_table *before, const char *source,
				   uint64_t *ret_id, char **ret_target)
{
	struct libmnt_table *now = view_read_table(VIEW_MOUNTINFO);
	struct libmnt_iter *it = mnt_new_iter(MNT_ITER_FORWARD);
	struct libmnt_fs *fs;
	int found = 0, r = 0;

	*ret_id = 0;
	*ret_target = NULL;
	if (!now || !it) {
		r = -errno ?: -ENOMEM;
		goto out;
	}
	while (mnt_table_next_fs(now, it, &fs) == 0) {
		if (!streq(mnt_fs_get_source(fs) ?: "", source) || was_there(before, fs))
			continue;
		if (found++ == 0) {
			*ret_id = (uint64_t)mnt_fs_get_id(fs);
			*ret_target = strdup(mnt_fs_get_target(fs) ?: "?");
			if (!*ret_target) {
				r = -ENOMEM;
				goto out;
			}
		}
	}
	r = found == 0 ? 0 : found == 1 ? 1 : -EEXIST;
out:
	mnt_free_iter(it);
	mnt_unref_table(now);
	return r;
}

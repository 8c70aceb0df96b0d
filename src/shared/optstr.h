/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Options of an fstab line, asked for one by one. */
#ifndef STORAGED_OPTSTR_H
#define STORAGED_OPTSTR_H

#include <stdbool.h>
#include <stddef.h>

#include <libmount.h>

/*
 * @opts: an fstab options string (decoded), or NULL
 * @ret_value, @ret_len: as mnt_optstr_get_option() (may be NULL): the
 *                       value, borrowed from @opts, and its length in bytes
 *
 * Returns: true when @opts has the option @name.
 */
static inline bool optstr_get(const char *opts, const char *name, char **ret_value, size_t *ret_len)
{
	return opts && mnt_optstr_get_option(opts, name, ret_value, ret_len) == 0;
}

#endif

/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The command advice names (invocation.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "invocation.h"
#include "util.h"

/* Appends " OPTION VALUE" (@value made absolute and quoted) to @cmd. */
static int add_option(char **cmd, const char *option, const char *value)
{
	_cleanup_free_ char *abs = path_absolute(value);
	/* shell_quote() writes at most 4 bytes a byte, the quotes, the NUL */
	size_t len = abs ? strlen(abs) * 4 + 3 : 0;
	_cleanup_free_ char *quoted = abs ? malloc(len) : NULL;
	char *longer;

	if (!quoted)
		return -errno;
	if (asprintf(&longer, "%s %s %s", *cmd, option, shell_quote(abs, quoted, len)) < 0)
		return -ENOMEM;
	free(*cmd);
	*cmd = longer;
	return 0;
}

char *invocation_format(const char *config, const char *fstab, const char *state_dir)
{
	char *cmd = strdup("storaged");
	int r = cmd ? 0 : -ENOMEM;

	if (r == 0 && config)
		r = add_option(&cmd, "-c", config);
	if (r == 0 && fstab)
		r = add_option(&cmd, "-f", fstab);
	if (r == 0 && state_dir)
		r = add_option(&cmd, "--state-dir", state_dir);
	if (r < 0) {
		free(cmd);
		errno = -r;
		return NULL;
	}
	return cmd;
}

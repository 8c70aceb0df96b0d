/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "util.h"

char *strip(char *s)
{
	char *e;

	while (is_blank(*s))
		s++;
	e = s + strlen(s);
	while (e > s && is_blank(e[-1]))
		*--e = '\0';
	return s;
}

size_t strv_length(char *const *v)
{
	size_t n = 0;

	while (v && v[n])
		n++;
	return n;
}

char **strv_free(char **v)
{
	for (size_t i = 0; v && v[i]; i++)
		free(v[i]);
	free(v);
	return NULL;
}

void strv_freep(char ***v)
{
	*v = strv_free(*v);
}

int strv_push(char ***v, char *s)
{
	size_t n = strv_length(*v);
	char **nv = realloc(*v, (n + 2) * sizeof(char *));

	if (!nv)
		return -ENOMEM;
	nv[n] = s;
	nv[n + 1] = NULL;
	*v = nv;
	return 0;
}

int strv_extend(char ***v, const char *s)
{
	char *copy = strdup(s);
	int r;

	if (!copy)
		return -ENOMEM;
	r = strv_push(v, copy);
	if (r < 0)
		free(copy);
	return r;
}

bool strv_contains(char *const *v, const char *s)
{
	for (size_t i = 0; v && v[i]; i++)
		if (strcmp(v[i], s) == 0)
			return true;
	return false;
}

bool path_is_below(const char *path, const char *dir)
{
	size_t n = strlen(dir);

	if (strcmp(dir, "/") == 0)
		return path[0] == '/' && path[1] != '\0';
	return strncmp(path, dir, n) == 0 && path[n] == '/' && path[n + 1] != '\0';
}

bool path_is_normalized(const char *path)
{
	const char *p = path;

	if (path[0] != '/')
		return false;
	if (strcmp(path, "/") == 0)
		return true;
	while (*p == '/') {
		const char *c = p + 1;
		size_t len = strcspn(c, "/");

		if (len == 0)
			return false; /* "//" or trailing slash */
		if ((len == 1 && c[0] == '.') || (len == 2 && c[0] == '.' && c[1] == '.'))
			return false;
		p = c + len;
	}
	return true;
}

static bool unit_char_ok(char c, bool first)
{
	if (first && c == '.')
		return false;
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == ':' ||
	       c == '_' || c == '.';
}

int unit_name_from_path(const char *path, const char *suffix, char **ret)
{
	size_t len = strlen(path), n = 0;
	bool first = true;
	char *out;

	if (path[0] != '/')
		return -EINVAL;
	out = malloc(len * 4 + strlen(suffix) + 2);
	if (!out)
		return -ENOMEM;
	for (const char *p = path; *p; p++) {
		if (*p == '/') {
			/* one "-" per run of slashes, none at either end */
			if (!first && p[1] && p[1] != '/' && n)
				out[n++] = '-';
			continue;
		}
		if (unit_char_ok(*p, first))
			out[n++] = *p;
		else
			n += (size_t)sprintf(out + n, "\\x%02x", (unsigned char)*p);
		first = false;
	}
	if (n == 0)
		out[n++] = '-';
	strcpy(out + n, suffix);
	*ret = out;
	return 0;
}

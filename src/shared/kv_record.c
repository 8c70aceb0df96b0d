/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The keyed-record codec (kv_record.h): one reader and one writer over a
 * table of fields.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libmount.h>

#include "kv_record.h"
#include "units.h"
#include "util.h"

/*
 * inih as built by distributions reads lines of at most 200 bytes, so a long
 * value (a deep mount point, a libmount error message) is written as
 * "key = first part" followed by "key+ = next part" lines.
 */
#define KV_PART_MAX 120

/*
 * Bytes written as a 4-byte octal escape, which mnt_unmangle() (the reader)
 * turns back into the byte: those of mnt_mangle() (space, tab, newline,
 * backslash), those inih trims from either end of a value (isspace: \r, \v,
 * \f), and ';' and '#', which start an inline comment after a space in
 * inih's default build, so that a value beginning with one survives the
 * " = " before it.
 */
static bool kv_escaped(char c)
{
	return c && strchr(" \t\n\r\v\f\\;#", c);
}

/* A value written as is: short enough for one line, nothing to escape. */
static bool kv_plain(const char *value)
{
	size_t n = 0;

	for (; value[n]; n++)
		if (n >= KV_PART_MAX || kv_escaped(value[n]))
			return false;
	return true;
}

int kv_write(FILE *f, const char *key, const char *value)
{
	const char *p = value;

	if (!value)
		return 0;
	if (kv_plain(value)) {
		fprintf(f, "%s = %s\n", key, value);
		return ferror(f) ? -EIO : 0;
	}
	do {
		size_t len = 0;

		fprintf(f, "%s%s = ", key, p == value ? "" : "+");
		for (; *p && len + (kv_escaped(*p) ? 4 : 1) <= KV_PART_MAX; p++) {
			if (kv_escaped(*p)) {
				fprintf(f, "\\%03o", (unsigned)(unsigned char)*p);
				len += 4;
			} else {
				fputc(*p, f);
				len++;
			}
		}
		fputc('\n', f);
	} while (*p);
	return ferror(f) ? -EIO : 0;
}

int kv_replace_str(char **dst, const char *src)
{
	char *copy = NULL;

	if (src && !(copy = strdup(src)))
		return -ENOMEM;
	free(*dst);
	*dst = copy;
	return 0;
}

static int append_str(char **dst, const char *more)
{
	size_t a = strlen(*dst);
	char *n = realloc(*dst, a + strlen(more) + 1);

	if (!n)
		return -ENOMEM;
	strcpy(n + a, more);
	*dst = n;
	return 0;
}

char *kv_unmangle(const char *raw)
{
	return raw[0] ? mnt_unmangle(raw) : strdup(""); /* mnt_unmangle() has no answer for "" */
}

const struct kv_field *kv_find(const struct kv_field *table, size_t n, const char *name, bool *append)
{
	size_t len = strlen(name);
	bool plus = append && len > 0 && name[len - 1] == '+';

	if (plus)
		len--;
	for (size_t i = 0; i < n; i++)
		if (strncmp(table[i].name, name, len) == 0 && table[i].name[len] == '\0') {
			if (append)
				*append = plus;
			return plus && table[i].type != KV_STR ? NULL : &table[i];
		}
	return NULL;
}

static void *at(void *base, size_t off)
{
	return (char *)base + off;
}

static const void *at_const(const void *base, size_t off)
{
	return (const char *)base + off;
}

static int set_list_item(const struct kv_field *f, void *base, const char *v)
{
	uint64_t **list = at(base, f->off), *nv, id;
	size_t *n = at(base, f->n_off);

	if (units_parse_uint(v, UINT64_MAX, &id) < 0 || id == 0 || *n >= f->max)
		return -EINVAL;
	nv = realloc(*list, (*n + 1) * sizeof(*nv));
	if (!nv)
		return -ENOMEM;
	nv[(*n)++] = id;
	*list = nv;
	return 0;
}

static int set_enum(const struct kv_field *f, void *base, const char *v)
{
	for (size_t i = 0; i < f->n_names; i++)
		if (f->names[i] && strcmp(f->names[i], v) == 0) {
			*(int *)at(base, f->off) = (int)i;
			return 0;
		}
	return -EINVAL;
}

static int set_value(const struct kv_field *f, void *base, const char *v, bool append)
{
	char **s = at(base, f->off);
	uint64_t u;
	int r;

	switch (f->type) {
	case KV_STR:
		if (append)
			return *s ? append_str(s, v) : -EINVAL;
		return kv_replace_str(s, (f->flags & KV_EMPTY_NONE) && !*v ? NULL : v);
	case KV_U64:
		return units_parse_uint(v, UINT64_MAX, at(base, f->off));
	case KV_U32:
		r = units_parse_uint(v, UINT32_MAX, &u);
		if (r == 0)
			*(unsigned *)at(base, f->off) = (unsigned)u;
		return r;
	case KV_BOOL:
		return units_parse_bool(v, at(base, f->off));
	case KV_ENUM:
		return set_enum(f, base, v);
	case KV_U64_LIST:
		return set_list_item(f, base, v);
	case KV_CUSTOM:
		return f->parse(v, base, f);
	}
	return -EINVAL;
}

int kv_set(const struct kv_field *f, void *base, const char *v, bool append)
{
	int r = set_value(f, base, v, append);

	return r < 0 && r != -ENOMEM && (f->flags & KV_LAX) ? 0 : r;
}

/* The text of @f's value at @base into @buf, or NULL: not written. */
static const char *format_value(const struct kv_field *f, const void *base, char *buf, size_t len)
{
	const void *p = at_const(base, f->off);
	uint64_t u = 0;
	int e;

	switch (f->type) {
	case KV_STR:
		return *(char *const *)p;
	case KV_U64:
		u = *(const uint64_t *)p;
		break;
	case KV_U32:
		u = *(const unsigned *)p;
		break;
	case KV_BOOL:
		return (f->flags & KV_NONZERO) && !*(const bool *)p ? NULL : *(const bool *)p ? "yes" : "no";
	case KV_ENUM:
		e = *(const int *)p;
		return e >= 0 && (size_t)e < f->n_names ? f->names[e] : NULL;
	case KV_CUSTOM:
		return f->format ? f->format(base, f, buf, len) : NULL;
	case KV_U64_LIST:
		return NULL; /* kv_write_fields(): a line per item */
	}
	if ((f->flags & KV_NONZERO) && u == 0)
		return NULL;
	snprintf(buf, len, "%" PRIu64, u);
	return buf;
}

static int write_list(FILE *f, const void *base, const struct kv_field *k)
{
	const uint64_t *list = *(uint64_t *const *)at_const(base, k->off);
	size_t n = *(const size_t *)at_const(base, k->n_off);
	char buf[24];
	int r = 0;

	for (size_t i = 0; i < n && r == 0; i++) {
		snprintf(buf, sizeof(buf), "%" PRIu64, list[i]);
		r = kv_write(f, k->name, buf);
	}
	return r;
}

int kv_write_fields(FILE *f, const void *base, const struct kv_field *table, size_t n)
{
	char buf[64];
	int r = 0;

	for (size_t i = 0; i < n && r == 0; i++) {
		const struct kv_field *k = &table[i];

		if ((k->flags & KV_GATED) && !*(const uint64_t *)at_const(base, k->gate))
			continue;
		r = k->type == KV_U64_LIST ? write_list(f, base, k)
					   : kv_write(f, k->name, format_value(k, base, buf, sizeof(buf)));
	}
	return r;
}

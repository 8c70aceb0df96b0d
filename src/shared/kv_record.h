/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * One codec for the keyed records storaged reads and writes as ini
 * ("key = value" lines): a table of fields (name, offset, type) with one
 * reader and one writer.  The run state and the area records (state/) and
 * the device inventory fixture (devices/) are tables of it.
 *
 * The state format: values mangled as in /proc/self/mountinfo (what
 * mnt_unmangle() reads back), long values on "key+" continuation lines.
 */
#ifndef STORAGED_KV_RECORD_H
#define STORAGED_KV_RECORD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

enum kv_type {
	KV_STR, /* char * (owned); NULL is not written; "key+" appends */
	KV_U64, /* uint64_t, decimal */
	KV_U32, /* unsigned, decimal, at most UINT32_MAX */
	KV_BOOL, /* bool, "yes" or "no" */
	KV_ENUM, /* an enum, by names[] (a NULL name is not written) */
	KV_U64_LIST, /* uint64_t * (owned), its count a size_t at n_off: one
			line per item, each at least 1, at most max items */
	KV_CUSTOM, /* parse() and format() */
};

enum {
	KV_LAX = 1u << 0, /* a value this reader cannot use is ignored, as a
			     newer storaged's would be, not an error */
	KV_NONZERO = 1u << 1, /* written only when not 0 (false) */
	KV_GATED = 1u << 2, /* written only when the uint64_t at gate is not 0 */
	KV_EMPTY_NONE = 1u << 3, /* KV_STR: an empty value is NULL */
};

struct kv_field;
/* Returns: 0; -EINVAL or -ERANGE for a value it refuses; -ENOMEM. */
typedef int (*kv_parser)(const char *v, void *base, const struct kv_field *f);
/* Returns: the value's text (static, or in @buf of @len bytes), or NULL:
 * nothing to write. */
typedef const char *(*kv_formatter)(const void *base, const struct kv_field *f, char *buf, size_t len);

struct kv_field {
	const char *name;
	size_t off; /* of the value, within the record's struct */
	enum kv_type type;
	unsigned flags; /* KV_* above */
	size_t gate; /* KV_GATED: offset of the uint64_t that must be set */
	const char *const *names; /* KV_ENUM: name of each value */
	size_t n_names;
	size_t n_off, max; /* KV_U64_LIST: offset of the count, its bound */
	kv_parser parse; /* KV_CUSTOM */
	kv_formatter format; /* KV_CUSTOM; NULL: never written */
	const char *expect; /* what a valid value looks like, for messages */
};

/* The row of @table (@n rows) for the key @name, or NULL; when @append is
 * not NULL, "name+" finds a KV_STR row too, and *@append says so. */
const struct kv_field *kv_find(const struct kv_field *table, size_t n, const char *name, bool *append);

/* Stores @v, a value of the row @f, into the struct at @base; @append adds
 * it to the string before, which must exist.  Returns: 0; -EINVAL or
 * -ERANGE for a value of the wrong form (0 for a KV_LAX row, @base
 * unchanged); -ENOMEM. */
int kv_set(const struct kv_field *f, void *base, const char *v, bool append);

/* Returns: @raw, a value kv_write() mangled, turned back (owned), or NULL
 * on -ENOMEM. */
char *kv_unmangle(const char *raw);

/* The fields of the struct at @base, in the order of @table (@n rows), as
 * kv_write() writes one.  Returns: 0; -EIO when @f is in error (ferror:
 * also an earlier write's). */
int kv_write_fields(FILE *f, const void *base, const struct kv_field *table, size_t n);

/* "key = value" (nothing for a NULL @value), mangled as mnt_unmangle()
 * reads it back (also the bytes inih would trim or take for a comment),
 * on "key+ = ..." lines of at most 120 bytes of value for inih's 200-byte
 * lines.  Returns: as kv_write_fields(). */
int kv_write(FILE *f, const char *key, const char *value);

/* *@dst = a copy of @src (NULL: NULL), the old value freed.  Returns: 0 or -ENOMEM. */
int kv_replace_str(char **dst, const char *src);

#endif

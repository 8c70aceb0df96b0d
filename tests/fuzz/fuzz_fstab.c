/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Fuzz target: fstab_parse_buf() over arbitrary bytes, with the default
 * select list (x-storaged, _netdev).
 *
 * Contract checked (fstab.h):
 *   - the return value is 0, -EINVAL or -ENOMEM, and -EINVAL exactly when
 *     an error was appended; on failure @ret is left untouched;
 *   - every diagnostic names the file and a line that exists (1..lines);
 *   - on success the deferred entries are in file order, each on a distinct,
 *     absolute and normalised mount point, and their mount options carry
 *     none of storaged's own options.
 */
#include <errno.h>
#include <string.h>

#include <libmount.h>

#include "parse/fstab.h"
#include "fuzz.h"
#include "shared/util.h"

#define FILE_NAME "fuzz.fstab"

static size_t count_lines(const uint8_t *data, size_t size)
{
	size_t n = 1;

	for (size_t i = 0; i < size; i++)
		n += data[i] == '\n';
	return n;
}

/* By option name: "defaux-systemd." is some other option. */
static bool has_own_option(const char *opts)
{
	char *it = (char *)opts, *name, *value;
	size_t nsz, vsz;

	while (opts && mnt_optstr_next_option(&it, &name, &nsz, &value, &vsz) == 0) {
		if (nsz >= 10 && strncmp(name, "x-storaged", 10) == 0)
			return true;
		if (nsz >= 10 && strncmp(name, "x-systemd.", 10) == 0)
			return true;
	}
	return false;
}

static void check_entries(const struct fstab *f, size_t lines)
{
	fuzz_assert(f->file && strcmp(f->file, FILE_NAME) == 0);
	fuzz_assert(f->n_entries <= f->n_total);
	for (size_t i = 0; i < f->n_entries; i++) {
		const struct fstab_entry *e = &f->entries[i];

		fuzz_assert(e->line >= 1 && e->line <= lines);
		fuzz_assert(i == 0 || e->line > f->entries[i - 1].line);
		fuzz_assert(e->source && e->fstype && e->options);
		fuzz_assert(e->target && path_is_normalized(e->target));
		fuzz_assert(!has_own_option(e->mount_options));
		for (size_t j = 0; j < i; j++)
			fuzz_assert(strcmp(e->target, f->entries[j].target) != 0);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct diag_list dl = { 0 };
	struct fstab f = { .n_total = 12345 }; /* sentinel: must survive a failure */
	size_t lines = count_lines(data, size);
	int r;

	r = fstab_parse_buf(&f, (const char *)data, size, FILE_NAME, NULL, &dl);
	fuzz_assert(r == 0 || r == -EINVAL || r == -ENOMEM);
	if (r != -ENOMEM)
		fuzz_assert((r == -EINVAL) == (diag_count(&dl, DIAG_ERROR) > 0));
	for (size_t i = 0; i < dl.n; i++) {
		fuzz_assert(dl.v[i].msg && dl.v[i].msg[0]);
		fuzz_assert(dl.v[i].file && strcmp(dl.v[i].file, FILE_NAME) == 0);
		fuzz_assert(dl.v[i].line >= 1 && dl.v[i].line <= lines);
	}
	if (r == 0) {
		check_entries(&f, lines);
		fstab_done(&f);
	} else {
		fuzz_assert(f.n_total == 12345 && !f.entries && !f.file);
	}
	diag_list_done(&dl);
	return 0;
}

/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Fuzz target: config_parse_buf() over arbitrary bytes.
 *
 * The input is parsed twice into one config, as a main file and then as a
 * drop-in, so that the cross-file checks (an area defined in two files,
 * overlapping paths) run too.  Contract checked (config.h):
 *   - the return value is 0, -EINVAL or -ENOMEM, and -EINVAL exactly when
 *     an error was appended;
 *   - every diagnostic names the file and a line that exists (1..lines);
 *   - on success every area has an absolute, normalised path and a name
 *     that fits inih's section buffer ("area NAME" at most 48 bytes), and
 *     jobs is 1..64.
 */
#include <errno.h>
#include <string.h>

#include "parse/config.h"
#include "fuzz.h"
#include "shared/util.h"

static size_t count_lines(const uint8_t *data, size_t size)
{
	size_t n = 1;

	for (size_t i = 0; i < size; i++)
		n += data[i] == '\n';
	return n;
}

static void check_pass(const struct config *c, const struct diag_list *dl, size_t from,
		       size_t errors_before, int r, const char *file, size_t lines)
{
	size_t errors = diag_count(dl, DIAG_ERROR) - errors_before;

	fuzz_assert(r == 0 || r == -EINVAL || r == -ENOMEM);
	if (r == -ENOMEM)
		return;
	fuzz_assert((r == -EINVAL) == (errors > 0));
	for (size_t i = from; i < dl->n; i++) {
		fuzz_assert(dl->v[i].msg && dl->v[i].msg[0]);
		fuzz_assert(dl->v[i].file && strcmp(dl->v[i].file, file) == 0);
		fuzz_assert(dl->v[i].line >= 1 && dl->v[i].line <= lines);
	}
	if (r == 0) {
		fuzz_assert(c->jobs >= 1 && c->jobs <= 64);
		fuzz_assert(c->fstab && c->fstab[0] == '/');
		fuzz_assert(c->select && c->select[0]);
		for (size_t i = 0; i < c->n_areas; i++)
			fuzz_assert(c->areas[i].path && path_is_normalized(c->areas[i].path) &&
				    strlen(c->areas[i].name) <= 43);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const files[] = { "fuzz.conf", "fuzz.conf.d/10-fuzz.conf" };
	struct diag_list dl = { 0 };
	struct config c;
	size_t lines = count_lines(data, size);

	if (config_init(&c) < 0)
		return 0;
	for (size_t pass = 0; pass < ARRAY_SIZE(files); pass++) {
		size_t from = dl.n, errors = diag_count(&dl, DIAG_ERROR);
		int r = config_parse_buf(&c, (const char *)data, size, files[pass], &dl);

		check_pass(&c, &dl, from, errors, r, files[pass], lines);
		if (r == -ENOMEM)
			break;
	}
	config_done(&c);
	diag_list_done(&dl);
	return 0;
}

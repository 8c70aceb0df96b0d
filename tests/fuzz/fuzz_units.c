/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Fuzz target: every units_parse_*() on each NUL-separated piece of the
 * input.
 *
 * Contract checked (units.h):
 *   - errors are -EINVAL or -ERANGE, and the result is set only on success;
 *   - values stay in their documented ranges (percent 1..100, factor
 *     (0, 1000], mode <= 07777, uint <= max, duration not USEC_UNSET);
 *   - a parsed duration formats into 32 bytes and reads back unchanged;
 *   - a parsed size formats into 16 bytes and reads back exactly when the
 *     form has no decimal point, else rounded down (never overstated).
 */
#include <errno.h>
#include <string.h>

#include "fuzz.h"
#include "shared/units.h"
#include "shared/util.h"

#define SENTINEL UINT64_C(0x5a5a5a5a5a5a5a5a)

static void check_err(int r)
{
	fuzz_assert(r == 0 || r == -EINVAL || r == -ERANGE);
}

static void fuzz_size(const char *s)
{
	uint64_t v = SENTINEL, back = SENTINEL;
	char buf[16];
	int r = units_parse_size(s, &v);

	check_err(r);
	if (r < 0) {
		fuzz_assert(v == SENTINEL);
		return;
	}
	units_format_size(v, buf, sizeof(buf));
	fuzz_assert(memchr(buf, '\0', sizeof(buf)));
	fuzz_assert(units_parse_size(buf, &back) == 0);
	if (strchr(buf, '.'))
		fuzz_assert(back <= v);
	else
		fuzz_assert(back == v);
}

static void fuzz_duration(const char *s)
{
	uint64_t v = SENTINEL, back = SENTINEL;
	char buf[32];
	int r = units_parse_duration(s, &v);

	check_err(r);
	if (r < 0) {
		fuzz_assert(v == SENTINEL);
		return;
	}
	fuzz_assert(v != USEC_UNSET);
	units_format_duration(v, buf, sizeof(buf));
	fuzz_assert(memchr(buf, '\0', sizeof(buf)));
	fuzz_assert(units_parse_duration(buf, &back) == 0);
	fuzz_assert(back == v);
}

static void fuzz_scalars(const char *s)
{
	static const uint64_t maxes[] = { 0, 64, UINT32_MAX - 1, UINT64_MAX };
	unsigned pct = 4242, mode = 4242;
	uint64_t v = SENTINEL;
	double f = -1.0;
	bool b = false;
	int r;

	r = units_parse_percent(s, &pct);
	check_err(r);
	fuzz_assert(r < 0 ? pct == 4242 : (pct >= 1 && pct <= 100));

	r = units_parse_count(s, &v);
	check_err(r);
	fuzz_assert(r == 0 || v == SENTINEL);

	for (size_t i = 0; i < ARRAY_SIZE(maxes); i++) {
		v = SENTINEL;
		r = units_parse_uint(s, maxes[i], &v);
		check_err(r);
		fuzz_assert(r < 0 ? v == SENTINEL : v <= maxes[i]);
	}

	r = units_parse_bool(s, &b);
	fuzz_assert(r == 0 || r == -EINVAL);

	r = units_parse_factor(s, &f);
	check_err(r);
	fuzz_assert(r < 0 ? f == -1.0 : (f > 0.0 && f <= 1000.0));

	r = units_parse_mode(s, &mode);
	check_err(r);
	fuzz_assert(r < 0 ? mode == 4242 : mode <= 07777);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *p = (const char *)data, *end = p + size;

	/* Pieces are copied so that none is read past its own end. */
	while (p <= end) {
		const char *nul = memchr(p, '\0', (size_t)(end - p));
		size_t n = nul ? (size_t)(nul - p) : (size_t)(end - p);
		char *s = malloc(n + 1);

		if (!s)
			return 0;
		memcpy(s, p, n);
		s[n] = '\0';
		fuzz_size(s);
		fuzz_duration(s);
		fuzz_scalars(s);
		free(s);
		if (!nul)
			break;
		p = nul + 1;
	}
	return 0;
}

/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Numbers as users write them.  Every parser walks the text by hand: strtoull
 * would accept leading blanks, a sign ("-1" wraps to 2^64-1) and hex, all of
 * which must be rejected here.
 *
 * Error precedence: a malformed string is -EINVAL even when its digits also
 * overflow ("99999999999999999999x"), so that the message names the real
 * problem; -ERANGE only for well-formed text whose value does not fit.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "units.h"
#include "shared/util.h"

/* 10^18 < 2^63: fraction numerators and denominators stay below this. */
#define FRAC_DIGITS_MAX 18

struct number {
	uint64_t whole;
	uint64_t frac; /* numerator of the fraction, < den */
	uint64_t den; /* 10^(fraction digits), 1 without a fraction */
	bool has_frac;
	bool overflow; /* whole part does not fit in 64 bits */
};

static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

static bool is_alpha(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

/* Scans "DIGITS[.DIGITS]" at *p and advances *p past it. */
static int scan_number(const char **p, struct number *n)
{
	const char *s = *p;

	*n = (struct number){ .den = 1 };
	if (!is_digit(*s))
		return -EINVAL;
	for (; is_digit(*s); s++) {
		unsigned d = (unsigned)(*s - '0');

		if (n->whole > (UINT64_MAX - d) / 10)
			n->overflow = true;
		else
			n->whole = n->whole * 10 + d;
	}
	if (*s == '.') {
		unsigned k = 0;

		s++;
		if (!is_digit(*s))
			return -EINVAL;
		for (; is_digit(*s); s++, k++) {
			if (k == FRAC_DIGITS_MAX)
				return -EINVAL;
			n->frac = n->frac * 10 + (uint64_t)(*s - '0');
			n->den *= 10;
		}
		n->has_frac = true;
	}
	*p = s;
	return 0;
}

/*
 * floor(frac × mult / den) without a 128-bit product: binary long
 * multiplication, reducing modulo den at each step.  Needs frac < den <= 10^18,
 * so the remainder never exceeds 3 × 10^18 < 2^64.  The quotient is below
 * mult, so it cannot overflow either.
 */
static uint64_t frac_mul(uint64_t frac, uint64_t den, uint64_t mult)
{
	uint64_t q = 0, rem = 0;

	for (int bit = 63; bit >= 0; bit--) {
		q <<= 1;
		rem <<= 1;
		if (mult & (UINT64_C(1) << bit))
			rem += frac;
		while (rem >= den) {
			rem -= den;
			q++;
		}
	}
	return q;
}

/* whole × mult + floor(fraction × mult), or -ERANGE. */
static int number_scale(const struct number *n, uint64_t mult, uint64_t *ret)
{
	uint64_t v, f;

	if (n->overflow)
		return -ERANGE;
	if (mult && n->whole > UINT64_MAX / mult)
		return -ERANGE;
	v = n->whole * mult;
	f = n->has_frac ? frac_mul(n->frac, n->den, mult) : 0;
	if (v > UINT64_MAX - f)
		return -ERANGE;
	*ret = v + f;
	return 0;
}

/* "K" "M" "G" "T" "P" (either case) → the binary shift; 0 when not one. */
static unsigned size_shift(char c)
{
	static const char letters[] = "KMGTP";
	const char *l;

	if (c == '\0')
		return 0;
	l = strchr(letters, c >= 'a' && c <= 'z' ? c - 'a' + 'A' : c);
	return l ? 10 * (unsigned)(l - letters + 1) : 0;
}

/*
 * "N[.N]" with a binary multiplier up to the letter of @max_shift; a
 * fraction only with a multiplier.  @bytes: "iB" after the letter is
 * allowed too, and "B" after it makes the multiple decimal, as
 * util-linux's strtosize() reads sizes ("1KB" is 1000, "1K" and "1KiB"
 * 1024); a bare "B" is bytes.
 */
static int parse_scaled(const char *s, unsigned max_shift, bool bytes, uint64_t *ret)
{
	uint64_t mult;
	struct number n;
	unsigned shift;
	int r;

	r = scan_number(&s, &n);
	if (r < 0)
		return r;
	shift = size_shift(*s);
	if (shift > max_shift)
		return -EINVAL;
	if (shift)
		s++;
	mult = UINT64_C(1) << shift;
	if (bytes && shift && strcmp(s, "B") == 0)
		for (mult = 1; shift; shift -= 10)
			mult *= 1000;
	if (bytes && ((shift && strcmp(s, "iB") == 0) || strcmp(s, "B") == 0))
		s += strlen(s);
	if (*s != '\0' || (n.has_frac && !(bytes && mult > 1)))
		return -EINVAL;
	return number_scale(&n, mult, ret);
}

int units_parse_size(const char *s, uint64_t *ret_bytes)
{
	return parse_scaled(s, 50, true, ret_bytes);
}

int units_parse_percent(const char *s, unsigned *ret_percent)
{
	struct number n;
	int r;

	r = scan_number(&s, &n);
	if (r < 0)
		return r;
	if (n.has_frac || strcmp(s, "%") != 0)
		return -EINVAL;
	if (n.overflow || n.whole < 1 || n.whole > 100)
		return -ERANGE;
	*ret_percent = (unsigned)n.whole;
	return 0;
}

int units_parse_count(const char *s, uint64_t *ret)
{
	return parse_scaled(s, 30, false, ret); /* k, M, G: not T or P */
}

int units_parse_uint(const char *s, uint64_t max, uint64_t *ret)
{
	struct number n;
	int r;

	r = scan_number(&s, &n);
	if (r < 0)
		return r;
	if (n.has_frac || *s != '\0')
		return -EINVAL;
	if (n.overflow || n.whole > max)
		return -ERANGE;
	*ret = n.whole;
	return 0;
}

struct time_unit {
	const char *name;
	uint64_t usec;
};

/* Longest spelling first, so that "ms" is not read as "m" followed by "s". */
static const struct time_unit time_units[] = {
	{ "minutes", 60 * USEC_PER_SEC },
	{ "seconds", USEC_PER_SEC },
	{ "minute", 60 * USEC_PER_SEC },
	{ "second", USEC_PER_SEC },
	{ "hours", 3600 * USEC_PER_SEC },
	{ "weeks", 7 * 86400 * USEC_PER_SEC },
	{ "msec", USEC_PER_MSEC },
	{ "usec", 1 },
	{ "hour", 3600 * USEC_PER_SEC },
	{ "days", 86400 * USEC_PER_SEC },
	{ "week", 7 * 86400 * USEC_PER_SEC },
	{ "min", 60 * USEC_PER_SEC },
	{ "sec", USEC_PER_SEC },
	{ "day", 86400 * USEC_PER_SEC },
	{ "\xc2\xb5s", 1 }, /* µs */
	{ "ms", USEC_PER_MSEC },
	{ "us", 1 },
	{ "hr", 3600 * USEC_PER_SEC },
	{ "s", USEC_PER_SEC },
	{ "m", 60 * USEC_PER_SEC },
	{ "h", 3600 * USEC_PER_SEC },
	{ "d", 86400 * USEC_PER_SEC },
	{ "w", 7 * 86400 * USEC_PER_SEC },
};

/* The unit at @s; a unit must not run on into more letters ("5mins"). */
static const struct time_unit *time_unit_at(const char *s, size_t *ret_len)
{
	for (size_t i = 0; i < ARRAY_SIZE(time_units); i++) {
		size_t len = strlen(time_units[i].name);

		if (strncmp(s, time_units[i].name, len) == 0 && !is_alpha(s[len])) {
			*ret_len = len;
			return &time_units[i];
		}
	}
	return NULL;
}

/*
 * Components "NUMBER [blanks] UNIT" separated by optional blanks.  A number
 * without unit is accepted only as the whole string ("90" = 90 s); systemd
 * also reads "1min 30" but that reads like a typo.
 */
int units_parse_duration(const char *s, uint64_t *ret_usec)
{
	const char *p = s;
	uint64_t total = 0;
	bool first = true, overflow = false;
	int r;

	if (strcmp(s, "infinity") == 0) {
		*ret_usec = USEC_INFINITY;
		return 0;
	}
	for (;;) {
		const struct time_unit *u;
		struct number n;
		const char *q;
		uint64_t v;
		size_t len = 0;

		r = scan_number(&p, &n);
		if (r < 0)
			return r;
		for (q = p; is_blank(*q); q++)
			;
		u = time_unit_at(q, &len);
		if (!u) {
			if (!first || *p != '\0')
				return -EINVAL;
			r = number_scale(&n, USEC_PER_SEC, &v);
		} else {
			r = number_scale(&n, u->usec, &v);
			p = q + len;
		}
		if (r < 0 || total > UINT64_MAX - v)
			overflow = true; /* reported once the syntax is known to be right */
		else
			total += v;
		first = false;
		if (*p == '\0')
			break;
		while (is_blank(*p))
			p++;
		if (*p == '\0')
			return -EINVAL; /* trailing blanks */
	}
	if (overflow || total >= USEC_UNSET)
		return -ERANGE;
	*ret_usec = total;
	return 0;
}

int units_parse_bool(const char *s, bool *ret)
{
	static const char *const yes[] = { "yes", "true", "on", "1" };
	static const char *const no[] = { "no", "false", "off", "0" };

	for (size_t i = 0; i < ARRAY_SIZE(yes); i++) {
		if (strcasecmp(s, yes[i]) == 0) {
			*ret = true;
			return 0;
		}
		if (strcasecmp(s, no[i]) == 0) {
			*ret = false;
			return 0;
		}
	}
	return -EINVAL;
}

/* Computed by hand rather than strtod(): no locale decimal comma, no
 * "inf"/"nan"/hex/exponent forms slipping through. */
int units_parse_factor(const char *s, double *ret)
{
	struct number n;
	double v;
	int r;

	r = scan_number(&s, &n);
	if (r < 0)
		return r;
	if (*s != '\0')
		return -EINVAL;
	if (n.overflow || n.whole > 1000)
		return -ERANGE;
	v = (double)n.whole + (double)n.frac / (double)n.den;
	if (n.whole == 0 && n.frac == 0)
		return -EINVAL;
	if (v > 1000.0)
		return -ERANGE;
	*ret = v;
	return 0;
}

int units_parse_mode(const char *s, unsigned *ret)
{
	unsigned v = 0;
	bool big = false;

	if (*s == '\0')
		return -EINVAL;
	for (; *s; s++) {
		if (*s < '0' || *s > '7')
			return -EINVAL;
		v = v * 8 + (unsigned)(*s - '0');
		if (v > 07777) {
			big = true;
			v = 07777; /* keep scanning for bad digits without overflowing */
		}
	}
	if (big)
		return -ERANGE;
	*ret = v;
	return 0;
}

/* chmod(2) keeps all of 07777 on a directory, as tmpfs does on its root
 * (mm/shmem.c: "mode" masked with 07777, the root made S_IFDIR | mode);
 * on a directory the set-group-ID bit gives new entries its group and the
 * sticky bit restricts deletion (fs/inode.c inode_init_owner(),
 * fs/namei.c check_sticky()), while nothing in Linux reads the
 * set-user-ID bit of a directory: asking for it is a mistake. */
const char *units_dir_mode_refusal(unsigned mode, unsigned *ret_fixed)
{
	if (!(mode & S_ISUID))
		return NULL;
	*ret_fixed = mode & ~(unsigned)S_ISUID;
	return "sets the set-user-ID bit (4000), which Linux ignores on a directory (files made in it are not given its owner)";
}

/* The largest binary unit that divides @bytes ("12800M"), when it fits. */
static bool format_whole_unit(uint64_t bytes, char *buf, size_t len)
{
	static const char suffix[] = "KMGTP";

	for (unsigned i = ARRAY_SIZE(suffix) - 1; i > 0; i--) {
		uint64_t unit = UINT64_C(1) << (10 * i);

		if (bytes && bytes % unit == 0) {
			int n = snprintf(buf, len, "%llu%c", (unsigned long long)(bytes / unit), suffix[i - 1]);

			return n > 0 && (size_t)n < len;
		}
	}
	return false;
}

char *units_format_size_exact(uint64_t bytes, char *buf, size_t len)
{
	if (!format_whole_unit(bytes, buf, len))
		snprintf(buf, len, "%llu", (unsigned long long)bytes);
	return buf;
}

char *units_format_size(uint64_t bytes, char *buf, size_t len)
{
	static const char suffix[] = "KMGTP";
	unsigned i;

	if (format_whole_unit(bytes, buf, len))
		return buf;
	if (bytes < (UINT64_C(1) << 20)) {
		snprintf(buf, len, "%llu", (unsigned long long)bytes);
		return buf;
	}
	/* Largest unit not above @bytes; the tenth is rounded down, never overstating. */
	for (i = ARRAY_SIZE(suffix) - 1; i > 1; i--)
		if (bytes >= UINT64_C(1) << (10 * i))
			break;
	{
		uint64_t unit = UINT64_C(1) << (10 * i);

		snprintf(buf, len, "%llu.%llu%c", (unsigned long long)(bytes / unit),
			 (unsigned long long)(bytes % unit * 10 / unit), suffix[i - 1]);
	}
	return buf;
}

/* util-linux's size_to_human_string() (lib/strutils.c), as lsblk prints
 * SIZE: the largest binary unit the value reaches, the tenths rounded half
 * up, a ".0" left out, "B" below 1K. */
char *units_format_size_human(uint64_t bytes, char *buf, size_t len)
{
	static const char letters[] = "BKMGTPE";
	unsigned exp = 0;
	uint64_t whole, tenths = 0;

	while (exp < 60 && bytes >= UINT64_C(1) << (exp + 10))
		exp += 10;
	whole = bytes >> exp;
	if (exp) {
		uint64_t frac = bytes & ((UINT64_C(1) << exp) - 1);

		/* thousandths, then tenths rounded half up, as util-linux does */
		frac = frac >= UINT64_MAX / 1000 ? frac / 1024 * 1000 / (UINT64_C(1) << (exp - 10))
						 : frac * 1000 / (UINT64_C(1) << exp);
		tenths = (frac + 50) / 100;
		if (tenths == 10) {
			whole++;
			tenths = 0;
		}
	}
	if (tenths)
		snprintf(buf, len, "%llu.%llu%c", (unsigned long long)whole, (unsigned long long)tenths,
			 letters[exp / 10]);
	else
		snprintf(buf, len, "%llu%c", (unsigned long long)whole, letters[exp / 10]);
	return buf;
}

char *units_format_count(uint64_t n, const char *one, const char *many, char *buf, size_t len)
{
	if (n == 0)
		snprintf(buf, len, "no %s", many);
	else
		snprintf(buf, len, "%llu %s", (unsigned long long)n, n == 1 ? one : many);
	return buf;
}

/* Largest first; format_duration relies on the order. */
static const struct time_unit format_units[] = {
	{ "d", 86400 * USEC_PER_SEC }, { "h", 3600 * USEC_PER_SEC }, { "min", 60 * USEC_PER_SEC },
	{ "s", USEC_PER_SEC },	       { "ms", USEC_PER_MSEC },	     { "us", 1 },
};

/* Every non-zero component, largest first: "1h 1s", "1s 500ms". */
static size_t format_components(uint64_t usec, char *buf, size_t len)
{
	size_t off = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < ARRAY_SIZE(format_units) && off < len; i++) {
		const struct time_unit *u = &format_units[i];
		int n;

		if (usec < u->usec)
			continue;
		n = snprintf(buf + off, len - off, "%s%llu%s", off ? " " : "",
			     (unsigned long long)(usec / u->usec), u->name);
		if (n < 0)
			break;
		off += (size_t)n;
		usec %= u->usec;
	}
	return off;
}

/*
 * One unit when the value is a whole number of it below 1000 ("90s", "2min";
 * 1500 ms is not: it becomes "1s 500ms"); else every non-zero component; and
 * when those do not fit in @len, the largest unit that is exact, whatever its
 * count.  Each form reads back through units_parse_duration() unchanged.
 */
char *units_format_duration(uint64_t usec, char *buf, size_t len)
{
	char tmp[96];
	size_t i;

	if (usec == USEC_INFINITY) {
		snprintf(buf, len, "infinity");
		return buf;
	}
	if (usec == 0) {
		snprintf(buf, len, "0");
		return buf;
	}
	for (i = 0; i < ARRAY_SIZE(format_units); i++) {
		const struct time_unit *u = &format_units[i];

		if (usec % u->usec == 0 && (usec / u->usec < 1000 || i == 0)) {
			snprintf(buf, len, "%llu%s", (unsigned long long)(usec / u->usec), u->name);
			return buf;
		}
	}
	if (format_components(usec, tmp, sizeof(tmp)) < len) {
		memcpy(buf, tmp, strlen(tmp) + 1);
		return buf;
	}
	for (i = 0; usec % format_units[i].usec != 0; i++)
		;
	snprintf(buf, len, "%llu%s", (unsigned long long)(usec / format_units[i].usec),
		 format_units[i].name);
	return buf;
}

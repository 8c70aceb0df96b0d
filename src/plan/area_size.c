/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Sizing of RAM areas (pure): size= and nr_inodes= from the config and the
 * seed survey, and whether the seed fits.  Never prints, never touches the
 * system.
 *
 * What a backend can hold:
 *  - tmpfs: size= bytes of pages and nr_inodes= inodes, the root directory
 *    being one of them (the survey counts the root too, so the seed needs
 *    survey.inodes).
 *  - ext2/3/4 on zram or brd (made with -b 4096 -I 256 -m 0 -N <inodes>, the
 *    AREA_EXT_* geometry of area_size.h):
 *    inodes 1..10 are reserved (root is 2) and lost+found is 11, so the seed
 *    needs survey.inodes + 10; the inode tables, bitmaps and group
 *    descriptors take about inodes × 256 + size / 64 + 1 MiB (ext3 adds its
 *    journal).  area_backend.c checks the real free space after mkfs.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "area_size.h"
#include "parse/area_facts.h"
#include "shared/units.h"

#define MIB (UINT64_C(1) << 20)
#define AUTO_MIN_BYTES (16 * MIB)
#define AUTO_MIN_INODES UINT64_C(1024)
#define PERCENT_ALIGN UINT64_C(4096)
#define EXT_RESERVED_INODES UINT64_C(10)

static bool area_is_ext(const struct area_config *a)
{
	return area_fstype_is_ext(area_fstype(a));
}

static uint64_t reserved_inodes(const struct area_config *a)
{
	return area_is_ext(a) ? EXT_RESERVED_INODES : 0;
}

/* journal mke2fs makes for ext3 with 4 KiB blocks (ext2fs_default_journal_size) */
static uint64_t ext3_journal(uint64_t size)
{
	uint64_t blocks = size / AREA_EXT_BLOCK_SIZE;

	if (blocks < 2048)
		return 0;
	if (blocks < 32768)
		return 1024 * AREA_EXT_BLOCK_SIZE;
	if (blocks < 256 * 1024)
		return 4096 * AREA_EXT_BLOCK_SIZE;
	if (blocks < 512 * 1024)
		return 8192 * AREA_EXT_BLOCK_SIZE;
	if (blocks < 4096 * 1024)
		return 16384 * AREA_EXT_BLOCK_SIZE;
	return 32768 * AREA_EXT_BLOCK_SIZE;
}

/* bytes the filesystem itself takes out of @size (0 for tmpfs) */
static uint64_t fs_overhead(const struct area_config *a, uint64_t size, uint64_t inodes)
{
	uint64_t o;

	if (!area_is_ext(a))
		return 0;
	o = inodes * AREA_EXT_INODE_SIZE + size / 64 + MIB;
	if (strcmp(area_fstype(a), "ext3") == 0)
		o += ext3_journal(size);
	return o;
}

static uint64_t round_up(uint64_t v, uint64_t align)
{
	if (v > UINT64_MAX - align)
		return UINT64_MAX / align * align;
	return (v + align - 1) / align * align;
}

static uint64_t mul_ceil(uint64_t v, double f)
{
	double d = ceil((double)v * f);

	return d >= 18446744073709549568.0 ? UINT64_MAX : (uint64_t)d;
}

static int resolve_inodes(const struct area_config *a, const struct area_survey *s, struct area_sizing *r)
{
	uint64_t res = reserved_inodes(a), n;
	char extra[48] = "";

	if (!a->inodes_auto) {
		r->nr_inodes = a->inodes;
		snprintf(r->inodes_how, sizeof(r->inodes_how), "%llu (configured)",
			 (unsigned long long)a->inodes);
		return 0;
	}
	if (!s || !s->valid)
		return -EINVAL;
	n = mul_ceil(s->inodes, a->headroom);
	if (n < AUTO_MIN_INODES)
		n = AUTO_MIN_INODES;
	if (res)
		snprintf(extra, sizeof(extra), " + %llu reserved by %s", (unsigned long long)res,
			 area_fstype(a));
	r->nr_inodes = n + res;
	snprintf(r->inodes_how, sizeof(r->inodes_how), "%llu (auto: %llu %s x %.1f%s%s)",
		 (unsigned long long)r->nr_inodes, (unsigned long long)s->inodes,
		 s->inodes == 1 ? "entry" : "entries", a->headroom,
		 n == AUTO_MIN_INODES ? ", minimum 1024" : "", extra);
	return 0;
}

static int resolve_auto_size(const struct area_config *a, const struct area_survey *s,
			     struct area_sizing *r)
{
	char b1[24], b2[24], min[24];
	uint64_t data, size;

	if (!s || !s->valid)
		return -EINVAL;
	data = mul_ceil(s->bytes, a->headroom);
	size = data;
	if (area_is_ext(a))
		size = mul_ceil(data + fs_overhead(a, 0, r->nr_inodes), 64.0 / 63.0);
	size = round_up(size, MIB);
	if (size < AUTO_MIN_BYTES)
		size = AUTO_MIN_BYTES;
	r->size_bytes = size;
	snprintf(min, sizeof(min), ", minimum %s", units_format_size(AUTO_MIN_BYTES, b1, sizeof(b1)));
	snprintf(r->size_how, sizeof(r->size_how), "%s (auto: %s x %.1f%s%s)",
		 units_format_size(size, b1, sizeof(b1)),
		 units_format_size(s->bytes, b2, sizeof(b2)), a->headroom,
		 size == AUTO_MIN_BYTES ? min : "", area_is_ext(a) ? " + filesystem overhead" : "");
	return 0;
}

static int resolve_size(const struct area_config *a, const struct area_survey *s,
			uint64_t ram_bytes, struct area_sizing *r)
{
	char b[24];

	switch (a->size.kind) {
	case AREA_SIZE_BYTES:
		r->size_bytes = a->size.value;
		snprintf(r->size_how, sizeof(r->size_how), "%s (configured)",
			 units_format_size_exact(r->size_bytes, b, sizeof(b)));
		return 0;
	case AREA_SIZE_PERCENT:
		if (a->size.value < 1 || a->size.value > 100 || ram_bytes == 0)
			return -EINVAL;
		r->size_bytes = (ram_bytes <= UINT64_MAX / 100 ? ram_bytes * a->size.value / 100
							       : ram_bytes / 100 * a->size.value) /
				PERCENT_ALIGN * PERCENT_ALIGN;
		snprintf(r->size_how, sizeof(r->size_how), "%s (%llu%% of RAM)",
			 units_format_size_exact(r->size_bytes, b, sizeof(b)),
			 (unsigned long long)a->size.value);
		return 0;
	case AREA_SIZE_AUTO:
		return resolve_auto_size(a, s, r);
	}
	return -EINVAL;
}

static void check_fits(const struct area_config *a, const struct area_survey *s, struct area_sizing *r)
{
	uint64_t need_i = s->inodes + reserved_inodes(a);
	uint64_t o = fs_overhead(a, r->size_bytes, r->nr_inodes);
	uint64_t have_b = r->size_bytes > o ? r->size_bytes - o : 0;
	char n[24], h[24], d[24];
	size_t len = 0;

	r->fits = true;
	if (need_i > r->nr_inodes) {
		r->fits = false;
		len += snprintf(r->why, sizeof(r->why),
				"seed needs %llu inodes but the area has %llu (%s): %llu short; raise inodes= or use inodes = auto",
				(unsigned long long)need_i, (unsigned long long)r->nr_inodes,
				area_backend_facts(a->backend)->inodes_key, (unsigned long long)(need_i - r->nr_inodes));
	}
	if (s->bytes > have_b && len < sizeof(r->why)) {
		r->fits = false;
		snprintf(r->why + len, sizeof(r->why) - len,
			 "%sseed needs %s but the area has %s (size=%s): %s short; raise size= or use size = auto",
			 len ? "; " : "", units_format_size(s->bytes, n, sizeof(n)),
			 units_format_size(have_b, h, sizeof(h)), o ? " minus filesystem overhead" : "",
			 units_format_size(s->bytes - have_b, d, sizeof(d)));
	}
}

int area_size_resolve(const struct area_config *a, const struct area_survey *survey,
		      uint64_t ram_bytes, struct area_sizing *ret)
{
	/* auto sizes measure what path holds, seeded or not: an area without
	 * its seed takes over the same work (a build tree, a cache) */
	const struct area_survey *s = a->seed ? survey : NULL;
	struct area_sizing r = { 0 };
	int e;

	if (a->headroom <= 0 && (a->inodes_auto || a->size.kind == AREA_SIZE_AUTO))
		return -EINVAL;
	if (resolve_inodes(a, survey, &r) < 0 || resolve_size(a, survey, ram_bytes, &r) < 0)
		return -EINVAL;
	r.fits = true;
	if (s && s->valid)
		check_fits(a, s, &r);
	else if (s) {
		e = s->error < 0 ? -s->error : EIO;
		r.fits = false;
		snprintf(r.why, sizeof(r.why), "cannot survey the seed directory: %s", strerror(e));
	}
	*ret = r;
	return 0;
}

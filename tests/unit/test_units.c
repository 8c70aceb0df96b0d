/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "shared/units.h"
#include "shared/util.h"

#define KiB UINT64_C(1024)
#define MiB (KiB * 1024)
#define GiB (MiB * 1024)
#define TiB (GiB * 1024)
#define PiB (TiB * 1024)
#define SEC USEC_PER_SEC

/* Expects @r from parsing @s, and @want as result when r == 0; a failing
 * parse must leave the output untouched. */
static void size_is(const char *s, int r, uint64_t want)
{
	uint64_t v = 0xdeadbeef;

	int got = units_parse_size(s, &v);

	if (got != r || v != (r == 0 ? want : 0xdeadbeef))
		fail_msg("'%s': got %d, %llu; want %d, %llu", s, got, (unsigned long long)v, r,
			 (unsigned long long)want);
}

static void duration_is(const char *s, int r, uint64_t want)
{
	uint64_t v = 0xdeadbeef;

	int got = units_parse_duration(s, &v);

	if (got != r || v != (r == 0 ? want : 0xdeadbeef))
		fail_msg("'%s': got %d, %llu; want %d, %llu", s, got, (unsigned long long)v, r,
			 (unsigned long long)want);
}

static void count_is(const char *s, int r, uint64_t want)
{
	uint64_t v = 0xdeadbeef;

	int got = units_parse_count(s, &v);

	if (got != r || v != (r == 0 ? want : 0xdeadbeef))
		fail_msg("'%s': got %d, %llu; want %d, %llu", s, got, (unsigned long long)v, r,
			 (unsigned long long)want);
}

static void test_size_valid(void **state)
{
	size_is("0", 0, 0);
	size_is("4096", 0, 4096);
	size_is("512K", 0, 512 * KiB);
	size_is("512k", 0, 512 * KiB);
	size_is("12800M", 0, 12800 * MiB);
	size_is("10240M", 0, 10240 * MiB);
	size_is("1G", 0, GiB);
	size_is("2T", 0, 2 * TiB);
	size_is("3P", 0, 3 * PiB);
	size_is("1.5G", 0, GiB + GiB / 2);
	size_is("0.5K", 0, 512);
	size_is("1.001K", 0, 1025); /* 1025.024 rounded down */
	size_is("1.9999B", -EINVAL, 0);
	size_is("2KiB", 0, 2 * KiB);
	size_is("2KB", 0, 2000); /* decimal, as util-linux reads it */
	size_is("10MB", 0, 10000000);
	size_is("1.5GB", 0, 1500000000);
	size_is("2TB", 0, 2000000000000);
	size_is("10mb", -EINVAL, 0);
	size_is("100B", 0, 100);
	size_is("007", 0, 7);
	/* largest values */
	size_is("18446744073709551615", 0, UINT64_MAX);
	size_is("16383P", 0, 16383 * PiB);
	size_is("15.9999999999999999999P", -EINVAL, 0); /* 18 fraction digits at most */
	size_is("15.99999999999999999P", 0, 16 * PiB - 1); /* exact floor, not 16P */
	size_is("16383.999999999999999999P", 0, UINT64_MAX);
}

static void test_size_invalid(void **state)
{
	size_is("", -EINVAL, 0);
	size_is("-1", -EINVAL, 0);
	size_is("-5G", -EINVAL, 0);
	size_is("+5G", -EINVAL, 0);
	size_is(" 5G", -EINVAL, 0);
	size_is("5G ", -EINVAL, 0);
	size_is("5 G", -EINVAL, 0);
	size_is("G", -EINVAL, 0);
	size_is("1.5", -EINVAL, 0); /* a fraction needs a suffix */
	size_is("1.G", -EINVAL, 0);
	size_is(".5G", -EINVAL, 0);
	size_is("1..5G", -EINVAL, 0);
	size_is("5X", -EINVAL, 0);
	size_is("5GG", -EINVAL, 0);
	size_is("5Gi", -EINVAL, 0);
	size_is("5E", -EINVAL, 0);
	size_is("0x10", -EINVAL, 0);
	size_is("1e9", -EINVAL, 0);
	size_is("25%", -EINVAL, 0);
	size_is("auto", -EINVAL, 0);
	size_is("nan", -EINVAL, 0);
}

static void test_size_overflow(void **state)
{
	size_is("18446744073709551616", -ERANGE, 0);
	size_is("99999999999999999999G", -ERANGE, 0);
	size_is("16384P", -ERANGE, 0);
	size_is("17179869184G", -ERANGE, 0);
	size_is("16384.5P", -ERANGE, 0);
	/* malformed wins over overflow */
	size_is("99999999999999999999X", -EINVAL, 0);
	size_is("-99999999999999999999G", -EINVAL, 0);
}

static void test_percent(void **state)
{
	unsigned p = 77;

	assert_int_equal(units_parse_percent("25%", &p), 0);
	assert_int_equal(p, 25);
	assert_int_equal(units_parse_percent("1%", &p), 0);
	assert_int_equal(p, 1);
	assert_int_equal(units_parse_percent("100%", &p), 0);
	assert_int_equal(p, 100);
	p = 77;
	assert_int_equal(units_parse_percent("0%", &p), -ERANGE);
	assert_int_equal(units_parse_percent("101%", &p), -ERANGE);
	assert_int_equal(units_parse_percent("99999999999999999999%", &p), -ERANGE);
	assert_int_equal(units_parse_percent("25", &p), -EINVAL);
	assert_int_equal(units_parse_percent("-5%", &p), -EINVAL);
	assert_int_equal(units_parse_percent("2.5%", &p), -EINVAL);
	assert_int_equal(units_parse_percent("25 %", &p), -EINVAL);
	assert_int_equal(units_parse_percent("25%%", &p), -EINVAL);
	assert_int_equal(units_parse_percent("%", &p), -EINVAL);
	assert_int_equal(units_parse_percent("", &p), -EINVAL);
	assert_int_equal(p, 77);
}

static void test_count(void **state)
{
	count_is("300000", 0, 300000);
	count_is("0", 0, 0);
	count_is("10k", 0, 10 * 1024);
	count_is("10K", 0, 10 * 1024);
	count_is("2M", 0, 2 * MiB);
	count_is("2m", 0, 2 * MiB);
	count_is("1G", 0, GiB);
	count_is("18446744073709551615", 0, UINT64_MAX);
	count_is("18446744073709551616", -ERANGE, 0);
	count_is("17179869184G", -ERANGE, 0);
	count_is("1.5k", -EINVAL, 0);
	count_is("1T", -EINVAL, 0);
	count_is("10kB", -EINVAL, 0);
	count_is("-1", -EINVAL, 0);
	count_is(" 1", -EINVAL, 0);
	count_is("", -EINVAL, 0);
	count_is("auto", -EINVAL, 0);
	count_is("1T", -EINVAL, 0); /* a count stops at G */
	count_is("1p", -EINVAL, 0);
	count_is("2g", 0, UINT64_C(2) << 30);
}

static void test_uint(void **state)
{
	uint64_t v = 5;

	assert_int_equal(units_parse_uint("64", 64, &v), 0);
	assert_int_equal(v, 64);
	assert_int_equal(units_parse_uint("0", 64, &v), 0);
	assert_int_equal(v, 0);
	v = 5;
	assert_int_equal(units_parse_uint("65", 64, &v), -ERANGE);
	assert_int_equal(units_parse_uint("18446744073709551616", UINT64_MAX, &v), -ERANGE);
	assert_int_equal(units_parse_uint("4k", UINT64_MAX, &v), -EINVAL);
	assert_int_equal(units_parse_uint("-1", UINT64_MAX, &v), -EINVAL);
	assert_int_equal(units_parse_uint("1.0", UINT64_MAX, &v), -EINVAL);
	assert_int_equal(units_parse_uint("", UINT64_MAX, &v), -EINVAL);
	assert_int_equal(units_parse_uint("4 ", UINT64_MAX, &v), -EINVAL);
	assert_int_equal(v, 5);
	assert_int_equal(units_parse_uint("18446744073709551615", UINT64_MAX, &v), 0);
	assert_int_equal(v, UINT64_MAX);
}

static void test_duration_valid(void **state)
{
	duration_is("90s", 0, 90 * SEC);
	duration_is("90", 0, 90 * SEC);
	duration_is("0", 0, 0);
	duration_is("2min", 0, 120 * SEC);
	duration_is("2m", 0, 120 * SEC);
	duration_is("500ms", 0, 500 * USEC_PER_MSEC);
	duration_is("1h", 0, 3600 * SEC);
	duration_is("1hr", 0, 3600 * SEC);
	duration_is("2d", 0, 2 * 86400 * SEC);
	duration_is("1w", 0, 7 * 86400 * SEC);
	duration_is("10us", 0, 10);
	duration_is("10usec", 0, 10);
	duration_is("5sec", 0, 5 * SEC);
	duration_is("5 seconds", 0, 5 * SEC);
	duration_is("1 minute", 0, 60 * SEC);
	duration_is("1min 30s", 0, 90 * SEC);
	duration_is("1min30s", 0, 90 * SEC);
	duration_is("1h 1min 1s 1ms 1us", 0, 3661 * SEC + 1001);
	duration_is("1.5s", 0, 1500 * USEC_PER_MSEC);
	duration_is("0.5min", 0, 30 * SEC);
	duration_is("1.0000001s", 0, SEC); /* below a microsecond: rounded down */
	duration_is("infinity", 0, USEC_INFINITY);
}

static void test_duration_invalid(void **state)
{
	duration_is("", -EINVAL, 0);
	duration_is("soon", -EINVAL, 0);
	duration_is("-5s", -EINVAL, 0);
	duration_is("5s -1s", -EINVAL, 0);
	duration_is(" 90s", -EINVAL, 0);
	duration_is("90s ", -EINVAL, 0);
	duration_is("90 ", -EINVAL, 0);
	duration_is("90x", -EINVAL, 0);
	duration_is("5mins", -EINVAL, 0);
	duration_is("1min 30", -EINVAL, 0); /* bare number only on its own */
	duration_is("s", -EINVAL, 0);
	duration_is("1.s", -EINVAL, 0);
	duration_is("Infinity", -EINVAL, 0);
	duration_is("infinity 5s", -EINVAL, 0);
	duration_is("5s,3s", -EINVAL, 0);
}

static void test_duration_overflow(void **state)
{
	duration_is("99999999999999999999s", -ERANGE, 0);
	duration_is("18446744073709551615s", -ERANGE, 0);
	duration_is("213503982d", 0, UINT64_C(213503982) * 86400 * SEC);
	duration_is("213503983d", -ERANGE, 0);
	duration_is("213503982.5d", -ERANGE, 0); /* the fraction pushes it over */
	/* sum overflows although each part fits */
	duration_is("18446744073709551614us 2us", -ERANGE, 0);
	/* USEC_INFINITY and USEC_UNSET cannot be written as numbers */
	duration_is("18446744073709551615us", -ERANGE, 0);
	duration_is("18446744073709551614us", -ERANGE, 0);
	duration_is("18446744073709551613us", 0, UINT64_MAX - 2);
	/* malformed wins over overflow */
	duration_is("99999999999999999999s soon", -EINVAL, 0);
}

static void test_bool(void **state)
{
	static const char *const yes[] = { "yes", "YES", "true", "True", "on", "1" };
	static const char *const no[] = { "no", "No", "false", "FALSE", "off", "0" };
	static const char *const bad[] = { "", "y", "n", "2", "yes ", " no", "enable", "-1" };
	bool b;

	for (size_t i = 0; i < ARRAY_SIZE(yes); i++) {
		b = false;
		assert_int_equal(units_parse_bool(yes[i], &b), 0);
		assert_true(b);
	}
	for (size_t i = 0; i < ARRAY_SIZE(no); i++) {
		b = true;
		assert_int_equal(units_parse_bool(no[i], &b), 0);
		assert_false(b);
	}
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		b = true;
		assert_int_equal(units_parse_bool(bad[i], &b), -EINVAL);
		assert_true(b);
	}
}

static void test_factor(void **state)
{
	double d = 7.0;

	assert_int_equal(units_parse_factor("2.0", &d), 0);
	assert_true(d == 2.0);
	assert_int_equal(units_parse_factor("1.25", &d), 0);
	assert_true(d == 1.25);
	assert_int_equal(units_parse_factor("3", &d), 0);
	assert_true(d == 3.0);
	assert_int_equal(units_parse_factor("0.5", &d), 0);
	assert_true(d == 0.5);
	assert_int_equal(units_parse_factor("1000", &d), 0);
	assert_true(d == 1000.0);
	d = 7.0;
	assert_int_equal(units_parse_factor("1000.5", &d), -ERANGE);
	assert_int_equal(units_parse_factor("1001", &d), -ERANGE);
	assert_int_equal(units_parse_factor("99999999999999999999", &d), -ERANGE);
	assert_int_equal(units_parse_factor("0", &d), -EINVAL);
	assert_int_equal(units_parse_factor("0.000", &d), -EINVAL);
	assert_int_equal(units_parse_factor("-2.0", &d), -EINVAL);
	assert_int_equal(units_parse_factor("2,5", &d), -EINVAL);
	assert_int_equal(units_parse_factor("1e3", &d), -EINVAL);
	assert_int_equal(units_parse_factor("inf", &d), -EINVAL);
	assert_int_equal(units_parse_factor("nan", &d), -EINVAL);
	assert_int_equal(units_parse_factor("0x2", &d), -EINVAL);
	assert_int_equal(units_parse_factor(" 2", &d), -EINVAL);
	assert_int_equal(units_parse_factor("", &d), -EINVAL);
	assert_true(d == 7.0);
}

static void test_mode(void **state)
{
	unsigned m = 01;

	assert_int_equal(units_parse_mode("0755", &m), 0);
	assert_int_equal(m, 0755);
	assert_int_equal(units_parse_mode("755", &m), 0);
	assert_int_equal(m, 0755);
	assert_int_equal(units_parse_mode("1777", &m), 0);
	assert_int_equal(m, 01777);
	assert_int_equal(units_parse_mode("07777", &m), 0);
	assert_int_equal(m, 07777);
	assert_int_equal(units_parse_mode("0", &m), 0);
	assert_int_equal(m, 0);
	m = 01;
	assert_int_equal(units_parse_mode("10000", &m), -ERANGE);
	assert_int_equal(units_parse_mode("77777777777777777777777", &m), -ERANGE);
	assert_int_equal(units_parse_mode("0758", &m), -EINVAL);
	assert_int_equal(units_parse_mode("77777777777777777778", &m), -EINVAL);
	assert_int_equal(units_parse_mode("-755", &m), -EINVAL);
	assert_int_equal(units_parse_mode("0o755", &m), -EINVAL);
	assert_int_equal(units_parse_mode("u+rwx", &m), -EINVAL);
	assert_int_equal(units_parse_mode("", &m), -EINVAL);
	assert_int_equal(m, 01);
}

static void test_format_size(void **state)
{
	char buf[16], exact[24];

	assert_string_equal(units_format_size(0, buf, sizeof(buf)), "0");
	assert_string_equal(units_format_size(1000, buf, sizeof(buf)), "1000");
	assert_string_equal(units_format_size(4097, buf, sizeof(buf)), "4097");
	assert_string_equal(units_format_size(4096, buf, sizeof(buf)), "4K");
	assert_string_equal(units_format_size(12800 * MiB, buf, sizeof(buf)), "12800M");
	assert_string_equal(units_format_size(10 * GiB, buf, sizeof(buf)), "10G");
	assert_string_equal(units_format_size(GiB + GiB / 2, buf, sizeof(buf)), "1536M");
	assert_string_equal(units_format_size(GiB + GiB / 2 + 1, buf, sizeof(buf)), "1.5G");
	assert_string_equal(units_format_size(2 * MiB - 1, buf, sizeof(buf)), "1.9M");
	assert_string_equal(units_format_size(3 * PiB, buf, sizeof(buf)), "3P");
	/* as a mount option takes it: never rounded */
	assert_string_equal(units_format_size_exact(GiB + GiB / 2 + 1, exact, sizeof(exact)), "1610612737");
	assert_string_equal(units_format_size_exact(12800 * MiB, exact, sizeof(exact)), "12800M");
	assert_string_equal(units_format_size_exact(UINT64_MAX, exact, sizeof(exact)), "18446744073709551615");
	assert_string_equal(units_format_size(UINT64_MAX, buf, sizeof(buf)), "16383.9P");
	/* exact in K, but too long for 16 bytes: the decimal form instead */
	assert_string_equal(units_format_size(UINT64_MAX - 1023, buf, sizeof(buf)), "16383.9P");
}

/* lsblk's SIZE for the same bytes (util-linux size_to_human_string()) */
static void test_format_size_human(void **state)
{
	char buf[16];

	assert_string_equal(units_format_size_human(0, buf, sizeof(buf)), "0B");
	assert_string_equal(units_format_size_human(512, buf, sizeof(buf)), "512B");
	assert_string_equal(units_format_size_human(1023, buf, sizeof(buf)), "1023B");
	assert_string_equal(units_format_size_human(1024, buf, sizeof(buf)), "1K");
	assert_string_equal(units_format_size_human(1536, buf, sizeof(buf)), "1.5K");
	assert_string_equal(units_format_size_human(16 * MiB, buf, sizeof(buf)), "16M");
	/* the status a new user saw: 531616K and 2187234K */
	assert_string_equal(units_format_size_human(531616 * KiB, buf, sizeof(buf)), "519.2M");
	assert_string_equal(units_format_size_human(UINT64_C(2187234) * KiB, buf, sizeof(buf)), "2.1G");
	/* rounded half up from the thousandths (util-linux truncates to
	 * them first: 1.0499G is 1G), and into the next whole number */
	assert_string_equal(units_format_size_human(GiB + GiB / 20, buf, sizeof(buf)), "1G");
	assert_string_equal(units_format_size_human(GiB + GiB / 20 + MiB, buf, sizeof(buf)), "1.1G");
	assert_string_equal(units_format_size_human(2 * MiB - 1, buf, sizeof(buf)), "2M");
	assert_string_equal(units_format_size_human(GiB - 1, buf, sizeof(buf)), "1024M");
	assert_string_equal(units_format_size_human(3 * PiB, buf, sizeof(buf)), "3P");
	assert_string_equal(units_format_size_human(UINT64_MAX, buf, sizeof(buf)), "16E");
}

/* counts in words, never "(s)" */
static void test_format_count(void **state)
{
	char buf[64];

	assert_string_equal(units_format_count(0, "block device", "block devices", buf, sizeof(buf)),
			    "no block devices");
	assert_string_equal(units_format_count(1, "block device", "block devices", buf, sizeof(buf)),
			    "1 block device");
	assert_string_equal(units_format_count(2, "block device", "block devices", buf, sizeof(buf)),
			    "2 block devices");
}

static void test_format_duration(void **state)
{
	char buf[32];

	assert_string_equal(units_format_duration(USEC_INFINITY, buf, sizeof(buf)), "infinity");
	assert_string_equal(units_format_duration(0, buf, sizeof(buf)), "0");
	assert_string_equal(units_format_duration(90 * SEC, buf, sizeof(buf)), "90s");
	assert_string_equal(units_format_duration(120 * SEC, buf, sizeof(buf)), "2min");
	assert_string_equal(units_format_duration(500 * USEC_PER_MSEC, buf, sizeof(buf)), "500ms");
	assert_string_equal(units_format_duration(3600 * SEC, buf, sizeof(buf)), "1h");
	assert_string_equal(units_format_duration(2 * 86400 * SEC, buf, sizeof(buf)), "2d");
	assert_string_equal(units_format_duration(1500 * USEC_PER_MSEC, buf, sizeof(buf)), "1s 500ms");
	assert_string_equal(units_format_duration(3601 * SEC, buf, sizeof(buf)), "1h 1s");
	assert_string_equal(units_format_duration(7, buf, sizeof(buf)), "7us");
	/* all components would not fit in 32 bytes: the largest exact unit */
	assert_string_equal(units_format_duration(UINT64_MAX - 2, buf, sizeof(buf)),
			    "18446744073709551613us");
	assert_string_equal(
		units_format_duration(UINT64_C(109613136) * 86400 * SEC + 1000, buf, sizeof(buf)),
		"109613136d 1ms");
}

/* What is printed reads back to the same value. */
static void test_format_roundtrip(void **state)
{
	static const uint64_t sizes[] = { 0, 1, 1023, 1024, 4096, 12800 * MiB, 3 * TiB, 7 * PiB };
	static const uint64_t durations[] = { 1,
					      999,
					      1000,
					      1001,
					      90 * SEC,
					      1500 * USEC_PER_MSEC,
					      3601 * SEC,
					      86400 * SEC + 1,
					      400 * 86400 * SEC,
					      UINT64_C(9470575006415130822),
					      UINT64_MAX - 2 };
	char buf[32];

	for (size_t i = 0; i < ARRAY_SIZE(sizes); i++) {
		uint64_t v;

		units_format_size(sizes[i], buf, sizeof(buf));
		assert_int_equal(units_parse_size(buf, &v), 0);
		assert_int_equal(v, sizes[i]);
	}
	for (size_t i = 0; i < ARRAY_SIZE(durations); i++) {
		uint64_t v;

		units_format_duration(durations[i], buf, sizeof(buf));
		assert_int_equal(units_parse_duration(buf, &v), 0);
		assert_int_equal(v, durations[i]);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_size_valid),
		cmocka_unit_test(test_size_invalid),
		cmocka_unit_test(test_size_overflow),
		cmocka_unit_test(test_percent),
		cmocka_unit_test(test_count),
		cmocka_unit_test(test_uint),
		cmocka_unit_test(test_duration_valid),
		cmocka_unit_test(test_duration_invalid),
		cmocka_unit_test(test_duration_overflow),
		cmocka_unit_test(test_bool),
		cmocka_unit_test(test_factor),
		cmocka_unit_test(test_mode),
		cmocka_unit_test(test_format_size),
		cmocka_unit_test(test_format_size_human),
		cmocka_unit_test(test_format_count),
		cmocka_unit_test(test_format_duration),
		cmocka_unit_test(test_format_roundtrip),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

/*
 * test_fmt.c - unit tests of lib/fmt.c: every function against figures
 * worked out by hand (shown beside each check where it is not plain),
 * with the edge cases: zero, the last value of a unit and the first of the
 * next, rounding boundaries, the extremes of 64-bit integers, negative
 * figures and buffers too small.
 * Not here: where each output uses them (test_summary, test_export, e2e).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "error.h"
#include "fmt.h"

static void test_count(void **state)
{
	char b[MT_FMT_LEN];

	(void)state;
	assert_string_equal(mt_fmt_count(b, sizeof(b), 0), "0");
	assert_string_equal(mt_fmt_count(b, sizeof(b), 1), "1");
	assert_string_equal(mt_fmt_count(b, sizeof(b), 999), "999");
	assert_string_equal(mt_fmt_count(b, sizeof(b), 1000), "1,000");
	assert_string_equal(mt_fmt_count(b, sizeof(b), 1023), "1,023");
	assert_string_equal(mt_fmt_count(b, sizeof(b), 1234567), "1,234,567");
	assert_string_equal(mt_fmt_count(b, sizeof(b), UINT64_MAX), "18,446,744,073,709,551,615");
	/* the longest result fits MT_FMT_LEN: 26 characters */
	assert_true(sizeof("18,446,744,073,709,551,615") <= MT_FMT_LEN);
	/* too small a buffer: cut, always terminated */
	assert_string_equal(mt_fmt_count(b, 6, 1234567), "1,234");
	assert_string_equal(mt_fmt_count(b, 2, 1234567), "1");
	assert_string_equal(mt_fmt_count(b, 1, 1234567), "");
}

static void test_signed(void **state)
{
	char b[MT_FMT_LEN];

	(void)state;
	assert_string_equal(mt_fmt_signed(b, sizeof(b), 0, 0), "0");
	assert_string_equal(mt_fmt_signed(b, sizeof(b), 0, 1), "0");
	assert_string_equal(mt_fmt_signed(b, sizeof(b), 999, 0), "999");
	assert_string_equal(mt_fmt_signed(b, sizeof(b), 999, 1), "+999");
	assert_string_equal(mt_fmt_signed(b, sizeof(b), 1000, 0), "1,000");
	assert_string_equal(mt_fmt_signed(b, sizeof(b), -1, 0), "-1");
	assert_string_equal(mt_fmt_signed(b, sizeof(b), -1, 1), "-1");
	assert_string_equal(mt_fmt_signed(b, sizeof(b), -1234567, 0), "-1,234,567");
	assert_string_equal(mt_fmt_signed(b, sizeof(b), INT64_MAX, 1), "+9,223,372,036,854,775,807");
	assert_string_equal(mt_fmt_signed(b, sizeof(b), INT64_MIN, 0), "-9,223,372,036,854,775,808");
	assert_string_equal(mt_fmt_signed(b, 4, -12345, 0), "-12");
	assert_string_equal(mt_fmt_signed(b, 1, -12345, 0), "");
}

static void test_size(void **state)
{
	char b[MT_FMT_LEN];

	(void)state;
	assert_string_equal(mt_fmt_size(b, sizeof(b), 0), "0 B");
	assert_string_equal(mt_fmt_size(b, sizeof(b), 1), "1 B");
	assert_string_equal(mt_fmt_size(b, sizeof(b), 1023), "1023 B");
	assert_string_equal(mt_fmt_size(b, sizeof(b), 1024), "1.0 KiB");
	/* 1075 B = 1.0498 KiB, 1076 B = 1.0508 KiB */
	assert_string_equal(mt_fmt_size(b, sizeof(b), 1075), "1.0 KiB");
	assert_string_equal(mt_fmt_size(b, sizeof(b), 1076), "1.1 KiB");
	assert_string_equal(mt_fmt_size(b, sizeof(b), 1536), "1.5 KiB");
	assert_string_equal(mt_fmt_size(b, sizeof(b), 9216), "9.0 KiB");
	/* 362,624 B = 354.125 KiB (the phases sample's peak) */
	assert_string_equal(mt_fmt_size(b, sizeof(b), 362624), "354.1 KiB");
	/* 1023.95 KiB = 1,048,524.8 B: below it 1023.9 KiB, from it 1.0 MiB */
	assert_string_equal(mt_fmt_size(b, sizeof(b), 1048524), "1023.9 KiB");
	assert_string_equal(mt_fmt_size(b, sizeof(b), 1048525), "1.0 MiB");
	assert_string_equal(mt_fmt_size(b, sizeof(b), 1048575), "1.0 MiB");
	assert_string_equal(mt_fmt_size(b, sizeof(b), 1048576), "1.0 MiB");
	assert_string_equal(mt_fmt_size(b, sizeof(b), 3u << 20), "3.0 MiB");
	assert_string_equal(mt_fmt_size(b, sizeof(b), 5ull << 30), "5.0 GiB");
	assert_string_equal(mt_fmt_size(b, sizeof(b), 1ull << 40), "1.0 TiB");
	assert_string_equal(mt_fmt_size(b, sizeof(b), 1ull << 50), "1.0 PiB");
	assert_string_equal(mt_fmt_size(b, sizeof(b), (1ull << 60) - 1), "1.0 EiB");
	/* EiB is the last unit: 2^64 - 1 B = 16 EiB */
	assert_string_equal(mt_fmt_size(b, sizeof(b), UINT64_MAX), "16.0 EiB");
	assert_string_equal(mt_fmt_size(b, 4, 362624), "354");
}

static void test_size_short(void **state)
{
	char b[MT_FMT_LEN];

	(void)state;
	assert_string_equal(mt_fmt_size_short(b, sizeof(b), 0), "0 B");
	assert_string_equal(mt_fmt_size_short(b, sizeof(b), 1023), "1023 B");
	assert_string_equal(mt_fmt_size_short(b, sizeof(b), 1024), "1.00 KiB");
	assert_string_equal(mt_fmt_size_short(b, sizeof(b), 1536), "1.50 KiB");
	/* 9.995 KiB = 10,234.88 B: 9.99 KiB below, 10.0 KiB from it */
	assert_string_equal(mt_fmt_size_short(b, sizeof(b), 10234), "9.99 KiB");
	assert_string_equal(mt_fmt_size_short(b, sizeof(b), 10235), "10.0 KiB");
	/* 99.95 KiB = 102,348.8 B */
	assert_string_equal(mt_fmt_size_short(b, sizeof(b), 102348), "99.9 KiB");
	assert_string_equal(mt_fmt_size_short(b, sizeof(b), 102349), "100 KiB");
	/* the viewer's axis for the phases sample: 362,624 and 181,312 B */
	assert_string_equal(mt_fmt_size_short(b, sizeof(b), 362624), "354 KiB");
	assert_string_equal(mt_fmt_size_short(b, sizeof(b), 181312), "177 KiB");
	/* 1023.5 KiB = 1,048,064 B */
	assert_string_equal(mt_fmt_size_short(b, sizeof(b), 1048063), "1023 KiB");
	assert_string_equal(mt_fmt_size_short(b, sizeof(b), 1048064), "1.00 MiB");
	assert_string_equal(mt_fmt_size_short(b, sizeof(b), 3u << 20), "3.00 MiB");
	assert_string_equal(mt_fmt_size_short(b, sizeof(b), 5ull << 30), "5.00 GiB");
	assert_string_equal(mt_fmt_size_short(b, sizeof(b), UINT64_MAX), "16.0 EiB");
}

static void test_duration(void **state)
{
	char b[MT_FMT_LEN];

	(void)state;
	assert_string_equal(mt_fmt_duration(b, sizeof(b), 0), "0.000 ms");
	assert_string_equal(mt_fmt_duration(b, sizeof(b), 999), "0.000 ms");
	assert_string_equal(mt_fmt_duration(b, sizeof(b), 1000), "0.001 ms");
	assert_string_equal(mt_fmt_duration(b, sizeof(b), 1530000), "1.530 ms");
	/* truncated, not rounded */
	assert_string_equal(mt_fmt_duration(b, sizeof(b), 999999999), "999.999 ms");
	assert_string_equal(mt_fmt_duration(b, sizeof(b), 1000000000), "1.000 s");
	assert_string_equal(mt_fmt_duration(b, sizeof(b), 12345678901ull), "12.345 s");
	assert_string_equal(mt_fmt_duration(b, sizeof(b), UINT64_MAX), "18446744073.709 s");
}

static void test_time_short(void **state)
{
	char b[MT_FMT_LEN];

	(void)state;
	assert_string_equal(mt_fmt_time_short(b, sizeof(b), 0), "0s");
	assert_string_equal(mt_fmt_time_short(b, sizeof(b), 1), "1ns");
	assert_string_equal(mt_fmt_time_short(b, sizeof(b), 999), "999ns");
	assert_string_equal(mt_fmt_time_short(b, sizeof(b), 1000), "1us");
	assert_string_equal(mt_fmt_time_short(b, sizeof(b), 12500), "12.5us");
	assert_string_equal(mt_fmt_time_short(b, sizeof(b), 612345), "612us");
	assert_string_equal(mt_fmt_time_short(b, sizeof(b), 999499), "999us");
	/* 999.5 us would be "1e+03us" in three digits: ms from there */
	assert_string_equal(mt_fmt_time_short(b, sizeof(b), 999999), "1ms");
	assert_string_equal(mt_fmt_time_short(b, sizeof(b), 1223000), "1.223ms");
	assert_string_equal(mt_fmt_time_short(b, sizeof(b), 999949999), "999.9ms");
	assert_string_equal(mt_fmt_time_short(b, sizeof(b), 999950000), "1.000s");
	assert_string_equal(mt_fmt_time_short(b, sizeof(b), 12345000000ull), "12.345s");
	assert_string_equal(mt_fmt_time_short(b, sizeof(b), 1000000000000ull), "1000s");
	/* 2^64 - 1 ns = 18,446,744,073.7 s */
	assert_string_equal(mt_fmt_time_short(b, sizeof(b), UINT64_MAX), "18446744074s");
}

static void test_parse_size(void **state)
{
	static const struct { const char *s; uint64_t v; } good[] = {
		{ "4096", 4096 }, { "1", 1 }, { "512k", 524288 }, { "512K", 524288 },
		{ "512KiB", 524288 }, { "512kB", 524288 }, { "1m", 1048576 }, { "1MiB", 1048576 },
		{ "2g", 2147483648ull }, { "3t", 3298534883328ull }, { "100B", 100 },
	};
	static const char *const bad[] = {
		"", "k", "0", "0k", "-1", "1.5k", "512 k", "512kk", "512x", "1KiBB", "1ki",
		"99999999999999999999", "4194305t",
	};
	uint64_t v;

	(void)state;
	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		v = 0;
		assert_int_equal(mt_fmt_parse_size(good[i].s, &v), 0);
		assert_int_equal(v, good[i].v);
	}
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_int_equal(mt_fmt_parse_size(bad[i], &v), MT_E_ARG);
}

static void test_hex(void **state)
{
	static const uint8_t id[] = { 0x93, 0xac, 0x61, 0x0e, 0x00, 0xff };
	char b[16];

	(void)state;
	assert_string_equal(mt_fmt_hex(b, sizeof(b), id, sizeof(id)), "93ac610e00ff");
	assert_string_equal(mt_fmt_hex(b, sizeof(b), id, 0), "");
	/* too small: whole bytes only, NUL-terminated */
	assert_string_equal(mt_fmt_hex(b, 6, id, sizeof(id)), "93ac");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_count),
		cmocka_unit_test(test_signed),
		cmocka_unit_test(test_size),
		cmocka_unit_test(test_size_short),
		cmocka_unit_test(test_duration),
		cmocka_unit_test(test_time_short),
		cmocka_unit_test(test_parse_size),
		cmocka_unit_test(test_hex),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

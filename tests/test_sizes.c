/*
 * test_sizes.c - unit tests of lib/sizes.c: the power-of-two buckets at
 * their edges, the per-stack tally, the histogram (all stacks or a chosen
 * few) and the calls profile, with figures worked out by hand in each
 * test; and the aggregator feeding it (every allocation call, a realloc's
 * new block one call of its new size, frees nothing). Not here: printing
 * (test_report.c), the filters that choose stacks (test_tree.c).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "agg.h"
#include "error.h"
#include "replay.h"
#include "sizes.h"

static int setup(void **state)
{
	struct mt_sizes *z = mt_sizes_new();

	assert_non_null(z);
	/* without buckets there is no histogram, not an empty one */
	{
		struct mt_sizes_bucket h[MT_SIZES_NBUCKETS];

		assert_int_equal(mt_sizes_histogram(z, NULL, h), MT_E_ARG);
	}
	mt_sizes_buckets(z, 1);
	*state = z;
	return 0;
}

static int teardown(void **state)
{
	mt_sizes_free(*state);
	return 0;
}

/* Bucket k >= 1 holds 2^(k-1) .. 2^k - 1; bucket 0 the size 0. */
static void test_buckets(void **state)
{
	static const struct { uint64_t size; unsigned k; } cases[] = {
		{ 0, 0 }, { 1, 1 }, { 2, 2 }, { 3, 2 }, { 4, 3 }, { 7, 3 }, { 8, 4 },
		{ 24, 5 }, { 1023, 10 }, { 1024, 11 }, { 4095, 12 }, { 4096, 13 },
		{ 1ull << 63, 64 }, { UINT64_MAX, 64 },
	};
	uint64_t lo, hi;

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		assert_int_equal(mt_sizes_bucket_of(cases[i].size), cases[i].k);
	mt_sizes_bucket_range(0, &lo, &hi);
	assert_true(lo == 0 && hi == 0);
	mt_sizes_bucket_range(1, &lo, &hi);
	assert_true(lo == 1 && hi == 1);
	mt_sizes_bucket_range(5, &lo, &hi);
	assert_true(lo == 16 && hi == 31);
	mt_sizes_bucket_range(64, &lo, &hi);
	assert_true(lo == 1ull << 63 && hi == UINT64_MAX);
	/* every bucket starts where the previous one ended */
	for (unsigned k = 1; k < MT_SIZES_NBUCKETS; k++) {
		uint64_t plo, phi;

		mt_sizes_bucket_range(k - 1, &plo, &phi);
		mt_sizes_bucket_range(k, &lo, &hi);
		assert_true(lo == phi + 1);
		assert_int_equal(mt_sizes_bucket_of(lo), k);
		assert_int_equal(mt_sizes_bucket_of(hi), k);
	}
}

/*
 * Stack 0: 1,000 calls of 24 B and 3 of 0 B; stack 2: 16, 31, 32 and 1 MiB
 * (stack 1 never calls). Buckets: 0: 3 calls, 0 B; 16-31: 1,000 + 2
 * calls, 24,000 + 16 + 31 = 24,047 B; 32-63: 1 call, 32 B; 1 MiB - 2 MiB-1
 * (bucket 21): 1 call, 1,048,576 B.
 */
static void fill(struct mt_sizes *z)
{
	for (int i = 0; i < 1000; i++)
		assert_int_equal(mt_sizes_add(z, 0, 24, 1, 24), 0);
	for (int i = 0; i < 3; i++)
		assert_int_equal(mt_sizes_add(z, 0, 0, 1, 0), 0);
	assert_int_equal(mt_sizes_add(z, 2, 16, 1, 16), 0);
	assert_int_equal(mt_sizes_add(z, 2, 31, 1, 31), 0);
	assert_int_equal(mt_sizes_add(z, 2, 32, 1, 32), 0);
	assert_int_equal(mt_sizes_add(z, 2, 1 << 20, 1, 1 << 20), 0);
}

static void test_histogram(void **state)
{
	struct mt_sizes *z = *state;
	struct mt_sizes_bucket h[MT_SIZES_NBUCKETS];
	uint64_t calls = 0;

	fill(z);
	assert_int_equal(mt_sizes_histogram(z, NULL, h), 0);
	assert_int_equal(h[0].calls, 3);
	assert_int_equal(h[0].bytes, 0);
	assert_int_equal(h[5].calls, 1002);
	assert_int_equal(h[5].bytes, 24047);
	assert_int_equal(h[6].calls, 1);
	assert_int_equal(h[6].bytes, 32);
	assert_int_equal(h[21].calls, 1);
	assert_int_equal(h[21].bytes, 1048576);
	for (unsigned k = 0; k < MT_SIZES_NBUCKETS; k++)
		calls += h[k].calls;
	assert_int_equal(calls, 1000 + 3 + 4);
}

/* Only the stacks with a cost in `only`: stack 2 alone. */
static void test_histogram_only(void **state)
{
	struct mt_sizes *z = *state;
	struct mt_sizes_bucket h[MT_SIZES_NBUCKETS];
	struct mt_profile *only = mt_profile_new();
	const struct mt_cost c = { 0, 1, 1 };

	fill(z);
	assert_non_null(only);
	assert_int_equal(mt_profile_add(only, 2, &c), 0);
	assert_int_equal(mt_sizes_histogram(z, only, h), 0);
	assert_int_equal(h[0].calls, 0);
	assert_int_equal(h[5].calls, 2);
	assert_int_equal(h[5].bytes, 47);
	assert_int_equal(h[6].calls, 1);
	assert_int_equal(h[21].calls, 1);
	mt_profile_free(only);
}

/* Per stack: bytes requested, and calls as blocks and allocs. */
static void test_calls(void **state)
{
	struct mt_sizes *z = *state;
	struct mt_profile *p;
	struct mt_cost c;

	fill(z);
	p = mt_sizes_calls(z);
	assert_non_null(p);
	c = mt_profile_get(p, 0);
	assert_true(c.bytes == 24000 && c.blocks == 1003 && c.allocs == 1003);
	c = mt_profile_get(p, 1);
	assert_true(c.bytes == 0 && c.blocks == 0 && c.allocs == 0);
	c = mt_profile_get(p, 2);
	assert_true(c.bytes == 16 + 31 + 32 + 1048576 && c.blocks == 4 && c.allocs == 4);
	c = mt_profile_total(p);
	assert_true(c.bytes == 24000 + 1048655 && c.blocks == 1007);
	mt_profile_free(p);
	/* cleared: nothing left */
	mt_sizes_clear(z);
	p = mt_sizes_calls(z);
	assert_non_null(p);
	c = mt_profile_total(p);
	assert_true(c.bytes == 0 && c.blocks == 0);
	mt_profile_free(p);
}

/*
 * Through the aggregator: malloc 100 (stack 0), realloc it to 300 (stack
 * 1: one call of 300), free it, malloc 0 (stack 0): 3 calls, 400 B, the
 * same count as the run's allocations; a new request starts over.
 */
static void test_agg_feeds(void **state)
{
	struct mt_agg *a = mt_agg_new();
	struct mt_replay_ops ops;
	struct mt_event ev = { .count = 1 };
	struct mt_end e = { 0 };
	struct mt_sizes_bucket h[MT_SIZES_NBUCKETS];
	const struct mt_agg_stats *st;

	(void)state;
	assert_non_null(a);
	mt_agg_ops(&ops);
	mt_agg_size_buckets(a, 1);
	assert_int_equal(mt_agg_request(a, NULL, 0, 0), 0);
	ev.addr = 0x10;
	ev.size = ev.asked = 100;
	assert_int_equal(ops.on_alloc(a, &ev), 0);
	ev.seq = 1;
	ev.realloc = 1;
	assert_int_equal(ops.on_free(a, &ev), 0);
	ev.addr = 0x20;
	ev.size = ev.asked = 300;
	ev.stack = 1;
	assert_int_equal(ops.on_alloc(a, &ev), 0);
	ev.seq = 2;
	ev.realloc = 0;
	assert_int_equal(ops.on_free(a, &ev), 0);
	ev.seq = 3;
	ev.addr = 0x30;
	ev.size = ev.asked = 0;
	ev.stack = 0;
	assert_int_equal(ops.on_alloc(a, &ev), 0);
	ops.on_end(a, &e);
	st = mt_agg_stats(a);
	assert_non_null(st->sizes);
	assert_int_equal(st->allocations, 3);
	assert_int_equal(mt_sizes_histogram(st->sizes, NULL, h), 0);
	assert_true(h[0].calls == 1 && h[0].bytes == 0);
	assert_true(h[7].calls == 1 && h[7].bytes == 100);    /* 64 - 127 */
	assert_true(h[9].calls == 1 && h[9].bytes == 300);    /* 256 - 511 */
	assert_int_equal(mt_agg_request(a, NULL, 0, 0), 0);
	assert_int_equal(mt_sizes_histogram(mt_agg_stats(a)->sizes, NULL, h), 0);
	assert_int_equal(h[7].calls, 0);
	mt_agg_free(a);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_buckets),
		cmocka_unit_test_setup_teardown(test_histogram, setup, teardown),
		cmocka_unit_test_setup_teardown(test_histogram_only, setup, teardown),
		cmocka_unit_test_setup_teardown(test_calls, setup, teardown),
		cmocka_unit_test(test_agg_feeds),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

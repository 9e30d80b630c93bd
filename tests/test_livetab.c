/*
 * test_livetab.c - the live-block table (lib/livetab.h) against a plain
 * array that knows every block: random puts and takes over addresses that
 * crowd a few groups (long probe runs, wrap-around at the table's end,
 * backward shifts), growth, reservation, clearing and address 0.
 *
 * Not for: the replay's packing of values (test_replay.c).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "livetab.h"
#include "testlog.c"

static uint64_t rng_state = 88172645463325252ull;

static uint64_t rnd(void)
{
	return tl_rand(&rng_state);
}

static void test_basic(void **state)
{
	struct mt_livetab t;
	uint64_t v = 0;

	(void)state;
	mt_livetab_init(&t, NULL, NULL);
	assert_int_equal(mt_livetab_count(&t), 0);
	assert_int_equal(mt_livetab_take(&t, 0x1000, &v), 0);
	assert_int_equal(mt_livetab_put(&t, 0x1000, 7, &v), 0);
	assert_int_equal(mt_livetab_put(&t, 0x1000, 8, &v), 1);
	assert_int_equal(v, 7);
	assert_int_equal(mt_livetab_count(&t), 1);
	/* address 0 is a block like any other, kept beside the slots */
	assert_int_equal(mt_livetab_put(&t, 0, 9, &v), 0);
	assert_int_equal(mt_livetab_count(&t), 2);
	assert_int_equal(mt_livetab_put(&t, 0, 10, &v), 1);
	assert_int_equal(v, 9);
	assert_int_equal(mt_livetab_take(&t, 0, &v), 1);
	assert_int_equal(v, 10);
	assert_int_equal(mt_livetab_take(&t, 0, &v), 0);
	assert_int_equal(mt_livetab_take(&t, 0x1000, &v), 1);
	assert_int_equal(v, 8);
	assert_int_equal(mt_livetab_count(&t), 0);
	mt_livetab_fini(&t);
}

/* Every block the reference holds is found with its value; no other is. */
#define N 20000
static void test_random_against_reference(void **state)
{
	static uint64_t addr[N], val[N];
	static int live[N];
	struct mt_livetab t;
	size_t nlive = 0;
	uint64_t v = 0;

	(void)state;
	mt_livetab_init(&t, NULL, NULL);
	for (int round = 0; round < 400000; round++) {
		size_t i = rnd() % N;

		/* a block per i, its address fixed by i: whole 1 KiB regions
		 * of neighbours (full groups that overflow into the next),
		 * half of them near the top of the hash range */
		addr[i] = ((uint64_t)(i >> 6) << 10) + ((i & 63) << 4) + 16 +
			  ((i & 1) ? 0x7fff00000000ull : 0);
		if (live[i]) {
			if (rnd() % 3) {
				assert_int_equal(mt_livetab_take(&t, addr[i], &v), 1);
				assert_int_equal(v, val[i]);
				live[i] = 0;
				nlive--;
			} else {
				uint64_t nv = rnd();

				assert_int_equal(mt_livetab_put(&t, addr[i], nv, &v), 1);
				assert_int_equal(v, val[i]);
				val[i] = nv;
			}
		} else {
			val[i] = rnd();
			assert_int_equal(mt_livetab_put(&t, addr[i], val[i], &v), 0);
			live[i] = 1;
			nlive++;
		}
		assert_int_equal(mt_livetab_count(&t), nlive);
		if (round % 50000 == 0)
			for (size_t k = 0; k < N; k++)
				if (live[k]) {
					/* found, and found again after a put back */
					assert_int_equal(mt_livetab_take(&t, addr[k], &v), 1);
					assert_int_equal(v, val[k]);
					assert_int_equal(mt_livetab_put(&t, addr[k], v, &v), 0);
				}
	}
	for (size_t k = 0; k < N; k++)
		if (live[k]) {
			assert_int_equal(mt_livetab_take(&t, addr[k], &v), 1);
			assert_int_equal(v, val[k]);
		}
	assert_int_equal(mt_livetab_count(&t), 0);
	mt_livetab_fini(&t);
}

/* Reserved room is not rehashed on the way; clear keeps the slots. */
static void test_reserve_and_clear(void **state)
{
	struct mt_livetab t;
	struct mt_livetab_slot *slots;
	uint64_t v = 0;

	(void)state;
	mt_livetab_init(&t, NULL, NULL);
	assert_int_equal(mt_livetab_reserve(&t, 100000), 0);
	slots = t.slots;
	assert_true(t.cap * 7 >= 100001 * 10);
	for (uint64_t i = 1; i <= 100000; i++)
		assert_int_equal(mt_livetab_put(&t, i * 48, i, &v), 0);
	assert_ptr_equal(t.slots, slots);
	assert_int_equal(mt_livetab_count(&t), 100000);
	mt_livetab_clear(&t);
	assert_int_equal(mt_livetab_count(&t), 0);
	assert_ptr_equal(t.slots, slots);
	assert_int_equal(mt_livetab_take(&t, 48, &v), 0);
	for (size_t i = 0; i < t.cap; i++)
		assert_int_equal(t.slots[i].addr, 0);
	/* a hint past 2^25 blocks is capped */
	assert_int_equal(mt_livetab_reserve(&t, UINT64_MAX), 0);
	assert_true(t.cap <= (size_t)1 << 26);
	mt_livetab_fini(&t);
	assert_int_equal(t.cap, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_basic),
		cmocka_unit_test(test_random_against_reference),
		cmocka_unit_test(test_reserve_and_clear),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

/*
 * test_livetab.c - the live-block table (lib/livetab.h) against a plain
 * array that knows every block: random puts and takes, addresses that
 * crowd the last homes (runs into the tail, which grows), growth in place
 * (also when its memory fails), reservation, clearing, odd addresses (0
 * and from 2^48 up), wide records, and the address order the leak scan
 * reads (sort, then unsort).
 *
 * Not for: the replay's packing of values (test_replay.c), the recorder's
 * (its e2e tests).
 */
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

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
	uint32_t v = 0;

	(void)state;
	mt_livetab_init(&t, NULL);
	assert_int_equal(mt_livetab_count(&t), 0);
	assert_int_equal(mt_livetab_take(&t, 0x1000, &v), 0);
	assert_int_equal(mt_livetab_get(&t, 0x1000, &v), 0);
	assert_int_equal(mt_livetab_put(&t, 0x1000, 7, &v), 0);
	assert_int_equal(mt_livetab_put(&t, 0x1000, 8, &v), 1);
	assert_int_equal(v, 7);
	assert_int_equal(mt_livetab_get(&t, 0x1000, &v), 1);
	assert_int_equal(v, 8);
	assert_int_equal(mt_livetab_count(&t), 1);
	/* odd addresses are blocks like any other, kept beside the slots */
	uint64_t odd[] = { 0, 1ull << 48, UINT64_MAX, 0x7fffffffffff0000ull };
	for (size_t i = 0; i < 4; i++) {
		assert_int_equal(mt_livetab_put(&t, odd[i], 9 + (uint32_t)i, &v), 0);
		assert_int_equal(mt_livetab_count(&t), 2 + i);
	}
	assert_int_equal(mt_livetab_put(&t, 0, 10, &v), 1);
	assert_int_equal(v, 9);
	assert_int_equal(mt_livetab_take(&t, 0, &v), 1);
	assert_int_equal(v, 10);
	assert_int_equal(mt_livetab_take(&t, 0, &v), 0);
	assert_int_equal(mt_livetab_get(&t, UINT64_MAX, &v), 1);
	assert_int_equal(v, 11);
	for (size_t i = 1; i < 4; i++)
		assert_int_equal(mt_livetab_take(&t, odd[i], &v), 1);
	/* the full 32 bits of a value */
	assert_int_equal(mt_livetab_put(&t, 0xfffffffffff0ull, UINT32_MAX, &v), 0);
	assert_int_equal(mt_livetab_take(&t, 0xfffffffffff0ull, &v), 1);
	assert_int_equal(v, UINT32_MAX);
	assert_int_equal(mt_livetab_take(&t, 0x1000, &v), 1);
	assert_int_equal(v, 8);
	assert_int_equal(mt_livetab_count(&t), 0);
	mt_livetab_fini(&t);
}

/* An address below 2^48 whose home is in the last 64th of any table: the
 * start of a page that the hash puts there (mt_livetab_home: the address
 * within the page only moves the home further on). */
static uint64_t crowded(void)
{
	for (;;) {
		uint64_t a = rnd() & MT_LIVETAB_ADDR_MASK & ~4095ull;

		if (a && (a >> 12) * 0x9E3779B97F4A7C15ull >= ~0ull - (~0ull >> 6) &&
		    mt_livetab_home(a, 4096) >= 4096 - 64 && mt_livetab_home(a, 1 << 20) >= (1 << 20) - (1 << 14))
			return a;
	}
}

/* Every block the reference holds is found with its value; no other is. */
#define N 20000
static uint64_t addr[N];
static uint32_t val[N];
static int live[N];

static void check_all(struct mt_livetab *t)
{
	size_t nlive = 0;
	uint32_t v = 0;

	for (size_t k = 0; k < N; k++) {
		assert_int_equal(mt_livetab_get(t, addr[k], &v), live[k]);
		if (live[k]) {
			assert_int_equal(v, val[k]);
			nlive++;
		}
	}
	assert_int_equal(mt_livetab_count(t), nlive);
}

static void test_random_against_reference(void **state)
{
	struct mt_livetab t;
	size_t nlive = 0;
	uint32_t v = 0;

	(void)state;
	memset(live, 0, sizeof(live));
	/* neighbours, blocks that crowd the last homes, odd addresses */
	for (size_t i = 0; i < N; i++)
		addr[i] = i % 5 == 0 ? crowded() : i % 97 == 0 ? (rnd() | 1ull << 48)
			: 0x555555550000ull + i * 48;
	mt_livetab_init(&t, NULL);
	for (int round = 0; round < 400000; round++) {
		size_t i = rnd() % N;

		if (live[i]) {
			if (rnd() % 3) {
				assert_int_equal(mt_livetab_take(&t, addr[i], &v), 1);
				assert_int_equal(v, val[i]);
				live[i] = 0;
				nlive--;
			} else {
				uint32_t nv = (uint32_t)rnd();

				assert_int_equal(mt_livetab_put(&t, addr[i], nv, &v), 1);
				assert_int_equal(v, val[i]);
				val[i] = nv;
			}
		} else {
			val[i] = (uint32_t)rnd();
			assert_int_equal(mt_livetab_put(&t, addr[i], val[i], &v), 0);
			live[i] = 1;
			nlive++;
		}
		assert_int_equal(mt_livetab_count(&t), nlive);
		if (round % 50000 == 0)
			check_all(&t);
	}
	check_all(&t);
	/* the crowded homes' runs went past the first tail, which grew; a
	 * probe never leaves the table: its last slot is empty */
	assert_true(t.n > t.cap + 64);
	assert_int_equal(mt_livetab_addr_at(&t, t.n - 1), 0);
	mt_livetab_fini(&t);
}

/* Growth keeps every block, and a table past 4 MiB stays 64-80 % full. */
static void test_growth(void **state)
{
	struct mt_livetab t;
	uint32_t v = 0;
	size_t n = 2000000;

	(void)state;
	mt_livetab_init(&t, NULL);
	for (size_t i = 1; i <= n; i++) {
		assert_int_equal(mt_livetab_put(&t, i * 32, (uint32_t)i, &v), 0);
		if (t.cap * MT_LIVETAB_SLOT > (5u << 20))
			assert_true(t.len * 100 >= t.cap * 63 && t.len * 100 <= t.cap * 80);
	}
	/* at most 16 bytes a block at the peak */
	assert_true(mt_livetab_bytes(&t) <= 16 * n);
	for (size_t i = 1; i <= n; i++) {
		assert_int_equal(mt_livetab_get(&t, i * 32, &v), 1);
		assert_int_equal(v, (uint32_t)i);
	}
	mt_livetab_fini(&t);
}

/* Memory that fails from the nth request on (resize or alloc): a growth
 * asks for its bitmap, then for the slots. */
static int mem_left;

static void *fail_alloc(size_t n)
{
	return mem_left-- > 0 ? calloc(1, n) : NULL;
}

static void *fail_resize(void *p, size_t n, size_t m)
{
	void *q;

	if (mem_left-- <= 0 || !(q = realloc(p, m)))
		return NULL;
	memset((char *)q + n, 0, m - n);
	return q;
}

static void fail_release(void *p, size_t n)
{
	(void)n;
	free(p);
}

static const struct mt_livetab_mem failing = { fail_alloc, fail_resize, fail_release, 0 };

/* A growth whose memory cannot be had leaves the table as it was. */
static void test_growth_fails(void **state)
{
	struct mt_livetab t;
	uint32_t v = 0;
	uint64_t i;

	(void)state;
	for (int left = 1; left <= 2; left++) {
		mem_left = 1000000;
		mt_livetab_init(&t, &failing);
		for (i = 1; t.len + 1 < t.grow_at || !t.cap; i++)
			assert_int_equal(mt_livetab_put(&t, i * 64, (uint32_t)i, &v), 0);
		mem_left = left - 1;
		assert_int_equal(mt_livetab_put(&t, i * 64, (uint32_t)i, &v), 0);
		assert_int_equal(mt_livetab_put(&t, (i + 1) * 64, 1, &v), -1);
		for (uint64_t k = 1; k <= i; k++) {
			assert_int_equal(mt_livetab_get(&t, k * 64, &v), 1);
			assert_int_equal(v, (uint32_t)k);
		}
		assert_int_equal(mt_livetab_get(&t, (i + 1) * 64, &v), 0);
		mem_left = 1000000;
		assert_int_equal(mt_livetab_put(&t, (i + 1) * 64, 1, &v), 0);
		mt_livetab_fini(&t);
	}
}

/* Reserved room is not rehashed on the way; clear keeps the slots. */
static void test_reserve_and_clear(void **state)
{
	struct mt_livetab t;
	unsigned char *slots;
	uint32_t v = 0, idx;
	struct mt_livetab_wide w = { 1, 2, 3 };

	(void)state;
	mt_livetab_init(&t, NULL);
	assert_int_equal(mt_livetab_reserve(&t, 100000), 0);
	slots = t.slots;
	assert_true(t.grow_at > 100000);
	for (uint64_t i = 1; i <= 100000; i++)
		assert_int_equal(mt_livetab_put(&t, i * 48, (uint32_t)i, &v), 0);
	assert_ptr_equal(t.slots, slots);
	assert_int_equal(mt_livetab_put(&t, 0, 1, &v), 0);
	assert_int_equal(mt_livetab_wide_new(&t, &w, &idx), 0);
	assert_int_equal(mt_livetab_count(&t), 100001);
	mt_livetab_clear(&t);
	assert_int_equal(mt_livetab_count(&t), 0);
	assert_int_equal(t.nwide, 0);
	assert_ptr_equal(t.slots, slots);
	assert_int_equal(mt_livetab_take(&t, 48, &v), 0);
	assert_int_equal(mt_livetab_take(&t, 0, &v), 0);
	for (size_t i = 0; i < t.n; i++)
		assert_int_equal(mt_livetab_addr_at(&t, i), 0);
	/* a hint past 2^25 blocks is capped */
	assert_int_equal(mt_livetab_reserve(&t, UINT64_MAX), 0);
	assert_true(t.cap <= (size_t)1 << 26);
	mt_livetab_fini(&t);
	assert_int_equal(t.cap, 0);
}

/* Wide records: kept, read, released and taken again. */
static void test_wide(void **state)
{
	struct mt_livetab t;
	uint32_t idx[300];

	(void)state;
	mt_livetab_init(&t, NULL);
	for (uint32_t i = 0; i < 300; i++) {
		struct mt_livetab_wide w = { (uint64_t)i << 40, i, i + 1 };

		assert_int_equal(mt_livetab_wide_new(&t, &w, &idx[i]), 0);
		assert_true(idx[i] < MT_LIVETAB_WIDE);
	}
	for (uint32_t i = 0; i < 300; i++) {
		const struct mt_livetab_wide *w = mt_livetab_wide_get(&t, idx[i]);

		assert_true(w->size == (uint64_t)i << 40 && w->stack == i && w->thread == i + 1);
	}
	mt_livetab_wide_free(&t, idx[7]);
	mt_livetab_wide_free(&t, idx[9]);
	struct mt_livetab_wide w = { 5, 6, 7 };
	uint32_t a, b, c;
	assert_int_equal(mt_livetab_wide_new(&t, &w, &a), 0);
	assert_int_equal(mt_livetab_wide_new(&t, &w, &b), 0);
	assert_int_equal(mt_livetab_wide_new(&t, &w, &c), 0);
	/* the released ones first */
	assert_true((a == idx[9] && b == idx[7]) && c == 300);
	assert_int_equal(mt_livetab_wide_get(&t, a)->size, 5);
	mt_livetab_fini(&t);
}

static int seen_sum(void *ctx, uint64_t a, uint32_t v)
{
	uint64_t *sum = ctx;

	*sum += a ^ v;
	return 0;
}

/* Sorted, the slots list the blocks by address; unsorted, all are found
 * (put back in order of home, or, without memory for that, rehashed). */
static void sort_and_back(int memory)
{
	struct mt_livetab t;
	uint32_t v = 0;
	uint64_t sum = 0, sum2 = 0;

	memset(live, 0, sizeof(live));
	mem_left = 1000000;
	mt_livetab_init(&t, &failing);
	for (size_t i = 0; i < N; i++) {
		/* the heap's spread: small and large gaps, some in one 16 bytes */
		addr[i] = i % 3 ? 0x555555550000ull + (rnd() % 4000000) * 16 + (i % 7 == 0 ? 8 : 0)
			: 0x7f0000000000ull + (rnd() & 0xffffffffff0ull);
		val[i] = (uint32_t)rnd();
		assert_true(mt_livetab_put(&t, addr[i], val[i], &v) >= 0);
		live[i] = 1;
	}
	/* each address's latest value wins (a repeat replaced the earlier) */
	for (size_t i = 0; i < N; i++)
		for (size_t k = i + 1; k < N && live[i]; k++)
			if (live[k] && addr[k] == addr[i])
				live[i] = 0;
	(void)mt_livetab_each(&t, seen_sum, &sum);
	size_t n = t.len;
	assert_int_equal(mt_livetab_sort(&t, 1), 0);
	for (size_t i = 0; i < n; i++) {
		sum2 += mt_livetab_addr_at(&t, i) ^ mt_livetab_val_at(&t, i);
		if (i)
			assert_true(mt_livetab_addr_at(&t, i - 1) < mt_livetab_addr_at(&t, i));
	}
	assert_true(sum == sum2);
	assert_int_equal(mt_livetab_addr_at(&t, n), 0);
	mem_left = memory ? 1000000 : 0;
	assert_int_equal(mt_livetab_unsort(&t), 0);
	size_t nlive = 0;
	for (size_t i = 0; i < N; i++)
		if (live[i]) {
			assert_int_equal(mt_livetab_get(&t, addr[i], &v), 1);
			assert_int_equal(v, val[i]);
			nlive++;
		}
	assert_int_equal(mt_livetab_count(&t), nlive);
	/* and the table goes on as before */
	mem_left = 1000000;
	for (size_t i = 0; i < N; i++)
		if (live[i])
			assert_int_equal(mt_livetab_take(&t, addr[i], &v), 1);
	assert_int_equal(mt_livetab_count(&t), 0);
	for (size_t i = 0; i < t.n; i++)
		assert_int_equal(mt_livetab_addr_at(&t, i), 0);
	mt_livetab_fini(&t);
}

static void test_sort(void **state)
{
	(void)state;
	sort_and_back(1);
	sort_and_back(0);
}

/*
 * While a growth moves blocks the table says so (moving), and only then:
 * the recorder's drainer killed meanwhile leaves a table a reader must
 * not trust (recorder/core.c, dr_spare). Checked from inside the growth,
 * in its memory's resize, and around sorts.
 */
static struct mt_livetab *watched;
static int resizes_moving, resizes;

static void *watch_alloc(size_t n)
{
	return calloc(1, n);
}

static void *watch_resize(void *p, size_t n, size_t m)
{
	void *q = realloc(p, m);

	resizes++;
	resizes_moving += watched->moving;
	if (q)
		memset((char *)q + n, 0, m - n);
	return q;
}

static void watch_release(void *p, size_t n)
{
	(void)n;
	free(p);
}

static const struct mt_livetab_mem watching = { watch_alloc, watch_resize, watch_release, 0 };

static void test_moving(void **state)
{
	struct mt_livetab t;
	uint32_t v = 0;

	(void)state;
	watched = &t;
	mt_livetab_init(&t, &watching);
	for (uint64_t i = 1; i <= 100000; i++) {
		assert_int_equal(mt_livetab_put(&t, i * 48, (uint32_t)i, &v), 0);
		assert_int_equal(t.moving, 0);
	}
	assert_true(resizes > 3);
	assert_int_equal(resizes_moving, resizes);
	assert_int_equal(mt_livetab_sort(&t, 1), 0);
	assert_int_equal(t.moving, 0);
	assert_int_equal(mt_livetab_unsort(&t), 0);
	assert_int_equal(t.moving, 0);
	for (uint64_t i = 1; i <= 100000; i++) {
		assert_int_equal(mt_livetab_get(&t, i * 48, &v), 1);
		assert_int_equal(v, (uint32_t)i);
	}
	mt_livetab_fini(&t);
}

/*
 * The table in memory shared with a child that puts and takes on it, as
 * the recorder's drainer does in memory shared with its spare, and that
 * is SIGKILLed at a random moment, 300 times. Before each change it
 * journals what the change needs to be undone (as core.c's journal_begin
 * and journal_note) and after it counts it done (the writer's count,
 * there). The parent
 * then does what the spare does (core.c, emit_undo): a change not counted
 * is mended (mt_livetab_mend) and undone. Then the table must hold
 * exactly the blocks of the changes counted, each once, with its value,
 * and count them. The addresses all have their homes in 16 slots, so that
 * their run is hundreds of slots long and a take's backward shift moves
 * most of it: many kills land inside one.
 */
#define KN 600
struct kshared {
	struct mt_livetab t;
	struct {
		uint64_t op;            /* UINT64_MAX while being written */
		uint64_t addr;
		size_t len, oddlen;
		uint32_t val;
		int found, is_free;
	} j;
	uint64_t done;
	size_t bump;
	unsigned char arena[];
};
#define KARENA (8u << 20)
static struct kshared *ks;

static void *ks_alloc(size_t n)
{
	void *p = ks->arena + ks->bump;

	ks->bump += (n + 63) & ~(size_t)63;
	assert_true(ks->bump <= KARENA);
	return p;
}

static void *ks_resize(void *p, size_t n, size_t m)
{
	void *q = ks_alloc(m);

	memcpy(q, p, n);
	return q;
}

static void ks_release(void *p, size_t n)
{
	(void)p;
	(void)n;
}

static const struct mt_livetab_mem ks_mem = { ks_alloc, ks_resize, ks_release, 0 };

static uint64_t kpool[KN];
static int klive[KN];
static uint32_t kval[KN];

/* Change i: the pool's block it picks goes in if out, out if in. */
static size_t kpick(uint64_t i)
{
	uint64_t h = (i + 1) * 0x9E3779B97F4A7C15ull;

	return (size_t)((h ^ (h >> 29)) % KN);
}

static void kapply(uint64_t i)
{
	size_t k = kpick(i);

	klive[k] = !klive[k];
	kval[k] = (uint32_t)(i * 2654435761u) | 1;
}

static void __attribute__((noreturn)) kchild(void)
{
	uint32_t v;

	for (uint64_t i = ks->done;; i++) {
		size_t k = kpick(i);

		ks->j.op = UINT64_MAX;
		__asm__ volatile("" ::: "memory");
		ks->j.addr = kpool[k];
		ks->j.is_free = klive[k];
		ks->j.found = mt_livetab_get(&ks->t, kpool[k], &ks->j.val);
		ks->j.len = ks->t.len;
		ks->j.oddlen = ks->t.oddlen;
		__asm__ volatile("" ::: "memory");
		ks->j.op = i;
		__asm__ volatile("" ::: "memory");
		if (klive[k])
			(void)mt_livetab_take(&ks->t, kpool[k], &v);
		else
			(void)mt_livetab_put(&ks->t, kpool[k], (uint32_t)(i * 2654435761u) | 1, &v);
		kapply(i);
		__asm__ volatile("" ::: "memory");
		ks->done = i + 1;
		__asm__ volatile("" ::: "memory");
	}
}

/* What the spare does with a change not counted (core.c, emit_undo). */
static int kundo(void)
{
	struct mt_livetab *t = &ks->t;
	uint32_t v = 0;
	int mended = 0, now;

	if (ks->j.op == UINT64_MAX || ks->j.op != ks->done)
		return 0;
	if (ks->j.is_free && ks->j.found)
		mended = mt_livetab_mend(t, ks->j.addr);
	now = mt_livetab_get(t, ks->j.addr, &v);
	if (ks->j.is_free && ks->j.found && !now)
		assert_int_equal(mt_livetab_put(t, ks->j.addr, ks->j.val, &v), 0);
	else if (!ks->j.is_free && !ks->j.found && now)
		assert_int_equal(mt_livetab_take(t, ks->j.addr, &v), 1);
	t->len = ks->j.len;
	t->oddlen = ks->j.oddlen;
	return mended;
}

static int addr_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static void test_killed_owner(void **state)
{
	static uint64_t seen[KN + 1];
	uint64_t model_done = 0;
	int mended = 0;
	uint32_t v = 0;

	(void)state;
	ks = mmap(NULL, sizeof(*ks) + KARENA, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
		  -1, 0);
	assert_true(ks != MAP_FAILED);
	mt_livetab_init(&ks->t, &ks_mem);
	assert_int_equal(mt_livetab_reserve(&ks->t, 4 * KN), 0);
	size_t cap = ks->t.cap;
	for (size_t k = 0; k < KN; k++) {
		uint64_t a;
		do
			a = (rnd() & MT_LIVETAB_ADDR_MASK & ~15ull) | 16;
		while (mt_livetab_home(a, cap) < cap / 3 || mt_livetab_home(a, cap) >= cap / 3 + 16);
		kpool[k] = a;
		for (size_t m = 0; m < k; m++)
			if (kpool[m] == a)
				k--;    /* drawn twice: again */
	}
	for (int round = 0; round < 300; round++) {
		pid_t pid = fork();
		assert_true(pid >= 0);
		if (pid == 0)
			kchild();
		struct timespec d = { 0, (long)(rnd() % 3000000) };
		nanosleep(&d, NULL);
		kill(pid, SIGKILL);
		assert_int_equal(waitpid(pid, NULL, 0), pid);
		assert_int_equal(ks->t.moving, 0);
		assert_int_equal(ks->t.cap, cap);       /* reserved: no growth */
		mended += kundo();
		for (; model_done < ks->done; model_done++)
			kapply(model_done);
		/* the blocks of the changes counted, each with its value */
		size_t nlive = 0, ns = 0;
		for (size_t k = 0; k < KN; k++) {
			assert_int_equal(mt_livetab_get(&ks->t, kpool[k], &v), klive[k]);
			if (klive[k]) {
				assert_int_equal(v, kval[k]);
				nlive++;
			}
		}
		assert_int_equal(mt_livetab_count(&ks->t), nlive);
		/* each in one slot, and nothing else */
		for (size_t i = 0; i < ks->t.n; i++) {
			uint64_t a = mt_livetab_lo(ks->t.slots + i * MT_LIVETAB_SLOT) & MT_LIVETAB_ADDR_MASK;
			if (a) {
				assert_true(ns < nlive);
				seen[ns++] = a;
			}
		}
		assert_int_equal(ns, nlive);
		qsort(seen, ns, sizeof(*seen), addr_cmp);
		for (size_t i = 1; i < ns; i++)
			assert_true(seen[i] != seen[i - 1]);
	}
	print_message("  300 kills, %llu changes, %d shifts mended\n",
		      (unsigned long long)ks->done, mended);
	/* most kills land in a take's shift (the run is hundreds of slots) */
	assert_true(mended > 0);
	munmap(ks, sizeof(*ks) + KARENA);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_basic),
		cmocka_unit_test(test_random_against_reference),
		cmocka_unit_test(test_growth),
		cmocka_unit_test(test_growth_fails),
		cmocka_unit_test(test_reserve_and_clear),
		cmocka_unit_test(test_wide),
		cmocka_unit_test(test_sort),
		cmocka_unit_test(test_moving),
		cmocka_unit_test(test_killed_owner),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

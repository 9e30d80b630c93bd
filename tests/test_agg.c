/*
 * test_agg.c - unit tests of lib/agg.c: the aggregator's callbacks are fed
 * synthetic events, in the replay's order, and every figure is checked
 * against hand-derived values or against a brute-force recount from the
 * blocks' lifetimes. Not here: the replay itself (test_replay.c).
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

struct fixture {
	struct mt_agg *a;
	struct mt_replay_ops ops;
	uint64_t seq;
	uint64_t time;
};

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));

	assert_non_null(f);
	f->a = mt_agg_new();
	assert_non_null(f->a);
	mt_agg_ops(&f->ops);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	mt_agg_free(f->a);
	free(f);
	return 0;
}

/* Feeds one allocation; returns its seq. */
static uint64_t ev_alloc(struct fixture *f, uint64_t addr, uint64_t size, uint32_t stack,
			 uint32_t thread)
{
	struct mt_event ev = { .count = 1 };

	ev.seq = f->seq++;
	ev.time_ns = f->time += 10;
	ev.addr = addr;
	ev.size = ev.asked = size;
	ev.stack = stack;
	ev.thread = thread;
	assert_int_equal(f->ops.on_alloc(f->a, &ev), 0);
	return ev.seq;
}

static void ev_free(struct fixture *f, uint64_t addr, uint64_t size, uint32_t stack,
		    uint32_t thread)
{
	struct mt_event ev = { .count = 1 };

	ev.seq = f->seq++;
	ev.time_ns = f->time += 10;
	ev.addr = addr;
	ev.size = ev.asked = size;
	ev.stack = stack;
	ev.thread = thread;
	assert_int_equal(f->ops.on_free(f->a, &ev), 0);
}

/* realloc: the free half then the alloc half, one seq. Returns the seq. */
static uint64_t ev_realloc(struct fixture *f, uint64_t old, uint64_t old_size,
			   uint32_t old_stack, uint64_t addr,
			   uint64_t size, uint32_t stack, uint32_t thread)
{
	struct mt_event ev = { .count = 1 };

	ev.seq = f->seq++;
	ev.time_ns = f->time += 10;
	ev.addr = old;
	ev.size = ev.asked = old_size;
	ev.stack = old_stack;
	ev.thread = thread;
	ev.realloc = 1;
	assert_int_equal(f->ops.on_free(f->a, &ev), 0);
	ev.addr = addr;
	ev.size = ev.asked = size;
	ev.stack = stack;
	assert_int_equal(f->ops.on_alloc(f->a, &ev), 0);
	return ev.seq;
}

static void ev_snapshot(struct fixture *f, uint32_t index, const char *label)
{
	struct mt_snapshot s = { index, label, f->seq++, f->time += 10 };

	assert_int_equal(f->ops.on_snapshot(f->a, &s), 0);
}

static void ev_end(struct fixture *f)
{
	struct mt_end e = { 0 };

	e.clean = 1;
	e.time_ns = f->time;
	e.events = f->seq;
	f->ops.on_end(f->a, &e);
}

static void assert_cost(const struct mt_profile *p, uint32_t stack, int64_t bytes,
			int64_t blocks, int64_t allocs)
{
	struct mt_cost c = mt_profile_get(p, stack);

	assert_int_equal(c.bytes, bytes);
	assert_int_equal(c.blocks, blocks);
	assert_int_equal(c.allocs, allocs);
}

/*
 * Stack 0 allocates 100 and 200, stack 1 allocates 50; 100 is freed, then
 * stack 1 allocates 400 (live 650: the peak), everything but 50 is freed.
 */
static void test_peak_and_leaks(void **state)
{
	struct fixture *f = *state;
	const struct mt_agg_stats *st;
	struct mt_profile *end;

	assert_int_equal(mt_agg_request(f->a, NULL, 0, 0), 0);
	ev_alloc(f, 0x1000, 100, 0, 0);
	ev_alloc(f, 0x2000, 200, 0, 0);
	ev_alloc(f, 0x3000, 50, 1, 0);
	ev_free(f, 0x1000, 100, 0, 0);
	ev_alloc(f, 0x4000, 400, 1, 0);      /* seq 4: live 200 + 50 + 400 */
	ev_free(f, 0x2000, 200, 0, 0);
	ev_free(f, 0x4000, 400, 1, 0);
	ev_end(f);

	st = mt_agg_stats(f->a);
	assert_int_equal(st->events, 7);
	assert_int_equal(st->allocations, 4);
	assert_int_equal(st->frees, 3);
	assert_int_equal(st->bytes_allocated, 750);
	assert_int_equal(st->peak_bytes, 650);
	assert_int_equal(st->peak_blocks, 3);
	assert_int_equal(st->peak_seq, 4);
	assert_int_equal(st->peak_time_ns, 50);
	assert_false(st->peak_at_start);
	assert_int_equal(st->end_bytes, 50);
	assert_int_equal(st->end_blocks, 1);

	end = mt_agg_end_profile(f->a);
	assert_non_null(end);
	assert_cost(end, 0, 0, 0, 2);
	assert_cost(end, 1, 50, 1, 2);
	assert_int_equal(mt_profile_events(end), 7);
	mt_profile_free(end);
}

/* The first time the maximum is reached wins; a realloc is one event. */
static void test_peak_first_and_realloc(void **state)
{
	struct fixture *f = *state;
	const struct mt_agg_stats *st;

	assert_int_equal(mt_agg_request(f->a, NULL, 0, 0), 0);
	ev_alloc(f, 0x1000, 300, 0, 0);        /* 300 */
	ev_free(f, 0x1000, 300, 0, 0);           /* 0 */
	ev_alloc(f, 0x2000, 100, 1, 0);        /* 100 */
	/* realloc 100 -> 300: halves give 0 then 300; equal to the max, not above */
	ev_realloc(f, 0x2000, 100, 1, 0x3000, 300, 2, 0);
	/* realloc 300 -> 301: 0 then 301: a new peak at this seq */
	ev_realloc(f, 0x3000, 300, 2, 0x3000, 301, 2, 0);
	ev_end(f);

	st = mt_agg_stats(f->a);
	assert_int_equal(st->peak_bytes, 301);
	assert_int_equal(st->peak_seq, 4);
	assert_int_equal(st->peak_blocks, 1);
	assert_int_equal(st->allocations, 4);
	assert_int_equal(st->frees, 3);
	assert_int_equal(st->events, 5);
}

static void test_empty_run_peaks_at_start(void **state)
{
	struct fixture *f = *state;
	const struct mt_agg_stats *st;

	assert_int_equal(mt_agg_request(f->a, NULL, 0, 0), 0);
	ev_alloc(f, 0x1000, 0, 0, 0);
	ev_end(f);
	st = mt_agg_stats(f->a);
	assert_true(st->peak_at_start);
	assert_int_equal(st->peak_bytes, 0);
	assert_int_equal(st->end_blocks, 1);
}

/* Captures at start, seq, time, a snapshot, end; diff between them. */
static void test_captures_and_diff(void **state)
{
	struct fixture *f = *state;
	struct mt_at at[5] = {
		{ MT_AT_END, 0 }, { MT_AT_SEQ, 2 }, { MT_AT_START, 0 },
		{ MT_AT_TIME, 45 }, { MT_AT_SEQ, 3 },
	};
	struct mt_profile *p[5], *d;
	const struct mt_agg_stats *st;

	assert_int_equal(mt_agg_request(f->a, at, 5, 0), 0);
	ev_alloc(f, 0x1000, 10, 0, 0);        /* seq 0, t 10 */
	ev_alloc(f, 0x2000, 20, 1, 0);              /* seq 1, t 20 */
	ev_alloc(f, 0x3000, 30, 1, 0);              /* seq 2, t 30 */
	ev_snapshot(f, 0, "after three");           /* seq 3, t 40 */
	ev_free(f, 0x1000, 10, 0, 0);           /* seq 4, t 50 */
	ev_alloc(f, 0x4000, 5, 0, 0);               /* seq 5, t 60 */
	ev_end(f);

	for (int i = 0; i < 5; i++) {
		p[i] = mt_agg_take(f->a, (size_t)i);
		assert_non_null(p[i]);
	}
	assert_null(mt_agg_take(f->a, 0));         /* taken already */
	assert_null(mt_agg_take(f->a, 5));

	assert_cost(p[0], 0, 5, 1, 2);
	assert_cost(p[0], 1, 50, 2, 2);
	assert_int_equal(mt_profile_events(p[0]), 6);
	assert_cost(p[1], 0, 10, 1, 1);
	assert_cost(p[1], 1, 50, 2, 2);
	assert_int_equal(mt_profile_events(p[1]), 3);
	assert_int_equal(mt_profile_nstacks(p[2]), 0);
	assert_int_equal(mt_profile_events(p[2]), 0);
	assert_cost(p[3], 0, 10, 1, 1);             /* t <= 45: up to the snapshot */
	assert_int_equal(mt_profile_events(p[3]), 4);
	assert_int_equal(mt_profile_time(p[3]), 40);
	assert_cost(p[4], 1, 50, 2, 2);

	st = mt_agg_stats(f->a);
	assert_int_equal(st->nsnapshots, 1);
	assert_string_equal(st->snapshots[0].label, "after three");
	assert_int_equal(st->snapshots[0].seq, 3);
	assert_int_equal(st->snapshots[0].live_bytes, 60);
	assert_int_equal(st->snapshots[0].live_blocks, 3);

	/* end - snapshot: stack 0 went 10 -> 5 with one more allocation */
	d = mt_profile_diff(p[4], p[0]);
	assert_non_null(d);
	assert_cost(d, 0, -5, 0, 1);
	assert_cost(d, 1, 0, 0, 0);
	mt_profile_free(d);
	/* start -> end is the leaks */
	d = mt_profile_diff(p[2], p[0]);
	assert_cost(d, 0, 5, 1, 2);
	assert_cost(d, 1, 50, 2, 2);
	mt_profile_free(d);
	for (int i = 0; i < 5; i++)
		mt_profile_free(p[i]);
}

/* Temporary: freed by the thread's very next allocation-related event. */
static void test_temporary(void **state)
{
	struct fixture *f = *state;
	struct mt_profile *t;

	assert_int_equal(mt_agg_request(f->a, NULL, 0, 0), 0);
	ev_alloc(f, 0x1000, 8, 0, 0);
	ev_free(f, 0x1000, 8, 0, 0);             /* temporary (stack 0) */
	ev_alloc(f, 0x1000, 16, 0, 0);
	ev_alloc(f, 0x2000, 4, 1, 1);           /* other thread: does not count */
	ev_free(f, 0x1000, 16, 0, 0);            /* temporary (stack 0) */
	ev_free(f, 0x2000, 4, 1, 1);             /* temporary (stack 1, thread 1) */
	ev_alloc(f, 0x3000, 32, 2, 0);
	ev_alloc(f, 0x4000, 32, 2, 0);
	ev_free(f, 0x3000, 32, 2, 0);            /* not: another allocation between */
	ev_free(f, 0x4000, 32, 2, 0);            /* not: a free between */
	ev_alloc(f, 0x5000, 64, 3, 0);
	/* freed in a realloc: the free half counts as a free */
	ev_realloc(f, 0x5000, 64, 3, 0x6000, 128, 3, 0);
	/* Thread 0 allocates at 0x7000; thread 1 frees that block (not a
	 * temporary: thread 1 has no allocation pending) and gets a new block
	 * at the same address, which thread 0 then frees as its next event:
	 * not thread 0's last allocation, though the address is the same. */
	ev_alloc(f, 0x7000, 1, 4, 0);
	ev_free(f, 0x7000, 1, 4, 1);
	ev_alloc(f, 0x7000, 2, 5, 1);
	ev_free(f, 0x7000, 2, 5, 0);
	ev_end(f);

	assert_int_equal(mt_agg_stats(f->a)->temporary, 4);
	t = mt_agg_temporary_profile(f->a);
	assert_non_null(t);
	assert_cost(t, 0, 24, 2, 2);
	assert_cost(t, 1, 4, 1, 1);
	assert_cost(t, 2, 0, 0, 2);
	assert_cost(t, 3, 64, 1, 2);
	assert_cost(t, 4, 0, 0, 1);
	assert_cost(t, 5, 0, 0, 1);
	mt_profile_free(t);
}

/* With stop_early, the callback asks to stop once the points are taken. */
static void test_stop_early(void **state)
{
	struct fixture *f = *state;
	struct mt_at at = { MT_AT_SEQ, 0 };
	struct mt_event ev = { .count = 1 };
	struct mt_profile *p;

	assert_int_equal(mt_agg_request(f->a, &at, 1, 1), 0);
	ev_alloc(f, 0x1000, 7, 0, 0);
	ev.seq = 1;
	ev.time_ns = 100;
	ev.size = ev.asked = 9;
	assert_int_equal(f->ops.on_alloc(f->a, &ev), 1);
	p = mt_agg_take(f->a, 0);
	assert_non_null(p);
	assert_cost(p, 0, 7, 1, 1);
	mt_profile_free(p);
}

/* A simple deterministic generator for the brute-force test. */
static uint64_t rng = 88172645463325252ull;
static uint64_t next_rand(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

struct blk {
	uint64_t alloc_seq, free_seq;   /* free_seq UINT64_MAX while live */
	uint64_t size;
	uint32_t stack;
	uint64_t addr;
};

/*
 * Random churn over 20 stacks; profiles at 16 random seqs are compared with
 * a recount from every block's [alloc_seq, free_seq) lifetime.
 */
static void test_random_against_lifetimes(void **state)
{
	struct fixture *f = *state;
	enum { NEV = 20000, NPTS = 16, NSTACK = 20 };
	struct blk *blk = calloc(NEV, sizeof(*blk));
	size_t *live = calloc(NEV, sizeof(*live));
	size_t nblk = 0, nlive = 0;
	struct mt_at at[NPTS];
	struct mt_profile *p[NPTS];
	int64_t peak = 0, cur = 0;
	uint64_t peak_seq = 0;

	assert_non_null(blk);
	assert_non_null(live);
	for (int i = 0; i < NPTS; i++) {
		at[i].kind = MT_AT_SEQ;
		at[i].value = next_rand() % NEV;
	}
	assert_int_equal(mt_agg_request(f->a, at, NPTS, 0), 0);
	for (uint64_t s = 0; s < NEV; s++) {
		if (nlive && next_rand() % 100 < 48) {
			size_t k = next_rand() % nlive;
			struct blk *b = &blk[live[k]];

			ev_free(f, b->addr, b->size, b->stack, 0);
			b->free_seq = s;
			cur -= (int64_t)b->size;
			live[k] = live[--nlive];
		} else {
			struct blk *b = &blk[nblk];

			b->size = next_rand() % 5000;
			b->stack = (uint32_t)(next_rand() % NSTACK);
			b->addr = 0x10000 + 16 * nblk;
			b->free_seq = UINT64_MAX;
			b->alloc_seq = ev_alloc(f, b->addr, b->size, b->stack, 0);
			cur += (int64_t)b->size;
			if (cur > peak) {
				peak = cur;
				peak_seq = s;
			}
			live[nlive++] = nblk++;
		}
	}
	ev_end(f);
	assert_int_equal(mt_agg_stats(f->a)->peak_bytes, peak);
	assert_int_equal(mt_agg_stats(f->a)->peak_seq, peak_seq);
	for (int i = 0; i < NPTS; i++) {
		int64_t bytes[NSTACK] = { 0 }, blocks[NSTACK] = { 0 }, allocs[NSTACK] = { 0 };

		p[i] = mt_agg_take(f->a, (size_t)i);
		assert_non_null(p[i]);
		for (size_t k = 0; k < nblk; k++) {
			if (blk[k].alloc_seq > at[i].value)
				continue;
			allocs[blk[k].stack]++;
			if (blk[k].free_seq > at[i].value) {
				bytes[blk[k].stack] += (int64_t)blk[k].size;
				blocks[blk[k].stack]++;
			}
		}
		for (uint32_t s = 0; s < NSTACK; s++)
			assert_cost(p[i], s, bytes[s], blocks[s], allocs[s]);
		assert_int_equal(mt_profile_events(p[i]), at[i].value + 1);
		mt_profile_free(p[i]);
	}
	free(blk);
	free(live);
}

/* A free by one thread of a block another allocated (alloc_thread). */
static void ev_free_of(struct fixture *f, uint64_t addr, uint64_t size, uint32_t stack,
		       uint32_t thread, uint32_t owner)
{
	struct mt_event ev = { .count = 1 };

	ev.seq = f->seq++;
	ev.time_ns = f->time += 10;
	ev.addr = addr;
	ev.size = ev.asked = size;
	ev.stack = stack;
	ev.thread = thread;
	ev.alloc_thread = owner;
	assert_int_equal(f->ops.on_free(f->a, &ev), 0);
}

static void assert_thread(const struct mt_agg *a, size_t i, uint64_t allocs, uint64_t frees,
			  uint64_t bytes, int64_t peak_bytes, int64_t peak_blocks,
			  int64_t end_bytes, int64_t end_blocks)
{
	struct mt_agg_thread_stats t;

	mt_agg_thread_stats(a, i, &t);
	assert_int_equal(t.allocations, allocs);
	assert_int_equal(t.frees, frees);
	assert_int_equal(t.bytes_allocated, bytes);
	assert_int_equal(t.peak_bytes, peak_bytes);
	assert_int_equal(t.peak_blocks, peak_blocks);
	assert_int_equal(t.end_bytes, end_bytes);
	assert_int_equal(t.end_blocks, end_blocks);
}

/*
 * Per-thread figures: a thread's frees are the blocks it freed, its live
 * bytes (at the peak, at the end) those of the blocks it allocated, whoever
 * freed them; the peak moves three times.
 */
static void test_thread_stats(void **state)
{
	struct fixture *f = *state;

	ev_alloc(f, 0xA0, 100, 0, 0);          /* live 100 */
	ev_alloc(f, 0xB0, 200, 1, 1);          /* 300 */
	ev_free_of(f, 0xA0, 100, 0, 1, 0);     /* 200: thread 1 frees 0's */
	ev_alloc(f, 0xC0, 1000, 2, 2);         /* 1,200 */
	ev_free_of(f, 0xC0, 1000, 2, 0, 2);    /* 200: thread 0 frees 2's */
	ev_alloc(f, 0xD0, 50, 0, 0);           /* 250 */
	ev_alloc(f, 0xE0, 2000, 1, 1);         /* 2,250: the peak */
	ev_free_of(f, 0xE0, 2000, 1, 1, 1);    /* 250 */
	ev_end(f);
	assert_int_equal(mt_agg_stats(f->a)->peak_bytes, 2250);
	assert_int_equal(mt_agg_nthreads(f->a), 3);
	/* thread 0: A and D; freed C; D live at the peak and the end */
	assert_thread(f->a, 0, 2, 1, 150, 50, 1, 50, 1);
	/* thread 1: B and E; freed A and E; B and E live at the peak */
	assert_thread(f->a, 1, 2, 2, 2200, 2200, 2, 200, 1);
	/* thread 2: C, freed by thread 0 before the peak */
	assert_thread(f->a, 2, 1, 0, 1000, 0, 0, 0, 0);
	assert_thread(f->a, 3, 0, 0, 0, 0, 0, 0, 0);
}

/* A run that never rises above 0 peaks at start: nothing live then. */
static void test_thread_stats_no_peak(void **state)
{
	struct fixture *f = *state;

	ev_alloc(f, 0xA0, 0, 0, 4);
	ev_free_of(f, 0xA0, 0, 0, 4, 4);
	ev_end(f);
	assert_int_equal(mt_agg_stats(f->a)->peak_at_start, 1);
	assert_int_equal(mt_agg_nthreads(f->a), 5);
	assert_thread(f->a, 4, 1, 1, 0, 0, 0, 0, 0);
}

static void test_profile_add_total(void **state)
{
	struct mt_profile *p = mt_profile_new();
	struct mt_cost c = { 10, 2, 3 }, t;

	(void)state;
	assert_non_null(p);
	assert_int_equal(mt_profile_add(p, 7, &c), 0);
	assert_int_equal(mt_profile_add(p, 2, &c), 0);
	assert_int_equal(mt_profile_add(p, 7, &c), 0);
	assert_int_equal(mt_profile_nstacks(p), 8);
	assert_cost(p, 7, 20, 4, 6);
	assert_cost(p, 100, 0, 0, 0);
	t = mt_profile_total(p);
	assert_int_equal(t.bytes, 30);
	assert_int_equal(t.blocks, 6);
	assert_int_equal(t.allocs, 9);
	mt_profile_free(p);
	mt_profile_free(NULL);
	mt_agg_free(NULL);
}

/* Two profiles cost the same for every stack. */
static void assert_same_profile(const struct mt_profile *a, const struct mt_profile *b)
{
	size_t n = mt_profile_nstacks(a) > mt_profile_nstacks(b) ? mt_profile_nstacks(a) :
								    mt_profile_nstacks(b);

	assert_non_null(a);
	assert_non_null(b);
	for (uint32_t i = 0; i < n; i++) {
		struct mt_cost x = mt_profile_get(a, i), y = mt_profile_get(b, i);

		assert_int_equal(x.bytes, y.bytes);
		assert_int_equal(x.blocks, y.blocks);
		assert_int_equal(x.allocs, y.allocs);
	}
	assert_int_equal(mt_profile_events(a), mt_profile_events(b));
	assert_int_equal(mt_profile_time(a), mt_profile_time(b));
}

/*
 * Runs of events (replay.h on_run) count as the same events one by one:
 * pseudo-random allocations, frees and reallocs in runs of one time, new
 * stacks within runs, a mark after some, with a point requested within a
 * run or none (the fast loop, and the events it leaves to the callbacks).
 */
static void test_runs(void **state)
{
	(void)state;
	for (int req = 0; req < 2; req++) {
		struct mt_agg *one = mt_agg_new(), *run = mt_agg_new();
		struct mt_replay_ops ops;
		struct mt_run_event ev[64];
		struct mt_at at[2] = { { MT_AT_SEQ, 700 }, { MT_AT_END, 0 } };
		uint64_t live[256] = { 0 }, sizes[256] = { 0 };
		uint32_t stacks[256] = { 0 };
		uint64_t seq = 0, time = 0, x = 12345;
		uint32_t nst = 1;
		struct mt_profile *o1[2], *o2[2], *p1, *p2;
		int64_t b1, k1, b2, k2;

		assert_non_null(one);
		assert_non_null(run);
		mt_agg_ops(&ops);
		for (int j = 0; j < 2; j++) {
			struct mt_agg *a = j ? run : one;

			mt_agg_skip(a, MT_TALLY_NO_THREADS | MT_TALLY_NO_TEMPORARY |
					       MT_TALLY_NO_CALLS);
			mt_agg_journal(a, 1);
			assert_int_equal(mt_agg_request(a, at, req ? 2 : 1, 0), 0);
			if (!req)
				assert_int_equal(mt_agg_request(a, &at[1], 1, 0), 0);
		}
		for (int r = 0; r < 60; r++) {
			size_t n = 0;
			struct mt_run rn = { ev, 0, seq, time += 100, 0 };
			size_t done = 99;

			while (n < sizeof(ev) / sizeof(ev[0]) - 1) {
				unsigned slot, kind;

				x = x * 6364136223846793005u + 1442695040888963407u;
				slot = (unsigned)(x >> 33) % 256;
				kind = (unsigned)(x >> 20) % 8;
				if (kind == 0 && nst < 40)
					nst++;
				if (!live[slot]) {
					live[slot] = 0x1000 + 0x10 * (uint64_t)slot;
					sizes[slot] = 1 + (x >> 40) % 500;
					stacks[slot] = (uint32_t)((x >> 50) % nst);
					ev[n++] = (struct mt_run_event){ 0, MT_RUN_ALLOC, stacks[slot],
									 sizes[slot], live[slot] };
				} else if (kind < 6) {
					ev[n++] = (struct mt_run_event){ 0, MT_RUN_FREE, stacks[slot],
									 sizes[slot], live[slot] };
					live[slot] = 0;
				} else {
					ev[n++] = (struct mt_run_event){ 0, MT_RUN_REALLOC_FREE,
									 stacks[slot], sizes[slot],
									 live[slot] };
					sizes[slot] = 1 + (x >> 40) % 900;
					stacks[slot] = (uint32_t)((x >> 50) % nst);
					ev[n++] = (struct mt_run_event){ 0, MT_RUN_REALLOC_ALLOC,
									 stacks[slot], sizes[slot],
									 live[slot] };
				}
				if ((x >> 12) % 16 == 0)
					break;
			}
			rn.n = n;
			assert_int_equal(ops.on_run(run, &rn, &done), 0);
			assert_int_equal(done, n);
			for (size_t i = 0; i < n; i++) {
				int fr = ev[i].type == MT_RUN_FREE || ev[i].type == MT_RUN_REALLOC_FREE;
				struct mt_event e = {
					.seq = seq, .time_ns = time, .addr = ev[i].addr,
					.size = ev[i].size, .stack = ev[i].stack, .count = 1,
					.asked = ev[i].size,
					.realloc = ev[i].type >= MT_RUN_REALLOC_FREE,
				};

				assert_int_equal((fr ? ops.on_free : ops.on_alloc)(one, &e), 0);
				seq += ev[i].type != MT_RUN_REALLOC_FREE;
			}
			if (r % 7 == 3) {
				assert_int_equal(mt_agg_mark(one), 0);
				assert_int_equal(mt_agg_mark(run), 0);
			}
		}
		{
			struct mt_end e = { .clean = 1, .time_ns = time, .events = seq };

			ops.on_end(one, &e);
			ops.on_end(run, &e);
		}
		{
			const struct mt_agg_stats *s1 = mt_agg_stats(one), *s2 = mt_agg_stats(run);

			assert_int_equal(s1->events, s2->events);
			assert_int_equal(s1->allocations, s2->allocations);
			assert_int_equal(s1->frees, s2->frees);
			assert_int_equal(s1->bytes_allocated, s2->bytes_allocated);
			assert_int_equal(s1->peak_bytes, s2->peak_bytes);
			assert_int_equal(s1->peak_blocks, s2->peak_blocks);
			assert_int_equal(s1->peak_seq, s2->peak_seq);
			assert_int_equal(s1->peak_time_ns, s2->peak_time_ns);
			assert_int_equal(s1->peak_at_start, s2->peak_at_start);
			assert_int_equal(s1->end_bytes, s2->end_bytes);
		}
		mt_agg_live(one, &b1, &k1);
		mt_agg_live(run, &b2, &k2);
		assert_int_equal(b1, b2);
		assert_int_equal(k1, k2);
		p1 = mt_agg_peak_profile(one);
		p2 = mt_agg_peak_profile(run);
		assert_same_profile(p1, p2);
		mt_profile_free(p1);
		mt_profile_free(p2);
		assert_int_equal(mt_agg_nmarks(one), mt_agg_nmarks(run));
		for (size_t m = 1; m <= mt_agg_nmarks(one); m++) {
			p1 = mt_profile_new();
			p2 = mt_profile_new();
			assert_int_equal(mt_agg_apply_marks(one, p1, 0, m), 0);
			assert_int_equal(mt_agg_apply_marks(run, p2, 0, m), 0);
			assert_same_profile(p1, p2);
			mt_profile_free(p1);
			mt_profile_free(p2);
		}
		for (size_t i = 0; i < (req ? 2u : 1u); i++) {
			o1[i] = mt_agg_take(one, i);
			o2[i] = mt_agg_take(run, i);
			assert_same_profile(o1[i], o2[i]);
			mt_profile_free(o1[i]);
			mt_profile_free(o2[i]);
		}
		mt_agg_free(one);
		mt_agg_free(run);
	}
}


int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_peak_and_leaks, setup, teardown),
		cmocka_unit_test_setup_teardown(test_peak_first_and_realloc, setup, teardown),
		cmocka_unit_test_setup_teardown(test_empty_run_peaks_at_start, setup, teardown),
		cmocka_unit_test_setup_teardown(test_captures_and_diff, setup, teardown),
		cmocka_unit_test_setup_teardown(test_temporary, setup, teardown),
		cmocka_unit_test_setup_teardown(test_stop_early, setup, teardown),
		cmocka_unit_test_setup_teardown(test_random_against_lifetimes, setup, teardown),
		cmocka_unit_test_setup_teardown(test_thread_stats, setup, teardown),
		cmocka_unit_test_setup_teardown(test_thread_stats_no_peak, setup, teardown),
		cmocka_unit_test(test_profile_add_total),
		cmocka_unit_test(test_runs),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

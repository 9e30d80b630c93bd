/*
 * test_session.c - lib/session.c: the profile the session gives at a
 * point, from its index (the peak kept during the pass, journal marks,
 * snapshots) or by a replay, is the one an aggregator replaying the log
 * from the start captures there (lib/agg.c, tested on its own in
 * test_agg.c): every event number and many times of a generated run with
 * reallocs, several threads, snapshots and a peak in the middle; and the
 * session's figures are the aggregator's; a session following a log
 * written in pieces is, after each piece, one that read it in one go; the
 * leak kinds of a check before END, per stack and per thread.
 *
 * Not for: agg's definitions (test_agg.c), the report's text
 * (test_report.c).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "agg.h"
#include "error.h"
#include "format.h"
#include "replay.h"
#include "session.h"
#include "writer.h"
#include "testlog.c"

#define NSTACKS 12

static const struct mt_session_opts marks = { .time_marks = 1 };

struct fixture {
	char dir[64], path[96];
	uint64_t events;
};

/*
 * A run of 3,000 rounds: allocations of sizes and stacks from a simple
 * generator on two threads, frees of older blocks, reallocs, a snapshot
 * every 500 rounds, reallocs of blocks never allocated (only their new
 * block counts), time steps of 1 to 50 us (so that the series' buckets
 * widen several times), a peak around round 1,800, then a fall.
 */
static void new_log(const char *path, uint64_t *events)
{
	struct testlog *t = tl_new(9, "gen", 4);
	uint64_t addr[256] = { 0 }, x = 7;
	uint32_t snap = 0;

	assert_non_null(t);
	tl_thread(t, 0, 100);
	tl_thread(t, 1, 101);
	for (uint32_t i = 0; i < NSTACKS; i++) {
		uint64_t ips[2] = { 0x1000 + 0x10 * i, 0x2000 };
		tl_stack(t, i, i % 3 ? MT_FN_MALLOC : MT_FN_CALLOC, 2, ips);
	}
	for (uint64_t r = 0; r < 3000; r++) {
		x = x * 6364136223846793005ull + 1442695040888963407ull;
		unsigned k = (unsigned)(x >> 33) & 255, th = (unsigned)(x >> 50) & 1;
		uint64_t dt = 1000 + ((x >> 20) % 50) * 1000, size = 1 + ((x >> 40) % 4000);
		uint32_t st = (uint32_t)((x >> 13) % NSTACKS);
		int growing = r < 1800;

		if (addr[k] && (!growing || (x & 7) == 0)) {
			tl_free_block(t, dt, addr[k], th);
			addr[k] = 0;
		} else if (addr[k]) {
			uint64_t na = 0x100000 + 0x10000 * k + (r & 0xfff) * 16;
			tl_realloc(t, dt, addr[k], na, size, st, th);
			addr[k] = na;
		} else if (growing || (x & 3) == 0) {
			addr[k] = 0x100000 + 0x10000 * k + (r & 0xfff) * 16;
			tl_alloc(t, dt, addr[k], size, st, th);
		}
		/* a realloc of a block never seen: its alloc half alone, some
		 * of them first in a bucket (after a pause) */
		if (r % 97 == 0)
			tl_realloc(t, r % 194 ? dt : 300000, 0x8000000 + r * 16,
				   0x9000000 + r * 16, 24, st, th);
		if (r % 500 == 499)
			tl_snapshot(t, 1, snap++, "s");
		if (r % 700 == 0)
			tl_flush(t);
	}
	tl_end(t, 10, MT_END_EXIT, 0);
	*events = tl_events(t);
	tl_write(t, path);
	tl_free(t);
}

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));

	assert_non_null(f);
	strcpy(f->dir, "/tmp/mt-test-session.XXXXXX");
	assert_non_null(mkdtemp(f->dir));
	snprintf(f->path, sizeof(f->path), "%s/log", f->dir);
	new_log(f->path, &f->events);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	unlink(f->path);
	rmdir(f->dir);
	free(f);
	return 0;
}

/* The same cost for every stack. */
static void assert_same(const struct mt_profile *a, const struct mt_profile *b)
{
	size_t n = mt_profile_nstacks(a) > mt_profile_nstacks(b) ?
		mt_profile_nstacks(a) : mt_profile_nstacks(b);

	for (uint32_t i = 0; i < n; i++) {
		struct mt_cost x = mt_profile_get(a, i), y = mt_profile_get(b, i);

		assert_int_equal(x.bytes, y.bytes);
		assert_int_equal(x.blocks, y.blocks);
		assert_int_equal(x.allocs, y.allocs);
	}
}

/* The profiles an aggregator captures at the n points (the truth). */
static struct mt_profile **truth(const char *path, const struct mt_at *at, size_t n)
{
	struct mt_profile **p = calloc(n, sizeof(*p));
	struct mt_replay *r;
	struct mt_agg *a = mt_agg_new();

	assert_non_null(p);
	assert_non_null(a);
	assert_int_equal(mt_replay_open(path, &r, NULL), 0);
	assert_int_equal(mt_agg_run(a, r, at, n, p, NULL), 0);
	mt_agg_free(a);
	mt_replay_free(r);
	return p;
}

/* The session's profile at each of the n points is the aggregator's. */
static void check_points(struct mt_session *s, const char *path, const struct mt_at *at,
			 size_t n)
{
	struct mt_profile **want = truth(path, at, n);

	for (size_t i = 0; i < n; i++) {
		struct mt_profile *p;
		assert_int_equal(mt_session_profile(s, &at[i], &p), 0);
		assert_same(p, want[i]);
		mt_profile_free(p);
		mt_profile_free(want[i]);
	}
	free(want);
}

/* Every event number: the session (marks or replay) = the aggregator. */
static void test_every_seq(void **state)
{
	struct fixture *f = *state;
	size_t n = (size_t)f->events;
	struct mt_at *at = calloc(n, sizeof(*at));
	struct mt_session *s;

	assert_non_null(at);
	for (size_t i = 0; i < n; i++) {
		at[i].kind = MT_AT_SEQ;
		at[i].value = i;
	}
	struct mt_profile **want = truth(f->path, at, n);
	assert_int_equal(mt_session_open(f->path, &marks, &s, NULL), 0);
	/* forward, then backward (the cursor must restart) */
	for (size_t i = 0; i < n; i += 7) {
		struct mt_profile *p;
		assert_int_equal(mt_session_profile(s, &at[i], &p), 0);
		assert_same(p, want[i]);
		mt_profile_free(p);
	}
	for (size_t i = n; i-- > 0; i -= i > 11 ? 11 : i) {
		struct mt_profile *p;
		assert_int_equal(mt_session_profile(s, &at[i], &p), 0);
		assert_same(p, want[i]);
		mt_profile_free(p);
	}
	for (size_t i = 0; i < n; i++)
		mt_profile_free(want[i]);
	free(want);
	free(at);
	mt_session_free(s);
}

/* Times, the peak, the end and every snapshot. */
static void test_points(void **state)
{
	struct fixture *f = *state;
	struct mt_session *s;
	struct mt_at at[400];
	size_t n = 0;

	assert_int_equal(mt_session_open(f->path, &marks, &s, NULL), 0);
	const struct mt_agg_stats *st = mt_session_stats(s);
	assert_false(st->peak_at_start);
	assert_true(st->nsnapshots >= 5);
	for (uint64_t t = 0; t <= st->end_time_ns + 2000; t += st->end_time_ns / 300 + 1) {
		at[n].kind = MT_AT_TIME;
		at[n++].value = t;
	}
	/* the session's own kinds, and what the aggregator calls them */
	struct mt_at mine[3 + 16], theirs[3 + 16];
	size_t m = 0;
	mine[m] = (struct mt_at){ MT_AT_PEAK, 0 };
	theirs[m++] = (struct mt_at){ MT_AT_SEQ, st->peak_seq };
	mine[m] = (struct mt_at){ MT_AT_END, 0 };
	theirs[m++] = (struct mt_at){ MT_AT_END, 0 };
	mine[m] = (struct mt_at){ MT_AT_START, 0 };
	theirs[m++] = (struct mt_at){ MT_AT_START, 0 };
	for (size_t i = 0; i < st->nsnapshots && m < 19; i++) {
		mine[m] = (struct mt_at){ MT_AT_SNAPSHOT, st->snapshots[i].index };
		theirs[m++] = (struct mt_at){ MT_AT_SEQ, st->snapshots[i].seq };
	}
	struct mt_profile **want2 = truth(f->path, theirs, m);
	/* just before every boundary of the series' final buckets: where the
	 * index answers from its marks, or by a replay */
	uint64_t w = mt_series_bucket_ns(mt_session_series(s));
	size_t nb = (size_t)(st->end_time_ns / w) + 1;
	struct mt_at *bt = calloc(nb, sizeof(*bt));
	assert_non_null(bt);
	for (size_t k = 0; k < nb; k++) {
		bt[k].kind = MT_AT_TIME;
		bt[k].value = (k + 1) * w - 1;
	}
	check_points(s, f->path, bt, nb);
	free(bt);
	check_points(s, f->path, at, n);
	for (size_t i = m; i-- > 0;) {
		struct mt_profile *p;
		assert_int_equal(mt_session_profile(s, &mine[i], &p), 0);
		assert_same(p, want2[i]);
		mt_profile_free(p);
		mt_profile_free(want2[i]);
	}
	struct mt_at none = { MT_AT_SNAPSHOT, 999 };
	struct mt_profile *p = NULL;
	assert_int_equal(mt_session_profile(s, &none, &p), MT_E_NOTFOUND);
	assert_null(p);
	free(want2);
	mt_session_free(s);
}

/*
 * The indexed times a timeline's columns ask at: never after the time
 * asked, never before the previous mark's range, and their profiles are
 * the aggregator's at the same time; across the run they are at most one
 * per 8 buckets of the series (the marks, thinned as the series widened)
 * plus the times themselves where a mark covers them.
 */
static void test_indexed_times(void **state)
{
	struct fixture *f = *state;
	struct mt_session *s;
	struct mt_at at[300];
	size_t n = 0, distinct = 0;

	assert_int_equal(mt_session_open(f->path, &marks, &s, NULL), 0);
	const struct mt_agg_stats *st = mt_session_stats(s);
	uint64_t w = mt_series_bucket_ns(mt_session_series(s)), prev = UINT64_MAX;
	for (uint64_t t = 0; n < 300 && t <= st->end_time_ns + 2000;
	     t += st->end_time_ns / 250 + 1) {
		uint64_t u = mt_session_indexed_time(s, t);

		assert_true(u <= t);
		/* a mark every 8 buckets: never further back than that */
		assert_true(t - u < 16 * w);
		at[n].kind = MT_AT_TIME;
		at[n++].value = u;
		if (u != prev && u != t)
			distinct++;
		prev = u;
	}
	assert_true(distinct <= st->end_time_ns / (8 * w) + 2);
	check_points(s, f->path, at, n);
	mt_session_free(s);
}

/* The session's figures are those of an aggregator's own replay. */
static void test_stats(void **state)
{
	struct fixture *f = *state;
	struct mt_session *s;
	struct mt_replay *r;
	struct mt_agg *a = mt_agg_new();
	struct mt_profile *out[1];
	struct mt_at end = { MT_AT_END, 0 };

	assert_int_equal(mt_replay_open(f->path, &r, NULL), 0);
	assert_int_equal(mt_agg_run(a, r, &end, 1, out, NULL), 0);
	assert_int_equal(mt_session_open(f->path, &marks, &s, NULL), 0);
	const struct mt_agg_stats *x = mt_session_stats(s), *y = mt_agg_stats(a);
	assert_int_equal(x->events, y->events);
	assert_int_equal(x->events, f->events);
	assert_int_equal(x->allocations, y->allocations);
	assert_int_equal(x->frees, y->frees);
	assert_int_equal(x->bytes_allocated, y->bytes_allocated);
	assert_int_equal(x->peak_bytes, y->peak_bytes);
	assert_int_equal(x->peak_seq, y->peak_seq);
	assert_int_equal(x->end_bytes, y->end_bytes);
	assert_int_equal(x->nsnapshots, y->nsnapshots);
	assert_int_equal(mt_session_nthreads(s), 2);
	assert_true(mt_session_end(s)->clean);
	mt_profile_free(out[0]);
	mt_agg_free(a);
	mt_replay_free(r);
	mt_session_free(s);
}

/*
 * Profiles restricted to one thread's blocks: every block has one
 * allocating thread, so at any point the two threads' profiles add up to
 * the whole one, stack by stack; and each thread's total at the peak and
 * at the end is its figure from the pass (agg's per-thread tally, another
 * code path).
 */
static void test_only_thread(void **state)
{
	struct fixture *f = *state;
	static const struct mt_at at[] = {
		{ MT_AT_PEAK, 0 }, { MT_AT_END, 0 }, { MT_AT_SNAPSHOT, 2 },
		{ MT_AT_SEQ, 1234 }, { MT_AT_START, 0 },
	};
	struct mt_session_thread th[2];
	struct mt_session *s;

	assert_int_equal(mt_session_open(f->path, &marks, &s, NULL), 0);
	assert_int_equal(mt_session_thread(s, 0, &th[0]), 0);
	assert_int_equal(mt_session_thread(s, 1, &th[1]), 0);
	assert_int_equal(th[0].tid, 100);
	assert_int_equal(th[1].tid, 101);
	assert_null(th[0].name);
	assert_int_equal(mt_session_thread(s, 2, &th[0]), MT_E_NOTFOUND);
	assert_int_equal(mt_session_only_thread(s, 102), MT_E_NOTFOUND);
	for (size_t i = 0; i < sizeof(at) / sizeof(at[0]); i++) {
		struct mt_profile *whole, *p[2];
		size_t n;

		assert_int_equal(mt_session_only_thread(s, -1), 0);
		assert_int_equal(mt_session_profile(s, &at[i], &whole), 0);
		for (int k = 0; k < 2; k++) {
			assert_int_equal(mt_session_only_thread(s, 100 + k), 0);
			assert_int_equal(mt_session_profile(s, &at[i], &p[k]), 0);
		}
		n = mt_profile_nstacks(whole);
		assert_true(n > 0 || at[i].kind == MT_AT_START);
		for (uint32_t st = 0; st < NSTACKS; st++) {
			struct mt_cost w = mt_profile_get(whole, st), a = mt_profile_get(p[0], st),
				b = mt_profile_get(p[1], st);

			assert_int_equal(w.bytes, a.bytes + b.bytes);
			assert_int_equal(w.blocks, a.blocks + b.blocks);
			assert_int_equal(w.allocs, a.allocs + b.allocs);
		}
		if (at[i].kind == MT_AT_PEAK || at[i].kind == MT_AT_END) {
			for (int k = 0; k < 2; k++) {
				struct mt_cost c = mt_profile_total(p[k]);
				const struct mt_agg_thread_stats *x = &th[k].st;

				assert_int_equal(mt_session_thread(s, (size_t)k, &th[k]), 0);
				assert_true(c.bytes > 0);
				assert_int_equal(c.bytes, at[i].kind == MT_AT_PEAK ? x->peak_bytes : x->end_bytes);
				assert_int_equal(c.blocks, at[i].kind == MT_AT_PEAK ? x->peak_blocks : x->end_blocks);
			}
		}
		mt_profile_free(whole);
		mt_profile_free(p[0]);
		mt_profile_free(p[1]);
	}
	mt_session_free(s);
}

/* The figures, the series and the end of two sessions are the same. */
static void assert_same_run(struct mt_session *a, struct mt_session *b)
{
	const struct mt_agg_stats *x = mt_session_stats(a), *y = mt_session_stats(b);
	const struct mt_end *ea = mt_session_end(a), *eb = mt_session_end(b);
	struct mt_series_col ca[64], cb[64];

	assert_int_equal(x->events, y->events);
	assert_int_equal(x->allocations, y->allocations);
	assert_int_equal(x->frees, y->frees);
	assert_int_equal(x->bytes_allocated, y->bytes_allocated);
	assert_int_equal(x->peak_bytes, y->peak_bytes);
	assert_int_equal(x->peak_seq, y->peak_seq);
	assert_int_equal(x->end_bytes, y->end_bytes);
	assert_int_equal(x->end_time_ns, y->end_time_ns);
	assert_int_equal(x->nsnapshots, y->nsnapshots);
	assert_int_equal(mt_session_nthreads(a), mt_session_nthreads(b));
	assert_int_equal(ea->clean, eb->clean);
	assert_int_equal(ea->truncated, eb->truncated);
	assert_int_equal(ea->good_bytes, eb->good_bytes);
	assert_int_equal(ea->events, eb->events);
	assert_int_equal(mt_series_bucket_ns(mt_session_series(a)),
			 mt_series_bucket_ns(mt_session_series(b)));
	if (!x->end_time_ns)
		return;
	assert_int_equal(mt_series_resample(mt_session_series(a), 0, x->end_time_ns + 1, 64,
					    NULL, ca), 0);
	assert_int_equal(mt_series_resample(mt_session_series(b), 0, x->end_time_ns + 1, 64,
					    NULL, cb), 0);
	for (size_t i = 0; i < 64; i++) {
		assert_int_equal(ca[i].max_bytes, cb[i].max_bytes);
		assert_int_equal(ca[i].min_bytes, cb[i].min_bytes);
		assert_int_equal(ca[i].end_bytes, cb[i].end_bytes);
		assert_int_equal(ca[i].end_events, cb[i].end_events);
	}
}

/* Profiles of the following session a at points of the run so far are
 * those of b, a session that read the same bytes in one go. */
static void assert_same_points(struct mt_session *a, struct mt_session *b)
{
	const struct mt_agg_stats *st = mt_session_stats(b);
	struct mt_at at[40];
	size_t n = 0;

	at[n++] = (struct mt_at){ MT_AT_END, 0 };
	at[n++] = (struct mt_at){ MT_AT_PEAK, 0 };
	for (size_t i = 0; i < st->nsnapshots && n < 12; i++)
		at[n++] = (struct mt_at){ MT_AT_SNAPSHOT, st->snapshots[i].index };
	for (uint64_t k = 1; k < 14; k++)
		at[n++] = (struct mt_at){ MT_AT_TIME,
			mt_session_indexed_time(b, st->end_time_ns * k / 13) };
	for (uint64_t k = 0; k < 8 && st->events; k++)
		at[n++] = (struct mt_at){ MT_AT_SEQ, st->events * k / 8 };
	for (size_t i = 0; i < n; i++) {
		struct mt_profile *p, *q;

		assert_int_equal(mt_session_profile(a, &at[i], &p), 0);
		assert_int_equal(mt_session_profile(b, &at[i], &q), 0);
		assert_same(p, q);
		mt_profile_free(p);
		mt_profile_free(q);
	}
}

/*
 * A log written in pieces, cut anywhere (inside a chunk's header, inside
 * its data, on a boundary), as a recording program writes it: a session
 * that follows it (mt_session_poll after each piece) has, after each, the
 * figures, series, end and profiles of a session that reads the same
 * bytes in one go; a chunk not yet whole is no error, END ends it.
 */
static void test_poll(void **state)
{
	struct fixture *f = *state;
	static const struct mt_session_opts follow = { .time_marks = 1, .follow = 1 };
	struct mt_session *s, *whole;
	char grow[128];
	uint64_t seed = 42, had = 0;
	size_t len, done;
	uint8_t *img;
	FILE *in = fopen(f->path, "rb");

	assert_non_null(in);
	assert_int_equal(fseek(in, 0, SEEK_END), 0);
	len = (size_t)ftell(in);
	rewind(in);
	img = malloc(len);
	assert_non_null(img);
	assert_int_equal(fread(img, 1, len, in), len);
	fclose(in);
	snprintf(grow, sizeof(grow), "%s/grow", f->dir);

	/* the header and a few bytes: an empty run so far */
	done = 40;
	tl_write_file(grow, img, done);
	assert_int_equal(mt_session_open(grow, &follow, &s, NULL), 0);
	assert_int_equal(mt_session_stats(s)->events, 0);
	assert_true(mt_session_end(s)->truncated);
	assert_int_equal(mt_session_poll(s), 0);
	for (int step = 0; done < len; step++) {
		FILE *out = fopen(grow, "ab");
		size_t n = 1 + (size_t)(tl_rand(&seed) % (len / 5));
		int64_t got;

		if (n > len - done)
			n = len - done;
		assert_non_null(out);
		assert_int_equal(fwrite(img + done, 1, n, out), n);
		fclose(out);
		done += n;
		got = mt_session_poll(s);
		assert_true(got >= 0);
		assert_int_equal(had + (uint64_t)got, mt_session_stats(s)->events);
		had += (uint64_t)got;
		assert_int_equal(mt_session_open(grow, &marks, &whole, NULL), 0);
		assert_same_run(s, whole);
		if (step % 2)
			assert_same_points(s, whole);
		mt_session_free(whole);
		/* nothing new: nothing taken */
		assert_int_equal(mt_session_poll(s), 0);
	}
	assert_true(mt_session_end(s)->clean);
	assert_false(mt_session_end(s)->truncated);
	assert_int_equal(had, f->events);
	assert_int_equal(mt_session_open(f->path, &marks, &whole, NULL), 0);
	assert_same_run(s, whole);
	assert_same_points(s, whole);
	/* the side replays of a following session read the log too */
	assert_int_equal(mt_session_only_thread(s, 100), 0);
	assert_int_equal(mt_session_only_thread(whole, 100), 0);
	assert_same_points(s, whole);
	mt_session_free(whole);
	mt_session_free(s);
	/* a session that does not follow cannot poll */
	assert_int_equal(mt_session_open(f->path, &marks, &s, NULL), 0);
	assert_int_equal(mt_session_poll(s), MT_E_ARG);
	mt_session_free(s);
	unlink(grow);
	free(img);
}

/* A LEAK record (format.h) of n entries; tot when last. */
static void leak_record(struct testlog *t, const struct mt_leak_entry *e, size_t n,
			const struct mt_leak_totals *tot)
{
	uint8_t b[1024], *p = b;
	uint64_t prev = 0;

	*p++ = MT_REC_LEAK;
	p += mt_put_uv(p, n);
	for (size_t i = 0; i < n; i++) {
		p += mt_put_uv(p, ((e[i].addr_kind & ~3ull) - prev) << 2 | (e[i].addr_kind & 3));
		p += mt_put_uv(p, e[i].stack);
		p += mt_put_uv(p, e[i].size);
		prev = e[i].addr_kind & ~3ull;
	}
	p += mt_put_uv(p, tot != NULL);
	for (int k = 0; tot && k < MT_LEAK_KINDS; k++) {
		p += mt_put_uv(p, tot->bytes[k]);
		p += mt_put_uv(p, tot->blocks[k]);
	}
	tl_raw(t, b, (size_t)(p - b));
}

/*
 * Leak kinds: 6 blocks live at the end on 3 stacks and 2 threads; a check
 * in two records (one chunk apart) lists 4 of them; the session's
 * profile per kind holds exactly those blocks, the reachable ones the
 * rest, also restricted to one thread; END is classified with the
 * check's totals. A check followed by an event, or none at all: not
 * classified.
 */
static void test_leak_kinds(void **state)
{
	struct fixture *f = *state;
	char path[128];
	static const struct {
		uint64_t addr, size;
		uint32_t stack, thread;
		int kind;
	} b[] = {
		{ 0x1000, 100, 0, 0, MT_LEAK_DEFINITE }, { 0x2000, 48, 1, 0, MT_LEAK_DEFINITE },
		{ 0x2100, 48, 1, 1, MT_LEAK_INDIRECT }, { 0x3000, 200, 2, 1, MT_LEAK_POSSIBLE },
		{ 0x4000, 10, 0, 0, MT_LEAK_REACHABLE }, { 0x5000, 7, 2, 1, MT_LEAK_REACHABLE },
	};
	struct mt_leak_totals tot = { { 148, 48, 200, 17 }, { 2, 1, 1, 2 } };
	const struct mt_leak_entry first[] = {
		{ 0x1000 | MT_LEAK_DEFINITE, 100, 0 }, { 0x2000 | MT_LEAK_DEFINITE, 48, 1 },
	};
	const struct mt_leak_entry second[] = {
		{ 0x2100 | MT_LEAK_INDIRECT, 48, 1 }, { 0x3000 | MT_LEAK_POSSIBLE, 200, 2 },
	};

	snprintf(path, sizeof(path), "%s/leaks", f->dir);
	for (int variant = 0; variant < 3; variant++) {
		struct testlog *t = tl_new_version(9, "leaks", 6, MT_FORMAT_VERSION);
		struct mt_session *s;
		const struct mt_end *e;
		size_t len;
		const uint8_t *img;
		FILE *fp;

		tl_thread(t, 0, 100);
		tl_thread(t, 1, 101);
		for (uint32_t i = 0; i < 3; i++) {
			uint64_t ips[1] = { 0x1000 + 0x10 * i };
			tl_stack(t, i, MT_FN_MALLOC, 1, ips);
		}
		tl_alloc(t, 10, 0x9000, 1, 0, 0);
		for (size_t i = 0; i < sizeof(b) / sizeof(b[0]); i++)
			tl_alloc(t, 10, b[i].addr, b[i].size, b[i].stack, b[i].thread);
		tl_free_block(t, 10, 0x9000, 0);
		if (variant < 2) {
			leak_record(t, first, 2, NULL);
			tl_flush(t);
			leak_record(t, second, 2, &tot);
		}
		if (variant == 1)
			tl_free_block(t, 10, 0x5000, 1);
		tl_end(t, 10, MT_END_EXIT, 0);
		img = tl_image(t, &len);
		assert_non_null(fp = fopen(path, "wb"));
		assert_int_equal(fwrite(img, 1, len, fp), len);
		fclose(fp);
		tl_free(t);

		assert_int_equal(mt_session_open(path, &marks, &s, NULL), 0);
		e = mt_session_end(s);
		assert_true(e->clean);
		assert_false(e->truncated);
		if (variant) {
			struct mt_profile *p;

			assert_false(e->classified);
			assert_int_equal(mt_session_leak_profile(s, MT_LEAK_DEFINITE, &p),
					 MT_E_NOTFOUND);
			mt_session_free(s);
			continue;
		}
		assert_true(e->classified);
		assert_memory_equal(&e->leaks, &tot, sizeof(tot));
		for (int only = -1; only < 2; only++) {
			if (only >= 0)
				assert_int_equal(mt_session_only_thread(s, 100 + only), 0);
			for (unsigned k = 0; k < MT_LEAK_KINDS; k++) {
				struct mt_profile *p;
				struct mt_cost want[3] = { { 0, 0, 0 } };

				for (size_t i = 0; i < sizeof(b) / sizeof(b[0]); i++)
					if ((unsigned)b[i].kind == k &&
					    (only < 0 || b[i].thread == (uint32_t)only)) {
						want[b[i].stack].bytes += (int64_t)b[i].size;
						want[b[i].stack].blocks++;
					}
				assert_int_equal(mt_session_leak_profile(s, k, &p), 0);
				for (uint32_t st = 0; st < 3; st++) {
					struct mt_cost c = mt_profile_get(p, st);

					assert_int_equal(c.bytes, want[st].bytes);
					assert_int_equal(c.blocks, want[st].blocks);
				}
				mt_profile_free(p);
			}
		}
		mt_session_free(s);
	}
	unlink(path);
}

/*
 * A LEAK record naming a block its stack cannot have live (larger than all
 * the stack has live): the log is corrupt there.
 */
static void test_leak_not_live(void **state)
{
	struct fixture *f = *state;
	char path[128];
	struct testlog *t = tl_new_version(9, "x", 2, MT_FORMAT_VERSION);
	struct mt_leak_totals tot = { { 0 }, { 0 } };
	const struct mt_leak_entry bad[] = { { 0x7000 | MT_LEAK_DEFINITE, 9, 0 } };
	struct mt_session *s;
	const uint8_t *img;
	size_t len;
	FILE *fp;
	uint64_t ips[1] = { 0x1000 };

	snprintf(path, sizeof(path), "%s/bad", f->dir);
	tl_thread(t, 0, 100);
	tl_stack(t, 0, MT_FN_MALLOC, 1, ips);
	tl_alloc(t, 10, 0x1000, 8, 0, 0);
	tl_flush(t);
	leak_record(t, bad, 1, &tot);
	tl_end(t, 10, MT_END_EXIT, 0);
	img = tl_image(t, &len);
	assert_non_null(fp = fopen(path, "wb"));
	assert_int_equal(fwrite(img, 1, len, fp), len);
	fclose(fp);
	tl_free(t);
	assert_int_equal(mt_session_open(path, &marks, &s, NULL), 0);
	assert_true(mt_session_end(s)->truncated);
	assert_false(mt_session_end(s)->classified);
	mt_session_free(s);
	unlink(path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_leak_kinds, setup, teardown),
		cmocka_unit_test_setup_teardown(test_leak_not_live, setup, teardown),
		cmocka_unit_test_setup_teardown(test_only_thread, setup, teardown),
		cmocka_unit_test_setup_teardown(test_every_seq, setup, teardown),
		cmocka_unit_test_setup_teardown(test_points, setup, teardown),
		cmocka_unit_test_setup_teardown(test_indexed_times, setup, teardown),
		cmocka_unit_test_setup_teardown(test_stats, setup, teardown),
		cmocka_unit_test_setup_teardown(test_poll, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

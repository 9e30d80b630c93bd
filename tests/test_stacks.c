/*
 * test_stacks.c - unit tests of the recorder's stack tables
 * (recorder/tables.c, mt_stacks): a thread's table keeps a stack as the
 * frames it does not share with an earlier stack of the table, and the
 * log's table points at those records. The truth is a list of the stacks
 * as arrays, compared with what the tables give back: ids equal exactly
 * when frames, entry point and tag path are; every record's frames the
 * stack's; mt_stacks_each in id order. The hashes are made to collide (a
 * hash of a few values for thousands of stacks), so that every lookup
 * compares records and a comparison that skipped frames would merge
 * stacks, which a good hash hides.
 *
 * Not for: the stacks of recorded programs (tests/e2e/rec_stacks.sh,
 * rec_unwind.sh).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "../recorder/tables.c"

#define NSTACKS 3000
#define MAXN    40

struct truth {
	uint64_t ips[MAXN];
	unsigned n, fn;
	uint32_t tag;
	int64_t id;              /* in the thread's table */
	int64_t gid;             /* in the log's */
	const struct mt_stack_rec *rec;
};

/* glibc's random(): the same sequence in every run (main seeds it) */
static uint64_t rnd(void)
{
	return (uint64_t)random() << 31 ^ (uint64_t)random();
}

/* Stacks as a program makes them: each one the previous, or one of the
 * last few, with its inner frames changed (outermost first), now and then
 * one of its own; a few frames apart from each other only in the middle;
 * and equal frames under another entry point or tag path. */
static void make_stacks(struct truth *t, size_t count)
{
	for (size_t i = 0; i < count; i++) {
		struct truth *s = &t[i];
		unsigned r = (unsigned)(rnd() % 10);

		memset(s, 0, sizeof(*s));
		if (i == 0 || r == 0) {
			s->n = 1 + (unsigned)(rnd() % MAXN);
			for (unsigned j = 0; j < s->n; j++)
				s->ips[j] = 0x400000 + rnd() % 64 * 16;
		} else {
			const struct truth *o = &t[i - 1 - rnd() % (i < 8 ? i : 8)];
			unsigned keep = (unsigned)(rnd() % (o->n + 1));

			*s = *o;
			if (r == 1 && o->n > 2) {
				/* one frame in the middle */
				s->ips[o->n / 2] ^= 0x10;
			} else if (r == 2) {
				/* the same frames elsewhere */
				if (rnd() % 2)
					s->fn = o->fn + 1;
				else
					s->tag = o->tag + 1;
			} else {
				s->n = keep + (unsigned)(rnd() % (MAXN - keep + 1));
				for (unsigned j = keep; j < s->n; j++)
					s->ips[j] = 0x400000 + rnd() % 64 * 16;
			}
		}
	}
}

static struct mt_capture cap(const struct truth *s, uint64_t hash)
{
	struct mt_capture c = { s->ips, s->n, s->fn, s->tag, hash, NULL, 0, 0 };
	return c;
}

/* The hash a table is given: of `hashes` values (made to collide), or with
 * hashes 0 a hash of the frames, entry point and tag path spread over 64
 * bits (the table keeps 32 of them). */
static uint64_t hash_of(const struct truth *s, unsigned hashes)
{
	uint64_t h = 0x9E3779B97F4A7C15ull * (s->fn + 1) + s->tag;

	if (hashes)
		return (uint64_t)(s->n % hashes) * 0x10001;
	for (unsigned i = 0; i < s->n; i++)
		h = (h ^ s->ips[i]) * 0xFF51AFD7ED558CCDull;
	return h ^ h >> 29;
}

static int same(const struct truth *a, const struct truth *b)
{
	return a->n == b->n && a->fn == b->fn && a->tag == b->tag &&
	       memcmp(a->ips, b->ips, a->n * sizeof(uint64_t)) == 0;
}

/* Every stack's id, in a table whose hash takes `hashes` values. */
static void intern_all(struct mt_stacks *s, struct truth *t, size_t count, unsigned hashes)
{
	for (size_t i = 0; i < count; i++) {
		struct mt_capture c = cap(&t[i], hash_of(&t[i], hashes));
		int is_new;
		const struct mt_stack_rec *rec = NULL;

		const struct mt_stack_rec *last = s->last;

		t[i].id = mt_stacks_intern(s, &c, &is_new, &rec);
		assert_true(t[i].id >= 0);
		if (!is_new) {
			assert_null(rec);
			continue;
		}
		t[i].rec = rec;
		/* it shares at least what it shares with the stack before it,
		 * when that one may be named */
		if (i && last && last->depth < STACK_DEPTH) {
			unsigned k = 0;
			while (k < t[i].n && k < t[i - 1].n && t[i].ips[k] == t[i - 1].ips[k])
				k++;
			if (k >= STACK_SHARE)
				assert_true(rec->k >= k);
		}
	}
}

static void check_ids(struct mt_stacks *s, struct truth *t, size_t count)
{
	uint64_t out[MT_MAX_DEPTH];
	int64_t next = 0;

	for (size_t i = 0; i < count; i++) {
		int64_t want = -1;

		for (size_t j = 0; j < i && want < 0; j++)
			if (same(&t[i], &t[j]))
				want = t[j].id;
		if (want < 0)
			assert_int_equal(t[i].id, next++);    /* new: the next id */
		else
			assert_int_equal(t[i].id, want);
		/* the record of its id holds its frames */
		const struct mt_stack_rec *r = s->recs[t[i].id];
		assert_int_equal(r->n, t[i].n);
		assert_int_equal(r->fn, t[i].fn);
		assert_int_equal(r->tag, t[i].tag);
		mt_stack_rec_frames(r, out);
		assert_memory_equal(out, t[i].ips, t[i].n * sizeof(uint64_t));
		/* names at most STACK_DEPTH deep, each holding what it lends */
		unsigned depth = 0;
		for (const struct mt_stack_rec *q = r; q->base; q = q->base) {
			assert_true(q->k <= q->base->n);
			assert_true(q->k > q->base->k || !q->base->base);
			depth++;
		}
		assert_true(depth <= STACK_DEPTH);
	}
	assert_int_equal(mt_stacks_count(s), (size_t)next);
}

struct each_ctx {
	const struct truth *t;
	size_t count;
	uint32_t next;
};

static int each_fn(void *ctx, uint32_t id, unsigned efn, uint32_t tag, const uint64_t *ips,
		   unsigned n)
{
	struct each_ctx *e = ctx;

	assert_int_equal(id, e->next++);
	for (size_t i = 0; i < e->count; i++)
		if (e->t[i].id == id) {
			assert_int_equal(n, e->t[i].n);
			assert_int_equal(efn, e->t[i].fn);
			assert_int_equal(tag, e->t[i].tag);
			assert_memory_equal(ips, e->t[i].ips, n * sizeof(uint64_t));
			return 0;
		}
	fail_msg("id %u of no stack", id);
	return 1;
}

/* A thread's table: one id per distinct stack, with hashes of 1, 3 and 40
 * values and a real one (the table grows on the way: 3,000 stacks, 1,024
 * slots to begin with). */
static void test_local(void **state)
{
	static struct truth t[NSTACKS];
	static const unsigned hashes[] = { 1, 3, 40, 0 };
	(void)state;

	for (size_t h = 0; h < sizeof(hashes) / sizeof(hashes[0]); h++) {
		struct mt_stacks *s = mt_stacks_new(0);

		assert_non_null(s);
		make_stacks(t, NSTACKS);
		intern_all(s, t, NSTACKS, hashes[h]);
		check_ids(s, t, NSTACKS);
		/* again, in reverse: every one found, none added */
		size_t before = mt_stacks_count(s);
		for (size_t i = NSTACKS; i-- > 0;) {
			struct mt_capture c = cap(&t[i], hash_of(&t[i], hashes[h]));
			int is_new;

			assert_int_equal(mt_stacks_intern(s, &c, &is_new, NULL), t[i].id);
			assert_false(is_new);
		}
		assert_int_equal(mt_stacks_count(s), before);
		struct each_ctx e = { t, NSTACKS, 0 };
		assert_int_equal(mt_stacks_each(s, each_fn, &e), 0);
		assert_int_equal(e.next, before);
		mt_stacks_free(s);
	}
}

/* The log's table over two threads' tables that hold the same stacks and
 * others of their own: one id per distinct stack, whichever thread's
 * record it was first seen with. */
static void test_log(void **state)
{
	static struct truth a[NSTACKS], b[NSTACKS];
	(void)state;
	struct mt_stacks *ta = mt_stacks_new(0), *tb = mt_stacks_new(0), *log = mt_stacks_new(1);

	assert_non_null(ta);
	assert_non_null(tb);
	assert_non_null(log);
	make_stacks(a, NSTACKS);
	memcpy(b, a, sizeof(a));
	make_stacks(b + NSTACKS / 2, NSTACKS / 2);  /* the second half: b's own */
	intern_all(ta, a, NSTACKS, 5);
	intern_all(tb, b, NSTACKS, 5);
	/* the drain: each thread's new stacks, in turns, as its records */
	uint64_t ips[MT_MAX_DEPTH];
	for (size_t i = 0; i < NSTACKS; i++)
		for (int w = 0; w < 2; w++) {
			struct truth *s = w ? &b[i] : &a[i];
			if (!s->rec)
				continue;
			mt_stack_rec_frames(s->rec, ips);
			struct mt_capture c = { ips, s->n, s->fn, s->tag, hash_of(s, 5), s->rec, 0, 0 };
			int is_new;
			s->gid = mt_stacks_intern(log, &c, &is_new, NULL);
			assert_true(s->gid >= 0);
		}
	/* stacks seen again take the id of their record */
	for (int w = 0; w < 2; w++) {
		struct truth *t = w ? b : a;
		for (size_t i = 0; i < NSTACKS; i++)
			if (!t[i].rec)
				for (size_t j = 0; j < i; j++)
					if (t[j].rec && t[j].id == t[i].id) {
						t[i].gid = t[j].gid;
						break;
					}
	}
	/* equal stacks, one id; different ones, different ids */
	size_t distinct = 0;
	for (size_t i = 0; i < 2 * NSTACKS; i++) {
		const struct truth *x = i < NSTACKS ? &a[i] : &b[i - NSTACKS];
		int first = 1;
		for (size_t j = 0; j < i; j++) {
			const struct truth *y = j < NSTACKS ? &a[j] : &b[j - NSTACKS];
			if (same(x, y)) {
				assert_int_equal(x->gid, y->gid);
				first = 0;
			} else {
				assert_int_not_equal(x->gid, y->gid);
			}
		}
		distinct += first;
	}
	assert_int_equal(mt_stacks_count(log), distinct);
	mt_stacks_free(log);
	mt_stacks_free(ta);
	mt_stacks_free(tb);
}

/* A stack of no frames, and a stack whose frames are all another's
 * first ones. */
static void test_edges(void **state)
{
	(void)state;
	struct mt_stacks *s = mt_stacks_new(0);
	static const uint64_t f[] = { 1, 2, 3, 4, 5, 6, 7, 8 };
	struct mt_capture empty = { NULL, 0, 0, 0, 7, NULL, 0, 0 };
	struct mt_capture full = { f, 8, 0, 0, 7, NULL, 0, 0 }, part = { f, 5, 0, 0, 7, NULL, 0, 0 };
	const struct mt_stack_rec *r;
	uint64_t out[8];
	int is_new;

	assert_non_null(s);
	assert_int_equal(mt_stacks_intern(s, &full, &is_new, NULL), 0);
	assert_int_equal(mt_stacks_intern(s, &empty, &is_new, &r), 1);
	assert_true(is_new);
	assert_int_equal(r->n, 0);
	assert_int_equal(mt_stacks_intern(s, &full, &is_new, NULL), 0);
	assert_int_equal(mt_stacks_intern(s, &part, &is_new, &r), 2);
	assert_true(is_new);
	assert_true(r->base != NULL);       /* all five shared */
	assert_int_equal(r->k, 5);
	mt_stack_rec_frames(r, out);
	assert_memory_equal(out, f, 5 * sizeof(uint64_t));
	assert_int_equal(mt_stacks_intern(s, &empty, &is_new, NULL), 1);
	assert_false(is_new);
	mt_stacks_free(s);
}

int main(void)
{
	srandom(1);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_local),
		cmocka_unit_test(test_log),
		cmocka_unit_test(test_edges),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

/*
 * test_replay.c - unit tests of lib/replay.c: every record kind, realloc
 * and free semantics, corruption, logs cut at every byte, early stop, a
 * live table stressed with many blocks, and END's figures read from the
 * last chunk alone. Logs come from tests/testlog.c.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <unistd.h>

#include <cmocka.h>

#include "error.h"
#include "format.h"
#include "replay.h"
#include "testlog.c"
#include "reader.h"
#include "writer.h"

/* What the consumer saw, one entry per callback. */
struct seen {
	char kind;            /* 'a' alloc, 'f' free, 's' snapshot */
	struct mt_event ev;
	uint32_t index;
	char label[32];
};

struct rec {
	struct seen *v;
	size_t n, cap;
	int ends, headers, stop_at;  /* stop when n reaches stop_at (if > 0) */
	struct mt_end end;
	uint32_t threads[8];
	char names[8][20];
	size_t nmods, nstacks, progress;
	const struct mt_stack *stack0;
	uint64_t unload_base;
	char tags[4][24];     /* on_tag's paths, by id - 1 */
	uint32_t tag_parent[4];
	size_t run_take;      /* on_run takes at most this many (0: all) */
	size_t runs;          /* on_run's calls */
};

struct fix {
	char dir[64];
	char path[128];
	struct rec rec;
};

static struct seen *push(struct rec *r)
{
	if (r->n == r->cap) {
		r->cap = r->cap ? r->cap * 2 : 64;
		r->v = realloc(r->v, r->cap * sizeof(*r->v));
		assert_non_null(r->v);
	}
	memset(&r->v[r->n], 0, sizeof(r->v[0]));
	return &r->v[r->n++];
}

static int on_alloc(void *ctx, const struct mt_event *ev)
{
	struct rec *r = ctx;
	struct seen *s = push(r);

	s->kind = 'a';
	s->ev = *ev;
	return r->stop_at && (int)r->n >= r->stop_at;
}

static int on_free(void *ctx, const struct mt_event *ev)
{
	struct rec *r = ctx;
	struct seen *s = push(r);

	s->kind = 'f';
	s->ev = *ev;
	return r->stop_at && (int)r->n >= r->stop_at;
}

static int on_snapshot(void *ctx, const struct mt_snapshot *sn)
{
	struct rec *r = ctx;
	struct seen *s = push(r);

	s->kind = 's';
	s->index = sn->index;
	s->ev.seq = sn->seq;
	s->ev.time_ns = sn->time_ns;
	snprintf(s->label, sizeof(s->label), "%s", sn->label);
	return 0;
}

static void on_end(void *ctx, const struct mt_end *e)
{
	struct rec *r = ctx;

	r->ends++;
	r->end = *e;
}

static void on_header(void *ctx, const struct mt_header *h)
{
	(void)h;
	((struct rec *)ctx)->headers++;
}

static void on_thread(void *ctx, uint32_t index, uint32_t tid)
{
	struct rec *r = ctx;

	if (index < 8)
		r->threads[index] = tid;
}

static void on_thread_name(void *ctx, uint32_t index, const char *name)
{
	struct rec *r = ctx;

	if (index < 8)
		snprintf(r->names[index], sizeof(r->names[index]), "%s", name);
}

static void on_stack(void *ctx, const struct mt_stack *s)
{
	struct rec *r = ctx;

	if (s->id == 0)
		r->stack0 = s;
	r->nstacks++;
}

static void on_module(void *ctx, const struct mt_module *m)
{
	(void)m;
	((struct rec *)ctx)->nmods++;
}

static void on_unload(void *ctx, uint64_t base, uint64_t t)
{
	(void)t;
	((struct rec *)ctx)->unload_base = base;
}

static void on_progress(void *ctx, uint64_t done, uint64_t total)
{
	(void)done; (void)total;
	((struct rec *)ctx)->progress++;
}

static void on_tag(void *ctx, uint32_t id, uint32_t parent, const char *path)
{
	struct rec *r = ctx;

	if (id >= 1 && id <= 4) {
		snprintf(r->tags[id - 1], sizeof(r->tags[0]), "%s", path);
		r->tag_parent[id - 1] = parent;
	}
}

static const struct mt_replay_ops ops = {
	.on_header = on_header, .on_module = on_module, .on_unload = on_unload,
	.on_thread = on_thread, .on_thread_name = on_thread_name, .on_stack = on_stack,
	.on_tag = on_tag,
	.on_alloc = on_alloc,
	.on_free = on_free, .on_snapshot = on_snapshot, .on_end = on_end,
	.on_progress = on_progress,
};

static void rec_reset(struct rec *r)
{
	free(r->v);
	memset(r, 0, sizeof(*r));
}

static int setup(void **state)
{
	struct fix *f = calloc(1, sizeof(*f));

	if (!f)
		return -1;
	strcpy(f->dir, "/tmp/mt-test-replay.XXXXXX");
	if (!mkdtemp(f->dir))
		return -1;
	snprintf(f->path, sizeof(f->path), "%s/log", f->dir);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fix *f = *state;

	rec_reset(&f->rec);
	unlink(f->path);
	rmdir(f->dir);
	free(f);
	return 0;
}

/* Writes t to f->path, replays it into f->rec; returns mt_replay_run's result. */
static int replay(struct fix *f, struct testlog *t, struct mt_replay **out)
{
	struct mt_replay *r;
	int rc;

	if (t)
		tl_write(t, f->path);
	rc = mt_replay_open(f->path, &r, NULL);
	assert_int_equal(rc, 0);
	rec_reset(&f->rec);
	rc = mt_replay_run(r, &ops, &f->rec);
	if (out)
		*out = r;
	else
		mt_replay_free(r);
	return rc;
}

static struct testlog *new_log_version(unsigned version)
{
	static const char cmd[] = "./prog\0-v\0";
	static const uint64_t ips0[] = { 0x401234, 0x401000, 0x7f0000001000 };
	static const uint64_t ips1[] = { 0x402000 };
	struct testlog *t = tl_new_version(77, cmd, sizeof(cmd) - 1, version);

	tl_thread(t, 0, 77);
	tl_stack(t, 0, MT_FN_MALLOC, 3, ips0);
	tl_stack(t, 1, MT_FN_CALLOC, 1, ips1);
	return t;
}

static struct testlog *new_log(void)
{
	return new_log_version(TL_VERSION);
}

static void assert_event(const struct seen *s, char kind, uint64_t seq, uint64_t time,
			 uint64_t addr, uint64_t size, uint32_t stack, uint32_t thread,
			 int realloc)
{
	assert_int_equal(s->kind, kind);
	assert_int_equal(s->ev.seq, seq);
	assert_int_equal(s->ev.time_ns, time);
	assert_int_equal(s->ev.addr, addr);
	assert_int_equal(s->ev.size, size);
	assert_int_equal(s->ev.stack, stack);
	assert_int_equal(s->ev.thread, thread);
	assert_int_equal(s->ev.realloc, realloc);
}

static void test_basic(void **state)
{
	struct fix *f = *state;
	struct testlog *t = new_log();
	const struct mt_header *h;
	const struct mt_stack *s;
	struct mt_replay *r;

	tl_alloc(t, 100, 0x5000, 32, 0, 0);        /* seq 0, t=100 */
	tl_alloc(t, 50, 0x4000, 8, 1, 0);          /* seq 1, t=150 (address goes down) */
	tl_free_block(t, 25, 0x5000, 0);           /* seq 2, t=175 */
	tl_end(t, 5, MT_END_EXIT, 3);
	assert_int_equal(replay(f, t, &r), 0);
	h = mt_replay_header(r);
	assert_int_equal(h->pid, 77);
	assert_string_equal(h->cmdline, "./prog -v");
	assert_int_equal(h->argc, 2);
	assert_string_equal(h->argv[0], "./prog");
	assert_string_equal(h->argv[1], "-v");
	assert_int_equal(f->rec.headers, 1);
	assert_int_equal(f->rec.n, 3);
	assert_event(&f->rec.v[0], 'a', 0, 100, 0x5000, 32, 0, 0, 0);
	assert_event(&f->rec.v[1], 'a', 1, 150, 0x4000, 8, 1, 0, 0);
	assert_event(&f->rec.v[2], 'f', 2, 175, 0x5000, 32, 0, 0, 0);
	assert_int_equal(f->rec.ends, 1);
	assert_int_equal(f->rec.end.clean, 1);
	assert_int_equal(f->rec.end.how, MT_END_EXIT);
	assert_int_equal(f->rec.end.code, 3);
	assert_int_equal(f->rec.end.time_ns, 180);
	assert_int_equal(f->rec.end.events, 3);
	assert_int_equal(f->rec.end.truncated, 0);
	assert_int_equal(f->rec.end.error, 0);
	assert_int_equal(f->rec.threads[0], 77);
	assert_int_equal(mt_replay_nthreads(r), 1);
	assert_int_equal(mt_replay_nstacks(r), 2);
	s = mt_replay_stack(r, 0);
	assert_non_null(s);
	assert_int_equal(s->fn, MT_FN_MALLOC);
	assert_int_equal(s->depth, 3);
	assert_int_equal(s->ips[0], 0x401234);
	assert_int_equal(s->ips[1], 0x401000);
	assert_int_equal(s->ips[2], 0x7f0000001000);
	assert_null(mt_replay_stack(r, 2));
	/* A second run gives the same events and keeps stack pointers valid. */
	rec_reset(&f->rec);
	assert_int_equal(mt_replay_run(r, &ops, &f->rec), 0);
	assert_int_equal(f->rec.n, 3);
	assert_ptr_equal(f->rec.stack0, s);
	assert_int_equal(s->ips[2], 0x7f0000001000);
	mt_replay_free(r);
	tl_free(t);
}

static void test_realloc_halves(void **state)
{
	struct fix *f = *state;
	struct testlog *t = new_log();

	tl_alloc(t, 1, 0x1000, 10, 0, 0);          /* seq 0 */
	tl_realloc(t, 1, 0x1000, 0x2000, 20, 1, 0); /* seq 1: moves */
	tl_realloc(t, 1, 0x2000, 0x2000, 30, 1, 0); /* seq 2: in place */
	tl_realloc(t, 1, 0x9000, 0x3000, 40, 0, 0); /* seq 3: old never live */
	tl_end(t, 0, MT_END_EXIT, 0);
	assert_int_equal(replay(f, t, NULL), 0);
	assert_int_equal(f->rec.n, 6);
	assert_event(&f->rec.v[0], 'a', 0, 1, 0x1000, 10, 0, 0, 0);
	assert_event(&f->rec.v[1], 'f', 1, 2, 0x1000, 10, 0, 0, 1);
	assert_event(&f->rec.v[2], 'a', 1, 2, 0x2000, 20, 1, 0, 1);
	assert_event(&f->rec.v[3], 'f', 2, 3, 0x2000, 20, 1, 0, 1);
	assert_event(&f->rec.v[4], 'a', 2, 3, 0x2000, 30, 1, 0, 1);
	assert_event(&f->rec.v[5], 'a', 3, 4, 0x3000, 40, 0, 0, 1);
	tl_free(t);
}

static void test_unknown_free_and_cross_thread(void **state)
{
	struct fix *f = *state;
	struct testlog *t = new_log();

	tl_thread(t, 1, 78);
	tl_free_block(t, 1, 0xdead0, 0);           /* seq 0: never live, ignored */
	tl_alloc(t, 1, 0x1000, 10, 0, 0);          /* seq 1, thread 0 */
	tl_free_block(t, 1, 0x1000, 1);            /* seq 2, freed by thread 1 */
	tl_free_block(t, 1, 0x1000, 1);            /* seq 3: double free, ignored */
	tl_alloc(t, 1, 0x1000, 5, 1, 1);           /* seq 4 */
	tl_alloc(t, 1, 0x1000, 6, 1, 1);           /* seq 5: address still live */
	assert_int_equal(replay(f, t, NULL), 0);
	assert_int_equal(f->rec.threads[1], 78);
	assert_int_equal(f->rec.n, 5);
	assert_event(&f->rec.v[0], 'a', 1, 2, 0x1000, 10, 0, 0, 0);
	assert_event(&f->rec.v[1], 'f', 2, 3, 0x1000, 10, 0, 1, 0);
	assert_event(&f->rec.v[2], 'a', 4, 5, 0x1000, 5, 1, 1, 0);
	/* The unrecorded free of the old block, then the new block. */
	assert_event(&f->rec.v[3], 'f', 5, 6, 0x1000, 5, 1, 1, 0);
	assert_event(&f->rec.v[4], 'a', 5, 6, 0x1000, 6, 1, 1, 0);
	/* No END record: the log counts as truncated, with no error. */
	assert_int_equal(f->rec.end.clean, 0);
	assert_int_equal(f->rec.end.truncated, 1);
	assert_int_equal(f->rec.end.error, 0);
	assert_int_equal(f->rec.end.events, 6);
	tl_free(t);
}

/*
 * A free says which thread allocated the block it releases (alloc_thread),
 * whatever thread frees it, also past the packed value's thread field;
 * THREAD_NAME names a thread, and a later one replaces it.
 */
static void test_alloc_thread_and_names(void **state)
{
	struct fix *f = *state;
	struct testlog *t = new_log();
	const uint32_t far = 4100;                  /* past the packed field (4095) */
	struct mt_replay *r;
	const char *name;
	uint32_t tid;

	tl_thread(t, 1, 78);
	for (uint32_t i = 2; i < far; i++)
		tl_thread(t, i, 100 + i);
	tl_thread(t, far, 99);
	tl_thread_name(t, 1, "worker");
	tl_alloc(t, 1, 0x1000, 10, 0, 1);           /* seq 0, thread 1 */
	tl_alloc(t, 1, 0x2000, 20, 1, far);         /* seq 1, thread far */
	tl_free_block(t, 1, 0x1000, 0);             /* seq 2, thread 0 frees 1's */
	tl_realloc(t, 1, 0x2000, 0x3000, 30, 0, 1); /* seq 3, thread 1 moves far's */
	tl_alloc(t, 1, 0x3000, 5, 0, 0);            /* seq 4: 0x3000 still live */
	tl_thread_name(t, far, "pool-1");
	tl_thread_name(t, far, "pool-2");
	tl_end(t, 0, MT_END_EXIT, 0);
	assert_int_equal(replay(f, t, &r), 0);
	assert_int_equal(f->rec.n, 7);
	assert_int_equal(f->rec.v[0].ev.alloc_thread, 1);
	assert_int_equal(f->rec.v[1].ev.alloc_thread, far);
	assert_event(&f->rec.v[2], 'f', 2, 3, 0x1000, 10, 0, 0, 0);
	assert_int_equal(f->rec.v[2].ev.alloc_thread, 1);
	assert_event(&f->rec.v[3], 'f', 3, 4, 0x2000, 20, 1, 1, 1);
	assert_int_equal(f->rec.v[3].ev.alloc_thread, far);
	assert_int_equal(f->rec.v[4].ev.alloc_thread, 1);
	assert_event(&f->rec.v[5], 'f', 4, 5, 0x3000, 30, 0, 0, 0);
	assert_int_equal(f->rec.v[5].ev.alloc_thread, 1);
	assert_string_equal(f->rec.names[1], "worker");
	assert_int_equal(mt_replay_nthreads(r), far + 1);
	assert_int_equal(mt_replay_thread(r, 1, &tid, &name), 0);
	assert_int_equal(tid, 78);
	assert_string_equal(name, "worker");
	assert_int_equal(mt_replay_thread(r, far, &tid, &name), 0);
	assert_int_equal(tid, 99);
	assert_string_equal(name, "pool-2");
	assert_int_equal(mt_replay_thread(r, 0, &tid, &name), 0);
	assert_null(name);
	assert_int_equal(mt_replay_thread(r, far + 1, &tid, &name), MT_E_NOTFOUND);
	mt_replay_free(r);
	tl_free(t);
}

/* THREAD_NAME is version 3's: in a version 2 log, or for a thread never
 * announced, the record is corrupt. */
static void test_thread_name_corrupt(void **state)
{
	struct fix *f = *state;
	for (unsigned v = 2; v <= MT_FORMAT_VERSION; v++) {
		struct testlog *t = new_log_version(v);

		tl_alloc(t, 1, 0x1000, 10, 0, 0);
		tl_flush(t);
		tl_thread_name(t, 0, "main");
		tl_end(t, 0, MT_END_EXIT, 0);
		assert_int_equal(replay(f, t, NULL), 0);
		if (v >= 3) {
			assert_int_equal(f->rec.end.error, 0);
			assert_string_equal(f->rec.names[0], "main");
		} else {
			assert_int_equal(f->rec.end.error, MT_E_CORRUPT);
			assert_int_equal(f->rec.end.error_offset, tl_chunk_offset(t, 1));
			assert_int_equal(f->rec.n, 1);
		}
		tl_free(t);
	}
	struct testlog *t = new_log();

	tl_thread_name(t, 1, "ghost");
	tl_end(t, 0, MT_END_EXIT, 0);
	assert_int_equal(replay(f, t, NULL), 0);
	assert_int_equal(f->rec.end.error, MT_E_CORRUPT);
	tl_free(t);
}

/*
 * Version 5's address state per thread (format.h): threads free each
 * other's blocks at addresses their own histories hold from older blocks;
 * every free ends the block allocated last at its address, in version 4's
 * one state as in version 5's sixteen (thread 16 shares thread 0's).
 */
static void test_thread_states(void **state)
{
	struct fix *f = *state;
	static const struct { char kind; uint64_t addr, size; uint32_t stack, thread; } want[] = {
		{ 'a', 0xa000, 8, 0, 0 }, { 'a', 0x7000, 16, 1, 1 }, { 'f', 0xa000, 8, 0, 0 },
		{ 'a', 0xa000, 16, 1, 1 }, { 'f', 0xa000, 16, 1, 0 }, { 'a', 0xa000, 8, 0, 0 },
		{ 'f', 0xa000, 8, 0, 1 }, { 'a', 0xb000, 4, 1, 1 }, { 'f', 0xb000, 4, 1, 1 },
		{ 'a', 0xc000, 8, 0, 16 }, { 'f', 0xc000, 8, 0, 0 }, { 'f', 0x7000, 16, 1, 1 },
	};

	for (unsigned v = 4; v <= MT_FORMAT_VERSION; v++) {
		struct testlog *t = new_log_version(v);

		for (uint32_t i = 1; i <= MT_ADDR_STATES; i++)
			tl_thread(t, i, 77 + i);
		tl_alloc(t, 1, 0xa000, 8, 0, 0);
		tl_alloc(t, 1, 0x7000, 16, 1, 1);
		tl_free_block(t, 1, 0xa000, 0);
		tl_alloc(t, 1, 0xa000, 16, 1, 1);
		tl_free_block(t, 1, 0xa000, 0);
		tl_alloc(t, 1, 0xa000, 8, 0, 0);
		tl_realloc(t, 1, 0xa000, 0xb000, 4, 1, 1);
		tl_free_block(t, 1, 0xb000, 1);
		tl_alloc(t, 1, 0xc000, 8, 0, MT_ADDR_STATES);
		tl_free_block(t, 1, 0xc000, 0);
		tl_free_block(t, 1, 0x7000, 1);
		tl_end(t, 0, MT_END_EXIT, 0);
		assert_int_equal(replay(f, t, NULL), 0);
		assert_int_equal(f->rec.end.error, 0);
		assert_int_equal(f->rec.n, sizeof(want) / sizeof(want[0]));
		for (size_t i = 0; i < f->rec.n; i++) {
			const struct seen *s = &f->rec.v[i];

			assert_int_equal(s->kind, want[i].kind);
			assert_true(s->ev.addr == want[i].addr);
			assert_int_equal(s->ev.size, want[i].size);
			assert_int_equal(s->ev.stack, want[i].stack);
			assert_int_equal(s->ev.thread, want[i].thread);
		}
		tl_free(t);
	}
}

/* TAG defines tag paths in order, a STACK names one; both kept by the
 * replay. Out of order, unknown parents or tags, and TAG before version 4
 * are corrupt. */
static void test_tags(void **state)
{
	struct fix *f = *state;
	static const uint64_t ip = 0x403000;
	struct testlog *t = new_log_version(MT_FORMAT_VERSION);
	struct mt_replay *r;

	tl_tag(t, 1, 0, "parser");
	tl_tag(t, 2, 1, "lexer");
	tl_tag(t, 3, 0, "io");
	tl_stack_tagged(t, 2, MT_FN_MALLOC, 2, 1, &ip);
	tl_alloc(t, 1, 0x1000, 10, 2, 0);
	tl_end(t, 0, MT_END_EXIT, 0);
	assert_int_equal(replay(f, t, &r), 0);
	assert_int_equal(f->rec.end.error, 0);
	assert_string_equal(f->rec.tags[0], "parser");
	assert_string_equal(f->rec.tags[1], "parser/lexer");
	assert_int_equal(f->rec.tag_parent[1], 1);
	assert_string_equal(f->rec.tags[2], "io");
	assert_int_equal(mt_replay_ntags(r), 3);
	assert_string_equal(mt_replay_tag(r, 0), "");
	assert_string_equal(mt_replay_tag(r, 2), "parser/lexer");
	assert_null(mt_replay_tag(r, 4));
	assert_int_equal(mt_replay_stack(r, 2)->tag, 2);
	assert_int_equal(mt_replay_stack(r, 0)->tag, 0);
	/* a second run keeps the strings */
	const char *p2 = mt_replay_tag(r, 2);
	assert_int_equal(mt_replay_run(r, &ops, &f->rec), 0);
	assert_ptr_equal(mt_replay_tag(r, 2), p2);
	mt_replay_free(r);
	tl_free(t);

	/* the corrupt ones: each stops the replay in its chunk */
	for (int k = 0; k < 5; k++) {
		t = new_log_version(k == 4 ? 3 : MT_FORMAT_VERSION);
		tl_alloc(t, 1, 0x1000, 10, 0, 0);
		tl_flush(t);
		switch (k) {
		case 0: tl_tag(t, 2, 0, "skips"); break;
		case 1: tl_tag(t, 1, 1, "own parent"); break;
		case 2: tl_tag(t, 1, 0, ""); break;
		case 3: tl_stack_tagged(t, 2, MT_FN_MALLOC, 1, 1, &ip); break;
		case 4: tl_tag(t, 1, 0, "v3"); break;
		}
		tl_end(t, 0, MT_END_EXIT, 0);
		assert_int_equal(replay(f, t, NULL), 0);
		assert_int_equal(f->rec.end.error, MT_E_CORRUPT);
		assert_int_equal(f->rec.end.error_offset, tl_chunk_offset(t, 1));
		assert_int_equal(f->rec.n, 1);
		tl_free(t);
	}
}

/*
 * A sampled log (format.h SAMPLE, mean 1024): each size the log gives is
 * weighed s / p, p = 1 - exp(-s / 1024), worked out here: 64 B stands for
 * 64 / 0.0605869 = 1,056 B, 512 B for 512 / 0.3934693 = 1,301 B, and a
 * 1 MiB block (p = 1 in double precision) for itself; each free names the
 * figure its allocation added (a realloc's old half too). And the corrupt
 * ones: SAMPLE after an event, twice, with mean 0, in a version 3 log, with
 * a mean past 2^40 (MT_SAMPLE_MAX); and a log whose weighed bytes allocated
 * would pass INT64_MAX though its recorded ones do not: a block of
 * INT64_MAX - 2^39 B (p = 1, itself), then one of 1 B, which stands for
 * about 2^40 B at mean 2^40.
 */
static void test_sampled(void **state)
{
	struct fix *f = *state;
	static const uint8_t sample[] = { MT_REC_SAMPLE, 0x80, 0x08 };   /* 1024 */
	static const uint8_t zero[] = { MT_REC_SAMPLE, 0 };
	struct testlog *t = new_log_version(MT_FORMAT_VERSION);
	struct mt_replay *r;

	tl_raw(t, sample, sizeof(sample));
	tl_alloc(t, 1, 0x1000, 64, 0, 0);
	tl_alloc(t, 1, 0x2000, 1 << 20, 1, 0);
	tl_realloc(t, 1, 0x1000, 0x3000, 512, 0, 0);
	tl_free_block(t, 1, 0x2000, 0);
	tl_free_block(t, 1, 0x3000, 0);
	tl_end(t, 0, MT_END_EXIT, 0);
	assert_int_equal(replay(f, t, &r), 0);
	assert_int_equal(f->rec.end.error, 0);
	assert_int_equal(mt_replay_sample(r), 1024);
	assert_int_equal(f->rec.n, 6);
	assert_event(&f->rec.v[0], 'a', 0, 1, 0x1000, 1056, 0, 0, 0);
	assert_event(&f->rec.v[1], 'a', 1, 2, 0x2000, 1 << 20, 1, 0, 0);
	assert_event(&f->rec.v[2], 'f', 2, 3, 0x1000, 1056, 0, 0, 1);
	assert_event(&f->rec.v[3], 'a', 2, 3, 0x3000, 1301, 0, 0, 1);
	assert_event(&f->rec.v[4], 'f', 3, 4, 0x2000, 1 << 20, 1, 0, 0);
	assert_event(&f->rec.v[5], 'f', 4, 5, 0x3000, 1301, 0, 0, 0);
	mt_replay_free(r);
	tl_free(t);

	/* an unsampled log says 0 */
	t = new_log_version(MT_FORMAT_VERSION);
	tl_alloc(t, 1, 0x1000, 64, 0, 0);
	tl_end(t, 0, MT_END_EXIT, 0);
	assert_int_equal(replay(f, t, &r), 0);
	assert_int_equal(mt_replay_sample(r), 0);
	assert_int_equal(f->rec.v[0].ev.size, 64);
	mt_replay_free(r);
	tl_free(t);

	for (int k = 0; k < 6; k++) {
		uint8_t big[16] = { MT_REC_SAMPLE };
		size_t nbig = 1 + mt_put_uv(big + 1, MT_SAMPLE_MAX + (k == 4));

		t = new_log_version(k == 3 ? 3 : MT_FORMAT_VERSION);
		tl_flush(t);
		switch (k) {
		case 0: tl_alloc(t, 1, 0x1000, 64, 0, 0); tl_raw(t, sample, sizeof(sample)); break;
		case 1: tl_raw(t, sample, sizeof(sample)); tl_raw(t, sample, sizeof(sample)); break;
		case 2: tl_raw(t, zero, sizeof(zero)); break;
		case 3: tl_raw(t, sample, sizeof(sample)); break;
		case 4: tl_raw(t, big, nbig); break;
		case 5:
			tl_raw(t, big, nbig);
			tl_alloc(t, 1, 0x1000, (uint64_t)INT64_MAX - (1ull << 39), 0, 0);
			tl_alloc(t, 1, 0x2000, 1, 0, 0);
			break;
		}
		tl_end(t, 0, MT_END_EXIT, 0);
		assert_int_equal(replay(f, t, NULL), 0);
		assert_int_equal(f->rec.end.error, MT_E_CORRUPT);
		assert_int_equal(f->rec.end.error_offset, tl_chunk_offset(t, 1));
		tl_free(t);
	}
}

static void test_snapshots_modules_stop(void **state)
{
	struct fix *f = *state;
	struct testlog *t = new_log();
	static const uint8_t bid[] = { 0xde, 0xad, 0xbe, 0xef };
	static const uint64_t segs[] = { 0x400000, 0x1000, 0x600000, 0x2000 };
	const struct mt_module *m;
	struct mt_replay *r;

	tl_module(t, 7, 0x400000, "/usr/bin/prog", bid, 4, 2, segs);
	tl_snapshot(t, 3, 0, "");                  /* seq 0 t=10 */
	tl_alloc(t, 1, 0x1000, 10, 0, 0);          /* seq 1 */
	tl_flush(t);
	tl_snapshot(t, 4, 1, "loaded");            /* seq 2 t=15, second chunk */
	tl_unload(t, 1, 0x400000);
	tl_stop(t, 1, "disk full");
	tl_end(t, 1, MT_END_SIGNAL, 11);
	assert_int_equal(replay(f, t, &r), 0);
	assert_int_equal(f->rec.n, 3);
	assert_int_equal(f->rec.v[0].kind, 's');
	assert_int_equal(f->rec.v[0].index, 0);
	assert_int_equal(f->rec.v[0].ev.seq, 0);
	assert_int_equal(f->rec.v[0].ev.time_ns, 10);
	assert_string_equal(f->rec.v[0].label, "");
	assert_int_equal(f->rec.v[2].kind, 's');
	assert_int_equal(f->rec.v[2].index, 1);
	assert_int_equal(f->rec.v[2].ev.seq, 2);
	assert_int_equal(f->rec.v[2].ev.time_ns, 15);
	assert_string_equal(f->rec.v[2].label, "loaded");
	assert_int_equal(mt_replay_nmodules(r), 1);
	m = mt_replay_module(r, 0);
	assert_string_equal(m->path, "/usr/bin/prog");
	assert_int_equal(m->time_ns, 7);
	assert_int_equal(m->base, 0x400000);
	assert_int_equal(m->build_id_len, 4);
	assert_memory_equal(m->build_id, bid, 4);
	assert_int_equal(m->nseg, 2);
	assert_int_equal(m->segs[1].start, 0x600000);
	assert_int_equal(m->segs[1].size, 0x2000);
	assert_int_equal(f->rec.unload_base, 0x400000);
	assert_string_equal(f->rec.end.stop_reason, "disk full");
	assert_int_equal(f->rec.end.how, MT_END_SIGNAL);
	assert_int_equal(f->rec.end.code, 11);
	assert_int_equal(f->rec.end.time_ns, 18);
	assert_int_equal(f->rec.end.truncated, 0);
	mt_replay_free(r);
	tl_free(t);
}

/*
 * Blocks whose size or stack do not fit the live table's packed value
 * (4 GiB or more) come back whole, and their overflow entries are reused;
 * a block at address 0 is a block like another.
 */
static void test_odd_blocks(void **state)
{
	struct fix *f = *state;
	struct testlog *t = new_log();
	const uint64_t big = (1ull << 41) + 5;

	tl_alloc(t, 1, 0x1000, big, 1, 0);           /* seq 0 */
	tl_alloc(t, 1, 0x2000, 7, 0, 0);             /* seq 1 */
	tl_alloc(t, 1, 0, 9, 1, 0);                  /* seq 2: address 0 */
	tl_free_block(t, 1, 0x1000, 0);              /* seq 3 */
	tl_alloc(t, 1, 0x3000, big + 1, 0, 0);       /* seq 4: reuses the entry */
	tl_realloc(t, 1, 0x3000, 0x4000, big + 2, 1, 0); /* seq 5 */
	tl_free_block(t, 1, 0, 0);                   /* seq 6 */
	tl_free_block(t, 1, 0x4000, 0);              /* seq 7 */
	tl_free_block(t, 1, 0x2000, 0);              /* seq 8 */
	tl_end(t, 0, MT_END_EXIT, 0);
	assert_int_equal(replay(f, t, NULL), 0);
	assert_int_equal(f->rec.n, 10);
	assert_event(&f->rec.v[3], 'f', 3, 4, 0x1000, big, 1, 0, 0);
	assert_event(&f->rec.v[5], 'f', 5, 6, 0x3000, big + 1, 0, 0, 1);
	assert_event(&f->rec.v[6], 'a', 5, 6, 0x4000, big + 2, 1, 0, 1);
	assert_event(&f->rec.v[7], 'f', 6, 7, 0, 9, 1, 0, 0);
	assert_event(&f->rec.v[8], 'f', 7, 8, 0x4000, big + 2, 1, 0, 0);
	assert_event(&f->rec.v[9], 'f', 8, 9, 0x2000, 7, 0, 0, 0);
	tl_free(t);
}

static void test_early_stop(void **state)
{
	struct fix *f = *state;
	struct testlog *t = new_log();
	struct mt_replay *r;
	int i;

	for (i = 0; i < 10; i++)
		tl_alloc(t, 1, 0x1000 + 16 * (uint64_t)i, 1, 0, 0);
	tl_end(t, 0, MT_END_EXIT, 0);
	tl_write(t, f->path);
	assert_int_equal(mt_replay_open(f->path, &r, NULL), 0);
	rec_reset(&f->rec);
	f->rec.stop_at = 4;
	assert_int_equal(mt_replay_run(r, &ops, &f->rec), 1);
	assert_int_equal(f->rec.n, 4);
	assert_int_equal(f->rec.ends, 1);
	assert_int_equal(f->rec.end.events, 4);
	/* decoded ahead of the stop, but the end is the stopping event's */
	assert_int_equal(f->rec.end.time_ns, 4);
	assert_int_equal(f->rec.end.stopped, 1);
	assert_int_equal(f->rec.end.truncated, 0);
	/* Run to the end: the same replay is whole and clean. */
	rec_reset(&f->rec);
	assert_int_equal(mt_replay_run(r, &ops, &f->rec), 0);
	assert_int_equal(f->rec.n, 10);
	assert_int_equal(f->rec.end.stopped, 0);
	assert_int_equal(f->rec.end.clean, 1);
	mt_replay_free(r);
	tl_free(t);
}

/*
 * Replays a log whose second chunk has bad records: the events of chunk 1,
 * then `before` events (`calls` of them delivered) of chunk 2.
 */
static void expect_corrupt(struct fix *f, void (*bad)(struct testlog *), uint64_t before,
			   uint64_t calls)
{
	struct testlog *t = new_log();

	tl_alloc(t, 1, 0x1000, 10, 0, 0);
	tl_flush(t);
	bad(t);
	tl_alloc(t, 1, 0x2000, 10, 0, 0);
	tl_end(t, 0, MT_END_EXIT, 0);
	assert_int_equal(replay(f, t, NULL), 0);
	assert_int_equal(f->rec.end.error, MT_E_CORRUPT);
	assert_int_equal(f->rec.end.error_offset, tl_chunk_offset(t, 1));
	assert_int_equal(f->rec.end.good_bytes, tl_chunk_offset(t, 1));
	assert_int_equal(f->rec.end.truncated, 1);
	assert_int_equal(f->rec.end.clean, 0);
	assert_int_equal(f->rec.end.events, 1 + before);
	assert_int_equal(f->rec.n, 1 + calls);
	tl_free(t);
}

static void bad_stack_id(struct testlog *t) { tl_alloc(t, 1, 0x3000, 1, 2, 0); }
static void bad_thread(struct testlog *t) { tl_alloc(t, 1, 0x3000, 1, 0, 1); }
static void bad_type(struct testlog *t) { tl_raw(t, "\x42", 1); }
static void bad_varint(struct testlog *t)
{
	tl_raw(t, "\x03\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01", 12);
}
static void bad_fn(struct testlog *t)
{
	uint64_t ip = 1;

	tl_stack(t, 2, MT_FN_COUNT, 1, &ip);
}
static void bad_stack_order(struct testlog *t)
{
	uint64_t ip = 1;

	tl_stack(t, 5, MT_FN_MALLOC, 1, &ip);
}
static void bad_depth(struct testlog *t)
{
	tl_raw(t, "\x02\x02\x00\x81\x02", 5);   /* n = 257 */
}
static void good_then_cut(struct testlog *t)
{
	tl_alloc(t, 1, 0x3000, 1, 0, 0);
	/* A FREE with no fields of its own in the side streams: it takes the
	 * address fields of the ALLOC that expect_corrupt writes next (an
	 * address never allocated: ignored, but an event), and that ALLOC
	 * then finds its own fields missing. */
	tl_raw(t, "\x04", 1);
}

static void test_corrupt_records(void **state)
{
	struct fix *f = *state;

	expect_corrupt(f, bad_stack_id, 0, 0);
	expect_corrupt(f, bad_thread, 0, 0);
	expect_corrupt(f, bad_type, 0, 0);
	expect_corrupt(f, bad_varint, 0, 0);
	expect_corrupt(f, bad_fn, 0, 0);
	expect_corrupt(f, bad_stack_order, 0, 0);
	expect_corrupt(f, bad_depth, 0, 0);
	expect_corrupt(f, good_then_cut, 2, 1);
}

static void test_chunk_seq_mismatch(void **state)
{
	struct fix *f = *state;
	struct testlog *t = new_log();
	size_t n = 0;

	tl_alloc(t, 1, 0x1000, 10, 0, 0);
	tl_flush(t);
	/* A hand-made chunk claiming 5 earlier events when there was 1. */
	{
		uint8_t raw[8], out[128], h[MT_CHUNK_HEADER];
		size_t c;

		raw[n++] = MT_REC_CHUNK_BEGIN;
		n += mt_put_uv(raw + n, 5);
		n += mt_put_uv(raw + n, 0);
		c = ZSTD_compress(out, sizeof(out), raw, n, 1);
		assert_false(ZSTD_isError(c));
		memcpy(h, MT_CHUNK_MAGIC, 4);
		mt_put_u32(h + 4, (uint32_t)c);
		mt_put_u32(h + 8, (uint32_t)n);
		tl_raw_file(t, h, sizeof(h));
		tl_raw_file(t, out, c);
	}
	assert_int_equal(replay(f, t, NULL), 0);
	assert_int_equal(f->rec.end.error, MT_E_CORRUPT);
	assert_int_equal(f->rec.end.events, 1);
	tl_free(t);
}

/*
 * A log of 4 chunks cut at every byte: the replay ends cleanly with exactly
 * the events of the whole chunks before the cut, and is truncated unless
 * the cut is at the very end (after END).
 */
static void test_cut_everywhere(void **state)
{
	struct fix *f = *state;
	struct testlog *t = new_log();
	uint64_t per_chunk[5] = { 0 };
	size_t len, cut, k, whole, nch;
	const uint8_t *img;
	struct mt_replay *r;
	int c, i;

	for (c = 0; c < 4; c++) {
		for (i = 0; i < 5; i++)
			tl_alloc(t, 3, 0x10000 + 0x40 * (uint64_t)(c * 5 + i), 8, 0, 0);
		tl_free_block(t, 1, 0x10000 + 0x40 * (uint64_t)(c * 5), 0);
		tl_snapshot(t, 1, (uint32_t)c, "s");
		per_chunk[c + 1] = tl_events(t);
		if (c < 3)
			tl_flush(t);
	}
	tl_end(t, 0, MT_END_EXIT, 0);
	img = tl_image(t, &len);
	nch = tl_nchunks(t);
	assert_int_equal(nch, 4);
	for (cut = tl_chunk_offset(t, 0); cut <= len; cut++) {
		tl_write_file(f->path, img, cut);
		assert_int_equal(mt_replay_open(f->path, &r, NULL), 0);
		rec_reset(&f->rec);
		assert_int_equal(mt_replay_run(r, &ops, &f->rec), 0);
		whole = 0;
		for (k = 0; k < nch; k++)
			if ((k + 1 < nch ? tl_chunk_offset(t, k + 1) : len) <= cut)
				whole = k + 1;
		assert_int_equal(f->rec.end.events, per_chunk[whole]);
		assert_int_equal(f->rec.ends, 1);
		assert_int_equal(f->rec.end.truncated, cut != len);
		assert_int_equal(f->rec.end.good_bytes,
				 whole ? (whole < nch ? tl_chunk_offset(t, whole) : len)
				       : tl_chunk_offset(t, 0));
		mt_replay_free(r);
	}
	/* Headers cut short do not open. */
	for (cut = 0; cut < tl_chunk_offset(t, 0); cut++) {
		tl_write_file(f->path, img, cut);
		assert_int_equal(mt_replay_open(f->path, &r, NULL), MT_E_TRUNCATED);
	}
	tl_free(t);
}

/*
 * Many live blocks freed in a scrambled order: each free reports the size
 * and stack of its own allocation (size and stack derive from the address).
 */
static void test_many_blocks(void **state)
{
	struct fix *f = *state;
	struct testlog *t = new_log();
	const uint32_t n = 50000;
	uint64_t frees = 0, sum = 0;
	uint32_t i, j;
	size_t k;

	for (i = 0; i < n; i++)
		tl_alloc(t, 1, 0x100000 + 48 * (uint64_t)i, i % 1000, i % 2, 0);
	for (i = 0; i < n; i++) {
		j = (uint32_t)(((uint64_t)i * 7919) % n);  /* a permutation: 7919 is prime */
		tl_free_block(t, 1, 0x100000 + 48 * (uint64_t)j, 0);
	}
	tl_end(t, 0, MT_END_EXIT, 0);
	assert_int_equal(replay(f, t, NULL), 0);
	assert_int_equal(f->rec.n, 2 * n);
	for (k = n; k < f->rec.n; k++) {
		const struct seen *s = &f->rec.v[k];
		uint32_t idx = (uint32_t)((s->ev.addr - 0x100000) / 48);

		assert_int_equal(s->kind, 'f');
		assert_int_equal(s->ev.size, idx % 1000);
		assert_int_equal(s->ev.stack, idx % 2);
		frees++;
		sum += s->ev.size;
	}
	assert_int_equal(frees, n);
	/* sum over i < n of i % 1000, n a multiple of 1000 */
	assert_int_equal(sum, (uint64_t)(n / 1000) * (999 * 1000 / 2));
	assert_true(f->rec.progress >= 1);
	tl_free(t);
}

static void *wmem_alloc(void *opaque, size_t n)
{
	(void)opaque;
	return malloc(n);
}

static void wmem_free(void *opaque, void *p)
{
	(void)opaque;
	free(p);
}

/*
 * Replays f's log with owners on or off, decoding on a thread of its own
 * or not, against the nexp events expected; then again stopping halfway,
 * which must end the run right at the stopping event.
 */
static void round_trip_check(struct fix *f, const struct seen *exp, size_t nexp, uint64_t events,
			     uint64_t end_ns, int owners, int threads)
{
	struct mt_replay *r;
	size_t half = nexp / 2;

	assert_int_equal(mt_replay_open(f->path, &r, NULL), 0);
	mt_replay_owners(r, owners);
	mt_replay_threads(r, threads);
	while (exp[half - 1].kind == 's')
		half++;
	rec_reset(&f->rec);
	f->rec.stop_at = (int)half;
	assert_int_equal(mt_replay_run(r, &ops, &f->rec), 1);
	assert_int_equal(f->rec.n, half);
	assert_int_equal(f->rec.end.stopped, 1);
	assert_int_equal(f->rec.end.truncated, 0);
	assert_int_equal(f->rec.end.events, exp[half - 1].ev.seq + 1);
	assert_int_equal(f->rec.end.time_ns, exp[half - 1].ev.time_ns);
	rec_reset(&f->rec);
	assert_int_equal(mt_replay_run(r, &ops, &f->rec), 0);
	mt_replay_free(r);
	assert_int_equal(f->rec.end.clean, 1);
	assert_int_equal(f->rec.end.truncated, 0);
	assert_int_equal(f->rec.end.events, events);
	assert_int_equal(f->rec.end.time_ns, end_ns);
	assert_int_equal(f->rec.n, nexp);
	for (size_t k = 0; k < nexp; k++) {
		const struct seen *g = &f->rec.v[k], *e = &exp[k];

		assert_int_equal(g->kind, e->kind);
		assert_int_equal(g->ev.seq, e->ev.seq);
		assert_int_equal(g->ev.time_ns, e->ev.time_ns);
		if (e->kind == 's') {
			assert_int_equal(g->index, e->index);
			assert_string_equal(g->label, "s");
			continue;
		}
		assert_int_equal(g->ev.addr, e->ev.addr);
		assert_int_equal(g->ev.size, e->ev.size);
		assert_int_equal(g->ev.stack, e->ev.stack);
		assert_int_equal(g->ev.thread, e->ev.thread);
		assert_int_equal(g->ev.alloc_thread, owners ? e->ev.alloc_thread : e->ev.thread);
		assert_int_equal(g->ev.realloc, e->ev.realloc);
	}
}

/*
 * The writer (lib/writer.c) against the replay: a pseudo-random stream of
 * allocs, frees, reallocs and snapshots from two threads (each free by
 * either, whoever allocated the block), written in many small chunks,
 * replays to exactly the events the stream implies (computed here from the
 * stream itself): with owners on, every free names the thread that
 * allocated its block; with owners off, the same events, alloc_thread the
 * freeing thread's (mt_replay_owners).
 */
static void test_writer_round_trip(void **state)
{
	struct fix *f = *state;
	const struct mt_writer_mem mem = { wmem_alloc, wmem_free, NULL, NULL };
	const struct mt_writer_opts wo = { .level = 1, .chunk_bytes = 2048, .time_quantum_ns = 1 };
	static const uint64_t ips[2][2] = { { 0x401000, 0x402000 }, { 0x7f0000000000, 0x401000 } };
	enum { SLOTS = 64, N = 20000 };
	uint64_t addr[SLOTS] = { 0 }, size[SLOTS] = { 0 };
	uint32_t stack_of[SLOTS] = { 0 }, owner[SLOTS] = { 0 };
	uint64_t t = 0, seq = 0, rng = 12345, a;
	struct mt_writer *w;
	struct seen *exp;
	size_t nexp = 0;
	uint32_t snaps = 0;
	int fd, i;

	exp = calloc(3 * N, sizeof(*exp));
	assert_non_null(exp);
	fd = open(f->path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	assert_true(fd >= 0);
	w = mt_writer_new(fd, &mem, &wo);
	assert_non_null(w);
	assert_int_equal(mt_writer_header(w, 5, 0, "w\0", 2), 0);
	assert_int_equal(mt_writer_thread(w, 0, 0, 5), 0);
	assert_int_equal(mt_writer_thread(w, 0, 1, 6), 0);
	assert_int_equal(mt_writer_stack(w, 0, 0, MT_FN_MALLOC, 0, ips[0], 2), 0);
	assert_int_equal(mt_writer_stack(w, 0, 1, MT_FN_REALLOC, 0, ips[1], 2), 0);
	for (i = 0; i < N; i++) {
		unsigned s, op, th;

		rng = rng * 6364136223846793005ull + 1442695040888963407ull;
		s = (unsigned)(rng >> 33) % SLOTS;
		op = (unsigned)(rng >> 45) % 16;
		th = (unsigned)(rng >> 52) & 1;
		t += (rng >> 20) % 1000;
		if (op == 0) {
			assert_int_equal(mt_writer_snapshot(w, t, snaps, "s"), 0);
			exp[nexp].kind = 's';
			exp[nexp].index = snaps++;
			exp[nexp].ev.seq = seq++;
			exp[nexp++].ev.time_ns = t;
		} else if (op == 1) {
			/* the writer names the block a free ends: it never
			 * writes the free of an unknown address (hand-made
			 * version 3 logs test those) */
			continue;
		} else if (!addr[s]) {
			addr[s] = 0x7f0000100000ull + 0x1000 * (uint64_t)s + 16 * (uint64_t)(i % 64);
			size[s] = 1 + (rng >> 40) % 5000;
			assert_int_equal(mt_writer_alloc(w, t, addr[s], size[s], 0, th), 0);
			exp[nexp].kind = 'a';
			exp[nexp].ev = (struct mt_event){ .seq = seq, .time_ns = t, .addr = addr[s],
				.size = size[s], .stack = 0, .thread = th, .alloc_thread = th };
			seq++;
			stack_of[s] = 0;
			owner[s] = th;
			nexp++;
		} else if (op < 10) {
			assert_int_equal(mt_writer_free_block(w, t, addr[s], size[s], stack_of[s], th), 0);
			exp[nexp].kind = 'f';
			exp[nexp++].ev = (struct mt_event){ .seq = seq++, .time_ns = t, .addr = addr[s],
				.size = size[s], .stack = stack_of[s], .thread = th,
				.alloc_thread = owner[s] };
			addr[s] = 0;
		} else {
			a = 0x7f0000100000ull + 0x1000 * (uint64_t)s + 16 * (uint64_t)(i % 64);
			assert_int_equal(mt_writer_realloc(w, t, addr[s], size[s], stack_of[s], a, size[s] + 7, 1,
						       th), 0);
			exp[nexp].kind = 'f';
			exp[nexp++].ev = (struct mt_event){ .seq = seq, .time_ns = t, .addr = addr[s],
				.size = size[s], .stack = stack_of[s], .thread = th,
				.alloc_thread = owner[s], .realloc = 1 };
			addr[s] = a;
			size[s] += 7;
			exp[nexp].kind = 'a';
			exp[nexp++].ev = (struct mt_event){ .seq = seq, .time_ns = t, .addr = a,
				.size = size[s], .stack = 1, .thread = th,
				.alloc_thread = th, .realloc = 1 };
			seq++;
			stack_of[s] = 1;
			owner[s] = th;
		}
	}
	{
		static const struct mt_totals none;

		assert_int_equal(mt_writer_end(w, t + 1, MT_END_EXIT, 0, &none), 0);
	}
	assert_int_equal(mt_writer_flush(w), 0);
	mt_writer_free(w);
	close(fd);

	/* Many chunks, so the delta state is reset many times. */
	{
		struct mt_reader *rd;
		const uint8_t *d;
		size_t len;
		int chunks = 0;

		assert_int_equal(mt_reader_open(f->path, &rd, NULL), 0);
		while (mt_reader_next(rd, &d, &len, NULL) == 1)
			chunks++;
		mt_reader_free(rd);
		assert_true(chunks > 50);
	}
	for (int owners = 0; owners < 2; owners++)
		for (int threads = 0; threads < 2; threads++)
			round_trip_check(f, exp, nexp, seq, t + 1, owners, threads);
	free(exp);
}

/*
 * Version 4 frees name their block's stack and size: one the stack has not
 * got live (a free beyond its allocations, or of a stack with none) is
 * corrupt, so no figure can turn negative. Frees in a later chunk than
 * their allocation write the fields (within a chunk they come from the
 * allocation itself, which the writer cannot get wrong).
 */
static void test_v4_free_beyond(void **state)
{
	struct fix *f = *state;
	const struct mt_writer_mem mem = { wmem_alloc, wmem_free, NULL, NULL };
	static const uint64_t ips[] = { 0x401000 };
	/* the free's size and stack: too big, another stack, right */
	static const struct { uint64_t size; uint32_t stack; int ok; } cases[] = {
		{ 11, 0, 0 }, { 10, 1, 0 }, { 10, 0, 1 },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int fd = open(f->path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		struct mt_writer *w;

		assert_true(fd >= 0);
		w = mt_writer_new(fd, &mem, NULL);
		assert_non_null(w);
		assert_int_equal(mt_writer_header(w, 5, 0, "w\0", 2), 0);
		assert_int_equal(mt_writer_thread(w, 0, 0, 5), 0);
		assert_int_equal(mt_writer_stack(w, 0, 0, MT_FN_MALLOC, 0, ips, 1), 0);
		assert_int_equal(mt_writer_stack(w, 0, 1, MT_FN_MALLOC, 0, ips, 1), 0);
		assert_int_equal(mt_writer_alloc(w, 1, 0x1000, 10, 0, 0), 0);
		assert_int_equal(mt_writer_flush(w), 0);
		assert_int_equal(mt_writer_free_block(w, 2, 0x1000, cases[i].size, cases[i].stack, 0),
				 0);
		assert_int_equal(mt_writer_flush(w), 0);
		mt_writer_free(w);
		close(fd);
		assert_int_equal(replay(f, NULL, NULL), 0);
		if (cases[i].ok) {
			assert_int_equal(f->rec.end.error, 0);
			assert_int_equal(f->rec.end.events, 2);
			assert_int_equal(f->rec.n, 2);
			assert_int_equal(f->rec.v[1].ev.size, 10);
			continue;
		}
		assert_int_equal(f->rec.end.error, MT_E_CORRUPT);
		assert_int_equal(f->rec.end.truncated, 1);
		assert_int_equal(f->rec.end.events, 1);
		assert_int_equal(f->rec.n, 1);
	}
}

/* Takes a run's events one by one through on_alloc and on_free, run_take
 * of them at most. */
static int on_run(void *ctx, const struct mt_run *run, size_t *done)
{
	struct rec *r = ctx;
	uint64_t seq = run->seq;
	size_t take = r->run_take && r->run_take < run->n ? r->run_take : run->n;

	r->runs++;
	for (size_t i = 0; i < take; i++) {
		const struct mt_run_event *e = &run->ev[i];
		int free = e->type == MT_RUN_FREE || e->type == MT_RUN_REALLOC_FREE;
		struct mt_event ev = {
			.seq = seq, .time_ns = run->time_ns, .addr = e->addr, .size = e->size,
			.stack = e->stack, .thread = run->thread, .alloc_thread = run->thread,
			.realloc = e->type == MT_RUN_REALLOC_FREE ||
				   e->type == MT_RUN_REALLOC_ALLOC,
			.count = 1, .asked = e->size,
		};

		if ((free ? on_free : on_alloc)(r, &ev)) {
			*done = i;
			return 1;
		}
		seq += e->type != MT_RUN_REALLOC_FREE;
	}
	*done = take;
	return 0;
}

/*
 * A version 4 log's runs of events (one thread, one time) through on_run:
 * the same events as one by one, whether on_run takes every event of a run
 * or some (the rest then one by one), and a stop at any event ends the run
 * there (a REALLOC's free half with its alloc half still applied).
 */
static void test_runs(void **state)
{
	struct fix *f = *state;
	struct mt_replay_ops run_ops = ops;
	struct testlog *t = new_log_version(4);
	struct seen *exp;
	struct mt_end end;
	size_t nexp;

	run_ops.on_run = on_run;
	for (uint64_t i = 0; i < 12; i++) {
		/* a TIME (a new run) every fourth event */
		tl_alloc(t, i % 4 == 0, 0x1000 + 0x100 * i, 10 + i, (uint32_t)(i & 1), 0);
		if (i % 3 == 2)
			tl_realloc(t, 0, 0x1000 + 0x100 * i, 0x9000 + 0x100 * i, 50 + i, 1, 0);
		if (i % 5 == 4)
			tl_free_block(t, 0, 0x1000 + 0x100 * i, 0);
	}
	tl_end(t, 1, MT_END_EXIT, 0);
	assert_int_equal(replay(f, t, NULL), 0);
	nexp = f->rec.n;
	end = f->rec.end;
	exp = malloc(nexp * sizeof(*exp));
	assert_non_null(exp);
	memcpy(exp, f->rec.v, nexp * sizeof(*exp));
	for (size_t take = 0; take <= 3; take++) {
		for (size_t stop = 0; stop <= nexp; stop++) {
			struct mt_replay *r;
			size_t n = stop ? stop : nexp;

			assert_int_equal(mt_replay_open(f->path, &r, NULL), 0);
			rec_reset(&f->rec);
			f->rec.run_take = take;
			f->rec.stop_at = (int)stop;
			/* a stop at a REALLOC's free half comes with its alloc half */
			if (stop && exp[stop - 1].kind == 'f' && exp[stop - 1].ev.realloc)
				n++;
			assert_int_equal(mt_replay_run(r, &run_ops, &f->rec), stop ? 1 : 0);
			mt_replay_free(r);
			assert_true(f->rec.runs > 0);
			assert_int_equal(f->rec.n, n);
			for (size_t k = 0; k < n; k++) {
				const struct mt_event *g = &f->rec.v[k].ev, *e = &exp[k].ev;

				assert_int_equal(f->rec.v[k].kind, exp[k].kind);
				assert_event(&f->rec.v[k], exp[k].kind, e->seq, e->time_ns, e->addr,
					     e->size, e->stack, e->thread, e->realloc);
				assert_int_equal(g->alloc_thread, e->alloc_thread);
				assert_int_equal(g->count, e->count);
				assert_int_equal(g->asked, e->asked);
			}
			assert_int_equal(f->rec.end.events, stop ? exp[n - 1].ev.seq + 1 : end.events);
			assert_int_equal(f->rec.end.time_ns, stop ? exp[n - 1].ev.time_ns : end.time_ns);
			assert_int_equal(f->rec.end.stopped, !!stop);
		}
	}
	free(exp);
	tl_free(t);
}

/* Writes t (if not NULL) to f->path; returns mt_replay_end_totals()'s result. */
static int end_totals(struct fix *f, struct testlog *t, unsigned *how, struct mt_totals *tot)
{
	struct mt_replay *r;
	int rc;

	if (t)
		tl_write(t, f->path);
	assert_int_equal(mt_replay_open(f->path, &r, NULL), 0);
	memset(tot, 0, sizeof(*tot));
	*how = 99;
	rc = mt_replay_end_totals(r, how, tot);
	mt_replay_free(r);
	return rc;
}

/*
 * END's figures without a replay: from the last chunk alone, decoded by
 * the replay's own decoder, when the log ends with END; any other ending
 * (cut short, no END, a record after END, STOP in the last chunk, a record
 * that does not decode) gives 0. A full replay hands the same figures to
 * on_end.
 */
static void test_end_totals(void **state)
{
	static const struct mt_totals tot = {
		.allocations = 12, .frees = 3, .bytes_allocated = 192, .peak_bytes = 144,
		.peak_blocks = 9, .peak_time_ns = 120, .leaked_bytes = 1ull << 40,
		.leaked_blocks = 300,
	};
	static const uint64_t ip = 0x403000;
	struct fix *f = *state;
	struct mt_totals got;
	struct testlog *t;
	const uint8_t *img;
	unsigned how;
	size_t len;

	/* END in the chunk of the last events, which use a stack and a thread
	 * of the first chunk, and a stack and a thread of their own (thread
	 * 1100, after 1100 threads: more than the slack a replay allows a
	 * thread's index over the threads it knows) */
	t = new_log();
	for (uint32_t i = 1; i < 1100; i++)
		tl_thread(t, i, 1000 + i);
	tl_alloc(t, 10, 0x1000, 16, 0, 0);
	tl_flush(t);
	tl_alloc(t, 10, 0x2000, 16, 1, 0);
	tl_flush(t);
	tl_free_block(t, 1, 0x1000, 0);
	tl_stack(t, 2, MT_FN_MALLOC, 1, &ip);
	tl_thread(t, 1100, 78);
	tl_alloc(t, 1, 0x3000, 32, 2, 1100);
	tl_realloc(t, 1, 0x2000, 0x4000, 64, 1, 0);
	tl_alloc(t, 1, 0x5000, 8, 0, 1099);
	/* the records of version 3 a recorder writes before END */
	tl_rss(t, 1, 1u << 20);
	tl_thread_name(t, 1100, "worker");
	tl_end_totals(t, 5, MT_END_SIGNAL, 11, &tot);
	assert_int_equal(end_totals(f, t, &how, &got), 1);
	assert_int_equal(how, MT_END_SIGNAL);
	assert_memory_equal(&got, &tot, sizeof(tot));
	/* the full replay: the same figures in on_end */
	assert_int_equal(replay(f, NULL, NULL), 0);
	assert_int_equal(f->rec.end.clean, 1);
	assert_int_equal(f->rec.end.error, 0);
	assert_int_equal(f->rec.end.events, 6);  /* 4 allocs, a free, a realloc */
	assert_int_equal(f->rec.end.how, MT_END_SIGNAL);
	assert_int_equal(f->rec.end.code, 11);
	assert_memory_equal(&f->rec.end.totals, &tot, sizeof(tot));
	/* cut one byte short: the last chunk is partial */
	img = tl_image(t, &len);
	tl_write_file(f->path, img, len - 1);
	assert_int_equal(end_totals(f, NULL, &how, &got), 0);
	/* cut at the last chunk's start: the last whole chunk has no END */
	tl_write_file(f->path, img, tl_chunk_offset(t, tl_nchunks(t) - 1));
	assert_int_equal(end_totals(f, NULL, &how, &got), 0);
	tl_free(t);

	/* END followed by an event in the same chunk */
	t = new_log();
	tl_alloc(t, 10, 0x1000, 16, 0, 0);
	tl_end_totals(t, 5, MT_END_EXIT, 0, &tot);
	tl_alloc(t, 0, 0x9000, 1, 0, 0);
	assert_int_equal(end_totals(f, t, &how, &got), 0);
	tl_free(t);

	/* STOP before END in the last chunk: the replay must report it */
	t = new_log();
	tl_flush(t);
	tl_alloc(t, 10, 0x1000, 16, 0, 0);
	tl_stop(t, 1, "disk full");
	tl_end_totals(t, 5, MT_END_STOPPED, 0, &tot);
	assert_int_equal(end_totals(f, t, &how, &got), 0);
	tl_free(t);

	/* a record that does not decode before END */
	t = new_log();
	tl_alloc(t, 10, 0x1000, 16, 0, 0);
	tl_flush(t);
	tl_raw(t, "\x42", 1);
	tl_end_totals(t, 5, MT_END_EXIT, 0, &tot);
	assert_int_equal(end_totals(f, t, &how, &got), 0);
	tl_free(t);

	/* END alone in its chunk, with every kind of record before it */
	t = new_log();
	{
		static const uint64_t segs[2] = { 0x400000, 0x1000 };

		tl_alloc(t, 10, 0x1000, 16, 0, 0);
		tl_module(t, 1, 0x400000, "/bin/x", (const uint8_t *)"\1\2", 2, 1, segs);
		tl_thread(t, 1, 99);
		tl_realloc(t, 1, 0x1000, 0x8000, 5, 0, 1);
		tl_free_block(t, 1, 0x8000, 0);
		tl_snapshot(t, 1, 0, "x");
		tl_unload(t, 1, 0x400000);
	}
	tl_flush(t);
	tl_end_totals(t, 0, MT_END_EXIT, 3, &tot);
	assert_int_equal(end_totals(f, t, &how, &got), 1);
	assert_int_equal(how, MT_END_EXIT);
	assert_memory_equal(&got, &tot, sizeof(tot));
	tl_free(t);
}

/* Reading END's figures leaves the last run as it was: its end, its stacks. */
static void test_end_totals_after_run(void **state)
{
	static const struct mt_totals tot = { .allocations = 2, .peak_bytes = 48 };
	struct fix *f = *state;
	struct testlog *t = new_log();
	const struct mt_stack *s0;
	struct mt_totals got;
	struct mt_replay *r;
	struct mt_end e;
	unsigned how;

	tl_alloc(t, 10, 0x1000, 16, 0, 0);
	tl_flush(t);
	tl_alloc(t, 10, 0x2000, 32, 1, 0);
	tl_end_totals(t, 5, MT_END_EXIT, 0, &tot);
	assert_int_equal(replay(f, t, &r), 0);
	e = *mt_replay_end(r);
	s0 = mt_replay_stack(r, 0);
	assert_int_equal(mt_replay_nstacks(r), 2);
	assert_int_equal(mt_replay_end_totals(r, &how, &got), 1);
	assert_memory_equal(&got, &tot, sizeof(tot));
	assert_memory_equal(mt_replay_end(r), &e, sizeof(e));
	assert_int_equal(mt_replay_nstacks(r), 2);
	assert_ptr_equal(mt_replay_stack(r, 0), s0);
	assert_int_equal(mt_replay_nthreads(r), 1);
	mt_replay_free(r);
	tl_free(t);
}

/* What on_leak_check saw. */
struct leak_seen {
	int calls;
	struct mt_leak_totals tot;
	size_t n;
	struct mt_leak_block *b;
};

static void leak_seen_cb(void *ctx, const struct mt_leak_check *lc)
{
	struct leak_seen *ls = ctx;

	ls->calls++;
	ls->tot = lc->tot;
	ls->n = lc->n;
	free(ls->b);
	ls->b = malloc((lc->n + 1) * sizeof(*ls->b));
	assert_non_null(ls->b);
	memcpy(ls->b, lc->lost, lc->n * sizeof(*ls->b));
}

/*
 * A leak check through the writer: 3,000 live blocks of which 2,500 are
 * listed (many LEAK records, over several small chunks), each kind by its
 * index; the replay hands every listed block with its size, stack and
 * thread, once, with the totals, and END's figures from the last chunk
 * alone say the end is classified.
 */
static void test_writer_leak_check(void **state)
{
	struct fix *f = *state;
	const struct mt_writer_mem mem = { wmem_alloc, wmem_free, NULL, NULL };
	const struct mt_writer_opts wo = { .level = 1, .chunk_bytes = 4096, .time_quantum_ns = 1 };
	static const uint64_t ips[1] = { 0x401000 };
	enum { N = 3000 };
	struct mt_replay_ops lops = { 0 };
	struct leak_seen ls = { 0 };
	struct mt_leak_totals tot = { { 0 }, { 0 } }, got;
	struct mt_totals et = { 0 }, gt;
	struct mt_leak_entry *lost = calloc(N, sizeof(*lost));
	size_t nlost = 0;
	struct mt_writer *w;
	struct mt_replay *r;
	unsigned how;
	int fd, classified;

	assert_non_null(lost);
	fd = open(f->path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	assert_true(fd >= 0);
	w = mt_writer_new(fd, &mem, &wo);
	assert_non_null(w);
	assert_int_equal(mt_writer_header(w, 5, 0, "w\0", 2), 0);
	assert_int_equal(mt_writer_thread(w, 0, 0, 5), 0);
	assert_int_equal(mt_writer_stack(w, 0, 0, MT_FN_MALLOC, 0, ips, 1), 0);
	for (uint64_t i = 0; i < N; i++) {
		uint64_t a = 0x100000 + 48 * i, size = 1 + i % 40;
		unsigned kind = i % 6 == 5 ? MT_LEAK_REACHABLE : (unsigned)(i % 3);

		assert_int_equal(mt_writer_alloc(w, i, a, size, 0, 0), 0);
		tot.bytes[kind] += size;
		tot.blocks[kind]++;
		if (kind != MT_LEAK_REACHABLE) {
			lost[nlost].addr_kind = a | kind;
			lost[nlost].size = size;
			lost[nlost++].stack = 0;
		}
		et.allocations++;
		et.bytes_allocated += size;
	}
	et.leaked_bytes = et.peak_bytes = et.bytes_allocated;
	et.leaked_blocks = et.peak_blocks = N;
	assert_int_equal(nlost, 2500);
	assert_int_equal(mt_writer_leak(w, N, lost, nlost, 0, &tot), 0);
	assert_int_equal(mt_writer_end(w, N, MT_END_EXIT, 0, &et), 0);
	assert_int_equal(mt_writer_flush(w), 0);
	mt_writer_free(w);
	close(fd);

	assert_int_equal(mt_replay_open(f->path, &r, NULL), 0);
	lops.on_leak_check = leak_seen_cb;
	assert_int_equal(mt_replay_run(r, &lops, &ls), 0);
	assert_int_equal(ls.calls, 1);
	assert_memory_equal(&ls.tot, &tot, sizeof(tot));
	assert_int_equal(ls.n, nlost);
	for (size_t i = 0; i < nlost; i++) {
		uint64_t k = (ls.b[i].addr - 0x100000) / 48;

		assert_int_equal(ls.b[i].addr, lost[i].addr_kind & ~3ull);
		assert_int_equal(ls.b[i].kind, lost[i].addr_kind & 3);
		assert_int_equal(ls.b[i].size, 1 + k % 40);
		assert_int_equal(ls.b[i].stack, 0);
		assert_int_equal(ls.b[i].thread, 0);
	}
	assert_true(mt_replay_end(r)->classified);
	assert_int_equal(mt_replay_end_leaks(r, &how, &gt, &classified, &got), 1);
	assert_int_equal(how, MT_END_EXIT);
	assert_true(classified);
	assert_memory_equal(&got, &tot, sizeof(tot));
	mt_replay_free(r);
	free(ls.b);
	free(lost);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_basic, setup, teardown),
		cmocka_unit_test_setup_teardown(test_writer_leak_check, setup, teardown),
		cmocka_unit_test_setup_teardown(test_realloc_halves, setup, teardown),
		cmocka_unit_test_setup_teardown(test_unknown_free_and_cross_thread, setup, teardown),
		cmocka_unit_test_setup_teardown(test_alloc_thread_and_names, setup, teardown),
		cmocka_unit_test_setup_teardown(test_thread_name_corrupt, setup, teardown),
		cmocka_unit_test_setup_teardown(test_thread_states, setup, teardown),
		cmocka_unit_test_setup_teardown(test_tags, setup, teardown),
		cmocka_unit_test_setup_teardown(test_sampled, setup, teardown),
		cmocka_unit_test_setup_teardown(test_snapshots_modules_stop, setup, teardown),
		cmocka_unit_test_setup_teardown(test_odd_blocks, setup, teardown),
		cmocka_unit_test_setup_teardown(test_early_stop, setup, teardown),
		cmocka_unit_test_setup_teardown(test_corrupt_records, setup, teardown),
		cmocka_unit_test_setup_teardown(test_chunk_seq_mismatch, setup, teardown),
		cmocka_unit_test_setup_teardown(test_cut_everywhere, setup, teardown),
		cmocka_unit_test_setup_teardown(test_many_blocks, setup, teardown),
		cmocka_unit_test_setup_teardown(test_writer_round_trip, setup, teardown),
		cmocka_unit_test_setup_teardown(test_v4_free_beyond, setup, teardown),
		cmocka_unit_test_setup_teardown(test_runs, setup, teardown),
		cmocka_unit_test_setup_teardown(test_end_totals, setup, teardown),
		cmocka_unit_test_setup_teardown(test_end_totals_after_run, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

/*
 * test_ring.c - unit tests of a bounded log's segments (lib/ring.c): their
 * names and discovery, and reading them as one log through lib/reader.c
 * and lib/replay.c: from the oldest kept segment's BASE (the per-stack
 * tallies and the run's figures it carries), over the repeated records of
 * the later ones, and a segment missing in the middle. The segments are
 * written with lib/writer.c as the recorder writes them (recorder/core.c,
 * ring_next): header, modules, threads, every stack, BASE, events.
 *
 * Not for: the recorder's rotation and the files' size (tests/e2e/rec_ring.sh).
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
#include "ring.h"
#include "writer.h"

struct fix {
	char dir[64];
	char path[128];
};

static int setup(void **state)
{
	struct fix *f = calloc(1, sizeof(*f));

	assert_non_null(f);
	strcpy(f->dir, "/tmp/mt-test-ring-XXXXXX");
	assert_non_null(mkdtemp(f->dir));
	snprintf(f->path, sizeof(f->path), "%s/log.data", f->dir);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fix *f = *state;
	char cmd[160];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", f->dir);
	assert_int_equal(system(cmd), 0);
	free(f);
	return 0;
}

static void touch(const char *dir, const char *name)
{
	char p[256];
	int fd;

	snprintf(p, sizeof(p), "%s/%s", dir, name);
	fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	assert_true(fd >= 0);
	close(fd);
}

static void test_names(void **state)
{
	char buf[64];

	(void)state;
	assert_int_equal(mt_ring_name("/a/log.data", 12, buf, sizeof(buf)), 0);
	assert_string_equal(buf, "/a/log.data.seg12");
	assert_int_equal(mt_ring_name("/a/log.data", 12, buf, 17), -1);
	assert_int_equal(mt_ring_name("/a/log.data", 12, buf, 18), 0);
	assert_int_equal(mt_ring_number("log.data", "log.data.seg1"), 1);
	assert_int_equal(mt_ring_number("log.data", "log.data.seg4096"), 4096);
	/* not a segment: no number, zero, a leading zero, trailing text,
	 * another log's (a child's FILE.PID, its segments) */
	assert_int_equal(mt_ring_number("log.data", "log.data.seg"), 0);
	assert_int_equal(mt_ring_number("log.data", "log.data.seg0"), 0);
	assert_int_equal(mt_ring_number("log.data", "log.data.seg01"), 0);
	assert_int_equal(mt_ring_number("log.data", "log.data.seg1x"), 0);
	assert_int_equal(mt_ring_number("log.data", "log.data.1234"), 0);
	assert_int_equal(mt_ring_number("log.data", "log.data.1234.seg1"), 0);
	assert_int_equal(mt_ring_number("log.data", "log.dat.seg1"), 0);
	assert_int_equal(mt_ring_number("log.data", "log.data.seg99999999999999999999999"), 0);
}

static void test_list(void **state)
{
	struct fix *f = *state;
	uint64_t *v;
	size_t n;

	assert_int_equal(mt_ring_list(f->path, &v, &n), 0);
	assert_int_equal(n, 0);
	assert_null(v);
	touch(f->dir, "log.data.seg10");
	touch(f->dir, "log.data.seg9");
	touch(f->dir, "log.data.seg2");
	touch(f->dir, "log.data.1234");
	touch(f->dir, "log.data.1234.seg3");
	touch(f->dir, "log.data");
	assert_int_equal(mt_ring_list(f->path, &v, &n), 0);
	assert_int_equal(n, 3);
	assert_int_equal(v[0], 2);
	assert_int_equal(v[1], 9);
	assert_int_equal(v[2], 10);
	free(v);
}

/* ---- a bounded log, written as the recorder writes one ------------------ */

static void *wmem_alloc(void *opaque, size_t size)
{
	(void)opaque;
	return malloc(size);
}

static void wmem_free(void *opaque, void *p)
{
	(void)opaque;
	free(p);
}

static const uint64_t ips[2][2] = { { 0x401000, 0x402000 }, { 0x401100, 0x402000 } };
static const uint64_t seg_text[2] = { 0x401000, 0x1000 };

/*
 * The run: stack 0 allocates A (100 B) and B (200 B), stack 1 C (50 B),
 * then B is freed: 3 allocations, 1 free, 350 B allocated, peak 350 B in
 * 3 blocks (after C). Segment 2 begins there: BASE stack 0 100 B in 1
 * block, stack 1 50 B in 1; then A is freed and stack 1 allocates D
 * (70 B). Segment 3 begins: BASE stack 1 120 B in 2 blocks, 4
 * allocations, 2 frees, 420 B; then C is freed and END: 1 block (D, 70 B)
 * live, 4 allocations, 3 frees, 420 B allocated.
 */
static int seg_fd = -1;

static void segment_start(struct mt_writer *w, const char *path, unsigned n)
{
	char name[160];
	int fd;

	assert_int_equal(mt_ring_name(path, n, name, sizeof(name)), 0);
	fd = open(name, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	assert_true(fd >= 0);
	mt_writer_new_file(w, fd);
	seg_fd = fd;
	assert_int_equal(mt_writer_header(w, 77, 1000, "prog\0", 5), 0);
	assert_int_equal(mt_writer_module(w, 0, 0x400000, "/bin/prog", (const uint8_t *)"", 0, seg_text, 1), 0);
	assert_int_equal(mt_writer_thread(w, 0, 0, 77), 0);
	assert_int_equal(mt_writer_stack(w, 0, 0, MT_FN_MALLOC, 0, ips[0], 2), 0);
	assert_int_equal(mt_writer_stack(w, 0, 1, MT_FN_MALLOC, 0, ips[1], 2), 0);
}

static void segment_end(struct mt_writer *w)
{
	assert_int_equal(mt_writer_flush(w), 0);
	close(seg_fd);
	seg_fd = -1;
}

static void write_ring(const char *path)
{
	const struct mt_writer_mem mem = { wmem_alloc, wmem_free, NULL, NULL };
	const struct mt_writer_opts wo = { .level = 1, .time_quantum_ns = 1 };
	struct mt_totals tot = { 0 };
	struct mt_base_entry b2[2] = { { 0, 100, 1 }, { 1, 50, 1 } }, b3[1] = { { 1, 120, 2 } };
	struct mt_writer *w = mt_writer_new(-1, &mem, &wo);

	assert_non_null(w);
	segment_start(w, path, 1);
	assert_int_equal(mt_writer_alloc(w, 10, 0xA000, 100, 0, 0), 0);
	assert_int_equal(mt_writer_alloc(w, 20, 0xB000, 200, 0, 0), 0);
	assert_int_equal(mt_writer_alloc(w, 30, 0xC000, 50, 1, 0), 0);
	assert_int_equal(mt_writer_free_block(w, 40, 0xB000, 200, 0, 0), 0);
	segment_end(w);

	segment_start(w, path, 2);
	tot.allocations = 3;
	tot.frees = 1;
	tot.bytes_allocated = 350;
	tot.peak_bytes = 350;
	tot.peak_blocks = 3;
	tot.peak_time_ns = 30;
	assert_int_equal(mt_writer_base(w, 50, b2, 2, &tot), 0);
	assert_int_equal(mt_writer_free_block(w, 60, 0xA000, 100, 0, 0), 0);
	assert_int_equal(mt_writer_alloc(w, 70, 0xD000, 70, 1, 0), 0);
	segment_end(w);

	segment_start(w, path, 3);
	tot.allocations = 4;
	tot.frees = 2;
	tot.bytes_allocated = 420;
	assert_int_equal(mt_writer_base(w, 80, b3, 1, &tot), 0);
	assert_int_equal(mt_writer_free_block(w, 90, 0xC000, 50, 1, 0), 0);
	tot.frees = 3;
	tot.leaked_bytes = 70;
	tot.leaked_blocks = 1;
	assert_int_equal(mt_writer_end(w, 100, MT_END_EXIT, 0, &tot), 0);
	segment_end(w);
	mt_writer_free(w);
}

/* What the consumer saw: per-stack live bytes and blocks, the events. */
struct seen {
	int bases;
	struct mt_base base;
	struct mt_base_stack bstack[4];
	int64_t bytes[2], blocks[2];
	uint64_t seqs[8];
	char kinds[8];
	size_t n, nstacks, nmods, nprogress;
	uint64_t total;               /* the last progress call's */
	struct mt_end end;
};

static void s_base(void *ctx, const struct mt_base *b)
{
	struct seen *s = ctx;

	s->bases++;
	s->base = *b;
	assert_true(b->n <= 4);
	memcpy(s->bstack, b->stacks, b->n * sizeof(*b->stacks));
	for (size_t i = 0; i < b->n; i++) {
		s->bytes[b->stacks[i].stack] += (int64_t)b->stacks[i].bytes;
		s->blocks[b->stacks[i].stack] += (int64_t)b->stacks[i].blocks;
	}
}

static int s_event(struct seen *s, const struct mt_event *ev, char kind, int sign)
{
	assert_true(ev->stack < 2);
	s->bytes[ev->stack] += sign * (int64_t)ev->size;
	s->blocks[ev->stack] += sign;
	assert_true(s->n < 8);
	s->seqs[s->n] = ev->seq;
	s->kinds[s->n++] = kind;
	return 0;
}

static int s_alloc(void *ctx, const struct mt_event *ev)
{
	return s_event(ctx, ev, 'a', 1);
}

static int s_free(void *ctx, const struct mt_event *ev)
{
	return s_event(ctx, ev, 'f', -1);
}

static void s_stack(void *ctx, const struct mt_stack *st)
{
	(void)st;
	((struct seen *)ctx)->nstacks++;
}

static void s_module(void *ctx, const struct mt_module *m)
{
	(void)m;
	((struct seen *)ctx)->nmods++;
}

static void s_end(void *ctx, const struct mt_end *e)
{
	((struct seen *)ctx)->end = *e;
}

/* The size of the whole ring so far: it grows as the reader opens each
 * segment (make check-tsan runs this with the decoder on its own thread). */
static void s_progress(void *ctx, uint64_t done, uint64_t total)
{
	struct seen *s = ctx;

	(void)done;
	assert_true(total >= s->total);
	s->total = total;
	s->nprogress++;
}

static const struct mt_replay_ops seen_ops = {
	.on_base = s_base, .on_alloc = s_alloc, .on_free = s_free, .on_stack = s_stack,
	.on_module = s_module, .on_end = s_end, .on_progress = s_progress,
};

static void replay(const char *path, struct seen *s)
{
	struct mt_replay *r;

	memset(s, 0, sizeof(*s));
	assert_int_equal(mt_replay_open(path, &r, NULL), 0);
	assert_int_equal(mt_replay_run(r, &seen_ops, s), 0);
	mt_replay_free(r);
}

static void drop(const char *path, unsigned n)
{
	char name[160];

	assert_int_equal(mt_ring_name(path, n, name, sizeof(name)), 0);
	assert_int_equal(unlink(name), 0);
}

/* Every segment kept: the run from its start, no BASE applied. */
static void test_whole_ring(void **state)
{
	struct fix *f = *state;
	struct seen s;

	write_ring(f->path);
	replay(f->path, &s);
	assert_int_equal(s.end.error, 0);
	assert_true(s.end.clean);
	assert_false(s.end.bounded);
	assert_int_equal(s.bases, 0);
	/* the later segments' stacks and modules are not heard of twice */
	assert_int_equal(s.nstacks, 2);
	assert_int_equal(s.nmods, 1);
	assert_int_equal(s.n, 7);
	assert_memory_equal(s.kinds, "aaaffaf", 7);
	for (size_t i = 0; i < s.n; i++)
		assert_int_equal(s.seqs[i], i);
	assert_int_equal(s.bytes[0], 0);
	assert_int_equal(s.blocks[0], 0);
	assert_int_equal(s.bytes[1], 70);
	assert_int_equal(s.blocks[1], 1);
}

/* The oldest gone: the run begins at segment 2's BASE. */
static void test_from_base(void **state)
{
	struct fix *f = *state;
	struct seen s;

	write_ring(f->path);
	drop(f->path, 1);
	replay(f->path, &s);
	assert_int_equal(s.end.error, 0);
	assert_true(s.end.clean);
	assert_true(s.end.bounded);
	assert_int_equal(s.end.base_seq, 4);
	assert_int_equal(s.end.base_time_ns, 50);
	assert_int_equal(s.bases, 1);
	assert_int_equal(s.base.seq, 4);
	assert_int_equal(s.base.tot.allocations, 3);
	assert_int_equal(s.base.tot.frees, 1);
	assert_int_equal(s.base.tot.bytes_allocated, 350);
	assert_int_equal(s.base.tot.peak_bytes, 350);
	assert_int_equal(s.base.tot.peak_blocks, 3);
	assert_int_equal(s.base.tot.peak_time_ns, 30);
	assert_int_equal(s.base.n, 2);
	assert_int_equal(s.nstacks, 2);
	assert_int_equal(s.nmods, 1);
	/* free A, alloc D, free C: seqs go on from the whole run */
	assert_int_equal(s.n, 3);
	assert_memory_equal(s.kinds, "faf", 3);
	assert_int_equal(s.seqs[0], 4);
	assert_int_equal(s.seqs[1], 5);
	assert_int_equal(s.seqs[2], 6);
	assert_int_equal(s.end.events, 7);
	/* BASE's tallies and the frees of its blocks meet exactly */
	assert_int_equal(s.bytes[0], 0);
	assert_int_equal(s.blocks[0], 0);
	assert_int_equal(s.bytes[1], 70);
	assert_int_equal(s.blocks[1], 1);
}

/* Only the newest: its BASE. */
static void test_newest_only(void **state)
{
	struct fix *f = *state;
	struct seen s;

	write_ring(f->path);
	drop(f->path, 1);
	drop(f->path, 2);
	replay(f->path, &s);
	assert_int_equal(s.end.error, 0);
	assert_int_equal(s.bases, 1);
	assert_int_equal(s.base.seq, 6);
	assert_int_equal(s.base.tot.allocations, 4);
	assert_int_equal(s.n, 1);
	assert_int_equal(s.seqs[0], 6);
	assert_int_equal(s.bytes[1], 70);
	assert_int_equal(s.blocks[1], 1);
}

/* A segment missing in the middle: the replay stops there, said why. */
static void test_gap(void **state)
{
	struct fix *f = *state;
	struct seen s;

	write_ring(f->path);
	drop(f->path, 2);
	replay(f->path, &s);
	assert_int_equal(s.end.error, MT_E_GAP);
	assert_true(s.end.truncated);
	assert_int_equal(s.n, 4);
}

/* A BASE where events came before it is corrupt. */
static void test_base_after_events(void **state)
{
	struct fix *f = *state;
	const struct mt_writer_mem mem = { wmem_alloc, wmem_free, NULL, NULL };
	struct mt_base_entry e = { 0, 10, 1 };
	struct mt_totals tot = { 0 };
	struct mt_writer *w = mt_writer_new(-1, &mem, NULL);
	struct seen s;

	assert_non_null(w);
	segment_start(w, f->path, 4);
	tot.allocations = 1;
	assert_int_equal(mt_writer_base(w, 1, &e, 1, &tot), 0);
	assert_int_equal(mt_writer_alloc(w, 2, 0xA000, 10, 0, 0), 0);
	assert_int_equal(mt_writer_base(w, 3, &e, 1, &tot), 0);
	segment_end(w);
	mt_writer_free(w);
	replay(f->path, &s);
	assert_int_equal(s.bases, 1);
	assert_int_equal(s.end.error, MT_E_CORRUPT);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_names),
		cmocka_unit_test_setup_teardown(test_list, setup, teardown),
		cmocka_unit_test_setup_teardown(test_whole_ring, setup, teardown),
		cmocka_unit_test_setup_teardown(test_from_base, setup, teardown),
		cmocka_unit_test_setup_teardown(test_newest_only, setup, teardown),
		cmocka_unit_test_setup_teardown(test_gap, setup, teardown),
		cmocka_unit_test_setup_teardown(test_base_after_events, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

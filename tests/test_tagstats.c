/*
 * test_tagstats.c - lib/tagstats.c and the session's tag paths
 * (lib/session.c: mt_session_tag, mt_session_stack_tag,
 * mt_session_only_tag): the figures per tag path of a small log whose
 * every figure is worked out below, with and without a thread
 * restriction, and the profiles a tag restriction leaves.
 *
 * The log: threads 0 (tid 100) and 1 (tid 101); tag paths 1 "a", 2 "a/b",
 * 3 "c"; stacks 0 (no tag), 1 (a), 2 and 4 (a/b), 3 (c).
 *   th0 alloc 0x1000 100 B stack 1     a
 *   th0 alloc 0x2000  50 B stack 2     a/b
 *   th1 alloc 0x3000  30 B stack 2     a/b
 *   th1 alloc 0x4000   7 B stack 0     no tag
 *   th0 alloc 0x5000 1000 B stack 3    c: the peak, 1,187 B in 5 blocks
 *   th1 free  0x5000                   (th0's block)
 *   th0 free  0x2000
 *   th1 alloc 0x6000  20 B stack 4     a/b
 * End: 0x1000, 0x3000, 0x4000, 0x6000 = 157 B in 4 blocks.
 * Per tag path: allocations, bytes, live at the peak (bytes, blocks),
 * leaked (bytes, blocks):
 *   no tag  1    7     7 1    7 1
 *   a       1  100   100 1  100 1
 *   a/b     3  100    80 2   50 2
 *   c       1 1000  1000 1    0 0
 * Thread 101's blocks: no tag 1 7 7 1 7 1; a/b 2 50 30 1 50 2.
 *
 * Not for: the report's text (tests/e2e/report_tags.sh), the recorder.
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
#include "session.h"
#include "tagstats.h"
#include "testlog.c"

struct fixture {
	char dir[64], path[96];
	struct mt_session *s;
};

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));
	struct testlog *t = tl_new_version(9, "tags", 5, MT_FORMAT_VERSION);
	static const uint64_t ips[5] = { 0x1000, 0x1010, 0x1020, 0x1030, 0x1040 };
	static const uint32_t tag_of[5] = { 0, 1, 2, 3, 2 };

	assert_non_null(f);
	assert_non_null(t);
	strcpy(f->dir, "/tmp/mt-test-tagstats.XXXXXX");
	assert_non_null(mkdtemp(f->dir));
	snprintf(f->path, sizeof(f->path), "%s/log", f->dir);
	tl_thread(t, 0, 100);
	tl_thread(t, 1, 101);
	tl_tag(t, 1, 0, "a");
	tl_tag(t, 2, 1, "b");
	tl_tag(t, 3, 0, "c");
	for (uint32_t i = 0; i < 5; i++)
		tl_stack_tagged(t, i, MT_FN_MALLOC, tag_of[i], 1, &ips[i]);
	tl_alloc(t, 10, 0x1000, 100, 1, 0);
	tl_alloc(t, 10, 0x2000, 50, 2, 0);
	tl_alloc(t, 10, 0x3000, 30, 2, 1);
	tl_alloc(t, 10, 0x4000, 7, 0, 1);
	tl_alloc(t, 10, 0x5000, 1000, 3, 0);
	tl_free_block(t, 10, 0x5000, 1);
	tl_free_block(t, 10, 0x2000, 0);
	tl_alloc(t, 10, 0x6000, 20, 4, 1);
	tl_end(t, 10, MT_END_EXIT, 0);
	tl_write(t, f->path);
	tl_free(t);
	assert_int_equal(mt_session_open(f->path, NULL, &f->s, NULL), 0);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	mt_session_free(f->s);
	unlink(f->path);
	rmdir(f->dir);
	free(f);
	return 0;
}

static void test_paths(void **state)
{
	struct fixture *f = *state;

	assert_int_equal(mt_session_ntags(f->s), 3);
	assert_string_equal(mt_session_tag(f->s, 0), "");
	assert_string_equal(mt_session_tag(f->s, 2), "a/b");
	assert_string_equal(mt_session_tag(f->s, 3), "c");
	assert_null(mt_session_tag(f->s, 4));
	assert_int_equal(mt_session_stack_tag(f->s, 4), 2);
	assert_int_equal(mt_session_stack_tag(f->s, 0), 0);
}

struct want {
	const char *path;
	uint64_t allocations, bytes;
	int64_t peak_bytes, peak_blocks, leaked_bytes, leaked_blocks;
};

static void assert_rows(struct mt_session *s, const struct want *w, size_t nw)
{
	struct mt_tagstats_row *r;
	size_t n;

	assert_int_equal(mt_tagstats_rows(s, &r, &n), 0);
	assert_int_equal(n, nw);
	for (size_t i = 0; i < n; i++) {
		assert_string_equal(r[i].path, w[i].path);
		assert_int_equal(r[i].allocations, w[i].allocations);
		assert_int_equal(r[i].bytes_allocated, w[i].bytes);
		assert_int_equal(r[i].peak_bytes, w[i].peak_bytes);
		assert_int_equal(r[i].peak_blocks, w[i].peak_blocks);
		assert_int_equal(r[i].leaked_bytes, w[i].leaked_bytes);
		assert_int_equal(r[i].leaked_blocks, w[i].leaked_blocks);
	}
	free(r);
}

static void test_rows(void **state)
{
	struct fixture *f = *state;
	static const struct want all[] = {
		{ "", 1, 7, 7, 1, 7, 1 },
		{ "a", 1, 100, 100, 1, 100, 1 },
		{ "a/b", 3, 100, 80, 2, 50, 2 },
		{ "c", 1, 1000, 1000, 1, 0, 0 },
	};
	static const struct want th1[] = {
		{ "", 1, 7, 7, 1, 7, 1 },
		{ "a/b", 2, 50, 30, 1, 50, 2 },
	};
	static const struct want th1_a[] = {
		{ "a/b", 2, 50, 30, 1, 50, 2 },
	};

	assert_rows(f->s, all, 4);
	assert_int_equal(mt_session_only_thread(f->s, 101), 0);
	assert_rows(f->s, th1, 2);
	assert_int_equal(mt_session_only_tag(f->s, "a"), 0);
	assert_rows(f->s, th1_a, 1);
	assert_int_equal(mt_session_only_thread(f->s, -1), 0);
	assert_int_equal(mt_session_only_tag(f->s, NULL), 0);
	assert_rows(f->s, all, 4);
}

/* The total of the profile at `kind`, as (bytes, blocks, allocs). */
static void assert_total(struct mt_session *s, enum mt_at_kind kind, int64_t bytes,
			 int64_t blocks, int64_t allocs)
{
	struct mt_at at = { kind, 0 };
	struct mt_profile *p;
	struct mt_cost c;

	assert_int_equal(mt_session_profile(s, &at, &p), 0);
	c = mt_profile_total(p);
	assert_int_equal(c.bytes, bytes);
	assert_int_equal(c.blocks, blocks);
	assert_int_equal(c.allocs, allocs);
	mt_profile_free(p);
}

static void test_only_tag(void **state)
{
	struct fixture *f = *state;
	struct mt_profile *p;
	struct mt_cost c;

	assert_total(f->s, MT_AT_PEAK, 1187, 5, 5);
	/* "a" keeps a and a/b */
	assert_int_equal(mt_session_only_tag(f->s, "a"), 0);
	assert_total(f->s, MT_AT_PEAK, 180, 3, 3);
	assert_total(f->s, MT_AT_END, 150, 3, 4);
	assert_int_equal(mt_session_calls(f->s, &p), 0);
	c = mt_profile_total(p);
	assert_int_equal(c.bytes, 200);
	assert_int_equal(c.allocs, 4);
	mt_profile_free(p);
	/* temporaries: none here, but the filter applies */
	assert_int_equal(mt_session_temporary(f->s, &p), 0);
	mt_profile_free(p);
	/* a replayed point (off the marks) is restricted too */
	assert_int_equal(mt_session_only_thread(f->s, 101), 0);
	assert_total(f->s, MT_AT_PEAK, 30, 1, 1);
	assert_total(f->s, MT_AT_END, 50, 2, 2);
	assert_int_equal(mt_session_only_thread(f->s, -1), 0);
	/* a path, the untagged, and paths the log has not */
	assert_int_equal(mt_session_only_tag(f->s, "a/b"), 0);
	assert_total(f->s, MT_AT_PEAK, 80, 2, 2);
	assert_int_equal(mt_session_only_tag(f->s, ""), 0);
	assert_total(f->s, MT_AT_END, 7, 1, 1);
	assert_int_equal(mt_session_only_tag(f->s, "b"), MT_E_NOTFOUND);
	assert_int_equal(mt_session_only_tag(f->s, "a/"), MT_E_NOTFOUND);
	/* unchanged by a failed restriction */
	assert_total(f->s, MT_AT_END, 7, 1, 1);
	assert_int_equal(mt_session_only_tag(f->s, NULL), 0);
	assert_total(f->s, MT_AT_END, 157, 4, 6);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_paths, setup, teardown),
		cmocka_unit_test_setup_teardown(test_rows, setup, teardown),
		cmocka_unit_test_setup_teardown(test_only_tag, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

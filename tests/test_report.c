/*
 * test_report.c - unit tests of lib/report.c through a real replay: a small
 * log written with the test encoder (tests/testlog.c, independent of the
 * writer), reported with mt_report_write. The log has no modules, so every
 * frame shows as its address; the expected texts are derived by hand from
 * the events listed in new_log(); the point parser (mt_at_parse) against
 * its snapshots. Not for: symbols (test_symbols.c) or the
 * samples (tests/e2e/report_*.sh).
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

#include "error.h"
#include "format.h"
#include "replay.h"
#include "report.h"
#include "session.h"

#include "testlog.c"

struct fixture {
	char dir[64];
	char path[96];
	struct mt_session *r;
	struct mt_report_opts o;
	char *buf;
	size_t len;
	FILE *out;
	int progress_calls;
};

/*
 * The run (live bytes after each event):
 *   seq 0  malloc  0xa000 100 (stack 0)                100
 *   seq 1  calloc  0xb000 300 (stack 1)                400
 *   seq 2  snapshot 0 "one"                            400
 *   seq 3  realloc 0xa000 -> 0xc000, 500 (stack 2)     800  <- peak, 2 blocks
 *   seq 4  free 0xb000                                 500
 *   seq 5  malloc  0xd000 50 (stack 0)                 550
 *   seq 6  free 0xd000: temporary                      500
 *   seq 7  snapshot 1 "two"                            500
 */
static void new_log(const char *path)
{
	static const char cmd[] = "./prog\0";
	static const uint64_t ips0[] = { 0x1000, 0x2000 };
	static const uint64_t ips1[] = { 0x1100, 0x2000 };
	static const uint64_t ips2[] = { 0x1200, 0x2000 };
	struct testlog *t = tl_new(7, cmd, sizeof(cmd) - 1);

	tl_thread(t, 0, 7);
	tl_stack(t, 0, MT_FN_MALLOC, 2, ips0);
	tl_stack(t, 1, MT_FN_CALLOC, 2, ips1);
	tl_stack(t, 2, MT_FN_REALLOC, 2, ips2);
	tl_alloc(t, 1000, 0xa000, 100, 0, 0);
	tl_alloc(t, 1000, 0xb000, 300, 1, 0);
	tl_snapshot(t, 1000, 0, "one");
	tl_realloc(t, 1000, 0xa000, 0xc000, 500, 2, 0);
	tl_flush(t);
	tl_free_block(t, 1000, 0xb000, 0);
	tl_alloc(t, 1000, 0xd000, 50, 0, 0);
	tl_free_block(t, 1000, 0xd000, 0);
	tl_snapshot(t, 1000, 1, "two");
	tl_end(t, 1000, MT_END_EXIT, 0);
	tl_write(t, path);
	tl_free(t);
}

static void on_progress(void *ctx, uint64_t done, uint64_t total)
{
	struct fixture *f = ctx;

	(void)done;
	(void)total;
	f->progress_calls++;
}

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));

	assert_non_null(f);
	strcpy(f->dir, "/tmp/mt-test-report.XXXXXX");
	assert_non_null(mkdtemp(f->dir));
	snprintf(f->path, sizeof(f->path), "%s/log", f->dir);
	new_log(f->path);
	struct mt_session_opts so = { .progress = { on_progress, f }, .size_buckets = 1 };
	assert_int_equal(mt_session_open(f->path, &so, &f->r, NULL), 0);
	f->o.threshold_pct = 1.0;
	f->out = open_memstream(&f->buf, &f->len);
	assert_non_null(f->out);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	fclose(f->out);
	free(f->buf);
	mt_session_free(f->r);
	unlink(f->path);
	rmdir(f->dir);
	free(f);
	return 0;
}

static const char *report(struct fixture *f, unsigned show)
{
	fclose(f->out);
	free(f->buf);
	f->buf = NULL;
	f->out = open_memstream(&f->buf, &f->len);
	assert_non_null(f->out);
	f->o.show = show;
	assert_int_equal(mt_report_write(f->r, &f->o, f->out), 0);
	fflush(f->out);
	return f->buf;
}

static void test_maximum_and_leaks(void **state)
{
	struct fixture *f = *state;

	assert_string_equal(report(f, MT_SHOW_MAXIMUM | MT_SHOW_LEAKS),
		"maximum: 800B\n"
		"  -> 62.50% (500B, 1x): realloc\n"
		"  | -> 62.50% (500B, 1x): 0x1200\n"
		"  |   -> 62.50% (500B, 1x): 0x2000\n"
		"  | \n"
		"  -> 37.50% (300B, 1x): calloc\n"
		"    -> 37.50% (300B, 1x): 0x1100\n"
		"      -> 37.50% (300B, 1x): 0x2000\n"
		"\n"
		"leaked: 500B\n"
		"  -> 100.00% (500B, 1x): realloc\n"
		"    -> 100.00% (500B, 1x): 0x1200\n"
		"      -> 100.00% (500B, 1x): 0x2000\n");
	assert_true(f->progress_calls > 0);   /* from the session's pass */
}

static void test_snapshots_and_deltas(void **state)
{
	struct fixture *f = *state;

	f->o.depth = 1;
	f->o.inverted = 1;
	/* inverted with depth 1: the outermost frame only */
	assert_string_equal(report(f, MT_SHOW_SNAPSHOTS | MT_SHOW_DELTAS),
		"snapshot 0 (one): 400B\n"
		"  -> 100.00% (400B, 2x): 0x2000\n"
		"\n"
		"snapshot 1 (two): 500B\n"
		"  -> 100.00% (500B, 1x): 0x2000\n"
		"\n"
		"start - snapshot 0: +400B\n"
		"  -> +100.00% (+400B, +2x): 0x2000\n"
		"\n"
		"snapshot 0 - snapshot 1: +100B\n"
		"  -> +11.11% (+100B, -1x): 0x2000\n");
}

/* snapshot 1 - snapshot 0: realloc +500, calloc -300, malloc -100; gross 900 */
static void test_diff(void **state)
{
	struct fixture *f = *state;

	f->o.depth = 1;
	f->o.diff_a.kind = MT_AT_SNAPSHOT;
	f->o.diff_a.value = 0;
	f->o.diff_b.kind = MT_AT_SNAPSHOT;
	f->o.diff_b.value = 1;
	assert_string_equal(report(f, MT_SHOW_DIFF),
		"snapshot 0 - snapshot 1: +100B\n"
		"  -> +55.56% (+500B, +1x): realloc\n"
		"  | -> +55.56% (+500B, +1x): 0x1200\n"
		"  | \n"
		"  -> -33.33% (-300B, -1x): calloc\n"
		"  | -> -33.33% (-300B, -1x): 0x1100\n"
		"  | \n"
		"  -> -11.11% (-100B, -1x): malloc\n"
		"    -> -11.11% (-100B, -1x): 0x1000\n");
	/* peak - end: calloc's 300 B freed */
	f->o.diff_a.kind = MT_AT_PEAK;
	f->o.diff_b.kind = MT_AT_END;
	f->o.threshold_pct = 0;
	assert_string_equal(report(f, MT_SHOW_DIFF),
		"peak - end: -300B\n"
		"  -> -100.00% (-300B, -1x): calloc\n"
		"    -> -100.00% (-300B, -1x): 0x1100\n");
	/* a snapshot the log does not have */
	f->o.diff_b.kind = MT_AT_SNAPSHOT;
	f->o.diff_b.value = 2;
	f->o.show = MT_SHOW_DIFF;
	assert_int_equal(mt_report_write(f->r, &f->o, f->out), MT_E_NOTFOUND);
}

static void test_temporary(void **state)
{
	struct fixture *f = *state;

	assert_string_equal(report(f, MT_SHOW_TEMPORARY),
		"temporary: 1 allocation (50B)\n"
		"  -> 100.00% (50B, 1x): malloc\n"
		"    -> 100.00% (50B, 1x): 0x1000\n"
		"      -> 100.00% (50B, 1x): 0x2000\n");
}

/* Collapsed: root first; JSON: the event of the peak's realloc stack. */
static void test_exports(void **state)
{
	struct fixture *f = *state;

	f->o.format = MT_FORMAT_COLLAPSED;
	assert_string_equal(report(f, MT_SHOW_MAXIMUM),
		"0x2000;0x1200;realloc 500\n"
		"0x2000;0x1100;calloc 300\n");
	f->o.format = MT_FORMAT_JSON;
	assert_non_null(strstr(report(f, MT_SHOW_LEAKS),
		"{\"callchain\": [0, 1, 2], \"cost\": [500]}"));
	f->o.format = MT_FORMAT_MASSIF;
	assert_non_null(strstr(report(f, MT_SHOW_MAXIMUM),
		"time=0.004\nmem_heap_B=800\nmem_heap_extra_B=0\nmem_stacks_B=0\nheap_tree=peak\n"
		"n2: 800 (heap allocation functions) malloc/new/new[], --alloc-fns, etc.\n"
		" n1: 500 0x1200: 0x1200\n"
		"  n0: 500 0x2000: 0x2000\n"
		" n1: 300 0x1100: 0x1100\n"
		"  n0: 300 0x2000: 0x2000\n"));
}

/*
 * Every call of the run: malloc 100 and 50 (stack 0: 2 calls, 150 B, avg
 * 75), calloc 300 (1), realloc's new block of 500 (1): 4 calls, 950 B.
 * Sorted and scaled by calls: malloc 2/4 = 50%, then calloc and realloc
 * (1/4 = 25% each, tied: by name).
 */
static void test_calls(void **state)
{
	struct fixture *f = *state;

	assert_string_equal(report(f, MT_SHOW_CALLS),
		"calls: 4 allocations (950B)\n"
		"  -> 50.00% (150B, 2x, avg 75B): malloc\n"
		"  | -> 50.00% (150B, 2x, avg 75B): 0x1000\n"
		"  |   -> 50.00% (150B, 2x, avg 75B): 0x2000\n"
		"  | \n"
		"  -> 25.00% (300B, 1x, avg 300B): calloc\n"
		"  | -> 25.00% (300B, 1x, avg 300B): 0x1100\n"
		"  |   -> 25.00% (300B, 1x, avg 300B): 0x2000\n"
		"  | \n"
		"  -> 25.00% (500B, 1x, avg 500B): realloc\n"
		"    -> 25.00% (500B, 1x, avg 500B): 0x1200\n"
		"      -> 25.00% (500B, 1x, avg 500B): 0x2000\n");
	/* the exports count calls, not bytes */
	f->o.format = MT_FORMAT_COLLAPSED;
	assert_string_equal(report(f, MT_SHOW_CALLS),
		"0x2000;0x1200;realloc 1\n"
		"0x2000;0x1100;calloc 1\n"
		"0x2000;0x1000;malloc 2\n");
	f->o.format = MT_FORMAT_JSON;
	report(f, MT_SHOW_CALLS);
	assert_non_null(strstr(f->buf,
		"\"costs\": [{\"description\": \"Allocation calls\", \"unit\": \"calls\"}]"));
	/* functions in walk order (by bytes): realloc 0, 0x1200 1, 0x2000 2,
	 * calloc 3, 0x1100 4, malloc 5, 0x1000 6 */
	assert_non_null(strstr(f->buf, "{\"callchain\": [5, 6, 2], \"cost\": [2]}"));
	assert_non_null(strstr(f->buf, "{\"callchain\": [0, 1, 2], \"cost\": [1]}"));
}

/*
 * Sizes 100, 300, 500, 50: 32-63 holds 50, 64-127 100, 256-511 300 and
 * 500 (2 of 4 calls, 800 B); 128-255, between, is empty. Bars: 40 marks
 * for the fullest bucket, 20 for half as many calls.
 */
static void test_sizes(void **state)
{
	struct fixture *f = *state;

	assert_string_equal(report(f, MT_SHOW_SIZES),
		"sizes: 4 allocations (950B)\n"
		"       size  calls  % calls  bytes\n"
		"    32 - 63      1   25.00%    50B  ####################\n"
		"   64 - 127      1   25.00%   100B  ####################\n"
		"  128 - 255      0    0.00%     0B\n"
		"  256 - 511      2   50.00%   800B  ########################################\n");
	/* -i: the stacks through 0x1000 or 0x1100 (malloc's and calloc's) */
	f->o.include_function = "0x1[01]00";
	assert_string_equal(report(f, MT_SHOW_SIZES),
		"sizes: 3 allocations (450B)\n"
		"       size  calls  % calls  bytes\n"
		"    32 - 63      1   33.33%    50B  ########################################\n"
		"   64 - 127      1   33.33%   100B  ########################################\n"
		"  128 - 255      0    0.00%     0B\n"
		"  256 - 511      1   33.33%   300B  ########################################\n");
	/* -x realloc and the entry point: malloc's and calloc's again */
	f->o.include_function = NULL;
	f->o.exclude_function = "^realloc$";
	assert_non_null(strstr(report(f, MT_SHOW_SIZES), "sizes: 3 allocations (450B)\n"));
	f->o.exclude_function = NULL;
	f->o.format = MT_FORMAT_JSON;
	assert_string_equal(report(f, MT_SHOW_SIZES),
		"{\n  \"sizes\": [\n"
		"    {\"min\": 32, \"max\": 63, \"calls\": 1, \"bytes\": 50},\n"
		"    {\"min\": 64, \"max\": 127, \"calls\": 1, \"bytes\": 100},\n"
		"    {\"min\": 256, \"max\": 511, \"calls\": 2, \"bytes\": 800}\n"
		"  ]\n}\n");
	/* no tree to export */
	f->o.format = MT_FORMAT_COLLAPSED;
	f->o.show = MT_SHOW_SIZES;
	assert_int_equal(mt_report_write(f->r, &f->o, f->out), MT_E_ARG);
}

/* The one point parser: words, numbers and labels of the log's snapshots. */
static void test_points(void **state)
{
	struct fixture *f = *state;
	const struct mt_agg_stats *st = mt_session_stats(f->r);
	static const char cmd[] = "./prog\0";
	struct testlog *t;
	struct mt_at p;
	char path[128];

	assert_int_equal(mt_at_parse("peak", st, &p), 0);
	assert_int_equal(p.kind, MT_AT_PEAK);
	assert_int_equal(mt_at_parse("start", st, &p), 0);
	assert_int_equal(p.kind, MT_AT_START);
	assert_int_equal(mt_at_parse("end", st, &p), 0);
	assert_int_equal(p.kind, MT_AT_END);
	assert_int_equal(mt_at_parse("two", st, &p), 0);
	assert_true(p.kind == MT_AT_SNAPSHOT && p.value == 1);
	assert_int_equal(mt_at_parse("0", st, &p), 0);
	assert_true(p.kind == MT_AT_SNAPSHOT && p.value == 0);
	assert_int_equal(mt_at_parse("2", st, &p), MT_E_NOTFOUND);
	assert_int_equal(mt_at_parse("99999999999999999999999", st, &p), MT_E_NOTFOUND);
	assert_int_equal(mt_at_parse("One", st, &p), MT_E_NOTFOUND);
	assert_int_equal(mt_at_parse("", st, &p), MT_E_ARG);
	/* a label twice is ambiguous; a label "5" is not snapshot 5 */
	snprintf(path, sizeof(path), "%s/labels", f->dir);
	t = tl_new(7, cmd, sizeof(cmd) - 1);
	tl_thread(t, 0, 7);
	tl_snapshot(t, 1000, 0, "x");
	tl_snapshot(t, 1000, 1, "x");
	tl_snapshot(t, 1000, 2, "5");
	tl_snapshot(t, 1000, 3, "peak");
	tl_end(t, 1000, MT_END_EXIT, 0);
	tl_write(t, path);
	tl_free(t);
	mt_session_free(f->r);
	f->r = NULL;
	assert_int_equal(mt_session_open(path, NULL, &f->r, NULL), 0);
	unlink(path);
	st = mt_session_stats(f->r);
	assert_int_equal(mt_at_parse("x", st, &p), MT_E_ARG);
	assert_int_equal(mt_at_parse("5", st, &p), MT_E_NOTFOUND);
	assert_int_equal(mt_at_parse("2", st, &p), 0);
	assert_int_equal(mt_at_parse("peak", st, &p), 0);
	assert_int_equal(p.kind, MT_AT_PEAK);
}

/*
 * A run whose heap is larger than 2^64 / 20 bytes: the graph has 72 x 20
 * cells (SPEC), and the peak's column, whose maximum is the peak itself, is
 * as high as the graph: '#' on every one of its 20 rows.
 */
static void test_timeline_huge(void **state)
{
	struct fixture *f = *state;
	static const char cmd[] = "./prog\0";
	static const uint64_t ips[] = { 0x1000 };
	struct testlog *t = tl_new(7, cmd, sizeof(cmd) - 1);
	char path[128];
	const char *out, *line;
	int rows = 0;

	snprintf(path, sizeof(path), "%s/huge", f->dir);
	tl_thread(t, 0, 7);
	tl_stack(t, 0, MT_FN_MALLOC, 1, ips);
	tl_alloc(t, 1000, 0xa000, 1ull << 61, 0, 0);
	tl_alloc(t, 1000, 0xb000, 1ull << 61, 0, 0);
	tl_end(t, 1000, MT_END_EXIT, 0);
	tl_write(t, path);
	tl_free(t);
	mt_session_free(f->r);
	f->r = NULL;
	assert_int_equal(mt_session_open(path, NULL, &f->r, NULL), 0);
	out = report(f, MT_SHOW_TIMELINE);
	unlink(path);
	assert_non_null(strstr(out, "timeline: peak 4,611,686,018,427,387,904B in 2 blocks"));
	for (line = out; line; line = strchr(line, '\n')) {
		line += *line == '\n';
		if (*line && strchr(line, '#') && strchr(line, '#') < strchr(line, '\n'))
			rows++;
	}
	assert_int_equal(rows, 20);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_maximum_and_leaks, setup, teardown),
		cmocka_unit_test_setup_teardown(test_snapshots_and_deltas, setup, teardown),
		cmocka_unit_test_setup_teardown(test_diff, setup, teardown),
		cmocka_unit_test_setup_teardown(test_temporary, setup, teardown),
		cmocka_unit_test_setup_teardown(test_exports, setup, teardown),
		cmocka_unit_test_setup_teardown(test_timeline_huge, setup, teardown),
		cmocka_unit_test_setup_teardown(test_calls, setup, teardown),
		cmocka_unit_test_setup_teardown(test_sizes, setup, teardown),
		cmocka_unit_test_setup_teardown(test_points, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

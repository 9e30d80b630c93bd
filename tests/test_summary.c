/*
 * test_summary.c - unit tests of lib/summary.c: exact figures of a log with
 * hand-computed events (peak ties, realloc as one event, zero-size blocks,
 * cross-thread and unknown frees, snapshots), a truncated log, an empty
 * log, and the text and JSON output.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "error.h"
#include "format.h"
#include "replay.h"
#include "session.h"
#include "summary.h"
#include "testlog.c"

struct fix {
	char dir[64];
	char path[128];
	struct mt_session *ses;
	struct mt_summary *s;
};

static int setup(void **state)
{
	struct fix *f = calloc(1, sizeof(*f));

	if (!f)
		return -1;
	strcpy(f->dir, "/tmp/mt-test-summary.XXXXXX");
	if (!mkdtemp(f->dir))
		return -1;
	snprintf(f->path, sizeof(f->path), "%s/log", f->dir);
	f->s = mt_summary_new();
	*state = f;
	return f->s ? 0 : -1;
}

static int teardown(void **state)
{
	struct fix *f = *state;

	mt_summary_free(f->s);
	mt_session_free(f->ses);
	unlink(f->path);
	rmdir(f->dir);
	free(f);
	return 0;
}

static const struct mt_summary_info *summarize(struct fix *f, const void *img, size_t len)
{
	static const struct mt_session_opts figures = { .figures_only = 1 };

	tl_write_file(f->path, img, len);
	mt_session_free(f->ses);
	assert_int_equal(mt_session_open(f->path, &figures, &f->ses, NULL), 0);
	assert_int_equal(mt_summary_of_session(f->s, f->ses), 0);
	return mt_summary_info(f->s);
}

/*
 * The scenario; live bytes/blocks after each event in the comments:
 *   seq 0 t=10 alloc A 100            100/1  peak
 *   seq 1 t=20 alloc B 200            300/2  peak
 *   seq 2 t=30 realloc B -> C 500     600/2  peak (never 800: free half first)
 *   seq 3 t=40 free A                 500/1
 *   seq 4 t=45 alloc D 0              500/2
 *   seq 5 t=55 snapshot 0 "mid"       500/2
 *   -- chunk boundary --
 *   seq 6 t=60 alloc E 100            600/3  ties the peak: the first stays
 *   seq 7 t=70 free E (thread 1)      500/2
 *   seq 8 t=80 free of unknown addr   ignored
 *   seq 9 t=90 alloc F 7 (thread 1)   507/3
 *   seq 10 t=95 snapshot 1 ""         507/3
 *   END t=100
 */
static struct testlog *scenario(void)
{
	static const char cmd[] = "./app\0--x\0";
	uint64_t ip = 0x401000;
	struct testlog *t = tl_new(99, cmd, sizeof(cmd) - 1);

	tl_thread(t, 0, 99);
	tl_stack(t, 0, MT_FN_MALLOC, 1, &ip);
	tl_alloc(t, 10, 0xa000, 100, 0, 0);
	tl_alloc(t, 10, 0xb000, 200, 0, 0);
	tl_realloc(t, 10, 0xb000, 0xc000, 500, 0, 0);
	tl_free_block(t, 10, 0xa000, 0);
	tl_alloc(t, 5, 0xd000, 0, 0, 0);
	tl_snapshot(t, 10, 0, "mid");
	tl_flush(t);
	tl_thread(t, 1, 100);
	tl_alloc(t, 5, 0xe000, 100, 0, 0);
	tl_free_block(t, 10, 0xe000, 1);
	tl_free_block(t, 10, 0xf00, 1);
	tl_alloc(t, 10, 0xf000, 7, 0, 1);
	tl_snapshot(t, 5, 1, "");
	tl_end(t, 5, MT_END_EXIT, 0);
	return t;
}

static void test_scenario(void **state)
{
	struct fix *f = *state;
	struct testlog *t = scenario();
	const struct mt_summary_info *i;
	const uint8_t *img;
	size_t len;

	img = tl_image(t, &len);
	i = summarize(f, img, len);
	assert_string_equal(i->command, "./app --x");
	assert_int_equal(i->pid, 99);
	assert_int_equal(i->duration_ns, 100);
	assert_int_equal(i->allocations, 6);
	assert_int_equal(i->frees, 3);
	assert_int_equal(i->bytes_allocated, 100 + 200 + 500 + 0 + 100 + 7);
	assert_int_equal(i->peak_bytes, 600);
	assert_int_equal(i->peak_blocks, 2);
	assert_int_equal(i->peak_time_ns, 30);
	assert_int_equal(i->peak_seq, 2);
	assert_int_equal(i->has_peak, 1);
	assert_int_equal(i->leaked_bytes, 507);
	assert_int_equal(i->leaked_blocks, 3);
	assert_int_equal(i->threads, 2);
	assert_int_equal(i->events, 11);
	assert_int_equal(i->clean, 1);
	assert_int_equal(i->truncated, 0);
	assert_int_equal(i->nsnapshots, 2);
	assert_int_equal(i->snapshots[0].index, 0);
	assert_string_equal(i->snapshots[0].label, "mid");
	assert_int_equal(i->snapshots[0].seq, 5);
	assert_int_equal(i->snapshots[0].time_ns, 55);
	assert_int_equal(i->snapshots[0].live_bytes, 500);
	assert_int_equal(i->snapshots[0].live_blocks, 2);
	assert_int_equal(i->snapshots[1].index, 1);
	assert_string_equal(i->snapshots[1].label, "");
	assert_int_equal(i->snapshots[1].time_ns, 95);
	assert_int_equal(i->snapshots[1].live_bytes, 507);
	assert_int_equal(i->snapshots[1].live_blocks, 3);

	/* A full session (per-stack costs, journal, series) counts the same. */
	mt_session_free(f->ses);
	assert_int_equal(mt_session_open(f->path, NULL, &f->ses, NULL), 0);
	assert_int_equal(mt_summary_of_session(f->s, f->ses), 0);
	i = mt_summary_info(f->s);
	assert_int_equal(i->allocations, 6);
	assert_int_equal(i->nsnapshots, 2);
	assert_int_equal(i->peak_bytes, 600);
	assert_int_equal(i->snapshots[1].live_bytes, 507);
	tl_free(t);
}

/* Cut inside the second chunk: the figures of the first chunk only. */
static void test_truncated(void **state)
{
	struct fix *f = *state;
	struct testlog *t = scenario();
	const struct mt_summary_info *i;
	const uint8_t *img;
	size_t len;

	img = tl_image(t, &len);
	i = summarize(f, img, len - 3);
	assert_int_equal(i->truncated, 1);
	assert_int_equal(i->clean, 0);
	assert_int_equal(i->events, 6);
	assert_int_equal(i->allocations, 4);
	assert_int_equal(i->frees, 2);
	assert_int_equal(i->bytes_allocated, 800);
	assert_int_equal(i->peak_bytes, 600);
	assert_int_equal(i->leaked_bytes, 500);
	assert_int_equal(i->leaked_blocks, 2);
	assert_int_equal(i->duration_ns, 55);
	assert_int_equal(i->threads, 1);
	assert_int_equal(i->nsnapshots, 1);
	tl_free(t);
}

static void test_empty(void **state)
{
	struct fix *f = *state;
	struct testlog *t = tl_new(1, "", 0);
	const struct mt_summary_info *i;
	const uint8_t *img;
	size_t len;

	tl_end(t, 42, MT_END_EXIT, 0);
	img = tl_image(t, &len);
	i = summarize(f, img, len);
	assert_string_equal(i->command, "");
	assert_int_equal(i->duration_ns, 42);
	assert_int_equal(i->allocations, 0);
	assert_int_equal(i->peak_bytes, 0);
	assert_int_equal(i->peak_blocks, 0);
	assert_int_equal(i->peak_time_ns, 0);
	assert_int_equal(i->has_peak, 0);
	assert_int_equal(i->leaked_blocks, 0);
	assert_int_equal(i->threads, 0);
	assert_int_equal(i->nsnapshots, 0);
	tl_free(t);
}

/* Writes through fn into a string; returns it (caller frees). */
static char *capture(const struct mt_summary_info *i,
		     int (*fn)(const struct mt_summary_info *, FILE *))
{
	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);

	assert_non_null(m);
	assert_int_equal(fn(i, m), 0);
	fclose(m);
	return buf;
}

static void test_text(void **state)
{
	struct fix *f = *state;
	struct testlog *t = scenario();
	const uint8_t *img;
	size_t len;
	char *out;

	img = tl_image(t, &len);
	out = capture(summarize(f, img, len), mt_summary_write_text);
	assert_string_equal(out,
		"command:          ./app --x\n"
		"duration:         0.000 ms\n"
		"allocations:      6\n"
		"frees:            3\n"
		"bytes allocated:  907 B (907 B)\n"
		"peak:             600 B (600 B) in 2 blocks at 0.000 ms\n"
		"leaked:           507 B (507 B) in 3 blocks\n"
		" not classified   (no leak check at exit)\n"
		"threads:          2\n"
		"snapshots:        2\n"
		"  snapshot 0 at 0.000 ms: 500 B (500 B) in 2 blocks \"mid\"\n"
		"  snapshot 1 at 0.000 ms: 507 B (507 B) in 3 blocks\n");
	free(out);
	tl_free(t);
}

/*
 * Resident-set samples (RSS records): the largest one and its time, in
 * the text and the JSON; a log without samples (the scenario) has
 * neither. Samples 4,096 at t=10, 12,288 at t=30 (the peak RSS), 8,192
 * at t=40, between the events of one allocation and its free.
 */
static void test_rss(void **state)
{
	struct fix *f = *state;
	struct testlog *t = tl_new(7, "rss\0", 4);
	uint64_t ip = 0x401000;
	const struct mt_summary_info *i;
	const uint8_t *img;
	size_t len;
	char *out;

	tl_thread(t, 0, 7);
	tl_stack(t, 0, MT_FN_MALLOC, 1, &ip);
	tl_rss(t, 10, 4096);
	tl_alloc(t, 10, 0xa000, 100, 0, 0);
	tl_rss(t, 10, 12288);
	tl_rss(t, 10, 8192);
	tl_free_block(t, 10, 0xa000, 0);
	tl_end(t, 10, MT_END_EXIT, 0);
	img = tl_image(t, &len);
	i = summarize(f, img, len);
	assert_true(i->has_rss);
	assert_int_equal(i->peak_rss_bytes, 12288);
	assert_int_equal(i->peak_rss_time_ns, 30);
	out = capture(i, mt_summary_write_text);
	assert_non_null(strstr(out, "\npeak RSS:         12,288 B (12.0 KiB) at 0.000 ms\n"));
	free(out);
	out = capture(i, mt_summary_write_json);
	assert_non_null(strstr(out, "\"peak_rss_bytes\": 12288, \"peak_rss_time_s\": 0.000000030, "));
	free(out);
	tl_free(t);

	t = scenario();
	img = tl_image(t, &len);
	i = summarize(f, img, len);
	assert_false(i->has_rss);
	out = capture(i, mt_summary_write_json);
	assert_null(strstr(out, "rss"));
	free(out);
	tl_free(t);
}

static void test_json(void **state)
{
	struct fix *f = *state;
	struct testlog *t = scenario();
	const uint8_t *img;
	size_t len;
	char *out;

	img = tl_image(t, &len);
	out = capture(summarize(f, img, len), mt_summary_write_json);
	assert_string_equal(out,
		"{\"command\": \"./app --x\", \"duration_s\": 0.000000100, "
		"\"allocations\": 6, \"frees\": 3, \"bytes_allocated\": 907, "
		"\"peak_bytes\": 600, \"peak_blocks\": 2, \"peak_time_s\": 0.000000030, "
		"\"leaked_bytes\": 507, \"leaked_blocks\": 3, \"snapshots\": ["
		"{\"index\": 0, \"label\": \"mid\", \"time_s\": 0.000000055, "
		"\"live_bytes\": 500, \"live_blocks\": 2}, "
		"{\"index\": 1, \"label\": \"\", \"time_s\": 0.000000095, "
		"\"live_bytes\": 507, \"live_blocks\": 3}], \"threads\": 2}\n");
	free(out);
	tl_free(t);
}

static void test_json_string(void **state)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);

	(void)state;
	assert_non_null(m);
	/* quote, backslash, newline, tab, DEL, é (valid), a lone 0xff, an
	 * overlong '/', a truncated 3-byte sequence */
	mt_json_string(m, "a\"b\\c\nd\te\x7f\xc3\xa9\xff\xc0\xaf\xe2\x82");
	fclose(m);
	assert_string_equal(buf,
		"\"a\\\"b\\\\c\\u000ad\\u0009e\\u007f\xc3\xa9\\ufffd\\ufffd\\ufffd\\ufffd\\ufffd\"");
	free(buf);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_scenario, setup, teardown),
		cmocka_unit_test_setup_teardown(test_truncated, setup, teardown),
		cmocka_unit_test_setup_teardown(test_empty, setup, teardown),
		cmocka_unit_test_setup_teardown(test_text, setup, teardown),
		cmocka_unit_test_setup_teardown(test_json, setup, teardown),
		cmocka_unit_test_setup_teardown(test_rss, setup, teardown),
		cmocka_unit_test(test_json_string),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

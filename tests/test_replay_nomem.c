/*
 * test_replay_nomem.c - the replay out of memory in its applier, with the
 * decoder on a thread of its own and without: the run ends with
 * MT_E_NOMEM, as it does alone, and nothing decoded ahead is applied twice,
 * skipped or freed twice.
 *
 * The live table's growth is made to fail once, at a chosen growth: this
 * program is linked with -Wl,--wrap=mt_livetab_grow (Makefile), so the
 * replay's calls come here first. The log is a version-3 one (every block
 * in the live table) whose blocks outgrow the table many times, with
 * threads announced and named after the failure's point, so that items a
 * decoder got ahead with (THREAD, THREAD_NAME) would be applied after the
 * error if the run went on.
 *
 * Not for: the replay's results on good logs (test_replay.c), damaged logs
 * (test_hostile.c).
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
#include "livetab.h"
#include "replay.h"
#include "testlog.c"

int __real_mt_livetab_grow(struct mt_livetab *t);
int __wrap_mt_livetab_grow(struct mt_livetab *t);

static int grows, fail_at = -1;

int __wrap_mt_livetab_grow(struct mt_livetab *t)
{
	if (grows++ == fail_at)
		return MT_E_NOMEM;
	return __real_mt_livetab_grow(t);
}

static uint64_t nalloc, nthread_names;

static int count_alloc(void *ctx, const struct mt_event *ev)
{
	(void)ctx;
	(void)ev;
	nalloc++;
	return 0;
}

static void count_name(void *ctx, uint32_t index, const char *name)
{
	(void)ctx;
	(void)index;
	(void)name;
	nthread_names++;
}

/* 200,000 live blocks of thread 1 in many chunks, then 50 named threads. */
static void write_log(const char *path)
{
	static const char cmd[] = "./prog\0";
	static const uint64_t ips[] = { 0x401234 };
	struct testlog *t = tl_new_version(7, cmd, sizeof(cmd) - 1, 3);
	char name[32];

	tl_thread(t, 0, 7);
	tl_thread(t, 1, 8);
	tl_stack(t, 0, MT_FN_MALLOC, 1, ips);
	for (uint64_t i = 0; i < 200000; i++) {
		tl_alloc(t, 1, 0x10000000 + 32 * i, 24, 0, 1);
		if (i % 5000 == 4999)
			tl_flush(t);
	}
	for (uint32_t k = 2; k < 52; k++) {
		tl_thread(t, k, 100 + k);
		snprintf(name, sizeof(name), "worker-%u", k);
		tl_thread_name(t, k, name);
		tl_alloc(t, 1, 0x20000000 + 64 * k, 8, 0, k);
	}
	tl_end(t, 1, MT_END_EXIT, 0);
	tl_write(t, path);
	tl_free(t);
}

static int run(const char *path, int threads, int fail, uint64_t *allocs)
{
	struct mt_replay_ops ops = { .on_alloc = count_alloc, .on_thread_name = count_name };
	struct mt_replay *r;
	int rc;

	assert_int_equal(mt_replay_open(path, &r, NULL), 0);
	mt_replay_threads(r, threads);
	grows = 0;
	fail_at = fail;
	nalloc = nthread_names = 0;
	rc = mt_replay_run(r, &ops, NULL);
	fail_at = -1;
	*allocs = nalloc;
	mt_replay_free(r);
	return rc;
}

static void test_applier_nomem(void **state)
{
	char dir[] = "/tmp/mt-test-nomem.XXXXXX", path[64];
	uint64_t full, n0, n1;
	int total;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/log", dir);
	write_log(path);

	/* the truth: every allocation, every name, and how often it grows */
	assert_int_equal(run(path, 0, -1, &full), 0);
	assert_int_equal(full, 200000 + 50);
	assert_int_equal(nthread_names, 50);
	total = grows;
	assert_true(total >= 3);

	/* failing at each growth: the same error and the same events applied
	 * up to it, threaded or not; nothing after it */
	for (int k = 0; k < total; k++) {
		assert_int_equal(run(path, 0, k, &n0), MT_E_NOMEM);
		assert_int_equal(nthread_names, 0);
		assert_int_equal(run(path, 1, k, &n1), MT_E_NOMEM);
		assert_int_equal(nthread_names, 0);
		assert_int_equal(n1, n0);
		assert_true(n0 < full);
	}
	/* and unharmed after, threaded */
	assert_int_equal(run(path, 1, -1, &n1), 0);
	assert_int_equal(n1, full);
	unlink(path);
	rmdir(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_applier_nomem),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

/*
 * test_outpath.c - lib/outpath.c: the placeholders of -o / MEMTRAIL_OUTPUT
 * (each one, unknown ones kept, the program's name from argv[0]), %n
 * counting up past existing files, the path made absolute, and a result
 * too long for the buffer refused rather than cut.
 *
 * Not for: what record and the recorder do with the path (e2e tests).
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

#include "outpath.h"

static void test_placeholders(void **state)
{
	char out[256];
	int has_n = 0;

	(void)state;
	assert_int_equal(mt_outpath_expand("run.%p.%e.%t.%n.%%.%x.%", "/usr/bin/python3", 4321,
					   1700000000, 7, out, sizeof(out), &has_n), 0);
	assert_string_equal(out, "run.4321.python3.1700000000.7.%.%x.%");
	assert_true(has_n);
	has_n = 0;
	assert_int_equal(mt_outpath_expand("%e.data", "app", 1, 0, 0, out, sizeof(out), &has_n), 0);
	assert_string_equal(out, "app.data");
	assert_false(has_n);
	/* one byte short: refused, not cut */
	assert_int_equal(mt_outpath_expand("abcdef", "x", 1, 0, 0, out, 6, &has_n), -1);
	assert_int_equal(mt_outpath_expand("abcdef", "x", 1, 0, 0, out, 7, &has_n), 0);
}

static void test_counter_and_absolute(void **state)
{
	char dir[] = "/tmp/mt-test-outpath.XXXXXX", out[512], want[512], old[512];
	FILE *f;

	(void)state;
	assert_non_null(mkdtemp(dir));
	assert_non_null(getcwd(old, sizeof(old)));
	assert_int_equal(chdir(dir), 0);
	/* run.0 and run.1 exist: %n gives 2, made absolute */
	for (int i = 0; i < 2; i++) {
		snprintf(out, sizeof(out), "run.%d", i);
		f = fopen(out, "w");
		assert_non_null(f);
		fclose(f);
	}
	assert_int_equal(mt_outpath_resolve("run.%n", "p", 1, 0, out, sizeof(out)), 0);
	snprintf(want, sizeof(want), "%s/run.2", dir);
	assert_string_equal(out, want);
	/* absolute stays as it is */
	assert_int_equal(mt_outpath_resolve("/x/y.data", "p", 1, 0, out, sizeof(out)), 0);
	assert_string_equal(out, "/x/y.data");
	/* no room for the directory in front */
	strcpy(out, "z");
	assert_int_equal(mt_outpath_absolute(out, strlen(dir) + 2), -1);
	assert_int_equal(mt_outpath_absolute(out, strlen(dir) + 3), 0);
	snprintf(want, sizeof(want), "%s/z", dir);
	assert_string_equal(out, want);
	unlink("run.0");
	unlink("run.1");
	assert_int_equal(chdir(old), 0);
	rmdir(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_placeholders),
		cmocka_unit_test(test_counter_and_absolute),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

/*
 * testcmd.c - running shell commands from a test: the test-only helpers
 * of the tests that build programs or read files with the system's tools
 * (cc, readelf). Included by those tests (#include "testcmd.c"): it is not
 * a test program itself.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The command made from fmt, run by the shell: system()'s status. */
static int run(const char *fmt, ...) __attribute__((format(printf, 1, 2), unused));
static int run(const char *fmt, ...)
{
	char cmd[4096];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	return system(cmd);
}

/* The first line of a command's output, without the newline; 0 on success. */
static int run_line(char *out, size_t size, const char *fmt, ...)
	__attribute__((format(printf, 3, 4), unused));
static int run_line(char *out, size_t size, const char *fmt, ...)
{
	char cmd[4096];
	va_list ap;
	FILE *p;
	int ok;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	p = popen(cmd, "r");
	if (!p)
		return -1;
	ok = fgets(out, (int)size, p) != NULL;
	pclose(p);
	if (!ok)
		return -1;
	out[strcspn(out, "\n")] = '\0';
	return 0;
}

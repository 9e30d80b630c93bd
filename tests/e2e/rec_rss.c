/*
 * rec_rss.c - the program of rec_rss.sh: it makes 64 MiB resident for
 * over a second (one malloc, every page written), frees it, and prints the
 * most it ever had resident on stdout, in bytes: the kernel's high-water
 * mark (VmHWM of /proc/self/status, read while the 64 MiB are still there
 * and again at the end), the bound a sampled resident set can never pass.
 * (getrusage's ru_maxrss is not: it can lag the counters statm reads.)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* VmHWM in bytes, or 0. */
static long hwm(void)
{
	char line[256];
	long kb = 0;
	FILE *f = fopen("/proc/self/status", "r");

	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "VmHWM: %ld kB", &kb) == 1)
			break;
	if (f)
		fclose(f);
	return kb * 1024;
}

int main(void)
{
	size_t n = 64u << 20;
	char *p = malloc(n);
	struct timespec ts = { 1, 300000000 };
	long before, after;

	if (!p)
		return 1;
	memset(p, 1, n);
	nanosleep(&ts, NULL);
	before = hwm();
	free(p);
	after = hwm();
	printf("%ld\n", before > after ? before : after);
	return 0;
}

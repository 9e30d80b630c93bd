/*
 * dlmod.c - a shared library that robust_dlopen (dlmain.c) loads with
 * dlopen() after the program started, for tests/e2e/robust_realprogs.sh:
 * its allocations must be recorded with stacks that symbolize into this
 * file, and its MODULE record must be in the log.
 *
 * dlmod_work() allocates 1,000 + 2,000 + 3,000 bytes (3 blocks), frees the
 * 2,000, and keeps the other two in `kept`, never freed: 4,000 B leaked in
 * 2 blocks, all with dlmod_keep() in their stacks. Returns the blocks kept.
 *
 * Not for: anything but that test.
 */
#include <stdlib.h>
#include <string.h>

int dlmod_work(void);

static void *kept[2];

static __attribute__((noinline)) void *dlmod_keep(size_t n)
{
	void *p = malloc(n);

	if (p)
		memset(p, 0x5a, n);
	return p;
}

int dlmod_work(void)
{
	void *tmp;

	kept[0] = dlmod_keep(1000);
	tmp = malloc(2000);
	kept[1] = dlmod_keep(3000);
	free(tmp);
	return (kept[0] != NULL) + (kept[1] != NULL);
}

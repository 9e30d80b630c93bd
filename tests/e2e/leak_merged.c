/*
 * leak_merged.c - a block whose only pointer lies in a mapping of the
 * program's that the kernel merged with the mapping of a large (mmap'ed)
 * malloc block: one line of /proc/self/maps holds both. The leak scan
 * once left such a line out whole, as a chunk of the allocator's, and
 * called the small block definitely lost.
 *
 * Worked out: `big` (300,000 B) is reachable from a global, `small`
 * (100 B) only from the program's mapping: still reachable, 300,100 B in
 * 2 blocks; nothing lost. Says "merged" on stdout when the two mappings
 * are one line of /proc/self/maps (the case the test is about).
 *
 * For: tests/e2e/leak_memcheck.sh, against memcheck.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#ifndef MAP_FIXED_NOREPLACE
#define MAP_FIXED_NOREPLACE 0x100000
#endif

void *volatile big;

/* Is [a, b) within one line of /proc/self/maps? */
static int one_line(uintptr_t a, uintptr_t b)
{
	static char maps[1 << 16];
	int fd = open("/proc/self/maps", O_RDONLY);
	ssize_t n, len = 0;
	if (fd < 0)
		return 0;
	while (len < (ssize_t)sizeof(maps) - 1 &&
	       (n = read(fd, maps + len, sizeof(maps) - 1 - (size_t)len)) > 0)
		len += n;
	close(fd);
	maps[len] = 0;
	for (char *p = maps; *p;) {
		char *end;
		uintptr_t lo = strtoul(p, &end, 16), hi = strtoul(end + 1, NULL, 16);
		if (lo <= a && b <= hi)
			return 1;
		p = strchr(p, '\n');
		if (!p)
			break;
		p++;
	}
	return 0;
}

int main(void)
{
	long page = sysconf(_SC_PAGESIZE);
	big = malloc(300000);            /* over the mmap threshold: a mapping of its own */
	if (!big)
		return 1;
	/* the program's own mapping, right after the chunk's */
	uintptr_t end = ((uintptr_t)big + 300000 + (uintptr_t)page - 1) & ~((uintptr_t)page - 1);
	void **r = mmap((void *)end, (size_t)page * 16, PROT_READ | PROT_WRITE,
			MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
	if (r == MAP_FAILED || (uintptr_t)r != end)
		r = mmap(NULL, (size_t)page * 16, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (r == MAP_FAILED)
		return 1;
	r[100] = malloc(100);            /* small: reachable only from r */
	if (one_line((uintptr_t)big, (uintptr_t)r + (uintptr_t)page))
		write(1, "merged\n", 7);
	return 0;
}

/*
 * snapshots.c - benchmark workload for `make bench`: a program that takes
 * many snapshots, so that the benchmark can measure the memory and time of
 * `memtrail report --format massif` (one massif snapshot per memtrail
 * snapshot) on a log with tens of thousands of them.
 *
 *   snapshots COUNT
 *
 * It keeps a ring of 64 blocks. Each of COUNT steps reallocates the next
 * block of the ring to a new size (16 to 4,111 bytes) and then calls
 * memtrail_snapshot(), so every snapshot has a few events before it and a
 * live heap of 64 blocks. At the end it frees the ring. Counts (computed
 * by the program, not measured): allocations = frees = COUNT for COUNT >= 64,
 * each realloc of a live block counting as one free and one allocation, as
 * in memcheck, and the first 64 reallocs (of NULL) as allocations only. The printed
 * checksum depends only on the sizes, so the output is the same with or
 * without a profiler (snapshot lines go to stderr).
 *
 * Not a test and not a sample: the benchmark only reads its memory and
 * time figures.
 */
#include <stdio.h>
#include <stdlib.h>

#include "memtrail.h"

#define RING 64

int main(int argc, char **argv)
{
	static char *ring[RING];
	unsigned long count, i, sum = 0, allocs = 0, frees = 0;

	if (argc != 2 || (count = strtoul(argv[1], NULL, 10)) == 0) {
		fprintf(stderr, "usage: snapshots COUNT\n");
		return 2;
	}
	for (i = 0; i < count; i++) {
		unsigned slot = (unsigned)(i % RING);
		size_t size = 16 + (i * 2654435761u) % 4096u;
		char *p = realloc(ring[slot], size);

		if (!p) {
			perror("snapshots: realloc");
			return 1;
		}
		if (ring[slot])
			frees++;
		allocs++;
		p[0] = (char)i;
		p[size - 1] = (char)size;
		ring[slot] = p;
		sum += size;
		memtrail_snapshot();
	}
	for (i = 0; i < RING; i++)
		if (ring[i]) {
			free(ring[i]);
			frees++;
		}
	printf("snapshots: steps=%lu allocations=%lu frees=%lu sum=%lu\n",
	    count, allocs, frees, sum);
	return 0;
}

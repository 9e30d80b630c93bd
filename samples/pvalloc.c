/*
 * pvalloc.c - pvalloc, the one C allocation function valgrind cannot run.
 *
 * For: the accuracy tests of the pvalloc hook (memtrail half only). Not for:
 * the memcheck comparison: valgrind 3.19 stops the program at the first
 * pvalloc call ("Program aborting because of call to pvalloc"), so the
 * expect block carries a `memcheck skip` line. heaptrack 1.4 does not see
 * pvalloc at all.
 *
 * pvalloc(n) returns a page-aligned block whose usable size glibc rounds up
 * to a whole number of pages (4,096 B here), but the counting rules (SPEC
 * section 2) count the requested size n, as for every other call:
 *   1  p = pvalloc(100)    +100      100 B   1 block
 *   2  q = pvalloc(5000)   +5000   5,100 B   2 blocks  <- peak
 *      snapshot 0 "both": 5,100 B in 2 blocks
 *   3  free(p)             -100    5,000 B   1 block
 *   q is leaked.
 * Totals: 2 allocations, 1 free, 5,100 bytes allocated, peak 5,100 B in
 * 2 blocks, leaked 5,000 B in 1 block.
 *
 * memtrail-expect:
 *   allocations 2
 *   frees 1
 *   bytes_allocated 5100
 *   peak_bytes 5100
 *   peak_blocks 2
 *   leaked_bytes 5000
 *   leaked_blocks 1
 *   memcheck skip valgrind 3.19 aborts the program on pvalloc
 *   snapshot 0 label both live_bytes 5100 live_blocks 2
 */
#include <malloc.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include <memtrail.h>

int main(void)
{
	char *p = pvalloc(100);
	char *q = pvalloc(5000);
	static const char msg[] = "pvalloc: 2 page-aligned blocks\n";

	if (!p || !q || ((uintptr_t)p & 4095) || ((uintptr_t)q & 4095))
		return 1;
	/* The rounded-up usable size is really there. */
	memset(p, 1, 4096);
	memset(q, 2, 8192);
	memtrail_snapshot_named("both");
	free(p);
	if (write(1, msg, sizeof(msg) - 1) < 0)
		return 3;
	return 0;
}

/*
 * c_alloc_all.c - calls every C allocation function once or more, including
 * the corner cases of the counting rules, with exactly known figures.
 *
 * For: the accuracy tests (every hooked C entry point must be seen, counted
 * once, with the requested size). Not for: pvalloc, which valgrind 3.19
 * cannot run (it aborts the program: "Program aborting because of call to
 * pvalloc"); samples/pvalloc.c covers it without the memcheck half.
 *
 * Calls in order, with the live bytes / blocks after each (SPEC section 2
 * rules; a realloc is one step of 1 free + 1 allocation):
 *    1  a = malloc(100)                  +100       100 B   1 blk
 *    2  b = calloc(10, 20)               +200       300 B   2
 *    3  c = malloc(16)                   +16        316 B   3
 *    4  c = realloc(c, 32)   growth      -16 +32    332 B   3
 *    5  c = realloc(c, 64)   growth      -32 +64    364 B   3
 *    6  c = realloc(c, 128)  growth      -64 +128   428 B   3
 *    7  c = realloc(c, 48)   shrink      -128 +48   348 B   3
 *    8  d = realloc(NULL, 24)            +24        372 B   4
 *    9  e = reallocarray(NULL, 5, 8)     +40        412 B   5
 *   10  e = reallocarray(e, 10, 8)       -40 +80    452 B   5
 *   11  f = memalign(64, 100)            +100       552 B   6
 *   12  posix_memalign(&g, 256, 300)     +300       852 B   7
 *   13  posix_memalign(&x, 3, 100)       EINVAL (alignment not a power of
 *                                        two): no block, nothing counted
 *   14  h = aligned_alloc(128, 256)      +256     1,108 B   8
 *   15  i = valloc(1000)                 +1000    2,108 B   9   <- peak
 *   16  free(NULL), twice                nothing
 *   17  malloc(SIZE_MAX)                 NULL: nothing (memcheck warns
 *                                        "fishy (possibly negative) value")
 *   18  calloc(SIZE_MAX / 2, 4)          overflows, NULL: nothing
 *   19  z = malloc(0)                    +0       2,108 B  10
 *       malloc_usable_size(a)            passes through, counts nothing
 *       snapshot 0 "all": 2,108 B in 10 blocks
 *   20  free a, b, c, e, f, g, z; cfree(h) (the compat symbol glibc still
 *       exports; memcheck counts it as a free): 8 frees
 *       d (24 B, realloc(NULL)) and i (1,000 B, valloc) are leaked
 *       snapshot 1 "end": 1,024 B in 2 blocks
 * The peak of 2,108 B is first reached at call 15 with 9 blocks; malloc(0)
 * adds a block but no byte, so the peak stays at its first occurrence.
 * valloc(n) is memalign(page size, n): memcheck counts the requested n, and
 * so does memtrail. realloc(p, 0) is left out: its meaning differs between
 * C libraries (glibc frees p).
 *
 * Totals:
 *   allocations  calls 1, 2, 3, 4-7 (4), 8, 9, 10, 11, 12, 14, 15, 19 = 15
 *   frees        reallocs 4-7 (4) + 10 (1) + 8 in step 20 = 13
 *   bytes        100 + 200 + 16 + 32 + 64 + 128 + 48 + 24 + 40 + 80 + 100
 *                + 300 + 256 + 1000 + 0 = 2,388
 *   peak         2,108 B, 9 blocks
 *   leaked       24 + 1,000 = 1,024 B in 2 blocks (15 - 13 = 2)
 *
 * memtrail-expect:
 *   allocations 15
 *   frees 13
 *   bytes_allocated 2388
 *   peak_bytes 2108
 *   peak_blocks 9
 *   leaked_bytes 1024
 *   leaked_blocks 2
 *   snapshot 0 label all live_bytes 2108 live_blocks 10
 *   snapshot 1 label end live_bytes 1024 live_blocks 2
 */
#include <malloc.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <memtrail.h>

/* glibc keeps cfree only as a compat symbol; bind to it explicitly. */
__asm__(".symver cfree,cfree@GLIBC_2.2.5");
void cfree(void *p);

/* Sizes the compiler must not see, so it neither warns about nor folds the
 * failing calls. */
static volatile size_t huge = SIZE_MAX;
static volatile size_t half = SIZE_MAX / 2;
static volatile size_t bad_align = 3;

static void check(int ok, const char *what)
{
	if (!ok) {
		if (write(1, what, strlen(what)) < 0 || write(1, "\n", 1) < 0)
			_exit(3);
		_exit(1);
	}
}

int main(void)
{
	char *a, *b, *c, *d, *e, *f, *h, *i, *z;
	void *g, *x = NULL;
	char *nul = NULL;
	int k;

	a = malloc(100);
	b = calloc(10, 20);
	check(a && b, "malloc/calloc failed");
	for (k = 0; k < 200; k++)
		check(b[k] == 0, "calloc did not zero");
	c = malloc(16);
	check(c != NULL, "malloc failed");
	memset(c, 'c', 16);
	c = realloc(c, 32);
	check(c != NULL, "realloc failed");
	c = realloc(c, 64);
	check(c != NULL, "realloc failed");
	c = realloc(c, 128);
	check(c != NULL && c[15] == 'c', "realloc failed");
	c = realloc(c, 48);
	check(c != NULL && c[0] == 'c', "realloc shrink failed");
	d = realloc(NULL, 24);
	e = reallocarray(NULL, 5, 8);
	check(d && e, "realloc(NULL)/reallocarray failed");
	e = reallocarray(e, 10, 8);
	f = memalign(64, 100);
	check(e && f && ((uintptr_t)f & 63) == 0, "reallocarray/memalign failed");
	check(posix_memalign(&g, 256, 300) == 0 && ((uintptr_t)g & 255) == 0,
	      "posix_memalign failed");
	check(posix_memalign(&x, bad_align, 100) != 0 && x == NULL,
	      "posix_memalign accepted alignment 3");
	h = aligned_alloc(128, 256);
	i = valloc(1000);
	check(h && ((uintptr_t)h & 127) == 0, "aligned_alloc failed");
	check(i && ((uintptr_t)i & 4095) == 0, "valloc failed");
	free(NULL);
	free(nul);
	check(malloc(huge) == NULL, "malloc(SIZE_MAX) succeeded");
	check(calloc(half, 4) == NULL, "overflowing calloc succeeded");
	z = malloc(0);
	check(z != NULL, "malloc(0) returned NULL");
	check(malloc_usable_size(a) >= 100, "malloc_usable_size too small");
	memtrail_snapshot_named("all");

	free(a);
	free(b);
	free(c);
	free(e);
	free(f);
	free(g);
	free(z);
	cfree(h);
	memtrail_snapshot_named("end");
	check(write(1, "c_alloc_all: 15 allocations, 13 frees\n", 38) == 38, "write failed");
	return 0;
}

/*
 * realloc_zero.c - the realloc corner cases: realloc(p, 0), realloc(NULL, 0)
 * and realloc to the same size (where glibc keeps the address).
 *
 * For: the accuracy tests of realloc handling in the recorder and the
 * replay (format.h: "realloc(p, 0) that frees" is written as FREE; a
 * REALLOC whose new address equals the old one). Not for: other C
 * libraries, where realloc(p, 0) may return a new 0-byte block instead;
 * this sample checks glibc's behaviour and exits 1 if it differs.
 *
 * In order (live bytes / blocks after each):
 *   1  p = malloc(64)                         64 B  1 blk  <- peak
 *   2  realloc(p, 0): glibc frees p and returns NULL: 1 free, no block;
 *      memcheck 3.19 does the same           0 B  0
 *   3  r = realloc(NULL, 0): the same as malloc(0): 1 allocation of
 *      0 bytes, a unique non-NULL pointer     0 B  1
 *   4  free(r)                                 0 B  0
 *   5  s = malloc(32)                         32 B  1
 *   6  s = realloc(s, 32): same size; glibc returns the same address,
 *      memcheck a new one; either way 1 free + 1 allocation of 32 B
 *                                             32 B  1
 *      snapshot 0 "end": 32 B in 1 block
 *   s is leaked.
 * Totals: 4 allocations (64 + 0 + 32 + 32 = 128 B), 3 frees (steps 2, 4
 * and 6), peak 64 B in 1 block (step 1; step 6 only reaches 32 B), leaked
 * 32 B in 1 block.
 *
 * memtrail-expect:
 *   allocations 4
 *   frees 3
 *   bytes_allocated 128
 *   peak_bytes 64
 *   peak_blocks 1
 *   leaked_bytes 32
 *   leaked_blocks 1
 *   snapshot 0 label end live_bytes 32 live_blocks 1
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <memtrail.h>

/* Sizes the compiler must not see, so it does not fold the calls. */
static volatile size_t zero = 0;
static volatile size_t same = 32;

int main(void)
{
	static const char msg[] = "realloc_zero: realloc(p, 0) freed p\n";
	char *p, *r, *s, *t;

	p = malloc(64);
	if (!p)
		return 4;
	memset(p, 'p', 64);
	if (realloc(p, zero) != NULL)
		return 1;
	r = realloc(NULL, zero);
	if (!r)
		return 1;
	free(r);
	s = malloc(32);
	if (!s)
		return 4;
	memset(s, 's', 32);
	t = realloc(s, same);
	if (!t || t[31] != 's')
		return 1;
	memtrail_snapshot_named("end");
	if (write(1, msg, sizeof(msg) - 1) < 0)
		return 3;
	return 0;
}

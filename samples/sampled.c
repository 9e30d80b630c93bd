/*
 * sampled.c - a heap whose figures are known exactly, for testing
 * `memtrail record --sample` against them: large blocks that any sampling
 * interval up to a few KiB records for sure, many small ones of which it
 * records a few, reallocs, and everything freed at the end.
 *
 * Not for: exact figures of an unsampled run beyond those below (the C
 * runtime's own allocations, a few hundred bytes, come on top of them).
 *
 * One thread, in this order (all sizes requested bytes):
 *
 *   grow()     GROW_N = 16,384 blocks of 512 B, each realloc'd to 1,024 B
 *              (a REALLOC: the 512 B block ends, a 1,024 B one begins):
 *              allocated 16,384 x (512 + 1,024) = 25,165,824 B;
 *              live after: 16,384 x 1,024 = 16,777,216 B
 *   small_a()  SMALL_A_N = 262,144 blocks of 64 B = 16,777,216 B
 *   small_b()  SMALL_B_N = 65,536 blocks of 256 B = 16,777,216 B
 *   big()      BIG_N = 32 blocks of 1 MiB = 33,554,432 B
 *
 * Live bytes only grow until big() ends (every free in grow() is one
 * half of a realloc whose new half is larger), so the peak is then:
 *   16,777,216 x 3 + 33,554,432 = 83,886,080 B
 * in 16,384 + 262,144 + 65,536 + 32 = 344,096 blocks. Bytes allocated:
 *   25,165,824 + 16,777,216 x 2 + 33,554,432 = 92,274,688 B
 * in 16,384 x 2 + 262,144 + 65,536 + 32 = 360,480 allocations. Then
 * every block is freed: nothing of the program's own is live at the end.
 *
 * Per stack, live at the peak: grow's realloc 16,777,216 B, small_a's
 * malloc 16,777,216 B, small_b's malloc 16,777,216 B, big's malloc
 * 33,554,432 B (and grow's malloc: 0 B, every one realloc'd).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define GROW_N    16384
#define SMALL_A_N 262144
#define SMALL_B_N 65536
#define BIG_N     32

static void *grown[GROW_N], *sa[SMALL_A_N], *sb[SMALL_B_N], *bg[BIG_N];

static void *must(void *p)
{
	if (!p) {
		perror("sampled");
		exit(1);
	}
	return p;
}

static __attribute__((noinline)) void grow(void)
{
	for (int i = 0; i < GROW_N; i++) {
		grown[i] = must(malloc(512));
		grown[i] = must(realloc(grown[i], 1024));
	}
}

static __attribute__((noinline)) void small_a(void)
{
	for (int i = 0; i < SMALL_A_N; i++)
		sa[i] = must(malloc(64));
}

static __attribute__((noinline)) void small_b(void)
{
	for (int i = 0; i < SMALL_B_N; i++)
		sb[i] = must(malloc(256));
}

static __attribute__((noinline)) void big(void)
{
	for (int i = 0; i < BIG_N; i++) {
		bg[i] = must(malloc(1 << 20));
		memset(bg[i], 1, 64);
	}
}

int main(void)
{
	grow();
	small_a();
	small_b();
	big();
	for (int i = 0; i < BIG_N; i++)
		free(bg[i]);
	for (int i = 0; i < SMALL_B_N; i++)
		free(sb[i]);
	for (int i = 0; i < SMALL_A_N; i++)
		free(sa[i]);
	for (int i = 0; i < GROW_N; i++)
		free(grown[i]);
	return 0;
}

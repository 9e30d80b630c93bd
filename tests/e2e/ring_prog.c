/*
 * ring_prog.c - a run long enough to fill a small bounded log several
 * times over (memtrail record --max-size), with figures worked out here.
 *
 * For: tests/e2e/rec_ring.sh. Not for: anything else (it is built by that
 * test only, so that the sample runs under memcheck stay short). It uses
 * no stdio stream, so every heap block is one it asks for itself.
 *
 *   ring_prog N    N churn iterations (a multiple of 64; default 2,097,152)
 *
 * In order:
 *   keep_forever   10 x malloc(1,000), kept in a global to the end: still
 *                  reachable then, and so part of what is live at exit.
 *   early_peak     malloc(2,000,000), then its free: live 2,010,000 B in 11
 *                  blocks, the run's peak (nothing later comes near: at
 *                  most 10,000 + 1,024 x 520 + 1,665 B), long before the
 *                  bounded log's oldest kept segment.
 *   churn          a pool of P = 1,024 blocks of 64 B, then N times: free a
 *                  pool block picked by a linear congruential generator and
 *                  malloc(16 + 8 x (i mod 64)) in its place (varied
 *                  addresses and sizes, so the log does not compress to
 *                  nothing), then the pool's P blocks freed.
 *   leak_some      5 x malloc(333), pointers dropped: definitely lost.
 *
 * Figures, with sum over i < N of (16 + 8 (i mod 64)) = 16 N + 8 x 2,016 x
 * N / 64 = 268 N:
 *   allocations      10 + 1 + 1,024 + N + 5 = N + 1,040
 *   frees            1 + N + 1,024 = N + 1,025
 *   bytes allocated  10,000 + 2,000,000 + 65,536 + 268 N + 1,665
 *                    = 268 N + 2,077,201
 *   peak             2,010,000 B in 11 blocks
 *   live at exit     10 x 1,000 + 5 x 333 = 11,665 B in 15 blocks
 */
#include <stdlib.h>

#define POOL 1024

void *kept[10];
static void *volatile sink;

__attribute__((noinline)) static void keep_forever(void)
{
	for (int i = 0; i < 10; i++)
		kept[i] = malloc(1000);
}

__attribute__((noinline)) static void early_peak(void)
{
	void *p = malloc(2000000);

	sink = p;
	free(p);
}

__attribute__((noinline)) static void *churn_block(unsigned long i)
{
	return malloc(16 + 8 * (i % 64));
}

__attribute__((noinline)) static void churn(unsigned long n)
{
	static void *pool[POOL];
	unsigned long x = 12345;

	for (int i = 0; i < POOL; i++)
		pool[i] = malloc(64);
	for (unsigned long i = 0; i < n; i++) {
		x = x * 6364136223846793005ul + 1442695040888963407ul;
		unsigned j = (unsigned)(x >> 33) % POOL;

		free(pool[j]);
		pool[j] = churn_block(i);
	}
	for (int i = 0; i < POOL; i++)
		free(pool[i]);
}

__attribute__((noinline)) static void leak_some(void)
{
	for (int i = 0; i < 5; i++)
		sink = malloc(333);
	sink = NULL;
}

int main(int argc, char **argv)
{
	unsigned long n = 2097152;

	if (argc > 1)
		n = strtoul(argv[1], NULL, 10);
	keep_forever();
	early_peak();
	churn(n);
	leak_some();
	return 0;
}

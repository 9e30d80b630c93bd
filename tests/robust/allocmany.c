/*
 * allocmany.c - many heap events from many distinct call stacks, for
 * tests/e2e/robust_output.sh: its log outgrows a 64 KiB file system, so the
 * recorder hits a full disk while the program goes on.
 *
 *   allocmany ROUNDS [PAUSE]
 *
 * With PAUSE, the program sleeps 1.2 s after round PAUSE: the recorder
 * closes a chunk per second, so the log then holds a small complete chunk
 * before the big one. Each round allocates 64 blocks through 16 different call chains (so
 * many distinct stacks), then frees them; at the end it prints
 * "rounds ROUNDS blocks N checksum C" with N = ROUNDS x 64 and C a sum
 * over the blocks' first bytes, and exits 0. No stdio before the end.
 *
 * Not for: anything but that test.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define CHAIN(n, next) \
	static __attribute__((noinline)) void *chain##n(size_t sz, int d) \
	{ return d ? next(sz, d - 1) : malloc(sz); }

static __attribute__((noinline)) void *leaf(size_t sz, int d)
{
	(void)d;
	return malloc(sz);
}
CHAIN(1, leaf)
CHAIN(2, chain1)
CHAIN(3, chain2)
CHAIN(4, chain3)

int main(int argc, char **argv)
{
	static void *(*const fns[4])(size_t, int) = { chain1, chain2, chain3, chain4 };
	unsigned long rounds, pause = 0, blocks = 0, sum = 0;
	const struct timespec nap = { 1, 200000000 };
	void *p[64];

	if (argc < 2 || (rounds = strtoul(argv[1], NULL, 10)) == 0)
		return 2;
	if (argc > 2)
		pause = strtoul(argv[2], NULL, 10);
	for (unsigned long r = 0; r < rounds; r++) {
		if (pause && r == pause)
			nanosleep(&nap, NULL);
		for (int i = 0; i < 64; i++) {
			p[i] = fns[i % 4](16 + (r * 7 + (unsigned long)i * 13) % 4000, i % 4);
			if (!p[i])
				return 1;
			memset(p[i], (int)(i + r) & 0x7f, 16);
			blocks++;
		}
		for (int i = 0; i < 64; i++) {
			sum += *(unsigned char *)p[i];
			free(p[i]);
		}
	}
	printf("rounds %lu blocks %lu checksum %lu\n", rounds, blocks, sum);
	return 0;
}

/*
 * deep.c - benchmark workload for `make bench`: many distinct, very deep
 * call stacks, so that the benchmark can measure the memory and time of
 * `memtrail report` (its peak and leaks trees) when the stacks, not the
 * events, are what is large.
 *
 *   deep STACKS DEPTH
 *
 * For each counter c in 0..STACKS-1 it descends through two mutually
 * recursive functions, a() and b(), DEPTH - 2 levels deep; at level L the
 * next function is chosen by bit L % 16 of c. Bits 0-15 of c thus decide
 * the path, so every c below 65,536 reaches the leaf through its own chain
 * of call sites: STACKS distinct stacks of DEPTH frames from the leaf to
 * main() inclusive (plus the C runtime's start-up frames). The leaf makes
 * one malloc of 32 to 95 bytes. The blocks stay live until the end, when
 * those of odd c are freed and those of even c are left: the peak tree has
 * STACKS stacks, the leaks tree STACKS / 2 (rounded down). Counts
 * (computed by the program, the table of blocks included): allocations =
 * STACKS + 1, frees = STACKS / 2 + 1.
 *
 * Not a test and not a sample: the benchmark only reads its memory and
 * time figures.
 */
#include <stdio.h>
#include <stdlib.h>

/* noipa: keep every frame (no inlining, no cloning, no identical folding);
 * clang has no noipa, and noinline is enough there. */
#if defined(__clang__)
#define NOIPA __attribute__((noinline))
#else
#define NOIPA __attribute__((noipa))
#endif

static char **blocks;

NOIPA static unsigned long leaf(unsigned long c)
{
	size_t size = 32 + c % 64;
	char *p = malloc(size);

	if (!p) {
		perror("deep: malloc");
		exit(1);
	}
	p[0] = (char)c;
	p[size - 1] = (char)size;
	blocks[c] = p;
	return size;
}

NOIPA static unsigned long b(unsigned long c, unsigned level);

/*
 * Every call mixes its callee's result: no call is a tail call, and a
 * function's calls to itself cannot be turned into a loop (which `+ k`
 * alone would allow).
 */
static unsigned long mix(unsigned long r, unsigned long k)
{
	return (r ^ (r >> 7)) + k;
}

NOIPA static unsigned long a(unsigned long c, unsigned level)
{
	if (level == 0)
		return mix(leaf(c), 1);
	if ((c >> (level % 16)) & 1)
		return mix(a(c, level - 1), 2);
	return mix(b(c, level - 1), 3);
}

NOIPA static unsigned long b(unsigned long c, unsigned level)
{
	if (level == 0)
		return mix(leaf(c), 4);
	if ((c >> (level % 16)) & 1)
		return mix(a(c, level - 1), 5);
	return mix(b(c, level - 1), 6);
}

int main(int argc, char **argv)
{
	unsigned long stacks, depth, c, sum = 0, frees = 0;

	if (argc != 3 || (stacks = strtoul(argv[1], NULL, 10)) == 0 ||
	    stacks > 65536 || (depth = strtoul(argv[2], NULL, 10)) < 3) {
		fprintf(stderr, "usage: deep STACKS(1-65536) DEPTH(>=3)\n");
		return 2;
	}
	blocks = calloc(stacks, sizeof *blocks);
	if (!blocks) {
		perror("deep: calloc");
		return 1;
	}
	/* main, the a/b levels and the leaf: DEPTH frames. */
	for (c = 0; c < stacks; c++)
		sum += a(c, (unsigned)(depth - 3));
	for (c = 1; c < stacks; c += 2) {
		free(blocks[c]);
		frees++;
	}
	free(blocks);
	printf("deep: stacks=%lu depth=%lu allocations=%lu frees=%lu sum=%lu\n",
	    stacks, depth, stacks + 1, frees + 1, sum);
	return 0;
}

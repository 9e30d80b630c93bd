/*
 * sizes.c - a program whose allocation calls and requested sizes are known
 * exactly: many small calls from one place, the edges of the power-of-two
 * size buckets, a calloc, a block grown by realloc and one large block.
 *
 * For: `memtrail report --show-calls` and `--show-sizes`
 * (tests/e2e/report_calls_sizes.sh) and the accuracy tests. Not for:
 * benchmarking. No stdio (its buffer would be one more allocation): output
 * goes through write(2).
 *
 * The calls, in order (each a call site of its own function):
 *   churn()   1,000 x malloc(24), each freed at once     1,000 calls   24,000 B
 *   edges()   malloc of 0, 1, 2, 3, 4, 7, 8, 4,095 and 4,096 B from one
 *             call site, each freed at once                  9 calls    8,216 B
 *             (0 + 1 + 2 + 3 + 4 + 7 + 8 + 4,095 + 4,096 = 8,216)
 *   table()   calloc(10, 100), kept to the end               1 call     1,000 B
 *   grow()    malloc(16), kept                               1 call        16 B
 *             then realloc to 32, 64, 128, 256, 512, 1,024 from one call
 *             site (each 1 free + 1 allocation)             6 calls    2,016 B
 *   big()     malloc(1 MiB), freed at once                   1 call 1,048,576 B
 *   then the grown block and the table are freed.
 *
 * Per entry point (the calls tree, most calls first):
 *   malloc   1,000 + 9 + 1 + 1 = 1,011 calls, 24,000 + 8,216 + 16 + 1,048,576
 *            = 1,080,808 B, 1,080,808 / 1,011 = 1,069.05: avg 1,069 B
 *   realloc  6 calls, 2,016 B, avg 336 B;  calloc  1 call, 1,000 B
 *   of 1,018 calls: churn 1,000 = 98.23%, malloc 99.31%, edges 9 = 0.88%
 *   (avg 8,216 / 9 = 912.9: 913 B), realloc 0.59%, calloc 0.10%.
 *
 * Requested sizes, power-of-two buckets (calls, bytes):
 *   0               1        0     edges' 0
 *   1               1        1     edges' 1
 *   2 - 3           2        5     edges' 2, 3
 *   4 - 7           2       11     edges' 4, 7
 *   8 - 15          1        8     edges' 8
 *   16 - 31     1,001   24,016     churn's 1,000 x 24, grow's 16
 *   32 - 63         1       32     realloc 32
 *   64 - 127        1       64     realloc 64
 *   128 - 255       1      128     realloc 128
 *   256 - 511       1      256     realloc 256
 *   512 - 1,023     2    1,512     realloc 512, calloc 1,000
 *   1,024 - 2,047   1    1,024     realloc 1,024
 *   2,048 - 4,095   1    4,095     edges' 4,095
 *   4,096 - 8,191   1    4,096     edges' 4,096
 *   8,192 .. 1,048,575: none
 *   1,048,576 - 2,097,151  1  1,048,576  big
 *   16 - 31 holds 1,001 of 1,018 calls: 98.33%; one call is 0.10%, two 0.20%.
 *
 * Heap: the largest live at once is the table (1,000), the grown block
 * (1,024) and the big block: 1,050,600 B in 3 blocks, while big() runs.
 * Frees: 1,000 + 9 + 6 (realloc) + 1 (big) + 2 = 1,018; nothing leaks.
 *
 * memtrail-expect:
 *   allocations 1018
 *   frees 1018
 *   bytes_allocated 1083824
 *   peak_bytes 1050600
 *   peak_blocks 3
 *   leaked_bytes 0
 *   leaked_blocks 0
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Every block passes through here, so no call can be optimized away. */
static void *volatile sink;

static void *xmalloc(size_t n)
{
	void *p = malloc(n);

	if (!p)
		_exit(4);
	sink = p;
	return p;
}

static void churn(void)
{
	for (int i = 0; i < 1000; i++) {
		char *p = malloc(24);

		if (!p)
			_exit(4);
		sink = p;
		free(p);
	}
}

static void edges(void)
{
	static const size_t sizes[] = { 0, 1, 2, 3, 4, 7, 8, 4095, 4096 };

	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		void *p = malloc(sizes[i]);

		/* malloc(0) returns a unique block in glibc: it counts */
		if (!p)
			_exit(4);
		sink = p;
		free(p);
	}
}

static char *table(void)
{
	char *t = calloc(10, 100);

	if (!t)
		_exit(4);
	sink = t;
	return t;
}

static char *grow(void)
{
	char *p = xmalloc(16);

	for (size_t n = 32; n <= 1024; n *= 2) {
		char *q = realloc(p, n);

		if (!q)
			_exit(4);
		sink = q;
		p = q;
	}
	memset(p, 'g', 1024);
	return p;
}

static void big(void)
{
	char *b = malloc(1 << 20);

	if (!b)
		_exit(4);
	sink = b;
	memset(b, 'b', 1 << 20);
	free(b);
}

int main(void)
{
	static const char done[] = "sizes: 1018 allocation calls\n";
	char *t, *g;

	churn();
	edges();
	t = table();
	g = grow();
	big();
	free(g);
	free(t);
	if (write(1, done, sizeof(done) - 1) < 0)
		return 3;
	return 0;
}

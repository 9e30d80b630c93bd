/*
 * inline_O2.c - built with -O2 (the Makefile does so for names containing
 * _O2): allocations made from an always_inline helper inlined into a
 * noinline function, for the symbolization tests.
 *
 * For: checking that reports show the inlined frame make_buffer() [file:line]
 * between malloc and its real caller fill_table(), with main above. Not
 * for: -O0 behaviour (every other sample).
 *
 * Stacks the allocations must show (innermost first):
 *   malloc <- make_buffer (inlined) <- fill_table <- main   4 blocks
 *   malloc <- main                                          1 block
 * fill_table and release_table are noinline and noclone, so they keep their
 * names at -O2; make_buffer exists only as inlined code. The fill bytes are
 * nonzero so the compiler cannot turn malloc + memset into calloc; the
 * blocks go into a global table so it cannot drop them.
 *
 * In order (live bytes / blocks after each):
 *   1  m = malloc(128) in main                   128 B  1 blk
 *   2  fill_table(): make_buffer(256 x (i + 1)) for i = 0..3:
 *      256, 512, 768, 1,024 B                  2,688 B  5  <- peak
 *      snapshot 0 "filled": 2,688 B in 5 blocks
 *   3  release_table(): free rows 0..2 (1,536 B) 1,152 B  2
 *   4  free(m)                                 1,024 B  1
 *   row 3 (1,024 B, from make_buffer in fill_table) is leaked.
 * Totals: 5 allocations, 128 + 2,560 = 2,688 B, 4 frees, peak 2,688 B in
 * 5 blocks, leaked 1,024 B in 1 block.
 *
 * memtrail-expect:
 *   allocations 5
 *   frees 4
 *   bytes_allocated 2688
 *   peak_bytes 2688
 *   peak_blocks 5
 *   leaked_bytes 1024
 *   leaked_blocks 1
 *   snapshot 0 label filled live_bytes 2688 live_blocks 5
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <memtrail.h>

#define NROWS 4

char *table[NROWS];

void fill_table(void);
void release_table(void);

static inline __attribute__((always_inline)) char *make_buffer(size_t n, int c)
{
	char *p = malloc(n);

	if (!p)
		_exit(4);
	memset(p, c, n);
	return p;
}

__attribute__((noinline, noclone)) void fill_table(void)
{
	int i;

	for (i = 0; i < NROWS; i++)
		table[i] = make_buffer(256 * (size_t)(i + 1), 'a' + i);
}

__attribute__((noinline, noclone)) void release_table(void)
{
	int i;

	for (i = 0; i < NROWS - 1; i++) {
		free(table[i]);
		table[i] = NULL;
	}
}

int main(void)
{
	static const char msg[] = "inline_O2: 4 rows, 3 released\n";
	char *volatile m = malloc(128);

	if (!m)
		return 4;
	memset(m, 'm', 128);
	fill_table();
	memtrail_snapshot_named("filled");
	release_table();
	free(m);
	if (write(1, msg, sizeof(msg) - 1) < 0)
		return 3;
	return 0;
}

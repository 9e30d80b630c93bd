/*
 * aborter.c - allocates, leaks, takes a snapshot, then calls abort().
 *
 * For: the accuracy tests of a recording cut by a fatal signal: the
 * recorder must flush what it has (SPEC section 2: abort() and fatal
 * signals flush), `memtrail record` must report the signal and exit with
 * 128 + 6 = 134 like the native run seen from a shell, and the figures up
 * to the abort must be exact. Not for: SIGKILL (nothing can flush then;
 * the reader tests cover truncated logs).
 *
 * In order (live bytes / blocks after each):
 *   1  table = calloc(64, 8)                     512 B  1 blk
 *   2  for i = 0..7: table[i] = malloc(100 x (i + 1)), i.e. 100, 200, ...
 *      800 B: 3,600 B in total                  4,112 B  9  <- peak
 *   3  free table[0..3] (100 + 200 + 300 + 400 = 1,000 B)
 *                                               3,112 B  5
 *      snapshot 0 "before-abort": 3,112 B in 5 blocks
 *   4  abort(): table and table[4..7] (500 + 600 + 700 + 800 = 2,600 B)
 *      are still live when the process dies: 3,112 B in 5 blocks.
 * Totals: 9 allocations, 512 + 3,600 = 4,112 B, 4 frees, peak 4,112 B in
 * 9 blocks, leaked 3,112 B in 5 blocks; exit status 134 (SIGABRT).
 * glibc 2.36's abort() does not flush stdio and allocates nothing.
 *
 * memtrail-expect:
 *   allocations 9
 *   frees 4
 *   bytes_allocated 4112
 *   peak_bytes 4112
 *   peak_blocks 9
 *   leaked_bytes 3112
 *   leaked_blocks 5
 *   exit 134
 *   snapshot 0 label before-abort live_bytes 3112 live_blocks 5
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <memtrail.h>

int main(void)
{
	static const char msg[] = "aborter: calling abort()\n";
	char **table = calloc(64, sizeof(*table));
	int i;

	if (!table)
		return 4;
	for (i = 0; i < 8; i++) {
		table[i] = malloc(100 * (size_t)(i + 1));
		if (!table[i])
			return 4;
		memset(table[i], 'a' + i, 100 * (size_t)(i + 1));
	}
	for (i = 0; i < 4; i++)
		free(table[i]);
	memtrail_snapshot_named("before-abort");
	if (write(1, msg, sizeof(msg) - 1) < 0)
		return 3;
	abort();
}

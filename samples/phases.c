/*
 * phases.c - the demo sample: a program in three phases with a snapshot after
 * each, a peak inside the second phase and two leaks from two functions.
 *
 * For: `make demo`, the accuracy tests (tests/e2e/accuracy_samples.sh), and
 * anyone who wants to see what memtrail's reports look like on a program
 * whose heap figures are known exactly. Not for: benchmarking (it is tiny).
 *
 * It uses no stdio stream (stdio mallocs a buffer on first use): output goes
 * through write(2) from a stack buffer, so every heap block below is one the
 * program asks for itself, and memcheck sees the same figures on any machine.
 *
 * Phase 1, "loaded":
 *   load_config()  1 config of 1,024 B + 4 entries of 256 B       5 blocks   2,048 B
 *   build_index()  1 row table of 16 pointers (16 x 8 = 128 B)
 *                  + 16 rows of 4,096 B (65,536 B)               17 blocks  65,664 B
 *   live at snapshot 0: 2,048 + 65,664 = 67,712 B in 5 + 17 = 22 blocks
 * Phase 2, "grown":
 *   grow_rows()    realloc rows 0..7 from 4,096 to 8,192 B: 8 frees + 8
 *                  allocations of 8,192 B (65,536 B); live +32,768 B
 *                  -> 100,480 B in 22 blocks
 *   make_report()  one scratch buffer of 262,144 B (256 KiB), filled, then
 *                  freed: live 362,624 B in 23 blocks while it exists.
 *                  This is the peak: nothing else comes close.
 *   replace_rows() rows 8..11: free the 4,096 B row, malloc 2,048 B
 *                  (4 frees, 4 allocations, 8,192 B); live -8,192 B
 *   live at snapshot 1: 100,480 - 8,192 = 92,288 B in 22 blocks
 * Phase 3, "freed":
 *   free_config()  frees the 4 entries but forgets the 1,024 B config
 *                  (leak 1, allocated in load_config)
 *   drop_index()   frees rows 0..13 and the row table, forgets rows 14 and
 *                  15 (4,096 B each; leak 2, allocated in build_index)
 *                  19 frees in phase 3 (4 + 14 + 1)
 *   live at snapshot 2: 1,024 + 2 x 4,096 = 9,216 B in 3 blocks
 *
 * Totals:
 *   allocations  phase 1: 5 + 17 = 22; phase 2: 8 + 1 + 4 = 13      -> 35
 *   frees        phase 2: 8 + 1 + 4 = 13; phase 3: 19               -> 32
 *   bytes        67,712 + 65,536 + 262,144 + 8,192 = 403,584
 *   peak         362,624 B, 23 blocks (the scratch buffer in make_report)
 *   leaked       9,216 B in 3 blocks (35 - 32 = 3): rows 14, 15 (8,192 B)
 *                definitely lost, the config (global) still reachable
 * memtrail-expect:
 *   allocations 35
 *   frees 32
 *   bytes_allocated 403584
 *   peak_bytes 362624
 *   peak_blocks 23
 *   leaked_bytes 9216
 *   leaked_blocks 3
 *   snapshot 0 label loaded live_bytes 67712 live_blocks 22
 *   snapshot 1 label grown live_bytes 92288 live_blocks 22
 *   snapshot 2 label freed live_bytes 9216 live_blocks 3
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <memtrail.h>

#define NENTRIES	4
#define NROWS		16
#define ROW_SIZE	4096
#define SCRATCH_SIZE	(256 * 1024)

struct config {
	char *entries[NENTRIES];
	char name[1024 - NENTRIES * sizeof(char *)];
};

static struct config *config;
static char **rows;
static size_t row_size[NROWS];

/* printf to stdout without stdio's heap buffer. */
static void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void say(const char *fmt, ...)
{
	char buf[256];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (n > 0 && write(1, buf, (size_t)n < sizeof(buf) ? (size_t)n : sizeof(buf) - 1) < 0)
		_exit(3);
}

static void *xmalloc(size_t n)
{
	void *p = malloc(n);

	if (!p)
		_exit(4);
	return p;
}

static void load_config(void)
{
	int i;

	config = xmalloc(sizeof(*config));
	strcpy(config->name, "demo");
	for (i = 0; i < NENTRIES; i++) {
		config->entries[i] = xmalloc(256);
		snprintf(config->entries[i], 256, "key%d=value%d", i, i);
	}
}

static void build_index(void)
{
	int i;

	rows = xmalloc(NROWS * sizeof(*rows));
	for (i = 0; i < NROWS; i++) {
		rows[i] = xmalloc(ROW_SIZE);
		memset(rows[i], 'a' + i, ROW_SIZE);
		row_size[i] = ROW_SIZE;
	}
}

static void grow_rows(void)
{
	int i;

	for (i = 0; i < 8; i++) {
		char *p = realloc(rows[i], 2 * ROW_SIZE);

		if (!p)
			_exit(4);
		memset(p + ROW_SIZE, 'A' + i, ROW_SIZE);
		rows[i] = p;
		row_size[i] = 2 * ROW_SIZE;
	}
}

static unsigned long make_report(void)
{
	unsigned char *scratch = xmalloc(SCRATCH_SIZE);
	unsigned long sum = 0;
	size_t off = 0;
	int i;

	/* Concatenate the rows into the buffer and checksum it. */
	for (i = 0; i < NROWS && off + row_size[i] <= SCRATCH_SIZE; i++) {
		memcpy(scratch + off, rows[i], row_size[i]);
		off += row_size[i];
	}
	for (size_t k = 0; k < off; k++)
		sum += scratch[k];
	free(scratch);
	return sum;
}

static void replace_rows(void)
{
	int i;

	for (i = 8; i < 12; i++) {
		free(rows[i]);
		rows[i] = xmalloc(ROW_SIZE / 2);
		memset(rows[i], 'z', ROW_SIZE / 2);
		row_size[i] = ROW_SIZE / 2;
	}
}

static void free_config(void)
{
	int i;

	for (i = 0; i < NENTRIES; i++)
		free(config->entries[i]);
	/* config itself is deliberately leaked. */
}

static void drop_index(void)
{
	int i;

	/* Rows 14 and 15 are deliberately leaked. */
	for (i = 0; i < NROWS - 2; i++)
		free(rows[i]);
	free(rows);
}

int main(void)
{
	unsigned long sum;

	load_config();
	build_index();
	say("phase 1: config \"%s\" with %d entries, %d rows of %d bytes\n",
	    config->name, NENTRIES, NROWS, ROW_SIZE);
	memtrail_snapshot_named("loaded");

	grow_rows();
	sum = make_report();
	replace_rows();
	say("phase 2: 8 rows grown to %d bytes, 4 replaced, checksum %lu\n",
	    2 * ROW_SIZE, sum);
	memtrail_snapshot_named("grown");

	free_config();
	drop_index();
	say("phase 3: freed all but 3 blocks\n");
	memtrail_snapshot_named("freed");
	return 0;
}

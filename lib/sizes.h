/*
 * sizes.h - the requested sizes of a run's allocation calls, per call stack
 * and in power-of-two buckets: the tally behind `memtrail report
 * --show-sizes` (the histogram) and `--show-calls` (every call of the run,
 * per stack, with the bytes it asked for).
 *
 * An allocation call is one that returns a new block (agg.h's allocs: a
 * realloc's new block is one call, of the new size). Bucket 0 holds the
 * calls of size 0; bucket k >= 1 the sizes from 2^(k-1) to 2^k - 1:
 * 1 | 2-3 | 4-7 | 8-15 | ... | 2^63 to 2^64 - 1 (bucket 64).
 *
 * The aggregator (lib/agg.c) feeds it during the session's one replay;
 * memory grows with the distinct (stack, bucket) pairs met, not with the
 * number of calls. Not here: which stacks a filter keeps (lib/tree.h),
 * printing (lib/report.c).
 */
#ifndef MT_SIZES_H
#define MT_SIZES_H

#include <stddef.h>
#include <stdint.h>

struct mt_sizes;
struct mt_profile;

#define MT_SIZES_NBUCKETS 65

/* One bucket of a histogram. */
struct mt_sizes_bucket {
	uint64_t calls;
	uint64_t bytes;           /* the sum of the requested sizes */
};

/* A new, empty tally; NULL when out of memory. */
struct mt_sizes *mt_sizes_new(void);

/* Forgets every call (a new run). */
void mt_sizes_clear(struct mt_sizes *z);

/*
 * Keep the buckets too (off by default: per stack, only the number of calls
 * and the bytes they asked for, all the calls profile needs). A lookup per
 * call, so only for readers that print the histogram.
 */
void mt_sizes_buckets(struct mt_sizes *z, int on);

/*
 * `count` allocation calls of `size` bytes in all from stack, each asking
 * for `asked` bytes (its bucket): 1 call of its requested size, or a
 * sampled log's estimate (lib/replay.h mt_event). 0 or MT_E_NOMEM.
 */
int mt_sizes_add(struct mt_sizes *z, uint32_t stack, uint64_t size, uint64_t count,
		 uint64_t asked);

/* The bucket of a size, and the sizes a bucket holds (lo..hi, inclusive). */
unsigned mt_sizes_bucket_of(uint64_t size);
void mt_sizes_bucket_range(unsigned k, uint64_t *lo, uint64_t *hi);

/*
 * The histogram of the calls of every stack (only = NULL) or of the stacks
 * that have a non-zero cost in the profile `only` (e.g. the stacks a tree's
 * filters keep: mt_tree_keep), into out[MT_SIZES_NBUCKETS]. Returns 0, or
 * MT_E_ARG when the tally kept no buckets (mt_sizes_buckets).
 */
int mt_sizes_histogram(const struct mt_sizes *z, const struct mt_profile *only,
		       struct mt_sizes_bucket *out);

/*
 * The calls profile: per stack, bytes = the bytes its calls requested,
 * blocks = allocs = its number of calls. A new profile owned by the
 * caller, or NULL when out of memory.
 */
struct mt_profile *mt_sizes_calls(const struct mt_sizes *z);

/* Frees the tally; NULL is a no-op. */
void mt_sizes_free(struct mt_sizes *z);

#endif

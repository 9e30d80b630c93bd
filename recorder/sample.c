/*
 * sample.c - sampling by bytes (MEMTRAIL_SAMPLE), as jemalloc's and
 * tcmalloc's heap profilers do it: the draw of the next recorded
 * allocation, and the table of slots that tells a free of a block that was
 * not recorded, without a lock, from one that may have been.
 *
 * The fast paths (mt_sample_take, mt_sample_held) are inline in
 * recorder.h: a thread-local count, a relaxed load. Here is only what runs
 * once per recorded allocation, or once per log.
 *
 * Points on the bytes a thread allocates fall as a Poisson process of rate
 * 1/mean: the count to the next is exponential, and by its lack of memory
 * a count drawn afresh after each recorded allocation (from the end of that
 * block) continues the same process. A block of s bytes is recorded when a
 * point falls on one of its bytes: with probability 1 - exp(-s/mean), what
 * the readers weigh it by (lib/replay.c).
 *
 * Not for: the weighing (the readers'), the live table (tables.c), the
 * hooks' decisions beyond these checks (hooks.c, core.c).
 */
#include <stdint.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/syscall.h>

#include "recorder.h"

__thread struct mt_sample_tls mt_sample_tls __attribute__((tls_model("initial-exec")));
uint64_t mt_sample_mean;
uint32_t *mt_sample_counts;

static long sample_seed = -1;
static uint64_t threads_drawn;

/*
 * ln x for x in (0, 1], with no libm (the recorder links none): x = m 2^e
 * with m in [sqrt(1/2), sqrt(2)), ln m = 2 atanh z, z = (m - 1) / (m + 1),
 * |z| < 0.172, and the series to z^13 is within 1e-11 of it.
 */
static double ln(double x)
{
	uint64_t bits;
	double m, z, z2, sum;
	int e;

	memcpy(&bits, &x, sizeof(bits));
	e = (int)((bits >> 52) & 0x7ff) - 1023;
	bits = (bits & ((1ull << 52) - 1)) | (1023ull << 52);
	memcpy(&m, &bits, sizeof(m));
	if (m > 1.4142135623730951) {
		m *= 0.5;
		e++;
	}
	z = (m - 1) / (m + 1);
	z2 = z * z;
	sum = 1.0 / 13;
	for (int k = 11; k >= 1; k -= 2)
		sum = sum * z2 + 1.0 / k;
	return 2 * z * sum + e * 0.6931471805599453;
}

static uint64_t next(struct mt_sample_tls *s)
{
	/* xorshift64*: enough for intervals, and a few instructions */
	s->rng ^= s->rng >> 12;
	s->rng ^= s->rng << 25;
	s->rng ^= s->rng >> 27;
	return s->rng * 0x2545F4914F6CDD1Dull;
}

/* An exponential count of mean mt_sample_mean, rounded up: a block of s
 * bytes takes a count c to zero or below when c <= s, i.e. when the real
 * draw was at most s. */
static int64_t interval(struct mt_sample_tls *s)
{
	double u = (double)((next(s) >> 11) + 1) * (1.0 / 9007199254740992.0);
	double d = -ln(u) * (double)mt_sample_mean;

	if (d >= 9.0e18)
		return INT64_MAX;
	int64_t c = (int64_t)d;
	return c < (int64_t)d || c == 0 ? c + 1 : c;
}

static void seed_thread(struct mt_sample_tls *s)
{
	uint64_t k = __atomic_fetch_add(&threads_drawn, 1, __ATOMIC_RELAXED);
	uint64_t x;

	if (sample_seed >= 0) {
		/* the same draws each run, per thread in order of first
		 * allocation (one thread's order is the program's own) */
		x = (uint64_t)sample_seed;
	} else {
		struct timespec ts;
		clock_gettime(CLOCK_MONOTONIC, &ts);
		x = (uint64_t)ts.tv_nsec ^ (uint64_t)ts.tv_sec << 30 ^
		    (uint64_t)syscall(SYS_gettid) << 40 ^ (uint64_t)(uintptr_t)s;
	}
	/* splitmix64 of seed and thread: distinct, never-zero states */
	x += (k + 1) * 0x9E3779B97F4A7C15ull;
	x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
	x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
	x ^= x >> 31;
	s->rng = x ? x : 1;
}

int mt_sample_draw(size_t size)
{
	struct mt_sample_tls *s = &mt_sample_tls;

	if (MT_UNLIKELY(!s->rng)) {
		/* the thread's first allocation: its count starts here */
		seed_thread(s);
		s->left = interval(s) - (int64_t)size;
		if (s->left > 0)
			return 0;
	}
	s->left = interval(s);
	return 1;
}

int mt_sample_start(uint64_t mean, long seed)
{
	size_t counts = sizeof(uint32_t) << MT_SAMPLE_SLOT_BITS;

	if (!mean) {
		mt_sample_mean = 0;
		return 0;
	}
	if (!mt_sample_counts) {
		mt_sample_counts = mt_mem_alloc_kept(counts);
		if (!mt_sample_counts)
			return -1;
	} else {
		/* a forked child's new log: the parent's blocks are not in it */
		memset(mt_sample_counts, 0, counts);
	}
	sample_seed = seed;
	mt_sample_mean = mean;
	return 0;
}

/*
 * series.c - live heap over time in a fixed number of doubling buckets
 * (see series.h). It never reads the log and never draws; the timeline of
 * `report` and the viewer's graph draw from it. Its feeder gives it the
 * state after each event: the run's figures (live bytes, peak, snapshots,
 * totals) are counted once, by the aggregator (lib/agg.h).
 */
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "series.h"

#define NBUCKETS        4096u     /* even, so pairs merge evenly */
#define FIRST_WIDTH_NS  1024u

struct bucket {
	uint64_t max, min;
	uint64_t end_bytes, end_blocks, end_events;
	uint64_t rss;             /* largest resident-set sample in it; 0: none */
};

struct mt_series {
	struct bucket *b;         /* NBUCKETS of them */
	size_t used;              /* buckets [0, used) hold data */
	uint64_t width;           /* ns per bucket */
	uint64_t last_lo;         /* start of bucket used - 1 */

	uint64_t live_bytes, live_blocks, events;  /* the state last noted */
	uint64_t end_time;        /* of the last record */
};

struct mt_series *mt_series_new(void)
{
	struct mt_series *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	s->b = calloc(NBUCKETS, sizeof(*s->b));
	if (!s->b) {
		free(s);
		return NULL;
	}
	s->width = FIRST_WIDTH_NS;
	return s;
}

void mt_series_free(struct mt_series *s)
{
	if (!s)
		return;
	free(s->b);
	free(s);
}

void mt_series_reset(struct mt_series *s)
{
	memset(s->b, 0, NBUCKETS * sizeof(*s->b));
	s->used = 0;
	s->width = FIRST_WIDTH_NS;
	s->live_bytes = s->live_blocks = s->events = 0;
	s->end_time = 0;
}

/* Halves the resolution: bucket k becomes the merge of 2k and 2k+1. */
static void widen(struct mt_series *s)
{
	size_t n = (s->used + 1) / 2;

	for (size_t k = 0; k < n; k++) {
		struct bucket a = s->b[2 * k];

		if (2 * k + 1 < s->used) {
			const struct bucket *c = &s->b[2 * k + 1];

			if (c->max > a.max)
				a.max = c->max;
			if (c->min < a.min)
				a.min = c->min;
			a.end_bytes = c->end_bytes;
			a.end_blocks = c->end_blocks;
			a.end_events = c->end_events;
			if (c->rss > a.rss)
				a.rss = c->rss;
		}
		s->b[k] = a;
	}
	memset(s->b + n, 0, (NBUCKETS - n) * sizeof(*s->b));
	s->used = n;
	s->width *= 2;
	s->last_lo = n ? (uint64_t)(n - 1) * s->width : 0;
}

/* A bucket that holds the current state and nothing else happened in it. */
static void flat(struct mt_series *s, struct bucket *b)
{
	b->max = b->min = b->end_bytes = s->live_bytes;
	b->end_blocks = s->live_blocks;
	b->end_events = s->events;
	b->rss = 0;
}

/*
 * Makes the bucket of time t current (filling the quiet buckets before it
 * with the unchanged state) and returns it.
 */
static struct bucket *bucket_at(struct mt_series *s, uint64_t t)
{
	/* Most events fall in the last bucket: no division then. */
	if (s->used && t >= s->last_lo && t - s->last_lo < s->width)
		return &s->b[s->used - 1];
	while (t / s->width >= NBUCKETS)
		widen(s);
	size_t k = (size_t)(t / s->width);
	/* Time never goes back; a bucket before the last is only a guard. */
	if (k < s->used)
		return &s->b[s->used - 1];
	while (s->used <= k)
		flat(s, &s->b[s->used++]);
	s->last_lo = (uint64_t)k * s->width;
	return &s->b[k];
}

static uint64_t nonneg(int64_t v)
{
	return v > 0 ? (uint64_t)v : 0;
}

void mt_series_note(struct mt_series *s, uint64_t time_ns, int64_t lo, int64_t hi,
		    int64_t live_bytes, int64_t live_blocks, uint64_t events)
{
	struct bucket *b = bucket_at(s, time_ns);

	s->live_bytes = nonneg(live_bytes);
	s->live_blocks = nonneg(live_blocks);
	if (events > s->events)
		s->events = events;
	if (time_ns > s->end_time)
		s->end_time = time_ns;
	if (nonneg(hi) > b->max)
		b->max = nonneg(hi);
	if (nonneg(lo) < b->min)
		b->min = nonneg(lo);
	b->end_bytes = s->live_bytes;
	b->end_blocks = s->live_blocks;
	b->end_events = s->events;
}

void mt_series_start(struct mt_series *s, uint64_t time_ns, int64_t live_bytes,
		     int64_t live_blocks, uint64_t events)
{
	struct bucket *b;

	mt_series_note(s, time_ns, live_bytes, live_bytes, live_bytes, live_blocks, events);
	b = bucket_at(s, time_ns);
	b->max = b->min = s->live_bytes;
}

void mt_series_rss(struct mt_series *s, uint64_t time_ns, uint64_t bytes)
{
	struct bucket *b;

	if (time_ns > s->end_time)
		s->end_time = time_ns;
	b = bucket_at(s, time_ns);
	if (!s->used)
		return;
	if (bytes > b->rss)
		b->rss = bytes;
}

void mt_series_end(struct mt_series *s, uint64_t time_ns)
{
	if (time_ns > s->end_time)
		s->end_time = time_ns;
	/* The graph stays flat up to the last record. */
	bucket_at(s, s->end_time);
}

uint64_t mt_series_bucket_ns(const struct mt_series *s)
{
	return s->width;
}

static size_t ceil_div(uint64_t a, uint64_t b)
{
	uint64_t q = a / b + (a % b != 0);

	return q < SIZE_MAX ? (size_t)q : SIZE_MAX;
}

int mt_series_resample(const struct mt_series *s, uint64_t t0_ns, uint64_t t1_ns,
		       size_t n, const uint64_t *peak_ns, struct mt_series_col *out)
{
	uint64_t span, rss = 0;     /* the latest sample so far */
	size_t kpeak = peak_ns ? (size_t)(*peak_ns / s->width) : 0;
	int peak_done = !peak_ns;
	size_t kdone = 0;           /* buckets below this are in rss */

	if (!n || t1_ns <= t0_ns)
		return MT_E_ARG;
	span = t1_ns - t0_ns;
	for (size_t i = 0; i < n; i++) {
		struct mt_series_col *c = &out[i];
		/* 128-bit so a long run times a wide terminal cannot overflow */
		uint64_t c0 = t0_ns + (uint64_t)((unsigned __int128)span * i / n);
		uint64_t c1 = t0_ns + (uint64_t)((unsigned __int128)span * (i + 1) / n);
		size_t k0, k1;
		int any = 0;

		if (c1 <= c0)
			c1 = c0 + 1;
		memset(c, 0, sizeof(*c));
		c->t0_ns = c0;
		c->t1_ns = c1;
		/* the buckets that start in [c0, c1) belong to this column */
		k0 = ceil_div(c0, s->width);
		k1 = ceil_div(c1, s->width);
		if (k1 > k0)
			k1--;
		else
			k0 = k1 = (size_t)(c0 / s->width);  /* narrower than a bucket */
		/* the latest sample before the slice (columns go forward) */
		for (; kdone < k0 && kdone < s->used; kdone++)
			if (s->b[kdone].rss)
				rss = s->b[kdone].rss;
		c->rss_bytes = rss;
		for (size_t k = k0, in = 0; k <= k1 && k < s->used; k++) {
			const struct bucket *b = &s->b[k];

			if (b->rss && (!in++ || b->rss > c->rss_bytes))
				c->rss_bytes = b->rss;

			if (!any || b->max > c->max_bytes)
				c->max_bytes = b->max;
			if (!any || b->min < c->min_bytes)
				c->min_bytes = b->min;
			c->end_bytes = b->end_bytes;
			c->end_blocks = b->end_blocks;
			c->end_events = b->end_events;
			c->end_ns = (uint64_t)(k + 1) * s->width;
			any = 1;
		}
		if (k1 >= s->used) {
			/* past the data: the end state */
			if (!any || s->live_bytes > c->max_bytes)
				c->max_bytes = s->live_bytes;
			if (!any || s->live_bytes < c->min_bytes)
				c->min_bytes = s->live_bytes;
			c->end_bytes = s->live_bytes;
			c->end_blocks = s->live_blocks;
			c->end_events = s->events;
			c->end_ns = s->end_time + 1;
		}
		if (!peak_done && kpeak >= k0 && kpeak <= k1) {
			c->has_peak = 1;
			peak_done = 1;
		}
	}
	return 0;
}

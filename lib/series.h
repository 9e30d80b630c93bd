/*
 * series.h - live heap over time: a replay consumer that keeps the heap's
 * size through the run in bounded memory, for `report --timeline` and the
 * timeline pane of `memtrail view`.
 *
 * The series counts live bytes and blocks after every event (an allocation
 * adds its requested size, a free subtracts the size of the block it frees;
 * the two halves of a realloc are two events at the same instant). It keeps
 * a fixed number of time buckets whose width doubles, merging neighbours, as
 * the run gets longer, so its memory does not grow with the number of events.
 * Each bucket keeps the maximum and minimum live bytes reached inside it and
 * the state at its end, so a resampled column never loses a spike: the
 * maximum of a column is the maximum of every event inside it.
 *
 * Not here: the run's figures, its peak and its snapshots (lib/agg.h, the
 * one tally of a run), who holds the heap (lib/agg.h), drawing (report.c,
 * viewer/).
 */
#ifndef MT_SERIES_H
#define MT_SERIES_H

#include <stddef.h>
#include <stdint.h>

struct mt_series;
struct mt_replay_ops;
struct mt_event;
struct mt_snapshot;
struct mt_end;
struct mt_base;

/* One column of a resampled series: the slice [t0_ns, t1_ns). */
struct mt_series_col {
	uint64_t t0_ns, t1_ns;
	uint64_t max_bytes;   /* maximum live bytes in the slice, including at its start */
	uint64_t min_bytes;   /* minimum live bytes in the slice, including at its start */
	/*
	 * The state at the end of the slice, to the series' resolution: at the
	 * end of the bucket that holds t1_ns - 1 (mt_series_bucket_ns() wide).
	 * end_events is the number of event seq numbers consumed by then: the
	 * state after event end_events - 1 (0: before any event).
	 */
	uint64_t end_bytes, end_blocks;
	uint64_t end_events;
	/*
	 * The end state is the state after every event with a time before
	 * end_ns (the end of that bucket; past the run's data, the time of its
	 * last record + 1): the point to ask a profile at for this column.
	 */
	uint64_t end_ns;
	int has_peak;         /* the peak time given to resample falls here */
	/* The largest resident-set sample in the slice, else the latest one
	 * before it (0: none yet). */
	uint64_t rss_bytes;
};

/* A new, empty series. Returns NULL when out of memory. */
struct mt_series *mt_series_new(void);

/*
 * Fills *ops with the series' callbacks (everything else NULL), to replay
 * with ctx = the series. A consumer that feeds several modules from one
 * replay calls the mt_series_on_* functions below from its own callbacks.
 */
void mt_series_ops(struct mt_replay_ops *ops);

/* The callbacks, ctx = struct mt_series *. They always return 0. */
void mt_series_on_base(void *ctx, const struct mt_base *b);
int mt_series_on_alloc(void *ctx, const struct mt_event *ev);
int mt_series_on_free(void *ctx, const struct mt_event *ev);
int mt_series_on_snapshot(void *ctx, const struct mt_snapshot *snap);
void mt_series_on_rss(void *ctx, uint64_t time_ns, uint64_t bytes);
void mt_series_on_end(void *ctx, const struct mt_end *end);

/* Empties the series for another replay. */
void mt_series_reset(struct mt_series *s);

/*
 * Resamples [t0_ns, t1_ns) into n equal columns (column i covers
 * [t0 + i*(t1-t0)/n, t0 + (i+1)*(t1-t0)/n)). Each bucket counts in the
 * column where it starts, so with columns wider than a bucket every spike
 * shows in exactly one column, and the one with has_peak set holds the time
 * *peak_ns (the run's peak, lib/agg.h; NULL: no column has it);
 * a column narrower than a bucket gets the bucket it falls in (neighbours
 * then share it). Columns past the end of the run hold the end state. Returns 0, or MT_E_ARG when n is 0
 * or t1_ns <= t0_ns.
 */
int mt_series_resample(const struct mt_series *s, uint64_t t0_ns, uint64_t t1_ns,
		       size_t n, const uint64_t *peak_ns, struct mt_series_col *out);

/* The width of one bucket in ns (it doubles as the run gets longer). */
uint64_t mt_series_bucket_ns(const struct mt_series *s);

/* Frees the series; NULL is a no-op. */
void mt_series_free(struct mt_series *s);

#endif

/*
 * series.h - live heap over time: the heap's size through the run in
 * bounded memory, for `report --timeline` and the timeline pane of
 * `memtrail view`.
 *
 * The series counts nothing itself: its feeder (lib/session.c) notes, for
 * the events of each bucket (an allocation, a free, a snapshot; the two
 * halves of a realloc are two events at the same instant), the range of
 * live bytes and the state after the last, which the aggregator counted
 * (lib/agg.h, the one tally of a run). It keeps
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
 * Events up to time_ns, all in one bucket of the series (times never go
 * back): the least and the most live bytes after each of them, the live
 * bytes and blocks after the last, and the events so far. One event is
 * lo = hi = live_bytes. A negative figure (a damaged log) counts as 0.
 */
void mt_series_note(struct mt_series *s, uint64_t time_ns, int64_t lo, int64_t hi,
		    int64_t live_bytes, int64_t live_blocks, uint64_t events);

/*
 * A bounded log's start at time_ns (its BASE record): the heap then, which
 * the bucket holding time_ns starts from; the buckets before, whose events
 * the log dropped, stay empty.
 */
void mt_series_start(struct mt_series *s, uint64_t time_ns, int64_t live_bytes,
		     int64_t live_blocks, uint64_t events);

/* A resident-set sample of the log at time_ns. */
void mt_series_rss(struct mt_series *s, uint64_t time_ns, uint64_t bytes);

/* The log's last record is at time_ns: the graph stays flat up to there. */
void mt_series_end(struct mt_series *s, uint64_t time_ns);

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

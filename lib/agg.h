/*
 * agg.h - aggregation: who holds the heap, per call stack, at any point of
 * a run. A replay consumer (struct mt_agg) that the report, the viewer and
 * the tests share, so every tool shows the same numbers.
 *
 * A profile (struct mt_profile) holds one struct mt_cost per stack id:
 *   bytes, blocks  live requested bytes and live blocks at the point; in a
 *                  diff, the signed change B - A.
 *   allocs         allocations made by the stack from the start of the run
 *                  up to and including the point (a realloc's new block is
 *                  one allocation); in a diff, the allocations made between
 *                  A (excluded) and B (included).
 * A point is "after event seq S": the state once every event with seq <= S
 * has been applied (both halves of a realloc share one seq and are applied
 * together). start is before any event, end after the last one. The peak is
 * the event after which live bytes reach their maximum over the run, the
 * earliest one when the maximum is reached more than once; a run that never
 * has a live byte peaks at start.
 *
 * Temporary allocations (heaptrack's definition): an allocation whose block
 * is freed by the very next allocation-related event of the same thread,
 * with no other allocation of that thread in between (the free half of a
 * realloc counts as a free, its alloc half as an allocation).
 *
 * Memory grows with distinct stacks, threads, snapshots and the number of
 * profiles asked for, never with the number of events.
 *
 * Not here: replaying the log (lib/replay.h), symbols (lib/symbols.h), call
 * trees (lib/tree.h), printing (lib/report.c).
 */
#ifndef MT_AGG_H
#define MT_AGG_H

#include <stddef.h>
#include <stdint.h>

struct mt_agg;
struct mt_event;
struct mt_profile;
struct mt_replay;
struct mt_progress_cb;
struct mt_replay_ops;
struct mt_sizes;

/* The cost of one stack (or tree node); signed so that diffs fit. */
struct mt_cost {
	int64_t bytes;
	int64_t blocks;
	int64_t allocs;
};

/*
 * A point of the run, the one way every tool names one. The aggregator's
 * requests take START, SEQ, TIME and END; PEAK and SNAPSHOT (value = the
 * snapshot's number, as memtrail_snapshot() gave it) are resolved by
 * lib/session.c.
 */
enum mt_at_kind {
	MT_AT_START = 0,    /* before any event */
	MT_AT_SEQ,          /* after the event with seq `value` */
	MT_AT_TIME,         /* after every event with time_ns <= `value` */
	MT_AT_END,          /* after the last event */
	MT_AT_PEAK,         /* after the event that reached the peak */
	MT_AT_SNAPSHOT,     /* when snapshot number `value` was taken */
};
struct mt_at {
	enum mt_at_kind kind;
	uint64_t value;
};

/* A snapshot marker and the heap when it was taken. */
struct mt_agg_snapshot {
	uint32_t index;
	const char *label;        /* "" when unnamed; owned by the mt_agg */
	uint64_t seq;
	uint64_t time_ns;
	int64_t live_bytes, live_blocks;
};

/* Figures of the whole run, complete once the replay has ended. */
struct mt_agg_stats {
	uint64_t events;          /* event seqs seen (allocs, frees, reallocs, snapshots) */
	uint64_t allocations, frees;
	uint64_t bytes_allocated;
	int64_t peak_bytes, peak_blocks;
	int peak_at_start;        /* 1 when live bytes never rose above 0 */
	uint64_t peak_seq, peak_time_ns;
	int64_t end_bytes, end_blocks;  /* still live at the end: leaked */
	uint64_t end_time_ns;     /* time of the last event */
	uint64_t temporary;       /* temporary allocations */
	/* The largest resident-set sample of the log (RSS records: about one a
	 * second, and one in the peak's chunk), when rss_samples > 0. */
	uint64_t rss_samples;
	uint64_t peak_rss_bytes, peak_rss_time_ns;
	size_t nsnapshots;
	const struct mt_agg_snapshot *snapshots;  /* owned by the mt_agg */
	const struct mt_sizes *sizes;  /* requested sizes of every allocation
					  call, per stack (lib/sizes.h); owned
					  by the mt_agg */
};

/*
 * One thread's figures over the run (its index in the log, lib/replay.h).
 * allocations, bytes_allocated: the allocations the thread made; frees:
 * the blocks it freed, whoever allocated them; peak_*: live at the run's
 * peak (mt_agg_stats' peak) among the blocks the thread allocated (0 when
 * the run peaked at start); end_*: the same at the end (leaked).
 */
struct mt_agg_thread_stats {
	uint64_t allocations, frees;
	uint64_t bytes_allocated;
	int64_t peak_bytes, peak_blocks;
	int64_t end_bytes, end_blocks;
};

/* A new aggregator. Returns NULL when out of memory. */
struct mt_agg *mt_agg_new(void);

/*
 * Fills *ops with the aggregator's callbacks (ctx = the mt_agg). Tests may
 * call them directly with synthetic events, in the replay's order: events by
 * increasing seq, a realloc as its free half then its alloc half with the
 * same seq and realloc = 1, on_end last.
 */
void mt_agg_ops(struct mt_replay_ops *ops);

/*
 * Asks the next replay through the ops to capture profiles at n points (any
 * order; duplicates allowed), replacing earlier requests and results; also
 * resets the run's figures. When stop_early is non-zero the callbacks stop
 * the replay once every point is captured (the stats are then partial).
 * Returns 0 or MT_E_NOMEM.
 */
int mt_agg_request(struct mt_agg *a, const struct mt_at *at, size_t n, int stop_early);

/*
 * Takes the profile captured for request i of the last mt_agg_request(); the
 * caller owns it (mt_profile_free). Returns NULL if i is out of range or the
 * point was not reached (the replay has not ended).
 */
struct mt_profile *mt_agg_take(struct mt_agg *a, size_t i);

/* Figures of the last replay; valid until the next mt_agg_request/replay. */
const struct mt_agg_stats *mt_agg_stats(const struct mt_agg *a);

/*
 * Per thread, of the last replay: thread indexes 0 .. mt_agg_nthreads - 1
 * had events; mt_agg_thread_stats fills *out for index i (zeros for an
 * index without events).
 */
size_t mt_agg_nthreads(const struct mt_agg *a);
void mt_agg_thread_stats(const struct mt_agg *a, size_t i, struct mt_agg_thread_stats *out);

/*
 * The live profile at the end (what leaked) and the temporary profile (per
 * stack: bytes = bytes of its temporary allocations, blocks = their number,
 * allocs = all its allocations) of the last replay; new profiles owned by
 * the caller, or NULL when out of memory.
 */
struct mt_profile *mt_agg_end_profile(const struct mt_agg *a);
struct mt_profile *mt_agg_temporary_profile(const struct mt_agg *a);

/*
 * 0, or the sticky negative MT_E_* a callback met (out of memory); reset by
 * mt_agg_request.
 */
int mt_agg_error(const struct mt_agg *a);

/*
 * Convenience: replays r through a, capturing n points; outs[i] gets the
 * profile at at[i] (owned by the caller). progress, if not NULL, is called
 * as the replay's on_progress. Returns 0 or a negative MT_E_* (outs are
 * then all NULL).
 */
int mt_agg_run(struct mt_agg *a, struct mt_replay *r, const struct mt_at *at, size_t n,
	       struct mt_profile **outs, const struct mt_progress_cb *progress);

/*
 * The profile at the peak of the last replay (an empty one when the run
 * peaked at start), kept during the run itself: no second replay. A new
 * profile owned by the caller, or NULL when out of memory.
 */
struct mt_profile *mt_agg_peak_profile(const struct mt_agg *a);

/*
 * The journal, for lib/session.c. With it on (before the replay; off by
 * default), each mt_agg_mark() during the replay closes a frame: the
 * stacks whose cost changed since the previous mark, with their cost now;
 * every snapshot is a mark too. mt_agg_apply_marks() then rebuilds the
 * profile at any mark from frames, without the log.
 */
struct mt_agg_mark {
	uint64_t events;          /* event seqs applied at the mark */
	uint64_t time_ns;         /* time of the last one */
	int64_t live_bytes, live_blocks;
	size_t end;               /* internal: the journal's length then */
};
void mt_agg_journal(struct mt_agg *a, int on);
/* Closes a frame now (between events). 0 or MT_E_NOMEM. */
int mt_agg_mark(struct mt_agg *a);
size_t mt_agg_nmarks(const struct mt_agg *a);

/* The run's live bytes and blocks now (during or after the replay). */
void mt_agg_live(const struct mt_agg *a, int64_t *bytes, int64_t *blocks);
/* The events counted so far (during the replay: the stats' events and
 * end time are brought up to date at its end, on_end). */
uint64_t mt_agg_events(const struct mt_agg *a);

/*
 * For a consumer that looks at events only when the time moves (the
 * session's series and time marks; most events come at the time of the
 * one before): the first allocation or free of a run, and the first after
 * mt_agg_hook_next() (which it calls when the time may have changed:
 * mt_replay_ops' on_time), goes to fn(ctx, ev, free) instead of being
 * counted; fn counts it with mt_agg_count(). The aggregator's callbacks
 * (mt_agg_ops) can then be the replay's own, with ctx the aggregator
 * (mt_replay_ops' event_ctx), and test nothing more per event. fn NULL:
 * none.
 */
void mt_agg_hook(struct mt_agg *a, int (*fn)(void *ctx, const struct mt_event *ev, int free),
		 void *ctx);
void mt_agg_hook_next(struct mt_agg *a);
/* Counts an event as the callbacks do, without the hook (free: 1 for
 * on_free's). Returns as they do. */
int mt_agg_count(struct mt_agg *a, const struct mt_event *ev, int free);

/*
 * The live heap's range over a window of events, for the series
 * (lib/session.c): mt_agg_window_start() right after the window's first
 * event; mt_agg_window() then gives the least and the most live bytes
 * after each event since. Kept by the one count of every event (two
 * compares), so that the series needs no call per event.
 */
void mt_agg_window_start(struct mt_agg *a);
void mt_agg_window(const struct mt_agg *a, int64_t *lo, int64_t *hi);
/* Mark i (0 = the first), or NULL past the last. */
const struct mt_agg_mark *mt_agg_get_mark(const struct mt_agg *a, size_t i);
/* The mark of snapshot i (its place in mt_agg_stats' snapshots), or -1. */
long mt_agg_snapshot_mark(const struct mt_agg *a, size_t i);
/*
 * Brings p, the profile at mark from - 1 (from = 0: an empty profile, the
 * start), to the profile at mark to - 1 by applying the frames between.
 * 0, MT_E_NOMEM, or MT_E_ARG for from > to or to past the last mark.
 */
int mt_agg_apply_marks(const struct mt_agg *a, struct mt_profile *p, size_t from, size_t to);

/*
 * Figures only (off by default): mt_agg_run then counts the run's figures
 * (struct mt_agg_stats, snapshots included) and nothing per stack: no
 * costs, temporaries, requests or journal, for readers that print the
 * summary alone. Profiles of such a replay are empty.
 */
void mt_agg_figures_only(struct mt_agg *a, int on);

/* Tally requested sizes in buckets too (mt_sizes_buckets; off by default). */
void mt_agg_size_buckets(struct mt_agg *a, int on);

/*
 * Tallies a reader may leave out of a run, to make each event cheaper (a
 * report that prints the peak and the leaks needs none of them). Off: per
 * thread figures (mt_agg_thread_stats reads zeros), temporaries (the
 * temporary profile is empty, the count 0), requested sizes (stats' sizes
 * is NULL). Set before mt_agg_run; 0 keeps them all (the default).
 */
enum {
	MT_TALLY_NO_THREADS   = 1u << 0,
	MT_TALLY_NO_TEMPORARY = 1u << 1,
	MT_TALLY_NO_CALLS     = 1u << 2,
};
void mt_agg_skip(struct mt_agg *a, unsigned what);

/*
 * Drops the marks i with keep[i] == 0, merging each dropped mark's frame
 * into the next kept one, so the journal's memory shrinks to what the kept
 * marks need; newidx[i] gets mark i's new index (SIZE_MAX when dropped).
 * The last mark and every snapshot's mark must be kept (MT_E_ARG
 * otherwise, nothing changed). 0, MT_E_ARG or MT_E_NOMEM.
 */
int mt_agg_merge_marks(struct mt_agg *a, const unsigned char *keep, size_t *newidx);

/* Frees the aggregator; NULL is a no-op. */
void mt_agg_free(struct mt_agg *a);

/* A new empty profile (every stack costs zero). NULL when out of memory. */
struct mt_profile *mt_profile_new(void);

/* Stacks covered: ids 0 .. n-1 (higher ids cost zero). */
size_t mt_profile_nstacks(const struct mt_profile *p);

/* The cost of one stack; a zero cost for ids beyond mt_profile_nstacks. */
struct mt_cost mt_profile_get(const struct mt_profile *p, uint32_t stack);

/* Adds c to a stack's cost (grows the profile). 0 or MT_E_NOMEM. */
int mt_profile_add(struct mt_profile *p, uint32_t stack, const struct mt_cost *c);

/* The sum over all stacks. */
struct mt_cost mt_profile_total(const struct mt_profile *p);

/*
 * Where the profile was taken: the number of event seqs applied (the state
 * after event events - 1; 0 is the start) and the time of the last one.
 */
uint64_t mt_profile_events(const struct mt_profile *p);
uint64_t mt_profile_time(const struct mt_profile *p);

/*
 * b - a, per stack (bytes, blocks and allocs); a new profile owned by the
 * caller, taken at b's point; NULL when out of memory.
 */
struct mt_profile *mt_profile_diff(const struct mt_profile *a, const struct mt_profile *b);

/* A copy of p owned by the caller; NULL when out of memory. */
struct mt_profile *mt_profile_copy(const struct mt_profile *p);

/* Frees a profile; NULL is a no-op. */
void mt_profile_free(struct mt_profile *p);

#endif

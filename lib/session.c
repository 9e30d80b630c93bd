/*
 * session.c - one pass over a log and the index behind every reader (see
 * session.h for what it answers and how).
 *
 * The pass feeds the aggregator (journal on); after each event the series
 * notes the live heap the aggregator counted.
 * Before each event the session checks whether the event falls in a later
 * bucket of the series than the previous one: if so it closes a journal
 * mark first (marks fall on boundaries of MARK_SPAN buckets, thinned
 * each time the series widens), and notes the mark's time range: the
 * state at that mark is
 * the state after every event with a time before T, for any T after the
 * previous event's time up to this event's own, since nothing happened in
 * between (so quiet buckets are covered too).
 * Widening the series (its buckets double) keeps every old boundary a
 * boundary, so the marks are the boundaries of the final buckets (and
 * more). Snapshots are marks too (the aggregator makes them).
 *
 * A profile at a mark is rebuilt from the session's cursor (the profile at
 * the last mark it rebuilt) when the mark is later, else from the start:
 * moving forward through a run (the massif export, a cursor walking right)
 * costs only the frames in between.
 *
 * Not for: reading records (lib/replay.c), per-stack bookkeeping
 * (lib/agg.c), output of any kind.
 */
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "session.h"
#include "sizes.h"
#include "symbols.h"

/*
 * Time marks fall on boundaries of MARK_SPAN buckets of the series: at most
 * NBUCKETS / MARK_SPAN of them (512), enough for a timeline as wide as a
 * terminal, while each mark's frame holds the stacks changed in a span.
 */
#define MARK_SPAN 8

/* A mark closed at a bucket boundary: exact for any time in [lo, hi]. */
struct bmark {
	size_t mark;
	uint64_t lo, hi;          /* "after every event with time < T", T in [lo, hi] */
};

struct mt_session {
	struct mt_replay *r;
	struct mt_agg *agg;
	struct mt_series *series;
	struct mt_end end;
	struct mt_session_opts o;

	struct bmark *bm;
	size_t nbm, cap_bm;
	uint64_t bucket;          /* time of the last event that opened a bucket */
	uint64_t next;            /* no mark before this time */
	uint64_t first, last;     /* times of the first and the last event */
	uint64_t span;            /* marks fall on multiples of this (ns) */
	/* the series' window: events since win_start, all in one bucket */
	int win_open;
	uint64_t win_end;         /* the bucket's end: an event at or past it opens the next */
	uint64_t win_t;           /* the window's latest time */
	int any;

	/* every stack of the pass, ids 0 .. nstacks-1 (the replay's objects) */
	const struct mt_stack **stacks;
	size_t nstacks;
	struct mt_tree_std std;
	int std_ok;
	struct mt_tree_source src;

	struct mt_profile *cursor; /* the profile at mark ncur - 1 (ncur = 0: start) */
	size_t ncur;

	struct mt_agg *side;      /* replays for points off the marks */
	size_t nthreads;
	struct mt_session_thread *threads; /* nthreads of them; names ours */
	/* the modules and stacks the pass has met, while symbols_ahead is
	 * due: during a run the replay's own tables are its decoder's */
	const struct mt_module **pmods;
	size_t npmods, cap_pmods;
	const struct mt_stack **pstacks;
	size_t npstacks, cap_pstacks;
	uint8_t *only;            /* mt_session_only_thread: per index, kept */
	const char **tags;        /* tag paths 0 .. ntags (the replay's strings) */
	size_t ntags;
	uint8_t *only_tag;        /* mt_session_only_tag: per tag path, kept */
	char *stop_reason;        /* the end's, ours */
	struct mt_leak_block *lost; /* the latest leak check's lost blocks */
	size_t nlost;
	const struct mt_leak_check *lc; /* the pass's latest check, until its end */
	struct mt_leak_check_at *checks; /* every check of the pass */
	size_t nchecks;
	int err;

	/* following a log still being written (opts.follow, mt_session_poll) */
	char *path;
	struct mt_replay *side_r; /* the side replays' own: r carries on the pass */
	size_t nsym;              /* modules the symbolizer has */
};

/* ---- the pass ------------------------------------------------------------- */

/*
 * The series widened: the marks whose range holds no multiple of the new
 * span go (their frames merge into the next mark's), so the journal keeps
 * at most one mark per span however long the run. Snapshot marks and the
 * last mark stay.
 */
static void thin(struct mt_session *s, uint64_t span)
{
	size_t n = mt_agg_nmarks(s->agg), k = 0;
	unsigned char *keep = malloc(n ? n : 1);
	size_t *idx = malloc((n ? n : 1) * sizeof(*idx));

	s->span = span;
	if (!keep || !idx) {
		s->err = MT_E_NOMEM;
		goto out;
	}
	memset(keep, 1, n);
	for (size_t i = 0; i < s->nbm; i++) {
		const struct bmark *b = &s->bm[i];

		if (b->hi / span * span < b->lo && b->mark + 1 < n)
			keep[b->mark] = 0;
	}
	if (mt_agg_merge_marks(s->agg, keep, idx) < 0) {
		s->err = MT_E_NOMEM;
		goto out;
	}
	for (size_t i = 0; i < s->nbm; i++) {
		if (idx[s->bm[i].mark] == SIZE_MAX)
			continue;
		s->bm[k] = s->bm[i];
		s->bm[k++].mark = idx[s->bm[i].mark];
	}
	s->nbm = k;
out:
	free(keep);
	free(idx);
}

/* An event at t reached the next mark's time (before). */
static __attribute__((noinline)) void mark_at(struct mt_session *s, uint64_t t, uint64_t prev)
{
	uint64_t w = mt_series_bucket_ns(s->series) * MARK_SPAN;
	uint64_t k = t / w;

	if (w != s->span)
		thin(s, w);
	s->next = (k + 1) * w;    /* no division until then */
	if (s->any && k == s->bucket / w)
		return;
	if (s->any) {
		if (mt_agg_mark(s->agg) < 0) {
			s->err = MT_E_NOMEM;
			return;
		}
		if (s->nbm == s->cap_bm) {
			size_t cap = s->cap_bm ? 2 * s->cap_bm : 1024;
			struct bmark *b = realloc(s->bm, cap * sizeof(*b));

			if (!b) {
				s->err = MT_E_NOMEM;
				return;
			}
			s->bm = b;
			s->cap_bm = cap;
		}
		/* nothing happened between the last event and this one */
		s->bm[s->nbm].mark = mt_agg_nmarks(s->agg) - 1;
		s->bm[s->nbm].lo = prev + 1;
		s->bm[s->nbm].hi = t;
		s->nbm++;
	}
	s->any = 1;
	s->bucket = t;
}

/* Called with time_marks only: the callers check, so a pass without them
 * pays no call; inline, with its rare work in mark_at. */
static inline void before(struct mt_session *s, uint64_t t)
{
	uint64_t prev = s->last;

	if (!s->any)
		s->first = t;
	s->last = t;
	if (t >= s->next)
		mark_at(s, t, prev);
}

static struct mt_replay_ops agg_ops;

/*
 * The series gets the heap the aggregator counted (one tally of a run) a
 * bucket at a time: the events of a window all fall in one bucket of the
 * series, and when one falls past it (or before an RSS sample or the end,
 * which the series places in time too) the window's range of live bytes
 * and its end state go to the series in one note. Per event that is one
 * compare here and two in the aggregator, where a note per event was 15 %
 * of the viewer's pass. The window's events are the aggregator's count:
 * it counts every event of the pass.
 */
static void flush(struct mt_session *s)
{
	int64_t lo, hi, bytes, blocks;

	/* the next event opens a window, whatever its time */
	mt_agg_hook_next(s->agg);
	if (!s->win_open)
		return;
	mt_agg_window(s->agg, &lo, &hi);
	mt_agg_live(s->agg, &bytes, &blocks);
	mt_series_note(s->series, s->win_t, lo, hi, bytes, blocks, mt_agg_events(s->agg));
	s->win_open = 0;
	s->win_end = 0;
}

/* Before an event at t; returns 1 when the event opens a window. */
static inline int enter(struct mt_session *s, uint64_t t)
{
	int open = 0;

	if (s->series && t >= s->win_end) {
		flush(s);
		open = 1;
	}
	if (s->o.time_marks)
		before(s, t);
	return open;
}

/* After the aggregator counted it. */
static inline void leave(struct mt_session *s, int open, uint64_t t)
{
	if (!s->series)
		return;
	if (open) {
		uint64_t w = mt_series_bucket_ns(s->series);

		mt_agg_window_start(s->agg);
		s->win_open = 1;
		s->win_end = t / w < UINT64_MAX / w - 1 ? (t / w + 1) * w : UINT64_MAX;
	}
	/* the window's latest time: a damaged log's time may go back */
	if (open || t > s->win_t)
		s->win_t = t;
}

/*
 * An allocation or free after the time moved (pass_time) or a window
 * closed: most events come at the time of the one before (the log's clock
 * moves in steps), and for them enter and leave would change nothing, so
 * the aggregator hears of them straight from the replay and hands the
 * others here (mt_agg_hook). Its return is 0: the pass asks it for no
 * point.
 */
static int pass_event(void *ctx, const struct mt_event *ev, int free)
{
	struct mt_session *s = ctx;
	/* After a realloc's free half (same time) this finds the bucket
	 * already open; a realloc of a block that was not live has none. */
	int open = enter(s, ev->time_ns);

	mt_agg_count(s->agg, ev, free);
	leave(s, open, ev->time_ns);
	return 0;
}

/* The time may have moved: the next event goes to pass_event. */
static void pass_time(void *ctx, uint64_t time_ns)
{
	struct mt_session *s = ctx;

	(void)time_ns;
	mt_agg_hook_next(s->agg);
}

static void pass_base(void *ctx, const struct mt_base *b)
{
	struct mt_session *s = ctx;
	int64_t bytes, blocks;

	mt_agg_hook_next(s->agg);
	if (s->series)
		flush(s);
	if (s->o.time_marks)
		before(s, b->time_ns);
	agg_ops.on_base(s->agg, b);
	if (s->series) {
		mt_agg_live(s->agg, &bytes, &blocks);
		mt_series_start(s->series, b->time_ns, bytes, blocks, b->seq);
	}
}

static int pass_snapshot(void *ctx, const struct mt_snapshot *snap)
{
	struct mt_session *s = ctx;

	int open = enter(s, snap->time_ns);

	agg_ops.on_snapshot(s->agg, snap);
	leave(s, open, snap->time_ns);
	return 0;
}

static void pass_rss(void *ctx, uint64_t time_ns, uint64_t bytes)
{
	struct mt_session *s = ctx;

	agg_ops.on_rss(s->agg, time_ns, bytes);
	if (s->series) {
		flush(s);
		mt_series_rss(s->series, time_ns, bytes);
	}
}

/* A leak check: the latest one's lost blocks are kept, at the end of the
 * pass (replay.h: lc lasts until then); only the one just before END
 * classifies the end: mt_end.classified. */
static void pass_leak(void *ctx, const struct mt_leak_check *lc)
{
	struct mt_session *s = ctx;

	s->lc = lc;
}

/* The latest check's blocks become the session's (a copy). */
static void keep_lost(struct mt_session *s)
{
	const struct mt_leak_check *lc = s->lc;
	struct mt_leak_block *b = NULL;

	s->lc = NULL;
	if (!lc)
		return;
	if (lc->n && !(b = malloc(lc->n * sizeof(*b)))) {
		s->err = MT_E_NOMEM;
		return;
	}
	if (lc->n)
		memcpy(b, lc->lost, lc->n * sizeof(*b));
	free(s->lost);
	s->lost = b;
	s->nlost = lc->n;
}

static void pass_end(void *ctx, const struct mt_end *e)
{
	struct mt_session *s = ctx;

	if (!s->o.figures_only) {
		agg_ops.on_end(s->agg, e);
		if (s->series) {
			flush(s);
			mt_series_end(s->series, e->time_ns);
		}
	}
	s->end = *e;
	keep_lost(s);
	/* the checks of the pass: a side replay starts the replay's over */
	{
		const struct mt_leak_check_at *c;
		size_t n = mt_replay_leak_checks(s->r, &c);

		free(s->checks);
		s->checks = NULL;
		s->nchecks = 0;
		if (n && !(s->checks = malloc(n * sizeof(*c))))
			s->err = MT_E_NOMEM;
		else if (n) {
			memcpy(s->checks, c, n * sizeof(*c));
			s->nchecks = n;
		}
	}
	/* the replay's string lasts one run; a side replay would end it */
	s->end.stop_reason = NULL;
	free(s->stop_reason);
	s->stop_reason = NULL;
	if (e->stop_reason && !(s->end.stop_reason = s->stop_reason = strdup(e->stop_reason)))
		s->err = MT_E_NOMEM;
}

static int std_start(struct mt_session *s, const struct mt_module *const *mods, size_t n);
static int std_catch_up(struct mt_session *s);

/*
 * The first stacks are in (a chunk or so into the pass): the symbolizer
 * starts opening their modules beside the pass (opts.symbolize). Stacks
 * met later mostly run in the same modules; any other module is opened
 * when first resolved.
 */
static void symbols_ahead(struct mt_session *s)
{
	size_t n = s->npstacks, nips = 0;
	uint64_t *ips;
	int rc;

	if (!n)
		return;
	s->o.symbolize = 0;
	for (size_t i = 0; i < n; i++)
		nips += s->pstacks[i]->depth;
	ips = malloc((nips ? nips : 1) * sizeof(*ips));
	rc = ips ? std_start(s, s->pmods, s->npmods) : MT_E_NOMEM;
	nips = 0;
	for (size_t i = 0; rc == 0 && i < n; i++) {
		const struct mt_stack *st = s->pstacks[i];

		memcpy(ips + nips, st->ips, st->depth * sizeof(*ips));
		nips += st->depth;
	}
	if (rc == 0)
		rc = mt_symbols_prefetch(s->std.symbols, ips, nips);
	free(ips);
	free(s->pstacks);
	free(s->pmods);
	s->pstacks = NULL;
	s->pmods = NULL;
	if (rc < 0)
		s->err = rc;
}

/* Appends p to *a (n of cap): 0, or MT_E_NOMEM. */
static int keep_ptr(const void ***a, size_t *n, size_t *cap, const void *p)
{
	if (*n == *cap) {
		size_t c = *cap ? 2 * *cap : 64;
		const void **b = realloc(*a, c * sizeof(*b));

		if (!b)
			return MT_E_NOMEM;
		*a = b;
		*cap = c;
	}
	(*a)[(*n)++] = p;
	return 0;
}

static void pass_stack(void *ctx, const struct mt_stack *st)
{
	struct mt_session *s = ctx;

	if (s->o.symbolize &&
	    keep_ptr((const void ***)&s->pstacks, &s->npstacks, &s->cap_pstacks, st) < 0)
		s->err = MT_E_NOMEM;
}

static void pass_module(void *ctx, const struct mt_module *m)
{
	struct mt_session *s = ctx;

	if (s->o.symbolize &&
	    keep_ptr((const void ***)&s->pmods, &s->npmods, &s->cap_pmods, m) < 0)
		s->err = MT_E_NOMEM;
}

static void pass_progress(void *ctx, uint64_t done, uint64_t total)
{
	struct mt_session *s = ctx;

	if (s->o.symbolize)
		symbols_ahead(s);
	if (s->o.progress.fn)
		s->o.progress.fn(s->o.progress.ctx, done, total);
}

/*
 * The stacks of the full pass, for trees built after a side replay (which
 * starts the replay's tables over): the replay keeps its stack objects
 * across runs (replay.h), so pointers are enough.
 */
static int keep_stacks(struct mt_session *s)
{
	size_t n = mt_replay_nstacks(s->r);

	s->stacks = calloc(n ? n : 1, sizeof(*s->stacks));
	if (!s->stacks)
		return MT_E_NOMEM;
	for (size_t i = 0; i < n; i++)
		s->stacks[i] = mt_replay_stack(s->r, (uint32_t)i);
	s->nstacks = n;
	return 0;
}

/* The tag paths of the pass: the replay keeps their strings across runs,
 * but a side replay that stops early knows fewer of them. */
static int keep_tags(struct mt_session *s)
{
	s->ntags = mt_replay_ntags(s->r);
	s->tags = calloc(s->ntags + 1, sizeof(*s->tags));
	if (!s->tags)
		return MT_E_NOMEM;
	for (size_t i = 0; i <= s->ntags; i++)
		s->tags[i] = mt_replay_tag(s->r, (uint32_t)i);
	return 0;
}

/* The threads of the pass: tid, name (copied: a side replay frees the
 * replay's) and figures. */
static int keep_threads(struct mt_session *s)
{
	s->threads = calloc(s->nthreads ? s->nthreads : 1, sizeof(*s->threads));
	if (!s->threads)
		return MT_E_NOMEM;
	for (size_t i = 0; i < s->nthreads; i++) {
		struct mt_session_thread *t = &s->threads[i];
		const char *name;

		if (mt_replay_thread(s->r, i, &t->tid, &name) < 0)
			t->tid = UINT32_MAX;  /* never announced */
		else if (name && !(t->name = strdup(name)))
			return MT_E_NOMEM;
		mt_agg_thread_stats(s->agg, i, &t->st);
	}
	return 0;
}

static const struct mt_stack *src_stack(void *ctx, uint32_t id)
{
	const struct mt_session *s = ctx;

	return id < s->nstacks ? s->stacks[id] : NULL;
}

static const char *src_tag(void *ctx, uint32_t id)
{
	return mt_session_tag(ctx, id);
}

static int src_resolve(void *ctx, uint64_t ip, const struct mt_frame **frames, size_t *n)
{
	const struct mt_session *s = ctx;

	return mt_symbols_resolve(s->std.symbols, ip, frames, n);
}

/* The series and the time marks look at the events whose time moves
 * (pass_event, pass_time); without them the pass is the aggregator's alone. */
static int watches_time(const struct mt_session *s)
{
	return s->series || s->o.time_marks;
}

/* The pass's callbacks: the events go straight to the aggregator (its
 * ctx), a run of them at a time (on_run), which hands those after the
 * time moved to pass_event. */
static void pass_ops(struct mt_session *s, struct mt_replay_ops *ops)
{
	memset(ops, 0, sizeof(*ops));
	ops->on_base = pass_base;
	ops->on_alloc = agg_ops.on_alloc;
	ops->on_free = agg_ops.on_free;
	ops->on_run = agg_ops.on_run;
	ops->event_ctx = s->agg;
	/* with mt_agg_hook set (see mt_session_open) */
	if (watches_time(s))
		ops->on_time = pass_time;
	ops->on_snapshot = pass_snapshot;
	ops->on_end = pass_end;
	ops->on_rss = pass_rss;
	ops->on_leak_check = pass_leak;
	ops->on_progress = pass_progress;
	ops->on_stack = pass_stack;
	ops->on_module = pass_module;
}

int mt_session_open(const char *path, const struct mt_session_opts *o,
		    struct mt_session **out, uint64_t *err_offset)
{
	struct mt_session *s = calloc(1, sizeof(*s));
	struct mt_replay_ops ops;
	int rc;

	*out = NULL;
	if (err_offset)
		*err_offset = 0;
	if (!s)
		return MT_E_NOMEM;
	if (o)
		s->o = *o;
	mt_agg_ops(&agg_ops);
	rc = mt_replay_open(path, &s->r, err_offset);
	if (rc < 0)
		goto fail;
	rc = MT_E_NOMEM;
	s->agg = mt_agg_new();
	if (s->o.time_marks)
		s->o.skip &= ~MT_SESSION_NO_SERIES;
	if (s->o.figures_only)
		s->o.skip |= MT_SESSION_NO_SERIES;
	s->series = s->o.skip & MT_SESSION_NO_SERIES ? NULL : mt_series_new();
	s->cursor = mt_profile_new();
	if (!s->agg || (!s->series && !(s->o.skip & MT_SESSION_NO_SERIES)) || !s->cursor)
		goto fail;
	mt_agg_skip(s->agg, s->o.skip & ~MT_SESSION_NO_SERIES);
	rc = mt_agg_request(s->agg, NULL, 0, 0);
	if (rc < 0)
		goto fail;
	if (s->o.follow && (s->o.figures_only || !(s->path = strdup(path)))) {
		rc = s->o.figures_only ? MT_E_ARG : MT_E_NOMEM;
		goto fail;
	}
	if (s->o.figures_only) {
		mt_agg_figures_only(s->agg, 1);
		s->o.time_marks = 0;
		s->o.symbolize = 0;
	} else {
		mt_agg_journal(s->agg, 1);
	}
	mt_agg_size_buckets(s->agg, s->o.size_buckets);
	if (watches_time(s))
		mt_agg_hook(s->agg, pass_event, s);
	{
		/* END knows how many blocks will be live at the peak: the
		 * live table is made that large at once (a hint only); and
		 * whether the blocks live at the end are classified. */
		struct mt_totals tot;
		struct mt_leak_totals lk;
		unsigned how;
		int classified = 0;

		if (mt_replay_end_leaks(s->r, &how, &tot, &classified, &lk) == 1)
			(void)mt_replay_expect_blocks(s->r, tot.peak_blocks);
		/* whose blocks frees end: per-thread figures ask, and so does
		 * a thread restriction of the end's leak kinds */
		mt_replay_owners(s->r, !s->o.figures_only &&
				 (!(s->o.skip & MT_TALLY_NO_THREADS) || classified));
	}
	if (s->o.figures_only) {
		/* the aggregator alone, straight from the replay */
		rc = mt_agg_run(s->agg, s->r, NULL, 0, NULL, &s->o.progress);
		if (rc == 0)
			pass_end(s, mt_replay_end(s->r));
	} else {
		pass_ops(s, &ops);
		rc = mt_replay_run(s->r, &ops, s);
		if (s->series)
			flush(s);
	}
	if (rc < 0)
		goto fail;
	if (s->err < 0 || mt_agg_error(s->agg) < 0) {
		rc = s->err < 0 ? s->err : mt_agg_error(s->agg);
		goto fail;
	}
	if (err_offset && s->end.error)
		*err_offset = s->end.error_offset;
	/* modules of the run the symbolizer made during the pass lacks */
	rc = std_catch_up(s);
	if (rc == 0)
		rc = keep_stacks(s);
	if (rc == 0)
		rc = keep_tags(s);
	if (rc < 0)
		goto fail;
	s->nthreads = mt_replay_nthreads(s->r);
	rc = keep_threads(s);
	if (rc < 0)
		goto fail;
	/* Live blocks are the pass's alone: their table goes before the
	 * trees and the symbolizer come, so the two never add up (unless the
	 * pass goes on: mt_session_poll). */
	if (!s->o.follow)
		mt_replay_trim(s->r);
	*out = s;
	return 0;
fail:
	mt_session_free(s);
	return rc;
}

void mt_session_free(struct mt_session *s)
{
	if (!s)
		return;
	if (s->std_ok)
		mt_tree_std_fini(&s->std);
	mt_profile_free(s->cursor);
	mt_agg_free(s->side);
	mt_agg_free(s->agg);
	mt_series_free(s->series);
	mt_replay_free(s->r);
	mt_replay_free(s->side_r);
	free(s->path);
	free(s->stacks);
	free(s->bm);
	free(s->stop_reason);
	for (size_t i = 0; s->threads && i < s->nthreads; i++)
		free((char *)s->threads[i].name);
	free(s->threads);
	free(s->only);
	free(s->tags);
	free(s->only_tag);
	free(s->lost);
	free(s->checks);
	free(s->pmods);
	free(s->pstacks);
	free(s);
}

/* ---- what the pass found ------------------------------------------------------ */

const struct mt_header *mt_session_header(const struct mt_session *s)
{
	return mt_replay_header(s->r);
}

uint64_t mt_session_sample(const struct mt_session *s)
{
	return mt_replay_sample(s->r);
}

const struct mt_end *mt_session_end(const struct mt_session *s)
{
	return &s->end;
}

const struct mt_agg_stats *mt_session_stats(const struct mt_session *s)
{
	return mt_agg_stats(s->agg);
}

const struct mt_series *mt_session_series(const struct mt_session *s)
{
	return s->series;
}

size_t mt_session_nthreads(const struct mt_session *s)
{
	return s->nthreads;
}

int mt_session_thread(const struct mt_session *s, size_t i, struct mt_session_thread *out)
{
	if (i >= s->nthreads || s->threads[i].tid == UINT32_MAX)
		return MT_E_NOTFOUND;
	*out = s->threads[i];
	return 0;
}

int mt_session_only_thread(struct mt_session *s, int64_t tid)
{
	uint8_t *only;
	size_t found = 0;

	if (tid < 0) {
		free(s->only);
		s->only = NULL;
		return 0;
	}
	only = calloc(s->nthreads ? s->nthreads : 1, 1);
	if (!only)
		return MT_E_NOMEM;
	for (size_t i = 0; i < s->nthreads; i++)
		if (s->threads[i].tid != UINT32_MAX && s->threads[i].tid == (uint64_t)tid)
			found += only[i] = 1;
	if (!found) {
		free(only);
		return MT_E_NOTFOUND;
	}
	free(s->only);
	s->only = only;
	return 0;
}

size_t mt_session_ntags(const struct mt_session *s)
{
	return s->ntags;
}

const char *mt_session_tag(const struct mt_session *s, uint32_t id)
{
	return id <= s->ntags ? s->tags[id] : NULL;
}

uint32_t mt_session_stack_tag(const struct mt_session *s, uint32_t stack)
{
	return stack < s->nstacks ? s->stacks[stack]->tag : 0;
}

/* Is path the tag path want, or one inside it? */
static int tag_within(const char *path, const char *want)
{
	size_t n = strlen(want);

	return !strncmp(path, want, n) && (path[n] == 0 || path[n] == '/');
}

int mt_session_only_tag(struct mt_session *s, const char *path)
{
	uint8_t *keep;
	size_t found = 0;

	if (!path) {
		free(s->only_tag);
		s->only_tag = NULL;
		return 0;
	}
	keep = calloc(s->ntags + 1, 1);
	if (!keep)
		return MT_E_NOMEM;
	/* "" is no tag at all; a path keeps the paths inside it too */
	for (size_t i = 0; i <= s->ntags; i++)
		found += keep[i] = *path ? i && tag_within(s->tags[i], path) : !i;
	if (!found) {
		free(keep);
		return MT_E_NOTFOUND;
	}
	free(s->only_tag);
	s->only_tag = keep;
	return 0;
}

/*
 * The tag restriction on a profile the session made: the stacks of other
 * tag paths cost nothing. A profile, not a replay, because a tag path is
 * part of a stack's identity (unlike a thread, which a stack's blocks may
 * have many of): every figure of a stack belongs to one tag path, the
 * temporaries' too. Returns rc, or MT_E_NOMEM (*p then freed).
 */
static int tag_filter(const struct mt_session *s, struct mt_profile **p, int rc)
{
	if (rc < 0 || !s->only_tag || !*p)
		return rc;
	for (uint32_t i = 0; i < mt_profile_nstacks(*p) && i < s->nstacks; i++) {
		struct mt_cost c = mt_profile_get(*p, i);

		if (s->only_tag[s->stacks[i]->tag] || (!c.bytes && !c.blocks && !c.allocs))
			continue;
		c.bytes = -c.bytes;
		c.blocks = -c.blocks;
		c.allocs = -c.allocs;
		if (mt_profile_add(*p, i, &c) < 0) {
			mt_profile_free(*p);
			*p = NULL;
			return MT_E_NOMEM;
		}
	}
	return rc;
}

/*
 * The symbolizer, with the replay's first n modules: mods NULL, every one
 * the replay knows at the end of the pass (the replay's last full run: the
 * side replays use the symbolizer made by then); or, during it, those the
 * pass heard of (symbols_ahead; std_catch_up adds the rest after it).
 */
static int std_start(struct mt_session *s, const struct mt_module *const *mods, size_t n)
{
	int rc = mt_tree_std_init_mods(&s->std, s->r, mods, n);

	if (rc < 0)
		return rc;
	s->std_ok = 1;
	s->nsym = n;
	s->src.stack = src_stack;
	s->src.resolve = src_resolve;
	s->src.tag = src_tag;
	s->src.ctx = s;
	return 0;
}

/* The modules the replay met since the symbolizer was made. */
static int std_catch_up(struct mt_session *s)
{
	size_t nmod = mt_replay_nmodules(s->r);
	int rc;

	for (; s->std_ok && s->nsym < nmod; s->nsym++) {
		rc = mt_symbols_add_module(s->std.symbols, mt_replay_module(s->r, s->nsym));
		if (rc < 0)
			return rc;
	}
	return 0;
}

const struct mt_tree_source *mt_session_source(struct mt_session *s, int *err)
{
	int rc;

	*err = 0;
	if (!s->std_ok && (rc = std_start(s, NULL, mt_replay_nmodules(s->r))) < 0) {
		*err = rc;
		return NULL;
	}
	return &s->src;
}

size_t mt_session_warnings(const struct mt_session *s, const char *const **lines)
{
	if (!s->std_ok) {
		*lines = NULL;
		return 0;
	}
	return mt_symbols_warnings(s->std.symbols, lines);
}

long mt_session_find_snapshot(const struct mt_session *s, uint32_t idx)
{
	const struct mt_agg_stats *st = mt_agg_stats(s->agg);

	for (size_t i = 0; i < st->nsnapshots; i++)
		if (st->snapshots[i].index == idx)
			return (long)i;
	return -1;
}

/* ---- profiles at points ------------------------------------------------------------ */

/* The profile at mark m (index into the journal). */
static int at_mark(struct mt_session *s, size_t m, struct mt_profile **out)
{
	int rc;

	if (m + 1 < s->ncur) {
		mt_profile_free(s->cursor);
		s->cursor = mt_profile_new();
		s->ncur = 0;
		if (!s->cursor)
			return MT_E_NOMEM;
	}
	rc = mt_agg_apply_marks(s->agg, s->cursor, s->ncur, m + 1);
	if (rc < 0)
		return rc;
	s->ncur = m + 1;
	*out = mt_profile_copy(s->cursor);
	return *out ? 0 : MT_E_NOMEM;
}

/*
 * Between a side replay and its aggregator when profiles are restricted to
 * some threads' blocks (mt_session_only_thread): an allocation goes on when
 * its thread is kept, a free when the block's allocating thread is.
 */
struct only {
	const struct mt_session *s;
	struct mt_replay_ops in;
	void *ctx;
};

static int kept(const struct mt_session *s, uint32_t t)
{
	return t < s->nthreads && s->only[t];
}

static int only_alloc(void *ctx, const struct mt_event *ev)
{
	struct only *o = ctx;

	return kept(o->s, ev->thread) ? o->in.on_alloc(o->ctx, ev) : 0;
}

static int only_free(void *ctx, const struct mt_event *ev)
{
	struct only *o = ctx;

	return kept(o->s, ev->alloc_thread) ? o->in.on_free(o->ctx, ev) : 0;
}

static int only_snapshot(void *ctx, const struct mt_snapshot *snap)
{
	struct only *o = ctx;

	return o->in.on_snapshot(o->ctx, snap);
}

static void only_end(void *ctx, const struct mt_end *e)
{
	struct only *o = ctx;

	o->in.on_end(o->ctx, e);
}

/* Replays the log into s->side, through the thread restriction if any. */
static int side_run(struct mt_session *s)
{
	struct mt_replay_ops ops;
	struct only o = { s, { 0 }, s->side };
	struct mt_replay *r = s->r;
	int rc;

	/* a pass that goes on keeps its replay: the side replays get their own */
	if (s->o.follow) {
		if (!s->side_r && (rc = mt_replay_open(s->path, &s->side_r, NULL)) < 0)
			return rc;
		r = s->side_r;
	}
	/* never more live blocks than at the peak: no rehash on the way */
	(void)mt_replay_expect_blocks(r, (uint64_t)mt_agg_stats(s->agg)->peak_blocks);
	/* the side aggregator keeps per-thread figures; the filter reads owners */
	mt_replay_owners(r, 1);
	mt_agg_ops(&o.in);
	if (!s->only)
		return mt_replay_run(r, &o.in, s->side);
	/* A bounded log's start (BASE) says not which thread allocated what
	 * was live then: a thread's view begins with the kept events. */
	memset(&ops, 0, sizeof(ops));
	ops.on_alloc = only_alloc;
	ops.on_free = only_free;
	ops.on_snapshot = only_snapshot;
	ops.on_end = only_end;
	return mt_replay_run(r, &ops, &o);
}

static int replay_points(struct mt_session *s, const struct mt_at *at, size_t n,
			 struct mt_profile **outs)
{
	int err;

	for (size_t i = 0; i < n; i++)
		outs[i] = NULL;
	if (s->o.figures_only)
		return MT_E_ARG;
	/* The symbolizer must see the full pass's modules, not a partial
	 * replay's: make it now. */
	if (!mt_session_source(s, &err))
		return err;
	if (!s->side) {
		if (!(s->side = mt_agg_new()))
			return MT_E_NOMEM;
		mt_agg_size_buckets(s->side, s->o.size_buckets);
	}
	err = mt_agg_request(s->side, at, n, 1);
	if (err < 0)
		return err;
	err = side_run(s);
	if (err < 0)
		return err;
	if (mt_agg_error(s->side) < 0)
		return mt_agg_error(s->side);
	for (size_t i = 0; i < n; i++) {
		outs[i] = mt_agg_take(s->side, i);
		if (!outs[i]) {
			for (size_t k = 0; k < i; k++) {
				mt_profile_free(outs[k]);
				outs[k] = NULL;
			}
			return MT_E_NOMEM;
		}
	}
	return 0;
}

uint64_t mt_session_indexed_time(const struct mt_session *s, uint64_t t)
{
	size_t lo = 0, hi = s->nbm;

	/* the end, the start, or no marks: the point itself */
	if (!s->o.time_marks || !s->any || t >= s->last || t < s->first || !s->first)
		return t;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (s->bm[mid].lo <= t + 1)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return s->first - 1;      /* the start */
	return t + 1 <= s->bm[lo - 1].hi ? t : s->bm[lo - 1].hi - 1;
}

/* The snapshot with event seq `seq` (snapshots are in seq order), or -1. */
static long snapshot_at_seq(const struct mt_agg_stats *st, uint64_t seq)
{
	size_t lo = 0, hi = st->nsnapshots;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (st->snapshots[mid].seq < seq)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < st->nsnapshots && st->snapshots[lo].seq == seq ? (long)lo : -1;
}

int mt_session_replay_points(struct mt_session *s, const struct mt_at *at, size_t n,
			     struct mt_profile **outs)
{
	int rc = replay_points(s, at, n, outs);

	for (size_t i = 0; i < n && rc >= 0; i++)
		rc = tag_filter(s, &outs[i], rc);
	if (rc < 0)
		for (size_t i = 0; i < n; i++) {
			mt_profile_free(outs[i]);
			outs[i] = NULL;
		}
	return rc;
}

/* A point off the marks: a replay that stops once past it. */
static int by_replay(struct mt_session *s, const struct mt_at *at, struct mt_profile **out)
{
	return replay_points(s, at, 1, out);
}

/*
 * A profile restricted to some threads' blocks: every point but the start
 * is a replay's, the peak and the snapshots as the event numbers they are.
 */
static int only_profile(struct mt_session *s, const struct mt_at *at, struct mt_profile **out)
{
	const struct mt_agg_stats *st = mt_agg_stats(s->agg);
	struct mt_at p = *at;
	long i;

	switch (at->kind) {
	case MT_AT_START:
		*out = mt_profile_new();
		return *out ? 0 : MT_E_NOMEM;
	case MT_AT_PEAK:
		if (st->peak_at_start) {
			p.kind = MT_AT_START;
			return only_profile(s, &p, out);
		}
		p.kind = MT_AT_SEQ;
		p.value = st->peak_seq;
		break;
	case MT_AT_SNAPSHOT:
		if (at->value > UINT32_MAX || (i = mt_session_find_snapshot(s, (uint32_t)at->value)) < 0)
			return MT_E_NOTFOUND;
		p.kind = MT_AT_SEQ;
		p.value = st->snapshots[i].seq;
		break;
	default:
		break;
	}
	return by_replay(s, &p, out);
}

static int profile(struct mt_session *s, const struct mt_at *at, struct mt_profile **out);

int mt_session_profile(struct mt_session *s, const struct mt_at *at, struct mt_profile **out)
{
	return tag_filter(s, out, profile(s, at, out));
}

static int profile(struct mt_session *s, const struct mt_at *at, struct mt_profile **out)
{
	const struct mt_agg_stats *st = mt_agg_stats(s->agg);
	long i;

	*out = NULL;
	if (s->o.figures_only)
		return MT_E_ARG;
	if (s->only)
		return only_profile(s, at, out);
	switch (at->kind) {
	case MT_AT_START:
		*out = mt_profile_new();
		return *out ? 0 : MT_E_NOMEM;
	case MT_AT_END:
		*out = mt_agg_end_profile(s->agg);
		return *out ? 0 : MT_E_NOMEM;
	case MT_AT_PEAK:
		*out = mt_agg_peak_profile(s->agg);
		return *out ? 0 : MT_E_NOMEM;
	case MT_AT_SNAPSHOT:
		if (at->value > UINT32_MAX || (i = mt_session_find_snapshot(s, (uint32_t)at->value)) < 0)
			return MT_E_NOTFOUND;
		return at_mark(s, (size_t)mt_agg_snapshot_mark(s->agg, (size_t)i), out);
	case MT_AT_SEQ: {
		struct mt_at t = { MT_AT_PEAK, 0 };

		if (at->value >= st->events)
			t.kind = MT_AT_END;
		else if (!st->peak_at_start && at->value == st->peak_seq)
			t.kind = MT_AT_PEAK;
		else if ((i = snapshot_at_seq(st, at->value)) >= 0)
			/* a snapshot changes nothing: the state at its mark */
			return at_mark(s, (size_t)mt_agg_snapshot_mark(s->agg, (size_t)i), out);
		else {
			/* a mark with exactly value + 1 events applied */
			size_t lo = 0, hi = mt_agg_nmarks(s->agg);

			while (lo < hi) {
				size_t mid = lo + (hi - lo) / 2;

				if (mt_agg_get_mark(s->agg, mid)->events < at->value + 1)
					lo = mid + 1;
				else
					hi = mid;
			}
			if (lo < mt_agg_nmarks(s->agg) &&
			    mt_agg_get_mark(s->agg, lo)->events == at->value + 1)
				return at_mark(s, lo, out);
			return by_replay(s, at, out);
		}
		return profile(s, &t, out);
	}
	case MT_AT_TIME: {
		struct mt_at e = { MT_AT_END, 0 };
		size_t lo = 0, hi = s->nbm;

		/* after the last event, or before the first (with marks on) */
		if (at->value >= st->end_time_ns || (s->o.time_marks && at->value >= s->last))
			return profile(s, &e, out);
		if (s->o.time_marks && (!s->any || at->value < s->first)) {
			e.kind = MT_AT_START;
			return profile(s, &e, out);
		}
		/* the last bucket mark whose range starts at or before T + 1 */
		while (lo < hi) {
			size_t mid = lo + (hi - lo) / 2;

			if (s->bm[mid].lo <= at->value + 1)
				lo = mid + 1;
			else
				hi = mid;
		}
		if (lo > 0 && at->value + 1 <= s->bm[lo - 1].hi)
			return at_mark(s, s->bm[lo - 1].mark, out);
		return by_replay(s, at, out);
	}
	}
	return MT_E_ARG;
}

/* The side aggregator after a whole run, through the thread restriction. */
static int side_whole(struct mt_session *s)
{
	static const struct mt_at end = { MT_AT_END, 0 };
	struct mt_profile *p = NULL;
	int rc = replay_points(s, &end, 1, &p);

	mt_profile_free(p);
	return rc < 0 ? rc : 0;
}

/*
 * The aggregator that has a tally the pass may leave out (MT_TALLY_NO_*
 * bit what): the pass's, or the side one after a whole run of its own when
 * the pass skipped it or a thread restriction is on. 0 or an error.
 */
static int tallied(struct mt_session *s, unsigned what, const struct mt_agg **a)
{
	int rc;

	*a = s->agg;
	if (s->o.figures_only)
		return MT_E_ARG;
	if (s->only || s->o.skip & what) {
		rc = side_whole(s);
		if (rc < 0)
			return rc;
		*a = s->side;
	}
	return 0;
}

int mt_session_temporary(struct mt_session *s, struct mt_profile **out)
{
	const struct mt_agg *a;
	int rc = tallied(s, MT_TALLY_NO_TEMPORARY, &a);

	*out = NULL;
	if (rc < 0)
		return rc;
	*out = mt_agg_temporary_profile(a);
	return tag_filter(s, out, *out ? 0 : MT_E_NOMEM);
}

int mt_session_calls(struct mt_session *s, struct mt_profile **out)
{
	const struct mt_agg *a;
	int rc = tallied(s, MT_TALLY_NO_CALLS, &a);

	*out = NULL;
	if (rc < 0)
		return rc;
	*out = mt_sizes_calls(mt_agg_stats(a)->sizes);
	return tag_filter(s, out, *out ? 0 : MT_E_NOMEM);
}

int mt_session_size_histogram(struct mt_session *s, const struct mt_profile *only,
			      struct mt_sizes_bucket *out)
{
	const struct mt_agg *a;
	struct mt_profile *kept;
	int rc = tallied(s, MT_TALLY_NO_CALLS, &a);

	if (rc < 0)
		return rc;
	if (!s->only_tag)
		return mt_sizes_histogram(mt_agg_stats(a)->sizes, only, out);
	/* the stacks of the kept tags (among those of only) */
	kept = only ? mt_profile_copy(only) : mt_sizes_calls(mt_agg_stats(a)->sizes);
	rc = tag_filter(s, &kept, kept ? 0 : MT_E_NOMEM);
	if (rc == 0)
		rc = mt_sizes_histogram(mt_agg_stats(a)->sizes, kept, out);
	mt_profile_free(kept);
	return rc;
}

/* ---- following a log still being written ------------------------------------ */

int64_t mt_session_poll(struct mt_session *s)
{
	struct mt_replay_ops ops;
	uint64_t had = mt_agg_stats(s->agg)->events, good = s->end.good_bytes;
	size_t nthreads = s->nthreads;
	int rc;

	if (!s->o.follow)
		return MT_E_ARG;
	pass_ops(s, &ops);
	/* the pass goes on without a progress bar: it was drawn to its end */
	ops.on_progress = NULL;
	rc = mt_replay_resume(s->r, &ops, s);
	if (s->series)
		flush(s);
	if (rc < 0)
		return rc;
	if (s->err < 0 || mt_agg_error(s->agg) < 0)
		return s->err < 0 ? s->err : mt_agg_error(s->agg);
	/* no chunk came: nothing else did (idle, this poll was an fstat) */
	if (s->end.good_bytes == good)
		return 0;
	/* what the pass found so far, as mt_session_open keeps it */
	free(s->stacks);
	s->stacks = NULL;
	for (size_t i = 0; s->threads && i < s->nthreads; i++)
		free((char *)s->threads[i].name);
	free(s->threads);
	s->threads = NULL;
	rc = keep_stacks(s);
	if (rc < 0)
		return rc;
	s->nthreads = mt_replay_nthreads(s->r);
	/* a thread new to the restriction is not kept */
	if (s->only) {
		uint8_t *only = realloc(s->only, s->nthreads ? s->nthreads : 1);

		if (!only)
			return MT_E_NOMEM;
		s->only = only;
		if (s->nthreads > nthreads)
			memset(only + nthreads, 0, s->nthreads - nthreads);
	}
	rc = keep_threads(s);
	if (rc < 0)
		return rc;
	rc = std_catch_up(s);
	if (rc < 0)
		return rc;
	/* the journal's marks may have merged (thin): the cursor starts over */
	mt_profile_free(s->cursor);
	s->ncur = 0;
	if (!(s->cursor = mt_profile_new()))
		return MT_E_NOMEM;
	return (int64_t)(mt_agg_stats(s->agg)->events - had);
}

/* ---- leak kinds ------------------------------------------------------------------ */

int mt_session_leak_profile(struct mt_session *s, unsigned kind, struct mt_profile **out)
{
	struct mt_profile *p = NULL;
	int rc;

	*out = NULL;
	if (kind >= MT_LEAK_KINDS)
		return MT_E_ARG;
	if (!s->end.classified || s->o.figures_only)
		return MT_E_NOTFOUND;
	if (kind == MT_LEAK_REACHABLE) {
		/* what is live at the end, less the lost blocks */
		struct mt_at end = { MT_AT_END, 0 };

		rc = mt_session_profile(s, &end, &p);
		if (rc < 0)
			return rc;
	} else if (!(p = mt_profile_new())) {
		return MT_E_NOMEM;
	}
	for (size_t i = 0; i < s->nlost; i++) {
		const struct mt_leak_block *b = &s->lost[i];
		int64_t sign = kind == MT_LEAK_REACHABLE ? -1 : 1;
		struct mt_cost c = { sign * (int64_t)b->size, sign * (int64_t)b->count, 0 };

		if ((kind != MT_LEAK_REACHABLE && b->kind != kind) ||
		    (s->only && !kept(s, b->thread)))
			continue;
		if (mt_profile_add(p, b->stack, &c) < 0) {
			mt_profile_free(p);
			return MT_E_NOMEM;
		}
	}
	*out = p;
	/* the tag restriction, as for every profile */
	return tag_filter(s, out, 0);
}

size_t mt_session_leak_checks(const struct mt_session *s, const struct mt_leak_check_at **out)
{
	*out = s->checks;
	return s->nchecks;
}

/*
 * agg.c - per-stack aggregation of a replay: live costs, allocation counts,
 * temporary allocations, the exact peak, snapshots, and profiles captured at
 * requested points (see agg.h for the definitions).
 *
 * One array of struct mt_cost indexed by stack id is the current state; a
 * capture copies it. The callbacks do O(1) work per event, except when a
 * requested point is passed (a scan of the pending requests); a run of
 * events (replay.h on_run) is counted in one loop, the figures in locals. Not here: the
 * replay itself, trees, printing.
 *
 * The peak's profile is kept in the same single pass, copy on write: each
 * stack remembers its cost as of the latest peak (and that peak's epoch)
 * the first time it changes after that peak, so the profile at the peak is
 * each stack's remembered cost where its epoch is the last peak's, else its
 * current one. O(1) per event, however often the peak moves.
 *
 * The journal (mt_agg_journal), for lib/session.c: at each mark the stacks
 * whose cost changed since the previous mark are written with their new
 * cost (a frame), so the profile at any mark is rebuilt by applying frames
 * in order, without replaying the log.
 */
#include <stdlib.h>
#include <string.h>

#include "agg.h"
#include "error.h"
#include "livetab.h"
#include "replay.h"
#include "sizes.h"

struct mt_profile {
	struct mt_cost *c;
	size_t n, cap;
	uint64_t events;          /* event seqs applied */
	uint64_t time_ns;         /* time of the last one */
};

struct mt_agg_req {
	struct mt_at at;
	struct mt_profile *p;     /* captured profile, NULL until then or once taken */
	int done;
};

/*
 * The last allocation of one thread, for temporary allocations: valid
 * while the thread has had no allocation-related event since and the
 * block is still live. With several threads, a block may be freed by
 * another thread (and its address reused) before its own thread's next
 * event, so `last` maps the address of each valid entry to its thread, and
 * any free of that address ends the entry.
 */
struct mt_agg_thread {
	uint64_t addr;
	int valid;
};

/* Per stack, beside cur: the peak's copy on write and the journal's stamp. */
struct agg_aux {
	uint32_t peak_epoch;      /* of its cost in peak[] */
	uint32_t mark;            /* in the journal's dirty list for this mark */
};

struct agg_entry {
	uint32_t stack;
	struct mt_cost c;
};

/* Per thread index: its figures, and its live bytes at the peak kept copy
 * on write as the stacks' are (agg_aux). */
struct agg_thread_fig {
	struct mt_agg_thread_stats f;   /* peak_* unused: see peak below */
	int64_t peak_bytes, peak_blocks; /* at the peak of epoch peak_epoch */
	uint32_t peak_epoch;
};

struct mt_agg {
	struct mt_profile cur;    /* live bytes/blocks and allocs so far, per stack */
	struct agg_aux *aux;      /* cur.n of them (cur.cap allocated) */
	/* each stack's cost at the peak of its aux's epoch: apart from aux,
	 * which every event reads, written only then (with it, 1,000 stacks'
	 * aux and costs left the L1 cache on the viewer's churn pass) */
	struct mt_cost *peak;
	uint32_t peak_epoch;      /* bumped at each new peak */

	int figures;              /* mt_agg_run counts figures only */
	unsigned skip;            /* MT_TALLY_NO_* */
	int journal;              /* keeping frames */
	uint32_t mark_no;         /* the mark being gathered, from 1; 0: no journal
				     (no stack's mark differs from it) */
	/* stacks changed since the last mark: room for every stack cur has
	 * room for (each is in it once), so a change never grows it */
	uint32_t *dirty;
	size_t ndirty;
	struct agg_entry *ent;    /* every frame's entries, in order */
	size_t nent, cap_ent;
	struct mt_agg_mark *marks;
	size_t nmarks, cap_marks;
	size_t *snap_mark;        /* the mark of each snapshot (journal only) */

	struct mt_profile temp;   /* temporary bytes (bytes) and count (blocks) per stack */
	struct mt_agg_thread *thr;
	size_t nthr;
	struct mt_livetab last;   /* with more than one thread: address -> thread */
	/*
	 * The live figures, not side by side: GCC read or wrote a pair of
	 * them as one 16-byte vector in some callbacks and as two 8-byte
	 * words in others, and a 16-byte load of what the event before
	 * stored in two halves waits for the stores (perf samples of report
	 * --summary on 100 M churn events: 340 ms in the allocations'
	 * callback, 40-110 in the frees'). Apart, each is one word.
	 */
	int64_t live_bytes;
	int64_t win_lo;           /* mt_agg_window */
	int64_t live_blocks;
	int64_t win_hi;
	struct mt_agg_stats st;
	struct mt_agg_snapshot *snaps;
	size_t snaps_cap;

	struct mt_agg_req *req;
	size_t nreq, npending;
	uint64_t next_seq, next_time;  /* smallest pending MT_AT_SEQ / MT_AT_TIME value */
	int stop_early;
	int satisfied;            /* stop_early, and every request captured */
	int plain;                /* no point pending, no tally asked for, no hook
				     due (no_call) */
	/* mt_agg_hook: the hook, and the next event due to it whatever its
	 * time */
	int (*hook)(void *ctx, const struct mt_event *ev, int free);
	void *hook_ctx;
	int hook_due;

	struct agg_thread_fig *tf; /* per thread index */
	size_t ntf;

	struct mt_progress_cb progress;
	int err;

	struct mt_sizes *sizes;   /* requested sizes per stack (sizes.h) */
};

#define TALLY_ALL (MT_TALLY_NO_THREADS | MT_TALLY_NO_TEMPORARY | MT_TALLY_NO_CALLS)

/* ---- profiles ------------------------------------------------------------ */

struct mt_profile *mt_profile_new(void)
{
	return calloc(1, sizeof(struct mt_profile));
}

void mt_profile_free(struct mt_profile *p)
{
	if (!p)
		return;
	free(p->c);
	free(p);
}

static int profile_grow(struct mt_profile *p, size_t n)
{
	size_t cap;
	struct mt_cost *c;

	if (n <= p->n)
		return 0;
	if (n > p->cap) {
		cap = p->cap ? p->cap : 64;
		while (cap < n)
			cap *= 2;
		c = realloc(p->c, cap * sizeof(*c));
		if (!c)
			return MT_E_NOMEM;
		p->c = c;
		p->cap = cap;
	}
	memset(p->c + p->n, 0, (n - p->n) * sizeof(*p->c));
	p->n = n;
	return 0;
}

struct mt_profile *mt_profile_copy(const struct mt_profile *src)
{
	struct mt_profile *p = mt_profile_new();

	if (!p)
		return NULL;
	if (profile_grow(p, src->n) < 0) {
		mt_profile_free(p);
		return NULL;
	}
	if (src->n)
		memcpy(p->c, src->c, src->n * sizeof(*p->c));
	p->events = src->events;
	p->time_ns = src->time_ns;
	return p;
}

size_t mt_profile_nstacks(const struct mt_profile *p)
{
	return p->n;
}

struct mt_cost mt_profile_get(const struct mt_profile *p, uint32_t stack)
{
	struct mt_cost zero = { 0, 0, 0 };

	return stack < p->n ? p->c[stack] : zero;
}

int mt_profile_add(struct mt_profile *p, uint32_t stack, const struct mt_cost *c)
{
	if (profile_grow(p, (size_t)stack + 1) < 0)
		return MT_E_NOMEM;
	p->c[stack].bytes += c->bytes;
	p->c[stack].blocks += c->blocks;
	p->c[stack].allocs += c->allocs;
	return 0;
}

struct mt_cost mt_profile_total(const struct mt_profile *p)
{
	struct mt_cost t = { 0, 0, 0 };

	for (size_t i = 0; i < p->n; i++) {
		t.bytes += p->c[i].bytes;
		t.blocks += p->c[i].blocks;
		t.allocs += p->c[i].allocs;
	}
	return t;
}

uint64_t mt_profile_events(const struct mt_profile *p)
{
	return p->events;
}

uint64_t mt_profile_time(const struct mt_profile *p)
{
	return p->time_ns;
}

struct mt_profile *mt_profile_diff(const struct mt_profile *a, const struct mt_profile *b)
{
	struct mt_profile *d = mt_profile_copy(b);

	if (!d)
		return NULL;
	if (profile_grow(d, a->n) < 0) {
		mt_profile_free(d);
		return NULL;
	}
	for (size_t i = 0; i < a->n; i++) {
		d->c[i].bytes -= a->c[i].bytes;
		d->c[i].blocks -= a->c[i].blocks;
		d->c[i].allocs -= a->c[i].allocs;
	}
	return d;
}

/* ---- the aggregator ------------------------------------------------------ */

/*
 * On a page of its own: its running figures are written for every event,
 * and where the heap put it (how many bytes other objects took before it)
 * decided whether those writes stalled the loads of the event that
 * follows (addresses equal in their low 12 bits: a --summary on churn took
 * 0.30 or 0.47 s depending on an 8-byte change elsewhere). Page-aligned,
 * its place is the same in every build.
 */
struct mt_agg *mt_agg_new(void)
{
	struct mt_agg *a = NULL;

	if (posix_memalign((void **)&a, 4096, sizeof(*a)) != 0)
		a = NULL;
	if (a) {
		memset(a, 0, sizeof(*a));
		a->st.peak_at_start = 1;
		mt_livetab_init(&a->last, NULL);
		a->st.sizes = a->sizes = mt_sizes_new();
		if (!a->sizes) {
			free(a);
			return NULL;
		}
	}
	return a;
}

static void update_next(struct mt_agg *a)
{
	a->satisfied = a->stop_early && a->nreq && !a->npending;
	a->plain = !a->npending && !a->satisfied && (a->skip & TALLY_ALL) == TALLY_ALL &&
		   !a->hook_due;
	a->next_seq = a->next_time = UINT64_MAX;
	for (size_t i = 0; i < a->nreq; i++) {
		const struct mt_agg_req *q = &a->req[i];

		if (q->done)
			continue;
		if (q->at.kind == MT_AT_SEQ && q->at.value < a->next_seq)
			a->next_seq = q->at.value;
		else if (q->at.kind == MT_AT_TIME && q->at.value < a->next_time)
			a->next_time = q->at.value;
	}
}

static void clear_requests(struct mt_agg *a)
{
	for (size_t i = 0; i < a->nreq; i++)
		mt_profile_free(a->req[i].p);
	free(a->req);
	a->req = NULL;
	a->nreq = a->npending = 0;
	update_next(a);
}

static void clear_snapshots(struct mt_agg *a)
{
	for (size_t i = 0; i < a->st.nsnapshots; i++)
		free((char *)a->snaps[i].label);
	a->st.nsnapshots = 0;
}

void mt_agg_free(struct mt_agg *a)
{
	if (!a)
		return;
	clear_requests(a);
	clear_snapshots(a);
	free(a->snaps);
	free(a->aux);
	free(a->peak);
	free(a->dirty);
	free(a->ent);
	free(a->marks);
	free(a->snap_mark);
	free(a->cur.c);
	free(a->temp.c);
	free(a->thr);
	free(a->tf);
	mt_livetab_fini(&a->last);
	mt_sizes_free(a->sizes);
	free(a);
}

static void reset_run(struct mt_agg *a)
{
	a->cur.n = 0;
	a->peak_epoch = 0;
	a->mark_no = a->journal ? 1 : 0;
	a->hook_due = 1;
	a->ndirty = a->nent = a->nmarks = 0;
	a->cur.events = a->cur.time_ns = 0;
	a->temp.n = 0;
	a->nthr = 0;
	a->ntf = 0;
	mt_livetab_clear(&a->last);
	a->live_bytes = a->live_blocks = 0;
	clear_snapshots(a);
	memset(&a->st, 0, sizeof(a->st));
	a->st.peak_at_start = 1;
	a->st.snapshots = a->snaps;
	mt_sizes_clear(a->sizes);
	a->st.sizes = a->skip & MT_TALLY_NO_CALLS ? NULL : a->sizes;
	a->err = 0;
}


static void capture(struct mt_agg *a, struct mt_agg_req *q)
{
	q->p = mt_profile_copy(&a->cur);
	if (!q->p)
		a->err = MT_E_NOMEM;
	q->done = 1;
	a->npending--;
}

int mt_agg_request(struct mt_agg *a, const struct mt_at *at, size_t n, int stop_early)
{
	clear_requests(a);
	reset_run(a);
	a->stop_early = stop_early;
	if (n) {
		a->req = calloc(n, sizeof(*a->req));
		if (!a->req)
			return MT_E_NOMEM;
	}
	a->nreq = a->npending = n;
	for (size_t i = 0; i < n; i++) {
		a->req[i].at = at[i];
		if (at[i].kind == MT_AT_START)
			capture(a, &a->req[i]);
	}
	update_next(a);
	return a->err;
}

/* The pending points an event with this seq and time goes past. */
static __attribute__((noinline)) void capture_due(struct mt_agg *a, uint64_t seq, uint64_t time_ns)
{
	for (size_t i = 0; i < a->nreq; i++) {
		struct mt_agg_req *q = &a->req[i];

		if (q->done)
			continue;
		if ((q->at.kind == MT_AT_SEQ && seq > q->at.value) ||
		    (q->at.kind == MT_AT_TIME && time_ns > q->at.value))
			capture(a, q);
	}
	update_next(a);
}

/*
 * Called before applying an event with this seq and time: captures every
 * pending point the event goes past. Returns 1 when the replay may stop.
 */
static inline __attribute__((always_inline)) int before_event(struct mt_agg *a, uint64_t seq, uint64_t time_ns)
{
	if (__builtin_expect(a->npending != 0, 0) && (seq > a->next_seq || time_ns > a->next_time))
		capture_due(a, seq, time_ns);
	return a->satisfied;
}

static inline __attribute__((always_inline)) void after_event(struct mt_agg *a, uint64_t seq, uint64_t time_ns)
{
	/* events come in seq order (a REALLOC's halves share theirs) */
	a->cur.events = seq + 1;
	a->cur.time_ns = time_ns;
}

static struct mt_agg_thread *thread_of(struct mt_agg *a, uint32_t t)
{
	if (t >= a->nthr) {
		size_t n = (size_t)t + 1, old = a->nthr;
		struct mt_agg_thread *p = realloc(a->thr, n * sizeof(*p));
		uint32_t prev;

		if (!p) {
			a->err = MT_E_NOMEM;
			return NULL;
		}
		memset(p + a->nthr, 0, (n - a->nthr) * sizeof(*p));
		a->thr = p;
		a->nthr = n;
		/* From one thread to several: the map starts with the valid
		 * entries so far (one thread alone needs no map). */
		if (old == 1 && p[0].valid && mt_livetab_put(&a->last, p[0].addr, 0, &prev) < 0)
			a->err = MT_E_NOMEM;
	}
	return &a->thr[t];
}

/* Thread ti allocated the block at addr: its entry, for temporaries. */
static void last_alloc(struct mt_agg *a, uint32_t ti, uint64_t addr)
{
	struct mt_agg_thread *t = thread_of(a, ti);
	uint32_t other;

	if (!t)
		return;
	if (a->nthr > 1) {
		if (t->valid)
			(void)mt_livetab_take(&a->last, t->addr, &other);
		/* an entry at the same address whose free went unseen ends */
		int rc = mt_livetab_put(&a->last, addr, ti, &other);

		if (rc < 0)
			a->err = MT_E_NOMEM;
		else if (rc == 1 && other != ti)
			a->thr[other].valid = 0;
	}
	t->addr = addr;
	t->valid = 1;
}

/*
 * Thread ti freed the block at addr: 1 when it is the thread's last
 * allocation with nothing of the thread in between (a temporary). Ends
 * the thread's entry, and any entry of another thread for that block.
 */
static int last_free(struct mt_agg *a, uint32_t ti, uint64_t addr)
{
	struct mt_agg_thread *t = thread_of(a, ti);
	uint32_t owner;
	int temp;

	if (!t)
		return 0;
	temp = t->valid && t->addr == addr;
	if (a->nthr > 1) {
		if (mt_livetab_take(&a->last, addr, &owner))
			a->thr[owner].valid = 0;
		if (t->valid && !temp)
			(void)mt_livetab_take(&a->last, t->addr, &owner);
	}
	t->valid = 0;
	return temp;
}

/* Grows cur, and aux and peak beside it, to hold stack. */
static __attribute__((noinline)) int grow_stacks(struct mt_agg *a, uint32_t stack)
{
	size_t old_n = a->cur.n, old_cap = a->cur.cap;

	if (profile_grow(&a->cur, (size_t)stack + 1) < 0)
		return MT_E_NOMEM;
	if (a->cur.cap != old_cap || !a->aux) {
		struct agg_aux *x = realloc(a->aux, a->cur.cap * sizeof(*x));
		struct mt_cost *pk;
		uint32_t *d;

		if (!x)
			return MT_E_NOMEM;
		a->aux = x;
		pk = realloc(a->peak, a->cur.cap * sizeof(*pk));
		if (!pk)
			return MT_E_NOMEM;
		a->peak = pk;
		d = realloc(a->dirty, a->cur.cap * sizeof(*d));
		if (!d)
			return MT_E_NOMEM;
		a->dirty = d;
	}
	memset(a->aux + old_n, 0, (a->cur.n - old_n) * sizeof(*a->aux));
	memset(a->peak + old_n, 0, (a->cur.n - old_n) * sizeof(*a->peak));
	return 0;
}

/*
 * The current cost of a stack, about to change; NULL, with the error set,
 * when out of memory. Keeps the peak's copy and the journal's dirty list.
 * What grows is out of line.
 */
static inline __attribute__((always_inline)) struct mt_cost *stack_cost(struct mt_agg *a,
									uint32_t stack, int known)
{
	struct agg_aux *x;

	/* known: the caller found the stack in cur */
	if (!known && stack >= a->cur.n && grow_stacks(a, stack) < 0) {
		a->err = MT_E_NOMEM;
		return NULL;
	}
	x = &a->aux[stack];
	if (x->peak_epoch != a->peak_epoch) {
		a->peak[stack] = a->cur.c[stack];
		x->peak_epoch = a->peak_epoch;
	}
	if (x->mark != a->mark_no) {
		a->dirty[a->ndirty++] = stack;
		x->mark = a->mark_no;
	}
	return &a->cur.c[stack];
}

/*
 * The run's figures of one allocation or free: the one place they are
 * counted, for the full callbacks and the figures-only ones alike.
 * Returns 1 when the allocation made a new peak.
 */
static inline int count_alloc(struct mt_agg *a, const struct mt_event *ev)
{
	a->live_bytes += (int64_t)ev->size;
	a->live_blocks += (int64_t)ev->count;
	/* an allocation can only raise the window's top, a free its bottom */
	if (a->live_bytes > a->win_hi)
		a->win_hi = a->live_bytes;
	a->st.allocations += ev->count;
	a->st.bytes_allocated += ev->size;
	if (a->live_bytes <= a->st.peak_bytes)
		return 0;
	a->st.peak_bytes = a->live_bytes;
	a->st.peak_blocks = a->live_blocks;
	a->st.peak_seq = ev->seq;
	a->st.peak_time_ns = ev->time_ns;
	a->st.peak_at_start = 0;
	return 1;
}

static inline void count_free(struct mt_agg *a, const struct mt_event *ev)
{
	a->live_bytes -= (int64_t)ev->size;
	if (a->live_bytes < a->win_lo)
		a->win_lo = a->live_bytes;
	a->live_blocks -= (int64_t)ev->count;
	a->st.frees += ev->count;
}

/*
 * Thread t's figures, about to change; NULL, with the error set, when out
 * of memory. Keeps its live bytes at the latest peak (copy on write).
 */
static struct agg_thread_fig *thread_fig(struct mt_agg *a, uint32_t t)
{
	struct agg_thread_fig *x;

	if (t >= a->ntf) {
		x = realloc(a->tf, ((size_t)t + 1) * sizeof(*x));
		if (!x) {
			a->err = MT_E_NOMEM;
			return NULL;
		}
		memset(x + a->ntf, 0, ((size_t)t + 1 - a->ntf) * sizeof(*x));
		a->tf = x;
		a->ntf = (size_t)t + 1;
	}
	x = &a->tf[t];
	if (x->peak_epoch != a->peak_epoch) {
		x->peak_bytes = x->f.end_bytes;
		x->peak_blocks = x->f.end_blocks;
		x->peak_epoch = a->peak_epoch;
	}
	return x;
}

uint64_t mt_agg_events(const struct mt_agg *a)
{
	return a->cur.events;
}

void mt_agg_live(const struct mt_agg *a, int64_t *bytes, int64_t *blocks)
{
	*bytes = a->live_bytes;
	*blocks = a->live_blocks;
}

void mt_agg_window_start(struct mt_agg *a)
{
	a->win_lo = a->win_hi = a->live_bytes;
}

void mt_agg_window(const struct mt_agg *a, int64_t *lo, int64_t *hi)
{
	*lo = a->win_lo;
	*hi = a->win_hi;
}

size_t mt_agg_nthreads(const struct mt_agg *a)
{
	return a->ntf;
}

void mt_agg_thread_stats(const struct mt_agg *a, size_t i, struct mt_agg_thread_stats *out)
{
	const struct agg_thread_fig *x = i < a->ntf ? &a->tf[i] : NULL;

	memset(out, 0, sizeof(*out));
	if (!x)
		return;
	*out = x->f;
	out->peak_bytes = out->peak_blocks = 0;
	if (a->st.peak_at_start)
		return;
	out->peak_bytes = x->peak_epoch == a->peak_epoch ? x->peak_bytes : x->f.end_bytes;
	out->peak_blocks = x->peak_epoch == a->peak_epoch ? x->peak_blocks : x->f.end_blocks;
}

/*
 * The tallies a run may skip (MT_TALLY_NO_*) of an allocation, before the
 * run's figures count it (thread_fig keeps the peak's copy by the epoch
 * those may bump). Out of line, as tally_free: with all of them skipped
 * (the default report, the viewer) the callbacks save no registers for
 * them.
 */
static __attribute__((noinline)) void tally_alloc(struct mt_agg *a, const struct mt_event *ev)
{
	if (!(a->skip & MT_TALLY_NO_THREADS)) {
		struct agg_thread_fig *x = thread_fig(a, ev->thread);

		if (x) {
			x->f.allocations += ev->count;
			x->f.bytes_allocated += ev->size;
			x->f.end_bytes += (int64_t)ev->size;
			x->f.end_blocks += (int64_t)ev->count;
		}
	}
	if (!(a->skip & MT_TALLY_NO_TEMPORARY))
		last_alloc(a, ev->thread, ev->addr);
	if (!(a->skip & MT_TALLY_NO_CALLS) && mt_sizes_add(a->sizes, ev->stack, ev->size, ev->count,
							   ev->asked) < 0)
		a->err = MT_E_NOMEM;
}

static __attribute__((noinline)) void tally_free(struct mt_agg *a, const struct mt_event *ev)
{
	if (!(a->skip & MT_TALLY_NO_THREADS)) {
		struct agg_thread_fig *x = thread_fig(a, ev->alloc_thread);

		if (x) {
			x->f.end_bytes -= (int64_t)ev->size;
			x->f.end_blocks -= (int64_t)ev->count;
		}
		if ((x = thread_fig(a, ev->thread)))
			x->f.frees += ev->count;
	}
	if (!(a->skip & MT_TALLY_NO_TEMPORARY) && last_free(a, ev->thread, ev->addr)) {
		struct mt_cost tc = { (int64_t)ev->size, (int64_t)ev->count, 0 };

		if (mt_profile_add(&a->temp, ev->stack, &tc) < 0)
			a->err = MT_E_NOMEM;
		a->st.temporary += ev->count;
	}
}

/*
 * The callbacks' body (free: on_free's), inlined twice: into the callback
 * with fast set, once no_call has found that nothing it leaves out can
 * happen (a point pending, a tally asked for, a stack new), so that the
 * common path makes no call and saves no registers; and out of line for
 * the rest.
 */
static inline __attribute__((always_inline)) int body(struct mt_agg *a,
						     const struct mt_event *ev, int free,
						     int fast)
{
	struct mt_cost *c;

	if (!fast && before_event(a, ev->seq, ev->time_ns))
		return 1;
	c = stack_cost(a, ev->stack, fast);
	if (!fast && !c)
		return 0;
	if (free) {
		c->bytes -= (int64_t)ev->size;
		c->blocks -= (int64_t)ev->count;
	} else {
		c->bytes += (int64_t)ev->size;
		c->blocks += (int64_t)ev->count;
		c->allocs += (int64_t)ev->count;
	}
	if (!fast && (a->skip & TALLY_ALL) != TALLY_ALL)
		(free ? tally_free : tally_alloc)(a, ev);
	if (free)
		count_free(a, ev);
	else if (count_alloc(a, ev))
		a->peak_epoch++;      /* the state now is the peak's */
	after_event(a, ev->seq, ev->time_ns);
	return 0;
}

/*
 * An event the bodies' fast path leaves: the first of a run, or after
 * mt_agg_hook_next, goes to the hook when there is one; the rest is
 * counted here.
 */
static __attribute__((noinline)) int event_slow(struct mt_agg *a, const struct mt_event *ev,
						int free)
{
	int rc = a->hook && a->hook_due ? a->hook(a->hook_ctx, ev, free) :
		 mt_agg_count(a, ev, free);

	/* due no more (a mt_agg_hook_next of the hook's own was for this
	 * event) */
	if (a->hook_due) {
		a->hook_due = 0;
		update_next(a);
	}
	return rc;
}

int mt_agg_count(struct mt_agg *a, const struct mt_event *ev, int free)
{
	return body(a, ev, free, 0);
}

void mt_agg_hook(struct mt_agg *a, int (*fn)(void *ctx, const struct mt_event *ev, int free),
		 void *ctx)
{
	a->hook = fn;
	a->hook_ctx = ctx;
	mt_agg_hook_next(a);
}

void mt_agg_hook_next(struct mt_agg *a)
{
	a->hook_due = 1;
	a->plain = 0;
}

/* What the bodies leave out with fast set cannot happen (plain: and no
 * hook is due). */
static inline int no_call(const struct mt_agg *a, const struct mt_event *ev)
{
	return a->plain && ev->stack < a->cur.n;
}

static int agg_on_alloc(void *ctx, const struct mt_event *ev)
{
	struct mt_agg *a = ctx;

	if (__builtin_expect(no_call(a, ev), 1))
		return body(a, ev, 0, 1);
	return event_slow(a, ev, 0);
}

static int agg_on_free(void *ctx, const struct mt_event *ev)
{
	struct mt_agg *a = ctx;

	if (__builtin_expect(no_call(a, ev), 1))
		return body(a, ev, 1, 1);
	return event_slow(a, ev, 1);
}

/*
 * The run's events from i on, while no_call holds for them: the bodies'
 * fast path with the figures in registers, stored once at the end (a
 * call per event, its struct mt_event and the loads and stores of the
 * figures around it were a third of the viewer's pass). Returns the
 * index of the first event it left (n: none); *seq moves past those it
 * took.
 */
static __attribute__((noinline)) size_t run_plain(struct mt_agg *a, const struct mt_run *run,
						  size_t i, uint64_t *seq)
{
	const struct mt_run_event *e = run->ev;
	struct mt_cost *cur = a->cur.c, *peak = a->peak;
	struct agg_aux *aux = a->aux;
	uint32_t *dirty = a->dirty;
	size_t n = run->n, nst = a->cur.n, nd = a->ndirty, first = i;
	uint32_t epoch = a->peak_epoch, mark = a->mark_no;
	int64_t bytes = a->live_bytes, blocks = a->live_blocks;
	int64_t lo = a->win_lo, hi = a->win_hi, top = a->st.peak_bytes;
	uint64_t allocs = a->st.allocations, frees = a->st.frees;
	uint64_t allocated = a->st.bytes_allocated, s = *seq, last = 0;

	for (; i < n; i++) {
		uint32_t st = e[i].stack;
		int64_t size = (int64_t)e[i].size;
		unsigned type = e[i].type;
		struct agg_aux *x;
		struct mt_cost *c;

		if (st >= nst)
			break;
		x = &aux[st];
		c = &cur[st];
		if (x->peak_epoch != epoch) {
			peak[st] = *c;
			x->peak_epoch = epoch;
		}
		if (x->mark != mark) {
			dirty[nd++] = st;
			x->mark = mark;
		}
		last = s;
		s += type != MT_RUN_REALLOC_FREE;
		if (type == MT_RUN_FREE || type == MT_RUN_REALLOC_FREE) {
			c->bytes -= size;
			c->blocks--;
			bytes -= size;
			blocks--;
			frees++;
			if (bytes < lo)
				lo = bytes;
			continue;
		}
		c->bytes += size;
		c->blocks++;
		c->allocs++;
		bytes += size;
		blocks++;
		allocs++;
		allocated += (uint64_t)size;
		if (bytes > hi)
			hi = bytes;
		if (bytes > top) {
			/* the state now is the peak's */
			top = bytes;
			a->st.peak_blocks = blocks;
			a->st.peak_seq = last;
			a->st.peak_time_ns = run->time_ns;
			a->st.peak_at_start = 0;
			epoch++;
		}
	}
	a->peak_epoch = epoch;
	a->ndirty = nd;
	a->live_bytes = bytes;
	a->live_blocks = blocks;
	a->win_lo = lo;
	a->win_hi = hi;
	a->st.peak_bytes = top;
	a->st.allocations = allocs;
	a->st.frees = frees;
	a->st.bytes_allocated = allocated;
	if (i > first) {
		a->cur.events = last + 1;
		a->cur.time_ns = run->time_ns;
	}
	*seq = s;
	return i;
}

/*
 * A run of events (replay.h on_run): what no_call lets through in
 * run_plain, the rest one by one as the callbacks take them.
 */
static int agg_on_run(void *ctx, const struct mt_run *run, size_t *done)
{
	struct mt_agg *a = ctx;
	uint64_t seq = run->seq;
	size_t i = 0;

	while (i < run->n) {
		const struct mt_run_event *e;
		struct mt_event ev;
		int free;

		if (a->plain) {
			i = run_plain(a, run, i, &seq);
			if (i == run->n)
				break;
		}
		e = &run->ev[i];
		free = e->type == MT_RUN_FREE || e->type == MT_RUN_REALLOC_FREE;
		ev = (struct mt_event){
			.seq = seq, .time_ns = run->time_ns, .addr = e->addr,
			.size = e->size, .stack = e->stack, .thread = run->thread,
			.alloc_thread = run->thread,
			.realloc = e->type == MT_RUN_REALLOC_FREE || e->type == MT_RUN_REALLOC_ALLOC,
			.count = 1, .asked = e->size,
		};
		if ((free ? agg_on_free : agg_on_alloc)(a, &ev)) {
			*done = i;
			return 1;
		}
		seq += e->type != MT_RUN_REALLOC_FREE;
		i++;
	}
	*done = run->n;
	return 0;
}

/*
 * A bounded log's start (replay.h on_base): the run's figures go on from
 * those the log kept, and each stack's live blocks are its own from here.
 * When the run's peak lies before what the log kept, its figures are
 * BASE's and its profile the one at this start, the nearest the log has.
 */
static void count_base(struct mt_agg *a, const struct mt_base *b)
{
	for (size_t i = 0; i < b->n; i++) {
		a->live_bytes += (int64_t)b->stacks[i].bytes;
		a->live_blocks += (int64_t)b->stacks[i].blocks;
	}
	a->st.allocations = b->tot.allocations;
	a->st.frees = b->tot.frees;
	a->st.bytes_allocated = b->tot.bytes_allocated;
	a->st.events = b->seq;
	a->st.end_time_ns = b->time_ns;
	a->cur.events = b->seq;
	a->cur.time_ns = b->time_ns;
	if (b->tot.peak_bytes || a->live_bytes) {
		a->st.peak_bytes = (int64_t)b->tot.peak_bytes;
		a->st.peak_blocks = (int64_t)b->tot.peak_blocks;
		a->st.peak_time_ns = b->tot.peak_time_ns;
		a->st.peak_seq = b->seq ? b->seq - 1 : 0;
		a->st.peak_at_start = 0;
	}
}

static void agg_on_base(void *ctx, const struct mt_base *b)
{
	struct mt_agg *a = ctx;

	for (size_t i = 0; i < b->n; i++) {
		struct mt_cost *c = stack_cost(a, b->stacks[i].stack, 0);

		if (!c)
			return;
		c->bytes += (int64_t)b->stacks[i].bytes;
		c->blocks += (int64_t)b->stacks[i].blocks;
	}
	count_base(a, b);
	a->peak_epoch++;      /* the state now is the peak's, until a higher one */
}

static void figures_on_base(void *ctx, const struct mt_base *b)
{
	count_base(ctx, b);
}

/* Figures only: the counts and nothing per stack (no requests either). */
static int figures_on_alloc(void *ctx, const struct mt_event *ev)
{
	struct mt_agg *a = ctx;

	(void)count_alloc(a, ev);
	a->cur.events = ev->seq + 1;
	a->cur.time_ns = ev->time_ns;
	return 0;
}

static int figures_on_free(void *ctx, const struct mt_event *ev)
{
	struct mt_agg *a = ctx;

	count_free(a, ev);
	a->cur.events = ev->seq + 1;
	a->cur.time_ns = ev->time_ns;
	return 0;
}

static int agg_on_snapshot(void *ctx, const struct mt_snapshot *s)
{
	struct mt_agg *a = ctx;
	struct mt_agg_snapshot *sn;
	char *label;

	if (before_event(a, s->seq, s->time_ns))
		return 1;
	if (a->st.nsnapshots == a->snaps_cap) {
		size_t cap = a->snaps_cap ? 2 * a->snaps_cap : 16;
		struct mt_agg_snapshot *p = realloc(a->snaps, cap * sizeof(*p));

		if (!p) {
			a->err = MT_E_NOMEM;
			return 0;
		}
		a->snaps = p;
		a->snaps_cap = cap;
		a->st.snapshots = p;
	}
	label = strdup(s->label ? s->label : "");
	if (!label) {
		a->err = MT_E_NOMEM;
		return 0;
	}
	if (a->journal) {
		size_t *m = realloc(a->snap_mark, a->snaps_cap * sizeof(*m));

		if (!m || mt_agg_mark(a) < 0) {
			free(label);
			a->snap_mark = m ? m : a->snap_mark;
			a->err = MT_E_NOMEM;
			return 0;
		}
		a->snap_mark = m;
		a->snap_mark[a->st.nsnapshots] = a->nmarks - 1;
	}
	sn = &a->snaps[a->st.nsnapshots++];
	sn->index = s->index;
	sn->label = label;
	sn->seq = s->seq;
	sn->time_ns = s->time_ns;
	sn->live_bytes = a->live_bytes;
	sn->live_blocks = a->live_blocks;
	after_event(a, s->seq, s->time_ns);
	return 0;
}

static void agg_on_end(void *ctx, const struct mt_end *e)
{
	struct mt_agg *a = ctx;

	/* the stats' events and end, which the callbacks keep in cur only */
	a->st.events = a->cur.events;
	a->st.end_time_ns = a->cur.time_ns;
	if (e->time_ns > a->st.end_time_ns)
		a->st.end_time_ns = e->time_ns;
	/* Points past the end (and MT_AT_END) get the final state. */
	for (size_t i = 0; i < a->nreq; i++)
		if (!a->req[i].done)
			capture(a, &a->req[i]);
	update_next(a);
	a->st.end_bytes = a->live_bytes;
	a->st.end_blocks = a->live_blocks;
}

static void agg_on_rss(void *ctx, uint64_t time_ns, uint64_t bytes)
{
	struct mt_agg *a = ctx;

	if (!a->st.rss_samples++ || bytes > a->st.peak_rss_bytes) {
		a->st.peak_rss_bytes = bytes;
		a->st.peak_rss_time_ns = time_ns;
	}
}

static void agg_on_progress(void *ctx, uint64_t done, uint64_t total)
{
	struct mt_agg *a = ctx;

	if (a->progress.fn)
		a->progress.fn(a->progress.ctx, done, total);
}

void mt_agg_ops(struct mt_replay_ops *ops)
{
	memset(ops, 0, sizeof(*ops));
	ops->on_base = agg_on_base;
	ops->on_alloc = agg_on_alloc;
	ops->on_free = agg_on_free;
	ops->on_run = agg_on_run;
	ops->on_snapshot = agg_on_snapshot;
	ops->on_end = agg_on_end;
	ops->on_rss = agg_on_rss;
	ops->on_progress = agg_on_progress;
}

/* The callbacks of a figures-only replay (mt_agg_figures_only). */
static void figures_ops(struct mt_replay_ops *ops)
{
	mt_agg_ops(ops);
	ops->on_base = figures_on_base;
	ops->on_alloc = figures_on_alloc;
	ops->on_free = figures_on_free;
	ops->on_run = NULL;
}

struct mt_profile *mt_agg_take(struct mt_agg *a, size_t i)
{
	struct mt_profile *p;

	if (i >= a->nreq)
		return NULL;
	p = a->req[i].p;
	a->req[i].p = NULL;
	return p;
}

const struct mt_agg_stats *mt_agg_stats(const struct mt_agg *a)
{
	return &a->st;
}

struct mt_profile *mt_agg_end_profile(const struct mt_agg *a)
{
	return mt_profile_copy(&a->cur);
}

struct mt_profile *mt_agg_temporary_profile(const struct mt_agg *a)
{
	struct mt_profile *p = mt_profile_copy(&a->temp);

	if (!p)
		return NULL;
	if (profile_grow(p, a->cur.n) < 0) {
		mt_profile_free(p);
		return NULL;
	}
	for (size_t i = 0; i < a->cur.n; i++)
		p->c[i].allocs = a->cur.c[i].allocs;
	p->events = a->cur.events;
	p->time_ns = a->cur.time_ns;
	return p;
}

int mt_agg_error(const struct mt_agg *a)
{
	return a->err;
}

int mt_agg_run(struct mt_agg *a, struct mt_replay *r, const struct mt_at *at, size_t n,
	       struct mt_profile **outs, const struct mt_progress_cb *progress)
{
	static const struct mt_progress_cb none;
	struct mt_replay_ops ops;
	int rc;

	for (size_t i = 0; i < n; i++)
		outs[i] = NULL;
	rc = mt_agg_request(a, at, n, 0);
	if (rc < 0)
		return rc;
	a->progress = progress ? *progress : none;
	if (a->figures)
		figures_ops(&ops);
	else
		mt_agg_ops(&ops);
	rc = mt_replay_run(r, &ops, a);
	a->progress = none;
	if (rc < 0)
		return rc;
	if (a->err < 0)
		return a->err;
	for (size_t i = 0; i < n; i++)
		outs[i] = mt_agg_take(a, i);
	return 0;
}

/* ---- the peak and the journal --------------------------------------------- */

struct mt_profile *mt_agg_peak_profile(const struct mt_agg *a)
{
	struct mt_profile *p = mt_profile_copy(&a->cur);

	if (!p)
		return NULL;
	if (a->st.peak_at_start) {
		if (p->n)
			memset(p->c, 0, p->n * sizeof(*p->c));
		p->events = 0;
		p->time_ns = 0;
		return p;
	}
	for (size_t i = 0; i < p->n; i++)
		if (a->aux[i].peak_epoch == a->peak_epoch)
			p->c[i] = a->peak[i];
	p->events = a->st.peak_seq + 1;
	p->time_ns = a->st.peak_time_ns;
	return p;
}

void mt_agg_journal(struct mt_agg *a, int on)
{
	a->journal = on;
	if (!on)
		a->mark_no = 0;
	else if (!a->mark_no)
		a->mark_no = 1;
}

void mt_agg_figures_only(struct mt_agg *a, int on)
{
	a->figures = on;
}

void mt_agg_size_buckets(struct mt_agg *a, int on)
{
	mt_sizes_buckets(a->sizes, on);
}

void mt_agg_skip(struct mt_agg *a, unsigned what)
{
	a->skip = what;
	a->st.sizes = what & MT_TALLY_NO_CALLS ? NULL : a->sizes;
	update_next(a);
}

int mt_agg_mark(struct mt_agg *a)
{
	struct mt_agg_mark *m;

	if (a->nmarks == a->cap_marks) {
		size_t cap = a->cap_marks ? 2 * a->cap_marks : 1024;
		m = realloc(a->marks, cap * sizeof(*m));
		if (!m)
			return a->err = MT_E_NOMEM;
		a->marks = m;
		a->cap_marks = cap;
	}
	if (a->nent + a->ndirty > a->cap_ent) {
		size_t cap = a->cap_ent ? a->cap_ent : 1024;
		struct agg_entry *e;

		while (cap < a->nent + a->ndirty)
			cap *= 2;
		e = realloc(a->ent, cap * sizeof(*e));
		if (!e)
			return a->err = MT_E_NOMEM;
		a->ent = e;
		a->cap_ent = cap;
	}
	for (size_t i = 0; i < a->ndirty; i++) {
		a->ent[a->nent].stack = a->dirty[i];
		a->ent[a->nent++].c = a->cur.c[a->dirty[i]];
	}
	a->ndirty = 0;
	a->mark_no++;
	m = &a->marks[a->nmarks++];
	m->events = a->cur.events;
	m->time_ns = a->cur.time_ns;
	m->end = a->nent;
	m->live_bytes = a->live_bytes;
	m->live_blocks = a->live_blocks;
	return 0;
}

size_t mt_agg_nmarks(const struct mt_agg *a)
{
	return a->nmarks;
}

const struct mt_agg_mark *mt_agg_get_mark(const struct mt_agg *a, size_t i)
{
	return i < a->nmarks ? &a->marks[i] : NULL;
}

long mt_agg_snapshot_mark(const struct mt_agg *a, size_t i)
{
	return a->journal && i < a->st.nsnapshots ? (long)a->snap_mark[i] : -1;
}

int mt_agg_apply_marks(const struct mt_agg *a, struct mt_profile *p, size_t from, size_t to)
{
	size_t e0 = from ? a->marks[from - 1].end : 0;

	if (to > a->nmarks || from > to)
		return MT_E_ARG;
	if (to == from)
		return 0;
	for (size_t e = e0; e < a->marks[to - 1].end; e++) {
		const struct agg_entry *x = &a->ent[e];

		if (x->stack >= p->n && profile_grow(p, (size_t)x->stack + 1) < 0)
			return MT_E_NOMEM;
		p->c[x->stack] = x->c;
	}
	p->events = a->marks[to - 1].events;
	p->time_ns = a->marks[to - 1].time_ns;
	return 0;
}

int mt_agg_merge_marks(struct mt_agg *a, const unsigned char *keep, size_t *newidx)
{
	size_t n = a->nmarks, w = 0, kept = 0, from = 0;
	uint32_t *stamp;
	size_t *pos;

	if (!n)
		return 0;
	/* the group of each kept mark, stamped per stack: its entries so far */
	stamp = calloc(a->cur.n ? a->cur.n : 1, sizeof(*stamp));
	pos = malloc((a->cur.n ? a->cur.n : 1) * sizeof(*pos));
	if (!stamp || !pos) {
		free(stamp);
		free(pos);
		return a->err = MT_E_NOMEM;
	}
	for (size_t i = 0; i < a->st.nsnapshots; i++)
		if (a->snap_mark[i] < n && !keep[a->snap_mark[i]])
			goto bad;
	if (!keep[n - 1])
		goto bad;
	for (size_t i = 0; i < n; i++) {
		if (!keep[i]) {
			newidx[i] = SIZE_MAX;
			continue;
		}
		/*
		 * Frames from..i become one: each stack once, with its latest
		 * cost. Reading forward, the write position never passes the
		 * read position, so this works in place.
		 */
		size_t e0 = from ? a->marks[from - 1].end : 0, e1 = a->marks[i].end;

		for (size_t e = e0; e < e1; e++) {
			struct agg_entry x = a->ent[e];

			if (stamp[x.stack] == kept + 1) {
				a->ent[pos[x.stack]].c = x.c;
			} else {
				stamp[x.stack] = (uint32_t)(kept + 1);
				pos[x.stack] = w;
				a->ent[w++] = x;
			}
		}
		a->marks[kept] = a->marks[i];
		a->marks[kept].end = w;
		newidx[i] = kept++;
		from = i + 1;
	}
	a->nent = w;
	a->nmarks = kept;
	for (size_t i = 0; i < a->st.nsnapshots; i++)
		if (a->snap_mark[i] < n)
			a->snap_mark[i] = newidx[a->snap_mark[i]];
	free(stamp);
	free(pos);
	return 0;
bad:
	free(stamp);
	free(pos);
	return MT_E_ARG;
}

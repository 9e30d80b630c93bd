/*
 * view_data.c - the log behind `memtrail view`: the load replay and profiles
 * at points on demand (see view_data.h). No curses, no output.
 *
 * The load replay feeds the series and one aggregator together. Later
 * replays go through a second aggregator that stops as soon as its points
 * are captured, so a point early in a long run is cheap. Trees are built
 * from our own copy of the stacks, because the replay only keeps the stacks
 * of its last (possibly partial) run.
 */
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "replay.h"
#include "symbols.h"
#include "view_data.h"

#define NCACHE 8
#define PREFETCH_MAX_BYTES (64u << 20)  /* profiles kept for the columns */

struct cached {
	struct mt_at at;
	struct mt_profile *p;
	uint64_t used;            /* LRU clock */
};

struct mt_view_data {
	struct mt_replay *r;
	struct mt_series *series;
	struct mt_agg *load;      /* the full run: stats, end and temporary profiles */
	struct mt_agg *agg;       /* on-demand points */
	struct mt_end end;
	struct mt_profile *end_p, *temp_p;

	struct mt_stack *stacks;  /* copies, ids 0 .. nstacks-1 */
	uint64_t *ips;
	size_t nstacks;
	struct mt_tree_std std;   /* its symbolizer; its source is not used */
	int std_ok;
	struct mt_tree_source src;

	struct cached cache[NCACHE];
	uint64_t clock;
	struct cached *pre;       /* prefetched points (the columns' ends) */
	size_t npre;

	mt_view_progress_fn progress;
	void *progress_ctx;
};

/* ---- the stack source ------------------------------------------------------ */

static const struct mt_stack *src_stack(void *ctx, uint32_t id)
{
	const struct mt_view_data *d = ctx;

	return id < d->nstacks ? &d->stacks[id] : NULL;
}

static int src_resolve(void *ctx, uint64_t ip, const struct mt_frame **frames, size_t *n)
{
	const struct mt_view_data *d = ctx;

	return mt_symbols_resolve(d->std.symbols, ip, frames, n);
}

static int copy_stacks(struct mt_view_data *d)
{
	size_t n = mt_replay_nstacks(d->r), nips = 0, k = 0;

	for (size_t i = 0; i < n; i++)
		nips += mt_replay_stack(d->r, (uint32_t)i)->depth;
	d->stacks = calloc(n ? n : 1, sizeof(*d->stacks));
	d->ips = calloc(nips ? nips : 1, sizeof(*d->ips));
	if (!d->stacks || !d->ips)
		return MT_E_NOMEM;
	for (size_t i = 0; i < n; i++) {
		const struct mt_stack *s = mt_replay_stack(d->r, (uint32_t)i);

		d->stacks[i] = *s;
		memcpy(d->ips + k, s->ips, s->depth * sizeof(*d->ips));
		d->stacks[i].ips = d->ips + k;
		k += s->depth;
	}
	d->nstacks = n;
	return 0;
}

int mt_view_data_open(const char *path, mt_view_progress_fn progress, void *progress_ctx,
		      struct mt_view_data **out, uint64_t *err_offset)
{
	struct mt_view_data *d = calloc(1, sizeof(*d));
	struct mt_replay_ops ops;
	int rc;

	*out = NULL;
	if (err_offset)
		*err_offset = 0;
	if (!d)
		return MT_E_NOMEM;
	d->progress = progress;
	d->progress_ctx = progress_ctx;
	rc = mt_replay_open(path, &d->r, err_offset);
	if (rc < 0)
		goto fail;
	rc = MT_E_NOMEM;
	d->series = mt_series_new();
	d->load = mt_agg_new();
	d->agg = mt_agg_new();
	if (!d->series || !d->load || !d->agg)
		goto fail;
	rc = mt_agg_request(d->load, NULL, 0, 0);
	if (rc < 0)
		goto fail;
	/* the load replay: series and aggregator side by side */
	mt_agg_ops(&ops);
	rc = mt_series_replay_with(d->series, d->r, &ops, d->load, d->progress, d->progress_ctx);
	if (rc < 0)
		goto fail;
	d->end = *mt_replay_end(d->r);
	d->end.stop_reason = NULL;   /* owned by the replay; not kept */
	rc = mt_agg_error(d->load);
	if (rc == 0)
		rc = mt_series_error(d->series);
	if (rc < 0)
		goto fail;
	/* A log unreadable from its first chunk is an error, not an empty run. */
	if (d->end.error && !d->end.events) {
		rc = d->end.error;
		if (err_offset)
			*err_offset = d->end.error_offset;
		goto fail;
	}
	rc = MT_E_NOMEM;
	d->end_p = mt_agg_end_profile(d->load);
	d->temp_p = mt_agg_temporary_profile(d->load);
	if (!d->end_p || !d->temp_p)
		goto fail;
	rc = copy_stacks(d);
	if (rc < 0)
		goto fail;
	rc = mt_tree_std_init(&d->std, d->r);
	if (rc < 0)
		goto fail;
	d->std_ok = 1;
	d->src.stack = src_stack;
	d->src.resolve = src_resolve;
	d->src.ctx = d;
	d->progress = NULL;
	*out = d;
	return 0;
fail:
	mt_view_data_free(d);
	return rc;
}

static void drop_prefetch(struct mt_view_data *d)
{
	for (size_t i = 0; i < d->npre; i++)
		mt_profile_free(d->pre[i].p);
	free(d->pre);
	d->pre = NULL;
	d->npre = 0;
}

void mt_view_data_free(struct mt_view_data *d)
{
	if (!d)
		return;
	for (size_t i = 0; i < NCACHE; i++)
		mt_profile_free(d->cache[i].p);
	drop_prefetch(d);
	if (d->std_ok)
		mt_tree_std_fini(&d->std);
	free(d->stacks);
	free(d->ips);
	mt_profile_free(d->end_p);
	mt_profile_free(d->temp_p);
	mt_agg_free(d->agg);
	mt_agg_free(d->load);
	mt_series_free(d->series);
	mt_replay_free(d->r);
	free(d);
}

const char *mt_view_data_command(const struct mt_view_data *d)
{
	const struct mt_header *h = mt_replay_header(d->r);

	return h && h->cmdline ? h->cmdline : "";
}

const struct mt_series *mt_view_data_series(const struct mt_view_data *d)
{
	return d->series;
}

const struct mt_agg_stats *mt_view_data_stats(const struct mt_view_data *d)
{
	return mt_agg_stats(d->load);
}

const struct mt_end *mt_view_data_end(const struct mt_view_data *d)
{
	return &d->end;
}

size_t mt_view_data_warnings(const struct mt_view_data *d, const char *const **lines)
{
	if (!d->std_ok) {
		*lines = NULL;
		return 0;
	}
	return mt_symbols_warnings(d->std.symbols, lines);
}

/* ---- profiles at points ----------------------------------------------------- */

static int at_same(const struct mt_at *a, const struct mt_at *b)
{
	if (a->kind != b->kind)
		return 0;
	return a->kind == MT_AT_START || a->kind == MT_AT_END || a->value == b->value;
}

static struct cached *cache_find(struct mt_view_data *d, const struct mt_at *at)
{
	for (size_t i = 0; i < d->npre; i++)
		if (d->pre[i].p && at_same(&d->pre[i].at, at))
			return &d->pre[i];
	for (size_t i = 0; i < NCACHE; i++) {
		if (d->cache[i].p && at_same(&d->cache[i].at, at)) {
			d->cache[i].used = ++d->clock;
			return &d->cache[i];
		}
	}
	return NULL;
}

/* Stores p for at in the least recently used slot other than keep. */
static void cache_put(struct mt_view_data *d, const struct mt_at *at, struct mt_profile *p,
		      const struct cached *keep)
{
	struct cached *v = NULL;

	for (size_t i = 0; i < NCACHE; i++) {
		struct cached *c = &d->cache[i];

		if (c == keep)
			continue;
		if (!v || !c->p || (v->p && c->used < v->used))
			v = c;
		if (!c->p)
			break;
	}
	mt_profile_free(v->p);
	v->at = *at;
	v->p = p;
	v->used = ++d->clock;
}

/*
 * Makes sure the profiles at the n (<= 2) points are cached: one replay
 * computes every missing one. Returns 0 or a negative MT_E_*.
 */
static int fetch(struct mt_view_data *d, const struct mt_at *at, size_t n)
{
	struct mt_at want[2];
	const struct cached *keep = NULL;
	struct mt_replay_ops ops;
	size_t k = 0;
	int rc;

	for (size_t i = 0; i < n; i++) {
		const struct cached *c;

		/* the end comes from the load replay (d->end_p) */
		if (at[i].kind == MT_AT_END)
			continue;
		c = cache_find(d, &at[i]);
		if (c)
			keep = c;
		else if (!(k == 1 && at_same(&want[0], &at[i])))
			want[k++] = at[i];
	}
	if (!k)
		return 0;
	rc = mt_agg_request(d->agg, want, k, 1);
	if (rc < 0)
		return rc;
	mt_agg_ops(&ops);
	rc = mt_replay_run(d->r, &ops, d->agg);
	if (rc < 0)
		return rc;
	if (mt_agg_error(d->agg) < 0)
		return mt_agg_error(d->agg);
	for (size_t i = 0; i < k; i++) {
		struct mt_profile *p = mt_agg_take(d->agg, i);

		if (!p)
			return MT_E_NOMEM;
		cache_put(d, &want[i], p, keep);
		keep = cache_find(d, &want[i]);
	}
	return 0;
}

const struct mt_profile *mt_view_data_profile(struct mt_view_data *d, const struct mt_at *at,
					      int *err)
{
	const struct cached *c;
	int rc;

	if (at->kind == MT_AT_END) {
		*err = 0;
		return d->end_p;
	}
	rc = fetch(d, at, 1);
	c = rc < 0 ? NULL : cache_find(d, at);
	*err = rc < 0 ? rc : c ? 0 : MT_E_NOMEM;
	return c ? c->p : NULL;
}

int mt_view_data_tree(struct mt_view_data *d, enum mt_view_mode mode,
		      const struct mt_at *at, const struct mt_at *mark,
		      int inverted, enum mt_tree_key key,
		      struct mt_tree **out, struct mt_cost *total)
{
	struct mt_tree_opts o = { .inverted = inverted };
	struct mt_profile *own = NULL;
	const struct mt_profile *p = NULL;
	int rc = 0;

	*out = NULL;
	switch (mode) {
	case MT_VIEW_LEAKS:
		p = d->end_p;
		break;
	case MT_VIEW_TEMPORARY:
		p = d->temp_p;
		break;
	case MT_VIEW_DIFF: {
		struct mt_at both[2] = { *mark, *at };
		const struct mt_profile *a, *b;

		rc = fetch(d, both, 2);
		if (rc < 0)
			return rc;
		a = mt_view_data_profile(d, mark, &rc);
		if (!a)
			return rc;
		/* a is still cached: fetch() above brought both in */
		b = mt_view_data_profile(d, at, &rc);
		if (!b)
			return rc;
		own = mt_profile_diff(a, b);
		if (!own)
			return MT_E_NOMEM;
		p = own;
		break;
	}
	default:
		p = mt_view_data_profile(d, at, &rc);
		if (!p)
			return rc;
		break;
	}
	rc = mt_tree_build(p, &d->src, &o, out);
	if (rc == 0) {
		if (key != MT_TREE_BY_BYTES)
			mt_tree_sort(*out, key);
		*total = mt_profile_total(p);
	}
	mt_profile_free(own);
	return rc;
}

int mt_view_data_prefetch(struct mt_view_data *d, const struct mt_at *at, size_t n)
{
	struct mt_replay_ops ops;
	int rc;

	drop_prefetch(d);
	if (!n || n * (d->nstacks + 1) * sizeof(struct mt_cost) > PREFETCH_MAX_BYTES)
		return 0;
	d->pre = calloc(n, sizeof(*d->pre));
	if (!d->pre)
		return MT_E_NOMEM;
	rc = mt_agg_request(d->agg, at, n, 1);
	if (rc < 0)
		goto fail;
	mt_agg_ops(&ops);
	rc = mt_replay_run(d->r, &ops, d->agg);
	if (rc < 0)
		goto fail;
	rc = mt_agg_error(d->agg);
	if (rc < 0)
		goto fail;
	d->npre = n;
	for (size_t i = 0; i < n; i++) {
		d->pre[i].at = at[i];
		d->pre[i].p = mt_agg_take(d->agg, i);
		if (!d->pre[i].p) {
			rc = MT_E_NOMEM;
			goto fail;
		}
	}
	return 0;
fail:
	drop_prefetch(d);
	return rc;
}

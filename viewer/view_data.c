/*
 * view_data.c - the log behind `memtrail view`: a session (lib/session.h)
 * that read the log once with time marks, and profiles at the viewer's
 * points from it (see view_data.h). No curses, no output.
 *
 * Every point the viewer names (the peak, the end, a snapshot, the start, a
 * column's end state on a bucket boundary of the series) is in the
 * session's index: no replay. A small cache makes going back to a point
 * instant.
 */
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "session.h"
#include "view_data.h"

#define NCACHE 8

struct cached {
	struct mt_at at;
	struct mt_profile *p;
	uint64_t used;            /* LRU clock */
};

struct mt_view_data {
	struct mt_session *ses;
	struct mt_profile *end_p, *temp_p, *calls_p;
	struct mt_profile *kind_p; /* the leak kind's blocks (leak_kind >= 0) */
	int leak_kind;            /* -1: every block live at the end */
	const struct mt_tree_source *src;

	struct cached cache[NCACHE];
	uint64_t clock;
	long thread;              /* the thread index the trees are of; -1: all */
	int follow;               /* the log is followed (mt_view_data_poll) */
	int gone;                 /* its writer is no longer running */
};

/*
 * The profiles at the end, made again (a followed run moves it on, a
 * thread restriction changes them): every block live then, and the leak
 * kind's if one is shown; the temporary and calls profiles go, to be made
 * when their view is shown (see mt_view_data_open).
 */
static int run_profiles(struct mt_view_data *d)
{
	static const struct mt_at end = { MT_AT_END, 0 };
	int rc;

	mt_profile_free(d->end_p);
	mt_profile_free(d->temp_p);
	mt_profile_free(d->calls_p);
	d->end_p = d->temp_p = d->calls_p = NULL;
	rc = mt_session_profile(d->ses, &end, &d->end_p);
	if (rc == 0 && d->leak_kind >= 0) {
		int kind = d->leak_kind;

		d->leak_kind = -1;
		rc = mt_view_data_leak_kind(d, kind);
	}
	return rc;
}

static void cache_clear(struct mt_view_data *d)
{
	for (size_t k = 0; k < NCACHE; k++) {
		mt_profile_free(d->cache[k].p);
		d->cache[k].p = NULL;
	}
}

int mt_view_data_open(const char *path, int follow, const struct mt_progress_cb *progress,
		      struct mt_view_data **out, uint64_t *err_offset)
{
	struct mt_view_data *d = calloc(1, sizeof(*d));
	/* Per-thread figures are never shown here; temporaries and calls
	 * only when their view is asked for (each then costs a replay):
	 * the first screen comes sooner without them. */
	struct mt_session_opts so = {
		.time_marks = 1,
		.skip = MT_TALLY_NO_THREADS | MT_TALLY_NO_TEMPORARY | MT_TALLY_NO_CALLS,
		.follow = follow,
		.symbolize = 1,
	};
	int rc;

	*out = NULL;
	if (err_offset)
		*err_offset = 0;
	if (!d)
		return MT_E_NOMEM;
	if (progress)
		so.progress = *progress;
	/* The logs every reader accepts (lib/session.c): one cut inside its
	 * first chunk opens as an empty run, with report's warning. */
	d->thread = -1;
	d->follow = follow;
	d->leak_kind = -1;
	rc = mt_session_open(path, &so, &d->ses, err_offset);
	if (rc < 0)
		goto fail;
	rc = run_profiles(d);
	if (rc < 0)
		goto fail;
	d->src = mt_session_source(d->ses, &rc);
	if (!d->src)
		goto fail;
	*out = d;
	return 0;
fail:
	mt_view_data_free(d);
	return rc;
}

void mt_view_data_free(struct mt_view_data *d)
{
	if (!d)
		return;
	for (size_t i = 0; i < NCACHE; i++)
		mt_profile_free(d->cache[i].p);
	mt_profile_free(d->end_p);
	mt_profile_free(d->temp_p);
	mt_profile_free(d->calls_p);
	mt_profile_free(d->kind_p);
	mt_session_free(d->ses);
	free(d);
}

int mt_view_data_next_thread(struct mt_view_data *d, char *what, size_t size)
{
	size_t n = mt_session_nthreads(d->ses);
	struct mt_session_thread t;
	long i = d->thread + 1;
	int rc;

	while ((size_t)i < n && mt_session_thread(d->ses, (size_t)i, &t) < 0)
		i++;
	if ((size_t)i >= n)
		i = -1;
	rc = mt_session_only_thread(d->ses, i < 0 ? -1 : (int64_t)t.tid);
	if (rc < 0)
		return rc;
	d->thread = i;
	cache_clear(d);
	rc = run_profiles(d);
	if (i < 0)
		snprintf(what, size, "every thread");
	else
		snprintf(what, size, "thread %" PRIu32 "%s%s%s", t.tid, t.name ? " (" : "",
			 t.name ? t.name : "", t.name ? ")" : "");
	return rc;
}

int mt_view_data_poll(struct mt_view_data *d)
{
	const struct mt_end *e = mt_session_end(d->ses);
	uint64_t good = e->good_bytes;
	int clean = e->clean, rc;
	int64_t n;

	if (!d->follow)
		return 0;
	n = mt_session_poll(d->ses);
	if (n < 0)
		return (int)n;
	if (!n && e->clean == clean && e->good_bytes == good) {
		/* a writer killed outright (SIGKILL) never writes END */
		pid_t pid = (pid_t)mt_session_header(d->ses)->pid;
		int gone = pid > 0 && kill(pid, 0) < 0 && errno == ESRCH;

		if (gone == d->gone)
			return 0;
		d->gone = gone;
		return 1;
	}
	d->gone = 0;
	/* points named by kind (the peak, the end) may have moved on */
	cache_clear(d);
	rc = run_profiles(d);
	return rc < 0 ? rc : 1;
}

int mt_view_data_following(const struct mt_view_data *d)
{
	return d->follow && !mt_session_end(d->ses)->clean;
}

int mt_view_data_writer_gone(const struct mt_view_data *d)
{
	return mt_view_data_following(d) && d->gone;
}

const char *mt_view_data_command(const struct mt_view_data *d)
{
	const struct mt_header *h = mt_session_header(d->ses);

	return h && h->cmdline ? h->cmdline : "";
}

const struct mt_session *mt_view_data_session(const struct mt_view_data *d)
{
	return d->ses;
}

const struct mt_agg_stats *mt_view_data_stats(const struct mt_view_data *d)
{
	return mt_session_stats(d->ses);
}

const struct mt_end *mt_view_data_end(const struct mt_view_data *d)
{
	return mt_session_end(d->ses);
}

size_t mt_view_data_warnings(const struct mt_view_data *d, const char *const **lines)
{
	return mt_session_warnings(d->ses, lines);
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
 * Makes sure the profiles at the n (<= 2) points are cached. Returns 0 or
 * a negative MT_E_*.
 */
static int fetch(struct mt_view_data *d, const struct mt_at *at, size_t n)
{
	struct mt_at want[2];
	struct mt_profile *got[2];
	const struct cached *keep = NULL;
	size_t k = 0;
	int rc;

	for (size_t i = 0; i < n; i++) {
		const struct cached *c;

		/* the end is kept apart (d->end_p) */
		if (at[i].kind == MT_AT_END)
			continue;
		c = cache_find(d, &at[i]);
		if (c)
			keep = c;
		else if (!(k == 1 && at_same(&want[0], &at[i])))
			want[k++] = at[i];
	}
	for (size_t i = 0; i < k; i++) {
		rc = mt_session_profile(d->ses, &want[i], &got[i]);
		if (rc < 0) {
			if (i)
				mt_profile_free(got[0]);
			return rc;
		}
	}
	for (size_t i = 0; i < k; i++) {
		cache_put(d, &want[i], got[i], keep);
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
		      int inverted, int sites, int by_tag, enum mt_tree_key key,
		      struct mt_tree **out, struct mt_cost *total)
{
	struct mt_tree_opts o = { .inverted = inverted, .sites = sites && !inverted,
				  .by_tag = by_tag };
	struct mt_profile *own = NULL;
	const struct mt_profile *p = NULL;
	int rc = 0;

	*out = NULL;
	switch (mode) {
	case MT_VIEW_LEAKS:
		p = d->leak_kind >= 0 ? d->kind_p : d->end_p;
		break;
	case MT_VIEW_TEMPORARY:
		/* its own replay, the first time it is shown (see open) */
		if (!d->temp_p && (rc = mt_session_temporary(d->ses, &d->temp_p)) < 0)
			return rc;
		p = d->temp_p;
		break;
	case MT_VIEW_CALLS:
		if (!d->calls_p && (rc = mt_session_calls(d->ses, &d->calls_p)) < 0)
			return rc;
		p = d->calls_p;
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
	rc = mt_tree_build(p, d->src, &o, out);
	if (rc == 0) {
		if (key != MT_TREE_BY_BYTES)
			mt_tree_sort(*out, key);
		*total = mt_profile_total(p);
	}
	mt_profile_free(own);
	return rc;
}

int mt_view_data_kind_trees(struct mt_view_data *d, int inverted, int sites, int by_tag,
			    struct mt_tree *out[MT_LEAK_KINDS])
{
	struct mt_tree_opts o = { .inverted = inverted, .sites = sites && !inverted,
				  .by_tag = by_tag };
	int rc = 0;

	memset(out, 0, MT_LEAK_KINDS * sizeof(*out));
	for (unsigned k = 0; k < MT_LEAK_KINDS && rc == 0; k++) {
		struct mt_profile *p = NULL;

		rc = mt_session_leak_profile(d->ses, k, &p);
		if (rc == 0)
			rc = mt_tree_build(p, d->src, &o, &out[k]);
		mt_profile_free(p);
	}
	if (rc < 0)
		for (unsigned k = 0; k < MT_LEAK_KINDS; k++) {
			mt_tree_free(out[k]);
			out[k] = NULL;
		}
	return rc;
}

int mt_view_data_leak_kind(struct mt_view_data *d, int kind)
{
	struct mt_profile *p = NULL;
	int rc;

	if (kind >= 0) {
		rc = mt_session_leak_profile(d->ses, (unsigned)kind, &p);
		if (rc < 0)
			return rc;
	}
	mt_profile_free(d->kind_p);
	d->kind_p = p;
	d->leak_kind = kind;
	return 0;
}

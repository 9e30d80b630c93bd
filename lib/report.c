/*
 * report.c - everything `memtrail report` writes except the summary: the
 * maximum, leaks, snapshot, delta, diff and temporary trees, the timeline,
 * and the collapsed, JSON and massif exports (see report.h).
 *
 * At most two replays: the first one (aggregation, plus the series when a
 * timeline or massif file is asked for) finds the peak, the snapshots, the
 * leaks and the temporaries; the second one, when a tree at the peak or at
 * a snapshot is needed, captures those points and stops after the last.
 * Not here: option parsing and the summary (viewer/cmd-report.c,
 * lib/summary.c), tree building and formatting (lib/tree.c, lib/export.c).
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "agg.h"
#include "error.h"
#include "export.h"
#include "replay.h"
#include "report.h"
#include "series.h"
#include "symbols.h"
#include "tree.h"

int mt_point_parse(const char *s, struct mt_point *p)
{
	char *end;
	unsigned long v;

	if (!s || !*s)
		return MT_E_ARG;
	if (!strcmp(s, "start") || !strcmp(s, "peak") || !strcmp(s, "end")) {
		p->kind = s[0] == 's' ? MT_POINT_START : s[0] == 'p' ? MT_POINT_PEAK : MT_POINT_END;
		p->snapshot = 0;
		return 0;
	}
	v = strtoul(s, &end, 10);
	if (*end || s[0] == '-' || v > UINT32_MAX)
		return MT_E_ARG;
	p->kind = MT_POINT_SNAPSHOT;
	p->snapshot = (uint32_t)v;
	return 0;
}

#define TIMELINE_COLS 72
#define TIMELINE_ROWS 20
#define MASSIF_SAMPLES 50

struct report {
	struct mt_replay *r;
	const struct mt_report_opts *o;
	FILE *out;
	struct mt_agg *agg;
	struct mt_series *series;
	const struct mt_agg_stats *st;
	struct mt_tree_std std;
	int have_std;
	/* profiles, owned */
	struct mt_profile *end, *temp, *peak;
	struct mt_profile **snap;  /* one per snapshot (st->nsnapshots) or NULL */
	int sections;              /* text sections written so far */
};

/* ---- the replays --------------------------------------------------------- */

static void report_progress(void *ctx, uint64_t done, uint64_t total)
{
	const struct report *rp = ctx;

	if (rp->o->on_progress)
		rp->o->on_progress(rp->o->progress_ctx, done, total);
}

/*
 * Replays the log into agg (requests already made) and, beside it, series
 * (or NULL).
 */
static int replay_tee(struct report *rp, struct mt_agg *agg, struct mt_series *series)
{
	struct mt_replay_ops ops;

	mt_agg_ops(&ops);
	return mt_series_replay_with(series, rp->r, &ops, agg, report_progress, rp);
}

static int first_pass(struct report *rp, int with_series)
{
	int rc;

	if (with_series) {
		rp->series = mt_series_new();
		if (!rp->series)
			return MT_E_NOMEM;
	}
	rc = mt_agg_request(rp->agg, NULL, 0, 0);
	if (rc < 0)
		return rc;
	rc = replay_tee(rp, rp->agg, rp->series);
	if (rc < 0)
		return rc;
	if (mt_agg_error(rp->agg) < 0)
		return mt_agg_error(rp->agg);
	if (rp->series && mt_series_error(rp->series) < 0)
		return mt_series_error(rp->series);
	rp->st = mt_agg_stats(rp->agg);
	rp->end = mt_agg_end_profile(rp->agg);
	rp->temp = mt_agg_temporary_profile(rp->agg);
	if (!rp->end || !rp->temp)
		return MT_E_NOMEM;
	return 0;
}

static struct mt_at peak_at(const struct mt_agg_stats *st)
{
	struct mt_at at = { MT_AT_START, 0 };

	if (!st->peak_at_start) {
		at.kind = MT_AT_SEQ;
		at.value = st->peak_seq;
	}
	return at;
}

/*
 * The second replay, with an aggregator of its own (the first one keeps the
 * run's figures): the peak and/or every snapshot, stopping after the last.
 */
static int second_pass(struct report *rp, int want_peak, int want_snaps)
{
	size_t nsnap = want_snaps ? rp->st->nsnapshots : 0, n = 0;
	struct mt_agg *a2;
	struct mt_at *at;
	int rc;

	rp->snap = calloc(rp->st->nsnapshots + 1, sizeof(*rp->snap));
	at = calloc(nsnap + 1, sizeof(*at));
	a2 = mt_agg_new();
	if (!rp->snap || !at || !a2) {
		rc = MT_E_NOMEM;
		goto out;
	}
	for (size_t i = 0; i < nsnap; i++) {
		at[n].kind = MT_AT_SEQ;
		at[n++].value = rp->st->snapshots[i].seq;
	}
	if (want_peak)
		at[n++] = peak_at(rp->st);
	rc = mt_agg_request(a2, at, n, 1);
	if (rc < 0)
		goto out;
	rc = replay_tee(rp, a2, NULL);
	if (rc < 0)
		goto out;
	rc = mt_agg_error(a2);
	if (rc < 0)
		goto out;
	for (size_t i = 0; i < nsnap; i++)
		rp->snap[i] = mt_agg_take(a2, i);
	if (want_peak)
		rp->peak = mt_agg_take(a2, nsnap);
	for (size_t i = 0; i < n; i++)
		if (!(i < nsnap ? rp->snap[i] : rp->peak))
			rc = MT_E_NOMEM;
out:
	mt_agg_free(a2);
	free(at);
	return rc;
}

/* ---- points and trees ---------------------------------------------------- */

/* The index in st->snapshots of snapshot number idx, or -1. */
static long find_snapshot(const struct mt_agg_stats *st, uint32_t idx)
{
	for (size_t i = 0; i < st->nsnapshots; i++)
		if (st->snapshots[i].index == idx)
			return (long)i;
	return -1;
}

static void point_name(const struct mt_point *p, char *buf, size_t size)
{
	switch (p->kind) {
	case MT_POINT_START: snprintf(buf, size, "start"); break;
	case MT_POINT_PEAK: snprintf(buf, size, "peak"); break;
	case MT_POINT_END: snprintf(buf, size, "end"); break;
	default: snprintf(buf, size, "snapshot %" PRIu32, p->snapshot); break;
	}
}

/* The profile at p (owned by rp; the start is an empty profile). */
static const struct mt_profile *profile_at(struct report *rp, const struct mt_point *p,
					   const struct mt_profile *empty)
{
	long i;

	switch (p->kind) {
	case MT_POINT_START: return empty;
	case MT_POINT_PEAK: return rp->peak;
	case MT_POINT_END: return rp->end;
	default:
		i = find_snapshot(rp->st, p->snapshot);
		return i < 0 ? NULL : rp->snap[i];
	}
}

static int symbols(struct report *rp)
{
	int rc;

	if (rp->have_std)
		return 0;
	rc = mt_tree_std_init(&rp->std, rp->r);
	if (rc < 0)
		return rc;
	rp->have_std = 1;
	return 0;
}

static int build_tree(struct report *rp, const struct mt_profile *p, int inverted,
		      int skip_entry, struct mt_tree **t)
{
	struct mt_tree_opts to;
	int rc = symbols(rp);

	if (rc < 0)
		return rc;
	memset(&to, 0, sizeof(to));
	to.inverted = inverted;
	to.skip_entry = skip_entry;
	to.depth = rp->o->depth;
	to.include_function = rp->o->include_function;
	to.exclude_function = rp->o->exclude_function;
	to.include_module = rp->o->include_module;
	to.exclude_module = rp->o->exclude_module;
	return mt_tree_build(p, &rp->std.source, &to, t);
}

/* ---- text ---------------------------------------------------------------- */

static void section(struct report *rp)
{
	if (rp->sections++)
		fputc('\n', rp->out);
}

/*
 * One tree under the header "NAME: FIGURE": FIGURE is the tree's total in
 * bytes, signed for a diff; for temporaries, their number and bytes.
 */
static int text_tree(struct report *rp, const char *name, const struct mt_profile *p,
		     int diff, int temporary)
{
	struct mt_text_opts to = { rp->o->threshold_pct, rp->o->top, diff, temporary };
	const struct mt_cost *c;
	struct mt_tree *t = NULL;
	char b1[32], b2[32];
	int rc;

	if (!p)
		return MT_E_NOMEM;
	rc = build_tree(rp, p, rp->o->inverted, 0, &t);
	if (rc < 0)
		return rc;
	if (temporary)
		mt_tree_sort(t, MT_TREE_BY_BLOCKS);
	c = mt_tree_node_cost(mt_tree_root(t));
	section(rp);
	if (temporary)
		fprintf(rp->out, "%s: %s allocation%s (%sB)\n", name,
			mt_export_number(b1, c->blocks, 0), c->blocks == 1 ? "" : "s",
			mt_export_number(b2, c->bytes, 0));
	else
		fprintf(rp->out, "%s: %sB\n", name, mt_export_number(b1, c->bytes, diff));
	rc = mt_export_text(t, &to, rp->out);
	mt_tree_free(t);
	return rc;
}

static int text_diff(struct report *rp, const char *name, const struct mt_profile *a,
		     const struct mt_profile *b)
{
	struct mt_profile *d = mt_profile_diff(a, b);
	int rc;

	if (!d)
		return MT_E_NOMEM;
	rc = text_tree(rp, name, d, 1, 0);
	mt_profile_free(d);
	return rc;
}

static void snapshot_name(const struct mt_agg_snapshot *s, char *buf, size_t size)
{
	if (s->label && *s->label)
		snprintf(buf, size, "snapshot %" PRIu32 " (%s)", s->index, s->label);
	else
		snprintf(buf, size, "snapshot %" PRIu32, s->index);
}

/* "354.1" in the unit that keeps the figure under 10,000. */
static const char *unit_for(uint64_t max, double *div)
{
	if (max < 10 * 1024ull) {
		*div = 1;
		return "B";
	}
	if (max < 10 * 1024ull * 1024) {
		*div = 1024.0;
		return "KiB";
	}
	if (max < 10 * 1024ull * 1024 * 1024) {
		*div = 1024.0 * 1024;
		return "MiB";
	}
	*div = 1024.0 * 1024 * 1024;
	return "GiB";
}

/*
 * The ms_print-style graph: one column per time slice, as high as the
 * slice's maximum live bytes; '#' the peak's column, '@' a column with a
 * snapshot, ':' the others. Then the table of snapshots.
 */
static int text_timeline(struct report *rp)
{
	struct mt_series_col cols[TIMELINE_COLS];
	const struct mt_agg_stats *st = rp->st;
	uint64_t peak = (uint64_t)st->peak_bytes, t1 = st->end_time_ns ? st->end_time_ns : 1;
	char grid[TIMELINE_ROWS][TIMELINE_COLS];
	const char *unit;
	double div;
	char b1[32], b2[32];
	int rc;

	rc = mt_series_resample(rp->series, 0, t1 + 1, TIMELINE_COLS, cols);
	if (rc < 0)
		return rc;
	memset(grid, ' ', sizeof(grid));
	for (size_t c = 0; c < TIMELINE_COLS; c++) {
		char ch = cols[c].has_peak ? '#' : ':';
		/* 128-bit: a heap over 2^64 / TIMELINE_ROWS bytes must not wrap */
		uint64_t h = peak ? (uint64_t)(((unsigned __int128)cols[c].max_bytes * TIMELINE_ROWS +
						peak - 1) / peak) : 0;

		if (!cols[c].has_peak)
			for (size_t i = 0; i < st->nsnapshots; i++)
				if (st->snapshots[i].time_ns >= cols[c].t0_ns &&
				    st->snapshots[i].time_ns < cols[c].t1_ns)
					ch = '@';
		if (h > TIMELINE_ROWS)
			h = TIMELINE_ROWS;
		for (uint64_t r = 0; r < h; r++)
			grid[TIMELINE_ROWS - 1 - r][c] = ch;
	}
	unit = unit_for(peak, &div);
	section(rp);
	fprintf(rp->out, "timeline: peak %sB in %s blocks at %.6fs\n",
		mt_export_number(b1, st->peak_bytes, 0), mt_export_number(b2, st->peak_blocks, 0),
		(double)st->peak_time_ns / 1e9);
	fprintf(rp->out, "%9s\n", unit);
	for (int r = 0; r < TIMELINE_ROWS; r++) {
		int w = TIMELINE_COLS;

		while (w > 0 && grid[r][w - 1] == ' ')
			w--;
		if (r == 0)
			fprintf(rp->out, "%9.1f^", (double)peak / div);
		else
			fprintf(rp->out, "%9s|", "");
		fprintf(rp->out, "%.*s\n", w, grid[r]);
	}
	fprintf(rp->out, "%8d +", 0);
	for (int c = 0; c < TIMELINE_COLS; c++)
		fputc('-', rp->out);
	fputs("->s\n", rp->out);
	fprintf(rp->out, "%9s0%*.3f\n", "", TIMELINE_COLS, (double)t1 / 1e9);
	fputc('\n', rp->out);
	if (!st->nsnapshots) {
		fputs("no snapshots\n", rp->out);
		return 0;
	}
	fprintf(rp->out, "%6s  %-16s %12s %14s %10s\n", "index", "label", "time(s)",
		"live bytes", "blocks");
	for (size_t i = 0; i < st->nsnapshots; i++) {
		const struct mt_agg_snapshot *s = &st->snapshots[i];

		fprintf(rp->out, "%6" PRIu32 "  %-16s %12.6f %14s %10s\n", s->index,
			s->label, (double)s->time_ns / 1e9,
			mt_export_number(b1, s->live_bytes, 0),
			mt_export_number(b2, s->live_blocks, 0));
	}
	return 0;
}

static int write_text(struct report *rp, const struct mt_profile *empty)
{
	const struct mt_report_opts *o = rp->o;
	const struct mt_agg_stats *st = rp->st;
	char name[256], n1[64], n2[64];
	int rc = 0;

	if (o->show & MT_SHOW_MAXIMUM && (rc = text_tree(rp, "maximum", rp->peak, 0, 0)) < 0)
		return rc;
	if (o->show & MT_SHOW_LEAKS && (rc = text_tree(rp, "leaked", rp->end, 0, 0)) < 0)
		return rc;
	if (o->show & (MT_SHOW_SNAPSHOTS | MT_SHOW_DELTAS) && !st->nsnapshots) {
		section(rp);
		fputs("no snapshots\n", rp->out);
	}
	if (o->show & MT_SHOW_SNAPSHOTS) {
		for (size_t i = 0; i < st->nsnapshots; i++) {
			snapshot_name(&st->snapshots[i], name, sizeof(name));
			if ((rc = text_tree(rp, name, rp->snap[i], 0, 0)) < 0)
				return rc;
		}
	}
	if (o->show & MT_SHOW_DELTAS) {
		for (size_t i = 0; i < st->nsnapshots; i++) {
			if (i)
				snprintf(n1, sizeof(n1), "snapshot %" PRIu32, st->snapshots[i - 1].index);
			else
				snprintf(n1, sizeof(n1), "start");
			snprintf(name, sizeof(name), "%s - snapshot %" PRIu32, n1,
				 st->snapshots[i].index);
			rc = text_diff(rp, name, i ? rp->snap[i - 1] : empty, rp->snap[i]);
			if (rc < 0)
				return rc;
		}
	}
	if (o->show & MT_SHOW_DIFF) {
		point_name(&o->diff_a, n1, sizeof(n1));
		point_name(&o->diff_b, n2, sizeof(n2));
		snprintf(name, sizeof(name), "%s - %s", n1, n2);
		rc = text_diff(rp, name, profile_at(rp, &o->diff_a, empty),
			       profile_at(rp, &o->diff_b, empty));
		if (rc < 0)
			return rc;
	}
	if (o->show & MT_SHOW_TEMPORARY && (rc = text_tree(rp, "temporary", rp->temp, 0, 1)) < 0)
		return rc;
	if (o->show & MT_SHOW_TIMELINE && (rc = text_timeline(rp)) < 0)
		return rc;
	return 0;
}

/* ---- exports ------------------------------------------------------------- */

/*
 * The one profile that --format json / collapsed exports: the diff, else
 * the maximum, the leaks, the temporaries, the last snapshot, the last
 * delta. *owned is set when the caller must free it.
 */
static const struct mt_profile *export_profile(struct report *rp, const struct mt_profile *empty,
					       struct mt_profile **owned)
{
	const struct mt_report_opts *o = rp->o;
	size_t n = rp->st->nsnapshots;

	*owned = NULL;
	if (o->show & MT_SHOW_DIFF)
		return *owned = mt_profile_diff(profile_at(rp, &o->diff_a, empty),
						profile_at(rp, &o->diff_b, empty));
	if (o->show & MT_SHOW_MAXIMUM)
		return rp->peak;
	if (o->show & MT_SHOW_LEAKS)
		return rp->end;
	if (o->show & MT_SHOW_TEMPORARY)
		return rp->temp;
	if (o->show & MT_SHOW_SNAPSHOTS && n)
		return rp->snap[n - 1];
	if (o->show & MT_SHOW_DELTAS && n)
		return *owned = mt_profile_diff(n > 1 ? rp->snap[n - 2] : empty, rp->snap[n - 1]);
	return rp->peak ? rp->peak : rp->end;
}

struct massif_entry {
	struct mt_massif_snap s;
	size_t order;
	struct mt_tree *owned;
};

static int cmp_massif(const void *pa, const void *pb)
{
	const struct massif_entry *a = pa, *b = pb;

	if (a->s.time_ns != b->s.time_ns)
		return a->s.time_ns < b->s.time_ns ? -1 : 1;
	return a->order < b->order ? -1 : a->order > b->order;
}

/*
 * massif.out: the start, MASSIF_SAMPLES points of the live heap over time
 * (empty trees), every snapshot and the end (detailed) and the peak.
 */
static int write_massif(struct report *rp)
{
	const struct mt_agg_stats *st = rp->st;
	size_t cap = 3 + MASSIF_SAMPLES + st->nsnapshots, n = 0;
	struct massif_entry *e = calloc(cap, sizeof(*e));
	struct mt_massif_snap *flat = calloc(cap, sizeof(*flat));
	struct mt_series_col cols[MASSIF_SAMPLES];
	uint64_t t1 = st->end_time_ns ? st->end_time_ns : 1;
	const struct mt_header *h = mt_replay_header(rp->r);
	int rc = MT_E_NOMEM;

	if (!e || !flat)
		goto out;
	e[n].s.time_ns = 0;
	e[n].order = n;
	n++;
	rc = mt_series_resample(rp->series, 0, t1 + 1, MASSIF_SAMPLES, cols);
	if (rc < 0)
		goto out;
	for (size_t i = 0; i < MASSIF_SAMPLES; i++) {
		e[n].s.time_ns = cols[i].t1_ns > t1 ? t1 : cols[i].t1_ns;
		e[n].s.heap_bytes = cols[i].end_bytes;
		e[n].order = n;
		n++;
	}
	for (size_t i = 0; i < st->nsnapshots; i++) {
		e[n].s.time_ns = st->snapshots[i].time_ns;
		e[n].s.heap_bytes = (uint64_t)st->snapshots[i].live_bytes;
		rc = build_tree(rp, rp->snap[i], 0, 1, &e[n].owned);
		if (rc < 0)
			goto out;
		e[n].s.tree = e[n].owned;
		e[n].order = n;
		n++;
	}
	e[n].s.time_ns = st->peak_at_start ? 0 : st->peak_time_ns;
	e[n].s.heap_bytes = (uint64_t)st->peak_bytes;
	e[n].s.peak = 1;
	rc = build_tree(rp, rp->peak, 0, 1, &e[n].owned);
	if (rc < 0)
		goto out;
	e[n].s.tree = e[n].owned;
	e[n].order = n;
	n++;
	e[n].s.time_ns = st->end_time_ns;
	e[n].s.heap_bytes = (uint64_t)st->end_bytes;
	rc = build_tree(rp, rp->end, 0, 1, &e[n].owned);
	if (rc < 0)
		goto out;
	e[n].s.tree = e[n].owned;
	e[n].order = n;
	n++;
	qsort(e, n, sizeof(*e), cmp_massif);
	for (size_t i = 0; i < n; i++)
		flat[i] = e[i].s;
	rc = mt_export_massif(h ? h->cmdline : "", flat, n, rp->o->threshold_pct, rp->out);
out:
	if (e)
		for (size_t i = 0; i < cap; i++)
			mt_tree_free(e[i].owned);
	free(e);
	free(flat);
	return rc;
}

static int write_export(struct report *rp, const struct mt_profile *empty)
{
	struct mt_profile *owned;
	const struct mt_profile *p = export_profile(rp, empty, &owned);
	int inverted = rp->o->format == MT_FORMAT_COLLAPSED;
	struct mt_tree *t = NULL;
	int rc;

	if (!p)
		return MT_E_NOMEM;
	rc = build_tree(rp, p, inverted, 0, &t);
	if (rc == 0)
		rc = inverted ? mt_export_collapsed(t, rp->out) : mt_export_json(t, rp->out);
	mt_tree_free(t);
	mt_profile_free(owned);
	return rc;
}

static int point_needs(const struct mt_report_opts *o, enum mt_point_kind kind)
{
	return o->show & MT_SHOW_DIFF && (o->diff_a.kind == kind || o->diff_b.kind == kind);
}

int mt_report_write(struct mt_replay *r, const struct mt_report_opts *o, FILE *out)
{
	struct report rp;
	struct mt_profile *empty = NULL;
	int massif = o->format == MT_FORMAT_MASSIF;
	int text = o->format == MT_FORMAT_TEXT;
	int want_peak, want_snaps, rc;

	memset(&rp, 0, sizeof(rp));
	rp.r = r;
	rp.o = o;
	rp.out = out;
	rp.agg = mt_agg_new();
	empty = mt_profile_new();
	if (!rp.agg || !empty) {
		rc = MT_E_NOMEM;
		goto out;
	}
	rc = first_pass(&rp, massif || (text && o->show & MT_SHOW_TIMELINE));
	if (rc < 0)
		goto out;
	if (o->show & MT_SHOW_DIFF &&
	    ((o->diff_a.kind == MT_POINT_SNAPSHOT && find_snapshot(rp.st, o->diff_a.snapshot) < 0) ||
	     (o->diff_b.kind == MT_POINT_SNAPSHOT && find_snapshot(rp.st, o->diff_b.snapshot) < 0))) {
		rc = MT_E_NOTFOUND;
		goto out;
	}
	want_peak = o->show & MT_SHOW_MAXIMUM || point_needs(o, MT_POINT_PEAK) || massif ||
		(!text && !(o->show & (MT_SHOW_DIFF | MT_SHOW_LEAKS | MT_SHOW_TEMPORARY |
				       MT_SHOW_SNAPSHOTS | MT_SHOW_DELTAS)));
	want_snaps = o->show & (MT_SHOW_SNAPSHOTS | MT_SHOW_DELTAS) ||
		point_needs(o, MT_POINT_SNAPSHOT) || massif;
	if (want_peak || want_snaps) {
		rc = second_pass(&rp, want_peak, want_snaps);
		if (rc < 0)
			goto out;
	}
	if (o->on_progress)
		o->on_progress(o->progress_ctx, 0, 0);
	if (massif)
		rc = write_massif(&rp);
	else if (text)
		rc = write_text(&rp, empty);
	else
		rc = write_export(&rp, empty);
out:
	if (rp.have_std && o->warn) {
		const char *const *lines;
		size_t n = mt_symbols_warnings(rp.std.symbols, &lines);

		for (size_t i = 0; i < n; i++)
			o->warn(o->warn_ctx, lines[i]);
	}
	if (rp.have_std)
		mt_tree_std_fini(&rp.std);
	if (rp.snap)
		for (size_t i = 0; i < rp.st->nsnapshots; i++)
			mt_profile_free(rp.snap[i]);
	free(rp.snap);
	mt_profile_free(rp.peak);
	mt_profile_free(rp.end);
	mt_profile_free(rp.temp);
	mt_profile_free(empty);
	mt_series_free(rp.series);
	mt_agg_free(rp.agg);
	if (rc >= 0 && ferror(out))
		rc = MT_E_IO;
	return rc < 0 ? rc : 0;
}

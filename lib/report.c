/*
 * report.c - everything `memtrail report` writes except the summary: the
 * maximum, leaks, snapshot, delta, diff, temporary and calls trees, the
 * size histogram, the timeline, and the collapsed, JSON and massif exports
 * (see report.h); and the one parser of a point as users name it.
 *
 * Everything comes from a session (lib/session.h), which read the log once:
 * profiles at the peak, at snapshots, at the end are asked of it, and the
 * massif export walks the snapshots forward, one tree at a time.
 * Not here: option parsing and the summary (viewer/cmd-report.c,
 * lib/summary.c), tree building and formatting (lib/tree.c, lib/export.c).
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "agg.h"
#include "error.h"
#include "export.h"
#include "fmt.h"
#include "format.h"
#include "report.h"
#include "series.h"
#include "session.h"
#include "sizes.h"
#include "summary.h"
#include "symbols.h"
#include "tagstats.h"
#include "tree.h"

int mt_at_parse(const char *text, const struct mt_agg_stats *st, struct mt_at *p)
{
	size_t found = 0;

	if (!text || !*text)
		return MT_E_ARG;
	p->value = 0;
	if (!strcmp(text, "start") || !strcmp(text, "peak") || !strcmp(text, "end")) {
		p->kind = text[0] == 's' ? MT_AT_START : text[0] == 'p' ? MT_AT_PEAK : MT_AT_END;
		return 0;
	}
	p->kind = MT_AT_SNAPSHOT;
	if (strspn(text, "0123456789") == strlen(text)) {
		/* past UINT32_MAX no snapshot can have the number */
		uint64_t v = 0;

		for (const char *c = text; *c && v <= UINT32_MAX; c++)
			v = v * 10 + (uint64_t)(*c - '0');
		p->value = v;
		for (size_t i = 0; i < st->nsnapshots; i++)
			if (st->snapshots[i].index == v)
				return 0;
		return MT_E_NOTFOUND;
	}
	for (size_t i = 0; i < st->nsnapshots; i++) {
		if (st->snapshots[i].label && !strcmp(st->snapshots[i].label, text)) {
			if (!found++)
				p->value = st->snapshots[i].index;
		}
	}
	return found == 1 ? 0 : found ? MT_E_ARG : MT_E_NOTFOUND;
}

#define TIMELINE_COLS 72
#define TIMELINE_ROWS 20
#define MASSIF_SAMPLES 50

struct report {
	struct mt_session *ses;
	const struct mt_report_opts *o;
	FILE *out;
	const struct mt_agg_stats *st;
	int sections;              /* text sections written so far */
	const struct mt_tree_source *src; /* NULL: the session's (see compare) */
	char who[200];             /* " of thread TID (NAME)" and " tagged PATH" after
				      tree names, or "" */
};

/* ---- points and trees ---------------------------------------------------- */

static void point_name(const struct mt_at *p, char *buf, size_t size)
{
	switch (p->kind) {
	case MT_AT_START: snprintf(buf, size, "start"); break;
	case MT_AT_PEAK: snprintf(buf, size, "peak"); break;
	case MT_AT_END: snprintf(buf, size, "end"); break;
	default: snprintf(buf, size, "snapshot %" PRIu64, p->value); break;
	}
}

static void snapshot_name(const struct mt_agg_snapshot *s, char *buf, size_t size);

/* As point_name, with a snapshot's label: for the title of an export. */
static void point_title(struct report *rp, const struct mt_at *p, char *buf, size_t size)
{
	long i = p->kind == MT_AT_SNAPSHOT ?
		mt_session_find_snapshot(rp->ses, (uint32_t)p->value) : -1;

	if (i >= 0)
		snapshot_name(&rp->st->snapshots[i], buf, size);
	else
		point_name(p, buf, size);
}

/* The profile at p, new (the caller frees it), or NULL with *rc set. */
static struct mt_profile *profile_at(struct report *rp, const struct mt_at *p, int *rc)
{
	struct mt_profile *out = NULL;

	*rc = mt_session_profile(rp->ses, p, &out);
	return out;
}

/*
 * The tree of p. fold, when not NULL, is how a text printout will fold it:
 * the tree is then pruned to what can be printed (mt_tree_opts.prune_pct).
 */
static int build_tree(struct report *rp, const struct mt_profile *p, int inverted,
		      int skip_entry, const struct mt_text_opts *fold, struct mt_tree **t)
{
	struct mt_tree_opts to;
	int rc = 0;
	const struct mt_tree_source *src = rp->src ? rp->src : mt_session_source(rp->ses, &rc);

	if (!src)
		return rc;
	memset(&to, 0, sizeof(to));
	to.inverted = inverted;
	to.skip_entry = skip_entry;
	to.sites = rp->o->sites && !inverted && !skip_entry;
	to.depth = rp->o->depth;
	to.include_function = rp->o->include_function;
	to.exclude_function = rp->o->exclude_function;
	to.include_module = rp->o->include_module;
	to.exclude_module = rp->o->exclude_module;
	to.net_paths = rp->src != NULL;   /* a compare's two runs */
	/* --top prints small top-level entries too, with their folded kids */
	if (fold && !fold->signed_figures && !fold->top) {
		to.prune_pct = fold->threshold_pct;
		to.prune_by_blocks = fold->by_blocks;
	}
	return mt_tree_build(p, src, &to, t);
}

/* ---- text ---------------------------------------------------------------- */

static void section(struct report *rp)
{
	if (rp->sections++)
		fputc('\n', rp->out);
}

/* What a tree's blocks count. */
enum counted {
	LIVE = 0,       /* live blocks (or their change, in a diff) */
	TEMPORARY,      /* temporary allocations */
	CALLS,          /* allocation calls (lib/sizes.h's calls profile) */
};

/*
 * A tree's header, "NAME: FIGURE" (the section's blank line first): the
 * total c in bytes, signed for a diff; for temporaries and calls, their
 * number and bytes.
 */
static void tree_header(struct report *rp, const char *name, const struct mt_cost *c,
			int diff, enum counted what)
{
	char b1[32], b2[32];

	section(rp);
	if (what != LIVE)
		fprintf(rp->out, "%s%s: %s allocation%s (%sB)\n", name, rp->who,
			mt_fmt_signed(b1, sizeof(b1), c->blocks, 0), c->blocks == 1 ? "" : "s",
			mt_fmt_signed(b2, sizeof(b2), c->bytes, 0));
	else
		fprintf(rp->out, "%s%s: %sB\n", name, rp->who,
			mt_fmt_signed(b1, sizeof(b1), c->bytes, diff));
}

/*
 * The functions of profile p (--top-sites) as the flat lists that
 * mt_export_fns_text writes, under the header text_tree gives its tree.
 */
static int text_fns(struct report *rp, const char *name, const struct mt_profile *p,
		    int diff, enum counted what)
{
	struct mt_tree *t = NULL;
	struct mt_tree_fn *fns = NULL;
	struct mt_cost whole;
	size_t n = 0;
	int rc = build_tree(rp, p, 0, 0, NULL, &t);

	if (rc == 0)
		rc = mt_tree_fns(t, &fns, &n);
	if (rc < 0) {
		mt_tree_free(t);
		return rc;
	}
	whole = mt_tree_gross(t);
	tree_header(rp, name, mt_tree_node_cost(mt_tree_root(t)), diff, what);
	rc = mt_export_fns_text(fns, n, rp->o->top_sites,
				what != LIVE ? MT_TREE_BY_BLOCKS : MT_TREE_BY_BYTES, &whole, diff,
				rp->out);
	mt_tree_fns_free(fns, n);
	mt_tree_free(t);
	return rc;
}

/*
 * One tree under the header "NAME: FIGURE": FIGURE is the tree's total in
 * bytes, signed for a diff; for temporaries and calls, their number and
 * bytes, and the tree is sorted and its percentages taken on that number.
 */
static int text_tree(struct report *rp, const char *name, const struct mt_profile *p,
		     int diff, enum counted what)
{
	struct mt_text_opts to = { rp->o->threshold_pct, rp->o->top, diff, what != LIVE,
				   what == CALLS };
	struct mt_tree *t = NULL;
	int rc;

	if (!p)
		return MT_E_NOMEM;
	if (rp->o->top_sites)
		return text_fns(rp, name, p, diff, what);
	rc = build_tree(rp, p, rp->o->inverted, 0, &to, &t);
	if (rc < 0)
		return rc;
	if (what != LIVE)
		mt_tree_sort(t, MT_TREE_BY_BLOCKS);
	tree_header(rp, name, mt_tree_node_cost(mt_tree_root(t)), diff, what);
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
	rc = text_tree(rp, name, d, 1, LIVE);
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
	char rss_n[32];
	const char *unit;
	double div;
	char b1[32], b2[32];
	int rc;

	rc = mt_series_resample(mt_session_series(rp->ses), 0, t1 + 1, TIMELINE_COLS,
				st->peak_at_start ? NULL : &st->peak_time_ns, cols);
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
		mt_fmt_signed(b1, sizeof(b1), st->peak_bytes, 0), mt_fmt_signed(b2, sizeof(b2), st->peak_blocks, 0),
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
	if (st->rss_samples) {
		/* the resident set beside the heap: a level per column, of its peak */
		static const char levels[] = " .:-=+*#%@";

		fprintf(rp->out, "%9s=", "rss");
		for (int c = 0; c < TIMELINE_COLS; c++) {
			uint64_t v = cols[c].rss_bytes, pk = st->peak_rss_bytes;
			int k = !v || !pk ? 0 :
				1 + (int)((unsigned __int128)(v - 1) * 9 / pk);

			fputc(levels[k > 9 ? 9 : k], rp->out);
		}
		fputc('\n', rp->out);
	}
	if (st->rss_samples)
		fprintf(rp->out, "resident set (RSS): peak %sB (%s) at %.6fs, %s samples\n",
			mt_fmt_count(b1, sizeof(b1), st->peak_rss_bytes),
			mt_fmt_size(b2, sizeof(b2), st->peak_rss_bytes),
			(double)st->peak_rss_time_ns / 1e9,
			mt_fmt_count(rss_n, sizeof(rss_n), st->rss_samples));
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
			mt_fmt_signed(b1, sizeof(b1), s->live_bytes, 0),
			mt_fmt_signed(b2, sizeof(b2), s->live_blocks, 0));
	}
	return 0;
}

/* "12,800B" */
static const char *bytes_str(char *buf, size_t size, int64_t n)
{
	size_t l;

	mt_fmt_signed(buf, size, n, 0);
	l = strlen(buf);
	if (l + 1 < size) {
		buf[l] = 'B';
		buf[l + 1] = 0;
	}
	return buf;
}

/*
 * --by-thread: one line per thread of the log, in the order of their
 * first event: what it allocated and freed, and of the blocks it
 * allocated, what was live at the peak and at the end.
 */
static int text_threads(struct report *rp)
{
	size_t n = mt_session_nthreads(rp->ses), k = 0;
	struct mt_session_thread t;
	char b[7][MT_FMT_LEN];

	for (size_t i = 0; i < n; i++)
		k += mt_session_thread(rp->ses, i, &t) == 0;
	section(rp);
	fprintf(rp->out, "threads: %zu (live at the peak and leaked: the blocks each allocated)\n", k);
	fprintf(rp->out, "%10s %12s %12s %14s %14s %8s %14s %8s  %s\n", "tid", "allocations",
		"frees", "allocated", "live at peak", "blocks", "leaked", "blocks", "name");
	for (size_t i = 0; i < n; i++) {
		if (mt_session_thread(rp->ses, i, &t) < 0)
			continue;
		fprintf(rp->out, "%10" PRIu32 " %12s %12s %14s %14s %8s %14s %8s  %s\n", t.tid,
			mt_fmt_count(b[0], sizeof(b[0]), t.st.allocations),
			mt_fmt_count(b[1], sizeof(b[1]), t.st.frees),
			bytes_str(b[2], sizeof(b[2]), (int64_t)t.st.bytes_allocated),
			bytes_str(b[3], sizeof(b[3]), t.st.peak_bytes),
			mt_fmt_signed(b[4], sizeof(b[4]), t.st.peak_blocks, 0),
			bytes_str(b[5], sizeof(b[5]), t.st.end_bytes),
			mt_fmt_signed(b[6], sizeof(b[6]), t.st.end_blocks, 0),
			t.name ? t.name : "-");
	}
	return 0;
}

/* --by-thread --format json: {"threads": [{...}, ...]}, one object a thread. */
static int json_threads(struct report *rp)
{
	size_t n = mt_session_nthreads(rp->ses), k = 0;
	struct mt_session_thread t;

	fputs("{\"threads\": [", rp->out);
	for (size_t i = 0; i < n; i++) {
		if (mt_session_thread(rp->ses, i, &t) < 0)
			continue;
		fprintf(rp->out, "%s\n  {\"index\": %zu, \"tid\": %" PRIu32 ", \"name\": ",
			k++ ? "," : "", i, t.tid);
		if (t.name)
			mt_json_string(rp->out, t.name);
		else
			fputs("null", rp->out);
		fprintf(rp->out, ", \"allocations\": %" PRIu64 ", \"frees\": %" PRIu64
			", \"bytes_allocated\": %" PRIu64 ", \"peak_bytes\": %" PRId64
			", \"peak_blocks\": %" PRId64 ", \"leaked_bytes\": %" PRId64
			", \"leaked_blocks\": %" PRId64 "}", t.st.allocations, t.st.frees,
			t.st.bytes_allocated, t.st.peak_bytes, t.st.peak_blocks, t.st.end_bytes,
			t.st.end_blocks);
	}
	fputs("\n]}\n", rp->out);
	return 0;
}

/*
 * --by-tag: the figures of each tag path (lib/tagstats.h), and with
 * --by-thread of each thread's blocks under each, thread by thread (a tid
 * the kernel reused is one thread here, as --thread names it): text
 * columns, or {"tags": [...]} with one object a row. The thread
 * restriction is the report's own again afterwards.
 */
static int write_tags(struct report *rp, int json)
{
	size_t n = rp->o->show & MT_SHOW_THREADS ? mt_session_nthreads(rp->ses) : 1, rows = 0;
	int by_thread = (rp->o->show & MT_SHOW_THREADS) != 0, rc = 0;
	char b[6][MT_FMT_LEN];

	if (json)
		fputs("{\"tags\": [", rp->out);
	else
		section(rp);
	for (size_t i = 0; i < n && rc == 0; i++) {
		struct mt_session_thread t = { 0 }, u;
		struct mt_tagstats_row *r;
		size_t nr, j;

		if (by_thread) {
			if (mt_session_thread(rp->ses, i, &t) < 0)
				continue;
			for (j = 0; j < i; j++)
				if (mt_session_thread(rp->ses, j, &u) == 0 && u.tid == t.tid)
					break;
			if (j < i || (rp->o->thread > 0 && t.tid != (uint64_t)rp->o->thread))
				continue;
			if ((rc = mt_session_only_thread(rp->ses, t.tid)) < 0)
				break;
		}
		if ((rc = mt_tagstats_rows(rp->ses, &r, &nr)) < 0)
			break;
		if (!json && !rows++) {
			fprintf(rp->out, "tags%s (live at the peak and leaked: the blocks "
				"allocated under each tag path%s)\n", rp->who,
				by_thread ? " by each thread" : "");
			if (by_thread)
				fprintf(rp->out, "%10s ", "tid");
			fprintf(rp->out, "%12s %14s %14s %8s %14s %8s  %s\n", "allocations",
				"allocated", "live at peak", "blocks", "leaked", "blocks", "tag");
		}
		for (j = 0; j < nr; j++) {
			if (json) {
				fprintf(rp->out, "%s\n  {", rows++ ? "," : "");
				if (by_thread) {
					fprintf(rp->out, "\"thread\": %zu, \"tid\": %" PRIu32
						", \"thread_name\": ", i, t.tid);
					if (t.name)
						mt_json_string(rp->out, t.name);
					else
						fputs("null", rp->out);
					fputs(", ", rp->out);
				}
				fputs("\"tag\": ", rp->out);
				if (r[j].tag)
					mt_json_string(rp->out, r[j].path);
				else
					fputs("null", rp->out);
				fprintf(rp->out, ", \"allocations\": %" PRIu64 ", \"bytes_allocated\": %"
					PRIu64 ", \"peak_bytes\": %" PRId64 ", \"peak_blocks\": %" PRId64
					", \"leaked_bytes\": %" PRId64 ", \"leaked_blocks\": %" PRId64 "}",
					r[j].allocations, r[j].bytes_allocated, r[j].peak_bytes,
					r[j].peak_blocks, r[j].leaked_bytes, r[j].leaked_blocks);
				continue;
			}
			if (by_thread)
				fprintf(rp->out, "%10" PRIu32 " ", t.tid);
			fprintf(rp->out, "%12s %14s %14s %8s %14s %8s  %s\n",
				mt_fmt_count(b[0], sizeof(b[0]), r[j].allocations),
				bytes_str(b[1], sizeof(b[1]), (int64_t)r[j].bytes_allocated),
				bytes_str(b[2], sizeof(b[2]), r[j].peak_bytes),
				mt_fmt_signed(b[3], sizeof(b[3]), r[j].peak_blocks, 0),
				bytes_str(b[4], sizeof(b[4]), r[j].leaked_bytes),
				mt_fmt_signed(b[5], sizeof(b[5]), r[j].leaked_blocks, 0),
				r[j].tag ? r[j].path : "-");
		}
		free(r);
	}
	if (by_thread && rc == 0)
		rc = mt_session_only_thread(rp->ses, rp->o->thread > 0 ? rp->o->thread : -1);
	if (json)
		fputs(rows ? "\n]}\n" : "]}\n", rp->out);
	else if (!rows)
		fprintf(rp->out, "tags%s: no allocations\n", rp->who);
	return rc;
}

/* The tree of the profile at `at` under the header "name". */
static int text_at(struct report *rp, const char *name, const struct mt_at *at)
{
	int rc;
	struct mt_profile *p = profile_at(rp, at, &rc);

	if (!p)
		return rc;
	rc = text_tree(rp, name, p, 0, LIVE);
	mt_profile_free(p);
	return rc;
}

static int diff_at(struct report *rp, const char *name, const struct mt_at *a,
		   const struct mt_at *b)
{
	int rc;
	struct mt_profile *pa = profile_at(rp, a, &rc), *pb = NULL;

	if (pa)
		pb = profile_at(rp, b, &rc);
	if (pb)
		rc = text_diff(rp, name, pa, pb);
	mt_profile_free(pa);
	mt_profile_free(pb);
	return rc;
}

static struct mt_at snap_at(const struct mt_agg_snapshot *s)
{
	struct mt_at at = { MT_AT_SNAPSHOT, s->index };

	return at;
}

/* ---- sizes --------------------------------------------------------------- */

/* 1 when the report's options filter stacks (-i, -x and the module ones). */
static int filtered(const struct mt_report_opts *o)
{
	return o->include_function || o->exclude_function || o->include_module ||
		o->exclude_module;
}

/*
 * The histogram of requested sizes of the calls the report's restrictions
 * keep (thread and tag: the session's; function and module filters: the
 * stacks a tree keeps) into h.
 */
static int size_histogram(struct report *rp, struct mt_sizes_bucket *h)
{
	struct mt_profile *calls = NULL, *kept = NULL;
	const struct mt_tree_source *src;
	struct mt_tree_opts to;
	int rc;

	if (!filtered(rp->o))
		return mt_session_size_histogram(rp->ses, NULL, h);
	src = mt_session_source(rp->ses, &rc);
	if (!src)
		return rc;
	rc = mt_session_calls(rp->ses, &calls);
	if (rc < 0)
		return rc;
	memset(&to, 0, sizeof(to));
	to.include_function = rp->o->include_function;
	to.exclude_function = rp->o->exclude_function;
	to.include_module = rp->o->include_module;
	to.exclude_module = rp->o->exclude_module;
	rc = mt_tree_keep(calls, src, &to, &kept);
	if (rc == 0)
		rc = mt_session_size_histogram(rp->ses, kept, h);
	mt_profile_free(kept);
	mt_profile_free(calls);
	return rc;
}

/* "0", "1", "2 - 3", "1,024 - 2,047": the sizes bucket k holds. */
static void bucket_name(unsigned k, char *buf, size_t size)
{
	char lo[MT_FMT_LEN], hi[MT_FMT_LEN];
	uint64_t l, h;

	mt_sizes_bucket_range(k, &l, &h);
	if (l == h)
		snprintf(buf, size, "%s", mt_fmt_count(lo, sizeof(lo), l));
	else
		snprintf(buf, size, "%s - %s", mt_fmt_count(lo, sizeof(lo), l),
			 mt_fmt_count(hi, sizeof(hi), h));
}

#define SIZES_BAR 40

/*
 * The size histogram: one line per power-of-two bucket from the smallest
 * size requested to the largest (empty ones between included), with the
 * calls, their share of all calls, the bytes they asked for and a bar
 * scaled to the fullest bucket.
 */
static int text_sizes(struct report *rp)
{
	struct mt_sizes_bucket h[MT_SIZES_NBUCKETS];
	uint64_t calls = 0, bytes = 0, most = 0;
	unsigned first = MT_SIZES_NBUCKETS, last = 0;
	int wsize = 4, wcalls = 5, wbytes = 5;
	char b1[MT_FMT_LEN], b2[MT_FMT_LEN], name[2 * MT_FMT_LEN + 4];
	int rc = size_histogram(rp, h);

	if (rc < 0)
		return rc;
	for (unsigned k = 0; k < MT_SIZES_NBUCKETS; k++) {
		if (!h[k].calls)
			continue;
		if (first == MT_SIZES_NBUCKETS)
			first = k;
		last = k;
		calls += h[k].calls;
		bytes += h[k].bytes;
		if (h[k].calls > most)
			most = h[k].calls;
	}
	section(rp);
	fprintf(rp->out, "sizes: %s allocation%s (%sB)\n", mt_fmt_count(b1, sizeof(b1), calls),
		calls == 1 ? "" : "s", mt_fmt_count(b2, sizeof(b2), bytes));
	if (!calls)
		return 0;
	for (unsigned k = first; k <= last; k++) {
		int n;

		bucket_name(k, name, sizeof(name));
		if ((n = (int)strlen(name)) > wsize)
			wsize = n;
		if ((n = (int)strlen(mt_fmt_count(b1, sizeof(b1), h[k].calls))) > wcalls)
			wcalls = n;
		if ((n = (int)strlen(mt_fmt_count(b1, sizeof(b1), h[k].bytes)) + 1) > wbytes)
			wbytes = n;
	}
	fprintf(rp->out, "  %*s  %*s  %7s  %*s\n", wsize, "size", wcalls, "calls", "% calls",
		wbytes, "bytes");
	for (unsigned k = first; k <= last; k++) {
		/* a bucket with any call shows at least one mark */
		unsigned bar = (unsigned)((h[k].calls * SIZES_BAR + most - 1) / most);

		bucket_name(k, name, sizeof(name));
		snprintf(b2, sizeof(b2), "%sB", mt_fmt_count(b1, sizeof(b1), h[k].bytes));
		fprintf(rp->out, "  %*s  %*s  %6.2f%%  %*s%s", wsize, name, wcalls,
			mt_fmt_count(b1, sizeof(b1), h[k].calls),
			100.0 * (double)h[k].calls / (double)calls, wbytes, b2, bar ? "  " : "");
		for (unsigned i = 0; i < bar; i++)
			fputc('#', rp->out);
		fputc('\n', rp->out);
	}
	return 0;
}

/* The histogram as JSON: every bucket with a call, smallest first. */
static int json_sizes(struct report *rp)
{
	struct mt_sizes_bucket h[MT_SIZES_NBUCKETS];
	int rc = size_histogram(rp, h), n = 0;

	if (rc < 0)
		return rc;
	fputs("{\n  \"sizes\": [", rp->out);
	for (unsigned k = 0; k < MT_SIZES_NBUCKETS; k++) {
		uint64_t lo, hi;

		if (!h[k].calls)
			continue;
		mt_sizes_bucket_range(k, &lo, &hi);
		fprintf(rp->out, "%s\n    {\"min\": %" PRIu64 ", \"max\": %" PRIu64
			", \"calls\": %" PRIu64 ", \"bytes\": %" PRIu64 "}",
			n++ ? "," : "", lo, hi, h[k].calls, h[k].bytes);
	}
	fputs(n ? "\n  ]\n}\n" : "]\n}\n", rp->out);
	return 0;
}

int mt_leak_kinds_parse(const char *text, unsigned *bits)
{
	static const char *const names[MT_LEAK_KINDS] = {
		"definite", "indirect", "possible", "reachable",
	};
	unsigned b = 0;

	if (!strcmp(text, "all")) {
		*bits = (1u << MT_LEAK_KINDS) - 1;
		return 0;
	}
	while (*text) {
		size_t n = strcspn(text, ",");
		unsigned k;

		for (k = 0; k < MT_LEAK_KINDS; k++)
			if (strlen(names[k]) == n && !strncmp(text, names[k], n))
				break;
		if (k == MT_LEAK_KINDS)
			return MT_E_ARG;
		b |= 1u << k;
		text += n;
		if (*text == ',' && *++text == '\0')
			return MT_E_ARG;
	}
	if (!b)
		return MT_E_ARG;
	*bits = b;
	return 0;
}

/*
 * After the leaked tree of a classified log: one tree per kind asked for
 * that has blocks, in enum order (definitely lost first), titled as the
 * summary names the kind.
 */
static int text_leak_kinds(struct report *rp)
{
	unsigned want = rp->o->leak_kinds ? rp->o->leak_kinds : MT_LEAK_KINDS_DEFAULT;

	if (!mt_session_end(rp->ses)->classified)
		return 0;
	for (unsigned k = 0; k < MT_LEAK_KINDS; k++) {
		struct mt_profile *p = NULL;
		char name[32];
		int rc;

		if (!(want & 1u << k))
			continue;
		rc = mt_session_leak_profile(rp->ses, k, &p);
		if (rc < 0)
			return rc;
		if (mt_profile_total(p).blocks > 0) {
			snprintf(name, sizeof(name), "%s", mt_leak_kind_label(k));
			name[strlen(name) - 1] = '\0';   /* the tree header adds ':' */
			rc = text_tree(rp, name, p, 0, LIVE);
		}
		mt_profile_free(p);
		if (rc < 0)
			return rc;
	}
	return 0;
}

static int write_text(struct report *rp)
{
	const struct mt_report_opts *o = rp->o;
	const struct mt_agg_stats *st = rp->st;
	static const struct mt_at peak = { MT_AT_PEAK, 0 }, end = { MT_AT_END, 0 },
		start = { MT_AT_START, 0 };
	char name[256], n1[64], n2[64];
	int rc = 0;

	if (o->show & MT_SHOW_TAGS && (rc = write_tags(rp, 0)) < 0)
		return rc;
	/* with --by-tag, --by-thread splits the tags' figures instead */
	if ((o->show & (MT_SHOW_THREADS | MT_SHOW_TAGS)) == MT_SHOW_THREADS &&
	    (rc = text_threads(rp)) < 0)
		return rc;
	/* a bounded log's peak may lie in what it dropped: its tree is then
	 * the heap where the kept log begins, the nearest it has */
	if (o->show & MT_SHOW_MAXIMUM &&
	    (rc = text_at(rp, mt_session_end(rp->ses)->bounded &&
			  mt_session_stats(rp->ses)->peak_time_ns <
			  mt_session_end(rp->ses)->base_time_ns ?
			  "maximum (before the kept log: the heap where it begins)" : "maximum",
			  &peak)) < 0)
		return rc;
	if (o->show & MT_SHOW_LEAKS &&
	    (rc = text_at(rp, mt_session_end(rp->ses)->how == MT_END_STOPPED &&
			  mt_session_end(rp->ses)->clean ? "live when recording stopped" : "leaked",
			  &end)) < 0)
		return rc;
	if (o->show & MT_SHOW_LEAKS && (rc = text_leak_kinds(rp)) < 0)
		return rc;
	if (o->show & (MT_SHOW_SNAPSHOTS | MT_SHOW_DELTAS) && !st->nsnapshots) {
		section(rp);
		fputs("no snapshots\n", rp->out);
	}
	if (o->show & MT_SHOW_SNAPSHOTS) {
		for (size_t i = 0; i < st->nsnapshots; i++) {
			struct mt_at at = snap_at(&st->snapshots[i]);

			snapshot_name(&st->snapshots[i], name, sizeof(name));
			if ((rc = text_at(rp, name, &at)) < 0)
				return rc;
		}
	}
	if (o->show & MT_SHOW_DELTAS) {
		for (size_t i = 0; i < st->nsnapshots; i++) {
			struct mt_at a = i ? snap_at(&st->snapshots[i - 1]) : start;
			struct mt_at b = snap_at(&st->snapshots[i]);

			if (i)
				snprintf(n1, sizeof(n1), "snapshot %" PRIu32, st->snapshots[i - 1].index);
			else
				snprintf(n1, sizeof(n1), "start");
			snprintf(name, sizeof(name), "%s - snapshot %" PRIu32, n1,
				 st->snapshots[i].index);
			if ((rc = diff_at(rp, name, &a, &b)) < 0)
				return rc;
		}
	}
	if (o->show & MT_SHOW_DIFF) {
		point_name(&o->diff_a, n1, sizeof(n1));
		point_name(&o->diff_b, n2, sizeof(n2));
		snprintf(name, sizeof(name), "%s - %s", n1, n2);
		if ((rc = diff_at(rp, name, &o->diff_a, &o->diff_b)) < 0)
			return rc;
	}
	if (o->show & MT_SHOW_TEMPORARY) {
		struct mt_profile *t = NULL;

		rc = mt_session_temporary(rp->ses, &t);
		if (rc == 0)
			rc = text_tree(rp, "temporary", t, 0, TEMPORARY);
		mt_profile_free(t);
		if (rc < 0)
			return rc;
	}
	if (o->show & MT_SHOW_CALLS) {
		struct mt_profile *c;

		rc = mt_session_calls(rp->ses, &c);
		if (rc == 0)
			rc = text_tree(rp, "calls", c, 0, CALLS);
		mt_profile_free(c);
		if (rc < 0)
			return rc;
	}
	if (o->show & MT_SHOW_SIZES && (rc = text_sizes(rp)) < 0)
		return rc;
	if (o->show & MT_SHOW_TIMELINE && (rc = text_timeline(rp)) < 0)
		return rc;
	return 0;
}

/* ---- exports ------------------------------------------------------------- */

/*
 * The one profile that --format json / collapsed / svg exports: the diff,
 * else the maximum, the leaks, the temporaries, the calls (*fig then says
 * so), the last snapshot, the last delta. *diff says whether it is a
 * difference, what (size bytes) names it for a title. New; the caller
 * frees it.
 */
/*
 * The blocks of the leak kinds in want (bits of enum mt_leak_kind) in one
 * profile, what naming them ("definitely lost, indirectly lost"). New; the
 * caller frees it.
 */
static struct mt_profile *leak_kinds_profile(struct report *rp, unsigned want, int *rc,
					     char *what, size_t size)
{
	struct mt_profile *sum = mt_profile_new();
	size_t len = 0;

	*rc = sum ? 0 : MT_E_NOMEM;
	what[0] = '\0';
	for (unsigned k = 0; *rc == 0 && k < MT_LEAK_KINDS; k++) {
		struct mt_profile *p = NULL;
		const char *label = mt_leak_kind_label(k);

		if (!(want & 1u << k))
			continue;
		if (len < size)
			len += (size_t)snprintf(what + len, size - len, "%s%.*s", len ? ", " : "",
						(int)strlen(label) - 1, label);
		*rc = mt_session_leak_profile(rp->ses, k, &p);
		for (uint32_t i = 0; *rc == 0 && i < mt_profile_nstacks(p); i++) {
			struct mt_cost c = mt_profile_get(p, i);

			if ((c.bytes || c.blocks) && mt_profile_add(sum, i, &c) < 0)
				*rc = MT_E_NOMEM;
		}
		mt_profile_free(p);
	}
	if (*rc < 0) {
		mt_profile_free(sum);
		return NULL;
	}
	return sum;
}

static struct mt_profile *export_profile(struct report *rp, enum mt_export_figure *fig, int *rc,
					 int *diff, char *what, size_t size)
{
	const struct mt_report_opts *o = rp->o;
	size_t n = rp->st->nsnapshots;
	struct mt_at at = { MT_AT_PEAK, 0 }, before = { MT_AT_START, 0 };
	struct mt_profile *p = NULL;
	char a[160], b[160];

	*diff = 0;
	snprintf(what, size, "live at the peak");
	if (o->show & MT_SHOW_DIFF) {
		at = o->diff_b;
		before = o->diff_a;
		*diff = 1;
		point_title(rp, &before, a, sizeof(a));
		point_title(rp, &at, b, sizeof(b));
		snprintf(what, size, "change from %s to %s", a, b);
	} else if (o->show & MT_SHOW_MAXIMUM) {
		at.kind = MT_AT_PEAK;
	} else if (o->show & MT_SHOW_LEAKS) {
		at.kind = MT_AT_END;
		snprintf(what, size, "leaks (live at the end)");
		/* --leak-kinds asked for, and the end classified: those kinds */
		if (o->leak_kinds && mt_session_end(rp->ses)->classified)
			return leak_kinds_profile(rp, o->leak_kinds, rc, what, size);
	} else if (o->show & MT_SHOW_TEMPORARY) {
		snprintf(what, size, "temporary allocations");
		*rc = mt_session_temporary(rp->ses, &p);
		return p;
	} else if (o->show & MT_SHOW_CALLS) {
		snprintf(what, size, "allocation calls");
		*fig = MT_EXPORT_CALLS;
		*rc = mt_session_calls(rp->ses, &p);
		return p;
	} else if (o->show & MT_SHOW_SNAPSHOTS && n) {
		at = snap_at(&rp->st->snapshots[n - 1]);
		point_title(rp, &at, b, sizeof(b));
		snprintf(what, size, "live at %s", b);
	} else if (o->show & MT_SHOW_DELTAS && n) {
		at = snap_at(&rp->st->snapshots[n - 1]);
		if (n > 1)
			before = snap_at(&rp->st->snapshots[n - 2]);
		*diff = 1;
		point_title(rp, &before, a, sizeof(a));
		point_title(rp, &at, b, sizeof(b));
		snprintf(what, size, "change from %s to %s", a, b);
	}
	p = profile_at(rp, &at, rc);
	if (p && *diff) {
		struct mt_profile *pa = profile_at(rp, &before, rc), *d = NULL;

		if (pa) {
			d = mt_profile_diff(pa, p);
			if (!d)
				*rc = MT_E_NOMEM;
		}
		mt_profile_free(pa);
		mt_profile_free(p);
		p = d;
	}
	return p;
}

/*
 * The tree of p as the one export of --format json (callee first),
 * collapsed or svg (caller first); what names it in the SVG's title.
 */
static int export_tree(struct report *rp, const struct mt_profile *p, enum mt_export_figure fig,
		       int diff, const char *what)
{
	enum mt_report_format fmt = rp->o->format;
	struct mt_tree *t = NULL;
	int rc = build_tree(rp, p, fmt != MT_FORMAT_JSON, 0, NULL, &t);

	if (rc == 0 && rp->o->top_sites && fmt == MT_FORMAT_JSON) {
		struct mt_tree_fn *fns = NULL;
		size_t n = 0;

		rc = mt_tree_fns(t, &fns, &n);
		if (rc == 0)
			rc = mt_export_fns_json(fns, n, rp->o->top_sites,
						fig == MT_EXPORT_CALLS ? MT_TREE_BY_BLOCKS :
						MT_TREE_BY_BYTES, mt_tree_node_cost(mt_tree_root(t)),
						rp->out);
		mt_tree_fns_free(fns, n);
	} else if (rc == 0 && fmt == MT_FORMAT_SVG) {
		const struct mt_header *h = mt_session_header(rp->ses);
		char title[1024];   /* a long command line is cut short */
		struct mt_svg_opts so = { title, fig, diff, rp->o->inverted };

		snprintf(title, sizeof(title), "memtrail: %s%s%s%s", what, rp->who,
			 h && h->cmdline && h->cmdline[0] ? ": " : "",
			 h && h->cmdline ? h->cmdline : "");
		rc = mt_export_svg(t, &so, rp->out);
	} else if (rc == 0) {
		rc = fmt == MT_FORMAT_COLLAPSED ? mt_export_collapsed(t, fig, rp->out) :
			mt_export_json(t, fig, rp->out);
	}
	mt_tree_free(t);
	return rc;
}

/* One entry of the massif file before its tree is built. */
struct massif_entry {
	struct mt_massif_snap s;
	struct mt_at at;           /* where its tree comes from; START: none */
	size_t order;
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
 * (empty trees), every snapshot and the end (detailed) and the peak. The
 * entries are sorted by time first, then each tree is built, written and
 * freed in turn: the session walks its snapshots forward, so memory stays
 * one profile and one tree however many snapshots there are.
 */
static int write_massif(struct report *rp)
{
	const struct mt_agg_stats *st = rp->st;
	size_t cap = 3 + MASSIF_SAMPLES + st->nsnapshots, n = 0;
	struct massif_entry *e = calloc(cap, sizeof(*e));
	struct mt_series_col cols[MASSIF_SAMPLES];
	uint64_t t1 = st->end_time_ns ? st->end_time_ns : 1;
	const struct mt_header *h = mt_session_header(rp->ses);
	int rc = MT_E_NOMEM;

	if (!e)
		goto out;
	e[n].s.time_ns = 0;
	e[n].order = n;
	n++;
	rc = mt_series_resample(mt_session_series(rp->ses), 0, t1 + 1, MASSIF_SAMPLES, NULL, cols);
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
		e[n].at = snap_at(&st->snapshots[i]);
		e[n].order = n;
		n++;
	}
	e[n].s.time_ns = st->peak_at_start ? 0 : st->peak_time_ns;
	e[n].s.heap_bytes = (uint64_t)st->peak_bytes;
	e[n].s.peak = 1;
	e[n].at.kind = MT_AT_PEAK;
	e[n].order = n;
	n++;
	e[n].s.time_ns = st->end_time_ns;
	e[n].s.heap_bytes = (uint64_t)st->end_bytes;
	e[n].at.kind = MT_AT_END;
	e[n].order = n;
	n++;
	qsort(e, n, sizeof(*e), cmp_massif);
	mt_export_massif_header(h ? h->cmdline : "", rp->out);
	rc = 0;
	for (size_t i = 0; i < n && rc == 0; i++) {
		struct mt_tree *t = NULL;

		if (e[i].at.kind != MT_AT_START) {
			struct mt_profile *p = profile_at(rp, &e[i].at, &rc);

			if (p)
				rc = build_tree(rp, p, 0, 1, NULL, &t);
			mt_profile_free(p);
			if (rc < 0)
				break;
		}
		e[i].s.tree = t;
		mt_export_massif_snap(i, &e[i].s, rp->o->threshold_pct, rp->out);
		mt_tree_free(t);
		if (ferror(rp->out))
			rc = MT_E_IO;
	}
out:
	free(e);
	return rc;
}

static int write_export(struct report *rp)
{
	int rc = 0, diff;
	enum mt_export_figure fig = MT_EXPORT_BYTES;
	char what[400];
	struct mt_profile *p = export_profile(rp, &fig, &rc, &diff, what, sizeof(what));

	if (!p)
		return rc < 0 ? rc : MT_E_NOMEM;
	rc = export_tree(rp, p, fig, diff, what);
	mt_profile_free(p);
	return rc;
}

static int missing_snapshot(const struct report *rp, const struct mt_at *p)
{
	return p->kind == MT_AT_SNAPSHOT &&
		(p->value > UINT32_MAX || mt_session_find_snapshot(rp->ses, (uint32_t)p->value) < 0);
}

int mt_report_write(struct mt_session *ses, const struct mt_report_opts *o, FILE *out)
{
	struct report rp;
	int rc;

	memset(&rp, 0, sizeof(rp));
	rp.ses = ses;
	rp.o = o;
	rp.out = out;
	rp.st = mt_session_stats(ses);
	if (o->show & MT_SHOW_DIFF && (missing_snapshot(&rp, &o->diff_a) ||
				       missing_snapshot(&rp, &o->diff_b))) {
		rc = MT_E_NOTFOUND;
		goto out;
	}
	if (o->thread > 0) {
		struct mt_session_thread t;

		rc = mt_session_only_thread(ses, o->thread);
		if (rc < 0)
			goto out;
		/* the first thread with that tid names it */
		for (size_t i = 0; i < mt_session_nthreads(ses); i++) {
			if (mt_session_thread(ses, i, &t) == 0 && t.tid == (uint64_t)o->thread) {
				snprintf(rp.who, sizeof(rp.who), " of thread %" PRId64 "%s%.40s%s",
					 o->thread, t.name ? " (" : "", t.name ? t.name : "",
					 t.name ? ")" : "");
				break;
			}
		}
	}
	if (o->tag && (rc = mt_session_only_tag(ses, o->tag)) < 0)
		goto out;
	if (o->tag) {
		size_t l = strlen(rp.who);

		if (*o->tag)
			snprintf(rp.who + l, sizeof(rp.who) - l, " tagged %.80s", o->tag);
		else
			snprintf(rp.who + l, sizeof(rp.who) - l, " untagged");
	}
	if (o->show & MT_SHOW_TAGS && o->format == MT_FORMAT_JSON)
		rc = write_tags(&rp, 1);
	else if (o->show & MT_SHOW_THREADS && o->format == MT_FORMAT_JSON)
		rc = json_threads(&rp);
	else if (o->format == MT_FORMAT_MASSIF)
		rc = write_massif(&rp);
	else if (o->format == MT_FORMAT_TEXT)
		rc = write_text(&rp);
	else if (o->show == MT_SHOW_SIZES && o->format == MT_FORMAT_JSON)
		rc = json_sizes(&rp);
	else if (o->show & MT_SHOW_SIZES)
		rc = MT_E_ARG;     /* one export at a time, and sizes are no tree */
	else
		rc = write_export(&rp);
out:
	if (o->warn) {
		const char *const *lines;
		size_t n = mt_session_warnings(ses, &lines);

		for (size_t i = 0; i < n; i++)
			o->warn(o->warn_ctx, lines[i]);
	}
	if (o->thread > 0)
		(void)mt_session_only_thread(ses, -1);
	if (rc >= 0 && ferror(out))
		rc = MT_E_IO;
	return rc < 0 ? rc : 0;
}

/* ---- two recordings compared ------------------------------------------------ */

/*
 * The source of a compare tree: stack ids below nold are the old run's,
 * from nold on the new run's. The new run's stacks are copied with their
 * ips tagged (bit 63, never set in a user-space return address), so that
 * resolve() knows whose symbolizer an ip goes to, and the tree's cache of
 * resolved ips keeps the two runs' addresses apart; frames of both runs
 * then meet by their labels.
 */
#define NEW_TAG (1ull << 63)

struct cmp_src {
	const struct mt_tree_source *old, *new_;
	uint32_t nold, nnew;
	struct mt_stack *stacks;   /* the new run's, tagged (depth 0: none) */
	uint64_t *ips;
	int *have;
	struct mt_tree_source src;
};

static const struct mt_stack *cmp_stack(void *ctx, uint32_t id)
{
	struct cmp_src *c = ctx;

	if (id < c->nold)
		return c->old->stack(c->old->ctx, id);
	id -= c->nold;
	return id < c->nnew && c->have[id] ? &c->stacks[id] : NULL;
}

static int cmp_resolve(void *ctx, uint64_t ip, const struct mt_frame **frames, size_t *n)
{
	struct cmp_src *c = ctx;

	if (ip & NEW_TAG)
		return c->new_->resolve(c->new_->ctx, ip & ~NEW_TAG, frames, n);
	return c->old->resolve(c->old->ctx, ip, frames, n);
}

static void cmp_fini(struct cmp_src *c)
{
	free(c->stacks);
	free(c->ips);
	free(c->have);
}

/*
 * new - old as one profile over the combined source c (filled here; the
 * caller frees it with cmp_fini). NULL with *rc set on failure.
 */
static struct mt_profile *cmp_profile(const struct mt_tree_source *old,
				      const struct mt_profile *pold,
				      const struct mt_tree_source *new_,
				      const struct mt_profile *pnew, struct cmp_src *c, int *rc)
{
	size_t nips = 0, k = 0;
	struct mt_profile *p = mt_profile_new();

	memset(c, 0, sizeof(*c));
	*rc = MT_E_NOMEM;
	if (!p)
		return NULL;
	c->old = old;
	c->new_ = new_;
	c->nold = (uint32_t)mt_profile_nstacks(pold);
	c->nnew = (uint32_t)mt_profile_nstacks(pnew);
	for (uint32_t j = 0; j < c->nnew; j++) {
		const struct mt_stack *st = new_->stack(new_->ctx, j);

		nips += st ? st->depth : 0;
	}
	c->stacks = calloc(c->nnew ? c->nnew : 1, sizeof(*c->stacks));
	c->have = calloc(c->nnew ? c->nnew : 1, sizeof(*c->have));
	c->ips = malloc((nips ? nips : 1) * sizeof(*c->ips));
	if (!c->stacks || !c->have || !c->ips)
		goto fail;
	for (uint32_t j = 0; j < c->nnew; j++) {
		const struct mt_stack *st = new_->stack(new_->ctx, j);

		if (!st)
			continue;
		c->stacks[j] = *st;
		c->stacks[j].id = c->nold + j;
		for (uint32_t i = 0; i < st->depth; i++)
			c->ips[k + i] = st->ips[i] | NEW_TAG;
		c->stacks[j].ips = c->ips + k;
		k += st->depth;
		c->have[j] = 1;
	}
	for (uint32_t i = 0; i < c->nold; i++) {
		struct mt_cost x = mt_profile_get(pold, i);

		x.bytes = -x.bytes;
		x.blocks = -x.blocks;
		x.allocs = -x.allocs;
		if ((x.bytes || x.blocks || x.allocs) && mt_profile_add(p, i, &x) < 0)
			goto fail;
	}
	for (uint32_t j = 0; j < c->nnew; j++) {
		struct mt_cost x = mt_profile_get(pnew, j);

		if ((x.bytes || x.blocks || x.allocs) && mt_profile_add(p, c->nold + j, &x) < 0)
			goto fail;
	}
	c->src.stack = cmp_stack;
	c->src.resolve = cmp_resolve;
	c->src.ctx = c;
	*rc = 0;
	return p;
fail:
	mt_profile_free(p);
	cmp_fini(c);
	return NULL;
}

/* The compare tree at one point (PEAK or END), as text or an export. */
static int compare_at(struct report *rp, struct mt_session *old, struct mt_session *new_,
		      const char *name, const struct mt_at *at)
{
	const struct mt_tree_source *so, *sn;
	struct mt_profile *po = NULL, *pn = NULL, *d = NULL;
	struct cmp_src c;
	int rc;

	memset(&c, 0, sizeof(c));
	if (!(so = mt_session_source(old, &rc)) || !(sn = mt_session_source(new_, &rc)))
		return rc;
	if ((rc = mt_session_profile(old, at, &po)) < 0 ||
	    (rc = mt_session_profile(new_, at, &pn)) < 0)
		goto out;
	d = cmp_profile(so, po, sn, pn, &c, &rc);
	if (!d)
		goto out;
	rp->src = &c.src;
	if (rp->o->format == MT_FORMAT_TEXT) {
		rc = text_tree(rp, name, d, 1, LIVE);
	} else {
		rc = export_tree(rp, d, MT_EXPORT_BYTES, 1, name);
	}
	rp->src = NULL;
out:
	mt_profile_free(po);
	mt_profile_free(pn);
	mt_profile_free(d);
	cmp_fini(&c);
	return rc;
}

/* One line of the compare table: old, new and the change. */
static void compare_line(FILE *out, const char *what, int64_t a, int64_t b, int bytes)
{
	char x[3][MT_FMT_LEN];

	if (bytes)
		fprintf(out, "  %-16s %16s %16s", what, bytes_str(x[0], sizeof(x[0]), a),
			bytes_str(x[1], sizeof(x[1]), b));
	else
		fprintf(out, "  %-16s %16s %16s", what, mt_fmt_signed(x[0], sizeof(x[0]), a, 0),
			mt_fmt_signed(x[1], sizeof(x[1]), b, 0));
	mt_fmt_signed(x[2], sizeof(x[2]), b - a, 1);
	fprintf(out, " %16s%s\n", x[2], bytes ? "B" : "");
}

int mt_report_compare(struct mt_session *old, const char *old_name, struct mt_session *new_,
		      const char *new_name, const struct mt_report_opts *o, FILE *out)
{
	static const struct mt_at peak = { MT_AT_PEAK, 0 }, end = { MT_AT_END, 0 };
	const struct mt_agg_stats *a = mt_session_stats(old), *b = mt_session_stats(new_);
	struct report rp;
	char name[512];
	int rc = 0;

	memset(&rp, 0, sizeof(rp));
	rp.ses = new_;
	rp.o = o;
	rp.out = out;
	rp.st = b;
	if (o->format == MT_FORMAT_TEXT) {
		fprintf(out, "compare: %s -> %s\n", old_name, new_name);
		fprintf(out, "  %-16s %16s %16s %16s\n", "", "old", "new", "change");
		compare_line(out, "peak", a->peak_bytes, b->peak_bytes, 1);
		compare_line(out, "peak blocks", a->peak_blocks, b->peak_blocks, 0);
		compare_line(out, "leaked", a->end_bytes, b->end_bytes, 1);
		compare_line(out, "leaked blocks", a->end_blocks, b->end_blocks, 0);
		compare_line(out, "allocations", (int64_t)a->allocations, (int64_t)b->allocations, 0);
		compare_line(out, "allocated", (int64_t)a->bytes_allocated,
			     (int64_t)b->bytes_allocated, 1);
		rp.sections = 1;
	}
	if (o->show & MT_SHOW_MAXIMUM) {
		snprintf(name, sizeof(name), "maximum, %s -> %s", old_name, new_name);
		rc = compare_at(&rp, old, new_, name, &peak);
	}
	if (rc == 0 && o->show & MT_SHOW_LEAKS &&
	    (o->format == MT_FORMAT_TEXT || !(o->show & MT_SHOW_MAXIMUM))) {
		snprintf(name, sizeof(name), "leaked, %s -> %s", old_name, new_name);
		rc = compare_at(&rp, old, new_, name, &end);
	}
	if (o->warn) {
		struct mt_session *both[2] = { old, new_ };

		for (size_t k = 0; k < 2; k++) {
			const char *const *lines;
			size_t n = mt_session_warnings(both[k], &lines);

			for (size_t i = 0; i < n; i++)
				o->warn(o->warn_ctx, lines[i]);
		}
	}
	if (rc >= 0 && ferror(out))
		rc = MT_E_IO;
	return rc < 0 ? rc : 0;
}

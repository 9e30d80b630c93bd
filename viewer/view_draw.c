/*
 * view_draw.c - curses drawing of `memtrail view` (see view_draw.h). Plain
 * ASCII only, so it works on any terminal: the graph is '#' (a full cell)
 * and ':' (at least half a cell), a column with any heap at all shows at
 * least a '.', and the cursor column is drawn in reverse video.
 */
#include <curses.h>
#include <inttypes.h>
#include <langinfo.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fmt.h"
#include "format.h"
#include "replay.h"
#include "session.h"
#include "view_draw.h"
#include "view_keys.h"

/* ---- colours: one table --------------------------------------------------- */

enum {
	C_NORMAL = 0,
	C_AXIS,
	C_GRAPH,
	C_PEAK,
	C_SNAP,
	C_MARK,
	C_CURSOR,
	C_TITLE,
	C_HEAD,
	C_SEL,
	C_GROWN,
	C_SHRUNK,
	C_STATUS,
	C_MSG,
	C_COUNT
};

static const struct {
	short fg, bg;             /* -1: the terminal's default */
	attr_t color_attr;        /* added to the colour pair */
	attr_t mono_attr;         /* used alone without colours */
} colors[C_COUNT] = {
	[C_NORMAL] = { -1, -1, A_NORMAL, A_NORMAL },
	[C_AXIS]   = { COLOR_CYAN, -1, A_NORMAL, A_NORMAL },
	[C_GRAPH]  = { COLOR_GREEN, -1, A_NORMAL, A_NORMAL },
	[C_PEAK]   = { COLOR_RED, -1, A_BOLD, A_BOLD },
	[C_SNAP]   = { COLOR_YELLOW, -1, A_BOLD, A_BOLD },
	[C_MARK]   = { COLOR_MAGENTA, -1, A_BOLD, A_BOLD },
	[C_CURSOR] = { COLOR_BLACK, COLOR_WHITE, A_NORMAL, A_REVERSE },
	[C_TITLE]  = { COLOR_WHITE, -1, A_BOLD, A_BOLD },
	[C_HEAD]   = { COLOR_CYAN, -1, A_UNDERLINE, A_UNDERLINE },
	[C_SEL]    = { COLOR_BLACK, COLOR_CYAN, A_NORMAL, A_REVERSE },
	[C_GROWN]  = { COLOR_RED, -1, A_NORMAL, A_NORMAL },
	[C_SHRUNK] = { COLOR_GREEN, -1, A_NORMAL, A_NORMAL },
	[C_STATUS] = { COLOR_BLACK, COLOR_WHITE, A_NORMAL, A_REVERSE },
	[C_MSG]    = { COLOR_YELLOW, -1, A_BOLD, A_BOLD },
};

static attr_t attrs[C_COUNT];

/* The terminal takes UTF-8 (the locale says so): an ellipsis is one. */
static int utf8;

void mt_view_draw_init(void)
{
	int color = has_colors() && !getenv("NO_COLOR");

	utf8 = !strcmp(nl_langinfo(CODESET), "UTF-8");
	if (color) {
		start_color();
		if (use_default_colors() == ERR)
			color = COLORS >= 8;
	}
	for (int i = 0; i < C_COUNT; i++) {
		if (color && i + 1 < COLOR_PAIRS) {
			short fg = colors[i].fg, bg = colors[i].bg;

			if (use_default_colors() == ERR) {
				fg = fg < 0 ? COLOR_WHITE : fg;
				bg = bg < 0 ? COLOR_BLACK : bg;
			}
			init_pair((short)(i + 1), fg, bg);
			attrs[i] = COLOR_PAIR(i + 1) | colors[i].color_attr;
		} else {
			attrs[i] = colors[i].mono_attr;
		}
	}
}

/* ---- helpers -------------------------------------------------------------- */

/* Writes s at (y, x) in colour c, clipped to the screen width. */
static void put(int y, int x, int c, const char *s)
{
	int room = COLS - x;

	if (y < 0 || y >= LINES || x >= COLS || room <= 0)
		return;
	attrset(attrs[c]);
	mvaddnstr(y, x, s, room);
	attrset(A_NORMAL);
}

/* Fills row y from x to the right edge with spaces in colour c. */
static void fill(int y, int x, int c)
{
	if (y < 0 || y >= LINES)
		return;
	attrset(attrs[c]);
	for (int i = x; i < COLS; i++)
		mvaddch(y, i, ' ');
	attrset(A_NORMAL);
}

/* The live bytes at the cursor, as exact as is known without a replay. */
static uint64_t cursor_bytes(const struct mt_view_app *app)
{
	const struct mt_view_point *p = mt_view_timeline_cursor(app->tl);
	const struct mt_agg_stats *st = mt_view_data_stats(app->data);
	const struct mt_series_col *c;

	if (app->mode == MT_VIEW_LIVE && !mt_view_app_stale(app))
		return (uint64_t)app->total.bytes;
	switch (p->kind) {
	case MT_VIEW_AT_PEAK:
		return (uint64_t)st->peak_bytes;
	case MT_VIEW_AT_SNAPSHOT:
		return p->snapshot < st->nsnapshots ?
			(uint64_t)st->snapshots[p->snapshot].live_bytes : 0;
	case MT_VIEW_AT_END:
		return (uint64_t)st->end_bytes;
	default:
		c = mt_view_timeline_col(app->tl, mt_view_timeline_cursor_col(app->tl));
		return c ? c->end_bytes : 0;
	}
}

/* ---- the timeline ----------------------------------------------------------- */

static void draw_timeline(const struct mt_view_app *app, const struct mt_view_layout *l)
{
	const struct mt_agg_stats *st = mt_view_data_stats(app->data);
	size_t n = mt_view_timeline_ncols(app->tl);
	size_t cur = mt_view_timeline_cursor_col(app->tl);
	size_t peak = mt_view_timeline_peak_col(app->tl);
	const struct mt_view_point *mark = mt_view_timeline_mark(app->tl);
	size_t markc = mt_view_timeline_mark_col(app->tl);
	uint64_t ymax = mt_view_timeline_ymax(app->tl);
	int gh = l->graph_h, x0 = l->axis_w;
	char buf[64], num[32];

	/* y axis: the top of the graph, its middle, and zero */
	for (int r = 0; r < gh; r++) {
		uint64_t v = 0;
		int label = r == 0 || r == gh - 1 || (gh >= 5 && r == gh / 2);

		if (label && r != gh - 1)
			v = (uint64_t)((double)ymax * (gh - r) / gh + 0.5);
		if (label)
			snprintf(buf, sizeof(buf), "%8s |", mt_fmt_size_short(num, sizeof(num), v));
		else
			snprintf(buf, sizeof(buf), "%8s |", "");
		put(l->graph_top + r, 0, C_AXIS, buf);
	}
	/* the columns */
	for (size_t i = 0; i < n; i++) {
		const struct mt_series_col *c = mt_view_timeline_col(app->tl, i);
		/* cells filled, in halves (2 per row), rounded to the nearest */
		uint64_t halves = ymax ? (uint64_t)((double)c->max_bytes * gh * 2 / (double)ymax + 0.5) : 0;
		int x = x0 + (int)i;

		if (c->max_bytes && !halves)
			halves = 1;
		for (int r = 0; r < gh; r++) {
			uint64_t below = (uint64_t)(gh - 1 - r) * 2;   /* halves under this row */
			int ch = ' ';
			int col = i == peak ? C_PEAK : C_GRAPH;

			if (halves >= below + 2)
				ch = '#';
			else if (halves == below + 1)
				ch = ':';
			if (r == gh - 1 && ch == ' ' && c->max_bytes)
				ch = '.';
			if (i == cur)
				col = C_CURSOR;
			else if (mark && i == markc && ch == ' ')
				ch = '|', col = C_MARK;
			if (x < COLS) {
				attrset(attrs[col]);
				mvaddch(l->graph_top + r, x, (chtype)ch);
				attrset(A_NORMAL);
			}
		}
	}
	/* the peak's label, beside its column on the top row */
	if (peak != SIZE_MAX) {
		int len, x;

		snprintf(buf, sizeof(buf), "peak %s B",
			 mt_fmt_count(num, sizeof(num), (uint64_t)st->peak_bytes));
		len = (int)strlen(buf);
		x = x0 + (int)peak + 2;
		if (x + len > COLS)
			x = x0 + (int)peak - 1 - len;
		if (x < x0)
			x = x0;
		put(l->graph_top, x, C_PEAK, buf);
	}
	/* the resident set beside the heap: a level per column, of its peak */
	if (l->rss_row >= 0) {
		static const char levels[] = " .:-=+*#%@";

		fill(l->rss_row, 0, C_NORMAL);
		put(l->rss_row, 0, C_AXIS, "     rss |");
		for (size_t i = 0; i < n && x0 + (int)i < COLS; i++) {
			uint64_t v = mt_view_timeline_col(app->tl, i)->rss_bytes;
			uint64_t pk = st->peak_rss_bytes;
			int k = !v || !pk ? 0 : 1 + (int)((unsigned __int128)(v - 1) * 9 / pk);

			attrset(attrs[C_MARK]);
			mvaddch(l->rss_row, x0 + (int)i, (chtype)levels[k > 9 ? 9 : k]);
			attrset(A_NORMAL);
		}
	}
	/*
	 * markers: snapshot numbers (pushed apart when several fall in one
	 * column, one blank between), the mark, and the cursor in reverse
	 * video over whatever is there
	 */
	fill(l->marks_row, 0, C_NORMAL);
	put(l->marks_row, 0, C_AXIS, "    snap |");
	{
		size_t ns = st->nsnapshots;
		int *pos = calloc(ns ? ns : 1, sizeof(*pos));
		int *len = calloc(ns ? ns : 1, sizeof(*len));

		for (size_t i = 0; pos && len && i < ns; i++) {
			len[i] = snprintf(buf, sizeof(buf), "%u", st->snapshots[i].index);
			pos[i] = (int)mt_view_timeline_snapshot_col(app->tl, i);
			if (i && pos[i] < pos[i - 1] + len[i - 1] + 1)
				pos[i] = pos[i - 1] + len[i - 1] + 1;
		}
		for (size_t i = ns, limit = n + 1; pos && len && i-- > 0;) {
			if (pos[i] + len[i] + 1 > (int)limit)
				pos[i] = (int)limit - len[i] - 1;
			limit = (size_t)(pos[i] > 0 ? pos[i] : 0);
		}
		for (size_t i = 0; pos && len && i < ns; i++) {
			snprintf(buf, sizeof(buf), "%u", st->snapshots[i].index);
			if (pos[i] >= 0)
				put(l->marks_row, x0 + pos[i], C_SNAP, buf);
		}
		free(pos);
		free(len);
	}
	/* the mark as an 'M', unless it would hide a snapshot number */
	if (mark && x0 + (int)markc < COLS) {
		chtype under = mvinch(l->marks_row, x0 + (int)markc) & A_CHARTEXT;

		attrset(attrs[C_MARK]);
		mvaddch(l->marks_row, x0 + (int)markc, under == ' ' ? 'M' : under);
		attrset(A_NORMAL);
	}
	if (x0 + (int)cur < COLS) {
		chtype under = mvinch(l->marks_row, x0 + (int)cur) & A_CHARTEXT;

		attrset(attrs[C_CURSOR]);
		mvaddch(l->marks_row, x0 + (int)cur, under == ' ' ? '^' : under);
		attrset(A_NORMAL);
	}
	/* x axis: time at the start, the middle and the end */
	fill(l->xaxis_row, 0, C_NORMAL);
	put(l->xaxis_row, 0, C_AXIS, "    time |");
	put(l->xaxis_row, x0, C_AXIS, mt_fmt_time_short(buf, sizeof(buf), 0));
	if (n > 40) {
		mt_fmt_time_short(buf, sizeof(buf), st->end_time_ns / 2);
		put(l->xaxis_row, x0 + (int)n / 2 - (int)strlen(buf) / 2, C_AXIS, buf);
	}
	mt_fmt_time_short(buf, sizeof(buf), st->end_time_ns);
	if (x0 + (int)n - (int)strlen(buf) > x0 + 8)
		put(l->xaxis_row, x0 + (int)n - (int)strlen(buf), C_AXIS, buf);
}

/* ---- the tree ------------------------------------------------------------------ */

/*
 * Column widths: wide enough for the largest figure of the tree (the root's
 * gross cost, plus a sign), never narrower than the headings; a leading
 * column stays free for the selection mark.
 */
struct widths {
	int bytes, pct, blocks, allocs, nums;
	/* the leaks view's kinds: 0 none; 1 a column of bytes per kind (kind
	 * wide each) in the allocs column's stead; 2, where those leave the
	 * labels too little room, a tag there: D, I, P, R for each kind the
	 * row has bytes of, '-' for the others */
	int kinds, kind;
};

static void draw_flat_head(const struct mt_view_app *app, const struct mt_view_layout *l,
			   const struct widths *w);
static void flat_widths(const struct mt_view_app *app, struct widths *w);

static int width_of(int64_t v, int min)
{
	char buf[32];
	int n = (int)strlen(mt_fmt_signed(buf, sizeof(buf), v, 1)) + 1;

	return n > min ? n : min;
}

static void widths(const struct mt_view_app *app, struct widths *w)
{
	const struct mt_tree *t = mt_view_model_tree(app->model);
	struct mt_cost g = { 0, 0, 0 };

	if (t)
		g = mt_tree_gross(t);
	w->bytes = width_of(g.bytes, 11);
	w->pct = 8;    /* "-100.00%" */
	w->blocks = width_of(g.blocks, 8);
	w->allocs = width_of(g.allocs, 7);
	if (app->mode == MT_VIEW_CALLS)   /* averages: never above the bytes */
		w->allocs = width_of(g.bytes, 7);
	w->nums = w->bytes + 1 + w->pct + 1 + w->blocks + 1 + w->allocs + 2;
	w->kinds = 0;
	w->kind = width_of(g.bytes, 9);
	if (mt_view_model_has_kinds(app->model) && !app->flat_on) {
		int cols = w->bytes + 1 + w->pct + 1 + w->blocks + 4 * (1 + w->kind) + 2;

		if (COLS - cols >= 24) {
			w->kinds = 1;
			w->nums = cols;
		} else {
			w->kinds = 2;
			w->allocs = 5;
			w->nums = w->bytes + 1 + w->pct + 1 + w->blocks + 1 + w->allocs + 2;
		}
	}
}

static void draw_title(const struct mt_view_app *app, const struct mt_view_layout *l,
		       int stale)
{
	char line[512], what[128], b[32], k[32], mk[128];
	const struct mt_view_point *cur = mt_view_timeline_cursor(app->tl);
	const struct mt_view_point *mark = mt_view_timeline_mark(app->tl);
	int plus = app->mode == MT_VIEW_DIFF;

	mt_view_timeline_describe(app->tl, cur, what, sizeof(what));
	mt_fmt_signed(b, sizeof(b), app->total.bytes, plus);
	mt_fmt_signed(k, sizeof(k), app->total.blocks, plus);
	switch (app->mode) {
	case MT_VIEW_LEAKS:
		if (app->leak_kind >= 0)
			snprintf(line, sizeof(line), "Leaked, %.*s (at the end): %s B in %s blocks",
				 (int)strlen(mt_leak_kind_label((unsigned)app->leak_kind)) - 1,
				 mt_leak_kind_label((unsigned)app->leak_kind), b, k);
		else
			snprintf(line, sizeof(line), "Leaked (live at the end): %s B in %s blocks",
				 b, k);
		break;
	case MT_VIEW_DIFF:
		if (mark)
			mt_view_timeline_describe(app->tl, mark, mk, sizeof(mk));
		else
			snprintf(mk, sizeof(mk), "start");
		snprintf(line, sizeof(line), "Diff from %s to %s: %s B, %s blocks", mk, what, b, k);
		break;
	case MT_VIEW_TEMPORARY:
		snprintf(line, sizeof(line), "Temporary allocations: %s in %s B", k, b);
		break;
	case MT_VIEW_CALLS:
		snprintf(line, sizeof(line), "Allocation calls of the whole run: %s for %s B", k, b);
		break;
	default: {
		/* the resident set beside the heap: the cursor column's sample */
		const struct mt_series_col *c =
			mt_view_timeline_col(app->tl, mt_view_timeline_cursor_col(app->tl));
		char rss[64] = "", r[32];

		if (c && c->rss_bytes)
			snprintf(rss, sizeof(rss), " (resident set %s)",
				 mt_fmt_size(r, sizeof(r), c->rss_bytes));
		snprintf(line, sizeof(line), "Live at %s: %s B in %s blocks%s", what, b, k, rss);
		break;
	}
	}
	if (stale)
		snprintf(line, sizeof(line), "Computing the tree at %s ...", what);
	fill(l->title_row, 0, C_NORMAL);
	put(l->title_row, 0, C_TITLE, line);
}

static void draw_head(const struct mt_view_app *app, const struct mt_view_layout *l)
{
	char line[256], how[128];
	const char *bytes = "bytes", *blocks = "blocks", *allocs = "allocs";
	struct widths w;

	widths(app, &w);
	if (app->flat_on) {
		flat_widths(app, &w);
		draw_flat_head(app, l, &w);
		return;
	}

	if (w.kinds == 2)
		allocs = "kinds";
	/* the layout and the order, after the columns' names */
	snprintf(how, sizeof(how), "%s%s, sorted by %s%s", app->by_tag ? "by tag, " : "",
		 app->inverted ? "caller first" : app->entries ? "callee first" :
		 "allocation sites first",
		 mt_view_sort_name(app->sort), app->focus_timeline ? "  [Tab: tree keys]" : "");
	if (w.kinds == 1) {
		snprintf(line, sizeof(line), "%*s %*s %*s %*s %*s %*s %*s  %s",
			 w.bytes, bytes, w.pct, "%", w.blocks, blocks, w.kind, "definite", w.kind, "indirect",
			 w.kind, "possible", w.kind, "reachable", how);
		fill(l->head_row, 0, C_NORMAL);
		put(l->head_row, 0, C_HEAD, line);
		return;
	}
	if (app->mode == MT_VIEW_DIFF)
		bytes = "+/- bytes", blocks = "+/- blks";
	else if (app->mode == MT_VIEW_TEMPORARY)
		bytes = "temp bytes", blocks = "temps";
	else if (app->mode == MT_VIEW_CALLS)
		blocks = "calls", allocs = "avg B";
	snprintf(line, sizeof(line), "%*s %*s %*s %*s  %s",
		 w.bytes, bytes, w.pct, "%", w.blocks, blocks, w.allocs, allocs, how);
	fill(l->head_row, 0, C_NORMAL);
	put(l->head_row, 0, C_HEAD, line);
}

/*
 * The flat list (f): per function, self bytes, %, blocks and calls, then
 * the same of its total, and the name. Eight numbers to a row: each column
 * as wide as its heading or the tree's total, no wider (no function's
 * figure exceeds the total), so that the name still has room.
 */
static int flat_width(int64_t v, int plus, int min)
{
	char buf[32];
	int n = (int)strlen(mt_fmt_signed(buf, sizeof(buf), v, plus));

	return n > min ? n : min;
}

static void flat_widths(const struct mt_view_app *app, struct widths *w)
{
	const struct mt_tree *t = mt_view_model_tree(app->model);
	struct mt_cost g = { 0, 0, 0 };
	int plus = app->mode == MT_VIEW_DIFF;

	if (t)
		g = mt_tree_gross(t);
	w->bytes = flat_width(g.bytes, plus, 7);
	w->pct = plus ? 8 : 7;    /* "-100.00%", "100.00%" */
	w->blocks = flat_width(g.blocks, plus, 6);
	w->allocs = flat_width(g.allocs, 0, 5);
}

static void draw_flat_head(const struct mt_view_app *app, const struct mt_view_layout *l,
			   const struct widths *w)
{
	char line[256];

	snprintf(line, sizeof(line), "  %*s %*s %*s %*s %*s %*s %*s %*s  function, by %s",
		 w->bytes, "self B", w->pct, "%", w->blocks, "blocks", w->allocs, "calls",
		 w->bytes, "total B", w->pct, "%", w->blocks, "blocks", w->allocs, "calls",
		 mt_view_flat_order_name(app->flat));
	fill(l->head_row, 0, C_NORMAL);
	put(l->head_row, 0, C_HEAD, line);
}

static void draw_flat(const struct mt_view_app *app, const struct mt_view_layout *l,
		      const struct widths *w)
{
	struct mt_view_flat *f = app->flat;
	size_t top = mt_view_flat_scroll(f, (size_t)l->tree_h);
	size_t sel = mt_view_flat_selected(f);
	const struct mt_tree *t = mt_view_model_tree(app->model);
	int64_t whole = t ? mt_tree_gross(t).bytes : 0;
	int plus = app->mode == MT_VIEW_DIFF;

	for (int y = 0; y < l->tree_h; y++) {
		const struct mt_tree_fn *fn = mt_view_flat_row(f, top + (size_t)y);
		char line[1024], b[2][32], k[2][32], p[2][16], a[2][32];

		fill(l->tree_top + y, 0, C_NORMAL);
		if (!fn) {
			if (y == 0 && !mt_view_flat_nrows(f))
				put(l->tree_top, 0, C_NORMAL, "  (nothing here)");
			continue;
		}
		for (int j = 0; j < 2; j++) {
			const struct mt_cost *c = j ? &fn->total : &fn->self;

			mt_fmt_signed(b[j], sizeof(b[j]), c->bytes, plus);
			mt_fmt_signed(k[j], sizeof(k[j]), c->blocks, plus);
			mt_fmt_signed(a[j], sizeof(a[j]), c->allocs, 0);
			if (whole)
				snprintf(p[j], sizeof(p[j]), "%.2f%%",
					 100.0 * (double)c->bytes / (double)whole);
			else
				snprintf(p[j], sizeof(p[j]), "-");
		}
		/* the first column marks the selected row */
		snprintf(line, sizeof(line), "  %*s %*s %*s %*s %*s %*s %*s %*s  %s",
			 w->bytes, b[0], w->pct, p[0], w->blocks, k[0], w->allocs, a[0],
			 w->bytes, b[1], w->pct, p[1], w->blocks, k[1], w->allocs, a[1],
			 fn->name);
		if (top + (size_t)y == sel) {
			line[0] = '>';
			fill(l->tree_top + y, 0, C_SEL);
			put(l->tree_top + y, 0, C_SEL, line);
		} else {
			put(l->tree_top + y, 0, C_NORMAL, line);
		}
	}
}

static void draw_tree(const struct mt_view_app *app, const struct mt_view_layout *l)
{
	const struct mt_view_model *m = app->model;
	size_t top = mt_view_model_top(m);
	size_t sel = mt_view_model_selected(m);
	int plus = app->mode == MT_VIEW_DIFF;
	/* percentages of the gross total, as report prints them (diffs too) */
	const struct mt_tree *t = mt_view_model_tree(m);
	int calls = app->mode == MT_VIEW_CALLS;   /* percentages of calls, averages */
	int64_t whole = !t ? 0 : calls ? mt_tree_gross(t).blocks : mt_tree_gross(t).bytes;
	struct widths w;
	int labelw;

	widths(app, &w);
	if (app->flat_on) {
		flat_widths(app, &w);
		draw_flat(app, l, &w);
		return;
	}
	labelw = COLS - w.nums;
	for (int y = 0; y < l->tree_h; y++) {
		const struct mt_view_row *r = mt_view_model_row(m, top + (size_t)y);
		const struct mt_cost *c;
		char line[1024], b[32], k[32], a[32], pct[16], fold[48];
		struct mt_cost kinds[MT_LEAK_KINDS];
		int indent, c_row;

		fill(l->tree_top + y, 0, C_NORMAL);
		if (!r) {
			if (y == 0 && !mt_view_model_nrows(m))
				put(l->tree_top, 0, C_NORMAL, "  (nothing here)");
			continue;
		}
		c = mt_tree_node_cost(r->node);
		if (whole)
			snprintf(pct, sizeof(pct), "%.2f%%", 100.0 *
				 (double)(calls ? c->blocks : c->bytes) / (double)whole);
		else
			snprintf(pct, sizeof(pct), "-");
		snprintf(fold, sizeof(fold), "... %u frames ...", r->fold);
		indent = (int)r->depth * 2;
		if (labelw > 20 && indent > labelw / 2)
			indent = labelw / 2;
		if (w.kinds && mt_view_model_row_kinds(m, top + (size_t)y, kinds) == 0 &&
		    w.kinds == 2) {
			for (unsigned j = 0; j < MT_LEAK_KINDS; j++)
				a[j] = kinds[j].bytes ? "DIPR"[j] : '-';
			a[MT_LEAK_KINDS] = '\0';
			snprintf(line, sizeof(line), "%*s %*s %*s %*s  %*s%s%s",
				 w.bytes, mt_fmt_signed(b, sizeof(b), c->bytes, 0), w.pct, pct,
				 w.blocks, mt_fmt_signed(k, sizeof(k), c->blocks, 0), w.allocs, a,
				 indent, "",
				 r->fold ? "+ " : !r->nchildren ? "  " : r->expanded ? "- " : "+ ",
				 r->fold ? fold : mt_tree_node_label(r->node));
		} else if (w.kinds) {
			char kb[MT_LEAK_KINDS][32];

			for (unsigned j = 0; j < MT_LEAK_KINDS; j++)
				mt_fmt_signed(kb[j], sizeof(kb[j]), kinds[j].bytes, 0);
			snprintf(line, sizeof(line), "%*s %*s %*s %*s %*s %*s %*s  %*s%s%s",
				 w.bytes, mt_fmt_signed(b, sizeof(b), c->bytes, 0), w.pct, pct,
				 w.blocks, mt_fmt_signed(k, sizeof(k), c->blocks, 0),
				 w.kind, kb[0], w.kind, kb[1], w.kind, kb[2], w.kind, kb[3],
				 indent, "",
				 r->fold ? "+ " : !r->nchildren ? "  " : r->expanded ? "- " : "+ ",
				 r->fold ? fold : mt_tree_node_label(r->node));
		} else
		snprintf(line, sizeof(line), "%*s %*s %*s %*s  %*s%s%s",
			 w.bytes, mt_fmt_signed(b, sizeof(b), c->bytes, plus),
			 w.pct, pct,
			 w.blocks, mt_fmt_signed(k, sizeof(k), c->blocks, plus),
			 w.allocs, mt_fmt_signed(a, sizeof(a), calls && c->blocks > 0 ?
						 (c->bytes + c->blocks / 2) / c->blocks : c->allocs, 0),
			 indent, "",
			 r->fold ? "+ " : !r->nchildren ? "  " : r->expanded ? "- " : "+ ",
			 r->fold ? fold : mt_tree_node_label(r->node));
		c_row = top + (size_t)y == sel ? C_SEL
		      : plus && c->bytes > 0 ? C_GROWN
		      : plus && c->bytes < 0 ? C_SHRUNK : C_NORMAL;
		if (c_row == C_SEL) {
			/* a '>' too, for terminals without reverse video */
			line[0] = '>';
			fill(l->tree_top + y, 0, C_SEL);
		}
		put(l->tree_top + y, 0, c_row, line);
	}
}

/* ---- status and help -------------------------------------------------------- */

static void draw_status(const struct mt_view_app *app, const struct mt_view_layout *l,
			int computing)
{
	const struct mt_agg_stats *st = mt_view_data_stats(app->data);
	const struct mt_view_point *cur = mt_view_timeline_cursor(app->tl);
	char line[1024], what[128], t[32], live[32], pk[32], lk[32], rec[64], smp[64] = "";
	const char *base = strrchr(app->file, '/');
	uint64_t sample = mt_session_sample(mt_view_data_session(app->data));

	fill(l->status_row, 0, C_STATUS);
	if (app->prompt) {
		snprintf(line, sizeof(line), "/%s_   (Enter: search, Esc: cancel)", app->input);
		put(l->status_row, 0, C_STATUS, line);
		return;
	}
	const struct mt_end *e = mt_view_data_end(app->data);
	/* a recording that stopped early has no leaks: what was live then */
	int stopped = e->clean && e->how == MT_END_STOPPED;

	mt_view_timeline_describe(app->tl, cur, what, sizeof(what));
	/* while the run is recorded, what is live at its end is not leaked yet */
	if (mt_view_data_writer_gone(app->data))
		snprintf(rec, sizeof(rec), "no END, pid %" PRIu32 " gone",
			 mt_session_header(mt_view_data_session(app->data))->pid);
	else if (mt_view_data_following(app->data))
		snprintf(rec, sizeof(rec), "%s", utf8 ? "recording\xe2\x80\xa6" : "recording...");
	else
		snprintf(rec, sizeof(rec), "%s %s B", stopped ? "live at stop" : "leaked",
			 mt_fmt_signed(lk, sizeof(lk), st->end_bytes, 0));
	/* a sampled log's byte figures are estimates: say so beside them */
	if (sample)
		snprintf(smp, sizeof(smp), " | sampled every %s: estimates",
			 mt_fmt_size_short(t, sizeof(t), sample));
	snprintf(line, sizeof(line), " %s %s: %s B | %s | peak %s B%s | %s | %s | %s | ?: help",
		 what,
		 mt_fmt_time_short(t, sizeof(t), cur->time_ns),
		 mt_fmt_count(live, sizeof(live), cursor_bytes(app)),
		 stopped && app->mode == MT_VIEW_LEAKS ? "live at stop" : mt_view_mode_name(app->mode),
		 mt_fmt_signed(pk, sizeof(pk), st->peak_bytes, 0),
		 smp,
		 rec,
		 base ? base + 1 : app->file,
		 mt_view_data_command(app->data));
	if (computing)
		snprintf(line, sizeof(line), " computing the tree at %s ...", what);
	else if (app->msg[0])
		snprintf(line, sizeof(line), " %s", app->msg);
	put(l->status_row, 0, app->msg[0] && !computing ? C_STATUS : C_STATUS, line);
}

static void draw_help(void)
{
	int y = 0;
	char line[256];

	erase();
	put(y++, 0, C_TITLE, "memtrail view - keys");
	for (const struct mt_view_keyhelp *k = mt_view_keys; k->keys && y < LINES - 1; k++) {
		snprintf(line, sizeof(line), "  %-18s %s", k->keys, k->what);
		put(y++, 0, C_NORMAL, line);
	}
	if (LINES > 1)
		put(LINES - 1, 0, C_STATUS, " press any key to go back, q to quit ");
}

void mt_view_draw(const struct mt_view_app *app, int computing)
{
	struct mt_view_layout l;
	int stale = mt_view_app_stale(app);

	if (app->help) {
		draw_help();
		return;
	}
	erase();
	mt_view_app_layout(app, &l);
	draw_timeline(app, &l);
	draw_title(app, &l, stale);
	draw_head(app, &l);
	draw_tree(app, &l);
	draw_status(app, &l, computing);
}

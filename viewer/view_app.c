/*
 * view_app.c - the viewer's state as a whole (see view_app.h): set-up,
 * layout and rebuilding the tree when the cursor, mark or mode changed.
 * No curses, no output.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "view_app.h"

int mt_view_app_init(struct mt_view_app *app, const char *file, struct mt_view_data *d,
		     int lines, int cols)
{
	memset(app, 0, sizeof(*app));
	app->file = file;
	app->data = d;
	app->leak_kind = -1;
	app->tl = mt_view_timeline_new(mt_view_data_session(d));
	app->model = mt_view_model_new();
	app->flat = mt_view_flat_new();
	if (!app->tl || !app->model || !app->flat) {
		mt_view_app_fini(app);
		return MT_E_NOMEM;
	}
	/* a run being recorded opens on "now", and stays there */
	if (mt_view_data_following(d)) {
		mt_view_timeline_live(app->tl, 1);
		mt_view_timeline_end(app->tl);
	}
	return mt_view_app_resize(app, lines, cols);
}

void mt_view_app_fini(struct mt_view_app *app)
{
	mt_view_model_free(app->model);
	mt_view_flat_free(app->flat);
	mt_view_timeline_free(app->tl);
	mt_view_data_free(app->data);
	app->model = NULL;
	app->flat = NULL;
	app->tl = NULL;
	app->data = NULL;
}

void mt_view_app_layout(const struct mt_view_app *app, struct mt_view_layout *l)
{
	int top = app->lines / 3;

	if (top < 7)
		top = 7;
	l->axis_w = 10;
	l->graph_top = 0;
	l->graph_h = top - 2;
	l->rss_row = -1;
	if (app->data && mt_view_data_stats(app->data)->rss_samples) {
		l->graph_h--;
		l->rss_row = top - 3;
	}
	l->marks_row = top - 2;
	l->xaxis_row = top - 1;
	l->title_row = top;
	l->head_row = top + 1;
	l->tree_top = top + 2;
	l->status_row = app->lines - 1;
	l->tree_h = l->status_row - l->tree_top;
	if (l->tree_h < 1)
		l->tree_h = 1;
}

int mt_view_app_resize(struct mt_view_app *app, int lines, int cols)
{
	struct mt_view_layout l;
	int w;

	app->lines = lines > 1 ? lines : 1;
	app->cols = cols > 1 ? cols : 1;
	mt_view_app_layout(app, &l);
	w = app->cols - l.axis_w;
	return mt_view_timeline_layout(app->tl, w > 1 ? (size_t)w : 1);
}

/* A point whose profile a growing run changes: the end or the peak. */
static int moves(const struct mt_view_point *p)
{
	return p && (p->kind == MT_VIEW_AT_END || p->kind == MT_VIEW_AT_PEAK);
}

int mt_view_app_poll(struct mt_view_app *app)
{
	int rc = mt_view_data_poll(app->data);

	if (rc == 0)
		return 0;
	if (rc < 0) {
		snprintf(app->msg, sizeof(app->msg), "cannot read the log on: %s",
			 mt_strerror(rc));
		return MT_REDRAW;
	}
	app->gen++;
	mt_view_timeline_live(app->tl, mt_view_data_following(app->data));
	rc = mt_view_timeline_grow(app->tl);
	if (rc < 0)
		snprintf(app->msg, sizeof(app->msg), "out of memory");
	return MT_REDRAW;
}

int mt_view_app_stale(const struct mt_view_app *app)
{
	const struct mt_view_point *cur = mt_view_timeline_cursor(app->tl);
	const struct mt_view_point *mark = mt_view_timeline_mark(app->tl);

	if (!app->built || app->b_mode != app->mode || app->b_inverted != app->inverted ||
	    app->b_entries != app->entries || app->b_by_tag != app->by_tag ||
	    (app->mode == MT_VIEW_LEAKS && app->b_leak_kind != app->leak_kind))
		return 1;
	/* the run grew: trees of the whole run, of the end or the peak change */
	if (app->b_gen != app->gen &&
	    ((app->mode != MT_VIEW_LIVE && app->mode != MT_VIEW_DIFF) || moves(cur) ||
	     (app->mode == MT_VIEW_DIFF && moves(mark))))
		return 1;
	if ((app->mode == MT_VIEW_LIVE || app->mode == MT_VIEW_DIFF) &&
	    !mt_view_point_same(&app->b_cur, cur))
		return 1;
	if (app->mode == MT_VIEW_DIFF && mark && !mt_view_point_same(&app->b_mark, mark))
		return 1;
	return 0;
}

int mt_view_app_refresh(struct mt_view_app *app)
{
	const struct mt_view_point *cur = mt_view_timeline_cursor(app->tl);
	const struct mt_view_point *mark = mt_view_timeline_mark(app->tl);
	struct mt_view_point start = { .kind = MT_VIEW_AT_COLUMN, .at = { MT_AT_START, 0 } };
	struct mt_tree *t;
	int rc, relayout, was_empty;

	if (!mt_view_app_stale(app))
		return 0;
	if (!mark)
		mark = &start;
	if (app->mode == MT_VIEW_LEAKS &&
	    (rc = mt_view_data_leak_kind(app->data, app->leak_kind)) < 0) {
		snprintf(app->msg, sizeof(app->msg), "cannot compute the tree: %s",
			 mt_strerror(rc));
		return rc;
	}
	rc = mt_view_data_tree(app->data, app->mode, &cur->at, &mark->at, app->inverted,
			       !app->entries, app->by_tag, app->sort, &t, &app->total);
	if (rc < 0) {
		snprintf(app->msg, sizeof(app->msg), "cannot compute the tree: %s",
			 mt_strerror(rc));
		return rc;
	}
	relayout = app->built && (app->b_inverted != app->inverted ||
				  app->b_entries != app->entries || app->b_by_tag != app->by_tag);
	/* a run followed from its start: its first tree opens as a new view */
	was_empty = app->built && !app->b_total.blocks && !app->b_total.allocs;
	if (relayout)
		mt_view_model_forget(app->model);
	rc = mt_view_model_set_tree(app->model, t);
	/* every block of the leaks view: each row's figures per leak kind */
	if (rc == 0) {
		struct mt_tree *kinds[MT_LEAK_KINDS];

		if (app->mode != MT_VIEW_LEAKS || app->leak_kind >= 0 ||
		    mt_view_data_kind_trees(app->data, app->inverted, !app->entries,
					    app->by_tag, kinds) < 0)
			mt_view_model_set_kinds(app->model, NULL);
		else
			mt_view_model_set_kinds(app->model, kinds);
	}
	/*
	 * a new view opens on its dominant chain; a new point keeps the
	 * user's rows, or, when they are still the chain the viewer opened,
	 * opens the new point's
	 */
	if (rc == 0 && (!app->built || relayout || app->b_mode != app->mode || was_empty))
		rc = mt_view_model_dominant(app->model, app->sort);
	else if (rc == 0)
		rc = mt_view_model_reopen(app->model, app->sort);
	if (rc > 0)
		rc = 0;
	/* the flat list is of callee-first trees only, not grouped by tag */
	if (rc == 0 && app->flat_on && (app->inverted || app->by_tag))
		app->flat_on = 0;
	if (rc == 0 && app->flat_on)
		rc = mt_view_flat_set(app->flat, mt_view_model_tree(app->model));
	if (rc < 0) {
		snprintf(app->msg, sizeof(app->msg), "out of memory");
		return rc;
	}
	app->built = 1;
	app->b_mode = app->mode;
	app->b_inverted = app->inverted;
	app->b_entries = app->entries;
	app->b_by_tag = app->by_tag;
	app->b_leak_kind = app->leak_kind;
	app->b_cur = *cur;
	app->b_mark = *mark;
	app->b_gen = app->gen;
	app->b_total = app->total;
	return 0;
}

const char *mt_view_mode_name(enum mt_view_mode m)
{
	switch (m) {
	case MT_VIEW_LIVE:      return "live";
	case MT_VIEW_LEAKS:     return "leaks";
	case MT_VIEW_DIFF:      return "diff";
	case MT_VIEW_TEMPORARY: return "temporary";
	case MT_VIEW_CALLS:     return "calls";
	default:                return "?";
	}
}

const char *mt_view_sort_name(enum mt_tree_key k)
{
	switch (k) {
	case MT_TREE_BY_BYTES:  return "bytes";
	case MT_TREE_BY_BLOCKS: return "blocks";
	case MT_TREE_BY_ALLOCS: return "allocations";
	case MT_TREE_BY_NAME:   return "name";
	default:                return "?";
	}
}

/*
 * view_timeline.h - the timeline pane's state in `memtrail view`: the heap
 * series (lib/series.h) resampled to the pane's width, the cursor and the
 * mark, and the point of the run each one stands for.
 *
 * A point is the peak, a snapshot, the end, or a column's end state (or
 * the latest point before it that the session has indexed); each
 * carries the struct mt_at (lib/agg.h) its profile is taken at, so the
 * tree pane shows exactly what `memtrail report` shows for the same point
 * (peak = the peak event, snapshot N = right after marker N). The model
 * never draws and never includes <curses.h>.
 *
 * Not here: drawing (view_draw.c), profiles and trees (view_data.h).
 */
#ifndef MT_VIEW_TIMELINE_H
#define MT_VIEW_TIMELINE_H

#include <stddef.h>
#include <stdint.h>

#include "agg.h"
#include "series.h"
#include "session.h"

struct mt_view_timeline;

enum mt_view_at {
	MT_VIEW_AT_COLUMN = 0,   /* the end state of the cursor's column (series.h) */
	MT_VIEW_AT_PEAK,
	MT_VIEW_AT_SNAPSHOT,
	MT_VIEW_AT_END,
};

struct mt_view_point {
	enum mt_view_at kind;
	size_t snapshot;         /* MT_VIEW_AT_SNAPSHOT: index into the run's snapshots */
	uint64_t time_ns;        /* where it is drawn on the time axis */
	struct mt_at at;         /* where its profile is taken */
};

/*
 * A new timeline over a session's series and figures (the peak, the
 * snapshots, the end) and its index (not owned: the session must outlive
 * the timeline). The cursor starts at the peak. NULL when out of memory.
 */
struct mt_view_timeline *mt_view_timeline_new(const struct mt_session *ses);

/*
 * Resamples the series into width columns (the whole run, start to end).
 * The cursor and the mark keep their points. Returns 0, MT_E_ARG (width 0)
 * or MT_E_NOMEM.
 */
int mt_view_timeline_layout(struct mt_view_timeline *tl, size_t width);

/*
 * The run has grown (a followed log): resamples it at the same width. The
 * cursor and the mark keep their points: one in the past stays where it
 * was, the peak and the end go where the run now has them.
 */
int mt_view_timeline_grow(struct mt_view_timeline *tl);

/* The run is still being recorded (on) or has ended: the end is "now". */
void mt_view_timeline_live(struct mt_view_timeline *tl, int on);

/* The columns of the last layout. */
size_t mt_view_timeline_ncols(const struct mt_view_timeline *tl);
const struct mt_series_col *mt_view_timeline_col(const struct mt_view_timeline *tl, size_t i);

/* The largest column maximum (the peak, unless the run is empty). */
uint64_t mt_view_timeline_ymax(const struct mt_view_timeline *tl);

/* The column holding time t, the peak's column (SIZE_MAX when there is no
 * peak) and snapshot i's column. */
size_t mt_view_timeline_col_of(const struct mt_view_timeline *tl, uint64_t t);
size_t mt_view_timeline_peak_col(const struct mt_view_timeline *tl);
size_t mt_view_timeline_snapshot_col(const struct mt_view_timeline *tl, size_t i);

/* The cursor's point and column; the mark's point (NULL when not set). */
const struct mt_view_point *mt_view_timeline_cursor(const struct mt_view_timeline *tl);
size_t mt_view_timeline_cursor_col(const struct mt_view_timeline *tl);
const struct mt_view_point *mt_view_timeline_mark(const struct mt_view_timeline *tl);
size_t mt_view_timeline_mark_col(const struct mt_view_timeline *tl);

/*
 * Cursor moves; each returns 1 if the cursor's point changed, else 0.
 * move: by delta columns (the point becomes that column's end); home: the
 * first column; end: the end of the run; peak: the peak; snapshot(dir): the
 * next (dir > 0) or previous (dir < 0) snapshot after / before the cursor.
 */
int mt_view_timeline_move(struct mt_view_timeline *tl, long delta);
int mt_view_timeline_home(struct mt_view_timeline *tl);
int mt_view_timeline_end(struct mt_view_timeline *tl);
int mt_view_timeline_peak(struct mt_view_timeline *tl);
int mt_view_timeline_snapshot(struct mt_view_timeline *tl, int dir);

/* Puts the mark on the cursor's point. */
void mt_view_timeline_set_mark(struct mt_view_timeline *tl);

/*
 * Describes point p for the status line: "peak", "end" ("now" while the
 * run is recorded), "snapshot 1 grown",
 * or "t=0.512s". Returns buf.
 */
char *mt_view_timeline_describe(const struct mt_view_timeline *tl,
				const struct mt_view_point *p, char *buf, size_t size);

/* Two points are the same profile point. */
int mt_view_point_same(const struct mt_view_point *a, const struct mt_view_point *b);

/* Frees the timeline; NULL is a no-op. */
void mt_view_timeline_free(struct mt_view_timeline *tl);

#endif

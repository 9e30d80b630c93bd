/*
 * view_timeline.c - columns, cursor and mark of the timeline pane (see
 * view_timeline.h). Pure state: no curses, no output.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "fmt.h"
#include "view_timeline.h"

struct mt_view_timeline {
	const struct mt_session *ses;
	const struct mt_series *s;
	const struct mt_agg_stats *st;
	struct mt_series_col *cols;
	size_t ncols;
	uint64_t t1;              /* columns cover [0, t1) */
	uint64_t ymax;
	size_t peak_col;
	struct mt_view_point cur, mark;
	size_t cur_col, mark_col;
	int has_mark;
	int live;                 /* the run is still being recorded */
};

static void point_peak(const struct mt_view_timeline *tl, struct mt_view_point *p)
{
	memset(p, 0, sizeof(*p));
	p->kind = MT_VIEW_AT_PEAK;
	p->time_ns = tl->st->peak_time_ns;
	p->at.kind = tl->st->peak_at_start ? MT_AT_START : MT_AT_PEAK;
}

struct mt_view_timeline *mt_view_timeline_new(const struct mt_session *ses)
{
	struct mt_view_timeline *tl = calloc(1, sizeof(*tl));
	const struct mt_agg_stats *st = mt_session_stats(ses);

	if (!tl)
		return NULL;
	tl->ses = ses;
	tl->s = mt_session_series(ses);
	tl->st = st;
	tl->t1 = st->end_time_ns + 1;
	tl->peak_col = SIZE_MAX;
	point_peak(tl, &tl->cur);
	return tl;
}

void mt_view_timeline_free(struct mt_view_timeline *tl)
{
	if (!tl)
		return;
	free(tl->cols);
	free(tl);
}

size_t mt_view_timeline_col_of(const struct mt_view_timeline *tl, uint64_t t)
{
	size_t i;

	if (!tl->ncols)
		return 0;
	if (t >= tl->t1)
		return tl->ncols - 1;
	i = (size_t)((unsigned __int128)t * tl->ncols / tl->t1);
	if (i >= tl->ncols)
		i = tl->ncols - 1;
	/* integer rounding: settle on the column whose slice holds t */
	while (i > 0 && tl->cols[i].t0_ns > t)
		i--;
	while (i + 1 < tl->ncols && tl->cols[i].t1_ns <= t)
		i++;
	return i;
}

/*
 * The point of column c: its end state (series.h), or the latest point
 * before it that the session has indexed, so that no cursor move waits
 * for a replay.
 */
static void column_point(const struct mt_view_timeline *tl, size_t c, struct mt_view_point *p)
{
	memset(p, 0, sizeof(*p));
	p->kind = MT_VIEW_AT_COLUMN;
	p->time_ns = tl->cols[c].t1_ns - 1;
	p->at.kind = MT_AT_TIME;
	p->at.value = mt_session_indexed_time(tl->ses, tl->cols[c].end_ns - 1);
}

/* The column a point is drawn in. */
static size_t point_col(const struct mt_view_timeline *tl, const struct mt_view_point *p)
{
	if (p->kind == MT_VIEW_AT_PEAK && tl->peak_col != SIZE_MAX)
		return tl->peak_col;
	if (p->kind == MT_VIEW_AT_END)
		return tl->ncols ? tl->ncols - 1 : 0;
	return mt_view_timeline_col_of(tl, p->time_ns);
}

/* The columns of the whole run so far in width columns, and their peak. */
static int resample(struct mt_view_timeline *tl, size_t width)
{
	struct mt_series_col *cols;
	int rc;

	if (!width)
		return MT_E_ARG;
	if (width != tl->ncols) {
		cols = realloc(tl->cols, width * sizeof(*cols));
		if (!cols)
			return MT_E_NOMEM;
		tl->cols = cols;
	}
	tl->t1 = tl->st->end_time_ns + 1;
	rc = mt_series_resample(tl->s, 0, tl->t1, width,
				tl->st->peak_at_start ? NULL : &tl->st->peak_time_ns, tl->cols);
	if (rc < 0)
		return rc;
	tl->ncols = width;
	tl->ymax = 0;
	tl->peak_col = SIZE_MAX;
	for (size_t i = 0; i < width; i++) {
		if (tl->cols[i].max_bytes > tl->ymax)
			tl->ymax = tl->cols[i].max_bytes;
		if (tl->cols[i].has_peak)
			tl->peak_col = i;
	}
	return 0;
}

int mt_view_timeline_layout(struct mt_view_timeline *tl, size_t width)
{
	int rc = resample(tl, width);

	if (rc < 0)
		return rc;
	tl->cur_col = point_col(tl, &tl->cur);
	if (tl->cur.kind == MT_VIEW_AT_COLUMN)  /* the same time in a new width */
		column_point(tl, tl->cur_col, &tl->cur);
	tl->mark_col = point_col(tl, &tl->mark);
	return 0;
}

/* A point named by kind (the peak, the end) where the run now has it. */
static void point_again(const struct mt_view_timeline *tl, struct mt_view_point *p)
{
	if (p->kind == MT_VIEW_AT_PEAK)
		point_peak(tl, p);
	else if (p->kind == MT_VIEW_AT_END)
		p->time_ns = tl->t1 - 1;
}

int mt_view_timeline_grow(struct mt_view_timeline *tl)
{
	int rc = resample(tl, tl->ncols);

	if (rc < 0)
		return rc;
	point_again(tl, &tl->cur);
	tl->cur_col = point_col(tl, &tl->cur);
	if (tl->has_mark) {
		point_again(tl, &tl->mark);
		tl->mark_col = point_col(tl, &tl->mark);
	}
	return 0;
}

void mt_view_timeline_live(struct mt_view_timeline *tl, int on)
{
	tl->live = on;
}

size_t mt_view_timeline_ncols(const struct mt_view_timeline *tl)
{
	return tl->ncols;
}

const struct mt_series_col *mt_view_timeline_col(const struct mt_view_timeline *tl, size_t i)
{
	return i < tl->ncols ? &tl->cols[i] : NULL;
}

uint64_t mt_view_timeline_ymax(const struct mt_view_timeline *tl)
{
	return tl->ymax;
}

size_t mt_view_timeline_peak_col(const struct mt_view_timeline *tl)
{
	return tl->peak_col;
}

size_t mt_view_timeline_snapshot_col(const struct mt_view_timeline *tl, size_t i)
{
	return i < tl->st->nsnapshots ? mt_view_timeline_col_of(tl, tl->st->snapshots[i].time_ns) : 0;
}

const struct mt_view_point *mt_view_timeline_cursor(const struct mt_view_timeline *tl)
{
	return &tl->cur;
}

size_t mt_view_timeline_cursor_col(const struct mt_view_timeline *tl)
{
	return tl->cur_col;
}

const struct mt_view_point *mt_view_timeline_mark(const struct mt_view_timeline *tl)
{
	return tl->has_mark ? &tl->mark : NULL;
}

size_t mt_view_timeline_mark_col(const struct mt_view_timeline *tl)
{
	return tl->mark_col;
}

int mt_view_point_same(const struct mt_view_point *a, const struct mt_view_point *b)
{
	if (a->at.kind != b->at.kind)
		return 0;
	if (a->at.kind == MT_AT_START || a->at.kind == MT_AT_END)
		return 1;
	return a->at.value == b->at.value;
}

/* Moves the cursor to point p; 1 if the profile point changed. */
static int set_cursor(struct mt_view_timeline *tl, const struct mt_view_point *p)
{
	int changed = !mt_view_point_same(&tl->cur, p);

	tl->cur = *p;
	tl->cur_col = point_col(tl, p);
	return changed;
}

int mt_view_timeline_move(struct mt_view_timeline *tl, long delta)
{
	struct mt_view_point p;
	size_t c = tl->cur_col;

	if (!tl->ncols)
		return 0;
	if (delta < 0)
		c = (size_t)-delta > c ? 0 : c - (size_t)-delta;
	else
		c = c + (size_t)delta >= tl->ncols ? tl->ncols - 1 : c + (size_t)delta;
	column_point(tl, c, &p);
	return set_cursor(tl, &p);
}

int mt_view_timeline_home(struct mt_view_timeline *tl)
{
	return mt_view_timeline_move(tl, -(long)tl->ncols);
}

int mt_view_timeline_end(struct mt_view_timeline *tl)
{
	struct mt_view_point p = { .kind = MT_VIEW_AT_END };

	p.time_ns = tl->t1 - 1;
	p.at.kind = MT_AT_END;
	return set_cursor(tl, &p);
}

int mt_view_timeline_peak(struct mt_view_timeline *tl)
{
	struct mt_view_point p;

	point_peak(tl, &p);
	return set_cursor(tl, &p);
}

int mt_view_timeline_snapshot(struct mt_view_timeline *tl, int dir)
{
	size_t n = tl->st->nsnapshots, pick = SIZE_MAX;
	const struct mt_view_point *c = &tl->cur;
	struct mt_view_point p = { .kind = MT_VIEW_AT_SNAPSHOT };
	const struct mt_agg_snapshot *sn;

	for (size_t i = 0; i < n; i++) {
		sn = &tl->st->snapshots[i];
		if (dir > 0) {
			int after = c->kind == MT_VIEW_AT_SNAPSHOT ? i > c->snapshot
				  : c->kind == MT_VIEW_AT_PEAK ? sn->seq > tl->st->peak_seq
				  : sn->time_ns > c->time_ns;
			if (after) {
				pick = i;
				break;
			}
		} else {
			int before = c->kind == MT_VIEW_AT_SNAPSHOT ? i < c->snapshot
				   : c->kind == MT_VIEW_AT_PEAK ? sn->seq < tl->st->peak_seq
				   : c->kind == MT_VIEW_AT_END ? 1
				   : sn->time_ns < c->time_ns;
			if (before)
				pick = i;
		}
	}
	if (pick == SIZE_MAX)
		return 0;
	sn = &tl->st->snapshots[pick];
	p.snapshot = pick;
	p.time_ns = sn->time_ns;
	p.at.kind = MT_AT_SEQ;
	p.at.value = sn->seq;
	set_cursor(tl, &p);
	return 1;
}

void mt_view_timeline_set_mark(struct mt_view_timeline *tl)
{
	tl->mark = tl->cur;
	tl->mark_col = tl->cur_col;
	tl->has_mark = 1;
}

char *mt_view_timeline_describe(const struct mt_view_timeline *tl,
				const struct mt_view_point *p, char *buf, size_t size)
{
	char t[32];
	const struct mt_agg_snapshot *sn;

	switch (p->kind) {
	case MT_VIEW_AT_PEAK:
		snprintf(buf, size, "peak");
		break;
	case MT_VIEW_AT_END:
		snprintf(buf, size, tl->live ? "now" : "end");
		break;
	case MT_VIEW_AT_SNAPSHOT:
		sn = p->snapshot < tl->st->nsnapshots ? &tl->st->snapshots[p->snapshot] : NULL;
		if (sn && sn->label[0])
			snprintf(buf, size, "snapshot %u %s", sn->index, sn->label);
		else
			snprintf(buf, size, "snapshot %u", sn ? sn->index : 0);
		break;
	default:  /* the time of the column's profile */
		snprintf(buf, size, "t=%s", mt_fmt_time_short(t, sizeof(t), p->at.value));
		break;
	}
	return buf;
}

/*
 * view_app.h - the whole state of `memtrail view` in one struct: the log
 * (view_data), the timeline (view_timeline), the tree pane (view_model) and
 * the modes, the screen size and the message line. The key handlers
 * (view_keys.c) change it and return MT_REDRAW / MT_QUIT flags; the drawing
 * (view_draw.c) only reads it. No curses here, so the tests can drive it.
 *
 * Not here: the terminal (cmd-view.c, view_draw.c).
 */
#ifndef MT_VIEW_APP_H
#define MT_VIEW_APP_H

#include <stddef.h>

#include "view_data.h"
#include "view_flat.h"
#include "view_model.h"
#include "view_timeline.h"

/* What a key handler asks of the main loop. */
enum {
	MT_REDRAW = 1 << 0,
	MT_QUIT   = 1 << 1,
};

struct mt_view_app {
	const char *file;
	struct mt_view_data *data;           /* owned */
	struct mt_view_timeline *tl;         /* owned */
	struct mt_view_model *model;         /* owned */
	struct mt_view_flat *flat;           /* owned: the flat list (f) */
	int flat_on;                         /* the flat list replaces the tree */
	int search_function;                 /* g finds the last function picked
					        in the flat list, not a pattern */

	enum mt_view_mode mode;
	int inverted;
	int entries;                         /* callee first from the entry points
					        (malloc...), not the allocation sites */
	int by_tag;                          /* a first level of tag paths (G) */
	enum mt_tree_key sort;
	int leak_kind;                       /* the leaks view: -1 every block
						live at the end, else the blocks
						of that enum mt_leak_kind (K) */
	struct mt_cost total;                /* of the profile the tree shows */

	/* what the current tree was built for; stale when it differs */
	int built;
	enum mt_view_mode b_mode;
	int b_inverted, b_entries, b_by_tag, b_leak_kind;
	struct mt_view_point b_cur, b_mark;
	unsigned gen, b_gen;                 /* times a followed log grew: now, and
					        when the tree was built */
	struct mt_cost b_total;              /* the built tree's total */

	int focus_timeline;                  /* Left/Right move the cursor, not the tree */
	int help;                            /* the help screen is up */
	int prompt;                          /* typing a search pattern */
	char input[128];                     /* the pattern being typed */
	char search[128];                    /* the last pattern searched */
	char msg[256];                       /* one-line message, "" for none */

	int lines, cols;                     /* screen size */
};

/* Screen layout for the current lines x cols. */
struct mt_view_layout {
	int graph_top, graph_h;   /* graph rows */
	int axis_w;               /* y-axis label width, left of the graph */
	int rss_row;              /* the resident set, a level per column; -1: the
				     log has no samples */
	int marks_row, xaxis_row; /* snapshot/cursor markers, time labels */
	int title_row, head_row;  /* tree title and column headings */
	int tree_top, tree_h;     /* tree rows */
	int status_row;
};

/*
 * Sets up app for the loaded log d (app takes d over, also on failure) and
 * a screen of lines x cols. Returns 0 or a negative MT_E_*.
 */
int mt_view_app_init(struct mt_view_app *app, const char *file, struct mt_view_data *d,
		     int lines, int cols);

/* Frees what app owns. */
void mt_view_app_fini(struct mt_view_app *app);

/* Records a new screen size and lays the timeline out again. 0 or MT_E_*. */
int mt_view_app_resize(struct mt_view_app *app, int lines, int cols);

/* The layout of the current screen size. */
void mt_view_app_layout(const struct mt_view_app *app, struct mt_view_layout *l);

/*
 * A followed log (view_data.h): takes what it gained; the timeline grows
 * (the cursor pinned to "now" stays there, one in the past stays put) and
 * trees that depend on the run's end become stale. Returns MT_REDRAW when
 * something came (or the message line says what failed), else 0.
 */
int mt_view_app_poll(struct mt_view_app *app);

/* 1 when the tree does not match the current mode, points or inversion
 * (or the run grew under a tree of its end, its peak or the whole run). */
int mt_view_app_stale(const struct mt_view_app *app);

/*
 * Rebuilds the tree for the current state if stale (a replay up to the
 * cursor's point when it is not cached); on opening, and when the mode or
 * the layout changed, opens the dominant chain (mt_view_model_dominant). Returns 0 or a negative MT_E_*
 * (the message line then says what failed).
 */
int mt_view_app_refresh(struct mt_view_app *app);

/* Mode names for the status line: "live", "leaks", "diff", "temporary", "calls". */
const char *mt_view_mode_name(enum mt_view_mode m);

/* Sort names: "bytes", "blocks", "allocations", "name". */
const char *mt_view_sort_name(enum mt_tree_key k);

#endif

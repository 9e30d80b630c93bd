/*
 * view_draw.h - drawing `memtrail view` with curses: the timeline graph, the
 * tree pane, the status line and the help screen. Reads the state
 * (view_app.h) and never changes it. Colours are one table in view_draw.c;
 * without colours (TERM=vt100, or NO_COLOR set) the same table's
 * monochrome attributes are used.
 *
 * Not here: keys (view_keys.c), terminal set-up and the loop (cmd-view.c).
 */
#ifndef MT_VIEW_DRAW_H
#define MT_VIEW_DRAW_H

#include "view_app.h"

/* Sets up the colours once curses is running. */
void mt_view_draw_init(void);

/*
 * Draws the whole screen for app into stdscr (no refresh). With computing
 * set, the status line says the tree is being computed.
 */
void mt_view_draw(const struct mt_view_app *app, int computing);

#endif

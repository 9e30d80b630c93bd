/*
 * view_keys.h - what each key does in `memtrail view`: a key code from
 * getch() changes the state (view_app.h) and the handler returns MT_REDRAW
 * and/or MT_QUIT. The keys are listed once, in mt_view_keys[], for the help
 * screen and the man page.
 *
 * Not here: reading keys and drawing (cmd-view.c, view_draw.c).
 */
#ifndef MT_VIEW_KEYS_H
#define MT_VIEW_KEYS_H

#include "view_app.h"

/* One line of the help screen. */
struct mt_view_keyhelp {
	const char *keys;
	const char *what;
};

/* The help lines, ending with { NULL, NULL }. */
extern const struct mt_view_keyhelp mt_view_keys[];

/* Handles one key (a getch() code). Returns MT_REDRAW / MT_QUIT flags. */
int mt_view_key(struct mt_view_app *app, int key);

#endif

/*
 * view_keys.c - the key bindings of `memtrail view` (see view_keys.h). Only
 * changes state through the model functions; never draws.
 */
#include <curses.h>
#include <string.h>

#include "error.h"
#include "view_keys.h"

#define CTRL(c) ((c) & 0x1f)

const struct mt_view_keyhelp mt_view_keys[] = {
	{ "Tab",              "switch the focus between the timeline and the tree" },
	{ "Left / Right",     "timeline focus: move the cursor one column" },
	{ "",                 "tree focus: collapse (or go to the parent) / expand" },
	{ "< / >",            "move the cursor one column, whatever has the focus" },
	{ "Home / End",       "cursor to the first column / to the end of the run" },
	{ "p",                "cursor to the peak (where view starts)" },
	{ "n / N",            "cursor to the next / previous snapshot" },
	{ "m",                "mark the cursor's point (for d)" },
	{ "Up / Down, k / j", "select the previous / next row of the tree" },
	{ "PgUp / PgDn",      "move the selection one page" },
	{ "Enter / +",        "expand the selected row (or a folded '... N frames ...')" },
	{ "-",                "collapse the selected row, or go to its parent" },
	{ "*",                "expand the selected row's whole subtree" },
	{ "i",                "invert the tree (caller first <-> callee first)" },
	{ "e",                "callee first from the allocation sites (the default,"
			      " 'f() via malloc')" },
	{ "",                 "<-> from the entry points (malloc, operator new...)" },
	{ "s",                "cycle the sort: bytes, blocks, allocations, name" },
	{ "f",                "flat list: functions by self bytes (their allocation sites)," },
	{ "",                 "s: by total, blocks, calls; Enter: its places in the tree" },
	{ "/",                "search a function name (Enter searches, Esc cancels)" },
	{ "g",                "next match of the last search (also F3, or / Enter)" },
	{ "l / K",            "leaks: live at the end, bytes per kind (l: back); K: one kind at a time" },
	{ "d",                "diff from the mark to the cursor, grown first (d: back)" },
	{ "t",                "temporary allocations of the whole run (t: back)" },
	{ "c",                "every allocation call of the run, most first (c: back)" },
	{ "T / G",            "T: the next thread's blocks only (then all); G: group by tag" },
	{ "?",                "this help (any key closes it)" },
	{ "q",                "quit (also Ctrl-C)" },
	{ NULL, NULL },
};

/* Runs a search and says how it went. */
static int do_search(struct mt_view_app *app, int from_selected)
{
	int rc;

	if (!app->search[0]) {
		snprintf(app->msg, sizeof(app->msg), "no search yet: type / and a function name");
		return MT_REDRAW;
	}
	rc = app->search_function ?
		mt_view_model_find_function(app->model, app->search, from_selected) :
		mt_view_model_search(app->model, app->search, from_selected);
	if (rc == MT_E_NOTFOUND)
		snprintf(app->msg, sizeof(app->msg), "not found: %s", app->search);
	else if (rc < 0)
		snprintf(app->msg, sizeof(app->msg), "search failed: %s", mt_strerror(rc));
	else
		snprintf(app->msg, sizeof(app->msg), "found: %s (g: next match)", app->search);
	return MT_REDRAW;
}

/* A key while the search prompt is open. */
static int prompt_key(struct mt_view_app *app, int key)
{
	size_t n = strlen(app->input);

	switch (key) {
	case 27:          /* Esc */
	case CTRL('g'):
		app->prompt = 0;
		app->msg[0] = '\0';
		return MT_REDRAW;
	case '\n':
	case '\r':
	case KEY_ENTER:
		app->prompt = 0;
		/* an empty pattern repeats the last search */
		if (app->input[0]) {
			snprintf(app->search, sizeof(app->search), "%s", app->input);
			app->search_function = 0;
			/* bring the tree up to date so the search sees it */
			mt_view_app_refresh(app);
			return do_search(app, 1);
		}
		return do_search(app, 0);
	case KEY_BACKSPACE:
	case 127:
	case CTRL('h'):
		if (n)
			app->input[n - 1] = '\0';
		return MT_REDRAW;
	case KEY_RESIZE:
		return MT_REDRAW;
	default:
		if (key >= 32 && key < 127 && n + 1 < sizeof(app->input)) {
			app->input[n] = (char)key;
			app->input[n + 1] = '\0';
		}
		return MT_REDRAW;
	}
}

static void set_mode(struct mt_view_app *app, enum mt_view_mode m)
{
	app->mode = app->mode == m ? MT_VIEW_LIVE : m;
}

/* A key while the flat list is up; -1 when the tree's handling applies. */
static int flat_key(struct mt_view_app *app, int key, const struct mt_view_layout *l)
{
	const struct mt_tree_fn *fn;

	switch (key) {
	case KEY_UP:
	case 'k':
		mt_view_flat_move(app->flat, -1);
		return MT_REDRAW;
	case KEY_DOWN:
	case 'j':
		mt_view_flat_move(app->flat, 1);
		return MT_REDRAW;
	case KEY_PPAGE:
		mt_view_flat_move(app->flat, -(long)l->tree_h);
		return MT_REDRAW;
	case KEY_NPAGE:
	case ' ':
		mt_view_flat_move(app->flat, (long)l->tree_h);
		return MT_REDRAW;
	case 's':
		mt_view_flat_next_order(app->flat);
		snprintf(app->msg, sizeof(app->msg), "sorted by %s",
			 mt_view_flat_order_name(app->flat));
		return MT_REDRAW;
	case 27:      /* Esc */
	case 'f':
		app->flat_on = 0;
		return MT_REDRAW;
	case '\n':
	case '\r':
	case KEY_ENTER:
		fn = mt_view_flat_row(app->flat, mt_view_flat_selected(app->flat));
		if (!fn)
			return MT_REDRAW;
		app->flat_on = 0;
		snprintf(app->search, sizeof(app->search), "%s", fn->name);
		app->search_function = 1;
		return do_search(app, 1);
	case '/':
	case 'g':
	case KEY_F(3):
	case '-':
	case '+':
	case '*':
	case KEY_BACKSPACE:
		return MT_REDRAW;   /* tree keys: not on the list */
	default:
		return -1;
	}
}

int mt_view_key(struct mt_view_app *app, int key)
{
	struct mt_view_layout l;

	if (key == KEY_RESIZE)
		return MT_REDRAW;
	if (app->prompt)
		return prompt_key(app, key);
	if (app->help) {
		app->help = 0;
		return key == 'q' ? MT_QUIT : MT_REDRAW;
	}
	app->msg[0] = '\0';
	mt_view_app_layout(app, &l);
	if (app->flat_on) {
		int r = flat_key(app, key, &l);

		if (r >= 0)
			return r;
	}
	switch (key) {
	case 'q':
	case 'Q':
		return MT_QUIT;
	case '?':
	case 'h':
	case KEY_F(1):
		app->help = 1;
		break;

	/* the timeline */
	case '\t':
		app->focus_timeline = !app->focus_timeline;
		break;
	case KEY_LEFT:
		if (app->focus_timeline)
			mt_view_timeline_move(app->tl, -1);
		else
			mt_view_model_collapse(app->model);
		break;
	case KEY_RIGHT:
		if (app->focus_timeline)
			mt_view_timeline_move(app->tl, 1);
		else
			mt_view_model_expand(app->model);
		break;
	case '<':
	case ',':
		mt_view_timeline_move(app->tl, -1);
		break;
	case '>':
	case '.':
		mt_view_timeline_move(app->tl, 1);
		break;
	case KEY_HOME:
		mt_view_timeline_home(app->tl);
		break;
	case KEY_END:
		mt_view_timeline_end(app->tl);
		break;
	case 'p':
		mt_view_timeline_peak(app->tl);
		break;
	case 'n':
		if (!mt_view_timeline_snapshot(app->tl, 1))
			snprintf(app->msg, sizeof(app->msg), "no snapshot after the cursor");
		break;
	case 'N':
		if (!mt_view_timeline_snapshot(app->tl, -1))
			snprintf(app->msg, sizeof(app->msg), "no snapshot before the cursor");
		break;
	case 'm':
		mt_view_timeline_set_mark(app->tl);
		snprintf(app->msg, sizeof(app->msg), "mark set: d shows the diff from here to the cursor");
		break;

	/* the tree */
	case KEY_UP:
	case 'k':
		mt_view_model_move(app->model, -1);
		break;
	case KEY_DOWN:
	case 'j':
		mt_view_model_move(app->model, 1);
		break;
	case KEY_PPAGE:
		mt_view_model_move(app->model, -(long)l.tree_h);
		break;
	case KEY_NPAGE:
	case ' ':
		mt_view_model_move(app->model, (long)l.tree_h);
		break;
	case '\n':
	case '\r':
	case KEY_ENTER:
	case '+':
		mt_view_model_expand(app->model);
		break;
	case '-':
	case KEY_BACKSPACE:
		mt_view_model_collapse(app->model);
		break;
	case '*':
		mt_view_model_expand_all(app->model);
		break;
	case 'i':
		app->inverted = !app->inverted;
		break;
	case 'f':
		if (app->inverted) {
			snprintf(app->msg, sizeof(app->msg),
				 "the flat list is of callee-first trees: i, then f");
			break;
		}
		if (app->by_tag) {
			snprintf(app->msg, sizeof(app->msg),
				 "the flat list is of ungrouped trees: G, then f");
			break;
		}
		mt_view_app_refresh(app);
		if (mt_view_model_tree(app->model) &&
		    mt_view_flat_set(app->flat, mt_view_model_tree(app->model)) == 0) {
			mt_view_flat_sort(app->flat, mt_view_flat_by_total(app->flat), app->sort);
			app->flat_on = 1;
			snprintf(app->msg, sizeof(app->msg),
				 "functions by %s: s other order, Enter to the tree, f back",
				 mt_view_flat_order_name(app->flat));
		} else {
			snprintf(app->msg, sizeof(app->msg), "no flat list: out of memory");
		}
		break;
	case 'e':
		app->entries = !app->entries;
		if (app->inverted)
			snprintf(app->msg, sizeof(app->msg), "caller first: i shows %s first",
				 app->entries ? "the entry points" : "the allocation sites");
		break;
	case 's':
		app->sort = (enum mt_tree_key)((app->sort + 1) % (MT_TREE_BY_NAME + 1));
		mt_view_model_sort(app->model, app->sort);
		mt_view_model_reopen(app->model, app->sort);
		snprintf(app->msg, sizeof(app->msg), "sorted by %s", mt_view_sort_name(app->sort));
		break;
	case '/':
		app->prompt = 1;
		app->input[0] = '\0';
		break;
	case 'g':
	case KEY_F(3):
		return do_search(app, 0);
	case 'l':
		set_mode(app, MT_VIEW_LEAKS);
		break;
	case 'K':
		/* the leak kinds of the check at exit, in the report's order */
		if (!mt_view_data_end(app->data)->classified) {
			snprintf(app->msg, sizeof(app->msg),
				 "leaks not classified: no leak check at the end of this log");
			break;
		}
		app->mode = MT_VIEW_LEAKS;
		app->leak_kind = app->leak_kind + 1 >= MT_LEAK_KINDS ? -1 : app->leak_kind + 1;
		snprintf(app->msg, sizeof(app->msg), "leaks: %s (K: next kind)",
			 app->leak_kind < 0 ? "every block live at the end" :
			 mt_leak_kind_label((unsigned)app->leak_kind));
		break;
	case 'd':
		if (!mt_view_timeline_mark(app->tl) && app->mode != MT_VIEW_DIFF)
			snprintf(app->msg, sizeof(app->msg), "no mark: diff from the start (m sets a mark)");
		set_mode(app, MT_VIEW_DIFF);
		break;
	case 't':
		set_mode(app, MT_VIEW_TEMPORARY);
		break;
	case 'c':
		set_mode(app, MT_VIEW_CALLS);
		/* the view ranks call sites by calls, as report --show-calls */
		if (app->mode == MT_VIEW_CALLS) {
			app->sort = MT_TREE_BY_ALLOCS;
			snprintf(app->msg, sizeof(app->msg),
				 "allocation calls of the whole run, sorted by calls (s: other sorts)");
		}
		break;
	case 'T': {
		char what[128];
		int rc = mt_view_data_next_thread(app->data, what, sizeof(what));

		if (rc < 0)
			snprintf(app->msg, sizeof(app->msg), "cannot restrict to a thread: %s",
				 mt_strerror(rc));
		else
			snprintf(app->msg, sizeof(app->msg), "trees of %s's blocks (T: next thread)",
				 what);
		/* every profile is another now */
		app->built = 0;
		break;
	}
	case 'G':
		app->by_tag = !app->by_tag;
		app->flat_on = 0;
		if (!app->by_tag)
			snprintf(app->msg, sizeof(app->msg), "not grouped by tag (G: group)");
		else if (!mt_session_ntags(mt_view_data_session(app->data)))
			snprintf(app->msg, sizeof(app->msg),
				 "grouped by tag path: this log has none (memtrail_tag_push)");
		else
			snprintf(app->msg, sizeof(app->msg),
				 "grouped by tag path (G: ungroup)");
		break;
	case CTRL('l'):
		break;
	default:
		return 0;
	}
	return MT_REDRAW;
}

/*
 * view_data.h - what `memtrail view` knows about a log: a session
 * (lib/session.h) that replayed it once at load time, with time marks (the
 * heap series, the run's figures, the leak, temporary and calls profiles,
 * every stack and a symbolizer), then profiles at the viewer's points from
 * the session's index, with a small cache so that going back to a point is
 * instant.
 *
 * Everything comes from lib/ (session, agg, series, tree): the same code
 * and the same numbers as `memtrail report`. No curses here.
 *
 * Not here: cursor and columns (view_timeline.h), expansion (view_model.h).
 */
#ifndef MT_VIEW_DATA_H
#define MT_VIEW_DATA_H

#include <stddef.h>
#include <stdint.h>

#include "agg.h"
#include "format.h"
#include "series.h"
#include "tree.h"

struct mt_progress_cb;
struct mt_view_data;

/* What the tree pane shows. */
enum mt_view_mode {
	MT_VIEW_LIVE = 0,   /* live at the cursor */
	MT_VIEW_LEAKS,      /* live at the end of the run */
	MT_VIEW_DIFF,       /* cursor minus mark */
	MT_VIEW_TEMPORARY,  /* temporary allocations of the whole run */
	MT_VIEW_CALLS,      /* every allocation call of the run (lib/sizes.h) */
	MT_VIEW_NMODES
};

/*
 * Opens and replays the log at path; with follow, one still being written
 * (mt_view_data_poll takes what it gains). On failure returns a negative MT_E_*
 * and, when err_offset is not NULL, the byte offset of the problem (0 when
 * there is none). A log cut short loads up to its last good chunk: see
 * mt_view_data_end() for how it ended (the same logs as `memtrail report`
 * reads: one with no readable event at all is an empty run). progress,
 * when not NULL, hears of the load replay's progress.
 */
int mt_view_data_open(const char *path, int follow, const struct mt_progress_cb *progress,
		      struct mt_view_data **out, uint64_t *err_offset);

/*
 * A followed log: takes the events written since the open or the last
 * poll (mt_session_poll); the run's figures, series, end and the profiles
 * at the end, temporary and calls then include them, and the cache goes.
 * Returns 1 when something came (events, a chunk, END) or the writer was
 * found gone (mt_view_data_writer_gone), 0 when nothing changed (or the
 * log is not followed), or a negative MT_E_*.
 */
int mt_view_data_poll(struct mt_view_data *d);

/* 1 while the log is followed and its END has not come yet. */
int mt_view_data_following(const struct mt_view_data *d);

/*
 * Following, nothing new at the last poll, and the process that writes the
 * log (the header's pid) no longer exists: killed outright, it will never
 * write END (a pid of another pid namespace can look gone too: the poll
 * goes on all the same).
 */
int mt_view_data_writer_gone(const struct mt_view_data *d);

/* The command line recorded in the log. */
const char *mt_view_data_command(const struct mt_view_data *d);

/* The session, the run's figures and how the log ended (from the load replay). */
struct mt_session;
const struct mt_session *mt_view_data_session(const struct mt_view_data *d);
const struct mt_agg_stats *mt_view_data_stats(const struct mt_view_data *d);
const struct mt_end *mt_view_data_end(const struct mt_view_data *d);

/*
 * The profile at a point, borrowed from the cache: valid until the next
 * call of mt_view_data_profile/_diff/_tree. NULL with *err set when the
 * replay failed.
 */
const struct mt_profile *mt_view_data_profile(struct mt_view_data *d, const struct mt_at *at,
					      int *err);

/*
 * Builds the tree for a mode: the profile at `at` (LIVE), at the end
 * (LEAKS), at `at` minus at `mark` (DIFF), the temporary profile
 * (TEMPORARY) or the calls profile (CALLS: per stack, bytes requested and
 * calls as blocks), with inverted, sites and by_tag as in mt_tree_opts and its
 * children sorted by key. *out is owned by the caller; *total gets the
 * profile's total. Returns 0 or a negative MT_E_*.
 */
int mt_view_data_tree(struct mt_view_data *d, enum mt_view_mode mode,
		      const struct mt_at *at, const struct mt_at *mark,
		      int inverted, int sites, int by_tag, enum mt_tree_key key,
		      struct mt_tree **out, struct mt_cost *total);

/*
 * The LEAKS tree from now on: the blocks of leak kind `kind` (enum
 * mt_leak_kind) of the check at the end, or every block live at the end
 * (kind -1). 0, or MT_E_NOTFOUND when the end is not classified.
 */
int mt_view_data_leak_kind(struct mt_view_data *d, int kind);

/*
 * The trees of each leak kind's blocks of the check at the end (enum
 * mt_leak_kind order), with inverted, sites and by_tag as in
 * mt_view_data_tree, for the leaks view's per-row kinds: owned by the
 * caller. 0, MT_E_NOTFOUND when the end is not classified, or another
 * negative MT_E_* (then out holds no tree).
 */
int mt_view_data_kind_trees(struct mt_view_data *d, int inverted, int sites, int by_tag,
			    struct mt_tree *out[MT_LEAK_KINDS]);

/*
 * Restricts every tree from now on to the blocks allocated by the next
 * thread of the log, in the order of their first event, and after the last
 * to every thread again (session.h mt_session_only_thread): the cached
 * profiles go. Writes what the trees now show into what ("thread TID
 * (NAME)" or "every thread"). Returns 0 or a negative MT_E_*.
 */
int mt_view_data_next_thread(struct mt_view_data *d, char *what, size_t size);

/* Warnings met so far (symbols, truncation), one line each; owned by d. */
size_t mt_view_data_warnings(const struct mt_view_data *d, const char *const **lines);

/* Frees everything; NULL is a no-op. */
void mt_view_data_free(struct mt_view_data *d);

#endif

/*
 * session.h - one log, read once, asked anything: the engine behind
 * `memtrail report` and `memtrail view`.
 *
 * mt_session_open() makes the one replay pass over the log, and the session
 * then owns, for as long as it lives, everything a reader asks about: the
 * header, how the log ended, the run's figures (lib/agg.h), the heap over
 * time (lib/series.h), every stack, a symbolizer of every module
 * the run loaded (including those loaded after the peak), and an index
 * that gives the profile (per stack: live bytes, blocks, allocations) at a
 * point without going back to the log:
 *   start, end, the peak     kept during the pass (the peak copy on write);
 *   every snapshot           a mark of the aggregator's journal;
 *   a time or event number   with time_marks, the journal's marks are taken
 *                            each time the run crosses a boundary of every
 *                            8 buckets of the series (at most 512 marks,
 *                            thinned as the series widens): a timeline's
 *                            column asks at the latest such point in it
 *                            (mt_session_indexed_time); any other point is
 *                            found by a replay that stops once past it.
 * A profile at a mark is rebuilt by applying the journal's frames (each
 * mark's changed stacks) from the nearest point the session already has in
 * hand (its cursor), forward; memory is the frames, which grow with the
 * stacks that change between marks, not with events.
 *
 * A log still being written (follow) is read on where the pass stopped
 * by mt_session_poll, as if the pass had read it in one go.
 *
 * Not here: the log's bytes (lib/replay.h, lib/reader.h), trees and output
 * (lib/tree.h, lib/export.h, lib/report.h), drawing (viewer/).
 */
#ifndef MT_SESSION_H
#define MT_SESSION_H

#include <stddef.h>
#include <stdint.h>

#include "agg.h"
#include "replay.h"
#include "series.h"

struct mt_sizes_bucket;
#include "tree.h"

struct mt_session;

struct mt_session_opts {
	/* Called during the pass (and any later replay): bytes done of total. */
	struct mt_progress_cb progress;
	/*
	 * Also mark the journal at the series' bucket boundaries, for readers
	 * that ask for many points along the timeline (the viewer). Costs
	 * memory: each mark keeps the stacks that changed since the last one.
	 * Without it, only the peak, the end and the snapshots are indexed.
	 */
	int time_marks;
	/*
	 * The run's figures alone (the summary): the pass skips per-stack
	 * costs, the journal and the series, and is as fast as a replay gets.
	 * The session then has no series (NULL) and no profiles (MT_E_ARG).
	 */
	int figures_only;
	/* Requested sizes in buckets too, for a histogram (lib/sizes.h). */
	int size_buckets;
	/*
	 * What this reader asks for seldom or never, left out of the pass to
	 * make each event cheaper: MT_TALLY_NO_* (lib/agg.h: per-thread
	 * figures, which mt_session_thread then gives as zeros; temporaries
	 * and requested sizes, which mt_session_temporary and
	 * mt_session_calls then get from a replay of their own, and
	 * mt_session_stats' sizes is NULL) and MT_SESSION_NO_SERIES
	 * (mt_session_series is NULL; ignored with time_marks, which need
	 * the series). 0 keeps everything.
	 */
	unsigned skip;
	/*
	 * The log may still be growing (a program recording it now): the
	 * session keeps what its pass needs to go on (the live blocks) for
	 * mt_session_poll. Not with figures_only (MT_E_ARG).
	 */
	int follow;
	/*
	 * The reader will show symbolized trees: once the pass has met its
	 * first stacks, the modules they run in are opened (debug info, the
	 * larger part of symbolizing) on a thread of the symbolizer's own
	 * while the pass goes on. The same work as opening them later, done
	 * side by side. Ignored with figures_only.
	 */
	int symbolize;
};
#define MT_SESSION_NO_SERIES (1u << 8)

/*
 * Opens the log at path and replays it once. Returns 0 and *out, or a
 * negative MT_E_* with *err_offset (if not NULL) the byte offset of the
 * problem. A log cut short opens up to its last good chunk (see
 * mt_session_end); one whose header is bad fails.
 */
int mt_session_open(const char *path, const struct mt_session_opts *o,
		    struct mt_session **out, uint64_t *err_offset);

/* What the pass found; owned by the session. */
const struct mt_header *mt_session_header(const struct mt_session *s);
const struct mt_end *mt_session_end(const struct mt_session *s);
const struct mt_agg_stats *mt_session_stats(const struct mt_session *s);
const struct mt_series *mt_session_series(const struct mt_session *s);  /* see figures_only */
/* The log's mean sampling interval in bytes, 0 when every allocation is in
 * it: its byte figures are then estimates (mt_replay_sample). */
uint64_t mt_session_sample(const struct mt_session *s);
size_t mt_session_nthreads(const struct mt_session *s);

/*
 * Thread index i of the log (0 .. mt_session_nthreads - 1): its kernel tid,
 * its name (THREAD_NAME; NULL when the log has none), and its figures
 * (lib/agg.h). Owned by the session. 0, or MT_E_NOTFOUND for an index the
 * log never announced.
 */
struct mt_session_thread {
	uint32_t tid;
	const char *name;
	struct mt_agg_thread_stats st;
};
int mt_session_thread(const struct mt_session *s, size_t i, struct mt_session_thread *out);

/*
 * Restricts every profile asked for from now on (mt_session_profile,
 * mt_session_replay_points, mt_session_temporary) to the blocks allocated by
 * the thread(s) with kernel tid `tid` (a tid the kernel reused names each
 * of its threads); tid < 0: every thread again. Points stay the run's (the
 * peak is the whole heap's peak), and so do the stats and the series.
 * Such a profile costs a replay that stops once past its point. Returns 0,
 * or MT_E_NOTFOUND when no thread of the log has that tid (the restriction
 * is then unchanged), or MT_E_NOMEM.
 */
int mt_session_only_thread(struct mt_session *s, int64_t tid);

/*
 * Tag paths of the log (memtrail_tag_push; lib/replay.h): ids 1 ..
 * mt_session_ntags, each a path such as "parser/lexer"; 0 is no tag ("").
 * mt_session_tag is NULL for an id beyond them; mt_session_stack_tag gives
 * the tag path id of a stack (all of a stack's blocks have it). Owned by
 * the session.
 */
size_t mt_session_ntags(const struct mt_session *s);
const char *mt_session_tag(const struct mt_session *s, uint32_t id);
uint32_t mt_session_stack_tag(const struct mt_session *s, uint32_t stack);

/*
 * Restricts every profile asked for from now on (mt_session_profile,
 * mt_session_replay_points, mt_session_temporary, mt_session_calls) to
 * the stacks of the tag
 * path `path` and the paths inside it ("parser" keeps "parser/lexer");
 * "" keeps the untagged stacks; NULL: every stack again. Both
 * restrictions may hold at once. A tag path is part of a stack's
 * identity, so this filters profiles without a replay. Returns 0, or
 * MT_E_NOTFOUND when no tag path of the log matches (the restriction is
 * then unchanged), or MT_E_NOMEM.
 */
int mt_session_only_tag(struct mt_session *s, const char *path);

/*
 * The stacks and the symbolizer for building trees (lib/tree.h); the
 * symbolizer starts on first use. NULL with *err set when it cannot.
 */
const struct mt_tree_source *mt_session_source(struct mt_session *s, int *err);

/* Warning lines of the symbolizer (build-id mismatches); owned by s. */
size_t mt_session_warnings(const struct mt_session *s, const char *const **lines);

/*
 * The profile at `at`; a new profile owned by the caller. Returns 0, or
 * MT_E_NOTFOUND (a snapshot that does not exist), MT_E_NOMEM, or the
 * error of the replay a point off the marks needs.
 */
int mt_session_profile(struct mt_session *s, const struct mt_at *at, struct mt_profile **out);

/*
 * The profiles at n points of kinds START, SEQ, TIME or END, all found by
 * one replay that stops after the last (for a reader that wants many
 * points off the marks at once: a timeline's columns). outs[i] are new
 * profiles owned by the caller. Returns 0 or a negative MT_E_* (outs are
 * then all NULL).
 */
int mt_session_replay_points(struct mt_session *s, const struct mt_at *at, size_t n,
			     struct mt_profile **outs);

/*
 * The latest time u <= t whose profile (MT_AT_TIME u) the index has
 * without a replay: t itself when it has it (or the session has no time
 * marks). A timeline's column asks for its profile there.
 */
uint64_t mt_session_indexed_time(const struct mt_session *s, uint64_t t);

/*
 * The blocks live at the end of one kind (enum mt_leak_kind) of the leak
 * check the recorder made just before END: per stack, bytes and blocks
 * (allocs 0 but for the reachable, which are the end's profile less the
 * lost blocks). A new profile owned by the caller; 0, or MT_E_NOTFOUND
 * when the end is not classified (mt_end.classified; and for a
 * figures_only session), or MT_E_NOMEM.
 */
int mt_session_leak_profile(struct mt_session *s, unsigned kind, struct mt_profile **out);

/* Every leak check of the log (replay.h), in log order; owned by s. */
size_t mt_session_leak_checks(const struct mt_session *s, const struct mt_leak_check_at **out);

/*
 * The profile of temporary allocations over the whole run (agg.h), and of
 * every allocation call (lib/sizes.h's calls: calls and bytes requested
 * per stack), restricted as profiles are; new profiles owned by the
 * caller. Each comes from the pass, or from a replay of its own when the
 * pass skipped it or a thread restriction is on. 0, MT_E_ARG with
 * figures_only, MT_E_NOMEM or a replay's error.
 */
int mt_session_temporary(struct mt_session *s, struct mt_profile **out);
int mt_session_calls(struct mt_session *s, struct mt_profile **out);

/*
 * The histogram of requested sizes (lib/sizes.h; needs opts.size_buckets)
 * of the calls the session's restrictions keep (thread: from a replay of
 * its own, as mt_session_calls; tag) and, when only is not NULL, of the
 * stacks with a cost in only (e.g. what a tree's function filters keep),
 * into out[MT_SIZES_NBUCKETS]. 0, MT_E_ARG (figures_only, or no buckets),
 * MT_E_NOMEM or a replay's error.
 */
int mt_session_size_histogram(struct mt_session *s, const struct mt_profile *only,
			      struct mt_sizes_bucket *out);

/* The index in mt_session_stats()->snapshots of snapshot number idx, or -1. */
long mt_session_find_snapshot(const struct mt_session *s, uint32_t idx);

/*
 * With follow: takes the events appended to the log since the open or the
 * last poll, as the pass would have had it read them in one go: the
 * figures, the series, the journal and its marks, the stacks, threads and
 * modules, and the end (mt_session_end: still truncated, no END, until
 * END arrives) go on. A chunk not yet written whole is left for the next
 * poll; the file not grown costs an fstat. Pointers and profiles handed
 * out before stay valid; points named by kind (the end, the peak) may now
 * be later. Returns the number of new events (0: none; END, a sample or a
 * thread's name may still have come), or a negative MT_E_* (MT_E_ARG
 * without follow).
 */
int64_t mt_session_poll(struct mt_session *s);

/* Frees the session; NULL is a no-op. */
void mt_session_free(struct mt_session *s);

#endif

/*
 * summary.h - the figures of `memtrail report --summary` (SPEC section 4),
 * as a session (lib/session.h) found them, and their text and JSON forms.
 * Definitions (the session's aggregator, lib/agg.h, counts them):
 *   allocations   on_alloc calls (a realloc's new block counts 1)
 *   frees         on_free calls (a realloc's old block counts 1; frees of
 *                 addresses that were never live are not counted)
 *   peak          the maximum of live requested bytes, evaluated after each
 *                 event (both halves of a realloc are one event); the first
 *                 event reaching it wins; peak_blocks = live blocks then.
 *                 A run whose live bytes never rise above 0 has peak 0 at
 *                 time 0 and has_peak = 0.
 *   leaked        live at the end of the log (live when recording stopped,
 *                 for a recording that stopped early: see `stopped`).
 *   leak kinds    the recorder's leak check at exit (format.h LEAK):
 *                 definitely, indirectly, possibly lost and reachable,
 *                 bytes and blocks; classified = 0 when the log has none
 *                 just before END ("not classified").
 *   duration      time of the last record read.
 *   peak RSS      the largest resident-set sample the recorder wrote
 *                 (about one a second, and one as each chunk begins).
 *
 * Not here: call trees (lib/report.h), the replay itself (lib/replay.h).
 */
#ifndef MT_SUMMARY_H
#define MT_SUMMARY_H

#include <stdint.h>
#include <stdio.h>

#include "format.h"

struct mt_summary;

struct mt_summary_snapshot {
	uint32_t index;
	const char *label;      /* "" when unnamed */
	uint64_t seq, time_ns;
	uint64_t live_bytes, live_blocks;
	int classified;         /* a leak check came with it (memtrail_leak_check) */
	struct mt_leak_totals leaks;
};

/* The figures; strings and arrays are owned by the struct mt_summary. */
struct mt_summary_info {
	const char *command;    /* arguments joined with spaces */
	uint32_t pid;
	uint64_t duration_ns;
	uint64_t allocations, frees, bytes_allocated;
	uint64_t peak_bytes, peak_blocks, peak_time_ns;
	uint64_t peak_seq;      /* seq of the peak event; 0 when !has_peak */
	int has_peak;
	uint64_t leaked_bytes, leaked_blocks;
	int classified;
	struct mt_leak_totals leaks;   /* when classified */
	size_t nsnapshots;
	const struct mt_summary_snapshot *snapshots;
	size_t threads;
	uint64_t events;        /* events replayed */
	int clean;              /* the log has an END record */
	int truncated;          /* see struct mt_end */
	/* A bounded log that lost its start (struct mt_end): what it kept
	 * begins at kept_from_ns; the figures carry on from the run's. */
	int bounded;
	uint64_t kept_from_ns;
	/* Recording stopped early (END how = MT_END_STOPPED) while the program
	 * went on: leaked_* are then what was live when it stopped, not
	 * leaks, and stop_reason says why (owned by the struct mt_summary). */
	int stopped;
	const char *stop_reason;
	/* The largest resident-set sample (has_rss: the log has samples). */
	int has_rss;
	uint64_t peak_rss_bytes, peak_rss_time_ns;
	/* The log is sampled every sample bytes (0: it is not): its figures
	 * of bytes, blocks and calls are estimates. */
	uint64_t sample;
};

/* A new, empty summary. Returns NULL when out of memory. */
struct mt_summary *mt_summary_new(void);

/*
 * Fills s from a session (lib/session.h; one opened with figures_only is
 * enough). Returns 0 or MT_E_NOMEM.
 */
struct mt_session;
int mt_summary_of_session(struct mt_summary *s, const struct mt_session *ses);

/* The figures; owned by s. */
const struct mt_summary_info *mt_summary_info(const struct mt_summary *s);

/* Writes the summary as text lines. Returns 0 or MT_E_IO. */
int mt_summary_write_text(const struct mt_summary_info *i, FILE *out);

/*
 * Writes the summary as exactly one JSON object followed by a newline, with
 * the keys of SPEC section 4. Returns 0 or MT_E_IO.
 */
int mt_summary_write_json(const struct mt_summary_info *i, FILE *out);

/*
 * Writes s as a JSON string (quotes included): escapes quotes, backslashes
 * and control characters, replaces bytes that are not UTF-8 with U+FFFD.
 */
void mt_json_string(FILE *out, const char *s);

/* Frees s; NULL is a no-op. */
void mt_summary_free(struct mt_summary *s);

#endif

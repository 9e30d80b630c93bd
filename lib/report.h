/*
 * report.h - `memtrail report` minus the command line: given a log and the
 * options of SPEC section 4, writes trees, timeline and exports to a FILE.
 *
 * The CLI (viewer/cmd-report.c) parses arguments into struct mt_report_opts,
 * prints the summary itself (lib/summary.h) and calls mt_report_write() for
 * everything else. Warnings (build-id mismatch, truncated log) go to
 * opts->warn, never to stderr directly: lib/ does not print diagnostics.
 */
#ifndef MT_REPORT_H
#define MT_REPORT_H

#include <stdint.h>
#include <stdio.h>

struct mt_replay;

enum mt_report_show {
	MT_SHOW_MAXIMUM   = 1 << 0,
	MT_SHOW_LEAKS     = 1 << 1,
	MT_SHOW_SNAPSHOTS = 1 << 2,
	MT_SHOW_DELTAS    = 1 << 3,
	MT_SHOW_DIFF      = 1 << 4,
	MT_SHOW_TEMPORARY = 1 << 5,
	MT_SHOW_TIMELINE  = 1 << 6,
};

enum mt_report_format {
	MT_FORMAT_TEXT = 0,
	MT_FORMAT_JSON,       /* gprof2dot JSON */
	MT_FORMAT_COLLAPSED,  /* flamegraph.pl / speedscope */
	MT_FORMAT_MASSIF,     /* massif.out */
};

/* A point of the run: a snapshot number, or start / peak / end. */
enum mt_point_kind { MT_POINT_SNAPSHOT = 0, MT_POINT_START, MT_POINT_PEAK, MT_POINT_END };
struct mt_point {
	enum mt_point_kind kind;
	uint32_t snapshot;    /* for MT_POINT_SNAPSHOT */
};

struct mt_report_opts {
	unsigned show;              /* MT_SHOW_* bits; never 0 when called */
	enum mt_report_format format;
	double threshold_pct;       /* fold siblings below this percent (default 1.0) */
	unsigned depth;             /* frames printed per branch; 0 = all */
	unsigned top;               /* top-level entries kept; 0 = all */
	int inverted;               /* caller first */
	const char *include_function, *exclude_function;  /* POSIX extended regexes or NULL */
	const char *include_module, *exclude_module;
	struct mt_point diff_a, diff_b;
	int progress;               /* draw a progress bar on stderr for long replays */
	void (*warn)(void *ctx, const char *msg);  /* one line, no prefix, no newline */
	void *warn_ctx;
	/*
	 * Called during each replay (mt_replay_ops.on_progress) when not NULL:
	 * the CLI draws a progress bar (viewer/progress.h); lib/ never draws.
	 * Called once more with done = total = 0 after the last replay, before
	 * anything is written to out: time to erase the bar.
	 */
	void (*on_progress)(void *ctx, uint64_t done, uint64_t total);
	void *progress_ctx;
};

/*
 * Parses "3", "start", "peak" or "end" into *p. Returns 0 or MT_E_ARG.
 */
int mt_point_parse(const char *s, struct mt_point *p);

/*
 * Writes what opts asks for about the log replayed by r to out. Returns 0, or
 * a negative MT_E_* (MT_E_NOTFOUND when a --diff point names a snapshot that
 * does not exist; MT_E_ARG for a bad regex).
 */
int mt_report_write(struct mt_replay *r, const struct mt_report_opts *opts, FILE *out);

#endif

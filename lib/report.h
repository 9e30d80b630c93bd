/*
 * report.h - `memtrail report` minus the command line: given a log and the
 * options of SPEC section 4, writes trees, timeline and exports to a FILE.
 *
 * The CLI (viewer/cmd-report.c) parses arguments into struct mt_report_opts,
 * opens a session on the log (lib/session.h: the one replay, with the
 * progress bar), prints the summary itself (lib/summary.h) and calls
 * mt_report_write() for everything else. Warnings (build-id mismatch, truncated log) go to
 * opts->warn, never to stderr directly: lib/ does not print diagnostics.
 */
#ifndef MT_REPORT_H
#define MT_REPORT_H

#include <stdint.h>
#include <stdio.h>

#include "agg.h"
#include "format.h"

struct mt_session;

enum mt_report_show {
	MT_SHOW_MAXIMUM   = 1 << 0,
	MT_SHOW_LEAKS     = 1 << 1,
	MT_SHOW_SNAPSHOTS = 1 << 2,
	MT_SHOW_DELTAS    = 1 << 3,
	MT_SHOW_DIFF      = 1 << 4,
	MT_SHOW_TEMPORARY = 1 << 5,
	MT_SHOW_TIMELINE  = 1 << 6,
	MT_SHOW_CALLS     = 1 << 7,   /* every allocation call of the run, by stack */
	MT_SHOW_SIZES     = 1 << 8,   /* the histogram of requested sizes */
	MT_SHOW_THREADS   = 1 << 9,   /* per-thread figures (--by-thread) */
	MT_SHOW_TAGS      = 1 << 10,  /* per-tag-path figures (--by-tag); with
				       * MT_SHOW_THREADS, per thread and tag path */
};

enum mt_report_format {
	MT_FORMAT_TEXT = 0,
	MT_FORMAT_JSON,       /* gprof2dot JSON */
	MT_FORMAT_COLLAPSED,  /* flamegraph.pl / speedscope */
	MT_FORMAT_MASSIF,     /* massif.out */
	MT_FORMAT_SVG,        /* an interactive SVG flame graph */
};


/* memcheck's default for full checks: every kind but the reachable. */
#define MT_LEAK_KINDS_DEFAULT ((1u << MT_LEAK_DEFINITE) | (1u << MT_LEAK_INDIRECT) | \
			       (1u << MT_LEAK_POSSIBLE))

/*
 * The kinds named in text ("definite,indirect,possible,reachable", any
 * of them, comma-separated; "all" for every kind) as leak_kinds bits:
 * 0 and *bits, or MT_E_ARG.
 */
int mt_leak_kinds_parse(const char *text, unsigned *bits);

struct mt_report_opts {
	unsigned show;              /* MT_SHOW_* bits; never 0 when called */
	enum mt_report_format format;
	double threshold_pct;       /* fold siblings below this percent (default 1.0) */
	unsigned depth;             /* frames printed per branch; 0 = all */
	unsigned top;               /* top-level entries kept; 0 = all */
	int inverted;               /* caller first; svg: an icicle (root at the top) */
	int sites;                  /* callee first from the allocation sites
				       (mt_tree_opts.sites); not with inverted */
	unsigned top_sites;         /* instead of each tree, its functions by self
				       and by total cost, this many of each
				       (mt_tree_fns); 0: the trees */
	const char *include_function, *exclude_function;  /* POSIX extended regexes or NULL */
	const char *include_module, *exclude_module;
	struct mt_at diff_a, diff_b;   /* START, PEAK, END or SNAPSHOT (mt_at_parse) */
	unsigned leak_kinds;        /* with MT_SHOW_LEAKS on a classified log: a
				       tree per non-empty kind of these (bit 1 <<
				       enum mt_leak_kind) after the leaked tree;
				       0: MT_LEAK_KINDS_DEFAULT */
	int64_t thread;             /* trees of the blocks allocated by the thread(s)
				       with this kernel tid; 0: every thread */
	const char *tag;            /* trees of the stacks of this tag path and the
				       paths inside it ("": untagged); NULL: all */
	void (*warn)(void *ctx, const char *msg);  /* one line, no prefix, no newline */
	void *warn_ctx;
};

/*
 * The one parser of a point as a user names it: "start", "peak", "end", a
 * snapshot's number ("2") or its label ("grown"), among the snapshots of
 * st (a run's figures, lib/agg.h). A label that reads as a number or as
 * one of the three words names its snapshot only by number. Returns 0 and
 * *p; MT_E_NOTFOUND when no snapshot has that number or label; MT_E_ARG
 * for an empty text, or for a label that several snapshots carry (their
 * numbers tell them apart).
 */
int mt_at_parse(const char *text, const struct mt_agg_stats *st, struct mt_at *p);

/*
 * Writes what opts asks for about the log of session s to out. Returns 0,
 * or a negative MT_E_* (MT_E_NOTFOUND when a --diff point names a snapshot
 * that does not exist, opts->thread a tid no thread of the log has, or
 * opts->tag a tag path it has not;
 * MT_E_ARG for a bad regex, or for MT_SHOW_SIZES with a format other than
 * text and JSON or from a session opened without size_buckets).
 * MT_SHOW_THREADS is written as text or JSON
 * ({"threads": [...]}, alone); MT_SHOW_TAGS too ({"tags": [...]}, alone
 * or with MT_SHOW_THREADS, which then splits it by thread).
 */
int mt_report_write(struct mt_session *s, const struct mt_report_opts *opts, FILE *out);

/*
 * Two recordings of one program compared (--compare): what grew and shrank
 * from old to new at the peak (MT_SHOW_MAXIMUM) and at the end
 * (MT_SHOW_LEAKS), as trees of new - old in which the stacks of both runs
 * meet by their symbolized frames' labels (addresses differ between runs
 * and builds). Text: a table of both runs' figures first (old_name and
 * new_name name the logs), then the trees; JSON and collapsed: the one
 * tree (the peak's, else the end's). Other MT_SHOW_* bits are ignored.
 * Returns 0 or a negative MT_E_*.
 */
int mt_report_compare(struct mt_session *old, const char *old_name, struct mt_session *new_,
		      const char *new_name, const struct mt_report_opts *opts, FILE *out);

#endif

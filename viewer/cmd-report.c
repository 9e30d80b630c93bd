/*
 * cmd-report.c - `memtrail report`: parses the options of SPEC section 4,
 * reads the log once (a session, lib/session.h; --summary alone asks it for
 * the run's figures only), prints the summary itself (lib/summary.h) and
 * hands every other part of the report to mt_report_write() (lib/report.h).
 *
 * Not here: trees, timeline and exports (lib/report.c).
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "commands.h"
#include "progress.h"
#include "error.h"
#include "replay.h"
#include "report.h"
#include "session.h"
#include "summary.h"
#include "util.h"

const char cmd_report_usage[] =
	"usage: memtrail report [FILE] [options]\n"
	"\n"
	"Reports on the log FILE (default memtrail.data). With no --show-* option\n"
	"and no --diff: the summary, the peak (maximum) tree and the leaks tree.\n"
	"\n"
	"What to show:\n"
	"  --summary               command, duration, counts, peak, leaks, snapshots\n"
	"  --show-maximum          call tree of what was live at the peak\n"
	"  --show-leaks            call tree of what was still live at the end;\n"
	"                          then, when the recorder classified it at exit,\n"
	"                          one tree per kind (definitely lost first)\n"
	"  --leak-kinds LIST       the kinds --show-leaks draws: definite, indirect,\n"
	"                          possible, reachable, comma-separated, or all\n"
	"                          (default definite,indirect,possible); an export\n"
	"                          of --show-leaks with it holds those kinds\n"
	"  --show-snapshots        one tree per snapshot\n"
	"  --show-snapshot-deltas  what changed since the previous snapshot\n"
	"  --diff A B              what changed from point A to point B\n"
	"  --temporary             allocations freed right after they were made\n"
	"  --show-calls            every allocation call of the run, by call stack:\n"
	"                          calls, bytes requested, average size; most first\n"
	"  --show-sizes            requested sizes in power-of-two buckets: calls,\n"
	"                          % of calls, bytes (with --thread, --tag, -i/-x\n"
	"                          and the module filters: of the calls they keep)\n"
	"  --timeline              ASCII graph of the live heap over time\n"
	"  --by-thread             per thread: allocations, frees, bytes allocated,\n"
	"                          live at the peak and leaked (of the blocks it\n"
	"                          allocated), and its name\n"
	"  --by-tag                per tag path (memtrail_tag_push scopes, e.g.\n"
	"                          parser/lexer; - for none): allocations, bytes\n"
	"                          allocated, live at the peak and leaked; with\n"
	"                          --by-thread, per thread and tag path\n"
	"  --compare OLD           what grew and shrank from the log OLD to FILE at\n"
	"                          the peak (with --show-leaks: at the end), stacks\n"
	"                          matched by their symbolized frames\n"
	"A point is start, peak, end, a snapshot's number or its label.\n"
	"How to show it:\n"
	"  --thread TID            trees of the blocks allocated by thread TID only\n"
	"  --tag PATH              trees of the blocks allocated under tag path PATH\n"
	"                          or a path inside it (\"\" for untagged) only\n"
	"  -t, --threshold PCT     fold siblings below PCT percent (default 1)\n"
	"  --depth N               frames printed per branch (default: all)\n"
	"  --top N                 top-level entries kept (default: all)\n"
	"  --inverted              caller first (main at the root); svg: an icicle\n"
	"                          graph (the root at the top)\n"
	"  --sites                 allocation sites first: the first frame outside\n"
	"                          the allocator at the top, its entry point as a\n"
	"                          suffix (\"xmalloc [a.c:9] via malloc\")\n"
	"  --top-sites N           instead of each tree, its N functions with the\n"
	"                          most self bytes (their allocation sites), then\n"
	"                          with the most total bytes: bytes, %, blocks and\n"
	"                          calls of both (json: the first tree's)\n"
	"  -i, --include-function RE   only stacks with a function matching RE\n"
	"  -x, --exclude-function RE   drop stacks with a function matching RE\n"
	"  --include-module RE     only stacks with a frame in a module matching RE\n"
	"  --exclude-module RE     drop stacks with a frame in a module matching RE\n"
	"  --format FMT            text (default), json, collapsed, massif or svg;\n"
	"                          json, collapsed and svg export one tree\n"
	"                          (--show-calls: calls instead of bytes), json also\n"
	"                          --show-sizes alone; svg: an interactive flame\n"
	"                          graph, caller first (click: zoom, /: search; a\n"
	"                          diff grows red, shrinks blue)\n"
	"  -o OUT                  write to OUT instead of standard output\n"
	"  -h, --help              this help\n"
	"With DEBUGINFOD_URLS set, debug info missing locally is fetched from those\n"
	"debuginfod servers (cached as elfutils does; DEBUGINFOD_TIMEOUT seconds).\n"
	"Debug files with compressed DWARF are kept uncompressed in\n"
	"~/.cache/memtrail/debug (MEMTRAIL_DEBUG_CACHE: another directory, or off).\n";

enum {
	O_SUMMARY = 1, O_MAXIMUM, O_LEAKS, O_SNAPSHOTS, O_DELTAS, O_DIFF, O_TEMPORARY,
	O_TIMELINE, O_THRESHOLD, O_DEPTH, O_TOP, O_INVERTED, O_INC_FN, O_EXC_FN,
	O_INC_MOD, O_EXC_MOD, O_FORMAT, O_OUT, O_HELP, O_CALLS, O_SIZES, O_BY_THREAD,
	O_THREAD, O_COMPARE, O_BY_TAG, O_TAG,
	O_SITES, O_TOP_SITES, O_LEAK_KINDS,
};

static const struct opt options[] = {
	{ "summary", 0, 0, O_SUMMARY },
	{ "show-maximum", 0, 0, O_MAXIMUM },
	{ "show-leaks", 0, 0, O_LEAKS },
	{ "leak-kinds", 0, 1, O_LEAK_KINDS },
	{ "show-snapshots", 0, 0, O_SNAPSHOTS },
	{ "show-snapshot-deltas", 0, 0, O_DELTAS },
	{ "diff", 0, 1, O_DIFF },
	{ "temporary", 0, 0, O_TEMPORARY },
	{ "show-calls", 0, 0, O_CALLS },
	{ "show-sizes", 0, 0, O_SIZES },
	{ "timeline", 0, 0, O_TIMELINE },
	{ "by-thread", 0, 0, O_BY_THREAD },
	{ "thread", 0, 1, O_THREAD },
	{ "by-tag", 0, 0, O_BY_TAG },
	{ "tag", 0, 1, O_TAG },
	{ "compare", 0, 1, O_COMPARE },
	{ "threshold", 't', 1, O_THRESHOLD },
	{ "depth", 0, 1, O_DEPTH },
	{ "top", 0, 1, O_TOP },
	{ "inverted", 0, 0, O_INVERTED },
	{ "sites", 0, 0, O_SITES },
	{ "top-sites", 0, 1, O_TOP_SITES },
	{ "include-function", 'i', 1, O_INC_FN },
	{ "exclude-function", 'x', 1, O_EXC_FN },
	{ "include-module", 0, 1, O_INC_MOD },
	{ "exclude-module", 0, 1, O_EXC_MOD },
	{ "format", 0, 1, O_FORMAT },
	{ NULL, 'o', 1, O_OUT },
	{ "help", 'h', 0, O_HELP },
	{ NULL, 0, 0, 0 },
};

/* Warnings from lib/: each distinct line once. */
struct warned {
	char **lines;
	size_t n;
};

static void warn_once(void *ctx, const char *msg)
{
	struct warned *w = ctx;
	char **p;
	size_t i;

	for (i = 0; i < w->n; i++)
		if (!strcmp(w->lines[i], msg))
			return;
	p = realloc(w->lines, (w->n + 1) * sizeof(*p));
	if (p) {
		w->lines = p;
		w->lines[w->n++] = xstrdup(msg);
	}
	warning("%s", msg);
}

static void check_regex(const char *opt, const char *re)
{
	char msg[256];
	regex_t rx;
	int rc = regcomp(&rx, re, REG_EXTENDED | REG_NOSUB);

	if (rc) {
		regerror(rc, &rx, msg, sizeof(msg));
		die_usage("%s: bad regular expression '%s': %s", opt, re, msg);
	}
	regfree(&rx);
}

static double parse_percent(const struct opt_state *s, const char *arg)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(arg, &end);
	if (!*arg || *end || errno || !(v >= 0 && v <= 100))
		die_usage("%s: '%s' is not a percentage from 0 to 100", s->name, arg);
	return v;
}

/*
 * The snapshots of a run for an error message: "none", "0–2", "0–2, 5",
 * and with labels set, their labels: "0 loaded, 1 grown, 2 freed" (a long
 * list cut short with "...").
 */
static void describe_snapshots(const struct mt_agg_stats *st, int labels, char *buf, size_t size)
{
	size_t len = 0, n = st->nsnapshots;

	buf[0] = 0;
	if (!n) {
		snprintf(buf, size, "none");
		return;
	}
	for (size_t i = 0, j; i < n && len < size; i = j) {
		const struct mt_agg_snapshot *s = &st->snapshots[i];
		int w;

		j = i + 1;
		if (labels) {
			w = snprintf(buf + len, size - len, "%s%" PRIu32 "%s%s", i ? ", " : "",
				     s->index, s->label[0] ? " " : "", s->label);
		} else {
			/* a run of consecutive numbers as one range */
			while (j < n && st->snapshots[j].index == st->snapshots[j - 1].index + 1)
				j++;
			if (j - i > 1)
				w = snprintf(buf + len, size - len, "%s%" PRIu32 "\u2013%" PRIu32,
					     i ? ", " : "", s->index, st->snapshots[j - 1].index);
			else
				w = snprintf(buf + len, size - len, "%s%" PRIu32, i ? ", " : "",
					     s->index);
		}
		len += (size_t)w;
	}
	if (len >= size && size > 4)
		memcpy(buf + size - 4, "...", 4);
}

/*
 * A point as given on the command line (--diff), among the snapshots of the
 * log: "memtrail: error: no snapshot 99 in FILE (it has 0–2)" if none has
 * that number or label.
 */
static int parse_point(const char *opt, const char *arg, const char *file,
		       struct mt_session *ses, struct mt_at *p, char *err, size_t size)
{
	const struct mt_agg_stats *st = mt_session_stats(ses);
	char have[512];
	int rc = mt_at_parse(arg, st, p);
	int number = strspn(arg, "0123456789") == strlen(arg), labelled = 0;

	if (rc == 0)
		return 0;
	for (size_t i = 0; i < st->nsnapshots; i++)
		labelled |= st->snapshots[i].label[0] != 0;
	if (rc == MT_E_NOTFOUND) {
		describe_snapshots(st, !number && labelled, have, sizeof(have));
		snprintf(err, size, number ? "no snapshot %s in %s (it has %s)" :
			 "no snapshot labelled '%s' in %s (it has %s)", arg, file, have);
	} else if (*arg) {
		describe_snapshots(st, 1, have, sizeof(have));
		snprintf(err, size, "%s: snapshot label '%s' is not unique in %s (it has %s): "
			 "name the snapshot by its number", opt, arg, file, have);
	} else {
		snprintf(err, size, "%s: an empty point (start, peak, end, a snapshot's "
			 "number or label)", opt);
	}
	return rc;
}

/* Frees what cmd_report holds (out is closed unless it is stdout). */
static void free_all(struct mt_session *ses, struct mt_summary *s, FILE *out,
		     struct warned *w)
{
	size_t i;

	if (out != stdout)
		fclose(out);
	mt_summary_free(s);
	mt_session_free(ses);
	for (i = 0; i < w->n; i++)
		free(w->lines[i]);
	free(w->lines);
}

/*
 * --compare OLD [FILE]: both logs read (a session each), then the table
 * and the trees of what changed (lib/report.h mt_report_compare).
 */
/*
 * The tallies of the pass these options never read (lib/session.h), left
 * out so that each event costs less: the default report (summary, peak,
 * leaks) needs none of them.
 */
static unsigned skip_for(const struct mt_report_opts *o)
{
	unsigned skip = 0;

	if (!(o->show & MT_SHOW_THREADS))
		skip |= MT_TALLY_NO_THREADS;
	if (!(o->show & MT_SHOW_TEMPORARY))
		skip |= MT_TALLY_NO_TEMPORARY;
	if (!(o->show & (MT_SHOW_CALLS | MT_SHOW_SIZES)))
		skip |= MT_TALLY_NO_CALLS;
	if (!(o->show & MT_SHOW_TIMELINE) && o->format != MT_FORMAT_MASSIF)
		skip |= MT_SESSION_NO_SERIES;
	return skip;
}

static int compare(const char *old_file, const char *file, struct mt_report_opts *o,
		   int summary, const char *outpath)
{
	struct mt_session_opts so;
	struct mt_progress prog;
	struct mt_session *old, *cur;
	struct warned warned = { NULL, 0 };
	FILE *out = stdout;
	int rc;

	if (summary || o->show & ~(unsigned)(MT_SHOW_MAXIMUM | MT_SHOW_LEAKS) || o->thread ||
	    o->tag)
		die_usage("--compare shows the peak and the leaks only (--show-maximum, "
			  "--show-leaks); not with --summary, --diff, --thread, --tag or other views");
	if (o->format == MT_FORMAT_MASSIF)
		die_usage("--compare is written as --format text, json, collapsed or svg");
	if (!o->show)
		o->show = MT_SHOW_MAXIMUM;
	if ((o->show & (MT_SHOW_MAXIMUM | MT_SHOW_LEAKS)) ==
	    (MT_SHOW_MAXIMUM | MT_SHOW_LEAKS) && o->format != MT_FORMAT_TEXT)
		die_usage("--format %s: one tree only (--show-maximum or --show-leaks)",
			  o->format == MT_FORMAT_JSON ? "json" :
			  o->format == MT_FORMAT_SVG ? "svg" : "collapsed");
	mt_progress_init(&prog, stderr);
	memset(&so, 0, sizeof(so));
	so.progress.fn = mt_progress_update;
	so.progress.ctx = &prog;
	so.skip = skip_for(o);
	so.symbolize = 1;
	old = open_session(old_file, &so);
	mt_progress_clear(&prog);
	cur = open_session(file, &so);
	mt_progress_clear(&prog);
	if (outpath && !(out = fopen(outpath, "w"))) {
		mt_session_free(old);
		mt_session_free(cur);
		die("cannot write %s: %s", outpath, strerror(errno));
	}
	o->warn = warn_once;
	o->warn_ctx = &warned;
	rc = mt_report_compare(old, old_file, cur, file, o, out);
	warn_log_end(old_file, mt_session_end(old));
	warn_log_end(file, mt_session_end(cur));
	mt_session_free(old);
	mt_session_free(cur);
	for (size_t i = 0; i < warned.n; i++)
		free(warned.lines[i]);
	free(warned.lines);
	if (rc == 0 && (fflush(out) != 0 || ferror(out)))
		rc = MT_E_IO;
	if (out != stdout && fclose(out) != 0 && rc == 0)
		rc = MT_E_IO;
	if (rc == MT_E_IO)
		die("cannot write %s: %s", outpath ? outpath : "standard output", strerror(errno));
	if (rc < 0)
		die("%s: %s", file, mt_strerror(rc));
	return 0;
}

int cmd_report(int argc, char **argv)
{
	struct mt_report_opts o = { .threshold_pct = 1.0 };
	const char *file = NULL, *outpath = NULL, *arg, *diff[2] = { NULL, NULL };
	const char *old_file = NULL;
	int summary = 0, id, rc, saved, status = 0;
	struct warned warned = { NULL, 0 };
	struct opt_state st;
	struct mt_progress prog;
	struct mt_session *ses = NULL;
	struct mt_summary *s = NULL;
	FILE *out = stdout;
	char err[PATH_MAX + 256];

	opt_init(&st, "report", argc, argv, 0);
	while ((id = opt_next(&st, options, &arg)) != OPT_END) {
		switch (id) {
		case OPT_ARG:
			if (file)
				die_usage("report takes one log file, got '%s' and '%s'", file, arg);
			file = arg;
			break;
		case O_SUMMARY: summary = 1; break;
		case O_MAXIMUM: o.show |= MT_SHOW_MAXIMUM; break;
		case O_LEAKS: o.show |= MT_SHOW_LEAKS; break;
		case O_LEAK_KINDS:
			if (mt_leak_kinds_parse(arg, &o.leak_kinds) < 0)
				die_usage("--leak-kinds '%s': a comma-separated list of definite, "
					  "indirect, possible, reachable, or all", arg);
			break;
		case O_SNAPSHOTS: o.show |= MT_SHOW_SNAPSHOTS; break;
		case O_DELTAS: o.show |= MT_SHOW_DELTAS; break;
		case O_DIFF:
			if (st.i >= st.argc)
				die_usage("--diff needs two points: --diff A B");
			/* points are read once the log's snapshots are known */
			diff[0] = arg;
			diff[1] = st.argv[st.i++];
			if (!*diff[0] || !*diff[1])
				die_usage("--diff: an empty point (start, peak, end, a snapshot's "
					  "number or label)");
			o.show |= MT_SHOW_DIFF;
			break;
		case O_TEMPORARY: o.show |= MT_SHOW_TEMPORARY; break;
		case O_TIMELINE: o.show |= MT_SHOW_TIMELINE; break;
		case O_CALLS: o.show |= MT_SHOW_CALLS; break;
		case O_SIZES: o.show |= MT_SHOW_SIZES; break;
		case O_BY_THREAD: o.show |= MT_SHOW_THREADS; break;
		case O_THREAD: o.thread = opt_long(&st, arg, 1, INT32_MAX); break;
		case O_BY_TAG: o.show |= MT_SHOW_TAGS; break;
		case O_TAG: o.tag = arg; break;
		case O_COMPARE: old_file = arg; break;
		case O_THRESHOLD: o.threshold_pct = parse_percent(&st, arg); break;
		case O_DEPTH: o.depth = (unsigned)opt_long(&st, arg, 0, 1000000); break;
		case O_TOP: o.top = (unsigned)opt_long(&st, arg, 0, 1000000000); break;
		case O_INVERTED: o.inverted = 1; break;
		case O_SITES: o.sites = 1; break;
		case O_TOP_SITES: o.top_sites = (unsigned)opt_long(&st, arg, 1, 1000000000); break;
		case O_INC_FN: check_regex(st.name, arg); o.include_function = arg; break;
		case O_EXC_FN: check_regex(st.name, arg); o.exclude_function = arg; break;
		case O_INC_MOD: check_regex(st.name, arg); o.include_module = arg; break;
		case O_EXC_MOD: check_regex(st.name, arg); o.exclude_module = arg; break;
		case O_FORMAT:
			if (!strcmp(arg, "text"))
				o.format = MT_FORMAT_TEXT;
			else if (!strcmp(arg, "json"))
				o.format = MT_FORMAT_JSON;
			else if (!strcmp(arg, "collapsed"))
				o.format = MT_FORMAT_COLLAPSED;
			else if (!strcmp(arg, "massif"))
				o.format = MT_FORMAT_MASSIF;
			else if (!strcmp(arg, "svg"))
				o.format = MT_FORMAT_SVG;
			else
				die_usage("--format: '%s' is not text, json, collapsed, massif or svg",
					  arg);
			break;
		case O_OUT: outpath = arg; break;
		case O_HELP: help_command("report");
		}
	}
	if (!file)
		file = "memtrail.data";
	if (o.top_sites && o.format != MT_FORMAT_TEXT && o.format != MT_FORMAT_JSON)
		die_usage("--top-sites is written as --format text or json only");
	if (o.sites && o.inverted)
		die_usage("--sites and --inverted: a tree starts either at the allocation sites "
			  "or at main");
	if (old_file)
		return compare(old_file, file, &o, summary, outpath);
	if (o.show & MT_SHOW_TAGS && o.format == MT_FORMAT_JSON &&
	    (summary || (o.show & ~(unsigned)MT_SHOW_THREADS) != MT_SHOW_TAGS))
		die_usage("--format json: --by-tag cannot be combined with trees or --summary "
			  "(one JSON object each)");
	if (o.show & MT_SHOW_TAGS && o.format != MT_FORMAT_TEXT && o.format != MT_FORMAT_JSON)
		die_usage("--by-tag is written as --format text or json only");
	if (o.show & MT_SHOW_THREADS && o.format == MT_FORMAT_JSON && !(o.show & MT_SHOW_TAGS) &&
	    (summary || o.show != MT_SHOW_THREADS))
		die_usage("--format json: --by-thread cannot be combined with trees or --summary "
			  "(one JSON object each)");
	if (o.show & MT_SHOW_THREADS && o.format != MT_FORMAT_TEXT && o.format != MT_FORMAT_JSON)
		die_usage("--by-thread is written as --format text or json only");
	/* No --show-* and no --diff: the summary, the peak and the leaks. */
	if (!o.show && !summary) {
		o.show = MT_SHOW_MAXIMUM | MT_SHOW_LEAKS;
		summary = o.format == MT_FORMAT_TEXT;
	}
	if (summary && o.format != MT_FORMAT_TEXT && o.format != MT_FORMAT_JSON)
		die_usage("--summary is written as --format text or json only");
	if (summary && o.format == MT_FORMAT_JSON && o.show)
		die_usage("--format json: --summary cannot be combined with trees (one JSON object each)");
	if (o.show & MT_SHOW_SIZES && o.format != MT_FORMAT_TEXT && o.format != MT_FORMAT_JSON)
		die_usage("--show-sizes is written as --format text or json only");
	if (o.show & MT_SHOW_SIZES && o.format == MT_FORMAT_JSON && o.show != MT_SHOW_SIZES)
		die_usage("--format json: --show-sizes cannot be combined with trees (one JSON object each)");
	if (o.show & MT_SHOW_CALLS && o.format == MT_FORMAT_MASSIF)
		die_usage("--show-calls is written as --format text, json, collapsed or svg");

	mt_progress_init(&prog, stderr);
	{
		struct mt_session_opts so = { .progress = { mt_progress_update, &prog },
					      .figures_only = !o.show,
					      .size_buckets = (o.show & MT_SHOW_SIZES) != 0,
					      .skip = skip_for(&o),
					      /* trees are drawn: symbols come beside the pass */
					      .symbolize = (o.show & ~MT_SHOW_SIZES) != 0 };

		ses = open_session(file, &so);
		mt_progress_clear(&prog);
		/* an unknown tid is an error before anything is printed */
		if (o.thread > 0 && mt_session_only_thread(ses, o.thread) == MT_E_NOTFOUND) {
			mt_session_free(ses);
			die("--thread: no thread with tid %lld in %s", (long long)o.thread, file);
		}
		/* and so is a tag path it lacks ("" always names the untagged) */
		if (o.tag && mt_session_only_tag(ses, o.tag) == MT_E_NOTFOUND) {
			mt_session_free(ses);
			die("--tag: no tag path %s in %s", o.tag, file);
		}
	}
	/*
	 * From here on a failure frees what it holds before it dies (err
	 * names it): the replay, the summary, the output. errno is read
	 * right where a write is seen to fail, before other calls change it.
	 */
	if (outpath) {
		out = fopen(outpath, "w");
		if (!out) {
			out = stdout;
			snprintf(err, sizeof(err), "cannot write %s: %s", outpath, strerror(errno));
			goto fail;
		}
	}
	o.warn = warn_once;
	o.warn_ctx = &warned;
	if (diff[0] && (parse_point("--diff", diff[0], file, ses, &o.diff_a, err, sizeof(err)) < 0 ||
			parse_point("--diff", diff[1], file, ses, &o.diff_b, err, sizeof(err)) < 0))
		goto fail;

	if (summary) {
		s = mt_summary_new();
		if (!s) {
			snprintf(err, sizeof(err), "out of memory");
			goto fail;
		}
		rc = mt_summary_of_session(s, ses);
		if (rc < 0) {
			snprintf(err, sizeof(err), "%s: %s", file, mt_strerror(rc));
			goto fail;
		}
		if (o.format == MT_FORMAT_JSON)
			rc = mt_summary_write_json(mt_summary_info(s), out);
		else
			rc = mt_summary_write_text(mt_summary_info(s), out);
		saved = errno;
		mt_summary_free(s);
		s = NULL;
		errno = saved;
		if (rc < 0)
			goto write_failed;
		if (o.show)
			fputc('\n', out);
	}
	if (o.show) {
		/* The summary is out (or has failed) before the trees begin. */
		if (fflush(out) != 0)
			goto write_failed;
		rc = mt_report_write(ses, &o, out);
		saved = errno;
		mt_progress_clear(&prog);
		errno = saved;
		if (rc == MT_E_NOTFOUND && o.thread > 0 && !(o.show & MT_SHOW_DIFF)) {
			snprintf(err, sizeof(err), "--thread: no thread with tid %lld in %s",
				 (long long)o.thread, file);
			goto fail;
		}
		if (rc == MT_E_NOTFOUND) {
			snprintf(err, sizeof(err), "--diff: no such point in %s%s", file,
				 o.thread > 0 ? " (or no thread with that tid)" : "");
			goto fail;
		}
		/* output larger than stdio's buffer fails inside the report */
		if (rc == MT_E_IO && ferror(out))
			goto write_failed;
		if (rc < 0) {
			snprintf(err, sizeof(err), "%s: %s", file, mt_strerror(rc));
			goto fail;
		}
	}
	/* The truncation warning once, here, whoever replayed the log. */
	warn_log_end(file, mt_session_end(ses));
	if (fflush(out) != 0 || ferror(out))
		goto write_failed;
	if (out != stdout) {
		rc = fclose(out);
		out = stdout;
		if (rc != 0)
			goto write_failed;
	}
	free_all(ses, s, out, &warned);
	return status;
write_failed:
	snprintf(err, sizeof(err), "cannot write %s: %s", outpath ? outpath : "standard output",
		 strerror(errno));
fail:
	free_all(ses, s, out, &warned);
	die("%s", err);
}

/*
 * summary.c - the figures of `memtrail report --summary`, taken from a
 * session, and their text and JSON output (see summary.h).
 *
 * For: the summary's shape and its text and JSON. Not for: counting (the
 * session's aggregator, lib/agg.c, is the one tally of a run) or
 * diagnostics: the write functions write the report itself to a FILE.
 */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "fmt.h"
#include "format.h"
#include "replay.h"
#include "session.h"
#include "summary.h"

struct mt_summary {
	struct mt_summary_info info;
	char *command;
	char *stop_reason;
	struct mt_summary_snapshot *snaps;
	size_t snapcap;
	int nomem;
};

struct mt_summary *mt_summary_new(void)
{
	return calloc(1, sizeof(struct mt_summary));
}

static void reset(struct mt_summary *s)
{
	size_t i;

	for (i = 0; i < s->info.nsnapshots; i++)
		free((char *)s->snaps[i].label);
	free(s->command);
	s->command = NULL;
	free(s->stop_reason);
	s->stop_reason = NULL;
	memset(&s->info, 0, sizeof(s->info));
	s->info.command = "";
	s->info.snapshots = s->snaps;
	s->nomem = 0;
}

static void on_header(struct mt_summary *s, const struct mt_header *h)
{
	free(s->command);
	s->command = strdup(h->cmdline);
	if (!s->command)
		s->nomem = 1;
	s->info.command = s->command ? s->command : "";
	s->info.pid = h->pid;
}

static void on_end(struct mt_summary *s, const struct mt_end *e)
{
	s->info.duration_ns = e->time_ns;
	s->info.events = e->events;
	s->info.clean = e->clean;
	s->info.truncated = e->truncated;
	s->info.bounded = e->bounded;
	s->info.kept_from_ns = e->base_time_ns;
	s->info.stopped = e->clean && e->how == MT_END_STOPPED;
	if (e->stop_reason) {
		free(s->stop_reason);
		s->stop_reason = strdup(e->stop_reason);
		if (!s->stop_reason)
			s->nomem = 1;
	}
	s->info.stop_reason = s->stop_reason;
}

const struct mt_summary_info *mt_summary_info(const struct mt_summary *s)
{
	return &s->info;
}

void mt_summary_free(struct mt_summary *s)
{
	if (!s)
		return;
	reset(s);
	free(s->snaps);
	free(s);
}

/* ---- output -------------------------------------------------------------- */

static void secs(FILE *out, uint64_t ns)
{
	char b[40];

	fputs(mt_fmt_duration(b, sizeof(b), ns), out);
}

int mt_summary_write_text(const struct mt_summary_info *i, FILE *out)
{
	char a[32], b[32], h[32];
	size_t k;

	fprintf(out, "command:          %s\n", i->command);
	if (i->sample) {
		fprintf(out, "sampled every %s: figures are estimates",
			mt_fmt_size_short(a, sizeof(a), i->sample));
		/*
		 * How far: the live bytes B at any point are estimated with a
		 * variance of at most interval * B (a block of s bytes, drawn
		 * with p = 1 - exp(-s / interval) and counted s / p, adds
		 * s^2 (1 - p) / p <= s * interval), so one standard error is
		 * at most sqrt(interval / B) of them. Said for the peak.
		 */
		if (i->peak_bytes > 0)
			fprintf(out, " (the peak within %.1f %%, one standard error at most)",
				100.0 * sqrt((double)i->sample / (double)i->peak_bytes));
		fputc('\n', out);
	}
	fprintf(out, "duration:         ");
	secs(out, i->duration_ns);
	fprintf(out, "\n");
	if (i->bounded) {
		fprintf(out, "kept from:        ");
		secs(out, i->kept_from_ns);
		fprintf(out, " (a bounded log: the events before were dropped)\n");
	}
	fprintf(out, "allocations:      %s\n", mt_fmt_count(a, sizeof(a), i->allocations));
	fprintf(out, "frees:            %s\n", mt_fmt_count(a, sizeof(a), i->frees));
	fprintf(out, "bytes allocated:  %s B (%s)\n",
		mt_fmt_count(a, sizeof(a), i->bytes_allocated),
		mt_fmt_size(h, sizeof(h), i->bytes_allocated));
	fprintf(out, "peak:             %s B (%s) in %s blocks at ",
		mt_fmt_count(a, sizeof(a), i->peak_bytes),
		mt_fmt_size(h, sizeof(h), i->peak_bytes),
		mt_fmt_count(b, sizeof(b), i->peak_blocks));
	secs(out, i->peak_time_ns);
	fprintf(out, "\n");
	if (i->has_rss) {
		fprintf(out, "peak RSS:         %s B (%s) at ",
			mt_fmt_count(a, sizeof(a), i->peak_rss_bytes),
			mt_fmt_size(h, sizeof(h), i->peak_rss_bytes));
		secs(out, i->peak_rss_time_ns);
		fprintf(out, "\n");
	}
	/* A recording that stopped early knows no leaks: what was live then. */
	fprintf(out, i->stopped ? "live at stop:     %s B (%s) in %s blocks\n" :
		"leaked:           %s B (%s) in %s blocks\n",
		mt_fmt_count(a, sizeof(a), i->leaked_bytes),
		mt_fmt_size(h, sizeof(h), i->leaked_bytes),
		mt_fmt_count(b, sizeof(b), i->leaked_blocks));
	if (i->stopped)
		fprintf(out, "stopped early:    %s\n", i->stop_reason ? i->stop_reason : "");
	else if (!i->classified)
		fprintf(out, " not classified   (no leak check at exit)\n");
	else
		for (k = 0; k < MT_LEAK_KINDS; k++)
			fprintf(out, " %-17s%s B (%s) in %s blocks\n", mt_leak_kind_label(k),
				mt_fmt_count(a, sizeof(a), i->leaks.bytes[k]),
				mt_fmt_size(h, sizeof(h), i->leaks.bytes[k]),
				mt_fmt_count(b, sizeof(b), i->leaks.blocks[k]));
	fprintf(out, "threads:          %zu\n", i->threads);
	fprintf(out, "snapshots:        %zu\n", i->nsnapshots);
	for (k = 0; k < i->nsnapshots; k++) {
		const struct mt_summary_snapshot *sn = &i->snapshots[k];

		fprintf(out, "  snapshot %" PRIu32 " at ", sn->index);
		secs(out, sn->time_ns);
		fprintf(out, ": %s B (%s) in %s blocks",
			mt_fmt_count(a, sizeof(a), sn->live_bytes),
			mt_fmt_size(h, sizeof(h), sn->live_bytes),
			mt_fmt_count(b, sizeof(b), sn->live_blocks));
		if (sn->label[0]) {
			fprintf(out, " ");
			mt_json_string(out, sn->label);
		}
		fprintf(out, "\n");
		for (unsigned kd = 0; sn->classified && kd < MT_LEAK_KINDS; kd++)
			fprintf(out, "   %-16s %s B (%s) in %s blocks\n", mt_leak_kind_label(kd),
				mt_fmt_count(a, sizeof(a), sn->leaks.bytes[kd]),
				mt_fmt_size(h, sizeof(h), sn->leaks.bytes[kd]),
				mt_fmt_count(b, sizeof(b), sn->leaks.blocks[kd]));
	}
	return ferror(out) ? MT_E_IO : 0;
}

/* Length of the UTF-8 sequence at s (1-4), or 0 if it is not valid UTF-8. */
static size_t utf8_len(const unsigned char *s)
{
	unsigned c = s[0];
	size_t n, i;
	unsigned cp;

	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf)
		n = 2, cp = c & 0x1f;
	else if (c >= 0xe0 && c <= 0xef)
		n = 3, cp = c & 0x0f;
	else if (c >= 0xf0 && c <= 0xf4)
		n = 4, cp = c & 0x07;
	else
		return 0;
	for (i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (s[i] & 0x3f);
	}
	/* Overlong forms, surrogates and values past U+10FFFF are invalid. */
	if ((n == 3 && cp < 0x800) || (n == 4 && (cp < 0x10000 || cp > 0x10ffff)) ||
	    (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return n;
}

void mt_json_string(FILE *out, const char *str)
{
	const unsigned char *s = (const unsigned char *)str;
	size_t n;

	fputc('"', out);
	while (*s) {
		if (*s == '"' || *s == '\\') {
			fputc('\\', out);
			fputc(*s++, out);
		} else if (*s < 0x20 || *s == 0x7f) {
			fprintf(out, "\\u%04x", *s++);
		} else if ((n = utf8_len(s)) != 0) {
			fwrite(s, 1, n, out);
			s += n;
		} else {
			fputs("\\ufffd", out);
			s++;
		}
	}
	fputc('"', out);
}

static void json_secs(FILE *out, uint64_t ns)
{
	fprintf(out, "%" PRIu64 ".%09" PRIu64, ns / 1000000000u, ns % 1000000000u);
}

int mt_summary_write_json(const struct mt_summary_info *i, FILE *out)
{
	size_t k;

	fputs("{\"command\": ", out);
	mt_json_string(out, i->command);
	if (i->sample)
		fprintf(out, ", \"sample_bytes\": %" PRIu64, i->sample);
	fputs(", \"duration_s\": ", out);
	json_secs(out, i->duration_ns);
	if (i->bounded) {
		fputs(", \"kept_from_s\": ", out);
		json_secs(out, i->kept_from_ns);
	}
	fprintf(out, ", \"allocations\": %" PRIu64 ", \"frees\": %" PRIu64
		", \"bytes_allocated\": %" PRIu64 ", \"peak_bytes\": %" PRIu64
		", \"peak_blocks\": %" PRIu64 ", \"peak_time_s\": ",
		i->allocations, i->frees, i->bytes_allocated, i->peak_bytes, i->peak_blocks);
	json_secs(out, i->peak_time_ns);
	if (i->has_rss) {
		fprintf(out, ", \"peak_rss_bytes\": %" PRIu64 ", \"peak_rss_time_s\": ",
			i->peak_rss_bytes);
		json_secs(out, i->peak_rss_time_ns);
	}
	if (i->stopped) {
		fprintf(out, ", \"leaked_bytes\": 0, \"leaked_blocks\": 0, \"stopped_early\": true"
			", \"live_at_stop_bytes\": %" PRIu64 ", \"live_at_stop_blocks\": %" PRIu64
			", \"stop_reason\": ", i->leaked_bytes, i->leaked_blocks);
		mt_json_string(out, i->stop_reason ? i->stop_reason : "");
		fputs(", \"snapshots\": [", out);
	} else {
		fprintf(out, ", \"leaked_bytes\": %" PRIu64 ", \"leaked_blocks\": %" PRIu64,
			i->leaked_bytes, i->leaked_blocks);
		if (i->classified)
			for (k = 0; k < MT_LEAK_KINDS; k++)
				fprintf(out, ", \"%s_bytes\": %" PRIu64 ", \"%s_blocks\": %" PRIu64,
					mt_leak_kind_key(k), i->leaks.bytes[k],
					mt_leak_kind_key(k), i->leaks.blocks[k]);
		fputs(", \"snapshots\": [", out);
	}
	for (k = 0; k < i->nsnapshots; k++) {
		const struct mt_summary_snapshot *sn = &i->snapshots[k];

		fprintf(out, "%s{\"index\": %" PRIu32 ", \"label\": ", k ? ", " : "", sn->index);
		mt_json_string(out, sn->label);
		fputs(", \"time_s\": ", out);
		json_secs(out, sn->time_ns);
		fprintf(out, ", \"live_bytes\": %" PRIu64 ", \"live_blocks\": %" PRIu64,
			sn->live_bytes, sn->live_blocks);
		for (unsigned kd = 0; sn->classified && kd < MT_LEAK_KINDS; kd++)
			fprintf(out, ", \"%s_bytes\": %" PRIu64 ", \"%s_blocks\": %" PRIu64,
				mt_leak_kind_key(kd), sn->leaks.bytes[kd],
				mt_leak_kind_key(kd), sn->leaks.blocks[kd]);
		fputs("}", out);
	}
	fprintf(out, "], \"threads\": %zu}\n", i->threads);
	return ferror(out) ? MT_E_IO : 0;
}

int mt_summary_of_session(struct mt_summary *s, const struct mt_session *ses)
{
	const struct mt_agg_stats *st = mt_session_stats(ses);
	const struct mt_end *e = mt_session_end(ses);
	const struct mt_header *h = mt_session_header(ses);
	const struct mt_leak_check_at *checks;
	size_t nchecks = mt_session_leak_checks(ses, &checks);

	reset(s);
	if (h)
		on_header(s, h);
	if (st->nsnapshots > s->snapcap) {
		struct mt_summary_snapshot *n = realloc(s->snaps, st->nsnapshots * sizeof(*n));

		if (!n)
			return MT_E_NOMEM;
		s->snaps = n;
		s->snapcap = st->nsnapshots;
	}
	s->info.snapshots = s->snaps;
	for (size_t i = 0; i < st->nsnapshots; i++) {
		const struct mt_agg_snapshot *a = &st->snapshots[i];
		struct mt_summary_snapshot *n = &s->snaps[i];

		n->label = strdup(a->label ? a->label : "");
		if (!n->label)
			return MT_E_NOMEM;
		n->index = a->index;
		n->seq = a->seq;
		n->time_ns = a->time_ns;
		n->live_bytes = (uint64_t)a->live_bytes;
		n->live_blocks = (uint64_t)a->live_blocks;
		/* a leak check right after the snapshot classifies its blocks */
		n->classified = 0;
		for (size_t c = 0; c < nchecks; c++)
			if (checks[c].seq == a->seq + 1) {
				n->classified = 1;
				n->leaks = checks[c].tot;
			}
		s->info.nsnapshots++;
	}
	s->info.allocations = st->allocations;
	s->info.frees = st->frees;
	s->info.bytes_allocated = st->bytes_allocated;
	s->info.has_peak = !st->peak_at_start;
	if (s->info.has_peak) {
		s->info.peak_bytes = (uint64_t)st->peak_bytes;
		s->info.peak_blocks = (uint64_t)st->peak_blocks;
		s->info.peak_time_ns = st->peak_time_ns;
		s->info.peak_seq = st->peak_seq;
	}
	s->info.threads = mt_session_nthreads(ses);
	s->info.sample = mt_session_sample(ses);
	s->info.has_rss = st->rss_samples > 0;
	s->info.peak_rss_bytes = st->peak_rss_bytes;
	s->info.peak_rss_time_ns = st->peak_rss_time_ns;
	s->info.leaked_bytes = (uint64_t)st->end_bytes;
	s->info.leaked_blocks = (uint64_t)st->end_blocks;
	s->info.classified = e->classified;
	s->info.leaks = e->leaks;
	on_end(s, e);
	return s->nomem ? MT_E_NOMEM : 0;
}

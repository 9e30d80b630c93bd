/*
 * cmd-dump.c - `memtrail dump`: every record of a log as one line of text,
 * for debugging the log. It goes through the replay like every tool, so a
 * REALLOC shows as one line (its two halves joined) and a FREE of an address
 * that was never live does not show.
 *
 * Line formats (times in ns since the start of the recording):
 *   header version=V pointer_size=P pid=PID start_ns=NS cmdline="..."
 *   module t=T base=0x.. path="..." build_id=HEX segs=0xSTART+0xSIZE,...
 *   unload t=T base=0x..
 *   thread INDEX tid=TID
 *   thread_name INDEX name="..."
 *   rss t=T bytes=N
 *   tag ID parent=ID path="a/b"
 *   stack ID fn=NAME [tag=ID] depth=N 0xIP 0xIP ...   (tag= when not 0)
 *   alloc seq=S t=T addr=0x.. size=N stack=ID thread=I
 *   free seq=S t=T addr=0x.. size=N stack=ID thread=I
 *   realloc seq=S t=T old=0x.. (or old=untracked) old_size=N new=0x.. size=N stack=ID thread=I
 *   snapshot INDEX seq=S t=T label="..."
 *   totals allocations=N frees=N bytes_allocated=N peak_bytes=N peak_blocks=N
 *          peak_t=T leaked_bytes=N leaked_blocks=N
 *   end clean=0|1 how=exit|_exit|signal|exec code=C t=T events=N
 *   sample mean=N                                     (a sampled log)
 * The totals line shows the figures of the END record, as the recorder
 * counted them, when the replay read one (mt_end.totals). In a sampled
 * log (format.h SAMPLE) the sizes are the replay's weighed estimates, the
 * totals the recorder's count of the recorded blocks.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "commands.h"
#include "error.h"
#include "format.h"
#include "replay.h"
#include "summary.h"
#include "util.h"

const char cmd_dump_usage[] =
	"usage: memtrail dump [FILE]\n"
	"\n"
	"Prints every record of the log FILE (default memtrail.data) as one line:\n"
	"header, modules, threads, stacks, allocations, frees, reallocs,\n"
	"snapshots and the end. For debugging the log; see memtrail-format(5).\n";

struct dump {
	FILE *out;
	int pending;            /* the free half of a realloc is waiting */
	struct mt_event old;
};

static void d_header(void *ctx, const struct mt_header *h)
{
	struct dump *d = ctx;

	fprintf(d->out, "header version=%u pointer_size=%u pid=%" PRIu32 " start_ns=%" PRIu64
		" cmdline=", h->version, h->pointer_size, h->pid, h->start_realtime_ns);
	mt_json_string(d->out, h->cmdline);
	fputc('\n', d->out);
}

static void d_module(void *ctx, const struct mt_module *m)
{
	struct dump *d = ctx;
	size_t i;

	fprintf(d->out, "module t=%" PRIu64 " base=0x%" PRIx64 " path=", m->time_ns, m->base);
	mt_json_string(d->out, m->path);
	fputs(" build_id=", d->out);
	for (i = 0; i < m->build_id_len; i++)
		fprintf(d->out, "%02x", m->build_id[i]);
	fputs(" segs=", d->out);
	for (i = 0; i < m->nseg; i++)
		fprintf(d->out, "%s0x%" PRIx64 "+0x%" PRIx64, i ? "," : "",
			m->segs[i].start, m->segs[i].size);
	fputc('\n', d->out);
}

static void d_unload(void *ctx, uint64_t base, uint64_t t)
{
	fprintf(((struct dump *)ctx)->out, "unload t=%" PRIu64 " base=0x%" PRIx64 "\n", t, base);
}

static void d_thread(void *ctx, uint32_t index, uint32_t tid)
{
	fprintf(((struct dump *)ctx)->out, "thread %" PRIu32 " tid=%" PRIu32 "\n", index, tid);
}

static void d_thread_name(void *ctx, uint32_t index, const char *name)
{
	struct dump *d = ctx;

	fprintf(d->out, "thread_name %" PRIu32 " name=", index);
	mt_json_string(d->out, name);
	fputc('\n', d->out);
}

static void d_tag(void *ctx, uint32_t id, uint32_t parent, const char *path)
{
	struct dump *d = ctx;

	fprintf(d->out, "tag %" PRIu32 " parent=%" PRIu32 " path=", id, parent);
	mt_json_string(d->out, path);
	fputc('\n', d->out);
}

static void d_rss(void *ctx, uint64_t t, uint64_t bytes)
{
	fprintf(((struct dump *)ctx)->out, "rss t=%" PRIu64 " bytes=%" PRIu64 "\n", t, bytes);
}

static void d_stack(void *ctx, const struct mt_stack *s)
{
	struct dump *d = ctx;
	uint32_t i;

	fprintf(d->out, "stack %" PRIu32 " fn=%s", s->id, mt_fn_name(s->fn));
	if (s->tag)
		fprintf(d->out, " tag=%" PRIu32, s->tag);
	fprintf(d->out, " depth=%" PRIu32, s->depth);
	for (i = 0; i < s->depth; i++)
		fprintf(d->out, " 0x%" PRIx64, s->ips[i]);
	fputc('\n', d->out);
}

static void d_base(void *ctx, const struct mt_base *b)
{
	struct dump *d = ctx;

	fprintf(d->out, "base seq=%" PRIu64 " t=%" PRIu64 " allocations=%" PRIu64 " frees=%" PRIu64
		" bytes_allocated=%" PRIu64 " peak_bytes=%" PRIu64 " peak_blocks=%" PRIu64
		" peak_t=%" PRIu64 " stacks=%zu\n", b->seq, b->time_ns, b->tot.allocations,
		b->tot.frees, b->tot.bytes_allocated, b->tot.peak_bytes, b->tot.peak_blocks,
		b->tot.peak_time_ns, b->n);
	for (size_t i = 0; i < b->n; i++)
		fprintf(d->out, "base_stack stack=%" PRIu32 " bytes=%" PRIu64 " blocks=%" PRIu64 "\n",
			b->stacks[i].stack, b->stacks[i].bytes, b->stacks[i].blocks);
}

static int d_alloc(void *ctx, const struct mt_event *ev)
{
	struct dump *d = ctx;

	if (!ev->realloc) {
		fprintf(d->out, "alloc seq=%" PRIu64 " t=%" PRIu64 " addr=0x%" PRIx64 " size=%" PRIu64
			" stack=%" PRIu32 " thread=%" PRIu32 "\n",
			ev->seq, ev->time_ns, ev->addr, ev->size, ev->stack, ev->thread);
		return 0;
	}
	fprintf(d->out, "realloc seq=%" PRIu64 " t=%" PRIu64, ev->seq, ev->time_ns);
	if (d->pending && d->old.seq == ev->seq)
		fprintf(d->out, " old=0x%" PRIx64 " old_size=%" PRIu64, d->old.addr, d->old.size);
	else
		fputs(" old=untracked", d->out);
	fprintf(d->out, " new=0x%" PRIx64 " size=%" PRIu64 " stack=%" PRIu32 " thread=%" PRIu32 "\n",
		ev->addr, ev->size, ev->stack, ev->thread);
	d->pending = 0;
	return 0;
}

static int d_free(void *ctx, const struct mt_event *ev)
{
	struct dump *d = ctx;

	if (ev->realloc) {
		d->pending = 1;
		d->old = *ev;
		return 0;
	}
	fprintf(d->out, "free seq=%" PRIu64 " t=%" PRIu64 " addr=0x%" PRIx64 " size=%" PRIu64
		" stack=%" PRIu32 " thread=%" PRIu32 "\n",
		ev->seq, ev->time_ns, ev->addr, ev->size, ev->stack, ev->thread);
	return 0;
}

static int d_snapshot(void *ctx, const struct mt_snapshot *s)
{
	struct dump *d = ctx;

	fprintf(d->out, "snapshot %" PRIu32 " seq=%" PRIu64 " t=%" PRIu64 " label=",
		s->index, s->seq, s->time_ns);
	mt_json_string(d->out, s->label);
	fputc('\n', d->out);
	return 0;
}

static void d_end(void *ctx, const struct mt_end *e)
{
	static const char *const how[] = { "exit", "_exit", "signal", "exec", "stopped" };
	struct dump *d = ctx;
	const struct mt_totals *t = &e->totals;

	if (e->clean)
		fprintf(d->out, "totals allocations=%" PRIu64 " frees=%" PRIu64
			" bytes_allocated=%" PRIu64 " peak_bytes=%" PRIu64
			" peak_blocks=%" PRIu64 " peak_t=%" PRIu64
			" leaked_bytes=%" PRIu64 " leaked_blocks=%" PRIu64 "\n",
			t->allocations, t->frees, t->bytes_allocated, t->peak_bytes,
			t->peak_blocks, t->peak_time_ns, t->leaked_bytes, t->leaked_blocks);
	if (e->clean)
		fprintf(d->out, "end clean=1 how=%s code=%" PRId64, e->how >= 0 && e->how <= MT_END_STOPPED ? how[e->how] : "?", e->code);
	else
		fputs("end clean=0", d->out);
	fprintf(d->out, " t=%" PRIu64 " events=%" PRIu64 "\n", e->time_ns, e->events);
}

static const struct mt_replay_ops dump_ops = {
	.on_header = d_header, .on_module = d_module, .on_unload = d_unload,
	.on_thread = d_thread, .on_thread_name = d_thread_name, .on_rss = d_rss, .on_stack = d_stack,
	.on_tag = d_tag, .on_base = d_base, .on_alloc = d_alloc,
	.on_free = d_free, .on_snapshot = d_snapshot, .on_end = d_end,
};

enum { O_HELP = 1 };

static const struct opt options[] = {
	{ "help", 'h', 0, O_HELP },
	{ NULL, 0, 0, 0 },
};

int cmd_dump(int argc, char **argv)
{
	struct dump d = { .out = stdout };
	const char *file = NULL, *arg;
	struct opt_state st;
	struct mt_replay *r;
	int id, rc;

	opt_init(&st, "dump", argc, argv, 0);
	while ((id = opt_next(&st, options, &arg)) != OPT_END) {
		if (id == O_HELP)
			help_command("dump");
		if (file)
			die_usage("dump takes one log file, got '%s' and '%s'", file, arg);
		file = arg;
	}
	if (!file)
		file = "memtrail.data";
	r = open_log(file);
	rc = mt_replay_run(r, &dump_ops, &d);
	if (rc < 0)
		die("%s: %s", file, mt_strerror(rc));
	if (mt_replay_sample(r))
		printf("sample mean=%" PRIu64 "\n", mt_replay_sample(r));
	if (fflush(stdout) != 0 || ferror(stdout))
		die("cannot write standard output: %s", strerror(errno));
	warn_log_end(file, mt_replay_end(r));
	mt_replay_free(r);
	return 0;
}

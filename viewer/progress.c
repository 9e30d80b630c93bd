/*
 * progress.c - the replay progress bar (see progress.h): "\r" redraws of
 * one line on a terminal, erased when done. Not for logs or pipes.
 */
#include <string.h>
#include <unistd.h>

#include "progress.h"

#define BAR_WIDTH 40

static double since(const struct timespec *a, const struct timespec *b)
{
	return (double)(b->tv_sec - a->tv_sec) + (double)(b->tv_nsec - a->tv_nsec) / 1e9;
}

void mt_progress_init(struct mt_progress *p, FILE *out)
{
	memset(p, 0, sizeof(*p));
	p->out = out;
	p->tty = isatty(fileno(out));
}

void mt_progress_update(void *ctx, uint64_t done, uint64_t total)
{
	struct mt_progress *p = ctx;
	struct timespec now;
	unsigned pct, fill;
	char bar[BAR_WIDTH + 1];

	if (!p->tty)
		return;
	if (!done && !total) {
		/* lib/report.c: the replays are over, output follows */
		mt_progress_clear(p);
		return;
	}
	clock_gettime(CLOCK_MONOTONIC, &now);
	if (!p->started) {
		p->start = now;
		p->started = 1;
		return;
	}
	if (since(&p->start, &now) < 1.0)
		return;
	if (p->shown && since(&p->last, &now) < 0.1)
		return;
	p->last = now;
	pct = total ? (unsigned)(done * 100 / total) : 0;
	if (pct > 100)
		pct = 100;
	fill = pct * BAR_WIDTH / 100;
	memset(bar, '#', fill);
	memset(bar + fill, '.', BAR_WIDTH - fill);
	bar[BAR_WIDTH] = 0;
	fprintf(p->out, "\rmemtrail: replaying [%s] %3u%%", bar, pct);
	fflush(p->out);
	p->shown = 1;
}

void mt_progress_clear(struct mt_progress *p)
{
	if (!p->shown)
		return;
	fputs("\r\033[K", p->out);
	fflush(p->out);
	p->shown = 0;
}

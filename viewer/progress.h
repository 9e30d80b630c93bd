/*
 * progress.h - the progress bar of long replays, drawn on a terminal.
 *
 * A struct mt_progress is the ctx of lib/'s progress callbacks
 * (struct mt_progress_cb, mt_replay_ops.on_progress). It draws nothing
 * unless its stream is a terminal and the replay has run for over a second,
 * and then redraws at most ten times a second. Not for: anything lib/ does
 * (lib/ never draws).
 */
#ifndef MT_VIEWER_PROGRESS_H
#define MT_VIEWER_PROGRESS_H

#include <stdint.h>
#include <stdio.h>
#include <time.h>

struct mt_progress {
	FILE *out;
	int tty;
	struct timespec start, last;
	int shown;            /* a bar is on screen */
	int started;
};

/* Prepares p to draw on out (stderr, typically). */
void mt_progress_init(struct mt_progress *p, FILE *out);

/*
 * The on_progress callback: ctx is a struct mt_progress. done = total = 0
 * means the replays are over (mt_report_write says so before it writes):
 * the bar is erased.
 */
void mt_progress_update(void *ctx, uint64_t done, uint64_t total);

/* Erases the bar if one is shown; call before printing anything else. */
void mt_progress_clear(struct mt_progress *p);

#endif

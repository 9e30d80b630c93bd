/*
 * view_fmt.h - number formatting shared by the viewer's panes: exact byte
 * counts with thousands separators (as `memtrail report` prints them),
 * signed ones for diffs, short human sizes for axis labels, and times.
 *
 * Not here: anything that draws (view_draw.c).
 */
#ifndef MT_VIEW_FMT_H
#define MT_VIEW_FMT_H

#include <stddef.h>
#include <stdint.h>

/* "1,234,567"; with plus set, a leading '+' on positive values. Returns buf. */
char *mt_view_fmt_count(char *buf, size_t size, int64_t v, int plus);

/* "0 B", "512 B", "1.5 KiB", "362 KiB", "12.0 MiB", "3.25 GiB". Returns buf. */
char *mt_view_fmt_size(char *buf, size_t size, uint64_t bytes);

/* A time since the start: "0s", "850ns", "12.5us", "1.234ms", "12.345s". Returns buf. */
char *mt_view_fmt_time(char *buf, size_t size, uint64_t ns);

#endif

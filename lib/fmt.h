/*
 * fmt.h - numbers for people: counts with thousands separators (signed ones
 * for diffs), byte sizes in IEC units and times, as every output of
 * memtrail writes them (the report, the summary, the export's text trees,
 * the closing line of `memtrail record`, the viewer).
 *
 * Each function writes into buf (size bytes, MT_FMT_LEN is always enough;
 * a smaller buf gets a truncated, NUL-terminated string) and returns buf.
 * Also a build-id in hex, as debug directories and servers name files by it.
 * Not here: machine formats (JSON numbers, massif.out fields: lib/summary.c,
 * lib/export.c write those exactly, unrounded), and the choice of one unit
 * for a whole axis (lib/report.c's timeline).
 */
#ifndef MT_FMT_H
#define MT_FMT_H

#include <stddef.h>
#include <stdint.h>

/* Room for the longest result of any function below, NUL included. */
#define MT_FMT_LEN 32

/* n with thousands separators: "0", "999", "1,234,567". */
char *mt_fmt_count(char *buf, size_t size, uint64_t n);

/*
 * A signed figure with thousands separators: "-1,234"; with plus set,
 * "+1,234" for a positive n (0 has no sign either way).
 */
char *mt_fmt_signed(char *buf, size_t size, int64_t n, int plus);

/*
 * Bytes in IEC units (powers of 1024) with one decimal, for text reports:
 * "512 B", "1.5 KiB", "12.0 MiB", "16.0 EiB". Rounded before the unit is
 * chosen: 1048575 B is "1.0 MiB", not "1024.0 KiB".
 */
char *mt_fmt_size(char *buf, size_t size, uint64_t bytes);

/*
 * Bytes in IEC units with three significant digits, for narrow columns
 * and axis labels: "0 B", "512 B", "1.50 KiB", "12.0 KiB", "354 KiB",
 * "1.00 MiB" (rounded first, as mt_fmt_size).
 */
char *mt_fmt_size_short(char *buf, size_t size, uint64_t bytes);

/*
 * A time in ns, truncated to a thousandth of its unit: "1.530 ms" below
 * one second, "12.345 s" from one second up.
 */
char *mt_fmt_duration(char *buf, size_t size, uint64_t ns);

/*
 * A time in ns, compact, for axes and status lines: "0s", "850ns",
 * "12.5us", "1.234ms", "12.345s", "1235s" (from 1000 s up);
 * three significant digits in us, four in ms.
 */
char *mt_fmt_time_short(char *buf, size_t size, uint64_t ns);

/*
 * The inverse of the size formats, for options and settings: a whole
 * number of bytes with an optional unit, powers of 1024: "4096", "512k",
 * "512K", "512KiB", "1m", "1MiB", "2g" ("B" may follow any of them).
 * 0 and *bytes, or MT_E_ARG for anything else, a value beyond 2^62 or 0.
 */
int mt_fmt_parse_size(const char *s, uint64_t *bytes);

/* bytes[0 .. n) as lowercase hex: "93ac61ec..." (size at least 2 n + 1
 * for all of it; MT_FMT_LEN is not enough here). */
char *mt_fmt_hex(char *buf, size_t size, const uint8_t *bytes, size_t n);

#endif

/*
 * view_fmt.c - number formatting for the viewer (see view_fmt.h).
 */
#include <inttypes.h>
#include <stdio.h>

#include "export.h"
#include "view_fmt.h"

char *mt_view_fmt_count(char *buf, size_t size, int64_t v, int plus)
{
	char out[32];

	/* the very figures `memtrail report` prints */
	snprintf(buf, size, "%s", mt_export_number(out, v, plus));
	return buf;
}

char *mt_view_fmt_size(char *buf, size_t size, uint64_t bytes)
{
	static const char *const unit[] = { "B", "KiB", "MiB", "GiB", "TiB", "PiB" };
	double v = (double)bytes;
	unsigned u = 0;

	if (bytes < 1024) {
		snprintf(buf, size, "%" PRIu64 " B", bytes);
		return buf;
	}
	while (v >= 1024 && u + 1 < sizeof(unit) / sizeof(unit[0])) {
		v /= 1024;
		u++;
	}
	if (v >= 100)
		snprintf(buf, size, "%.0f %s", v, unit[u]);
	else if (v >= 10)
		snprintf(buf, size, "%.1f %s", v, unit[u]);
	else
		snprintf(buf, size, "%.2f %s", v, unit[u]);
	return buf;
}

char *mt_view_fmt_time(char *buf, size_t size, uint64_t ns)
{
	double v = (double)ns;

	if (ns == 0)
		snprintf(buf, size, "0s");
	else if (ns < 1000)
		snprintf(buf, size, "%" PRIu64 "ns", ns);
	else if (ns < 1000000)
		snprintf(buf, size, "%.3gus", v / 1e3);
	else if (ns < 1000000000)
		snprintf(buf, size, "%.4gms", v / 1e6);
	else if (ns < 1000000000000ull)
		snprintf(buf, size, "%.3fs", v / 1e9);
	else
		snprintf(buf, size, "%.0fs", v / 1e9);
	return buf;
}

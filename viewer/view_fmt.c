/*
 * view_fmt.c - number formatting for the viewer (see view_fmt.h).
 */
#include <inttypes.h>
#include <stdio.h>

#include "view_fmt.h"

char *mt_view_fmt_count(char *buf, size_t size, int64_t v, int plus)
{
	char digits[32], out[48];
	uint64_t u = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
	int n = snprintf(digits, sizeof(digits), "%" PRIu64, u);
	size_t k = 0;

	if (v < 0)
		out[k++] = '-';
	else if (plus && v > 0)
		out[k++] = '+';
	for (int i = 0; i < n; i++) {
		if (i && (n - i) % 3 == 0)
			out[k++] = ',';
		out[k++] = digits[i];
	}
	out[k] = '\0';
	snprintf(buf, size, "%s", out);
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

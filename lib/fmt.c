/*
 * fmt.c - numbers for people (see fmt.h): the one place that decides how
 * memtrail writes counts, sizes and times in text.
 *
 * Not for: machine-readable numbers (JSON, massif.out), which are written
 * exactly where those formats are produced.
 */
#include <inttypes.h>
#include <stdio.h>

#include "error.h"
#include "fmt.h"

char *mt_fmt_count(char *buf, size_t size, uint64_t n)
{
	char digits[24];
	size_t len, i, o = 0;

	if (!size)
		return buf;
	len = (size_t)snprintf(digits, sizeof(digits), "%" PRIu64, n);
	for (i = 0; i < len && o + 1 < size; i++) {
		if (i && (len - i) % 3 == 0) {
			if (o + 2 >= size)
				break;
			buf[o++] = ',';
		}
		buf[o++] = digits[i];
	}
	buf[o] = 0;
	return buf;
}

char *mt_fmt_signed(char *buf, size_t size, int64_t n, int plus)
{
	/* The magnitude in unsigned arithmetic: -INT64_MIN does not fit. */
	uint64_t u = n < 0 ? (uint64_t)0 - (uint64_t)n : (uint64_t)n;
	size_t o = 0;

	if (size < 2) {
		if (size)
			buf[0] = 0;
		return buf;
	}
	if (n < 0)
		buf[o++] = '-';
	else if (plus && n > 0)
		buf[o++] = '+';
	mt_fmt_count(buf + o, size - o, u);
	return buf;
}

/*
 * Bytes from 1024 up, with decimals fixed (one) or chosen for three
 * significant digits. The unit is chosen on the rounded value: a figure
 * that would print as 1024 of a unit is one of the next.
 */
static char *fmt_size(char *buf, size_t size, uint64_t bytes, int three_digits)
{
	static const char *const units[] = { "KiB", "MiB", "GiB", "TiB", "PiB", "EiB" };
	/* The smallest value that rounds to 1024 with 0, 1, 2 decimals. */
	static const double next_unit[] = { 1023.5, 1023.95, 1023.995 };
	double v = (double)bytes / 1024;
	unsigned u = 0;
	int d;

	if (bytes < 1024) {
		snprintf(buf, size, "%" PRIu64 " B", bytes);
		return buf;
	}
	for (;;) {
		d = !three_digits ? 1 : v >= 99.95 ? 0 : v >= 9.995 ? 1 : 2;
		if (u + 1 == sizeof(units) / sizeof(units[0]) || v < next_unit[d])
			break;
		v /= 1024;
		u++;
	}
	snprintf(buf, size, "%.*f %s", d, v, units[u]);
	return buf;
}

char *mt_fmt_size(char *buf, size_t size, uint64_t bytes)
{
	return fmt_size(buf, size, bytes, 0);
}

char *mt_fmt_size_short(char *buf, size_t size, uint64_t bytes)
{
	return fmt_size(buf, size, bytes, 1);
}

char *mt_fmt_duration(char *buf, size_t size, uint64_t ns)
{
	if (ns >= 1000000000u)
		snprintf(buf, size, "%" PRIu64 ".%03" PRIu64 " s", ns / 1000000000u,
			 ns / 1000000u % 1000u);
	else
		snprintf(buf, size, "%" PRIu64 ".%03" PRIu64 " ms", ns / 1000000u,
			 ns / 1000u % 1000u);
	return buf;
}

char *mt_fmt_time_short(char *buf, size_t size, uint64_t ns)
{
	double v = (double)ns;

	if (ns == 0)
		snprintf(buf, size, "0s");
	else if (ns < 1000)
		snprintf(buf, size, "%" PRIu64 "ns", ns);
	/* Each unit up to where its rounded figure would reach 1000 of it
	 * (%g would then switch to an exponent): 999,999 ns is "1ms". */
	else if (ns < 999500)
		snprintf(buf, size, "%.3gus", v / 1e3);
	else if (ns < 999950000)
		snprintf(buf, size, "%.4gms", v / 1e6);
	else if (ns < 1000000000000ull)
		snprintf(buf, size, "%.3fs", v / 1e9);
	else
		snprintf(buf, size, "%.0fs", v / 1e9);
	return buf;
}

int mt_fmt_parse_size(const char *s, uint64_t *bytes)
{
	static const char units[] = "kmgt";
	uint64_t v = 0;
	const char *p = s;
	unsigned shift = 0;

	for (; *p >= '0' && *p <= '9'; p++) {
		v = v * 10 + (uint64_t)(*p - '0');
		if (v > (1ull << 62))
			return MT_E_ARG;
	}
	if (p == s)
		return MT_E_ARG;
	for (unsigned i = 0; units[i]; i++)
		if ((*p | 0x20) == units[i]) {
			shift = 10 * (i + 1);
			p++;
			if (p[0] == 'i' && p[1] == 'B')
				p++;
			break;
		}
	if (*p == 'B')
		p++;
	if (*p || !v || v > (1ull << 62) >> shift)
		return MT_E_ARG;
	*bytes = v << shift;
	return 0;
}

char *mt_fmt_hex(char *buf, size_t size, const uint8_t *bytes, size_t n)
{
	static const char digit[] = "0123456789abcdef";
	size_t o = 0;

	if (!size)
		return buf;
	for (size_t i = 0; i < n && o + 2 < size; i++) {
		buf[o++] = digit[bytes[i] >> 4];
		buf[o++] = digit[bytes[i] & 15];
	}
	buf[o] = 0;
	return buf;
}

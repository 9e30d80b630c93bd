/*
 * report.c - placeholder until the trees land: parses points, reports that
 * trees are not available yet.
 */
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "report.h"

int mt_point_parse(const char *s, struct mt_point *p)
{
	char *end;
	unsigned long v;

	if (!s || !*s)
		return MT_E_ARG;
	if (!strcmp(s, "start") || !strcmp(s, "peak") || !strcmp(s, "end")) {
		p->kind = s[0] == 's' ? MT_POINT_START : s[0] == 'p' ? MT_POINT_PEAK : MT_POINT_END;
		p->snapshot = 0;
		return 0;
	}
	v = strtoul(s, &end, 10);
	if (*end || s[0] == '-' || v > UINT32_MAX)
		return MT_E_ARG;
	p->kind = MT_POINT_SNAPSHOT;
	p->snapshot = (uint32_t)v;
	return 0;
}

int mt_report_write(struct mt_replay *r, const struct mt_report_opts *opts, FILE *out)
{
	(void)r; (void)opts; (void)out;
	return MT_E_ARG;
}

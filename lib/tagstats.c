/*
 * tagstats.c - figures per tag path, summed over the stacks of each from
 * the session's profiles (see tagstats.h).
 *
 * Not for: printing (lib/report.c), replaying (the session does it).
 */
#include <stdlib.h>
#include <string.h>

#include "agg.h"
#include "error.h"
#include "session.h"
#include "tagstats.h"

int mt_tagstats_rows(struct mt_session *s, struct mt_tagstats_row **rows, size_t *n)
{
	static const struct mt_at peak = { MT_AT_PEAK, 0 }, end = { MT_AT_END, 0 };
	struct mt_profile *calls = NULL, *atpeak = NULL, *atend = NULL;
	size_t ntags = mt_session_ntags(s), k = 0;
	struct mt_tagstats_row *r;
	int rc;

	*rows = NULL;
	*n = 0;
	r = calloc(ntags + 1, sizeof(*r));
	if (!r)
		return MT_E_NOMEM;
	if ((rc = mt_session_calls(s, &calls)) < 0 ||
	    (rc = mt_session_profile(s, &peak, &atpeak)) < 0 ||
	    (rc = mt_session_profile(s, &end, &atend)) < 0)
		goto out;
	/* every stack a profile covers; beyond its nstacks a stack costs 0 */
	for (uint32_t i = 0; i < mt_profile_nstacks(calls); i++) {
		struct mt_tagstats_row *t = &r[mt_session_stack_tag(s, i)];
		struct mt_cost c = mt_profile_get(calls, i), p = mt_profile_get(atpeak, i),
			e = mt_profile_get(atend, i);

		t->allocations += (uint64_t)c.allocs;
		t->bytes_allocated += (uint64_t)c.bytes;
		t->peak_bytes += p.bytes;
		t->peak_blocks += p.blocks;
		t->leaked_bytes += e.bytes;
		t->leaked_blocks += e.blocks;
	}
	for (size_t i = 0; i <= ntags; i++) {
		if (!r[i].allocations)
			continue;
		r[k] = r[i];
		r[k].tag = (uint32_t)i;
		r[k++].path = mt_session_tag(s, (uint32_t)i);
	}
	*rows = r;
	*n = k;
	r = NULL;
out:
	free(r);
	mt_profile_free(calls);
	mt_profile_free(atpeak);
	mt_profile_free(atend);
	return rc < 0 ? rc : 0;
}

/*
 * tagstats.h - figures per tag path (memtrail_tag_push scopes): what
 * `memtrail report --by-tag` prints, from a session's profiles.
 *
 * A tag path is part of each stack's identity (lib/replay.h mt_stack.tag),
 * so a tag path's figures are the sums of its stacks' over the session's
 * profiles: the calls profile for allocations and bytes allocated, the
 * peak's and the end's for live at the peak and leaked. They follow the
 * session's restrictions: with mt_session_only_thread, the blocks that
 * thread allocated (as --by-thread counts them); with mt_session_only_tag,
 * the paths it keeps.
 *
 * Not here: printing (lib/report.c), the tag paths themselves
 * (lib/session.h).
 */
#ifndef MT_TAGSTATS_H
#define MT_TAGSTATS_H

#include <stddef.h>
#include <stdint.h>

struct mt_session;

/* One tag path's figures; path "" is the untagged allocations. */
struct mt_tagstats_row {
	uint32_t tag;             /* its id (mt_session_tag), 0: no tag */
	const char *path;         /* owned by the session */
	uint64_t allocations, bytes_allocated;
	int64_t peak_bytes, peak_blocks;   /* live at the run's peak */
	int64_t leaked_bytes, leaked_blocks;  /* live at the end */
};

/*
 * The rows of every tag path with at least one allocation under the
 * session's restrictions, untagged first, then in the order the paths were
 * first entered. *rows is new, owned by the caller (free()); *n may be 0.
 * Returns 0, or a negative MT_E_* (a session opened figures_only has no
 * profiles: MT_E_ARG).
 */
int mt_tagstats_rows(struct mt_session *s, struct mt_tagstats_row **rows, size_t *n);

#endif

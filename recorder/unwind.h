/*
 * unwind.h - how the recorder captures a stack: libunwind's unw_backtrace()
 * on every event (MEMTRAIL_UNWIND=full, the default), the incremental
 * unwinder of unwind.c (MEMTRAIL_UNWIND=incremental), or both compared on
 * every event (MEMTRAIL_UNWIND=check, for tests).
 *
 * Not for: what is done with a stack (hooks.c capture(), core.c).
 */
#ifndef MT_UNWIND_H
#define MT_UNWIND_H

enum mt_unwind_mode {
	MT_UNWIND_FULL,
	MT_UNWIND_INCREMENTAL,
	MT_UNWIND_CHECK,
};

/* "full", "incremental", "check" (or unset: full); -1 if unknown. */
int mt_unwind_parse(const char *s);

typedef int (*mt_backtrace_fn)(void **buf, int size);

/*
 * The function the hooks call to capture a stack in this mode, given
 * unw_backtrace. Falls back to full (and says why) where the incremental
 * unwinder cannot run. Called once at start, before any thread records.
 */
mt_backtrace_fn mt_unwind_setup(mt_backtrace_fn full, int mode);

#endif

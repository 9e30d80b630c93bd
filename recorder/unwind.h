/*
 * unwind.h - how the recorder captures a stack: the walker of unwind.c,
 * with rules cached by address and the outer frames of the thread's
 * previous stack reused where proven unchanged (MEMTRAIL_UNWIND=
 * incremental, the default on x86-64), libunwind's unw_backtrace() on
 * every event (MEMTRAIL_UNWIND=full), or both compared on every event
 * (MEMTRAIL_UNWIND=check, for tests).
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

/* "full", "incremental", "check" (or unset: incremental); -1 if unknown. */
int mt_unwind_parse(const char *s);

#include <stdint.h>

/*
 * Captures the stack of the caller of the function whose frame pointer is
 * fp (a function of the recorder): its frames, outermost first, less the
 * recorder's own and only the innermost max; *n of them. They lie in the
 * walker's own memory (valid until the thread's next capture) or in
 * scratch (room for max + 16). *hash: mt_unwind_hash() of them when the
 * walker had it at hand, 0 when not (then the caller computes it).
 */
typedef const uint64_t *(*mt_backtrace_fn)(void *fp, unsigned max, uint64_t *scratch,
					   unsigned *n, uint64_t *hash);

/*
 * The stack hash: frames mixed in from the outermost inward, so that a
 * walk that keeps the outer frames of the previous one keeps their hash
 * too and mixes in only its new frames. The table that interns stacks
 * compares whole stacks anyway: this only has to spread them.
 */
#define MT_UNWIND_SEED 0x9E3779B97F4A7C15ull

static inline uint64_t mt_unwind_mix(uint64_t h, uint64_t ip)
{
	h = (h ^ ip) * 0xff51afd7ed558ccdull;
	return h ^ (h >> 29);
}

/* The hash of ips[0..n-1] (outermost first). */
static inline uint64_t mt_unwind_hash(const uint64_t *ips, unsigned n)
{
	uint64_t h = MT_UNWIND_SEED;
	for (unsigned i = 0; i < n; i++)
		h = mt_unwind_mix(h, ips[i]);
	return h;
}

/*
 * The function the hooks call to capture a stack in this mode, given
 * libunwind's (which the walker itself falls back to on any stack it
 * cannot walk). Falls back to full (and says why) where the walker cannot
 * run at all. Called once at start, before any thread records.
 */
mt_backtrace_fn mt_unwind_setup(mt_backtrace_fn full, void (*flush_full)(void), int mode);

/* Code was unloaded (dlclose): no rule kept so far is used again, by the
 * walker or by libunwind (flush_full). */
void mt_unwind_forget(void);

/* In a forked child: a lock another thread of the parent held is free. */
void mt_unwind_child(void);

/*
 * The stack pointer of the caller of the function at [lo, hi) nearest
 * the stack's inner end, walking out from the caller of the function
 * whose frame pointer is fp (as the hooks' captures do); 0 when the
 * walker is off or cannot tell (a frame it cannot step, no such frame).
 * Its rule lookups take no lock of the loader's, which libunwind's do.
 */
uintptr_t mt_unwind_caller_sp(void *fp, uintptr_t lo, uintptr_t hi);

#endif

/*
 * livetab.h - the one table of live blocks: address -> a 64-bit value,
 * used by the recorder (the requested size, to answer frees and END's
 * totals) and by the replay (size and stack, to turn a free into the
 * block it releases).
 *
 * Open addressing with linear probing and backward-shift deletion (no
 * tombstones), 16 bytes a slot, at most 70 % full, a power of two slots.
 * Each 1 KiB of address space hashes to a group of 64 neighbouring slots
 * in which blocks keep their address order, so blocks carved from the
 * heap together share cache lines, while the groups spread over the table.
 * Address 0, never a real block but possible in a damaged log, is kept
 * beside the slots (0 marks an empty slot).
 *
 * Memory comes from the caller's functions (zeroed pages): the recorder
 * passes its mmap allocator, so no hook ever sees the table; the replay
 * passes calloc. The struct is public so that callers embed it and the
 * probes inline on their hot paths; its fields are read-only to them.
 *
 * Not here: what the value means (the caller packs it), locking.
 */
#ifndef MT_LIVETAB_H
#define MT_LIVETAB_H

#include <stddef.h>
#include <stdint.h>

struct mt_livetab_slot {
	uint64_t addr;             /* 0: empty */
	uint64_t val;
};

struct mt_livetab {
	struct mt_livetab_slot *slots;
	size_t cap;                /* a power of two, or 0 before the first block */
	size_t len;                /* blocks in the slots */
	int zero_live;             /* a block at address 0 is live ... */
	uint64_t zero_val;         /* ... with this value */
	/* zeroed memory of n bytes, or NULL; and its release */
	void *(*alloc)(size_t n);
	void (*release)(void *p, size_t n);
};

/*
 * An empty table taking its memory from alloc/release (NULL: calloc and
 * free). Allocates nothing.
 */
void mt_livetab_init(struct mt_livetab *t, void *(*alloc)(size_t n),
		     void (*release)(void *p, size_t n));

/* Empties the table, keeping its slots (untouched when already empty). */
void mt_livetab_clear(struct mt_livetab *t);

/* Releases the slots; the table is empty (and usable) again. */
void mt_livetab_fini(struct mt_livetab *t);

/*
 * Makes room for n blocks at once, so that a table whose size is known
 * ahead (the replay: END's peak block count) is never rehashed on the way.
 * 0, or -1 when the memory cannot be had (the table is unchanged).
 */
int mt_livetab_reserve(struct mt_livetab *t, uint64_t n);

/* Live blocks. */
static inline uint64_t mt_livetab_count(const struct mt_livetab *t)
{
	return t->len + (t->zero_live ? 1 : 0);
}

static inline size_t mt_livetab_home(uint64_t addr, size_t cap)
{
	uint64_t g = (addr >> 10) * 0x9E3779B97F4A7C15ull;

	return (size_t)((g >> 20 << 6) | ((addr >> 4) & 63)) & (cap - 1);
}

/*
 * Asks the CPU for addr's home slot now, to be probed a few events later.
 * A macro: GCC deems a function whose only effect is a prefetch pure, and
 * drops its calls.
 */
#define mt_livetab_prefetch(t, addr) \
	do { \
		if ((t)->cap) \
			__builtin_prefetch(&(t)->slots[mt_livetab_home((addr), (t)->cap)]); \
	} while (0)

/* Internal: len + 1 blocks would pass 70 % of cap slots. */
static inline int mt_livetab_full(size_t len, size_t cap)
{
	return (len + 1) * 10 > cap * 7;
}

/* Internal to the inline functions below: the slow paths. */
int mt_livetab_grow(struct mt_livetab *t);
void mt_livetab_shift(struct mt_livetab *t, size_t hole);

/* Inline (both run once per event of a recording or a replay). */

/*
 * Adds the block at addr with value val. Returns 0 when addr was not live,
 * 1 when it was (its old value in *old, then replaced by val), or -1 when
 * the table must grow and the memory cannot be had (nothing changed).
 */
static inline int mt_livetab_put(struct mt_livetab *t, uint64_t addr, uint64_t val,
				 uint64_t *old)
{
	size_t i, mask;

	if (__builtin_expect(!addr, 0)) {
		int was = t->zero_live;

		if (was)
			*old = t->zero_val;
		t->zero_live = 1;
		t->zero_val = val;
		return was;
	}
	/* at most 70 % full: grow before looking, so the probe is the last */
	if (__builtin_expect(mt_livetab_full(t->len, t->cap), 0) && mt_livetab_grow(t) < 0)
		return -1;
	mask = t->cap - 1;
	/* One probe: the block's slot if it is live, else where it goes. */
	for (i = mt_livetab_home(addr, t->cap); t->slots[i].addr; i = (i + 1) & mask) {
		if (t->slots[i].addr == addr) {
			*old = t->slots[i].val;
			t->slots[i].val = val;
			return 1;
		}
	}
	t->slots[i].addr = addr;
	t->slots[i].val = val;
	t->len++;
	return 0;
}

/* The slot of the live block at addr (not 0), or SIZE_MAX when none. */
static inline size_t mt_livetab_find(const struct mt_livetab *t, uint64_t addr)
{
	size_t i, mask;

	if (!t->cap)
		return SIZE_MAX;
	mask = t->cap - 1;
	for (i = mt_livetab_home(addr, t->cap); t->slots[i].addr != addr; i = (i + 1) & mask)
		if (!t->slots[i].addr)
			return SIZE_MAX;
	return i;
}

/* The value of the block at addr, left in place: 1, or 0 when not live. */
static inline int mt_livetab_get(const struct mt_livetab *t, uint64_t addr, uint64_t *val)
{
	size_t i;

	if (!addr) {
		*val = t->zero_val;
		return t->zero_live;
	}
	if ((i = mt_livetab_find(t, addr)) == SIZE_MAX)
		return 0;
	*val = t->slots[i].val;
	return 1;
}

/* Removes the block at addr: 1 and its value in *val, or 0 when not live. */
static inline int mt_livetab_take(struct mt_livetab *t, uint64_t addr, uint64_t *val)
{
	size_t i, mask;

	if (__builtin_expect(!addr, 0)) {
		if (!t->zero_live)
			return 0;
		*val = t->zero_val;
		t->zero_live = 0;
		return 1;
	}
	if ((i = mt_livetab_find(t, addr)) == SIZE_MAX)
		return 0;
	mask = t->cap - 1;
	*val = t->slots[i].val;
	t->len--;
	if (t->slots[(i + 1) & mask].addr) {
		mt_livetab_shift(t, i);
	} else {
		t->slots[i].addr = 0;
		t->slots[i].val = 0;
	}
	return 1;
}

#endif

/*
 * livetab.h - the one table of live blocks: address -> a 32-bit value,
 * used by the recorder (the requested size and stack, to answer frees and
 * END's totals, and the leak scan's list of blocks) and by the replay (the
 * thread that allocated a block, or its size and stack in old logs).
 *
 * Open addressing with linear probing and backward-shift deletion (no
 * tombstones), 10 bytes a slot: the address's low 48 bits and the value.
 * A block's home slot is a key of its address (its page hashed, its
 * place in the page kept: mt_livetab_home) spread onto any number of
 * slots (multiply-shift, not a mask), so the table grows by a quarter at a time
 * once it is large and stays between 64 % and 80 % full: 12.5 to 15.6
 * bytes a live block. Below 4 MiB it doubles (fewer moves; the bytes do
 * not matter there). Slots run past the last home (the tail), so a probe
 * never wraps. Growth is in place: the memory is resized (a large table's
 * with mremap, which moves pages and copies nothing) and the blocks
 * rehashed where they are, so the table never needs its old and its new
 * slots at once.
 *
 * Addresses 0 and from 2^48 up (none on x86-64 and arm64 without 5-level
 * paging asked for by the program; possible in a damaged log) are kept
 * beside the slots in a small table of their own (odd).
 *
 * A value with MT_LIVETAB_WIDE set names a wide record (a block's size,
 * stack and thread, for the block whose figures do not fit the caller's
 * packing), which the table keeps for the caller (mt_livetab_wide_*).
 *
 * Memory comes from the caller's functions (zeroed pages): the recorder
 * passes its mmap allocator, so no hook ever sees the table; the replay
 * passes NULL (calloc and realloc, mmap and mremap for large tables). The
 * struct is public so that callers embed it and the probes inline on
 * their hot paths; its fields are read-only to them.
 *
 * Not here: what the value means (the caller packs it), locking.
 */
#ifndef MT_LIVETAB_H
#define MT_LIVETAB_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define MT_LIVETAB_SLOT      10
#define MT_LIVETAB_ADDR_MASK ((1ull << 48) - 1)
#define MT_LIVETAB_WIDE      0x80000000u

/* The memory of a table: n zeroed bytes; p's n bytes resized to m > n, the
 * rest zeroed (NULL: p is left as it was); p's n bytes released. Tables
 * smaller than double_below bytes double as they grow, larger ones grow
 * by a quarter (0: 4 MiB; SIZE_MAX: always double, five rehashes of
 * every block fewer where memory is cheaper than time). */
struct mt_livetab_mem {
	void *(*alloc)(size_t n);
	void *(*resize)(void *p, size_t n, size_t m);
	void (*release)(void *p, size_t n);
	size_t double_below;
};

/* What a wide record holds. */
struct mt_livetab_wide {
	uint64_t size;
	uint32_t stack;
	uint32_t thread;           /* free records: the next free one */
};

struct mt_livetab_odd {
	uint64_t addr;
	uint32_t val;
	uint32_t used;
};

struct mt_livetab {
	unsigned char *slots;      /* n slots of MT_LIVETAB_SLOT bytes */
	size_t cap;                /* home slots, 0 before the first block */
	size_t n;                  /* slots in all (cap and the tail) */
	size_t len;                /* blocks in the slots */
	size_t grow_at;            /* len that makes it grow */
	struct mt_livetab_odd *odd;   /* addresses 0 and >= 2^48, oddcap slots */
	size_t oddcap, oddlen;
	struct mt_livetab_wide *wide;
	size_t nwide, widecap;
	uint32_t wide_free;        /* UINT32_MAX: none */
	uint64_t *sorted;          /* while sorted: unsort's bitmap */
	size_t sorted_words;
	const struct mt_livetab_mem *mem;
	int moving;                /* a growth, a sort or its undoing is moving
				      blocks, or the tail is extended (the
				      slots may move): the table is not whole until it
				      ends (a process killed meanwhile leaves
				      it so: the recorder's drainer, core.c) */
};

/* An empty table taking its memory from mem (NULL: the default).
 * Allocates nothing. */
void mt_livetab_init(struct mt_livetab *t, const struct mt_livetab_mem *mem);

/* Empties the table, keeping its slots (untouched when already empty). */
void mt_livetab_clear(struct mt_livetab *t);

/* Releases the memory; the table is empty (and usable) again. */
void mt_livetab_fini(struct mt_livetab *t);

/*
 * Makes room for n blocks at once, so that a table whose size is known
 * ahead (the replay: END's peak block count) is never rehashed on the way.
 * 0, or -1 when the memory cannot be had (the table is unchanged; but for
 * a rehash that fails once begun, see mt_livetab_unsort).
 */
int mt_livetab_reserve(struct mt_livetab *t, uint64_t n);

/* Live blocks. */
static inline uint64_t mt_livetab_count(const struct mt_livetab *t)
{
	return t->len + t->oddlen;
}

/* The bytes the table holds (slots, odd addresses, wide records). */
size_t mt_livetab_bytes(const struct mt_livetab *t);

/* Addresses kept beside the slots. */
static inline int mt_livetab_is_odd(uint64_t addr)
{
	return addr - 1 >= MT_LIVETAB_ADDR_MASK;
}

/*
 * A block's home. Not a hash of the whole address: a hash of its 4 KiB
 * page places the page's window, and the address within the page runs
 * through it, 2^11 to 2^12 slots (as cap's power of two), so blocks close
 * in memory have homes close in the table. A program mostly allocates
 * and frees near where it just did: consecutive events probe the same
 * few lines and pages of the table where a hashed address sent each to
 * a line and a page of its own (python3 bench, a table of 29 MiB: a
 * cache and a TLB miss for every event, most of the drainer's time;
 * 5 interleaved runs: the drainer's CPU 10 % lower). A slot for 1 to 2
 * bytes of page keeps the probes as short as a full hash's however
 * densely blocks lie (linear probing, 3,000 to 2 million blocks: 1.1 to
 * 3.2 slots on average for 8-, 16- and 32-byte blocks end to end and
 * for glibc-like mixes, 2.3 to 3.0 for random addresses; with 2^10 to
 * 2^11 slots, 8-byte blocks took 24). For a given power of two
 * the home grows with the address's key, so a table that grows a
 * quarter still spreads its blocks in order, and one that passes a power
 * of two nearly so: the window's slots per byte of page fall there, and
 * the rehash moves the few blocks whose home comes earlier like any
 * other (mt_livetab_grow). Tables below 2^12 slots (none but the empty
 * one: MIN_CAP) hash the address.
 */
enum { MT_LIVETAB_WINDOW = 11 };

static inline size_t mt_livetab_home(uint64_t addr, size_t cap)
{
	unsigned c = 63 - (unsigned)__builtin_clzll((uint64_t)cap | 1);
	uint64_t k = addr * 0x9E3779B97F4A7C15ull;

	if (c > MT_LIVETAB_WINDOW) {
		unsigned l = 64 - c + MT_LIVETAB_WINDOW;   /* 2^l keys: 2^11 to 2^12 slots */

		k = (addr >> 12) * 0x9E3779B97F4A7C15ull + ((addr & 4095) << (l - 12));
	}
	return (size_t)(((unsigned __int128)k * cap) >> 64);
}

/* Slot i's address (0: empty) and value. */
static inline uint64_t mt_livetab_lo(const unsigned char *s)
{
	uint64_t lo;

	memcpy(&lo, s, 8);
	return lo;
}

static inline uint64_t mt_livetab_addr_at(const struct mt_livetab *t, size_t i)
{
	return mt_livetab_lo(t->slots + i * MT_LIVETAB_SLOT) & MT_LIVETAB_ADDR_MASK;
}

static inline uint32_t mt_livetab_val_of(const unsigned char *s, uint64_t lo)
{
	uint16_t hi;

	memcpy(&hi, s + 8, 2);
	return (uint32_t)(lo >> 48) | (uint32_t)hi << 16;
}

static inline uint32_t mt_livetab_val_at(const struct mt_livetab *t, size_t i)
{
	const unsigned char *s = t->slots + i * MT_LIVETAB_SLOT;

	return mt_livetab_val_of(s, mt_livetab_lo(s));
}

static inline void mt_livetab_set(unsigned char *s, uint64_t addr, uint32_t val)
{
	uint64_t lo = addr | (uint64_t)(val & 0xffff) << 48;
	uint16_t hi = (uint16_t)(val >> 16);

	memcpy(s, &lo, 8);
	memcpy(s + 8, &hi, 2);
}

/*
 * Asks the CPU for addr's home slot now, to be probed a few events later:
 * its cache line and the next. Between 64 and 80 % full, an insertion
 * passes 4 to 13 slots on average (linear probing: (1 + 1/(1 - load)^2) /
 * 2), 40 to 130 bytes, before it finds an empty one, and a removal's
 * backward shift reads on to the end of the run: with the home line
 * alone, the probe loop waited for the next one (perf, python3
 * bench: 56 % of mt_rec_emit_alloc's time on one load of that loop; with
 * both lines, 9 interleaved runs: 2.116 -> 2.027 s CPU; a third line
 * gained nothing more). A macro: GCC deems a function whose only effect is
 * a prefetch pure, and drops its calls.
 */
#define mt_livetab_prefetch(t, addr) \
	do { \
		const unsigned char *pf_ = (t)->slots + \
			mt_livetab_home((addr), (t)->cap) * MT_LIVETAB_SLOT; \
		__builtin_prefetch(pf_); \
		__builtin_prefetch(pf_ + 64); \
	} while (0)

/* Internal to the inline functions below: the slow paths. */
int mt_livetab_grow(struct mt_livetab *t);
int mt_livetab_extend(struct mt_livetab *t);
void mt_livetab_shift(struct mt_livetab *t, unsigned char *hole);
int mt_livetab_odd_put(struct mt_livetab *t, uint64_t addr, uint32_t val, uint32_t *old);
int mt_livetab_odd_get(const struct mt_livetab *t, uint64_t addr, uint32_t *val);
int mt_livetab_odd_take(struct mt_livetab *t, uint64_t addr, uint32_t *val);

/*
 * For an owner killed inside mt_livetab_take of addr (the recorder's
 * drainer, core.c): finishes a backward shift it left cut off in addr's
 * run, so that no block is in two slots. 1 when it did, 0 when there was
 * none. The caller knows from its own journal whether addr is to be put
 * back, and sets len (the take counted it out before shifting). Odd
 * addresses are not mended (no heap block has one).
 */
int mt_livetab_mend(struct mt_livetab *t, uint64_t addr);

/* Inline (each runs once per event of a recording or a replay). */

/*
 * Where the block at addr (not odd) is, or goes: its slot (*found 1), or
 * the empty slot that ends its probe (*found 0); NULL when the table must
 * grow and the memory cannot be had (nothing changed). The table is grown
 * first if full, so the slot stays right until the table next changes:
 * mt_livetab_put_at puts there. (The two halves of mt_livetab_put, for a
 * caller that notes what it is about to change, and how to undo it, in
 * between: the recorder's drainer, core.c.)
 */
static inline unsigned char *mt_livetab_place(struct mt_livetab *t, uint64_t addr, int *found)
{
	unsigned char *s;
	uint64_t lo;

	/* at most 80 % full: grow before looking, so the probe is the last */
	if (__builtin_expect(t->len >= t->grow_at, 0) && mt_livetab_grow(t) < 0)
		return NULL;
	/* One probe: the block's slot if it is live, else where it goes. */
	for (s = t->slots + mt_livetab_home(addr, t->cap) * MT_LIVETAB_SLOT;
	     (lo = mt_livetab_lo(s)) & MT_LIVETAB_ADDR_MASK; s += MT_LIVETAB_SLOT)
		if ((lo & MT_LIVETAB_ADDR_MASK) == addr) {
			*found = 1;
			return s;
		}
	*found = 0;
	/* the last slot stays empty: every probe ends inside the table */
	if (__builtin_expect(s == t->slots + (t->n - 1) * MT_LIVETAB_SLOT, 0)) {
		size_t i = (size_t)(s - t->slots) / MT_LIVETAB_SLOT;

		if (mt_livetab_extend(t) < 0)
			return NULL;
		s = t->slots + i * MT_LIVETAB_SLOT;
	}
	return s;
}

/* addr with val at s, as mt_livetab_place gave it (found: as it said). */
static inline void mt_livetab_put_at(struct mt_livetab *t, unsigned char *s, uint64_t addr,
				     uint32_t val, int found)
{
	mt_livetab_set(s, addr, val);
	t->len += !found;
}

/*
 * Adds the block at addr with value val. Returns 0 when addr was not live,
 * 1 when it was (its old value in *old, then replaced by val), or -1 when
 * the table must grow and the memory cannot be had (nothing changed).
 */
static inline int mt_livetab_put(struct mt_livetab *t, uint64_t addr, uint32_t val,
				 uint32_t *old)
{
	unsigned char *s;
	int found;

	if (__builtin_expect(mt_livetab_is_odd(addr), 0))
		return mt_livetab_odd_put(t, addr, val, old);
	if (!(s = mt_livetab_place(t, addr, &found)))
		return -1;
	if (found)
		*old = mt_livetab_val_of(s, mt_livetab_lo(s));
	mt_livetab_put_at(t, s, addr, val, found);
	return found;
}

/* The slot of the live block at addr (not odd), or NULL when none. */
static inline unsigned char *mt_livetab_slot_of(const struct mt_livetab *t, uint64_t addr)
{
	unsigned char *s;
	uint64_t a;

	if (!t->cap)
		return NULL;
	for (s = t->slots + mt_livetab_home(addr, t->cap) * MT_LIVETAB_SLOT;
	     (a = mt_livetab_lo(s) & MT_LIVETAB_ADDR_MASK) != addr; s += MT_LIVETAB_SLOT)
		if (!a)
			return NULL;
	return s;
}

/* The value of the block at addr, left in place: 1, or 0 when not live. */
static inline int mt_livetab_get(const struct mt_livetab *t, uint64_t addr, uint32_t *val)
{
	const unsigned char *s;

	if (__builtin_expect(mt_livetab_is_odd(addr), 0))
		return mt_livetab_odd_get(t, addr, val);
	if (!(s = mt_livetab_slot_of(t, addr)))
		return 0;
	*val = mt_livetab_val_of(s, mt_livetab_lo(s));
	return 1;
}

/* Removes the block in slot s (mt_livetab_slot_of's): the second half of
 * mt_livetab_take, as mt_livetab_put_at is of mt_livetab_put. */
static inline void mt_livetab_take_at(struct mt_livetab *t, unsigned char *s)
{
	t->len--;
	if (mt_livetab_lo(s + MT_LIVETAB_SLOT) & MT_LIVETAB_ADDR_MASK)
		mt_livetab_shift(t, s);
	else
		mt_livetab_set(s, 0, 0);
}

/* Removes the block at addr: 1 and its value in *val, or 0 when not live. */
static inline int mt_livetab_take(struct mt_livetab *t, uint64_t addr, uint32_t *val)
{
	unsigned char *s;

	if (__builtin_expect(mt_livetab_is_odd(addr), 0))
		return mt_livetab_odd_take(t, addr, val);
	if (!(s = mt_livetab_slot_of(t, addr)))
		return 0;
	*val = mt_livetab_val_of(s, mt_livetab_lo(s));
	mt_livetab_take_at(t, s);
	return 1;
}

/*
 * Wide records: one holding w, its index in *idx (0, or -1 when the memory
 * cannot be had); the record of index idx; and its release.
 */
int mt_livetab_wide_new(struct mt_livetab *t, const struct mt_livetab_wide *w, uint32_t *idx);

static inline const struct mt_livetab_wide *mt_livetab_wide_get(const struct mt_livetab *t,
								 uint32_t idx)
{
	return &t->wide[idx];
}

void mt_livetab_wide_free(struct mt_livetab *t, uint32_t idx);

/*
 * A block's figures as a value, for callers that keep size, stack and
 * thread: the size in the low MT_LIVETAB_SIZE_BITS bits, the stack id in
 * the next stack_bits, the thread index in the bits left below
 * MT_LIVETAB_WIDE (a caller that keeps no thread gives them all to the
 * stack). mt_livetab_fits: whether they fit; mt_livetab_packed: the value
 * then; mt_livetab_pack: the value, or a wide record's (-1 when its memory
 * cannot be had); mt_livetab_block: the figures of a value (its wide
 * record is kept).
 */
#define MT_LIVETAB_SIZE_BITS 13

static inline int mt_livetab_fits(unsigned stack_bits, uint64_t size, uint32_t stack,
				  uint32_t thread)
{
	return size < (1u << MT_LIVETAB_SIZE_BITS) && stack < (1u << stack_bits) &&
	       thread < (1u << (31 - MT_LIVETAB_SIZE_BITS - stack_bits));
}

static inline uint32_t mt_livetab_packed(unsigned stack_bits, uint64_t size, uint32_t stack,
					 uint32_t thread)
{
	return (uint32_t)size | stack << MT_LIVETAB_SIZE_BITS |
	       thread << (MT_LIVETAB_SIZE_BITS + stack_bits);
}

static inline int mt_livetab_pack(struct mt_livetab *t, unsigned stack_bits, uint64_t size,
				  uint32_t stack, uint32_t thread, uint32_t *val)
{
	if (mt_livetab_fits(stack_bits, size, stack, thread)) {
		*val = mt_livetab_packed(stack_bits, size, stack, thread);
		return 0;
	}
	struct mt_livetab_wide w = { size, stack, thread };

	if (mt_livetab_wide_new(t, &w, val) < 0)
		return -1;
	*val |= MT_LIVETAB_WIDE;
	return 0;
}

static inline struct mt_livetab_wide mt_livetab_block(const struct mt_livetab *t,
						      unsigned stack_bits, uint32_t val)
{
	struct mt_livetab_wide b = {
		val & ((1u << MT_LIVETAB_SIZE_BITS) - 1),
		val >> MT_LIVETAB_SIZE_BITS & ((1u << stack_bits) - 1),
		(val & ~MT_LIVETAB_WIDE) >> (MT_LIVETAB_SIZE_BITS + stack_bits),
	};

	if (val & MT_LIVETAB_WIDE)
		b = *mt_livetab_wide_get(t, val & ~MT_LIVETAB_WIDE);
	return b;
}

/*
 * Every live block's address and value, in no order: fn(ctx, addr, val)
 * for each until it returns nonzero, which is returned.
 */
int mt_livetab_each(const struct mt_livetab *t, int (*fn)(void *ctx, uint64_t addr, uint32_t val),
		    void *ctx);

/*
 * For a reader that wants the blocks in address order without an index of
 * its own (the recorder's leak scan): the blocks held in the slots (not
 * the odd addresses) are moved to slots 0..len-1 in increasing address
 * order, with their values (read them with mt_livetab_addr_at and
 * mt_livetab_val_at). Until mt_livetab_unsort() puts them back at their
 * homes, the table is only to be read that way. back: unsort will be
 * called (0: the table will only be cleared or released, and putting the
 * blocks back, a third of a leak scan's time, is saved). sort: 0, or -1
 * when its memory (with back, a bitmap of a bit a slot for unsort) cannot
 * be had (the table is unchanged). unsort: 0, or -1 when a run reached
 * the table's end and more tail could not be had (odds below 1e-20), as
 * for a growth (mt_livetab_reserve): the table can then only be released.
 */
int mt_livetab_sort(struct mt_livetab *t, int back);
int mt_livetab_unsort(struct mt_livetab *t);

#endif

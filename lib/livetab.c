/*
 * livetab.c - the table of live blocks (see livetab.h for its shape).
 *
 * For: the recorder's and the replay's address -> value maps, one code for
 * both. Not for: stacks, modules, anything keyed by other than an address.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "livetab.h"

#define S MT_LIVETAB_SLOT
#define MIN_CAP 4096
#define TAIL 64                     /* slots past the last home, and more when a run gets there */
#define DOUBLE_BELOW ((size_t)4 << 20)  /* bytes: smaller tables double */

/*
 * The default memory: calloc for small tables; large ones are mapped on
 * their own and asked for huge pages, because a table of tens of MiB probed
 * at random misses the TLB on nearly every probe with 4 KiB pages (with
 * 2 MiB pages the whole table fits in the TLB).
 */
#define HUGE_FROM (4u << 20)

static void *zalloc(size_t n)
{
	void *p;

	if (n < HUGE_FROM)
		return calloc(1, n);
	p = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return NULL;
	(void)madvise(p, n, MADV_HUGEPAGE);
	return p;
}

static void zrelease(void *p, size_t n)
{
	if (n < HUGE_FROM)
		free(p);
	else
		munmap(p, n);
}

static void *zresize(void *p, size_t n, size_t m)
{
	void *q;

	if (n >= HUGE_FROM) {
		q = mremap(p, n, m, MREMAP_MAYMOVE);
		if (q == MAP_FAILED)
			return NULL;
		(void)madvise(q, m, MADV_HUGEPAGE);
		return q;
	}
	if (m < HUGE_FROM) {
		if (!(q = realloc(p, m)))
			return NULL;
		memset((char *)q + n, 0, m - n);
		return q;
	}
	if (!(q = zalloc(m)))
		return NULL;
	memcpy(q, p, n);
	zrelease(p, n);
	return q;
}

static const struct mt_livetab_mem zmem = { zalloc, zresize, zrelease, 0 };

void mt_livetab_init(struct mt_livetab *t, const struct mt_livetab_mem *mem)
{
	memset(t, 0, sizeof(*t));
	t->mem = mem ? mem : &zmem;
	t->wide_free = UINT32_MAX;
}

void mt_livetab_fini(struct mt_livetab *t)
{
	const struct mt_livetab_mem *mem = t->mem;

	if (t->slots)
		mem->release(t->slots, t->n * S);
	if (t->odd)
		mem->release(t->odd, t->oddcap * sizeof(*t->odd));
	if (t->wide)
		mem->release(t->wide, t->widecap * sizeof(*t->wide));
	if (t->sorted)
		mem->release(t->sorted, t->sorted_words * sizeof(uint64_t));
	mt_livetab_init(t, mem);
}

void mt_livetab_clear(struct mt_livetab *t)
{
	/* An empty table is all zero already (deletion shifts back, no
	 * tombstones): a fresh or pre-sized one stays untouched. */
	if (t->len)
		memset(t->slots, 0, t->n * S);
	if (t->oddlen)
		memset(t->odd, 0, t->oddcap * sizeof(*t->odd));
	t->len = t->oddlen = 0;
	t->nwide = 0;
	t->wide_free = UINT32_MAX;
}

size_t mt_livetab_bytes(const struct mt_livetab *t)
{
	return t->n * S + t->oddcap * sizeof(*t->odd) + t->widecap * sizeof(*t->wide);
}

/* ---- growth and rehashing in place ---------------------------------------------- */

/*
 * A bitmap of a bit per slot, for the rehash: which slots hold a block
 * already at its place in the new layout. Room for n slots and a tail's
 * worth more (a run that reaches the end extends the table meanwhile).
 */
struct done {
	uint64_t *bits;
	size_t words;
};

static int done_new(struct mt_livetab *t, struct done *d, size_t n)
{
	d->words = (n + 4 * TAIL) / 64 + 1;
	d->bits = t->mem->alloc(d->words * sizeof(uint64_t));
	return d->bits ? 0 : -1;
}

static void done_free(struct mt_livetab *t, struct done *d)
{
	t->mem->release(d->bits, d->words * sizeof(uint64_t));
	d->bits = NULL;
}

/* More slots past the last home (their homes are unchanged): 0 or -1. */
static int extend(struct mt_livetab *t, size_t more)
{
	unsigned char *p = t->mem->resize(t->slots, t->n * S, (t->n + more) * S);

	if (!p)
		return -1;
	t->slots = p;
	t->n += more;
	return 0;
}

int mt_livetab_extend(struct mt_livetab *t)
{
	/* the slots may move (a killed owner leaves them so: moving) */
	t->moving = 1;
	int rc = extend(t, TAIL);
	t->moving = 0;
	return rc;
}

static inline int done_at(const struct done *d, size_t i)
{
	return d->bits[i / 64] >> (i % 64) & 1;
}

/*
 * A block is to go to the last slot: more tail first (the bitmap too,
 * past its slack). 0, or -1 without memory: the rehash then cannot
 * finish, which the callers avoid by asking for both beforehand with room
 * to spare (a run that long has odds below 1e-20).
 */
static int tail_more(struct mt_livetab *t, struct done *d)
{
	if (extend(t, TAIL) < 0)
		return -1;
	if (t->n > d->words * 64) {
		struct done nd;

		if (done_new(t, &nd, t->n) < 0)
			return -1;
		memcpy(nd.bits, d->bits, d->words * sizeof(uint64_t));
		done_free(t, d);
		*d = nd;
	}
	return 0;
}

#define REHASH_AHEAD 16

/*
 * Puts every block of slots [0, upto) at its place for the table's cap,
 * in the same memory: a block is taken out of its slot and put from its
 * home on, into the first slot that is empty or holds a block not yet
 * placed (which is then taken out and placed the same way). Placed blocks
 * never move again, and a block only passes over placed ones, so every
 * run stays whole. d: a clear bitmap of the table's slots, marked where
 * it tells placed blocks from the others (below). ahead: the blocks are
 * in address order (mt_livetab_unsort), their homes asked for ahead.
 */
static int rehash(struct mt_livetab *t, size_t upto, struct done *d, int ahead)
{
	size_t marked = 0;          /* no bit is marked from here on */

	/*
	 * From the end: a block's new home is further on than its old one
	 * (a larger table spreads the same hashes wider), so it mostly lands
	 * past the slot being emptied, where every block is placed already
	 * (those not placed are all before it): there a full slot is passed
	 * over and an empty one taken, with no bit to read or mark.
	 */
	for (size_t i = upto; i-- > 0;) {
		unsigned char *s = t->slots + i * S;
		uint64_t lo = mt_livetab_lo(s);
		uint16_t hi;

		/* blocks in address order go to homes all over the table: the
		 * one placed REHASH_AHEAD blocks later is asked for now */
		if (ahead && i >= REHASH_AHEAD) {
			uint64_t a = mt_livetab_addr_at(t, i - REHASH_AHEAD);

			__builtin_prefetch(t->slots + mt_livetab_home(a, t->cap) * S);
		}
		if (!(lo & MT_LIVETAB_ADDR_MASK) || (i < marked && done_at(d, i)))
			continue;
		memcpy(&hi, s + 8, 2);
		mt_livetab_set(s, 0, 0);
		size_t j = mt_livetab_home(lo & MT_LIVETAB_ADDR_MASK, t->cap);
		if (j > i) {
			while (mt_livetab_lo(t->slots + j * S) & MT_LIVETAB_ADDR_MASK)
				j++;
			if (__builtin_expect(j + 1 >= t->n, 0) && tail_more(t, d) < 0)
				return -1;
			s = t->slots + j * S;
			memcpy(s, &lo, 8);
			memcpy(s + 8, &hi, 2);
			continue;
		}
		for (;;) {
			uint64_t tlo;
			uint16_t thi;

			for (;; j++) {
				tlo = mt_livetab_lo(t->slots + j * S);
				if (j > i ? !(tlo & MT_LIVETAB_ADDR_MASK) : !done_at(d, j))
					break;
			}
			if (__builtin_expect(j + 1 >= t->n, 0) && tail_more(t, d) < 0)
				return -1;
			if (j <= i) {
				d->bits[j / 64] |= 1ull << (j % 64);
				if (j >= marked)
					marked = j + 1;
			}
			s = t->slots + j * S;
			memcpy(&thi, s + 8, 2);
			memcpy(s, &lo, 8);
			memcpy(s + 8, &hi, 2);
			if (!(tlo & MT_LIVETAB_ADDR_MASK))
				break;
			lo = tlo;
			hi = thi;
			j = mt_livetab_home(lo & MT_LIVETAB_ADDR_MASK, t->cap);
		}
	}
	return 0;
}

/* A table of cap homes: it grows once 80 % full. */
static void set_cap(struct mt_livetab *t, size_t cap)
{
	t->cap = cap;
	t->grow_at = cap / 5 * 4;
}

/* The table with cap homes (more than now): 0, or -1 (unchanged, unless
 * the rehash failed once begun: see mt_livetab_unsort). */
static int resize(struct mt_livetab *t, size_t cap)
{
	struct done d;
	size_t old_n = t->n;

	if (!t->slots) {
		if (!(t->slots = t->mem->alloc((cap + TAIL) * S)))
			return -1;
		t->n = cap + TAIL;
		set_cap(t, cap);
		return 0;
	}
	if (done_new(t, &d, cap + TAIL) < 0)
		return -1;
	t->moving = 1;
	int rc = extend(t, cap + TAIL > t->n ? cap + TAIL - t->n : 0);
	if (rc == 0) {
		set_cap(t, cap);
		/* with the bitmap's slack, -1 here means a run of thousands */
		rc = rehash(t, old_n, &d, 0);
	}
	done_free(t, &d);
	t->moving = 0;
	return rc;
}

/* The homes for at least n blocks, growing from cap. */
static size_t cap_for(const struct mt_livetab *t, size_t cap, uint64_t n)
{
	size_t dbl = t->mem->double_below ? t->mem->double_below : DOUBLE_BELOW;

	if (!cap)
		cap = MIN_CAP;
	while (cap / 5 * 4 <= n)
		cap = cap * S < dbl ? cap * 2 : cap + cap / 4;
	return cap;
}

int mt_livetab_reserve(struct mt_livetab *t, uint64_t n)
{
	/* 2^25 blocks at most from a hint: a damaged log's END must not ask
	 * for the machine; growth on the way still goes further. */
	if (n > (1u << 25))
		n = 1u << 25;
	size_t cap = cap_for(t, t->cap, n);

	return cap > t->cap || !t->slots ? resize(t, cap) : 0;
}

int mt_livetab_grow(struct mt_livetab *t)
{
	return resize(t, cap_for(t, t->cap, t->len + 1));
}

/*
 * A block's slot copied to another: its first word (the address) before
 * the rest, which mt_livetab_mend relies on to find a move cut off.
 */
static void move_slot(unsigned char *dst, const unsigned char *src)
{
	uint64_t lo = mt_livetab_lo(src);
	uint16_t hi;

	memcpy(&hi, src + 8, 2);
	memcpy(dst, &lo, 8);
	__asm__ volatile("" ::: "memory");
	memcpy(dst + 8, &hi, 2);
}

void mt_livetab_shift(struct mt_livetab *t, unsigned char *hole)
{
	/* Backward shift: move into the hole every later block of the run
	 * whose home is at or before the hole, so that no probe chain breaks
	 * (no wrap: a block's home is never after its slot). */
	for (unsigned char *s = hole + S;; s += S) {
		uint64_t a = mt_livetab_lo(s) & MT_LIVETAB_ADDR_MASK;

		if (!a)
			break;
		if (t->slots + mt_livetab_home(a, t->cap) * S <= hole) {
			move_slot(hole, s);
			hole = s;
		}
	}
	mt_livetab_set(hole, 0, 0);
}

int mt_livetab_mend(struct mt_livetab *t, uint64_t addr)
{
	if (mt_livetab_is_odd(addr) || !t->cap)
		return 0;
	/*
	 * A backward shift cut off (mt_livetab_shift) leaves the last block
	 * it moved in two slots of the run: its new one, maybe half written
	 * (a slot is two stores, the address first: move_slot), and its old
	 * one, whole, which was the hole to fill next. Every move goes from a later slot of the run to an
	 * earlier one at or after the removed block's slot, itself at or
	 * after addr's home: the pair lies in the run from there, and no
	 * other address is in a run twice. The later copy goes over the
	 * earlier, and the shift goes on from the later.
	 */
	unsigned char *run = t->slots + mt_livetab_home(addr, t->cap) * S;
	for (unsigned char *a = run; mt_livetab_lo(a) & MT_LIVETAB_ADDR_MASK; a += S) {
		uint64_t x = mt_livetab_lo(a) & MT_LIVETAB_ADDR_MASK;

		for (unsigned char *b = a + S; mt_livetab_lo(b) & MT_LIVETAB_ADDR_MASK; b += S)
			if ((mt_livetab_lo(b) & MT_LIVETAB_ADDR_MASK) == x) {
				move_slot(a, b);
				mt_livetab_shift(t, b);
				return 1;
			}
	}
	return 0;
}

/* ---- address order, for the leak scan ------------------------------------------ */

static inline uint64_t key_at(const unsigned char *s)
{
	return mt_livetab_lo(s) & MT_LIVETAB_ADDR_MASK;
}

/* A record's sort key: its address, or with cap its home in such a table. */
static inline uint64_t sort_key(const unsigned char *s, size_t cap)
{
	return cap ? mt_livetab_home(key_at(s), cap) : key_at(s);
}

static void swap_slots(unsigned char *a, unsigned char *b)
{
	unsigned char tmp[S];

	memcpy(tmp, a, S);
	memcpy(a, b, S);
	memcpy(b, tmp, S);
}

/*
 * Sorts the n records at base by address (cap 0) or by their home in a
 * table of cap homes, in place: a radix sort on the span of keys the
 * records have (cut in as many equal parts as there are records, up to
 * 2^12, so a heap of 100 MiB takes two passes however high its
 * addresses), each pass counting, then moving every record straight into
 * its part by following cycles (American flag sort); parts of a few
 * records by insertion. work: 2^13 counts per level of depth: each level
 * cuts the span in 32 parts at least (at most twice as wide as a 32nd),
 * so from 2^48 it takes 12 at most.
 */
#define BUCKETS_MAX 4096u
#define SORT_DEPTH 13
#define SORT_WORK (SORT_DEPTH * 2 * BUCKETS_MAX * sizeof(uint32_t))

static void span_sort(unsigned char *base, size_t n, uint32_t *work, int depth, size_t cap)
{
	uint32_t *start = work, *next = work + BUCKETS_MAX, buckets = 32;
	uint64_t lo = UINT64_MAX, hi = 0;
	unsigned shift = 0;

	if (n < 32 || depth == SORT_DEPTH) {
		for (size_t i = 1; i < n; i++)
			for (size_t j = i; j > 0 && sort_key(base + (j - 1) * S, cap) > sort_key(base + j * S, cap); j--)
				swap_slots(base + (j - 1) * S, base + j * S);
		return;
	}
	for (size_t i = 0; i < n; i++) {
		uint64_t k = sort_key(base + i * S, cap);

		lo = k < lo ? k : lo;
		hi = k > hi ? k : hi;
	}
	if (lo == hi)
		return;
	while (buckets < BUCKETS_MAX && buckets < n)
		buckets *= 2;
	while ((hi - lo) >> shift >= buckets)
		shift++;
	memset(start, 0, buckets * sizeof(*start));
	for (size_t i = 0; i < n; i++)
		start[(sort_key(base + i * S, cap) - lo) >> shift]++;
	for (uint32_t b = 0, o = 0; b < buckets; b++) {
		uint32_t c = start[b];

		start[b] = next[b] = o;
		o += c;
	}
	for (uint32_t b = 0; b < buckets; b++) {
		uint32_t end = b + 1 < buckets ? start[b + 1] : (uint32_t)n;

		while (next[b] < end) {
			unsigned char *r = base + (size_t)next[b] * S, rec[S], tmp[S];
			uint32_t c = (uint32_t)((sort_key(r, cap) - lo) >> shift);

			if (c == b) {
				next[b]++;
				continue;
			}
			/* the record goes round its cycle in hand: each one moved
			 * is read and written once */
			memcpy(rec, r, S);
			do {
				unsigned char *d = base + (size_t)next[c]++ * S;

				memcpy(tmp, d, S);
				memcpy(d, rec, S);
				memcpy(rec, tmp, S);
				c = (uint32_t)((sort_key(rec, cap) - lo) >> shift);
			} while (c != b);
			memcpy(r, rec, S);
			next[b]++;
		}
	}
	for (uint32_t b = 0; b < buckets; b++) {
		uint32_t end = b + 1 < buckets ? start[b + 1] : (uint32_t)n;

		if (shift && end - start[b] > 1)
			span_sort(base + (size_t)start[b] * S, end - start[b], work + 2 * BUCKETS_MAX,
				  depth + 1, cap);
	}
}

static int sort_in(struct mt_livetab *t, int back);

int mt_livetab_sort(struct mt_livetab *t, int back)
{
	t->moving = 1;
	int rc = sort_in(t, back);
	t->moving = 0;
	return rc;
}

static int sort_in(struct mt_livetab *t, int back)
{
	size_t wlen = SORT_WORK;
	uint32_t *work = t->mem->alloc(wlen);
	struct done d = { NULL, 0 };
	size_t k = 0;

	/* the bitmap unsort needs, taken now so that unsort cannot fail
	 * (and 32-bit counts) */
	if (t->len > UINT32_MAX || !work || (back && done_new(t, &d, t->n) < 0)) {
		if (work)
			t->mem->release(work, wlen);
		return -1;
	}
	t->sorted = d.bits;
	t->sorted_words = d.words;
	for (size_t i = 0; i < t->n; i++) {
		unsigned char *s = t->slots + i * S;

		if (!key_at(s))
			continue;
		if (k != i) {
			memcpy(t->slots + k * S, s, S);
			mt_livetab_set(s, 0, 0);
		}
		k++;
	}
	span_sort(t->slots, k, work, 1, 0);
	t->mem->release(work, wlen);
	return 0;
}

/*
 * Puts the blocks of slots [0, len), in order of home, at their places: a
 * block goes to its home, or just after the block before it if that one
 * is there or further; so a run of blocks goes to consecutive slots from
 * its first block's home. Every block's place is at or after its slot, so
 * the runs are moved from the last down with nothing overwritten. done:
 * a clear bitmap of len bits at least, to mark where each run begins. 0,
 * or -1 when the last run goes past the table's end and more tail cannot
 * be had (the table can then only be released).
 */
static int place_in_order(struct mt_livetab *t, uint64_t *done)
{
	size_t next = 0, k, s;

	for (k = 0; k < t->len; k++) {
		size_t h = mt_livetab_home(key_at(t->slots + k * S), t->cap);

		if (!k || h >= next) {
			done[k / 64] |= 1ull << (k % 64);
			next = h;
		}
		next++;
	}
	if (next + 1 > t->n && extend(t, next + 1 - t->n + TAIL) < 0)
		return -1;
	for (k = t->len; k > 0; k = s) {
		/* the run that ends at k - 1 begins at the marked slot before */
		for (s = k - 1; !(done[s / 64] >> (s % 64) & 1); s--)
			;
		size_t to = mt_livetab_home(key_at(t->slots + s * S), t->cap) + (k - 1 - s);

		for (size_t i = k; i-- > s; to--)
			if (to != i) {
				memcpy(t->slots + to * S, t->slots + i * S, S);
				mt_livetab_set(t->slots + i * S, 0, 0);
			}
	}
	return 0;
}

int mt_livetab_unsort(struct mt_livetab *t)
{
	struct done d = { t->sorted, t->sorted_words };
	uint32_t *work = d.bits ? t->mem->alloc(SORT_WORK) : NULL;
	int rc;

	t->moving = 1;
	/*
	 * Sorted again by home, the blocks go to their places in one pass
	 * over the slots; without the memory for that sort, each is rehashed
	 * from where it is (half as fast: the homes of blocks in address
	 * order are all over the table, and places taken by blocks not yet
	 * placed send those on further).
	 */
	if (work) {
		span_sort(t->slots, t->len, work, 1, t->cap);
		t->mem->release(work, SORT_WORK);
		rc = place_in_order(t, d.bits);
	} else {
		rc = d.bits ? rehash(t, t->len, &d, 1) : -1;
	}

	done_free(t, &d);
	t->sorted = NULL;
	t->moving = 0;
	return rc;
}

/* ---- odd addresses ----------------------------------------------------------------- */

static size_t odd_find(const struct mt_livetab *t, uint64_t addr)
{
	size_t mask = t->oddcap - 1;

	if (!t->oddcap)
		return SIZE_MAX;
	for (size_t i = (size_t)(addr * 0x9E3779B97F4A7C15ull >> 32) & mask; t->odd[i].used;
	     i = (i + 1) & mask)
		if (t->odd[i].addr == addr)
			return i;
	return SIZE_MAX;
}

static void odd_insert(struct mt_livetab_odd *odd, size_t cap, uint64_t addr, uint32_t val)
{
	size_t i = (size_t)(addr * 0x9E3779B97F4A7C15ull >> 32) & (cap - 1);

	while (odd[i].used)
		i = (i + 1) & (cap - 1);
	odd[i].addr = addr;
	odd[i].val = val;
	odd[i].used = 1;
}

int mt_livetab_odd_put(struct mt_livetab *t, uint64_t addr, uint32_t val, uint32_t *old)
{
	size_t i = odd_find(t, addr);

	if (i != SIZE_MAX) {
		*old = t->odd[i].val;
		t->odd[i].val = val;
		return 1;
	}
	if ((t->oddlen + 1) * 2 > t->oddcap) {
		size_t cap = t->oddcap ? 2 * t->oddcap : 16;
		struct mt_livetab_odd *odd = t->mem->alloc(cap * sizeof(*odd));

		if (!odd)
			return -1;
		for (i = 0; i < t->oddcap; i++)
			if (t->odd[i].used)
				odd_insert(odd, cap, t->odd[i].addr, t->odd[i].val);
		if (t->odd)
			t->mem->release(t->odd, t->oddcap * sizeof(*t->odd));
		t->odd = odd;
		t->oddcap = cap;
	}
	odd_insert(t->odd, t->oddcap, addr, val);
	t->oddlen++;
	return 0;
}

int mt_livetab_odd_get(const struct mt_livetab *t, uint64_t addr, uint32_t *val)
{
	size_t i = odd_find(t, addr);

	if (i == SIZE_MAX)
		return 0;
	*val = t->odd[i].val;
	return 1;
}

int mt_livetab_odd_take(struct mt_livetab *t, uint64_t addr, uint32_t *val)
{
	size_t i = odd_find(t, addr), mask = t->oddcap - 1;

	if (i == SIZE_MAX)
		return 0;
	*val = t->odd[i].val;
	t->odd[i].used = 0;
	t->oddlen--;
	/* the rest of the run goes in again (few: the table is half empty) */
	for (size_t j = (i + 1) & mask; t->odd[j].used; j = (j + 1) & mask) {
		struct mt_livetab_odd e = t->odd[j];

		t->odd[j].used = 0;
		odd_insert(t->odd, t->oddcap, e.addr, e.val);
	}
	return 1;
}

/* ---- wide records ---------------------------------------------------------------- */

int mt_livetab_wide_new(struct mt_livetab *t, const struct mt_livetab_wide *w, uint32_t *idx)
{
	uint32_t i = t->wide_free;

	if (i != UINT32_MAX) {
		t->wide_free = t->wide[i].thread;
	} else {
		if (t->nwide == t->widecap) {
			size_t cap = t->widecap ? 2 * t->widecap : 64;
			struct mt_livetab_wide *p;

			if (cap > MT_LIVETAB_WIDE)
				return -1;
			p = t->wide ? t->mem->resize(t->wide, t->widecap * sizeof(*p), cap * sizeof(*p))
				    : t->mem->alloc(cap * sizeof(*p));
			if (!p)
				return -1;
			t->wide = p;
			t->widecap = cap;
		}
		i = (uint32_t)t->nwide++;
	}
	t->wide[i] = *w;
	*idx = i;
	return 0;
}

void mt_livetab_wide_free(struct mt_livetab *t, uint32_t idx)
{
	t->wide[idx].thread = t->wide_free;
	t->wide_free = idx;
}

int mt_livetab_each(const struct mt_livetab *t, int (*fn)(void *ctx, uint64_t addr, uint32_t val),
		    void *ctx)
{
	int rc = 0;

	for (size_t i = 0; i < t->n && !rc; i++) {
		const unsigned char *s = t->slots + i * S;
		uint64_t lo = mt_livetab_lo(s);

		if (lo & MT_LIVETAB_ADDR_MASK)
			rc = fn(ctx, lo & MT_LIVETAB_ADDR_MASK, mt_livetab_val_of(s, lo));
	}
	for (size_t i = 0; i < t->oddcap && !rc; i++)
		if (t->odd[i].used)
			rc = fn(ctx, t->odd[i].addr, t->odd[i].val);
	return rc;
}

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

#define MIN_CAP 4096

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

void mt_livetab_init(struct mt_livetab *t, void *(*alloc)(size_t n),
		     void (*release)(void *p, size_t n))
{
	memset(t, 0, sizeof(*t));
	t->alloc = alloc ? alloc : zalloc;
	t->release = alloc ? release : zrelease;
}

void mt_livetab_fini(struct mt_livetab *t)
{
	if (t->slots)
		t->release(t->slots, t->cap * sizeof(*t->slots));
	t->slots = NULL;
	t->cap = t->len = 0;
	t->zero_live = 0;
	t->zero_val = 0;
}

void mt_livetab_clear(struct mt_livetab *t)
{
	/* An empty table is all zero already (deletion shifts back, no
	 * tombstones): a fresh or pre-sized one stays untouched. */
	if (t->len)
		memset(t->slots, 0, t->cap * sizeof(*t->slots));
	t->len = 0;
	t->zero_live = 0;
	t->zero_val = 0;
}

/* Rehashes into ncap slots (a power of two, room for every block). */
static int resize(struct mt_livetab *t, size_t ncap)
{
	struct mt_livetab_slot *ns = t->alloc(ncap * sizeof(*ns));
	size_t i, j;

	if (!ns)
		return -1;
	for (i = 0; i < t->cap; i++) {
		if (!t->slots[i].addr)
			continue;
		for (j = mt_livetab_home(t->slots[i].addr, ncap); ns[j].addr; j = (j + 1) & (ncap - 1))
			;
		ns[j] = t->slots[i];
	}
	if (t->slots)
		t->release(t->slots, t->cap * sizeof(*t->slots));
	t->slots = ns;
	t->cap = ncap;
	return 0;
}

int mt_livetab_reserve(struct mt_livetab *t, uint64_t n)
{
	size_t cap = t->cap ? t->cap : MIN_CAP;

	/* 2^26 slots (1 GiB) at most from a hint: a damaged log's END must
	 * not ask for the machine; growth on the way still goes further. */
	if (n > (1u << 25))
		n = 1u << 25;
	while (mt_livetab_full((size_t)n, cap))
		cap *= 2;
	return cap > t->cap ? resize(t, cap) : 0;
}

int mt_livetab_grow(struct mt_livetab *t)
{
	return resize(t, t->cap ? t->cap * 2 : MIN_CAP);
}

void mt_livetab_shift(struct mt_livetab *t, size_t i)
{
	size_t j, home, mask = t->cap - 1;

	/* Backward shift: move into the hole every later entry of the run
	 * whose home is not in (i, j], so that no probe chain breaks. */
	for (j = i;;) {
		j = (j + 1) & mask;
		if (!t->slots[j].addr)
			break;
		home = mt_livetab_home(t->slots[j].addr, t->cap);
		if ((j > i && (home <= i || home > j)) || (j < i && home <= i && home > j)) {
			t->slots[i] = t->slots[j];
			i = j;
		}
	}
	t->slots[i].addr = 0;
	t->slots[i].val = 0;
}

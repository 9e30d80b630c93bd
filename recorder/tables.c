/*
 * tables.c - the recorder's in-process tables, all in mmap'ed memory so
 * nothing here goes through the malloc hooks or counts as the program's:
 *   - mt_mem_*: a trivial mmap allocator (for the writer and zstd), and the
 *     list of every mapping made here (for the leak scan);
 *   - mt_stacks: distinct stacks (hash table, full comparison: frames,
 *     entry point and tag path), ids 0, 1...;
 *   - mt_live: live blocks, address -> requested size and stack id, in
 *     lib/livetab.h's table (the replay's too), plus the live bytes.
 *
 * Not for: locking (core.c holds the log lock around every call here).
 */
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "livetab.h"
#include "recorder.h"

/* ---- the recorder's own pages -------------------------------------------------- */

/*
 * Every mapping made here, listed so that a leak scan leaves them out of
 * its roots (the live table holds every block's address). Slots are
 * claimed with a compare-and-swap: the mmap allocator is called under the
 * log lock or the I/O lock, not always the same one. A mapping that finds
 * no slot makes the list incomplete, and the scan then refuses.
 */
#define OWN_MAX 4096
static struct { uint64_t lo, hi; } own[OWN_MAX];
static int own_lost;

static void own_add(void *p, size_t len)
{
	uint64_t lo = (uintptr_t)p;
	for (size_t i = 0; i < OWN_MAX; i++) {
		uint64_t zero = 0;
		if (__atomic_compare_exchange_n(&own[i].lo, &zero, lo, 0, __ATOMIC_ACQ_REL,
						__ATOMIC_RELAXED)) {
			__atomic_store_n(&own[i].hi, lo + len, __ATOMIC_RELEASE);
			return;
		}
	}
	__atomic_store_n(&own_lost, 1, __ATOMIC_RELEASE);
}

static void own_del(void *p)
{
	uint64_t lo = (uintptr_t)p;
	for (size_t i = 0; i < OWN_MAX; i++)
		if (__atomic_load_n(&own[i].lo, __ATOMIC_ACQUIRE) == lo) {
			__atomic_store_n(&own[i].hi, 0, __ATOMIC_RELEASE);
			__atomic_store_n(&own[i].lo, 0, __ATOMIC_RELEASE);
			return;
		}
}

size_t mt_mem_owned(uint64_t *ranges, size_t max)
{
	size_t k = 0;
	if (__atomic_load_n(&own_lost, __ATOMIC_ACQUIRE))
		return SIZE_MAX;
	for (size_t i = 0; i < OWN_MAX; i++) {
		uint64_t lo = __atomic_load_n(&own[i].lo, __ATOMIC_ACQUIRE);
		uint64_t hi = __atomic_load_n(&own[i].hi, __ATOMIC_ACQUIRE);
		if (!lo || hi <= lo)
			continue;
		if (k < max) {
			ranges[2 * k] = lo;
			ranges[2 * k + 1] = hi;
		}
		k++;
	}
	return k;
}

/* ---- mmap allocator -------------------------------------------------------- */

#define MEM_HDR 16

void *mt_mem_alloc(size_t size)
{
	size_t len = (size + MEM_HDR + 4095) & ~(size_t)4095;
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return NULL;
	own_add(p, len);
	*(size_t *)p = len;
	return (char *)p + MEM_HDR;
}

void mt_mem_free(void *p)
{
	if (!p)
		return;
	char *base = (char *)p - MEM_HDR;
	own_del(base);
	munmap(base, *(size_t *)base);
}

void *mt_mem_alloc_cb(void *opaque, size_t size)
{
	(void)opaque;
	return mt_mem_alloc(size);
}

void mt_mem_free_cb(void *opaque, void *p)
{
	(void)opaque;
	mt_mem_free(p);
}

/* The whole pages among the len bytes at p (mt_mem_alloc's) given back:
 * read again, they are zeros. */
void mt_mem_idle_cb(void *opaque, void *p, size_t len)
{
	static uintptr_t page;
	(void)opaque;
	if (!page)
		page = (uintptr_t)sysconf(_SC_PAGESIZE);
	uintptr_t a = ((uintptr_t)p + page - 1) & ~(page - 1);
	uintptr_t e = ((uintptr_t)p + len) & ~(page - 1);
	if (e > a)
		madvise((void *)a, e - a, MADV_DONTNEED);
}

/* Raw anonymous pages, zeroed; for the growing tables. */
static void *pages(size_t len)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return NULL;
	own_add(p, len);
	return p;
}

static void unpages(void *p, size_t len)
{
	own_del(p);
	munmap(p, len);
}

/* ---- distinct stacks ------------------------------------------------------ */

/*
 * Open addressing, linear probing, at most three quarters full. A slot is
 * 8 bytes, 32 bits of the stack's hash and its id + 1; what a stack is
 * (where its frames are, how many, the entry point and tag path) is kept
 * by id in an array as long as the stacks, so empty slots cost 8 bytes
 * and not the 32 of a slot holding it all (cc1: 9,824 stacks, 16,384
 * slots, 285 KiB a table instead of 512). A hit reads its slot, its id's
 * record and its frames. The frames of a thread's table are copied into
 * chunks that never move (a chunk full, the next one is mapped, each
 * twice the last up to 1 MiB: few mappings for the leak scan's list of
 * ours), so that the log's table can point at them instead of holding a
 * second copy (cc1: 1.6 MiB of frames).
 */
struct stack_slot {
	uint32_t hash;        /* the capture's hash, low 32 bits (the home too) */
	uint32_t id1;         /* id + 1; 0 = empty */
};

struct stack_rec {
	const uint64_t *ips;  /* the frames: in a chunk, or the caller's (refs) */
	uint16_t n;
	uint16_t fn;
	uint32_t tag;         /* tag path: part of the identity (tags.c) */
};

/* A chunk of frames: this header, then frames. */
struct frames_chunk {
	struct frames_chunk *next;
	size_t bytes;         /* the mapping's */
};

#define CHUNK_FIRST ((size_t)64 << 10)
#define CHUNK_MAX   ((size_t)1 << 20)
_Static_assert(CHUNK_FIRST >= sizeof(struct frames_chunk) + MT_MAX_DEPTH * sizeof(uint64_t),
	       "a chunk holds the deepest stack");

struct mt_stacks {
	struct stack_slot *slots;
	size_t mask;          /* slots - 1 (power of two) */
	size_t count;
	struct stack_rec *recs;   /* by id, room for reccap */
	size_t reccap;
	int refs;
	struct frames_chunk *chunks;  /* the latest first */
	uint64_t *free_at;    /* the latest chunk's room */
	size_t room;          /* in frames */
	size_t next_bytes;    /* the next chunk's mapping */
};

struct mt_stacks *mt_stacks_new(int refs)
{
	struct mt_stacks *s = pages(sizeof(*s));
	if (!s)
		return NULL;
	s->refs = refs;
	s->next_bytes = CHUNK_FIRST;
	s->mask = 1023;
	s->reccap = 512;
	s->slots = pages((s->mask + 1) * sizeof(struct stack_slot));
	s->recs = pages(s->reccap * sizeof(struct stack_rec));
	if (!s->slots || !s->recs) {
		mt_stacks_free(s);
		return NULL;
	}
	return s;
}

void mt_stacks_free(struct mt_stacks *s)
{
	if (!s)
		return;
	if (s->slots)
		unpages(s->slots, (s->mask + 1) * sizeof(struct stack_slot));
	if (s->recs)
		unpages(s->recs, s->reccap * sizeof(struct stack_rec));
	while (s->chunks) {
		struct frames_chunk *c = s->chunks;
		s->chunks = c->next;
		unpages(c, c->bytes);
	}
	unpages(s, sizeof(*s));
}

static int stacks_grow(struct mt_stacks *s)
{
	size_t nmask = s->mask * 2 + 1;
	struct stack_slot *ns = pages((nmask + 1) * sizeof(*ns));
	if (!ns)
		return -1;
	for (size_t i = 0; i <= s->mask; i++) {
		struct stack_slot *o = &s->slots[i];
		if (!o->id1)
			continue;
		size_t j = o->hash & nmask;
		while (ns[j].id1)
			j = (j + 1) & nmask;
		ns[j] = *o;
	}
	unpages(s->slots, (s->mask + 1) * sizeof(struct stack_slot));
	s->slots = ns;
	s->mask = nmask;
	return 0;
}

static int recs_grow(struct mt_stacks *s)
{
	size_t ncap = s->reccap * 2;
	struct stack_rec *nr = pages(ncap * sizeof(*nr));
	if (!nr)
		return -1;
	memcpy(nr, s->recs, s->count * sizeof(*nr));
	unpages(s->recs, s->reccap * sizeof(*nr));
	s->recs = nr;
	s->reccap = ncap;
	return 0;
}

/* Room for n (<= MT_MAX_DEPTH) frames that stay put; NULL when out of memory. */
static uint64_t *frames_room(struct mt_stacks *s, size_t n)
{
	if (n > s->room || !s->free_at) {
		size_t bytes = s->next_bytes;
		struct frames_chunk *c = pages(bytes);
		if (!c)
			return NULL;
		if (bytes < CHUNK_MAX)
			s->next_bytes = 2 * bytes;
		c->next = s->chunks;
		c->bytes = bytes;
		s->chunks = c;
		s->free_at = (uint64_t *)(c + 1);
		s->room = (bytes - sizeof(*c)) / sizeof(uint64_t);
	}
	uint64_t *p = s->free_at;
	s->free_at += n;
	s->room -= n;
	return p;
}

int64_t mt_stacks_intern(struct mt_stacks *s, const struct mt_capture *c, int *is_new,
			 const uint64_t **frames)
{
	uint32_t h = (uint32_t)c->hash;
	size_t i = h & s->mask;
	*is_new = 0;
	for (;;) {
		struct stack_slot *sl = &s->slots[i];
		if (!sl->id1)
			break;
		if (sl->hash == h) {
			const struct stack_rec *r = &s->recs[sl->id1 - 1];

			if (r->n == c->n && r->fn == c->fn && r->tag == c->tag &&
			    memcmp(r->ips, c->ips, c->n * sizeof(uint64_t)) == 0)
				return sl->id1 - 1;
		}
		i = (i + 1) & s->mask;
	}
	if (s->count == s->reccap && recs_grow(s) < 0)
		return -1;
	const uint64_t *ips = c->ips;
	if (!s->refs) {
		uint64_t *p = frames_room(s, c->n);
		if (!p)
			return -1;
		memcpy(p, c->ips, c->n * sizeof(uint64_t));
		ips = p;
	}
	if ((s->count + 1) * 4 > (s->mask + 1) * 3) {
		if (stacks_grow(s) < 0)
			return -1;
		/* Find the free slot again in the bigger table. */
		i = h & s->mask;
		while (s->slots[i].id1)
			i = (i + 1) & s->mask;
	}
	struct stack_rec *r = &s->recs[s->count];
	r->ips = ips;
	r->n = (uint16_t)c->n;
	r->fn = (uint16_t)c->fn;
	r->tag = c->tag;
	struct stack_slot *sl = &s->slots[i];
	sl->hash = h;
	sl->id1 = (uint32_t)++s->count;
	*is_new = 1;
	if (frames)
		*frames = ips;
	return sl->id1 - 1;
}

size_t mt_stacks_count(const struct mt_stacks *s)
{
	return s->count;
}

int mt_stacks_each(const struct mt_stacks *s,
		   int (*fn)(void *ctx, uint32_t id, unsigned efn, uint32_t tag,
			     const uint64_t *ips, unsigned n),
		   void *ctx)
{
	int rc = 0;

	for (size_t id = 0; id < s->count && !rc; id++) {
		const struct stack_rec *r = &s->recs[id];

		rc = fn(ctx, (uint32_t)id, r->fn, r->tag, r->ips, r->n);
	}
	return rc;
}

/* ---- live blocks ---------------------------------------------------------- */

/*
 * The table is lib/livetab.h's, on pages of our own (recorder.h: struct
 * mt_live and the inline add and remove). Most blocks' size and stack fit
 * a slot's value: a block of 8 KiB or more, or of a stack id from 2^18
 * up, has a wide record (a few in most runs: sqlite's page cache and
 * python's objects are under 8 KiB), so slots stay 10 bytes.
 */

/*
 * A table of 2 MiB or more is on transparent huge pages where the system
 * gives them on request (Debian's default, THP "madvise"): its slots are
 * probed at random, and with 4 KiB pages nearly every probe of a table of
 * a million blocks also missed the TLB (perf on the stl workload: the
 * prefetch ahead of the probes, tbuf.c, was itself 2 % of the run). Such
 * a table is mapped 2 MiB-aligned and in whole 2 MiB units, which it
 * fills anyway: slots are spread evenly over the table. It grows with
 * mremap, which moves the pages (the table is never in memory twice), to
 * a 2 MiB-aligned place reserved first.
 */
#define HUGE_PAGE ((size_t)2 << 20)

static size_t live_len(size_t n)
{
	return n >= HUGE_PAGE ? (n + HUGE_PAGE - 1) & ~(HUGE_PAGE - 1) : n;
}

/* len bytes of address space 2 MiB-aligned, prot; NULL when none. */
static char *aligned_map(size_t len, int prot)
{
	char *p = mmap(NULL, len + HUGE_PAGE, prot, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
		       -1, 0), *a;

	if (p == MAP_FAILED)
		return NULL;
	a = (char *)(((uintptr_t)p + HUGE_PAGE - 1) & ~(uintptr_t)(HUGE_PAGE - 1));
	if (a > p)
		munmap(p, (size_t)(a - p));
	munmap(a + len, (size_t)(p + len + HUGE_PAGE - (a + len)));
	return a;
}

static void *live_pages(size_t n)
{
	size_t len = live_len(n);
	char *a;

	if (len < HUGE_PAGE)
		return pages(len);
	if (!(a = aligned_map(len, PROT_READ | PROT_WRITE)))
		return NULL;
	(void)madvise(a, len, MADV_HUGEPAGE);
	own_add(a, len);
	return a;
}

static void *live_resize(void *p, size_t n, size_t m)
{
	size_t ln = live_len(n), lm = live_len(m);
	char *q;

	if (lm == ln)
		return p;
	if (lm < HUGE_PAGE) {
		q = mremap(p, ln, lm, MREMAP_MAYMOVE);
		if (q == MAP_FAILED)
			return NULL;
	} else {
		if (!(q = aligned_map(lm, PROT_NONE)))
			return NULL;
		if (mremap(p, ln, lm, MREMAP_MAYMOVE | MREMAP_FIXED, q) == MAP_FAILED) {
			munmap(q, lm);
			return NULL;
		}
		(void)madvise(q, lm, MADV_HUGEPAGE);
	}
	own_del(p);
	own_add(q, lm);
	return q;
}

static void live_unpages(void *p, size_t n)
{
	unpages(p, live_len(n));
}

static const struct mt_livetab_mem live_mem = { live_pages, live_resize, live_unpages };

struct mt_live *mt_live_new(void)
{
	struct mt_live *l = pages(sizeof(*l));

	if (!l)
		return NULL;
	mt_livetab_init(&l->tab, &live_mem);
	if (mt_livetab_reserve(&l->tab, 1) < 0) {
		unpages(l, sizeof(*l));
		return NULL;
	}
	return l;
}

void mt_live_free(struct mt_live *l)
{
	if (!l)
		return;
	mt_livetab_fini(&l->tab);
	unpages(l, sizeof(*l));
}

int mt_live_add_wide(struct mt_live *l, uint64_t addr, struct mt_block b, struct mt_block *old)
{
	uint32_t val, prev = 0;
	int rc;

	if (mt_livetab_pack(&l->tab, MT_LIVE_STACK_BITS, b.size, b.stack, 0, &val) < 0)
		return -1;
	rc = mt_livetab_put(&l->tab, addr, val, &prev);
	if (rc < 0)
		mt_livetab_wide_free(&l->tab, val & ~MT_LIVETAB_WIDE);
	return mt_live_added(l, rc, prev, b.size, old);
}

struct by_stack {
	const struct mt_live *l;
	uint64_t *bytes, *blocks;
};

static int count_block(void *ctx, uint64_t addr, uint32_t val)
{
	struct by_stack *c = ctx;
	struct mt_block b = mt_live_block(&c->l->tab, val);

	(void)addr;
	c->bytes[b.stack] += b.size;
	c->blocks[b.stack]++;
	return 0;
}

void mt_live_by_stack(const struct mt_live *l, uint64_t *bytes, uint64_t *blocks)
{
	struct by_stack c = { l, bytes, blocks };

	(void)mt_livetab_each(&l->tab, count_block, &c);
}


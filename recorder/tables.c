/*
 * tables.c - the recorder's in-process tables, all in mmap'ed memory so
 * nothing here goes through the malloc hooks or counts as the program's:
 *   - mt_mem_*: a trivial mmap allocator (for the writer and zstd), and the
 *     list of every mapping made here (for the leak scan);
 *   - the arena: one MAP_SHARED mapping every page above comes from when
 *     the recording has a drainer process (core.c), and its copy in a
 *     forked child;
 *   - mt_stacks: distinct stacks (hash table, full comparison: frames,
 *     entry point and tag path), ids 0, 1...;
 *   - mt_live: live blocks, address -> requested size and stack id, in
 *     lib/livetab.h's table (the replay's too), plus the live bytes.
 *
 * Not for: locking. core.c holds the log lock around every call here but
 * for a thread's own stack table, which only its thread writes, without
 * a lock; whoever drains (log lock held) reads its records, which never
 * change once the ring's STACK record has published them (tbuf.c).
 */
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#include "livetab.h"
#include "recorder.h"

/* ---- the recorder's own pages -------------------------------------------------- */

/*
 * Every mapping made here, listed so that a leak scan leaves them out of
 * its roots (the live table holds every block's address). Slots are
 * claimed with a compare-and-swap: the mmap allocator is called under the
 * log lock or the I/O lock, not always the same one, and by threads
 * interning stacks in their own tables with no lock at all. Each thread
 * takes some six mappings (its ring, its stack table's slots, records and
 * their chunks), so the list grows without bound: a full part gets a next
 * one, mmap'ed and linked with a compare-and-swap, whose first slot lists
 * the part itself. Parts are never freed. Only a part that cannot be
 * mapped makes the list incomplete, and the scan then refuses.
 */
#define OWN_PART 4096
struct own_part {
	struct { uint64_t lo, hi; } s[OWN_PART];
	uint32_t used;             /* slots claimed (a hint: updated after) */
	uint32_t hint;             /* where the next search starts */
	struct own_part *next;
};
struct own_list {
	struct own_part first;
	int lost;                  /* a part could not be mapped */
};
static struct own_list own;

static struct own_list arena_used, arena_kept;
static void *arena_take(size_t len, size_t align);

/* The part after p of l, made if there is none; NULL without memory. The
 * arena's list has its parts in the arena (a forked child copies them). */
static struct own_part *own_next(struct own_list *l, struct own_part *p)
{
	struct own_part *n = __atomic_load_n(&p->next, __ATOMIC_ACQUIRE), *none = NULL;
	if (n)
		return n;
	if (l == &arena_used || l == &arena_kept) {
		if (!(n = arena_take(sizeof(*n), 4096)))
			return NULL;
	} else {
		n = mmap(NULL, sizeof(*n), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (n == MAP_FAILED)
			return NULL;
	}
	n->s[0].lo = (uintptr_t)n;
	n->s[0].hi = (uintptr_t)n + sizeof(*n);
	n->used = n->hint = 1;
	if (__atomic_compare_exchange_n(&p->next, &none, n, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
		return n;
	if (l != &arena_used && l != &arena_kept)
		munmap(n, sizeof(*n));   /* (the arena's: its addresses are not reused) */
	return none;      /* another thread's, linked first */
}

/*
 * Full parts are passed over, and a search starts after the slot taken
 * last: with thousands of threads, a mapping is listed in a few steps,
 * not after a compare-and-swap on every slot before it.
 */
static void own_add(struct own_list *l, void *p, size_t len)
{
	uint64_t lo = (uintptr_t)p;
	for (struct own_part *q = &l->first; q; q = own_next(l, q)) {
		if (__atomic_load_n(&q->used, __ATOMIC_RELAXED) >= OWN_PART)
			continue;
		uint32_t h = __atomic_load_n(&q->hint, __ATOMIC_RELAXED);
		for (uint32_t k = 0; k < OWN_PART; k++) {
			uint32_t i = (h + k) % OWN_PART;
			uint64_t zero = 0;
			if (__atomic_load_n(&q->s[i].lo, __ATOMIC_RELAXED) == 0 &&
			    __atomic_compare_exchange_n(&q->s[i].lo, &zero, lo, 0, __ATOMIC_ACQ_REL,
							__ATOMIC_RELAXED)) {
				__atomic_store_n(&q->s[i].hi, lo + len, __ATOMIC_RELEASE);
				__atomic_add_fetch(&q->used, 1, __ATOMIC_RELAXED);
				__atomic_store_n(&q->hint, (i + 1) % OWN_PART, __ATOMIC_RELAXED);
				return;
			}
		}
	}
	__atomic_store_n(&l->lost, 1, __ATOMIC_RELEASE);
}

/* 1 if p was listed in l (and is no more), else 0. */
static int own_del(struct own_list *l, void *p)
{
	uint64_t lo = (uintptr_t)p;
	for (struct own_part *q = &l->first; q; q = __atomic_load_n(&q->next, __ATOMIC_ACQUIRE))
		for (size_t i = 0; i < OWN_PART; i++)
			if (__atomic_load_n(&q->s[i].lo, __ATOMIC_ACQUIRE) == lo) {
				__atomic_store_n(&q->s[i].hi, 0, __ATOMIC_RELEASE);
				__atomic_store_n(&q->s[i].lo, 0, __ATOMIC_RELEASE);
				__atomic_sub_fetch(&q->used, 1, __ATOMIC_RELAXED);
				return 1;
			}
	return 0;
}

/* Calls fn on every range of l; stops at its first nonzero. */
static int own_each(const struct own_list *l, int (*fn)(void *ctx, uint64_t lo, uint64_t hi),
		    void *ctx)
{
	for (const struct own_part *q = &l->first; q; q = __atomic_load_n(&q->next, __ATOMIC_ACQUIRE))
		for (size_t i = 0; i < OWN_PART; i++) {
			uint64_t lo = __atomic_load_n(&q->s[i].lo, __ATOMIC_ACQUIRE);
			uint64_t hi = __atomic_load_n(&q->s[i].hi, __ATOMIC_ACQUIRE);
			int rc;
			if (lo && hi > lo && (rc = fn(ctx, lo, hi)) != 0)
				return rc;
		}
	return 0;
}

struct owned { uint64_t *ranges; size_t max, k; };

static int owned_one(void *ctx, uint64_t lo, uint64_t hi)
{
	struct owned *o = ctx;
	if (o->k < o->max) {
		o->ranges[2 * o->k] = lo;
		o->ranges[2 * o->k + 1] = hi;
	}
	o->k++;
	return 0;
}

size_t mt_mem_owned(uint64_t *ranges, size_t max)
{
	struct owned o = { ranges, max, 0 };
	if (__atomic_load_n(&own.lost, __ATOMIC_ACQUIRE))
		return SIZE_MAX;
	(void)own_each(&own, owned_one, &o);
	return o.k;
}

/* ---- the arena: memory shared with the drainer process ----------------------- */

/*
 * With a drainer process (core.c), every page the recorder maps comes
 * from one arena, mapped MAP_SHARED | MAP_NORESERVE before that process
 * is cloned, so both find every table at the same address: the program's
 * threads write their rings and stack tables, the drainer the live table,
 * the log's stack table and the writer's buffers, and each process's RSS
 * holds only the pages it touched. Pages are taken in order and never
 * handed out twice (a freed range gives its memory back, not its
 * addresses: 64 GiB of addresses outlast any run's tables; under an
 * address-space limit, an eighth of the limit). The ranges in
 * use are listed (arena_used, arena_kept) for a forked child
 * (mt_arena_fork). The whole arena is one of the
 * recorder's own mappings (the leak scan leaves it out) and out of core
 * dumps.
 */
#define ARENA_BYTES ((size_t)64 << 30)
#define ARENA_MIN ((size_t)256 << 20)
#define ARENA_ALIGN ((size_t)2 << 20)
#ifndef MADV_COLLAPSE
#define MADV_COLLAPSE 25
#endif
static char *arena, *arena_end;
static struct {
	void *p;            /* the live table's slots, when they have room */
	size_t len;         /* bytes of the arena they may grow into */
} live_room;
static uintptr_t arena_next;
static int arena_shared;         /* 0 in a forked child that copied it */

static int in_arena(const void *p)
{
	return arena && (const char *)p >= arena && (const char *)p < arena_end;
}

/* len bytes of the arena (whole pages) at a multiple of align (a power of
 * two, 4096 or more; the addresses skipped are never used), not listed;
 * NULL if none. */
static void *arena_take(size_t len, size_t align)
{
	uintptr_t cur, p;

	if (!arena)
		return NULL;
	len = (len + 4095) & ~(size_t)4095;
	cur = __atomic_load_n(&arena_next, __ATOMIC_RELAXED);
	do {
		p = (cur + align - 1) & ~(uintptr_t)(align - 1);
		if (p < cur || p + len > (uintptr_t)arena_end || p + len < p)
			return NULL;
	} while (!__atomic_compare_exchange_n(&arena_next, &cur, p + len, 1, __ATOMIC_RELAXED,
					      __ATOMIC_RELAXED));
	return (void *)p;
}

/*
 * [p, p + len) of the arena on huge pages, as far as whole aligned 2 MiB
 * units go: the live table's slots are probed at random, and the
 * drainer missed the TLB at nearly every probe of a table on 4 KiB pages
 * (python3 bench: the program's 2 million blocks, a 40 MiB table; 8
 * interleaved runs, the recorder's samples over the program's own went
 * from 0.99 to 0.94). Shared memory gets huge pages on a fault only where
 * the system says so for all of it (shmem_enabled, "never" by default),
 * but MADV_COLLAPSE (Linux 6.1) makes them on request whatever it says.
 * It refuses a unit with no page in memory yet: one word of each is read
 * first (a shared page read is a page of the file, zeroed, not the zero
 * page), so the table's growth then writes on huge pages with no fault.
 * Where it fails (an older kernel, no huge page free) the pages stay as
 * they were.
 */
static void arena_huge(void *p, size_t len)
{
	uintptr_t a = ((uintptr_t)p + ARENA_ALIGN - 1) & ~(uintptr_t)(ARENA_ALIGN - 1);
	uintptr_t e = ((uintptr_t)p + len) & ~(uintptr_t)(ARENA_ALIGN - 1);

	if (e <= a)
		return;
	for (uintptr_t c = a; c < e; c += ARENA_ALIGN)
		(void)*(volatile const uint64_t *)c;
	(void)madvise((void *)a, e - a, MADV_COLLAPSE);
}

int mt_arena_init(void)
{
	size_t len = ARENA_BYTES;
	struct rlimit rl;
	void *p = MAP_FAILED;

	/* under an address-space limit (ulimit -v), an eighth of it */
	if (getrlimit(RLIMIT_AS, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur / 8 < len)
		len = (size_t)(rl.rlim_cur / 8) & ~(((size_t)1 << 20) - 1);
	/* 2 MiB-aligned (a reservation first, the shared mapping over it):
	 * a huge page of shared memory needs its offset in the mapping and
	 * its address both aligned (arena_huge). No hole may be left above
	 * it: the program's next small mappings would fill it, 64 GiB from
	 * its others (python3's allocator then callocs another 128 KiB node
	 * of its address map, a block memcheck's run has not). So what the
	 * alignment leaves over stays reserved above it, and the
	 * reservation's length is no multiple of 2 MiB: the kernel itself
	 * aligns an anonymous mapping whose length is one (Linux 6.7), and
	 * leaves the hole above it. */
	for (; len >= ARENA_MIN && p == MAP_FAILED; len /= 2) {
		size_t rlen = len + ARENA_ALIGN + 4096;
		char *r = mmap(NULL, rlen, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
			       -1, 0);
		if (r == MAP_FAILED)
			continue;
		char *a = (char *)(((uintptr_t)r + ARENA_ALIGN - 1) & ~(uintptr_t)(ARENA_ALIGN - 1));
		if (a > r)
			munmap(r, (size_t)(a - r));
		p = mmap(a, len, PROT_READ | PROT_WRITE,
			 MAP_SHARED | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED, -1, 0);
		if (p == MAP_FAILED)
			munmap(a, (size_t)(r + rlen - a));
	}
	if (p == MAP_FAILED)
		return -1;
	len *= 2;     /* (the loop halved it once more) */
	(void)madvise(p, len, MADV_DONTDUMP);
	arena = p;
	arena_end = arena + len;
	arena_next = (uintptr_t)arena;
	arena_shared = 1;
	own_add(&own, p, len);
	return 0;
}

/*
 * This process's pages of the arena leave its resident set; the contents
 * stay (MAP_SHARED: the drainer has them, and an access here faults them
 * back in).
 */
void mt_arena_unmap(void)
{
	if (arena && arena_shared)
		(void)madvise(arena, (size_t)(__atomic_load_n(&arena_next, __ATOMIC_RELAXED) -
					      (uintptr_t)arena), MADV_DONTNEED);
}

int mt_arena_shared(void)
{
	return arena && arena_shared;
}

/*
 * len bytes at p, now shared (a new MAP_SHARED mapping: a followed child
 * starting its own drainer) or private, with the same contents; -1 on
 * failure (p unchanged).
 */
int mt_mem_remap(void *p, size_t len, int shared)
{
	/* filled first, then moved into place in one step: p is never
	 * without its contents (nothing here may read a zeroed static) */
	void *tmp = mmap(NULL, len, PROT_READ | PROT_WRITE,
			 (shared ? MAP_SHARED : MAP_PRIVATE) | MAP_ANONYMOUS, -1, 0);
	if (tmp == MAP_FAILED)
		return -1;
	/* page by page, zero pages left out: the new mapping has them
	 * already, and a copy would make them resident (half of the
	 * statics are tables that stay empty in most runs) */
	for (size_t off = 0; off < len; off += 4096) {
		const uint64_t *w = (const uint64_t *)(const void *)((const char *)p + off);
		size_t n = len - off < 4096 ? len - off : 4096, i = 0;
		while (i < n / 8 && !w[i])
			i++;
		if (i < n / 8)
			memcpy((char *)tmp + off, (const char *)p + off, n);
	}
	if (mremap(tmp, len, len, MREMAP_MAYMOVE | MREMAP_FIXED, p) == MAP_FAILED) {
		munmap(tmp, len);
		return -1;
	}
	return 0;
}

struct arena_copy {
	char *tmp;          /* the kept ranges' contents, one after another */
	uint64_t *r;        /* the ranges: lo, hi pairs */
	size_t n, max, off, bytes;
};

static int count_one(void *ctx, uint64_t lo, uint64_t hi)
{
	struct arena_copy *c = ctx;
	c->max++;
	c->bytes += hi - lo;
	return 0;
}

static int copy_out(void *ctx, uint64_t lo, uint64_t hi)
{
	struct arena_copy *c = ctx;
	if (c->n == c->max || c->off + (hi - lo) > c->bytes)
		return -1;
	memcpy(c->tmp + c->off, (void *)(uintptr_t)lo, hi - lo);
	c->off += hi - lo;
	c->r[2 * c->n] = lo;
	c->r[2 * c->n + 1] = hi;
	c->n++;
	return 0;
}

/*
 * In a forked child (one thread, before anything else touches the
 * arena): the arena is the parent's, and its drainer's. The ranges a
 * child keeps (mt_mem_alloc_kept's; the list's own parts among them: they
 * are arena pages too) are copied into a new arena at the same place,
 * shared (the child starts a drainer of its own) or private; the rest,
 * the recording session's (rings, live and stack tables, the writer), is
 * gone: the caller forgets every pointer to it. (Copying it all cost the
 * child 40 MiB of copying per fork in rec_stress, a third of a second.)
 * -1 when memory fails: the arena is then private and empty, and the
 * child must stop recording.
 */
int mt_arena_fork(int shared)
{
	struct arena_copy c = { NULL, NULL, 0, 0, 0, 0 };
	size_t len = 0;
	int rc = 0;

	if (!arena)
		return 0;
	(void)own_each(&arena_kept, count_one, &c);
	len = (c.bytes + (c.max + 1) * 16 + 4095) & ~(size_t)4095;
	c.tmp = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (c.tmp == MAP_FAILED) {
		c.tmp = NULL;
		rc = -1;
	} else {
		c.r = (uint64_t *)(void *)(c.tmp + ((c.bytes + 15) & ~(size_t)15));
		if (own_each(&arena_kept, copy_out, &c) < 0)
			rc = -1;
	}
	if (mmap(arena, (size_t)(arena_end - arena), PROT_READ | PROT_WRITE,
		 (shared && !rc ? MAP_SHARED : MAP_PRIVATE) | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED,
		 -1, 0) == MAP_FAILED)
		rc = -1;     /* (MAP_FIXED over our own mapping: not seen) */
	(void)madvise(arena, (size_t)(arena_end - arena), MADV_DONTDUMP);
	arena_shared = shared && !rc;
	/* the session's ranges are gone with the parent's arena */
	memset(&arena_used, 0, sizeof(arena_used));
	memset(&live_room, 0, sizeof(live_room));
	if (!rc) {
		size_t off = 0;
		for (size_t i = 0; i < c.n; i++) {
			size_t l = c.r[2 * i + 1] - c.r[2 * i];
			memcpy((void *)(uintptr_t)c.r[2 * i], c.tmp + off, l);
			off += l;
		}
	} else {
		arena_next = (uintptr_t)arena_end;   /* nothing more from it */
	}
	if (c.tmp)
		munmap(c.tmp, len);
	return rc;
}

/* ---- mmap allocator -------------------------------------------------------- */

#define MEM_HDR 16

/* Raw anonymous pages, zeroed: from the arena, listed in l, when there
 * is one. */
static void *pages_in(struct own_list *l, size_t len)
{
	void *p;
	if (arena) {
		if ((p = arena_take(len, 4096)) != NULL)
			own_add(l, p, len);
		return p;
	}
	p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return NULL;
	own_add(&own, p, len);
	return p;
}

static void *pages(size_t len)
{
	return pages_in(&arena_used, len);
}

static void unpages(void *p, size_t len)
{
	if (in_arena(p)) {
		if (!own_del(&arena_used, p))
			(void)own_del(&arena_kept, p);
		(void)madvise(p, (len + 4095) & ~(size_t)4095, arena_shared ? MADV_REMOVE : MADV_DONTNEED);
		return;
	}
	own_del(&own, p);
	munmap(p, len);
}

static void *mem_alloc(struct own_list *l, size_t size)
{
	size_t len = (size + MEM_HDR + 4095) & ~(size_t)4095;
	void *p = pages_in(l, len);
	if (!p)
		return NULL;
	*(size_t *)p = len;
	return (char *)p + MEM_HDR;
}

void *mt_mem_alloc(size_t size)
{
	return mem_alloc(&arena_used, size);
}

/*
 * mt_mem_alloc for what a forked child keeps (tag paths, the unwinder's
 * rules and state, the sampler's): the only ranges of the arena a forked
 * child copies.
 */
void *mt_mem_alloc_kept(size_t size)
{
	return mem_alloc(&arena_kept, size);
}

void mt_mem_free(void *p)
{
	if (!p)
		return;
	char *base = (char *)p - MEM_HDR;
	unpages(base, *(size_t *)base);
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

void mt_mem_idle(void *p, size_t len)
{
	static uintptr_t page;
	if (!page)
		page = (uintptr_t)sysconf(_SC_PAGESIZE);
	uintptr_t a = ((uintptr_t)p + page - 1) & ~(page - 1);
	uintptr_t e = ((uintptr_t)p + len) & ~(page - 1);
	/* in the shared arena the pages themselves go (DONTNEED would only
	 * unmap them here, and the other process would keep them) */
	if (e > a)
		madvise((void *)a, e - a,
			in_arena((void *)a) && arena_shared ? MADV_REMOVE : MADV_DONTNEED);
}

void mt_mem_idle_cb(void *opaque, void *p, size_t len)
{
	(void)opaque;
	mt_mem_idle(p, len);
}

/* ---- distinct stacks ------------------------------------------------------ */

/*
 * Open addressing, linear probing, at most three quarters full. A slot is
 * 8 bytes, 32 bits of the stack's hash and its id + 1; what a stack is
 * lies in its record, found by id (an array of pointers as long as the
 * stacks), so empty slots cost 8 bytes.
 *
 * A thread's table (refs 0) keeps its records in chunks that never move
 * (a chunk full, the next one is mapped, each twice the last up to 1 MiB:
 * few mappings for the leak scan's list of ours). A record holds the
 * frames a stack does not share with another: the thread's stacks mostly
 * differ from the one before only in their inner frames, so a new stack
 * names an earlier record of the table (its base: of the stack interned
 * last and the STACK_RECENT newest, the one that shares most, at most
 * STACK_DEPTH names deep) whose first k frames, outermost first, are its
 * own first k, and keeps frames k..n-1 only. Comparing a capture with a
 * record is then one comparison a record along the names, at most
 * STACK_DEPTH + 1; and the log's table (refs 1, core.c) keeps a pointer
 * to the thread's record and no frames. cc1 makes 9,824 stacks of 21 frames on average: of the first
 * 9,000 stacks' 189,134 frames, 42,234 are kept (22 %), and its peak RSS
 * under memtrail went from 61.0 to 59.5 MiB (heaptrack -r: 60.0). The
 * pieces cost time where every stack is a hit: with churn's 19-frame
 * stacks 2.5 % more CPU in all, 2.7 ns an event (9 interleaved runs
 * each); with cc1's, none measurable.
 */
#define STACK_DEPTH 3
#define STACK_SHARE 4         /* fewer frames shared: the stack stands alone */
#define STACK_RECENT 8        /* the latest new stacks, bases to choose from */

struct mt_stack_rec {
	const struct mt_stack_rec *base;  /* NULL: k = 0 */
	uint16_t n;           /* frames in all */
	uint16_t k;           /* the first k are base's first k */
	uint16_t fn;
	uint16_t depth;       /* names to follow from here: 0 = none */
	uint32_t tag;         /* tag path: part of the identity (tags.c) */
	uint32_t unused;
	uint64_t own[];       /* frames k .. n-1 */
};

struct stack_slot {
	uint32_t hash;        /* the capture's hash, low 32 bits (the home too) */
	uint32_t id1;         /* id + 1; 0 = empty */
};

/* A chunk of records: this header, then records. */
struct recs_chunk {
	struct recs_chunk *next;
	size_t bytes;         /* the mapping's */
};

#define CHUNK_FIRST ((size_t)64 << 10)
#define CHUNK_MAX   ((size_t)1 << 20)
_Static_assert(CHUNK_FIRST >= sizeof(struct recs_chunk) + sizeof(struct mt_stack_rec) +
				  MT_MAX_DEPTH * sizeof(uint64_t),
	       "a chunk holds the deepest stack");

struct mt_stacks {
	struct stack_slot *slots;
	size_t mask;          /* slots - 1 (power of two) */
	size_t count;
	const struct mt_stack_rec **recs;   /* by id, room for reccap */
	size_t reccap;
	int refs;
	const struct mt_stack_rec *last;    /* the latest interned (refs 0) */
	const struct mt_stack_rec *recent[STACK_RECENT];  /* the latest new ones */
	struct recs_chunk *chunks;    /* the latest first */
	char *free_at;        /* the latest chunk's room */
	size_t room;          /* in bytes */
	size_t next_bytes;    /* the next chunk's mapping */
	int moving;           /* between the two stores of a growth */
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
	s->recs = pages(s->reccap * sizeof(*s->recs));
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
		unpages(s->recs, s->reccap * sizeof(*s->recs));
	while (s->chunks) {
		struct recs_chunk *c = s->chunks;
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
	/* the old slots go once no longer named: a process killed here
	 * leaves the table whole, or marked (mt_stacks_moving) */
	struct stack_slot *old = s->slots;
	size_t omask = s->mask;
	s->moving = 1;
	s->slots = ns;
	s->mask = nmask;
	s->moving = 0;
	unpages(old, (omask + 1) * sizeof(struct stack_slot));
	return 0;
}

int mt_stacks_moving(const struct mt_stacks *s)
{
	return s->moving;
}

static int recs_grow(struct mt_stacks *s)
{
	size_t ncap = s->reccap * 2;
	const struct mt_stack_rec **nr = pages(ncap * sizeof(*nr));
	if (!nr)
		return -1;
	memcpy(nr, s->recs, s->count * sizeof(*nr));
	const struct mt_stack_rec **old = s->recs;
	size_t ocap = s->reccap;
	s->recs = nr;           /* (then a smaller cap only grows it sooner) */
	s->reccap = ncap;
	unpages(old, ocap * sizeof(*nr));
	return 0;
}

/* Room for a record of n own frames that stays put; NULL when out of memory. */
static struct mt_stack_rec *rec_room(struct mt_stacks *s, size_t n)
{
	size_t len = sizeof(struct mt_stack_rec) + n * sizeof(uint64_t);
	if (len > s->room || !s->free_at) {
		size_t bytes = s->next_bytes;
		struct recs_chunk *c = pages(bytes);
		if (!c)
			return NULL;
		if (bytes < CHUNK_MAX)
			s->next_bytes = 2 * bytes;
		c->next = s->chunks;
		c->bytes = bytes;
		s->chunks = c;
		s->free_at = (char *)(c + 1);
		s->room = bytes - sizeof(*c);
	}
	struct mt_stack_rec *r = (struct mt_stack_rec *)(void *)s->free_at;
	s->free_at += len;
	s->room -= len;
	return r;
}

/* Whether ips[0..n) are r's frames: a memcmp a piece (compared by an
 * inline loop instead, churn's 19-frame stacks cost 2.5 % more CPU). */
static inline int rec_frames_equal(const struct mt_stack_rec *r, const uint64_t *ips, unsigned n)
{
	if (r->n != n)
		return 0;
	for (unsigned lim = n; lim; r = r->base) {
		/* ips[0..lim) against r's frames 0..lim-1: those from k on are
		 * r's own, those before its base's */
		if (lim > r->k) {
			if (memcmp(ips + r->k, r->own, (lim - r->k) * sizeof(uint64_t)))
				return 0;
			lim = r->k;
		}
	}
	return 1;
}

/* Frame i (< r->n) of r. */
static uint64_t rec_frame(const struct mt_stack_rec *r, unsigned i)
{
	while (i < r->k)
		r = r->base;
	return r->own[i - r->k];
}

void mt_stack_rec_frames(const struct mt_stack_rec *r, uint64_t *out)
{
	for (unsigned lim = r->n; lim; r = r->base)
		if (lim > r->k) {
			memcpy(out + r->k, r->own, (lim - r->k) * sizeof(uint64_t));
			lim = r->k;
		}
}

/*
 * The frames c shares with b (k, outermost first), and the record to name
 * for them: b, or the first record it names that holds them all. 0 when b
 * is NULL or as deep as records go (STACK_DEPTH names): such a record is
 * no base, so that a stack sharing only with those stands alone and
 * becomes a base in turn (naming b's base instead, sharing less, made
 * most of cc1's records as deep as they go and kept 71 % of its frames;
 * this way, 22 %).
 */
static unsigned rec_share(const struct mt_stack_rec **bp, const struct mt_capture *c)
{
	const struct mt_stack_rec *b = *bp;
	unsigned k = 0, m;

	if (!b || b->depth >= STACK_DEPTH)
		return 0;
	m = b->n < c->n ? b->n : c->n;
	while (k < m && rec_frame(b, k) == c->ips[k])
		k++;
	while (b->base && k <= b->k)
		b = b->base;
	*bp = b;
	return k;
}

/* A record of c's frames in s, sharing what it can with the table's
 * latest stack or its latest new ones; NULL when out of memory. */
static const struct mt_stack_rec *rec_new(struct mt_stacks *s, const struct mt_capture *c)
{
	const struct mt_stack_rec *b = s->last;
	unsigned k = rec_share(&b, c);

	for (unsigned j = 0; j < STACK_RECENT; j++) {
		const struct mt_stack_rec *o = s->recent[j];
		unsigned ko = rec_share(&o, c);

		if (ko > k || (ko == k && ko && o->depth < b->depth))
			b = o, k = ko;
	}
	if (k < STACK_SHARE)
		b = NULL, k = 0;
	struct mt_stack_rec *r = rec_room(s, c->n - k);
	if (!r)
		return NULL;
	r->base = b;
	r->n = (uint16_t)c->n;
	r->k = (uint16_t)k;
	r->fn = (uint16_t)c->fn;
	r->depth = b ? (uint16_t)(b->depth + 1) : 0;
	r->tag = c->tag;
	r->unused = 0;
	if (c->n > k)
		memcpy(r->own, c->ips + k, (c->n - k) * sizeof(uint64_t));
	s->recent[s->count % STACK_RECENT] = r;
	return r;
}

int64_t mt_stacks_intern(struct mt_stacks *s, const struct mt_capture *c, int *is_new,
			 const struct mt_stack_rec **rec)
{
	uint32_t h = (uint32_t)c->hash;
	size_t i = h & s->mask;
	*is_new = 0;
	for (;;) {
		struct stack_slot *sl = &s->slots[i];
		if (!sl->id1)
			break;
		if (sl->hash == h) {
			const struct mt_stack_rec *r = s->recs[sl->id1 - 1];

			if (r->fn == c->fn && r->tag == c->tag && rec_frames_equal(r, c->ips, c->n)) {
				s->last = r;
				return sl->id1 - 1;
			}
		}
		i = (i + 1) & s->mask;
	}
	if (s->count == s->reccap && recs_grow(s) < 0)
		return -1;
	if ((s->count + 1) * 4 > (s->mask + 1) * 3) {
		if (stacks_grow(s) < 0)
			return -1;
		/* Find the free slot again in the bigger table. */
		i = h & s->mask;
		while (s->slots[i].id1)
			i = (i + 1) & s->mask;
	}
	const struct mt_stack_rec *r = s->refs ? c->rec : rec_new(s, c);
	if (!r)
		return -1;
	s->recs[s->count] = r;
	s->last = r;
	struct stack_slot *sl = &s->slots[i];
	sl->hash = h;
	sl->id1 = (uint32_t)++s->count;
	*is_new = 1;
	if (rec)
		*rec = r;
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
	uint64_t ips[MT_MAX_DEPTH];
	int rc = 0;

	for (size_t id = 0; id < s->count && !rc; id++) {
		const struct mt_stack_rec *r = s->recs[id];

		mt_stack_rec_frames(r, ips);
		rc = fn(ctx, (uint32_t)id, r->fn, r->tag, ips, r->n);
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

/* len >= HUGE_PAGE bytes of the arena for the live table, aligned, on
 * huge pages where the kernel gives them (arena_huge). */
static void *arena_table(size_t len, size_t room)
{
	void *p = arena_take(room, ARENA_ALIGN);

	if (!p)
		return NULL;
	own_add(&arena_used, p, room);
	arena_huge(p, len);
	return p;
}

static void *live_pages(size_t n)
{
	size_t len = live_len(n);
	char *a;

	if (len < HUGE_PAGE)
		return pages(len);
	if (arena)
		return arena_table(len, len);
	if (!(a = aligned_map(len, PROT_READ | PROT_WRITE)))
		return NULL;
	(void)madvise(a, len, MADV_HUGEPAGE);
	own_add(&own, a, len);
	return a;
}

/*
 * In the shared arena a growing table is copied to new pages: shared
 * memory has no mremap to move them in both processes, nor huge pages on
 * a fault (arena_huge asks for them), and a new shared page costs the
 * kernel several microseconds. Beyond
 * 4 MiB the program's table grows by a quarter at a time (lib/livetab.c;
 * the drainer's doubles), so copying it each time made five times its
 * size in new pages (python3 bench:
 * 26,000 faults in the drainer, 0.1 s of its CPU, and the program's
 * threads waiting meanwhile). A table copied gets LIVE_ROOM times its
 * size of the arena's addresses (an untouched page costs nothing), and
 * grows in place until it fills them: its new pages only.
 */
#define LIVE_ROOM 8

static void *live_resize(void *p, size_t n, size_t m)
{
	size_t ln = live_len(n), lm = live_len(m);
	char *q;

	if (lm == ln)
		return p;
	if (in_arena(p)) {
		/* shared pages: mremap would move them in this process only.
		 * Grown in place where its room allows, else copied to a
		 * place with room for more (below) */
		if (p == live_room.p && lm <= live_room.len) {
			if (lm >= HUGE_PAGE)
				arena_huge(p, lm);
			return p;
		}
		size_t room = lm >= HUGE_PAGE ? lm * LIVE_ROOM : lm;   /* (the slots) */
		size_t left = (size_t)((uintptr_t)arena_end - __atomic_load_n(&arena_next, __ATOMIC_RELAXED));
		if (room > left / 4)
			room = left / 4 > lm ? left / 4 : lm;
		if (!(q = lm >= HUGE_PAGE ? arena_table(lm, room) : pages(room)))
			return NULL;
		memcpy(q, p, ln < lm ? ln : lm);
		unpages(p, ln);
		if (room > lm) {
			live_room.p = q;
			live_room.len = room;
		}
		return q;
	}
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
	own_del(&own, p);
	own_add(&own, q, lm);
	return q;
}

static void live_unpages(void *p, size_t n)
{
	unpages(p, live_len(n));
}

static const struct mt_livetab_mem live_mem = { live_pages, live_resize, live_unpages, 0 };
/* Once the drainer process keeps it: its pages are not the program's, and
 * growing by a quarter rehashed every block five times over (python3
 * bench: rehash was an eighth of the drainer's time). */
static const struct mt_livetab_mem live_mem_doubling = { live_pages, live_resize, live_unpages,
							 SIZE_MAX };

void mt_live_doubling(struct mt_live *l)
{
	l->tab.mem = &live_mem_doubling;
}

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

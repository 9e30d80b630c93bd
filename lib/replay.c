/*
 * replay.c - decodes the records of an event log and replays them through
 * a table of callbacks (see replay.h for the contract, format.h for the
 * records).
 *
 * For: validating every record, keeping the live-block table and the tables
 * of stacks, modules and threads, and calling the consumer in log order.
 * Not for: reading the container (lib/reader.c), any aggregation.
 *
 * Memory grows with live blocks, distinct stacks, modules and threads, never
 * with the number of events: the live table is an open-addressing hash
 * (linear probing, backward-shift deletion, no tombstones).
 *
 * Choices where the log says something odd (documented in memtrail-format(5)):
 * - FREE of an address that is not live (allocated before recording began,
 *   or by memtrail's own bookkeeping) is ignored: no on_free. The record
 *   still counts as an event for seq.
 * - ALLOC (or the new half of a REALLOC) at an address that is already live
 *   means a free went unrecorded; the old block is released with an on_free
 *   (realloc = 0, same seq and time as the new event) so that every consumer
 *   keeps the same live set as the replay, then the new block is added.
 * - REALLOC gives both halves the record's seq and time, realloc = 1: first
 *   on_free(old) (skipped when old is not live), then on_alloc(new).
 * - An event before the chunk's first SWITCH, a SWITCH to an unannounced
 *   thread, a TIME of 0, stream lengths beyond the chunk and side-stream
 *   bytes left over at the chunk's end are corrupt. END's figures are
 *   passed on (mt_end.totals) as the recorder counted them: the replay
 *   computes its own (tools that want to skip the replay read them with
 *   mt_replay_end_totals(), which decodes the last chunk alone).
 * - Sizes: the bytes allocated over the whole run may not pass INT64_MAX
 *   (8 EiB; no real run comes near). A record that would is corrupt, so no
 *   consumer's total, live bytes or per-stack figure can wrap or turn
 *   negative: every tool rejects the same logs at the same record.
 * - A record that does not decode (unknown type, varint overrun, unknown
 *   stack or thread, out-of-range field, CHUNK_BEGIN whose seq disagrees
 *   with the events counted so far) stops the replay there as corrupt, with
 *   the chunk's file offset; events already delivered stay delivered.
 * - THREAD_NAME in a version 2 log, or for a thread not announced, is
 *   corrupt.
 * - A re-run keeps mt_stack / mt_module objects whose content is unchanged,
 *   so pointers handed out by an earlier run stay valid.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "format.h"
#include "reader.h"
#include "livetab.h"
#include "replay.h"

/*
 * A live block is one slot of the live table (lib/livetab.h): its value
 * packs the requested size (low 32 bits), the stack id (next 20) and the
 * index of the thread that allocated it (high 12), so that a free tells
 * whose block it releases. The rare block that does not fit (4 GiB or
 * more, a stack id from 2^20 - 1 up, a thread index from 2^12 - 1 up)
 * gets the escape stack id and the index of an entry in big[], so the
 * table stays 16 bytes a slot however odd the log.
 */
#define SIZE_BITS 32
#define STACK_BITS 20
#define STACK_ESC ((1u << STACK_BITS) - 1)
#define THREAD_ESC ((1u << (64 - SIZE_BITS - STACK_BITS)) - 1)
struct big {
	uint64_t size;
	uint32_t stack;
	uint32_t thread;
	uint32_t next;        /* free list, when unused */
};

/*
 * Events decoded but not yet applied: the replay decodes up to PEND events
 * ahead of the one it applies and asks the CPU for their live-table slots
 * as it decodes them, so the cache misses of millions of live blocks
 * overlap instead of stalling one after another (on a python3 run with
 * 2.1 M live blocks the table's misses were 60 % of a report).
 */
#define PEND 16
#define RING_FROM (4u << 20)  /* bytes of live table from which the ring pays */
struct pend {
	uint8_t type;
	uint32_t stack, thread;
	uint64_t seq, time, size, a, a2;
};

struct modrec {
	struct mt_module m;
	char *path;
	uint8_t *build_id;
	struct mt_segment *segs;
};

struct mt_replay {
	struct mt_reader *rd;
	struct mt_header hdr;
	char *joined;
	const char **argv;

	/* Stacks: pointers stay valid across runs (see top comment). */
	struct mt_stack **stacks;
	size_t nstacks, nstored, stackcap;

	struct modrec **mods;
	size_t nmods, nmodstored, modcap;

	uint32_t *tids;       /* UINT32_MAX + 1 never fits: use known[] */
	uint8_t *known;
	char **names;         /* THREAD_NAME's, NULL: none (threadcap of them) */
	size_t nthreads, threadcap;

	struct mt_livetab live;
	struct big *big;
	size_t nbig, bigcap;
	uint32_t big_free;    /* head of big[]'s free list, UINT32_MAX: none */

	struct pend q[PEND];  /* ring of events decoded ahead */
	size_t qh, qn;

	struct mt_end end;
	char *stop_reason;

	/* The leak check being read: its blocks so far. */
	struct mt_leak_block *leak;
	size_t nleak, leakcap;
	uint64_t leak_last;   /* the highest address listed, for order */
	int leak_open;        /* a check's records have begun */
	uint64_t leak_seq;    /* events before the latest check */
	struct mt_leak_check_at *checks;  /* every check of the run */
	size_t nchecks, checkcap;

	/* Decoding state of the current run. */
	uint64_t events;
	uint64_t allocated;   /* bytes allocated so far: at most INT64_MAX */
	uint64_t time;
	/* The chunk's address histories (format.h): [0] allocated, [1] freed. */
	uint64_t hist[2][MT_ADDR_HISTORY];
	uint64_t nhist[2];
	uint64_t last[2];     /* the latest address of each history, 0 at first */
	uint64_t chunk_off;
	/* Decoding the last chunk alone (mt_replay_end_totals): stacks and
	 * threads of earlier chunks are taken on trust, nothing is kept. */
	int tail;
};

/* ---- live table ---------------------------------------------------------- */

int mt_replay_expect_blocks(struct mt_replay *r, uint64_t n)
{
	return mt_livetab_reserve(&r->live, n) < 0 ? MT_E_NOMEM : 0;
}

void mt_replay_trim(struct mt_replay *r)
{
	mt_livetab_fini(&r->live);
	free(r->big);
	r->big = NULL;
	r->nbig = r->bigcap = 0;
	r->big_free = UINT32_MAX;
}

/* The value of a block; -1 when out of memory (for big[]). */
static int pack(struct mt_replay *r, uint64_t size, uint32_t stack, uint32_t thread,
		uint64_t *val)
{
	uint32_t i;

	if (size < (1ull << SIZE_BITS) && stack < STACK_ESC && thread < THREAD_ESC) {
		*val = size | (uint64_t)stack << SIZE_BITS |
		       (uint64_t)thread << (SIZE_BITS + STACK_BITS);
		return 0;
	}
	if (r->big_free != UINT32_MAX) {
		i = r->big_free;
		r->big_free = r->big[i].next;
	} else {
		if (r->nbig == r->bigcap) {
			size_t cap = r->bigcap ? 2 * r->bigcap : 64;
			struct big *b = cap < (1ull << SIZE_BITS) ? realloc(r->big, cap * sizeof(*b)) : NULL;

			if (!b)
				return -1;
			r->big = b;
			r->bigcap = cap;
		}
		i = (uint32_t)r->nbig++;
	}
	r->big[i].size = size;
	r->big[i].stack = stack;
	r->big[i].thread = thread;
	*val = i | (uint64_t)STACK_ESC << SIZE_BITS;
	return 0;
}

/* The size, stack and thread of a value; a big[] entry is released. */
static void unpack(struct mt_replay *r, uint64_t val, uint64_t *size, uint32_t *stack,
		   uint32_t *thread)
{
	uint32_t st = (uint32_t)(val >> SIZE_BITS) & STACK_ESC;
	uint32_t i;

	if (st != STACK_ESC) {
		*size = val & ((1ull << SIZE_BITS) - 1);
		*stack = st;
		*thread = (uint32_t)(val >> (SIZE_BITS + STACK_BITS));
		return;
	}
	i = (uint32_t)(val & ((1ull << SIZE_BITS) - 1));
	*size = r->big[i].size;
	*stack = r->big[i].stack;
	*thread = r->big[i].thread;
	r->big[i].next = r->big_free;
	r->big_free = i;
}

/* The size, stack and thread of a value, left in the table. */
static void peek(const struct mt_replay *r, uint64_t val, uint64_t *size, uint32_t *stack,
		 uint32_t *thread)
{
	uint32_t st = (uint32_t)(val >> SIZE_BITS) & STACK_ESC;
	uint32_t i;

	if (st != STACK_ESC) {
		*size = val & ((1ull << SIZE_BITS) - 1);
		*stack = st;
		*thread = (uint32_t)(val >> (SIZE_BITS + STACK_BITS));
		return;
	}
	i = (uint32_t)(val & ((1ull << SIZE_BITS) - 1));
	*size = r->big[i].size;
	*stack = r->big[i].stack;
	*thread = r->big[i].thread;
}

/* ---- open / close -------------------------------------------------------- */

int mt_replay_open(const char *path, struct mt_replay **out, uint64_t *err_offset)
{
	const struct mt_reader_header *h;
	struct mt_replay *r;
	size_t i, n, k;
	int err, saved;

	*out = NULL;
	r = calloc(1, sizeof(*r));
	if (!r)
		return MT_E_NOMEM;
	mt_livetab_init(&r->live, NULL, NULL);
	r->big_free = UINT32_MAX;
	err = mt_reader_open(path, &r->rd, err_offset);
	if (err < 0)
		goto fail;
	h = mt_reader_header(r->rd);
	r->hdr.version = h->version;
	r->hdr.pointer_size = h->pointer_size;
	r->hdr.pid = h->pid;
	r->hdr.start_realtime_ns = h->start_realtime_ns;
	n = 0;
	for (i = 0; i < h->cmdline_len; i++)
		n += h->cmdline[i] == 0;
	r->argv = calloc(n + 1, sizeof(*r->argv));
	r->joined = malloc(h->cmdline_len + 1);
	if (!r->argv || !r->joined) {
		err = MT_E_NOMEM;
		goto fail;
	}
	for (i = 0, k = 0; i < h->cmdline_len; i++) {
		if (i == 0 || h->cmdline[i - 1] == 0)
			r->argv[k++] = (const char *)h->cmdline + i;
		r->joined[i] = h->cmdline[i] ? (char)h->cmdline[i] : ' ';
	}
	r->joined[h->cmdline_len ? h->cmdline_len - 1 : 0] = 0;
	r->hdr.cmdline = r->joined;
	r->hdr.argc = n;
	r->hdr.argv = r->argv;
	*out = r;
	return 0;
fail:
	saved = errno;
	mt_replay_free(r);
	errno = saved;
	return err;
}

const struct mt_header *mt_replay_header(const struct mt_replay *r)
{
	return &r->hdr;
}

const struct mt_end *mt_replay_end(const struct mt_replay *r)
{
	return &r->end;
}

size_t mt_replay_nstacks(const struct mt_replay *r)
{
	return r->nstacks;
}

const struct mt_stack *mt_replay_stack(const struct mt_replay *r, uint32_t id)
{
	return id < r->nstacks ? r->stacks[id] : NULL;
}

size_t mt_replay_nmodules(const struct mt_replay *r)
{
	return r->nmods;
}

const struct mt_module *mt_replay_module(const struct mt_replay *r, size_t i)
{
	return i < r->nmods ? &r->mods[i]->m : NULL;
}

size_t mt_replay_nthreads(const struct mt_replay *r)
{
	return r->nthreads;
}

int mt_replay_thread(const struct mt_replay *r, size_t i, uint32_t *tid, const char **name)
{
	if (i >= r->nthreads || !r->known[i])
		return MT_E_NOTFOUND;
	*tid = r->tids[i];
	*name = r->names[i];
	return 0;
}

static void modrec_free(struct modrec *m)
{
	if (!m)
		return;
	free(m->path);
	free(m->build_id);
	free(m->segs);
	free(m);
}

void mt_replay_free(struct mt_replay *r)
{
	size_t i;

	if (!r)
		return;
	mt_reader_free(r->rd);
	free(r->joined);
	free(r->argv);
	for (i = 0; i < r->nstored; i++)
		free(r->stacks[i]);
	free(r->stacks);
	for (i = 0; i < r->nmodstored; i++)
		modrec_free(r->mods[i]);
	free(r->mods);
	free(r->tids);
	free(r->known);
	for (i = 0; i < r->nthreads; i++)
		free(r->names[i]);
	free(r->names);
	mt_livetab_fini(&r->live);
	free(r->big);
	free(r->leak);
	free(r->checks);
	free(r->stop_reason);
	free(r);
}

/* ---- decoding ------------------------------------------------------------ */

struct cur {
	const uint8_t *p, *end;
};

/*
 * Each returns 0, or MT_E_CORRUPT when the field does not decode. Most
 * varints are one byte: that case is inline, the rest goes to mt_get_uv.
 */
static inline int get_uv(struct cur *c, uint64_t *v)
{
	if (__builtin_expect(c->p < c->end && *c->p < 0x80, 1)) {
		*v = *c->p++;
		return 0;
	}
	return mt_get_uv(&c->p, c->end, v) < 0 ? MT_E_CORRUPT : 0;
}

static inline int get_sv(struct cur *c, int64_t *v)
{
	uint64_t u;

	if (get_uv(c, &u) < 0)
		return MT_E_CORRUPT;
	*v = (int64_t)((u >> 1) ^ (~(u & 1) + 1));
	return 0;
}

static inline int get_u32(struct cur *c, uint32_t *v, uint64_t max)
{
	uint64_t x;

	if (get_uv(c, &x) < 0 || x > max)
		return MT_E_CORRUPT;
	*v = (uint32_t)x;
	return 0;
}

/* A string: points into the chunk, not NUL-terminated. */
static int get_str(struct cur *c, const uint8_t **s, size_t *len)
{
	uint64_t n;

	if (get_uv(c, &n) < 0 || n > MT_MAX_STRING || n > (uint64_t)(c->end - c->p))
		return MT_E_CORRUPT;
	*s = c->p;
	*len = (size_t)n;
	c->p += n;
	return 0;
}

static char *dupstr(const uint8_t *s, size_t len)
{
	char *d = malloc(len + 1);

	if (d) {
		memcpy(d, s, len);
		d[len] = 0;
	}
	return d;
}

/* END's figures, in their order on disk (format.h). */
static int get_totals(struct cur *c, struct mt_totals *t)
{
	uint64_t *const f[MT_END_TOTALS_N] = {
		&t->allocations, &t->frees, &t->bytes_allocated, &t->peak_bytes,
		&t->peak_blocks, &t->peak_time_ns, &t->leaked_bytes, &t->leaked_blocks,
	};

	for (size_t i = 0; i < MT_END_TOTALS_N; i++)
		if (get_uv(c, f[i]) < 0)
			return MT_E_CORRUPT;
	return 0;
}

static int grow_array(void **arr, size_t *cap, size_t need, size_t elem)
{
	size_t ncap;
	void *p;

	if (need <= *cap)
		return 0;
	ncap = *cap ? *cap * 2 : 64;
	while (ncap < need)
		ncap *= 2;
	p = realloc(*arr, ncap * elem);
	if (!p)
		return MT_E_NOMEM;
	*arr = p;
	*cap = ncap;
	return 0;
}

static int rec_stack(struct mt_replay *r, struct cur *c, const struct mt_replay_ops *ops, void *ctx)
{
	uint64_t ip = 0;
	uint32_t id, fn, n, i;
	struct mt_stack *s;
	uint64_t *ips;
	int64_t d;

	if (get_u32(c, &id, UINT32_MAX - 1) < 0 || (id != r->nstacks && !r->tail) ||
	    get_u32(c, &fn, MT_FN_COUNT - 1) < 0 ||
	    get_u32(c, &n, MT_MAX_DEPTH) < 0)
		return MT_E_CORRUPT;
	s = malloc(sizeof(*s) + n * sizeof(uint64_t));
	if (!s)
		return MT_E_NOMEM;
	ips = (uint64_t *)(s + 1);
	for (i = 0; i < n; i++) {
		if (get_sv(c, &d) < 0) {
			free(s);
			return MT_E_CORRUPT;
		}
		ip += (uint64_t)d;
		ips[i] = ip;
	}
	if (r->tail) {
		free(s);
		return 0;
	}
	s->id = id;
	s->fn = fn;
	s->depth = n;
	s->ips = ips;
	if (id < r->nstored) {
		struct mt_stack *old = r->stacks[id];

		if (old->fn == fn && old->depth == n &&
		    !memcmp(old->ips, ips, n * sizeof(uint64_t))) {
			free(s);
			s = old;
		} else {
			/* The file changed under us: the old pointer goes. */
			free(old);
			r->stacks[id] = s;
		}
	} else {
		if (grow_array((void **)&r->stacks, &r->stackcap, id + 1, sizeof(*r->stacks)) < 0) {
			free(s);
			return MT_E_NOMEM;
		}
		r->stacks[id] = s;
		r->nstored = id + 1;
	}
	r->nstacks = id + 1;
	s->ips = (const uint64_t *)(s + 1);
	if (ops->on_stack)
		ops->on_stack(ctx, s);
	return 0;
}

static int same_module(const struct modrec *a, const struct modrec *b)
{
	return a->m.base == b->m.base && a->m.time_ns == b->m.time_ns &&
	       !strcmp(a->path, b->path) &&
	       a->m.build_id_len == b->m.build_id_len &&
	       !memcmp(a->build_id, b->build_id, a->m.build_id_len) &&
	       a->m.nseg == b->m.nseg &&
	       !memcmp(a->segs, b->segs, a->m.nseg * sizeof(*a->segs));
}

static int rec_module(struct mt_replay *r, struct cur *c, const struct mt_replay_ops *ops, void *ctx)
{
	const uint8_t *path, *bid;
	size_t plen, blen, i;
	uint64_t base, nseg;
	struct modrec *m;

	if (get_uv(c, &base) < 0 ||
	    get_str(c, &path, &plen) < 0 || get_str(c, &bid, &blen) < 0 ||
	    get_uv(c, &nseg) < 0 || nseg > (uint64_t)(c->end - c->p) / 2)
		return MT_E_CORRUPT;
	m = calloc(1, sizeof(*m));
	if (!m)
		return MT_E_NOMEM;
	m->path = dupstr(path, plen);
	m->build_id = malloc(blen ? blen : 1);
	m->segs = malloc(nseg ? nseg * sizeof(*m->segs) : 1);
	if (!m->path || !m->build_id || !m->segs) {
		modrec_free(m);
		return MT_E_NOMEM;
	}
	memcpy(m->build_id, bid, blen);
	for (i = 0; i < nseg; i++) {
		if (get_uv(c, &m->segs[i].start) < 0 || get_uv(c, &m->segs[i].size) < 0) {
			modrec_free(m);
			return MT_E_CORRUPT;
		}
	}
	m->m.time_ns = r->time;
	m->m.base = base;
	m->m.path = m->path;
	m->m.build_id = m->build_id;
	m->m.build_id_len = blen;
	m->m.nseg = (size_t)nseg;
	m->m.segs = m->segs;
	if (r->nmods < r->nmodstored) {
		if (same_module(r->mods[r->nmods], m)) {
			modrec_free(m);
			m = r->mods[r->nmods];
		} else {
			modrec_free(r->mods[r->nmods]);
			r->mods[r->nmods] = m;
		}
	} else {
		if (grow_array((void **)&r->mods, &r->modcap, r->nmods + 1, sizeof(*r->mods)) < 0) {
			modrec_free(m);
			return MT_E_NOMEM;
		}
		r->mods[r->nmods] = m;
		r->nmodstored = r->nmods + 1;
	}
	r->nmods++;
	if (ops->on_module)
		ops->on_module(ctx, &m->m);
	return 0;
}

static int rec_thread(struct mt_replay *r, struct cur *c, const struct mt_replay_ops *ops, void *ctx)
{
	uint32_t index, tid;

	/* Indices are dense; allow some slack in their order, not a huge jump. */
	if (get_u32(c, &index, r->tail ? UINT32_MAX : r->nthreads + 1024) < 0 ||
	    get_u32(c, &tid, UINT32_MAX) < 0)
		return MT_E_CORRUPT;
	if (r->tail)
		return 0;
	if (grow_array((void **)&r->tids, &r->threadcap, index + 1, sizeof(*r->tids)) < 0)
		return MT_E_NOMEM;
	/* known[] and names[] grow with tids[]: same capacity. */
	{
		uint8_t *k = realloc(r->known, r->threadcap);
		char **n;

		if (!k)
			return MT_E_NOMEM;
		r->known = k;
		n = realloc(r->names, r->threadcap * sizeof(*n));
		if (!n)
			return MT_E_NOMEM;
		r->names = n;
	}
	while (r->nthreads <= index) {
		r->names[r->nthreads] = NULL;
		r->known[r->nthreads++] = 0;
	}
	r->tids[index] = tid;
	r->known[index] = 1;
	free(r->names[index]);    /* an index announced again is a new thread */
	r->names[index] = NULL;
	if (ops->on_thread)
		ops->on_thread(ctx, index, tid);
	return 0;
}

/* THREAD_NAME (version 3 on): the name of an announced thread. */
static int rec_thread_name(struct mt_replay *r, struct cur *c, const struct mt_replay_ops *ops,
			   void *ctx)
{
	const uint8_t *s;
	size_t len;
	uint32_t index;
	char *name;

	if (r->hdr.version < 3 || get_u32(c, &index, UINT32_MAX) < 0 || get_str(c, &s, &len) < 0)
		return MT_E_CORRUPT;
	if (r->tail)
		return 0;
	if (index >= r->nthreads || !r->known[index])
		return MT_E_CORRUPT;
	name = dupstr(s, len);
	if (!name)
		return MT_E_NOMEM;
	free(r->names[index]);
	r->names[index] = name;
	if (ops->on_thread_name)
		ops->on_thread_name(ctx, index, name);
	return 0;
}

/*
 * LEAK (version 4 on): a piece of a leak check; its last calls
 * on_leak_check. Every listed address must be live (the tail alone, which
 * has no live table, takes them on trust and keeps the totals only).
 */
static int rec_leak(struct mt_replay *r, struct cur *c, const struct mt_replay_ops *ops, void *ctx)
{
	uint64_t n, v, last, prev = 0, val;
	struct mt_leak_check lc;

	if (r->hdr.version < 4 || get_uv(c, &n) < 0 || n > MT_LEAK_PER_RECORD)
		return MT_E_CORRUPT;
	if (!r->leak_open) {
		r->leak_open = 1;
		r->nleak = 0;
		r->leak_last = 0;
	}
	if (!r->tail && grow_array((void **)&r->leak, &r->leakcap, r->nleak + n,
				   sizeof(*r->leak)) < 0)
		return MT_E_NOMEM;
	for (uint64_t i = 0; i < n; i++) {
		struct mt_leak_block *b;

		if (get_uv(c, &v) < 0 || (v & 3) == MT_LEAK_REACHABLE || (i && v >> 2 == 0) ||
		    prev + (v >> 2) < prev)
			return MT_E_CORRUPT;
		prev += v >> 2;
		/* increasing addresses over the whole check */
		if (r->nleak && prev <= r->leak_last)
			return MT_E_CORRUPT;
		r->leak_last = prev;
		if (r->tail) {
			r->nleak++;
			continue;
		}
		if (!mt_livetab_get(&r->live, prev, &val))
			return MT_E_CORRUPT;
		b = &r->leak[r->nleak++];
		b->addr = prev;
		b->kind = (unsigned)(v & 3);
		peek(r, val, &b->size, &b->stack, &b->thread);
	}
	if (get_uv(c, &last) < 0 || last > 1)
		return MT_E_CORRUPT;
	if (!last)
		return 0;
	memset(&lc, 0, sizeof(lc));
	for (int k = 0; k < MT_LEAK_KINDS; k++)
		if (get_uv(c, &lc.tot.bytes[k]) < 0 || get_uv(c, &lc.tot.blocks[k]) < 0)
			return MT_E_CORRUPT;
	r->leak_open = 0;
	lc.seq = r->events;
	lc.time_ns = r->time;
	lc.n = r->tail ? 0 : r->nleak;
	lc.lost = r->leak;
	r->end.classified = 1;
	r->end.leaks = lc.tot;
	r->leak_seq = r->events;
	if (!r->tail) {
		if (grow_array((void **)&r->checks, &r->checkcap, r->nchecks + 1,
			       sizeof(*r->checks)) < 0)
			return MT_E_NOMEM;
		r->checks[r->nchecks].seq = lc.seq;
		r->checks[r->nchecks].time_ns = lc.time_ns;
		r->checks[r->nchecks++].tot = lc.tot;
	}
	if (ops->on_leak_check)
		ops->on_leak_check(ctx, &lc);
	return 0;
}

static int get_thread(struct mt_replay *r, struct cur *c, uint32_t *t)
{
	if (get_u32(c, t, UINT32_MAX) < 0)
		return MT_E_CORRUPT;
	if (*t >= r->nthreads || !r->known[*t])
		return r->tail ? 0 : MT_E_CORRUPT;
	return 0;
}

/* A released block's on_free. */
static int emit_free(uint64_t addr, uint64_t size, uint32_t stack, uint32_t owner, uint64_t seq,
		     uint64_t time, uint32_t thread, int realloc, const struct mt_replay_ops *ops,
		     void *ctx)
{
	struct mt_event ev = {
		.seq = seq, .time_ns = time, .addr = addr, .size = size,
		.stack = stack, .thread = thread, .alloc_thread = owner, .realloc = realloc,
	};

	return ops->on_free ? ops->on_free(ctx, &ev) : 0;
}

/* Adds a block and calls on_alloc; returns 1 if the consumer stops. */
static int do_alloc(struct mt_replay *r, const struct pend *p, uint64_t addr, int realloc,
		    const struct mt_replay_ops *ops, void *ctx)
{
	uint64_t val, old, osize;
	uint32_t ostack, othread;
	int stop = 0, rc;

	if (pack(r, p->size, p->stack, p->thread, &val) < 0)
		return MT_E_NOMEM;
	rc = mt_livetab_put(&r->live, addr, val, &old);
	if (rc < 0)
		return MT_E_NOMEM;
	if (rc == 1) {
		/* Released, then the new block takes its place. */
		unpack(r, old, &osize, &ostack, &othread);
		stop = emit_free(addr, osize, ostack, othread, p->seq, p->time, p->thread, 0, ops,
				 ctx);
	}
	if (ops->on_alloc) {
		struct mt_event ev = {
			.seq = p->seq, .time_ns = p->time, .addr = addr, .size = p->size,
			.stack = p->stack, .thread = p->thread, .alloc_thread = p->thread,
			.realloc = realloc,
		};
		stop |= ops->on_alloc(ctx, &ev);
	}
	return stop ? 1 : 0;
}

static int do_free(struct mt_replay *r, const struct pend *p, int realloc,
		   const struct mt_replay_ops *ops, void *ctx)
{
	uint64_t val, size;
	uint32_t stack, owner;

	if (!mt_livetab_take(&r->live, p->a, &val))
		return 0;
	unpack(r, val, &size, &stack, &owner);
	return emit_free(p->a, size, stack, owner, p->seq, p->time, p->thread, realloc, ops,
			 ctx) ? 1 : 0;
}

/* Applies one decoded event: 0, 1 when the consumer stops, or MT_E_NOMEM. */
static int apply(struct mt_replay *r, const struct pend *p, const struct mt_replay_ops *ops,
		 void *ctx)
{
	int stop, err;

	switch (p->type) {
	case MT_REC_ALLOC:
		return do_alloc(r, p, p->a, 0, ops, ctx);
	case MT_REC_FREE:
		return do_free(r, p, 0, ops, ctx);
	default:              /* REALLOC: both halves, whatever the first says */
		stop = do_free(r, p, 1, ops, ctx);
		err = do_alloc(r, p, p->a2, 1, ops, ctx);
		return err < 0 ? err : stop || err ? 1 : 0;
	}
}

/*
 * Applies pending events, oldest first, until at most keep remain. When the
 * consumer stops, the events decoded after it are dropped and the run's
 * counters go back to the stopping event, as if decoding had stopped there.
 * Returns 0, 1 (stopped) or MT_E_NOMEM.
 */
static int drain(struct mt_replay *r, size_t keep, const struct mt_replay_ops *ops, void *ctx)
{
	while (r->qn > keep) {
		const struct pend *p = &r->q[r->qh];
		int rc = apply(r, p, ops, ctx);

		r->qh = (r->qh + 1) % PEND;
		r->qn--;
		if (rc) {
			if (rc > 0) {
				r->events = p->seq + 1;
				r->time = p->time;
			}
			r->qn = 0;
			return rc;
		}
	}
	return 0;
}

/* Queues a decoded event, applying the oldest when the ring is full. */
static int push(struct mt_replay *r, const struct pend *p, const struct mt_replay_ops *ops,
		void *ctx)
{
	/* the last chunk alone (mt_replay_end_totals): decoded, not applied */
	if (r->tail)
		return 0;
	/* A table that fits the caches gains nothing from prefetching, and
	 * the ring would cost (churn: 1,000 live blocks, 0.21 -> 0.34 s for
	 * 20 M events): apply at once. */
	if (!r->qn && r->live.cap * sizeof(*r->live.slots) < RING_FROM)
		return apply(r, p, ops, ctx);
	r->q[(r->qh + r->qn) % PEND] = *p;
	r->qn++;
	mt_livetab_prefetch(&r->live, p->a);
	if (p->type == MT_REC_REALLOC)
		mt_livetab_prefetch(&r->live, p->a2);
	return drain(r, PEND - 1, ops, ctx);
}

/*
 * An ADDR field against history h (format.h): k from the KEYS stream, a
 * delta from DELTAS when k is 0; the address joins hist[to].
 */
static inline int get_addr(struct mt_replay *r, struct cur *s, int h, int to, uint64_t *addr)
{
	uint64_t k;
	int64_t d;

	if (get_uv(&s[MT_STREAM_KEYS], &k) < 0)
		return MT_E_CORRUPT;
	if (k) {
		if (k > MT_ADDR_HISTORY || k > r->nhist[h])
			return MT_E_CORRUPT;
		*addr = r->hist[h][(r->nhist[h] - k) % MT_ADDR_HISTORY];
	} else {
		if (get_sv(&s[MT_STREAM_DELTAS], &d) < 0)
			return MT_E_CORRUPT;
		*addr = r->last[to] + (uint64_t)d;
	}
	r->hist[to][r->nhist[to]++ % MT_ADDR_HISTORY] = *addr;
	r->last[to] = *addr;
	return 0;
}

/*
 * Decodes one chunk. Returns 0, 1 if a callback stopped the replay, or a
 * negative MT_E_* (MT_E_CORRUPT for a record that does not decode).
 */
static int decode_chunk(struct mt_replay *r, const uint8_t *data, size_t len,
			uint64_t comp_len, const struct mt_replay_ops *ops, void *ctx)
{
	struct cur c = { data, data + len }, sc[MT_STREAMS];
	const uint8_t *last_progress = data, *q;
	uint64_t slen_sum = 0, stream_len[MT_STREAMS];
	uint64_t seq, t, dt, size, a, a2;
	int64_t d1;
	uint32_t stack, thread = UINT32_MAX, index;
	const uint8_t *s;
	size_t slen, i;
	int err = 0, stop = 0;

	if (c.p >= c.end || *c.p++ != MT_REC_CHUNK_BEGIN ||
	    get_uv(&c, &seq) < 0 || get_uv(&c, &t) < 0 || (seq != r->events && !r->tail))
		return MT_E_CORRUPT;
	/* The side streams end the chunk; RECORDS is what is left. */
	for (i = 1; i < MT_STREAMS; i++) {
		uint64_t room;

		if (get_uv(&c, &stream_len[i]) < 0)
			return MT_E_CORRUPT;
		/* What is left after this length's varint must hold every
		 * stream so far (c.p moved: recompute, never wrap). */
		room = (uint64_t)(c.end - c.p);
		if (slen_sum > room || stream_len[i] > room - slen_sum)
			return MT_E_CORRUPT;
		slen_sum += stream_len[i];
	}
	q = c.end - slen_sum;
	c.end = q;
	for (i = 1; i < MT_STREAMS; i++) {
		sc[i].p = q;
		sc[i].end = q + stream_len[i];
		q += stream_len[i];
	}
	r->time = t;
	r->nhist[0] = r->nhist[1] = 0;
	r->last[0] = r->last[1] = 0;
	while (c.p < c.end && !stop) {
		uint8_t type = *c.p++;

		/* Records other than events and their context (TIME, SWITCH)
		 * see every event before them applied. */
		if (type != MT_REC_ALLOC && type != MT_REC_FREE && type != MT_REC_REALLOC &&
		    type != MT_REC_TIME && type != MT_REC_SWITCH && r->qn) {
			err = drain(r, 0, ops, ctx);
			if (err)
				return err;
		}
		switch (type) {
		case MT_REC_ALLOC:
			if (get_u32(&sc[MT_STREAM_STACKS], &stack, UINT32_MAX) < 0 ||
			    stack >= r->nstacks ||
			    get_uv(&sc[MT_STREAM_SIZES], &size) < 0 ||
			    size > (uint64_t)INT64_MAX - r->allocated ||
			    get_addr(r, sc, 1, 0, &a) < 0 || thread == UINT32_MAX)
				return MT_E_CORRUPT;
			r->allocated += size;
			{
				struct pend pe = { MT_REC_ALLOC, stack, thread, r->events++, r->time,
						   size, a, 0 };

				stop = err = push(r, &pe, ops, ctx);
			}
			break;
		case MT_REC_FREE:
			if (get_addr(r, sc, 0, 1, &a) < 0 || thread == UINT32_MAX)
				return MT_E_CORRUPT;
			{
				struct pend pe = { MT_REC_FREE, 0, thread, r->events++, r->time, 0, a, 0 };

				stop = err = push(r, &pe, ops, ctx);
			}
			break;
		case MT_REC_TIME:
			if (get_uv(&c, &dt) < 0 || dt == 0 || r->time + dt < r->time)
				return MT_E_CORRUPT;
			r->time += dt;
			break;
		case MT_REC_SWITCH:
			if (get_thread(r, &c, &thread) < 0)
				return MT_E_CORRUPT;
			break;
		case MT_REC_REALLOC:
			if (get_u32(&sc[MT_STREAM_STACKS], &stack, UINT32_MAX) < 0 ||
			    stack >= r->nstacks ||
			    get_uv(&sc[MT_STREAM_SIZES], &size) < 0 ||
			    size > (uint64_t)INT64_MAX - r->allocated ||
			    get_addr(r, sc, 0, 1, &a) < 0 ||
			    get_addr(r, sc, 1, 0, &a2) < 0 || thread == UINT32_MAX)
				return MT_E_CORRUPT;
			r->allocated += size;
			{
				struct pend pe = { MT_REC_REALLOC, stack, thread, r->events++, r->time,
						   size, a, a2 };

				stop = err = push(r, &pe, ops, ctx);
			}
			break;
		case MT_REC_STACK:
			err = rec_stack(r, &c, ops, ctx);
			break;
		case MT_REC_THREAD:
			err = rec_thread(r, &c, ops, ctx);
			break;
		case MT_REC_THREAD_NAME:
			err = rec_thread_name(r, &c, ops, ctx);
			break;
		case MT_REC_RSS:
			if (r->hdr.version < 3 || get_uv(&c, &a) < 0)
				return MT_E_CORRUPT;
			if (ops->on_rss)
				ops->on_rss(ctx, r->time, a);
			break;
		case MT_REC_MODULE:
			err = rec_module(r, &c, ops, ctx);
			break;
		case MT_REC_LEAK:
			err = rec_leak(r, &c, ops, ctx);
			break;
		case MT_REC_UNLOAD:
			if (get_uv(&c, &a) < 0)
				return MT_E_CORRUPT;
			if (ops->on_unload)
				ops->on_unload(ctx, a, r->time);
			break;
		case MT_REC_SNAPSHOT:
			if (get_u32(&c, &index, UINT32_MAX) < 0 || get_str(&c, &s, &slen) < 0)
				return MT_E_CORRUPT;
			{
				char label[MT_MAX_STRING + 1];
				struct mt_snapshot snap = {
					.index = index, .label = label,
					.seq = r->events++, .time_ns = r->time,
				};

				memcpy(label, s, slen);
				label[slen] = 0;
				if (ops->on_snapshot && ops->on_snapshot(ctx, &snap))
					stop = 1;
			}
			break;
		case MT_REC_END:
			if (get_uv(&c, &a) < 0 || a > MT_END_STOPPED || get_sv(&c, &d1) < 0 ||
			    get_totals(&c, &r->end.totals) < 0)
				return MT_E_CORRUPT;
			/* Alone, the last chunk says END's figures only if END ends it. */
			if (r->tail && c.p < c.end)
				return MT_E_CORRUPT;
			r->end.clean = 1;
			/* END is classified by a check with no event after it */
			if (r->end.classified && (r->leak_seq != r->events || r->leak_open)) {
				r->end.classified = 0;
				memset(&r->end.leaks, 0, sizeof(r->end.leaks));
			}
			r->end.how = (int)a;
			r->end.code = d1;
			break;
		case MT_REC_STOP:
			if (get_str(&c, &s, &slen) < 0)
				return MT_E_CORRUPT;
			free(r->stop_reason);
			r->stop_reason = dupstr(s, slen);
			if (!r->stop_reason)
				return MT_E_NOMEM;
			r->end.stop_reason = r->stop_reason;
			break;
		default:
			return MT_E_CORRUPT;
		}
		if (err < 0)
			return err;
		if (err > 0)
			stop = 1;
		if (ops->on_progress && c.p - last_progress >= 65536) {
			last_progress = c.p;
			ops->on_progress(ctx, r->chunk_off + comp_len * (uint64_t)(c.p - data) / len,
					 mt_reader_file_size(r->rd));
		}
	}
	/* Every field of the side streams belongs to an event. */
	if (!stop)
		for (i = 1; i < MT_STREAMS; i++)
			if (sc[i].p != sc[i].end)
				return MT_E_CORRUPT;
	return stop;
}

/*
 * Replays one chunk: decodes it, applying events as they leave the ring,
 * then applies the rest. A chunk that turns out corrupt still delivers the
 * events before the bad record, as a replay without the ring would.
 */
static int replay_chunk(struct mt_replay *r, const uint8_t *data, size_t len,
			uint64_t comp_len, const struct mt_replay_ops *ops, void *ctx)
{
	int rc = decode_chunk(r, data, len, comp_len, ops, ctx), d;

	if (rc > 0 || rc == MT_E_NOMEM) {
		r->qn = 0;
		return rc;
	}
	d = drain(r, 0, ops, ctx);
	return d ? d : rc;
}

static void reset_run(struct mt_replay *r)
{
	for (size_t i = 0; i < r->nthreads; i++) {
		free(r->names[i]);
		r->names[i] = NULL;
	}
	r->nstacks = 0;
	r->nmods = 0;
	r->nthreads = 0;
	mt_livetab_clear(&r->live);
	r->nbig = 0;
	r->big_free = UINT32_MAX;
	r->qh = r->qn = 0;
	memset(&r->end, 0, sizeof(r->end));
	r->leak_open = 0;
	r->nleak = 0;
	r->nchecks = 0;
	free(r->stop_reason);
	r->stop_reason = NULL;
	r->events = 0;
	r->allocated = 0;
	r->time = 0;
}

int mt_replay_run(struct mt_replay *r, const struct mt_replay_ops *ops, void *ctx)
{
	const uint8_t *data;
	size_t len;
	uint64_t off, total = mt_reader_file_size(r->rd), last_progress = 0;
	int ret = 0, rc;

	reset_run(r);
	rc = mt_reader_rewind(r->rd);
	if (rc < 0)
		return rc;
	r->end.good_bytes = mt_reader_good_bytes(r->rd);
	if (ops->on_header)
		ops->on_header(ctx, &r->hdr);
	for (;;) {
		rc = mt_reader_next(r->rd, &data, &len, &off);
		if (rc == 0)
			break;
		if (rc < 0) {
			if (rc == MT_E_NOMEM || rc == MT_E_IO) {
				ret = rc;
				break;
			}
			r->end.error = rc;
			r->end.error_offset = mt_reader_error_offset(r->rd);
			break;
		}
		r->chunk_off = off;
		rc = replay_chunk(r, data, len, mt_reader_good_bytes(r->rd) - off, ops, ctx);
		if (rc == MT_E_NOMEM) {
			ret = rc;
			break;
		}
		if (rc < 0) {
			r->end.error = rc;
			r->end.error_offset = off;
			break;
		}
		r->end.good_bytes = mt_reader_good_bytes(r->rd);
		if (rc > 0) {
			ret = 1;
			break;
		}
		if (ops->on_progress && r->end.good_bytes - last_progress >= 65536) {
			last_progress = r->end.good_bytes;
			ops->on_progress(ctx, r->end.good_bytes, total);
		}
	}
	r->end.time_ns = r->time;
	r->end.events = r->events;
	r->end.stopped = ret == 1;
	r->end.truncated = r->end.error != 0 || (!r->end.clean && !r->end.stopped);
	if (ops->on_progress && ret == 0)
		ops->on_progress(ctx, total, total);
	if (ops->on_end)
		ops->on_end(ctx, &r->end);
	return ret;
}

size_t mt_replay_leak_checks(const struct mt_replay *r, const struct mt_leak_check_at **out)
{
	*out = r->checks;
	return r->nchecks;
}

int mt_replay_end_totals(struct mt_replay *r, unsigned *how, struct mt_totals *tot)
{
	int classified;
	struct mt_leak_totals lk;

	return mt_replay_end_leaks(r, how, tot, &classified, &lk);
}

int mt_replay_end_leaks(struct mt_replay *r, unsigned *how, struct mt_totals *tot,
			int *classified, struct mt_leak_totals *leaks)
{
	static const struct mt_replay_ops none;
	struct mt_replay *t;
	const uint8_t *data;
	size_t len;
	int rc = mt_reader_last_chunk(r->rd, &data, &len, NULL);

	if (rc <= 0)
		return rc;
	/* A replay of its own: r's tables and its last run stay as they are. */
	t = calloc(1, sizeof(*t));
	if (!t)
		return MT_E_NOMEM;
	t->tail = 1;
	/* records of later versions are read as the log's version says */
	t->hdr.version = r->hdr.version;
	mt_livetab_init(&t->live, NULL, NULL);
	t->big_free = UINT32_MAX;
	/* Events may use any stack of the chunks before. */
	t->nstacks = UINT32_MAX;
	rc = replay_chunk(t, data, len, 0, &none, NULL);
	if (rc == MT_E_NOMEM)
		goto out;
	/* A STOP's reason is for a replay to report. */
	rc = rc == 0 && t->end.clean && !t->stop_reason;
	if (rc) {
		*how = (unsigned)t->end.how;
		*tot = t->end.totals;
		/* a check only counts for END when it came just before */
		*classified = t->end.classified;
		*leaks = t->end.leaks;
	}
out:
	mt_replay_free(t);
	return rc;
}

/*
 * replay.c - decodes the records of an event log and replays them through
 * a table of callbacks (see replay.h for the contract, format.h for the
 * records).
 *
 * For: validating every record, keeping the live-block table and the tables
 * of stacks, modules and threads, and calling the consumer in log order.
 * Not for: reading the container (lib/reader.c), any aggregation.
 *
 * Two stages. The decoder reads chunks, decodes their records, checks them
 * and keeps the tables of stacks, modules and threads; what the consumer is
 * to hear of it writes as items into slices (arrays of SLICE items). The
 * applier takes the slices in order, keeps the live table (version 3 logs,
 * or owners) and calls the consumer, always from the caller's thread (a
 * run of the simplest events in one call, to a consumer with on_run). A
 * log of 64 KiB or more is decoded on a thread of its own, up to NSLICE
 * slices ahead, so that on two cores zstd and the decoding overlap the
 * consumer's work (mt_replay_threads); a smaller one alternates the two
 * stages on the caller's thread, one slice at a time. (The bench's logs
 * compress 30-100 times: a 614 KB log is 20 M events. Measured on two
 * cores, medians: report --summary on 100 M churn events 1.64 -> 0.94 s,
 * the default report on churn 0.42 -> 0.25 s and on python3 0.22 -> 0.16
 * s, the viewer's first screen on 100 M events 2.2 -> 1.4 s, at about the
 * CPU of one thread once the two stages' fields no longer share cache
 * lines: see struct mt_replay.) The code and the output are the same
 * either way: during a run the applier reads nothing the decoder writes
 * but the items, which carry every pointer and number a callback gets,
 * and a consumer that stops ends the run at its item (what the decoder
 * got ahead is dropped).
 *
 * Memory grows with distinct stacks, modules and threads, never with the
 * number of events; with live blocks too for logs before version 4 (their
 * frees name an address, which the live table turns into a block) and for
 * owners (mt_replay_owners) of blocks of threads other than the first.
 * Version 4 frees name their block, so replaying them needs no table.
 *
 * Choices where the log says something odd (documented in memtrail-format(5)):
 * - Version 4: a free whose block (stack, size) its stack has not got live
 *   is corrupt. The recorder writes the free of a missed block itself, so
 *   the two version-3 choices below never arise.
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
 * - TAG in a log older than version 4, out of order (ids 1, 2, 3...),
 *   under a parent not yet defined or deeper than MT_MAX_TAG_DEPTH, and a
 *   STACK naming a tag path not yet defined, are corrupt. Tag paths are
 *   kept like stacks: an unchanged path keeps its string across runs.
 * - A re-run keeps mt_stack / mt_module objects whose content is unchanged,
 *   so pointers handed out by an earlier run stay valid.
 */
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "error.h"
#include "format.h"
#include "reader.h"
#include "livetab.h"
#include "replay.h"

/*
 * A live block of a log before version 4 (whose frees name the address
 * only) is one slot of the live table (lib/livetab.h): its value packs
 * the requested size (low 13 bits), the stack id (next 13) and the index
 * of the thread that allocated it (next 5), so that a free tells whose
 * block it releases (mt_livetab_pack). A block that does not fit (8 KiB or
 * more, a stack id from 2^13 up, a thread index from 2^5 up) has a wide
 * record of the table's instead, so the table stays 10 bytes a slot
 * however odd the log.
 */
#define STACK_BITS 13

/*
 * The two stages (see the top comment): the decoder turns records into
 * items, a slice of SLICE of them at a time; the applier takes the slices
 * in order, keeps the live table and calls the consumer. An item is an
 * event, or a record the consumer hears of with all it needs, so that
 * during a run the applier reads nothing else the decoder writes.
 */
enum {
	IT_EVENT,             /* type: an EV_*; stack, size: the block's
				 (a free's: the block it ends, version 4
				 on), a: its address */
	IT_TIME,              /* a: the time from here on (TIME, a chunk's
				 start) */
	IT_SWITCH,            /* stack: the thread of the events that follow */
	IT_SAMPLE,            /* size: SAMPLE's mean (the applier's copy) */
	IT_STACK,             /* p: the struct mt_stack */
	IT_MODULE,            /* p: the struct mt_module */
	IT_THREAD,            /* stack: the index, size: the tid */
	IT_THREAD_NAME,       /* stack: the index, p: the name (malloc'd) */
	IT_TAG,               /* stack: the id, size: the parent, p: the path */
	IT_LEAK,              /* p: the check (struct leakrec, malloc'd) */
	IT_RSS,               /* size: bytes */
	IT_UNLOAD,            /* a: the base */
	IT_SNAPSHOT,          /* stack: the index, p: the label (malloc'd) */
	IT_END,               /* p: END's figures (struct endrec, malloc'd) */
	IT_STOP,              /* p: the reason (malloc'd) */
	IT_BASE,              /* p: the state (struct mt_base, malloc'd) */
	IT_PROGRESS,          /* a: bytes of the file done, size: of all */
	IT_CHUNK_BEGIN,       /* a: the good bytes once this chunk is read,
				 size: the file's (a bounded log's segments
				 grow as the reader opens them: the applier
				 never asks the reader) */
	IT_CHUNK_END,         /* the chunk decoded to its end */
	IT_FINISH,            /* the last: a: 0 (end of file) or a negative
				 MT_E_*, size: the file offset of the problem */
};
/* An event item's type: a REALLOC is two items, its halves. */
enum {
	EV_ALLOC = MT_RUN_ALLOC,
	EV_FREE = MT_RUN_FREE,
	EV_REALLOC_FREE = MT_RUN_REALLOC_FREE,
	EV_REALLOC_ALLOC = MT_RUN_REALLOC_ALLOC,
};
/*
 * 24 bytes, every one crossing from one core's cache to the other's when
 * threaded: an event's seq is not here (events and snapshots are numbered
 * in order; the applier counts them), nor its time and thread, which
 * change at TIME and SWITCH records only (IT_TIME, IT_SWITCH: the applier
 * keeps them), and a REALLOC takes two. At 56 bytes, with those three and
 * a REALLOC's second address and old block, items were most of what the
 * two threads' caches moved. kind and type are not bytes: a store of a
 * character type may alias anything, and the decoder's loop would reload
 * its state from memory after every item.
 */
struct item {
	uint16_t kind, type;
	uint32_t stack;
	uint64_t size;
	union {
		uint64_t a;
		void *p;
	};
};
/* An event item is what on_run hands out (struct mt_run_event), in place. */
_Static_assert(sizeof(struct item) == sizeof(struct mt_run_event) &&
	       offsetof(struct item, type) == offsetof(struct mt_run_event, type) &&
	       offsetof(struct item, stack) == offsetof(struct mt_run_event, stack) &&
	       offsetof(struct item, size) == offsetof(struct mt_run_event, size) &&
	       offsetof(struct item, a) == offsetof(struct mt_run_event, addr),
	       "an event item is a struct mt_run_event");
struct endrec {
	int how;
	int64_t code;
	struct mt_totals totals;
	int leak_open;        /* a leak check's records had begun, not ended */
};
/*
 * A leak check as decoded, and the blocks it lists (IT_LEAK): the
 * decoder's buffer of them, handed over whole (a check lists up to
 * millions of blocks: a copy was 29 MB of fresh pages on the bench's
 * python3 log, a tenth of its report's CPU with the session's copy).
 */
struct leakrec {
	struct mt_leak_check lc;
	struct mt_leak_block *b;
};

static void leakrec_free(struct leakrec *lr)
{
	if (lr)
		free(lr->b);
	free(lr);
}

#define SLICE 4096
/* Slices between the stages when threaded: 3 MB of 24-byte items. Twice
 * 16 took a fifth off the viewer's pass and the summary on 100 M churn
 * events (and 10 % off the bench's default reports): with half as much
 * between them, the two stages waited on each other more, in CPU time
 * too. 64 gained nothing more. */
#define NSLICE 32
struct slice {
	size_t n;
	int owned;                /* an item owns its p (put_owned) */
	struct item it[SLICE];
};
/*
 * A large live table misses the caches on nearly every probe: the applier
 * asks the CPU for the slots of the events PREFETCH items ahead, so that
 * the misses of millions of live blocks overlap (on a python3 run with
 * 2.1 M live blocks in a version 3 log they were 60 % of a report).
 */
#define PREFETCH 8
#define PREFETCH_FROM (4u << 20)   /* bytes of live table from which that pays */
/* Logs from this size are decoded on a thread of their own (if 2 CPUs);
 * the ThreadSanitizer build decodes every log so (make check-tsan). */
#ifndef THREADED_FROM
#define THREADED_FROM (64u << 10)
#endif

struct cur {
	const uint8_t *p, *end;
};

struct modrec {
	struct mt_module m;
	char *path;
	uint8_t *build_id;
	struct mt_segment *segs;
};

/*
 * An address state (format.h): its side streams, histories [0] allocated,
 * [1] freed, and (version 4 on) the stack and size of each address of
 * hist[0].
 */
struct addr_state {
	struct cur sc[MT_STREAMS];  /* its side streams (version 5; before, the
				      * chunk's are state 0's), i >= 1 */
	uint64_t nhist[2];
	uint64_t last[2];     /* the latest address of each history, 0 at first */
	uint64_t hist[2][MT_ADDR_HISTORY];
	uint32_t hstack[MT_ADDR_HISTORY];
	uint64_t hsize[MT_ADDR_HISTORY];
};

/*
 * The decoder's place in the run, which its loop over events keeps in
 * locals (struct dec): where it reads the records, the thread of their
 * events and its address state, the time, the events and bytes decoded.
 */
struct place {
	struct cur rec;
	struct addr_state *as;    /* the current thread's (states below) */
	uint64_t time;
	uint64_t events;
	uint64_t allocated;       /* bytes allocated so far: at most INT64_MAX */
	uint32_t thread;          /* SWITCH's; UINT32_MAX before the chunk's first */
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

	/* Tag paths 1 .. ntags: their "/"-joined strings and depths at
	 * [id - 1]; strings stay valid across runs as stacks do. */
	char **tags;
	uint8_t *tagdepth;
	size_t ntags, ntagstored, tagcap, depthcap;

	uint32_t *tids;       /* UINT32_MAX + 1 never fits: use known[] */
	uint8_t *known;
	size_t nthreads, threadcap;

	/*
	 * Version 4 logs name the block each free ends (size, stack), so the
	 * table is needed only for owners (mt_replay_owners): it then holds the
	 * blocks of threads other than index 0, value the thread index, and a
	 * block not in it is thread 0's. Per stack, the blocks and bytes live,
	 * so that a free beyond them is corrupt rather than a negative figure.
	 */
	int direct;           /* version 4 or later */
	int owners;           /* track each block's thread (default on) */
	/* Decoding the last chunk alone (mt_replay_end_totals): stacks and
	 * threads of earlier chunks are taken on trust, nothing is kept. */
	int tail;
	/* SAMPLE's mean interval (0: every allocation), set before the first
	 * event (the applier has its own copy, app_sample). direct, owners
	 * and tail the applier reads too: they stay off the lines the
	 * decoder writes as it goes (see apart below). */
	uint64_t sample;
	uint64_t *sblocks, *sbytes;   /* nstacks of each (direct only) */
	size_t scap;

	/* The leak check being read: its blocks so far. */
	struct mt_leak_block *leak;
	size_t nleak, leakcap;
	uint64_t leak_last;   /* the highest address listed, for order */
	int leak_open;        /* a check's records have begun */

	/* Decoding state of the current run. */
	struct place at;
	uint64_t weighed;     /* a sampled log's weighed bytes allocated so far */
	/* The chunk's address states (format.h, states below): one before
	 * version 5, where state_mask is 0. */
	uint32_t state_mask;
	uint64_t chunk_off;
	/* The chunk, its records' start and side streams. */
	const uint8_t *chunk, *last_progress;
	size_t chunk_len;
	uint64_t comp_len;
	int in_chunk;
	const struct mt_replay_ops *ops;
	/* The source: the reader, or one chunk (single, for the tail). */
	const uint8_t *single;
	size_t single_len;
	int threads;          /* mt_replay_threads: -1 auto, 0 never, 1 always */
	/* A bounded log (format.h BASE): the reader's segment count at the
	 * chunk being decoded; chunks decoded in this run; the seq the run
	 * began at; skip_defs while the records of a segment after the first
	 * repeat what the run knows, up to its BASE; the BASE being read. */
	unsigned segment;
	uint64_t run_chunks, first_seq;
	int skip_defs, base_due;
	struct mt_base_stack *base;
	size_t nbase, basecap;
	/* the decoder's other fields share their cache lines */
	struct addr_state states[MT_ADDR_STATES];

	/*
	 * The applier's, apart from the decoder's: when the stages run on two
	 * threads, a cache line both write goes from one core to the other at
	 * every event (the applier's live table beside the decoder's counters
	 * made the threaded report of a 4-thread churn log take 1.34 s of CPU
	 * and 0.70 s wall, against 0.83 s and 0.42 s apart).
	 */
	char apart[128];
	/* good bytes once the current chunk is done, the FINISH item's code
	 * and offset */
	uint64_t seq;         /* events and snapshots applied */
	uint64_t app_time;    /* IT_TIME's: the time of the items that follow */
	uint32_t app_thread;  /* IT_SWITCH's: the thread of the events */
	uint64_t app_sample;  /* IT_SAMPLE's: the mean the events are weighed by */
	int re_stop;          /* a REALLOC's free half stopped the consumer */
	uint64_t stop_events, stop_time;  /* where the consumer stopped */
	uint64_t pending_good, last_good;
	uint64_t pending_size;    /* the file's size at the current chunk */
	int fin_rc;
	uint64_t fin_off;
	struct mt_end end;
	char *stop_reason;
	char **names;         /* THREAD_NAME's, NULL: none */
	size_t nnames, namecap;
	uint64_t leak_seq;    /* events before the latest check */
	struct mt_leak_check_at *checks;  /* every check of the run */
	size_t nchecks, checkcap;
	struct leakrec *last_leak;  /* the latest check, until the run's end */
	/* the live blocks (see direct above) */
	struct mt_livetab live;
	char apart_end[128];  /* from what the heap puts next */
};

/* ---- live table ---------------------------------------------------------- */

int mt_replay_expect_blocks(struct mt_replay *r, uint64_t n)
{
	/* version 4: the table holds other threads' blocks only, if any */
	if (r->direct)
		return 0;
	return mt_livetab_reserve(&r->live, n) < 0 ? MT_E_NOMEM : 0;
}

void mt_replay_owners(struct mt_replay *r, int on)
{
	r->owners = on;
}

void mt_replay_trim(struct mt_replay *r)
{
	mt_livetab_fini(&r->live);
}

/* The value of a block; -1 when out of memory (for a wide record). */
static int pack(struct mt_replay *r, uint64_t size, uint32_t stack, uint32_t thread,
		uint32_t *val)
{
	return mt_livetab_pack(&r->live, STACK_BITS, size, stack, thread, val);
}

/* The size, stack and thread of a value; its wide record is released. */
static void unpack(struct mt_replay *r, uint32_t val, uint64_t *size, uint32_t *stack,
		   uint32_t *thread)
{
	struct mt_livetab_wide b = mt_livetab_block(&r->live, STACK_BITS, val);

	if (val & MT_LIVETAB_WIDE)
		mt_livetab_wide_free(&r->live, val & ~MT_LIVETAB_WIDE);
	*size = b.size;
	*stack = b.stack;
	*thread = b.thread;
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
	mt_livetab_init(&r->live, NULL);
	r->threads = -1;
	err = mt_reader_open(path, &r->rd, err_offset);
	if (err < 0)
		goto fail;
	h = mt_reader_header(r->rd);
	r->hdr.version = h->version;
	r->direct = h->version >= 4;
	r->state_mask = h->version >= 5 ? MT_ADDR_STATES - 1 : 0;
	r->owners = 1;
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

uint64_t mt_replay_sample(const struct mt_replay *r)
{
	return r->sample;
}

size_t mt_replay_nthreads(const struct mt_replay *r)
{
	return r->nthreads;
}

size_t mt_replay_ntags(const struct mt_replay *r)
{
	return r->ntags;
}

const char *mt_replay_tag(const struct mt_replay *r, uint32_t id)
{
	if (!id)
		return "";
	return id <= r->ntags ? r->tags[id - 1] : NULL;
}

int mt_replay_thread(const struct mt_replay *r, size_t i, uint32_t *tid, const char **name)
{
	if (i >= r->nthreads || !r->known[i])
		return MT_E_NOTFOUND;
	*tid = r->tids[i];
	*name = i < r->nnames ? r->names[i] : NULL;
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
	free(r->sblocks);
	free(r->sbytes);
	free(r->base);
	mt_reader_free(r->rd);
	free(r->joined);
	free(r->argv);
	for (i = 0; i < r->nstored; i++)
		free(r->stacks[i]);
	free(r->stacks);
	for (i = 0; i < r->nmodstored; i++)
		modrec_free(r->mods[i]);
	free(r->mods);
	for (i = 0; i < r->ntagstored; i++)
		free(r->tags[i]);
	free(r->tags);
	free(r->tagdepth);
	free(r->tids);
	free(r->known);
	for (i = 0; i < r->nnames; i++)
		free(r->names[i]);
	free(r->names);
	mt_livetab_fini(&r->live);
	free(r->leak);
	free(r->checks);
	leakrec_free(r->last_leak);
	free(r->stop_reason);
	free(r);
}

/* ---- decoding ------------------------------------------------------------ */

/* The decoder's per-field helpers, inlined where GCC would not by itself
 * (get_addr, called three times in decode_record, was 11 % of a report). */
#define HOT static inline __attribute__((always_inline))

/*
 * Each returns 0, or MT_E_CORRUPT when the field does not decode. Most
 * varints are one byte, and most others two (stack ids, sizes, address
 * deltas): those are inline, the rest goes to mt_get_uv (whose loop was a
 * sixth of the decoder's instructions when it took every varint of more
 * than a byte).
 */
HOT int get_uv(struct cur *c, uint64_t *v)
{
	if (__builtin_expect(c->p < c->end && *c->p < 0x80, 1)) {
		*v = *c->p++;
		return 0;
	}
	if (c->end - c->p >= 2 && c->p[1] < 0x80) {
		*v = (c->p[0] & 0x7fu) | (uint64_t)c->p[1] << 7;
		c->p += 2;
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

/*
 * A recorded block of size bytes at addr in a sampled log stands for
 * size / p bytes and 1 / p blocks, p = 1 - exp(-size / mean) (format.h
 * SAMPLE). Bytes round to the nearest. Blocks, whole numbers in every
 * reader, round down or up at random with the chance that keeps their mean
 * 1 / p, drawn from a hash of the block's address, stack and size: each
 * block draws its own, and its free, or a leak check, takes back exactly
 * what its allocation added, so live figures return to zero. (Address
 * space randomisation moves the blocks, so two runs with the same seed
 * draw the same blocks and bytes but may round counts apart.) The log's
 * sizes stay as recorded inside the replay (its checks of each stack's
 * live blocks use them); they are weighed here, where a block's figures go
 * out, and at decoding for the sum's bound (weighed_fits). A block so large
 * that p is 1 in double precision keeps its size exactly.
 */
static double weight(uint64_t size, uint64_t mean)
{
	double p = -expm1(-(double)size / (double)mean);

	/* size 0: never drawn, stands for nothing; p 1: itself */
	return p >= 1.0 || p <= 0.0 ? 1.0 : 1.0 / p;
}

static __attribute__((noinline, cold)) void weigh(uint64_t mean, uint64_t addr, uint32_t stack,
						  uint64_t *size, uint64_t *count)
{
	double w = weight(*size, mean), n = floor(w);
	uint64_t h;

	*count = 1;
	if (w == 1.0)
		return;
	/* splitmix64's finaliser */
	h = addr ^ ((uint64_t)stack << 40) ^ (*size * 0x9E3779B97F4A7C15ull);
	h = (h ^ (h >> 30)) * 0xBF58476D1CE4E5B9ull;
	h = (h ^ (h >> 27)) * 0x94D049BB133111EBull;
	h ^= h >> 31;
	*size = (uint64_t)llround((double)*size * w);
	/* an event's count is 32 bits: past that (a mean near its 1 TiB bound,
	 * a block of a byte), the count, not the bytes, is short */
	*count = n >= 4294967295.0 ? 4294967295u :
		(uint64_t)n + ((double)(h >> 11) * 0x1.0p-53 < w - n);
}

/*
 * A sampled allocation's weighed size added to the weighed bytes allocated,
 * or -1 when the sum would pass what a figure holds (INT64_MAX), as the
 * recorded sizes' sum is checked: no consumer's figure can wrap.
 */
static __attribute__((noinline, cold)) int weighed_fits(struct mt_replay *r, uint64_t size)
{
	double w = (double)size * weight(size, r->sample);

	if (w >= (double)(INT64_MAX - r->weighed))
		return -1;
	r->weighed += (uint64_t)llround(w);
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

/* The next item of the slice (the decoder keeps room for each record's). */
HOT struct item *put(struct slice *sl, int kind)
{
	struct item *it = &sl->it[sl->n++];

	it->kind = (uint16_t)kind;
	return it;
}

/* The same for an item whose p is malloc'd (discard frees it): a slice
 * without one is emptied without a look at its items. */
static struct item *put_owned(struct slice *sl, int kind)
{
	sl->owned = 1;
	return put(sl, kind);
}

static int rec_stack(struct mt_replay *r, struct cur *c, struct slice *sl)
{
	uint64_t ip = 0;
	uint32_t id, fn, n, i, tag = 0;
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
	/* version 4 on: the tag path, defined by an earlier TAG */
	if (r->hdr.version >= 4 &&
	    (get_u32(c, &tag, MT_MAX_TAGS) < 0 || (tag > r->ntags && !r->tail))) {
		free(s);
		return MT_E_CORRUPT;
	}
	if (r->tail) {
		free(s);
		return 0;
	}
	s->id = id;
	s->fn = fn;
	s->tag = tag;
	s->depth = n;
	s->ips = ips;
	if (id < r->nstored) {
		struct mt_stack *old = r->stacks[id];

		if (old->fn == fn && old->depth == n && old->tag == tag &&
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
	if (r->direct && r->nstacks > r->scap) {
		size_t cap = r->scap ? 2 * r->scap : 256;
		uint64_t *b, *y;

		while (cap < r->nstacks)
			cap *= 2;
		b = realloc(r->sblocks, cap * sizeof(*b));
		if (b)
			r->sblocks = b;
		y = b ? realloc(r->sbytes, cap * sizeof(*y)) : NULL;
		if (!y)
			return MT_E_NOMEM;
		r->sbytes = y;
		r->scap = cap;
	}
	if (r->direct)
		r->sblocks[id] = r->sbytes[id] = 0;
	s->ips = (const uint64_t *)(s + 1);
	put(sl, IT_STACK)->p = s;
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

static int rec_module(struct mt_replay *r, struct cur *c, struct slice *sl)
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
	m->m.time_ns = r->at.time;
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
	put(sl, IT_MODULE)->p = &m->m;
	return 0;
}

static int rec_thread(struct mt_replay *r, struct cur *c, struct slice *sl)
{
	uint32_t index, tid;
	struct item *it;

	/* Indices are dense; allow some slack in their order, not a huge jump. */
	if (get_u32(c, &index, r->tail ? UINT32_MAX : r->nthreads + 1024) < 0 ||
	    get_u32(c, &tid, UINT32_MAX) < 0)
		return MT_E_CORRUPT;
	if (r->tail)
		return 0;
	if (grow_array((void **)&r->tids, &r->threadcap, index + 1, sizeof(*r->tids)) < 0)
		return MT_E_NOMEM;
	/* known[] grows with tids[]: same capacity. */
	{
		uint8_t *k = realloc(r->known, r->threadcap);

		if (!k)
			return MT_E_NOMEM;
		r->known = k;
	}
	while (r->nthreads <= index)
		r->known[r->nthreads++] = 0;
	r->tids[index] = tid;
	r->known[index] = 1;
	it = put(sl, IT_THREAD);
	it->stack = index;
	it->size = tid;
	return 0;
}

/* TAG (version 4 on): tag path id is parent's with name inside. */
static int rec_tag(struct mt_replay *r, struct cur *c, struct slice *sl)
{
	const uint8_t *s;
	size_t len, plen;
	uint32_t id, parent;
	unsigned depth;
	char *path;

	if (r->hdr.version < 4 || get_u32(c, &id, MT_MAX_TAGS) < 0 ||
	    get_u32(c, &parent, MT_MAX_TAGS) < 0 || get_str(c, &s, &len) < 0 || !len)
		return MT_E_CORRUPT;
	if (r->tail)
		return 0;
	if (id != r->ntags + 1 || parent >= id)
		return MT_E_CORRUPT;
	depth = parent ? r->tagdepth[parent - 1] + 1u : 1u;
	if (depth > MT_MAX_TAG_DEPTH)
		return MT_E_CORRUPT;
	plen = parent ? strlen(r->tags[parent - 1]) : 0;
	path = malloc(plen + 1 + len + 1);
	if (!path)
		return MT_E_NOMEM;
	if (parent) {
		memcpy(path, r->tags[parent - 1], plen);
		path[plen++] = '/';
	}
	memcpy(path + plen, s, len);
	path[plen + len] = 0;
	if (id <= r->ntagstored) {
		if (strcmp(r->tags[id - 1], path)) {
			free(r->tags[id - 1]);
			r->tags[id - 1] = path;
		} else {
			free(path);
		}
	} else {
		if (grow_array((void **)&r->tags, &r->tagcap, id, sizeof(*r->tags)) < 0 ||
		    grow_array((void **)&r->tagdepth, &r->depthcap, id, 1) < 0) {
			free(path);
			return MT_E_NOMEM;
		}
		r->tags[id - 1] = path;
		r->ntagstored = id;
	}
	r->tagdepth[id - 1] = (uint8_t)depth;
	r->ntags = id;
	{
		struct item *it = put(sl, IT_TAG);

		it->stack = id;
		it->size = parent;
		it->p = r->tags[id - 1];
	}
	return 0;
}

/* THREAD_NAME (version 3 on): the name of an announced thread. */
static int rec_thread_name(struct mt_replay *r, struct cur *c, struct slice *sl)
{
	const uint8_t *s;
	size_t len;
	uint32_t index;
	struct item *it;
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
	it = put_owned(sl, IT_THREAD_NAME);
	it->stack = index;
	it->p = name;
	return 0;
}

/*
 * LEAK (version 4 on): a piece of a leak check; its last makes an IT_LEAK
 * item (the applier gives it its seq and the blocks' threads). Each listed
 * block must be one its stack can have live (the tail alone, which knows
 * no stacks, takes them on trust and keeps the totals only).
 */
static int rec_leak(struct mt_replay *r, struct cur *c, struct slice *sl)
{
	uint64_t n, v, last, prev = 0, stack, size;
	struct leakrec *lr;

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
		    prev + (v >> 2) < prev || get_uv(c, &stack) < 0 || stack >= r->nstacks ||
		    get_uv(c, &size) < 0)
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
		if (!r->sblocks[stack] || r->sbytes[stack] < size)
			return MT_E_CORRUPT;
		b = &r->leak[r->nleak++];
		b->addr = prev;
		b->kind = (unsigned)(v & 3);
		b->count = 1;
		if (r->sample) {
			uint64_t w;

			weigh(r->sample, prev, (uint32_t)stack, &size, &w);
			b->count = (uint32_t)w;
		}
		b->size = size;
		b->stack = (uint32_t)stack;
		b->thread = 0;
	}
	if (get_uv(c, &last) < 0 || last > 1)
		return MT_E_CORRUPT;
	if (!last)
		return 0;
	lr = calloc(1, sizeof(*lr));
	if (!lr)
		return MT_E_NOMEM;
	for (int k = 0; k < MT_LEAK_KINDS; k++)
		if (get_uv(c, &lr->lc.tot.bytes[k]) < 0 || get_uv(c, &lr->lc.tot.blocks[k]) < 0) {
			free(lr);
			return MT_E_CORRUPT;
		}
	r->leak_open = 0;
	/* the tail keeps no blocks (and has no buffer) */
	if (!r->tail && r->nleak) {
		lr->b = r->leak;
		lr->lc.n = r->nleak;
		r->leak = NULL;
		r->leakcap = 0;
	}
	lr->lc.lost = lr->b;
	put_owned(sl, IT_LEAK)->p = lr;
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

/*
 * What the applier's event path reads, taken once a slice: through r and
 * ops it was loaded again after every callback (which, for all the
 * compiler knows, may change anything). The sampling mean is the
 * applier's own (IT_SAMPLE): the decoder's may change meanwhile.
 */
struct app {
	struct mt_replay *r;
	int (*on_alloc)(void *ctx, const struct mt_event *ev);
	int (*on_free)(void *ctx, const struct mt_event *ev);
	int (*on_run)(void *ctx, const struct mt_run *run, size_t *done);
	void *ctx;
	uint64_t sample;
	int direct, owners;
};

/*
 * The event path's functions below take simple, a constant: 1 where
 * apply_slice found the slice's run of events to need none of the checks
 * it leaves out (a log of version 4 on, unsampled, both callbacks there,
 * no block of another thread in the owners' table): the same code without
 * them, a third fewer instructions an event.
 */

/* A released block's on_free. */
HOT int emit_free(const struct app *ap, uint64_t addr, uint64_t size, uint32_t stack,
		  uint32_t owner, uint64_t seq, uint64_t time, uint32_t thread, int realloc,
		  int simple)
{
	uint64_t count = 1, asked = size;

	if (!simple && __builtin_expect(ap->sample != 0, 0))
		weigh(ap->sample, addr, stack, &size, &count);

	/* built once its figures are final: stores the callback's loads forward from */
	struct mt_event ev = {
		.seq = seq, .time_ns = time, .addr = addr, .size = size, .stack = stack,
		.thread = thread, .alloc_thread = owner, .realloc = realloc,
		.count = (uint32_t)count, .asked = asked,
	};

	return simple || ap->on_free ? ap->on_free(ap->ctx, &ev) : 0;
}

/*
 * Before version 4: the block at the address of an allocation goes into
 * the live table; one already there lost its free, and is released first
 * (its on_free: the return value, 0 or 1 when the consumer stops), or
 * MT_E_NOMEM.
 */
static __attribute__((noinline)) int alloc_v3(struct app a, const struct item *p, uint64_t seq)
{
	/* a copy: the caller's never leaves it (see struct app) */
	const struct app *ap = &a;
	struct mt_replay *r = ap->r;
	uint32_t val, old, ostack, othread;
	uint64_t osize;
	int rc;

	if (pack(r, p->size, p->stack, r->app_thread, &val) < 0)
		return MT_E_NOMEM;
	rc = mt_livetab_put(&r->live, p->a, val, &old);
	if (rc < 0)
		return MT_E_NOMEM;
	if (rc == 0)
		return 0;
	unpack(r, old, &osize, &ostack, &othread);
	return emit_free(ap, p->a, osize, ostack, othread, seq, r->app_time, r->app_thread, 0,
			 0) ? 1 : 0;
}

/* Adds a block and calls on_alloc; returns 1 if the consumer stops. */
HOT int do_alloc(const struct app *ap, const struct item *p, uint64_t seq, int realloc,
		 int simple)
{
	struct mt_replay *r = ap->r;
	uint64_t addr = p->a, time = r->app_time;
	uint32_t old, thread = r->app_thread;
	int stop = 0;

	if (simple) {
		/* thread 0's, or no owners kept: nothing for the table */
	} else if (__builtin_expect(!ap->direct, 0)) {
		stop = alloc_v3(*ap, p, seq);
		if (stop < 0)
			return stop;
	} else if (ap->owners && thread && mt_livetab_put(&r->live, addr, thread, &old) < 0) {
		/* the log writes a missed free itself: nothing to release */
		return MT_E_NOMEM;
	}
	if (simple || ap->on_alloc) {
		uint64_t size = p->size, count = 1;

		if (!simple && __builtin_expect(ap->sample != 0, 0))
			weigh(ap->sample, addr, p->stack, &size, &count);

		struct mt_event ev = {
			.seq = seq, .time_ns = time, .addr = addr, .size = size,
			.stack = p->stack, .thread = thread, .alloc_thread = thread,
			.realloc = realloc, .count = (uint32_t)count, .asked = p->size,
		};

		stop |= ap->on_alloc(ap->ctx, &ev);
	}
	return stop ? 1 : 0;
}

HOT int do_free(const struct app *ap, const struct item *p, uint64_t seq, int realloc,
		int simple)
{
	struct mt_replay *r = ap->r;
	uint64_t size;
	uint32_t val, stack, owner, thread = r->app_thread;

	if (simple || __builtin_expect(ap->direct, 1)) {
		/* the record names the block; only its thread may need the table
		 * (simple: no block is in it, and the thread is 0 when kept) */
		owner = thread;
		if (!simple && ap->owners)
			owner = mt_livetab_take(&r->live, p->a, &val) ? (uint32_t)val : 0;
		return emit_free(ap, p->a, p->size, p->stack, owner, seq, r->app_time, thread,
				 realloc, simple) ? 1 : 0;
	}
	if (!mt_livetab_take(&r->live, p->a, &val))
		return 0;
	unpack(r, val, &size, &stack, &owner);
	return emit_free(ap, p->a, size, stack, owner, seq, r->app_time, thread, realloc, 0) ?
		1 : 0;
}

/*
 * Applies one event item: 0, 1 when the consumer stops, or MT_E_NOMEM. A
 * REALLOC's halves are applied both, whatever the first says: its free
 * half keeps a stop for the second (the decoder puts the two in one
 * slice).
 */
HOT int apply(const struct app *ap, const struct item *p, uint64_t seq, int simple)
{
	struct mt_replay *r = ap->r;
	int err;

	switch (p->type) {
	case EV_ALLOC:
		return do_alloc(ap, p, seq, 0, simple);
	case EV_FREE:
		return do_free(ap, p, seq, 0, simple);
	case EV_REALLOC_FREE:
		r->re_stop = do_free(ap, p, seq, 1, simple);
		return 0;
	default:
		err = do_alloc(ap, p, seq, 1, simple);
		if (err >= 0 && r->re_stop)
			err = 1;
		r->re_stop = 0;
		return err;
	}
}

/*
 * An ADDR field against history h of address state as (format.h): k from
 * the KEYS stream, a delta from DELTAS when k is 0; the address joins
 * hist[to]. *pos is the slot of history h that k named, NO_POS for a delta.
 */
#define NO_POS SIZE_MAX
HOT int get_addr(struct addr_state *as, struct cur *keys, struct cur *deltas, int h, int to,
		 uint64_t *addr, size_t *pos)
{
	uint64_t k;
	int64_t d;

	if (get_uv(keys, &k) < 0)
		return MT_E_CORRUPT;
	*pos = NO_POS;
	if (k) {
		if (k > MT_ADDR_HISTORY || k > as->nhist[h])
			return MT_E_CORRUPT;
		*pos = (size_t)((as->nhist[h] - k) % MT_ADDR_HISTORY);
		*addr = as->hist[h][*pos];
	} else {
		if (get_sv(deltas, &d) < 0)
			return MT_E_CORRUPT;
		*addr = as->last[to] + (uint64_t)d;
	}
	as->hist[to][as->nhist[to]++ % MT_ADDR_HISTORY] = *addr;
	as->last[to] = *addr;
	return 0;
}

/*
 * The decoder's place while it decodes events (decode_events), kept in
 * locals: through r, the compiler reloaded every field after each store
 * to an item (whose fields may alias r's counters), and the decoder spent
 * a fifth of its time on those loads.
 */
struct dec {
	struct place at;
	/* the current state's side streams, by name (an array of them stayed
	 * in memory) */
	struct cur stacks, sizes, keys, deltas;
	uint64_t nstacks;
	/* version 4 on, but for the tail: the per-stack figures a free
	 * checks; else NULL */
	uint64_t *sblocks, *sbytes;
	uint64_t sample;
	uint32_t thread;
	int direct;
};

static inline void dec_streams(struct dec *d)
{
	d->stacks = d->at.as->sc[MT_STREAM_STACKS];
	d->sizes = d->at.as->sc[MT_STREAM_SIZES];
	d->keys = d->at.as->sc[MT_STREAM_KEYS];
	d->deltas = d->at.as->sc[MT_STREAM_DELTAS];
}

static inline void dec_unstreams(const struct dec *d)
{
	d->at.as->sc[MT_STREAM_STACKS] = d->stacks;
	d->at.as->sc[MT_STREAM_SIZES] = d->sizes;
	d->at.as->sc[MT_STREAM_KEYS] = d->keys;
	d->at.as->sc[MT_STREAM_DELTAS] = d->deltas;
}

static inline void dec_load(struct dec *d, const struct mt_replay *r)
{
	d->at = r->at;
	dec_streams(d);
	d->nstacks = r->nstacks;
	d->sblocks = r->direct && !r->tail ? r->sblocks : NULL;
	d->sbytes = r->sbytes;
	d->sample = r->sample;
	d->direct = r->direct;
}

static inline void dec_store(const struct dec *d, struct mt_replay *r)
{
	r->at = d->at;
	dec_unstreams(d);
}

/* Version 4: a block allocated, in the per-stack figures a free checks. */
HOT void live_add(struct dec *d, uint32_t stack, uint64_t size)
{
	if (d->sblocks) {
		d->sblocks[stack]++;
		d->sbytes[stack] += size;
	}
}

/*
 * Version 4: the block a FREE or a REALLOC's old half ends: the allocation
 * its address was named from (pos, a slot of the allocated history), else
 * [STACKS stack, SIZES size]; corrupt when its stack has no such block
 * live (a free beyond the allocations would turn a figure negative).
 */
HOT int get_block(struct dec *d, size_t pos, uint32_t *stack, uint64_t *size)
{
	if (pos != NO_POS) {
		*stack = d->at.as->hstack[pos];
		*size = d->at.as->hsize[pos];
	} else if (get_u32(&d->stacks, stack, UINT32_MAX) < 0 ||
		   *stack >= d->nstacks || get_uv(&d->sizes, size) < 0) {
		return MT_E_CORRUPT;
	}
	if (!d->sblocks)
		return 0;
	if (!d->sblocks[*stack] || d->sbytes[*stack] < *size)
		return MT_E_CORRUPT;
	d->sblocks[*stack]--;
	d->sbytes[*stack] -= *size;
	return 0;
}

/* Version 4: the block just allocated at the allocated history's latest
 * slot, for a free that names it from there. */
HOT void joined(struct addr_state *as, uint32_t stack, uint64_t size)
{
	size_t i = (size_t)((as->nhist[0] - 1) % MT_ADDR_HISTORY);

	as->hstack[i] = stack;
	as->hsize[i] = size;
}

/*
 * An allocation's STACKS stack and SIZES size (an ALLOC's, a REALLOC's
 * new block's), checked, and the bytes allocated so far past them.
 */
HOT int get_new(struct mt_replay *r, struct dec *d, uint32_t *stack, uint64_t *size)
{
	if (get_u32(&d->stacks, stack, UINT32_MAX) < 0 || *stack >= d->nstacks ||
	    get_uv(&d->sizes, size) < 0 ||
	    *size > (uint64_t)INT64_MAX - d->at.allocated ||
	    (d->sample && weighed_fits(r, *size) < 0))
		return MT_E_CORRUPT;
	d->at.allocated += *size;
	return 0;
}

HOT struct item *put_event(struct item *it, int type, uint32_t stack, uint64_t size,
			   uint64_t a)
{
	it->kind = IT_EVENT;
	it->type = (uint16_t)type;
	it->stack = stack;
	it->size = size;
	it->a = a;
	return it + 1;
}

/*
 * The decoder's inner loop: decodes the records from r->at.rec on while they
 * are events, TIME or SWITCH, up to lim and while the slice has room for
 * the items of a record, the end of a chunk and FINISH. Returns 0 there,
 * 1 at a record of another kind (for decode_record), or MT_E_CORRUPT.
 */
static int decode_events(struct mt_replay *r, struct slice *sl, const uint8_t *lim)
{
	struct item *it = &sl->it[sl->n], *room = &sl->it[SLICE - 4];
	struct dec d;
	int rc = 0;

	dec_load(&d, r);
	while (d.at.rec.p < lim && it <= room) {
		uint64_t size, osize, a, a2, dt;
		uint32_t stack, ostack, thread;
		size_t pos;
		uint8_t type = *d.at.rec.p;

		/* the two commonest first: a jump table's range check and
		 * indirect jump cost more than two compares */
		if (type == MT_REC_ALLOC) {
			d.at.rec.p++;
			if (get_new(r, &d, &stack, &size) < 0 ||
			    get_addr(d.at.as, &d.keys, &d.deltas, 1, 0, &a, &pos) < 0 ||
			    d.at.thread == UINT32_MAX)
				goto corrupt;
			live_add(&d, stack, size);
			joined(d.at.as, stack, size);
			it = put_event(it, EV_ALLOC, stack, size, a);
			d.at.events++;
			continue;
		}
		if (type == MT_REC_FREE) {
			d.at.rec.p++;
			stack = 0;
			size = 0;
			if (get_addr(d.at.as, &d.keys, &d.deltas, 0, 1, &a, &pos) < 0 ||
			    d.at.thread == UINT32_MAX ||
			    (d.direct && get_block(&d, pos, &stack, &size) < 0))
				goto corrupt;
			it = put_event(it, EV_FREE, stack, size, a);
			d.at.events++;
			continue;
		}
		switch (type) {
		case MT_REC_REALLOC:
			d.at.rec.p++;
			if (get_new(r, &d, &stack, &size) < 0 ||
			    get_addr(d.at.as, &d.keys, &d.deltas, 0, 1, &a, &pos) < 0 ||
			    d.at.thread == UINT32_MAX)
				goto corrupt;
			ostack = 0;
			osize = 0;
			/* the old block's, freed before the new one is counted, and
			 * read before the new address may take pos's slot */
			if (d.direct && get_block(&d, pos, &ostack, &osize) < 0)
				goto corrupt;
			if (get_addr(d.at.as, &d.keys, &d.deltas, 1, 0, &a2, &pos) < 0)
				goto corrupt;
			live_add(&d, stack, size);
			joined(d.at.as, stack, size);
			it = put_event(it, EV_REALLOC_FREE, ostack, osize, a);
			it = put_event(it, EV_REALLOC_ALLOC, stack, size, a2);
			d.at.events++;
			continue;
		case MT_REC_TIME:
			d.at.rec.p++;
			if (get_uv(&d.at.rec, &dt) < 0 || dt == 0 || d.at.time + dt < d.at.time)
				goto corrupt;
			d.at.time += dt;
			it->kind = IT_TIME;
			it->a = d.at.time;
			it++;
			continue;
		case MT_REC_SWITCH: {
			/* a copy: d's address never leaves the function, so
			 * that its fields can live in registers */
			struct cur c = { d.at.rec.p + 1, d.at.rec.end };

			if (get_thread(r, &c, &thread) < 0)
				goto corrupt;
			d.at.rec.p = c.p;
			/* the events that follow use the thread's state */
			dec_unstreams(&d);
			d.at.as = &r->states[thread & r->state_mask];
			dec_streams(&d);
			d.at.thread = thread;
			it->kind = IT_SWITCH;
			it->stack = thread;
			it++;
			continue;
		}
		default:
			rc = 1;
			break;
		}
		break;
	}
out:
	dec_store(&d, r);
	sl->n = (size_t)(it - sl->it);
	return rc;
corrupt:
	rc = MT_E_CORRUPT;
	goto out;
}

/*
 * Starts decoding a chunk: CHUNK_BEGIN, then the side streams' bounds.
 * 0 or MT_E_CORRUPT.
 */
static int begin_chunk(struct mt_replay *r, const uint8_t *data, size_t len)
{
	struct cur c = { data, data + len };
	uint64_t slen_sum = 0, stream_len[MT_ADDR_STATES * (MT_STREAMS - 1)], seq, t, mask = 1;
	size_t nlen = 0;
	const uint8_t *q;
	size_t i;

	if (c.p >= c.end || *c.p++ != MT_REC_CHUNK_BEGIN ||
	    get_uv(&c, &seq) < 0 || get_uv(&c, &t) < 0)
		return MT_E_CORRUPT;
	/* A bounded log that lost its start begins at its oldest segment's
	 * events (nothing is decoded or applied yet: both counters start
	 * there); elsewhere the events go on from the chunks before. */
	if (!r->tail && !r->run_chunks && r->segment == 0 &&
	    mt_reader_ring_segment(r->rd) > 1 && r->hdr.version >= 5)
		r->at.events = r->seq = r->first_seq = seq, r->base_due = 1;
	if (seq != r->at.events && !r->tail)
		return MT_E_CORRUPT;
	r->run_chunks++;
	/* Version 5: the states that have side streams in this chunk. */
	if (r->state_mask && (get_uv(&c, &mask) < 0 || mask >> MT_ADDR_STATES))
		return MT_E_CORRUPT;
	for (i = 0; i <= r->state_mask; i++)
		for (size_t j = 1; j < MT_STREAMS; j++)
			r->states[i].sc[j].p = r->states[i].sc[j].end = NULL;
	nlen = (size_t)__builtin_popcountll(mask) * (MT_STREAMS - 1);
	/* The side streams end the chunk (version 5: each state's of mask
	 * in turn); RECORDS is what is left. */
	for (i = 0; i < nlen; i++) {
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
	for (i = 0; i < nlen; i++) {
		unsigned st = (unsigned)__builtin_ctzll(mask);
		struct cur *sc = &r->states[st].sc[1 + i % (MT_STREAMS - 1)];

		sc->p = q;
		sc->end = q + stream_len[i];
		q += stream_len[i];
		if (i % (MT_STREAMS - 1) == MT_STREAMS - 2)
			mask &= mask - 1;
	}
	r->at.rec = c;
	r->chunk = r->last_progress = data;
	r->chunk_len = len;
	r->at.time = t;
	r->at.thread = UINT32_MAX;
	/* events before the first SWITCH are corrupt, but decode first */
	r->at.as = &r->states[0];
	for (i = 0; i <= r->state_mask; i++) {
		r->states[i].nhist[0] = r->states[i].nhist[1] = 0;
		r->states[i].last[0] = r->states[i].last[1] = 0;
	}
	return 0;
}

/* The definitions skip_def passes over. */
static int skips(uint8_t type)
{
	return type == MT_REC_STACK || type == MT_REC_MODULE || type == MT_REC_THREAD ||
	       type == MT_REC_THREAD_NAME || type == MT_REC_TAG || type == MT_REC_SAMPLE;
}

/*
 * A record of a segment's start that repeats what the run knows (it read
 * the segment before): decoded, checked for form, dropped.
 */
static int skip_def(struct mt_replay *r, struct cur *c, uint8_t type)
{
	const uint8_t *s;
	size_t len;
	uint64_t v, n;
	int64_t d;

	switch (type) {
	case MT_REC_STACK:
		if (get_uv(c, &v) < 0 || get_uv(c, &v) < 0 || get_uv(c, &n) < 0 ||
		    n > MT_MAX_DEPTH)
			return MT_E_CORRUPT;
		while (n--)
			if (get_sv(c, &d) < 0)
				return MT_E_CORRUPT;
		return r->hdr.version >= 4 ? get_uv(c, &v) : 0;
	case MT_REC_MODULE:
		if (get_uv(c, &v) < 0 || get_str(c, &s, &len) < 0 || get_str(c, &s, &len) < 0 ||
		    get_uv(c, &n) < 0 || n > (uint64_t)(c->end - c->p) / 2)
			return MT_E_CORRUPT;
		while (n--)
			if (get_uv(c, &v) < 0 || get_uv(c, &v) < 0)
				return MT_E_CORRUPT;
		return 0;
	case MT_REC_THREAD:
		return get_uv(c, &v) < 0 || get_uv(c, &v) < 0 ? MT_E_CORRUPT : 0;
	case MT_REC_THREAD_NAME:
		return get_uv(c, &v) < 0 || get_str(c, &s, &len) < 0 ? MT_E_CORRUPT : 0;
	case MT_REC_TAG:
		return get_uv(c, &v) < 0 || get_uv(c, &v) < 0 || get_str(c, &s, &len) < 0 ?
			MT_E_CORRUPT : 0;
	default:  /* SAMPLE */
		return get_uv(c, &v);
	}
}

/*
 * BASE (format.h): where a segment begins. At the start of the run (its
 * oldest kept segment) its stacks' live blocks seed the per-stack figures
 * a free checks, and its last record makes an IT_BASE; after a segment
 * that the run read, it only ends the records to skip. Anywhere else (an
 * event decoded before it) it is corrupt.
 */
static int rec_base(struct mt_replay *r, struct cur *c, struct slice *sl)
{
	uint64_t n, last, v[3];
	struct mt_totals t;
	struct mt_base *b;
	int keep = !r->skip_defs && !r->tail;

	if (r->hdr.version < 5 || get_uv(c, &n) < 0 || n > MT_BASE_PER_RECORD)
		return MT_E_CORRUPT;
	if (keep && (!r->base_due || r->at.events != r->first_seq))
		return MT_E_CORRUPT;
	if (keep && grow_array((void **)&r->base, &r->basecap, r->nbase + n,
			       sizeof(*r->base)) < 0)
		return MT_E_NOMEM;
	for (uint64_t i = 0; i < n; i++) {
		if (get_uv(c, &v[0]) < 0 || get_uv(c, &v[1]) < 0 || get_uv(c, &v[2]) < 0 ||
		    (keep && (v[0] >= r->nstacks || !v[2] || v[1] > INT64_MAX)))
			return MT_E_CORRUPT;
		if (!keep)
			continue;
		r->base[r->nbase].stack = (uint32_t)v[0];
		r->base[r->nbase].bytes = v[1];
		r->base[r->nbase].blocks = v[2];
		r->nbase++;
		if (r->direct) {
			r->sblocks[v[0]] += v[2];
			r->sbytes[v[0]] += v[1];
		}
	}
	if (get_uv(c, &last) < 0 || last > 1)
		return MT_E_CORRUPT;
	if (!last)
		return 0;
	memset(&t, 0, sizeof(t));
	if (get_uv(c, &t.allocations) < 0 || get_uv(c, &t.frees) < 0 ||
	    get_uv(c, &t.bytes_allocated) < 0 || get_uv(c, &t.peak_bytes) < 0 ||
	    get_uv(c, &t.peak_blocks) < 0 || get_uv(c, &t.peak_time_ns) < 0 ||
	    t.bytes_allocated > INT64_MAX)
		return MT_E_CORRUPT;
	if (!keep) {
		r->skip_defs = 0;
		return 0;
	}
	b = malloc(sizeof(*b) + r->nbase * sizeof(*r->base));
	if (!b)
		return MT_E_NOMEM;
	b->seq = r->at.events;
	b->time_ns = r->at.time;
	b->tot = t;
	b->n = r->nbase;
	memcpy(b + 1, r->base, r->nbase * sizeof(*r->base));
	b->stacks = (const struct mt_base_stack *)(b + 1);
	r->nbase = 0;
	r->at.allocated = t.bytes_allocated;
	/* a second BASE at the start would count the state twice */
	r->base_due = 0;
	put_owned(sl, IT_BASE)->p = b;
	return 0;
}

/*
 * Decodes the chunk's next record, one decode_events leaves (not an event,
 * TIME or SWITCH), into at most one item of sl. Returns 0, or a negative
 * MT_E_* (MT_E_CORRUPT for a record that does not decode).
 */
static int decode_record(struct mt_replay *r, struct slice *sl)
{
	struct cur *c = &r->at.rec;
	uint64_t a;
	int64_t d1;
	uint32_t index;
	size_t slen;
	const uint8_t *s;
	struct item *it;
	uint8_t type = *c->p++;

	/* a later segment's repeat of what the run defined already */
	if (__builtin_expect(r->skip_defs, 0) && skips(type))
		return skip_def(r, c, type);
	switch (type) {
	case MT_REC_STACK:
		return rec_stack(r, c, sl);
	case MT_REC_THREAD:
		return rec_thread(r, c, sl);
	case MT_REC_THREAD_NAME:
		return rec_thread_name(r, c, sl);
	case MT_REC_TAG:
		return rec_tag(r, c, sl);
	case MT_REC_BASE:
		return rec_base(r, c, sl);
	case MT_REC_LEAK:
		return rec_leak(r, c, sl);
	case MT_REC_RSS:
		if (r->hdr.version < 3 || get_uv(c, &a) < 0)
			return MT_E_CORRUPT;
		put(sl, IT_RSS)->size = a;
		return 0;
	case MT_REC_MODULE:
		return rec_module(r, c, sl);
	case MT_REC_UNLOAD:
		if (get_uv(c, &a) < 0)
			return MT_E_CORRUPT;
		put(sl, IT_UNLOAD)->a = a;
		return 0;
	case MT_REC_SNAPSHOT:
		if (get_u32(c, &index, UINT32_MAX) < 0 || get_str(c, &s, &slen) < 0)
			return MT_E_CORRUPT;
		it = put_owned(sl, IT_SNAPSHOT);
		it->stack = index;
		r->at.events++;
		it->p = dupstr(s, slen);
		return it->p ? 0 : MT_E_NOMEM;
	case MT_REC_END: {
		struct endrec e;

		if (get_uv(c, &a) < 0 || a > MT_END_STOPPED || get_sv(c, &d1) < 0 ||
		    get_totals(c, &e.totals) < 0)
			return MT_E_CORRUPT;
		/* Alone, the last chunk says END's figures only if END ends it. */
		if (r->tail && c->p < c->end)
			return MT_E_CORRUPT;
		e.how = (int)a;
		e.code = d1;
		e.leak_open = r->leak_open;
		it = put_owned(sl, IT_END);
		it->p = malloc(sizeof(e));
		if (!it->p)
			return MT_E_NOMEM;
		memcpy(it->p, &e, sizeof(e));
		return 0;
	}
	case MT_REC_SAMPLE:
		/* one, before the first event, so that every size is weighed */
		if (r->hdr.version < 4 || get_uv(c, &a) < 0 || !a || a > MT_SAMPLE_MAX || r->sample ||
		    r->at.events != r->first_seq || r->at.allocated)
			return MT_E_CORRUPT;
		r->sample = a;
		put(sl, IT_SAMPLE)->size = a;
		return 0;
	case MT_REC_STOP:
		if (get_str(c, &s, &slen) < 0)
			return MT_E_CORRUPT;
		it = put_owned(sl, IT_STOP);
		it->p = dupstr(s, slen);
		return it->p ? 0 : MT_E_NOMEM;
	default:
		return MT_E_CORRUPT;
	}
}

/* The last item: rc 0 (end of file) or a negative MT_E_* at file offset off. */
static void finish(struct slice *sl, int rc, uint64_t off)
{
	struct item *it = put(sl, IT_FINISH);

	it->a = (uint64_t)(int64_t)rc;
	it->size = off;
}

/*
 * The decoder: fills sl with the items of the records that follow, chunk
 * after chunk, until it is full (0) or FINISH is in it (1). Each record
 * makes at most two items (a REALLOC), a chunk's start two, and progress,
 * a chunk's end or the finish one more: the room kept below.
 */
static int fill(struct mt_replay *r, struct slice *sl)
{
	const uint8_t *data;
	size_t len;
	uint64_t off;
	struct item *it;
	int rc;

	while (sl->n + 4 <= SLICE) {
		if (!r->in_chunk) {
			if (r->single) {
				data = r->single;
				len = r->single_len;
				off = 0;
				r->single = NULL;
				rc = 1;
				r->comp_len = 0;
			} else if (r->tail) {
				rc = 0;
			} else {
				rc = mt_reader_next(r->rd, &data, &len, &off);
				if (rc == 1)
					r->comp_len = mt_reader_good_bytes(r->rd) - off;
				/* a segment's first records repeat what the
				 * run knows, up to its BASE */
				if (rc == 1 && mt_reader_segment(r->rd) != r->segment) {
					r->segment = mt_reader_segment(r->rd);
					r->skip_defs = 1;
				}
			}
			if (rc <= 0) {
				finish(sl, rc, rc == MT_E_NOMEM || rc == MT_E_IO || rc == 0 ? 0 :
					   mt_reader_error_offset(r->rd));
				return 1;
			}
			r->chunk_off = off;
			rc = begin_chunk(r, data, len);
			if (rc < 0) {
				finish(sl, rc, off);
				return 1;
			}
			r->in_chunk = 1;
			it = put(sl, IT_CHUNK_BEGIN);
			it->a = r->tail ? 0 : mt_reader_good_bytes(r->rd);
			it->size = r->tail ? 0 : mt_reader_file_size(r->rd);
			put(sl, IT_TIME)->a = r->at.time;
			continue;
		}
		if (r->at.rec.p < r->at.rec.end) {
			/* progress every 64 KiB of records: decode_events stops
			 * at the record that reaches the mark */
			const uint8_t *lim = r->at.rec.end;

			if (r->ops->on_progress && r->at.rec.end - r->last_progress > 65536)
				lim = r->last_progress + 65536;
			rc = decode_events(r, sl, lim);
			if (rc == 1)
				rc = decode_record(r, sl);
			if (rc < 0) {
				finish(sl, rc, r->chunk_off);
				return 1;
			}
			if (r->ops->on_progress && r->at.rec.p - r->last_progress >= 65536) {
				r->last_progress = r->at.rec.p;
				it = put(sl, IT_PROGRESS);
				it->a = r->chunk_off + r->comp_len *
					(uint64_t)(r->at.rec.p - r->chunk) / r->chunk_len;
				it->size = r->tail ? 0 : mt_reader_file_size(r->rd);
			}
			continue;
		}
		/* Every field of the side streams belongs to an event. */
		for (size_t i = 0; i <= r->state_mask; i++) {
			for (size_t j = 1; j < MT_STREAMS; j++) {
				if (r->states[i].sc[j].p != r->states[i].sc[j].end) {
					finish(sl, MT_E_CORRUPT, r->chunk_off);
					return 1;
				}
			}
		}
		r->in_chunk = 0;
		put(sl, IT_CHUNK_END);
	}
	return 0;
}

/*
 * Frees what the items of sl own (malloc'd p: a name or a reason the
 * replay has not taken, a label, END's or a check's figures) and empties
 * it.
 */
static void discard(struct slice *sl)
{
	for (size_t i = 0; sl->owned && i < sl->n; i++) {
		int k = sl->it[i].kind;

		if (k == IT_LEAK)
			leakrec_free(sl->it[i].p);
		else if (k == IT_THREAD_NAME || k == IT_SNAPSHOT || k == IT_STOP || k == IT_END ||
			 k == IT_BASE)
			free(sl->it[i].p);
	}
	sl->n = 0;
	sl->owned = 0;
}

/* IT_THREAD: index announced (again: a new thread, unnamed). */
static int thread_seen(struct mt_replay *r, uint32_t index)
{
	if (grow_array((void **)&r->names, &r->namecap, (size_t)index + 1, sizeof(*r->names)) < 0)
		return MT_E_NOMEM;
	while (r->nnames <= index)
		r->names[r->nnames++] = NULL;
	free(r->names[index]);
	r->names[index] = NULL;
	return 0;
}

/*
 * IT_LEAK: the check comes after the events applied so far (its seq), its
 * blocks' threads from the owners' table when kept (else thread 0's); it
 * classifies END if nothing comes between. The replay keeps it until the
 * next check or the run's end (replay.h on_leak_check). 0 or MT_E_NOMEM.
 */
static int leak_check(struct mt_replay *r, struct item *it, const struct mt_replay_ops *ops,
		      void *ctx)
{
	struct leakrec *lr = it->p;
	uint32_t val;

	leakrec_free(r->last_leak);
	r->last_leak = lr;
	it->p = NULL;

	lr->lc.seq = r->seq;
	lr->lc.time_ns = r->app_time;
	for (size_t i = 0; r->owners && i < lr->lc.n; i++)
		if (mt_livetab_get(&r->live, lr->b[i].addr, &val))
			lr->b[i].thread = (uint32_t)val;
	r->end.classified = 1;
	r->end.leaks = lr->lc.tot;
	r->leak_seq = r->seq;
	if (!r->tail) {
		if (grow_array((void **)&r->checks, &r->checkcap, r->nchecks + 1,
			       sizeof(*r->checks)) < 0)
			return MT_E_NOMEM;
		r->checks[r->nchecks].seq = lr->lc.seq;
		r->checks[r->nchecks].time_ns = lr->lc.time_ns;
		r->checks[r->nchecks++].tot = lr->lc.tot;
	}
	if (ops->on_leak_check)
		ops->on_leak_check(ctx, &lr->lc);
	return 0;
}

/*
 * An item other than an event (apply_slice's): 0, 1 when the consumer
 * stops, or MT_E_NOMEM; *fin set at FINISH.
 */
static int apply_other(struct mt_replay *r, struct item *it, uint64_t seq,
		       const struct mt_replay_ops *ops, void *ctx, int *fin)
{
	int rc = 0;

	switch (it->kind) {
	case IT_TIME:
		r->app_time = it->a;
		if (ops->on_time)
			ops->on_time(ctx, it->a);
		break;
	case IT_SWITCH:
		r->app_thread = it->stack;
		break;
	case IT_SAMPLE:
		r->app_sample = it->size;
		break;
	case IT_STACK:
		if (ops->on_stack)
			ops->on_stack(ctx, it->p);
		break;
	case IT_MODULE:
		if (ops->on_module)
			ops->on_module(ctx, it->p);
		break;
	case IT_THREAD:
		rc = thread_seen(r, it->stack);
		if (rc == 0 && ops->on_thread)
			ops->on_thread(ctx, it->stack, (uint32_t)it->size);
		break;
	case IT_THREAD_NAME:
		/* the name is the replay's from here on */
		free(r->names[it->stack]);
		r->names[it->stack] = it->p;
		if (ops->on_thread_name)
			ops->on_thread_name(ctx, it->stack, it->p);
		it->p = NULL;
		break;
	case IT_TAG:
		if (ops->on_tag)
			ops->on_tag(ctx, it->stack, (uint32_t)it->size, it->p);
		break;
	case IT_LEAK:
		rc = leak_check(r, it, ops, ctx);
		break;
	case IT_RSS:
		if (ops->on_rss)
			ops->on_rss(ctx, r->app_time, it->size);
		break;
	case IT_UNLOAD:
		if (ops->on_unload)
			ops->on_unload(ctx, it->a, r->app_time);
		break;
	case IT_SNAPSHOT: {
		struct mt_snapshot snap = {
			.index = it->stack, .label = it->p, .seq = seq, .time_ns = r->app_time,
		};

		r->seq++;
		if (ops->on_snapshot && ops->on_snapshot(ctx, &snap))
			rc = 1;
		break;
	}
	case IT_END: {
		const struct endrec *e = it->p;

		/* END is classified by a check with no event after it */
		if (r->end.classified && (r->leak_seq != r->seq || e->leak_open)) {
			r->end.classified = 0;
			memset(&r->end.leaks, 0, sizeof(r->end.leaks));
		}
		r->end.clean = 1;
		r->end.how = e->how;
		r->end.code = e->code;
		r->end.totals = e->totals;
		break;
	}
	case IT_BASE: {
		const struct mt_base *b = it->p;

		r->end.bounded = 1;
		r->end.base_seq = b->seq;
		r->end.base_time_ns = b->time_ns;
		if (ops->on_base)
			ops->on_base(ctx, b);
		break;
	}
	case IT_STOP:
		/* the reason is the replay's from here on */
		free(r->stop_reason);
		r->end.stop_reason = r->stop_reason = it->p;
		it->p = NULL;
		break;
	case IT_PROGRESS:
		if (ops->on_progress)
			ops->on_progress(ctx, it->a, it->size);
		break;
	case IT_CHUNK_BEGIN:
		r->pending_good = it->a;
		r->pending_size = it->size;
		break;
	case IT_CHUNK_END:
		r->end.good_bytes = r->pending_good;
		if (ops->on_progress && r->end.good_bytes - r->last_good >= 65536) {
			r->last_good = r->end.good_bytes;
			ops->on_progress(ctx, r->end.good_bytes, r->pending_size);
		}
		break;
	case IT_FINISH:
		r->fin_rc = (int)(int64_t)it->a;
		r->fin_off = it->size;
		*fin = 1;
		break;
	}
	return rc;
}

/* The events that follow need none of the checks simple leaves out
 * (emit_free): the table of owners is empty while thread 0's are. */
static int simple_run(const struct app *ap)
{
	const struct mt_replay *r = ap->r;

	return ap->direct && !ap->sample && !r->tail && ap->on_alloc && ap->on_free &&
	       (!ap->owners || (r->app_thread == 0 && !mt_livetab_count(&r->live)));
}

/*
 * Offers the run of n events at it to the consumer's on_run; seq, the
 * first's, moves past those it took (*k of them; after: past them all).
 * Returns 0, or 1 when event *k stopped the consumer (*seq then its seq):
 * a REALLOC's free half that stops has its alloc half applied still, as
 * apply does.
 */
static int offer_run(const struct app *ap, struct item *it, size_t n, uint64_t after,
		     uint64_t *seq, size_t *k)
{
	struct mt_replay *r = ap->r;
	struct mt_run run = {
		.ev = (const struct mt_run_event *)it, .n = n, .seq = *seq,
		.time_ns = r->app_time, .thread = r->app_thread,
	};
	size_t done = 0;
	int rc = ap->on_run(ap->ctx, &run, &done);

	/* a stop is at one of the events */
	if (done > n || (rc && done == n))
		done = n - !!rc;
	/* a REALLOC's halves are one event */
	for (size_t j = 0; done < n && j < done; j++)
		*seq += it[j].type != EV_REALLOC_FREE;
	if (done == n)
		*seq = after;
	*k = done;
	if (!rc)
		return 0;
	if (it[done].type == EV_REALLOC_FREE && done + 1 < n) {
		/* the alloc half, which reports the stop (r->re_stop) */
		r->re_stop = 1;
		(void)apply(ap, &it[done + 1], *seq, 1);
		*k = done + 1;
	}
	return 1;
}

/*
 * The applier: the items of sl in order. Returns 0 with *fin set once
 * FINISH is applied, 1 when the consumer stops (the run's counters then go
 * back to the stopping item, as if decoding had stopped there), or
 * MT_E_NOMEM. Items it did not apply are discarded.
 */
static int apply_slice(struct mt_replay *r, struct slice *sl, const struct mt_replay_ops *ops,
		       void *ctx, int *fin)
{
	int ahead = !r->tail && r->live.cap * MT_LIVETAB_SLOT >= PREFETCH_FROM;
	struct app ap = {
		.r = r, .on_alloc = ops->on_alloc, .on_free = ops->on_free, .on_run = ops->on_run,
		.ctx = ops->event_ctx ? ops->event_ctx : ctx,
		.sample = r->app_sample, .direct = r->direct, .owners = r->owners,
	};
	int ret = 0, simple = simple_run(&ap);
	size_t i, n = sl->n;
	/* the next item's seq, r->seq's copy outside apply_other */
	uint64_t seq = r->seq;

	for (i = 0; i < n && !ret; i++) {
		struct item *it = &sl->it[i];
		uint64_t at = seq;    /* the item's own */
		int rc = 0;

		if (simple && it->kind == IT_EVENT) {
			/* a run of such events in a loop of its own: no table
			 * to look ahead in; the consumer's on_run takes what
			 * it can of them at once */
			size_t end = i + 1;
			/* the seq after the run (a REALLOC's halves are one) */
			uint64_t after = seq + (it->type != EV_REALLOC_FREE);

			for (; ap.on_run && end < n && sl->it[end].kind == IT_EVENT; end++)
				after += sl->it[end].type != EV_REALLOC_FREE;
			for (;;) {
				if (ap.on_run) {
					size_t k = 0;

					rc = offer_run(&ap, it, end - i, after, &seq, &k);
					if (rc > 0) {
						/* seq: the stopping event's */
						at = seq++;
						break;
					}
					if (k == end - i) {
						/* the outer loop steps past the run */
						i = end - 1;
						break;
					}
					it += k;
					i += k;
				}
				at = seq;
				rc = apply(&ap, it, seq, 1);
				/* a REALLOC's halves are one event */
				seq += it->type != EV_REALLOC_FREE;
				if (rc || i + 1 == n || it[1].kind != IT_EVENT)
					break;
				it++;
				i++;
			}
		} else if (it->kind == IT_EVENT) {
			/* any item's a: a prefetch never faults */
			if (ahead && i + PREFETCH < n)
				mt_livetab_prefetch(&r->live, it[PREFETCH].a);
			/* the last chunk alone (mt_replay_end_totals): decoded only */
			if (!r->tail)
				rc = apply(&ap, it, seq, 0);
			seq += it->type != EV_REALLOC_FREE;
		} else {
			r->seq = seq;
			rc = apply_other(r, it, seq, ops, ctx, fin);
			seq = r->seq;
			/* a thread, or the sampling, may have changed */
			ap.sample = r->app_sample;
			simple = simple_run(&ap);
		}
		if (rc > 0) {
			/* the run's counters, once the decoder has stopped */
			r->stop_events = at + 1;
			r->stop_time = r->app_time;
			/* the stopping chunk counts as read */
			r->end.good_bytes = r->pending_good;
		}
		ret = rc;
	}
	r->seq = seq;
	/* what the items still own: lent to the consumer, or never applied */
	discard(sl);
	return ret;
}

/* ---- the stages on two threads ------------------------------------------- */

/*
 * The ring between the stages. Each side that finds it full (the decoder)
 * or empty (the applier) sleeps until half of it is there for it again,
 * not one slice: a wake-up per slice was a futex call and two context
 * switches every 4,096 events.
 */
struct pipe {
	struct mt_replay *r;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	struct slice *s[NSLICE];  /* a ring: full of them from head on are decoded */
	size_t head, full;
	int ended;                /* the decoder put FINISH */
	int quit;                 /* the applier is done: the decoder stops */
	int dec_waits, app_waits;
};

static void *decoder(void *arg)
{
	struct pipe *pp = arg;
	int fin = 0;

	while (!fin) {
		struct slice *sl;

		pthread_mutex_lock(&pp->mu);
		if (pp->full == NSLICE) {
			pp->dec_waits = 1;
			while (pp->full > NSLICE / 2 && !pp->quit)
				pthread_cond_wait(&pp->cv, &pp->mu);
			pp->dec_waits = 0;
		}
		if (pp->quit) {
			pthread_mutex_unlock(&pp->mu);
			break;
		}
		sl = pp->s[(pp->head + pp->full) % NSLICE];
		pthread_mutex_unlock(&pp->mu);
		fin = fill(pp->r, sl);
		pthread_mutex_lock(&pp->mu);
		pp->full++;
		pp->ended = fin;
		if (pp->app_waits && (pp->full >= NSLICE / 2 || fin))
			pthread_cond_broadcast(&pp->cv);
		pthread_mutex_unlock(&pp->mu);
	}
	return NULL;
}

/* run_threaded could not start: no thread, or no memory for its slices
 * (nothing was decoded: the caller goes on alone). Not an MT_E_* code: an
 * applier out of memory returns MT_E_NOMEM, after decoding began. */
#define NOT_STARTED 2

/*
 * Decodes on a thread of its own, NSLICE slices ahead at most, while this
 * one applies. Returns as apply_slice does, or NOT_STARTED.
 */
static int run_threaded(struct mt_replay *r, const struct mt_replay_ops *ops, void *ctx)
{
	struct pipe pp = { .r = r };
	pthread_t th;
	int ret = 0, fin = 0;
	size_t i;

	for (i = 0; i < NSLICE; i++) {
		pp.s[i] = malloc(sizeof(struct slice));
		if (!pp.s[i])
			break;
		pp.s[i]->n = 0;
		pp.s[i]->owned = 0;
	}
	if (i < NSLICE || pthread_mutex_init(&pp.mu, NULL) != 0) {
		while (i--)
			free(pp.s[i]);
		return NOT_STARTED;
	}
	if (pthread_cond_init(&pp.cv, NULL) != 0) {
		pthread_mutex_destroy(&pp.mu);
		for (i = 0; i < NSLICE; i++)
			free(pp.s[i]);
		return NOT_STARTED;
	}
	if (pthread_create(&th, NULL, decoder, &pp) != 0) {
		ret = NOT_STARTED;
		goto out;
	}
	while (!ret && !fin) {
		struct slice *sl;

		pthread_mutex_lock(&pp.mu);
		if (!pp.full) {
			pp.app_waits = 1;
			while (pp.full < NSLICE / 2 && !pp.ended)
				pthread_cond_wait(&pp.cv, &pp.mu);
			pp.app_waits = 0;
		}
		sl = pp.s[pp.head];
		pthread_mutex_unlock(&pp.mu);
		ret = apply_slice(r, sl, ops, ctx, &fin);
		pthread_mutex_lock(&pp.mu);
		pp.head = (pp.head + 1) % NSLICE;
		pp.full--;
		if (pp.dec_waits && pp.full <= NSLICE / 2)
			pthread_cond_broadcast(&pp.cv);
		pthread_mutex_unlock(&pp.mu);
	}
	pthread_mutex_lock(&pp.mu);
	pp.quit = 1;
	pthread_cond_broadcast(&pp.cv);
	pthread_mutex_unlock(&pp.mu);
	pthread_join(th, NULL);
	/* what the decoder got ahead of a stopping consumer */
	for (i = 0; i < pp.full; i++)
		discard(pp.s[(pp.head + i) % NSLICE]);
out:
	pthread_cond_destroy(&pp.cv);
	pthread_mutex_destroy(&pp.mu);
	for (i = 0; i < NSLICE; i++)
		free(pp.s[i]);
	return ret;
}

/* The stages one after the other, one slice at a time. */
static int run_alone(struct mt_replay *r, const struct mt_replay_ops *ops, void *ctx)
{
	struct slice *sl = malloc(sizeof(*sl));
	int ret = 0, fin = 0;

	if (!sl)
		return MT_E_NOMEM;
	sl->n = 0;
	sl->owned = 0;
	while (!ret && !fin) {
		(void)fill(r, sl);
		ret = apply_slice(r, sl, ops, ctx, &fin);
	}
	free(sl);
	return ret;
}

static int threaded(const struct mt_replay *r)
{
	/* a variable: with the ThreadSanitizer build's 0 a constant compared
	 * with an unsigned size would warn (always false) */
	static const uint64_t from = THREADED_FROM;
	long cpus;

	if (r->threads >= 0)
		return r->threads;
	if (r->tail || mt_reader_file_size(r->rd) < from)
		return 0;
	/* that build's 0: threaded on any machine */
	cpus = from == 0 ? 2 : sysconf(_SC_NPROCESSORS_ONLN);
	return cpus >= 2;
}

void mt_replay_threads(struct mt_replay *r, int mode)
{
	r->threads = mode < 0 ? -1 : mode > 0;
}

/* Runs the stages; 0, 1 (stopped) or a negative MT_E_*. */
static int stages(struct mt_replay *r, const struct mt_replay_ops *ops, void *ctx)
{
	int rc = threaded(r) ? run_threaded(r, ops, ctx) : NOT_STARTED;

	if (rc == NOT_STARTED)
		rc = run_alone(r, ops, ctx);
	/* the decoder is done: its counters go back to where the consumer
	 * stopped, as if decoding had stopped there */
	if (rc == 1) {
		r->at.events = r->stop_events;
		r->at.time = r->stop_time;
	}
	if (rc == 0 && (r->fin_rc == MT_E_NOMEM || r->fin_rc == MT_E_IO))
		rc = r->fin_rc;
	return rc;
}

static void reset_run(struct mt_replay *r)
{
	for (size_t i = 0; i < r->nnames; i++) {
		free(r->names[i]);
		r->names[i] = NULL;
	}
	r->nnames = 0;
	r->nstacks = 0;
	r->ntags = 0;
	r->nmods = 0;
	r->nthreads = 0;
	mt_livetab_clear(&r->live);
	memset(&r->end, 0, sizeof(r->end));
	r->leak_open = 0;
	r->nleak = 0;
	r->nchecks = 0;
	free(r->stop_reason);
	r->stop_reason = NULL;
	r->at.events = 0;
	r->seq = 0;
	r->app_time = 0;
	r->app_thread = 0;
	r->app_sample = 0;
	r->re_stop = 0;
	r->segment = 0;
	r->run_chunks = 0;
	r->first_seq = 0;
	r->skip_defs = 0;
	r->base_due = 0;
	r->nbase = 0;
	r->at.allocated = 0;
	r->sample = 0;
	r->weighed = 0;
	r->at.time = 0;
	r->in_chunk = 0;
	r->fin_rc = 0;
	r->fin_off = 0;
	r->last_good = 0;
}

/* Replays the chunks from the reader's place to the end of the log. */
static int run_chunks(struct mt_replay *r, const struct mt_replay_ops *ops, void *ctx)
{
	uint64_t total = mt_reader_file_size(r->rd);
	int ret;

	r->ops = ops;
	r->in_chunk = 0;
	r->fin_rc = 0;
	r->fin_off = 0;
	ret = stages(r, ops, ctx);
	if (ret == 0 && r->fin_rc < 0) {
		r->end.error = r->fin_rc;
		r->end.error_offset = r->fin_off;
	}
	r->end.time_ns = r->at.time;
	r->end.events = r->at.events;
	r->end.stopped = ret == 1;
	r->end.truncated = r->end.error != 0 || (!r->end.clean && !r->end.stopped);
	if (ops->on_progress && ret == 0)
		ops->on_progress(ctx, total, total);
	if (ops->on_end)
		ops->on_end(ctx, &r->end);
	/* the latest check was the consumer's to read until here */
	leakrec_free(r->last_leak);
	r->last_leak = NULL;
	return ret;
}

int mt_replay_run(struct mt_replay *r, const struct mt_replay_ops *ops, void *ctx)
{
	int rc;

	reset_run(r);
	rc = mt_reader_rewind(r->rd);
	if (rc < 0)
		return rc;
	r->end.good_bytes = r->pending_good = mt_reader_good_bytes(r->rd);
	if (ops->on_header)
		ops->on_header(ctx, &r->hdr);
	return run_chunks(r, ops, ctx);
}

int mt_replay_resume(struct mt_replay *r, const struct mt_replay_ops *ops, void *ctx)
{
	int rc;

	if (r->end.stopped)
		return MT_E_ARG;
	/* after END, or a chunk that does not check, nothing more comes */
	if (r->end.clean || (r->end.error && r->end.error != MT_E_TRUNCATED))
		return 0;
	rc = mt_reader_refresh(r->rd);
	if (rc <= 0)
		return rc;
	r->end.error = 0;
	r->end.error_offset = 0;
	r->pending_good = r->end.good_bytes;
	return run_chunks(r, ops, ctx);
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
	t->direct = r->direct;
	t->state_mask = r->state_mask;
	mt_livetab_init(&t->live, NULL);
	t->ops = &none;
	t->single = data;
	t->single_len = len;
	/* Events may use any stack of the chunks before. */
	t->nstacks = UINT32_MAX;
	rc = run_alone(t, &none, NULL);
	if (rc == MT_E_NOMEM || t->fin_rc == MT_E_NOMEM) {
		rc = MT_E_NOMEM;
		goto out;
	}
	/* A STOP's reason is for a replay to report. */
	rc = rc == 0 && t->fin_rc == 0 && t->end.clean && !t->stop_reason;
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

/*
 * tbuf.c - each thread's event buffer, and their merge into the one
 * ordered stream that core.c encodes.
 *
 * An allocating thread takes no lock shared with other threads: it
 * interns its stack in a table of its own (a local stack id; the first
 * time, a STACK record pointing at the stack's record in that table goes
 * into its buffer), takes an order key from one global counter (an
 * atomic increment; a plain one while it is the only thread that takes
 * keys: take_key) and appends a raw event (key, clock reading, address,
 * size, local stack id) to its own ring of mmap'ed memory. Whoever holds
 * the log lock drains the rings: the drainer process (core.c), woken by a
 * thread whose ring is half full and every 0.2 s, or a snapshot or an end
 * that asks it to; without one, a thread whose ring is half full when
 * nobody else drains, the helper thread every 0.2 s, a snapshot, an end,
 * a thread's exit. It merges
 * their events and hands them to core.c, which alone keeps the stack
 * table, the live table and the writer, as it did under the one lock
 * before. The events leave the rings in batches of hundreds, so the
 * lock is taken a few times per thousand events, not once per event.
 *
 * Why the merged order is the true order where it matters:
 *
 *  - Keys are unique: taken with a sequentially consistent atomic
 *    increment, or by the one thread that takes keys, before a second
 *    one does (keys_shared). A free takes its key before the real free runs; an
 *    allocation after the real allocator returned. If thread A frees a
 *    block that the allocator then hands to thread B, A's real free
 *    happens before B's malloc returns it (the allocator publishes the
 *    block with a lock or an atomic), so A's increment happens before
 *    B's: A's key is smaller, and the free replays first.
 *  - realloc takes two keys: k1 before the real realloc (its free half)
 *    and k2 after it returns (its allocation half). Another thread that
 *    gets the old address once realloc released it gets a key > k1;
 *    another thread that freed the address realloc returns took a key
 *    < k2. core.c (mt_rec_emit_realloc_*) takes the old block out of the
 *    live table at k1 and writes REALLOC at k2; if an allocation of the old
 *    address comes in between, it first writes the free half on its own
 *    (FREE, then the allocation at k2 is an ALLOC), so no address is
 *    ever allocated twice in the log.
 *  - A merge may only hand out a key once no smaller key can still
 *    appear. A thread announces an event before taking its key: it
 *    stores a lower bound of that key (its previous key + 1: the counter
 *    only grows) in `lower`, then increments the counter, writes the
 *    event, publishes the ring's head and clears `lower`. The drainer
 *    reads the counter G first, then every ring's `lower`, then its head:
 *    the events it may hand out are those with keys below B, the least
 *    of G and every `lower` it saw. A thread whose `lower` it saw clear
 *    either published its event before clearing (the head read after
 *    shows it) or announced after the drainer's read, and then takes a
 *    key >= G (all four accesses are sequentially consistent). A realloc
 *    stays announced across the real call, so nothing at or after its k1
 *    is handed out before its record is complete.
 *  - A thread never waits for anything while announced: room in its ring
 *    is made before it announces (a full ring is drained by the thread
 *    itself, under the log lock, or waited for while the drainer process
 *    empties it), so a drainer that waits for announced
 *    events (snapshots and ends do, briefly) cannot deadlock. The ends
 *    (exit, _exit, a fatal signal, exec) wait a bounded time and then
 *    write every event that is complete; one still in flight then (its
 *    thread preempted for longer than that, or the thread a signal
 *    handler interrupted) is after the END.
 *
 * Rings are never freed while the process records: a thread's exit
 * destructor marks its ring, and once drained and the thread gone (its
 * tid no longer answers) the ring, with its local stack table, serves the
 * next new thread. (The log's stack table, core.c's, points at the
 * records in those tables: they must stay.) A forked child drops every
 * ring (they hold the parent's events; only the forking thread is left
 * and takes a new one), and with them the records the log's table points
 * at: the child then starts a table of its own or stops recording
 * (core.c, fork_child).
 *
 * Not for: encoding, the live table, the stack table of the log (core.c,
 * tables.c); locking beyond the order above (the log lock is core.c's).
 */
#include <errno.h>
#include <signal.h>
#include <stddef.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "recorder.h"

/*
 * A ring holds ~1,800 events (64 KiB) while the program's threads drain;
 * drained when half full. (256 KiB measured no better there: a thread
 * drains its own ring while its lines are in its cache.)
 *
 * Once the drainer process drains, a ring grows to RING_BIG, the next
 * time its thread finds it empty (only then may the offsets change: the
 * drainer reads no record of it, and reads the size after the head that
 * shows the next one). With 64 KiB the drainer was woken every ~700
 * events, a futex wake and two context switches each (python3 bench:
 * 10,600 wakes, 0.2 s of CPU between the two processes), and a ring
 * filled in a quarter of a millisecond, less than one resize of the live
 * table or one chunk's compression takes: the thread then waited (3,400
 * naps). The pages of the larger ring count in the program's RSS only
 * once a thread has written that much.
 */
#define RING_SMALL (64u << 10)
#define RING_BIG (512u << 10)

/* The size a ring should have (RING_SMALL or RING_BIG). */
static uint32_t ring_want = RING_SMALL;

enum { R_PAD = 1, R_STACK, R_ALLOC, R_FREE, R_REALLOC };

/*
 * A record's first 8 bytes: its kind and length (a multiple of 8) in one
 * word, and the local stack id where it has one. A free is 32 bytes, an
 * allocation 40 (48 each with the id in a word of its own: a quarter
 * fewer of the rings' lines go from the program's core to the drainer's).
 */
struct rhdr {
	uint32_t kl;            /* R_* | the whole record's length */
	uint32_t lid;           /* local stack id (R_ALLOC, R_REALLOC: MT_TB_NO_STACK,
				 * the new block is not recorded; R_STACK) */
};

static inline uint32_t rkind(const struct rhdr *h)
{
	return h->kl & 7;
}

static inline uint32_t rlen(const struct rhdr *h)
{
	return h->kl & ~7u;
}

struct r_ev {                   /* R_ALLOC; R_FREE without size */
	struct rhdr h;
	uint64_t key, time, addr, size;
};
#define R_FREE_LEN ((uint32_t)offsetof(struct r_ev, size))

struct r_realloc {
	struct rhdr h;
	uint64_t key, key2, time, addr, addr2, size;
};

struct r_stack {
	struct rhdr h;
	uint32_t n, fn, tag, unused;
	uint64_t hash;
	const struct mt_stack_rec *rec;  /* in the thread's table, where it stays */
};

enum { B_USED, B_EXITED, B_FREE };

/*
 * A stack that followed another: its local id, found again without
 * interning when the same stack follows the same one (local_stack).
 * The stack is the one before (prev1 - 1) in its first keep frames, then
 * inner[], n frames in all, with fn and tag; hash is mt_capture's. 256
 * entries of 128 bytes a thread, up to 12 inner frames (the bench's
 * sqlite3 found 62 % of its stacks so with 64 entries of 8, 87 % so).
 */
#define NEXT_BITS 8
#define NEXT_INNER 12
struct next_stack {
	uint32_t prev1, lid;
	uint16_t keep, n;
	uint32_t fn, tag;
	uint64_t hash;
	uint64_t inner[NEXT_INNER];
};

struct mt_tbuf {
	/* the producer's (its thread) */
	uint64_t head;          /* bytes written, published with release */
	uint64_t lower;         /* nonzero while an event is in flight: its key >= lower */
	uint64_t last;          /* the thread's last key */
	uint64_t tail_seen;     /* the drainer's tail, as last read */
	uint32_t size;          /* the ring's bytes: changed only while it is empty */
	int asked;              /* a drain was asked for since the last one (atomic) */
	int state;              /* B_* (atomic) */
	struct mt_stacks *local;
	/* the thread's last stack in local, for a capture whose frames are
	 * the last one's (mt_capture.same): lid + 1 (0: none), fn and tag */
	uint32_t same_lid1, same_fn, same_tag;
	struct next_stack follow[1 << NEXT_BITS];
	/* the thread's last clock reading, and the tick it was taken in */
	uint64_t stamp_val, stamp_tick;
	/* the drainer's (log lock) */
	uint64_t tail __attribute__((aligned(64)));
	int stage2;             /* the realloc at tail had its free half taken */
	uint64_t ahead;         /* the next record whose live-table slot to prefetch */
	uint32_t dsize;         /* size, as of the head the drain reads up to */
	struct mt_tbuf_thread th;
	struct mt_tbuf *next;   /* the list of every ring (never unlinked) */
	unsigned char ring[RING_BIG] __attribute__((aligned(64)));
};

/*
 * The record at byte pos of b's ring, for the drain: its copy of the
 * size, on its own line. size shares the producer's, written at every
 * event: read for every record, it missed every time (perf, python3
 * bench: 30 % of the drainer's loop on that one load).
 */
static inline const struct rhdr *ring_at(const struct mt_tbuf *b, uint64_t pos)
{
	return (const struct rhdr *)(b->ring + (pos & (b->dsize - 1)));
}

static struct mt_tbuf *rings;   /* pushed with compare-and-swap */
/* The next key, on a line of its own: every event of every thread
 * increments it, and a variable beside it (the linker's choice: the
 * unwinder's rule generation, read on every unwind, was one) would make
 * each reader of that variable miss in turn. shared: SH_ALONE until a
 * second thread takes keys (keys_shared), read with v by the thread that
 * takes them. */
static struct {
	uint64_t v;
	uint32_t shared;
	char pad[52];
} counter_line __attribute__((aligned(64))) = { 1, 0, { 0 } };

/* Rings a thread made or took since the start or the fork: the first
 * one's thread takes keys alone until another thread has a ring. */
static uint32_t key_rings;

/* ---- the producer ------------------------------------------------------------ */

/*
 * b's thread exited and is gone (its tid no longer answers in process pid),
 * and every event of it is drained: b may serve another thread. Gone is
 * asked first: a thread frees a little after its exit key's destructor
 * (glibc's own teardown), so only once it is gone is its ring final. The
 * drainer publishes tail once it has taken the events, so a ring seen
 * drained here has nothing the drainer still reads.
 */
static int reusable(struct mt_tbuf *b, pid_t pid)
{
	if (__atomic_load_n(&b->state, __ATOMIC_ACQUIRE) != B_EXITED)
		return 0;
	int saved = errno;
	long r = syscall(SYS_tgkill, pid, b->th.tid, 0);
	int gone = r < 0 && errno == ESRCH;
	errno = saved;
	return gone &&
	       __atomic_load_n(&b->tail, __ATOMIC_ACQUIRE) == __atomic_load_n(&b->head, __ATOMIC_ACQUIRE) &&
	       !__atomic_load_n(&b->stage2, __ATOMIC_ACQUIRE);
}

/* Moves b from state from to to; 0 when another thread moved it first. */
static int claim(struct mt_tbuf *b, int from, int to)
{
	return __atomic_compare_exchange_n(&b->state, &from, to, 0, __ATOMIC_ACQ_REL,
					   __ATOMIC_RELAXED);
}

/* How many rings of exited threads a new thread tries before making one. */
#define REUSE_TRIES 16

/*
 * Keys taken by more than one thread: from now on with a locked
 * increment (take_key). Called by a thread with a new ring before it
 * takes a key, so that no other thread is left taking one the plain way.
 * The thread that took keys alone reads shared after announcing
 * (announce, then take_key): once shared is set, it either read it set,
 * or had announced before; its announcement is seen here once its stores
 * left the CPU (a store waits in a core's store buffer for nanoseconds;
 * 1 ms is a margin of 10^5, and a thread preempted or a vCPU descheduled
 * meanwhile empties the buffer), and then it is waited for until its
 * event is published. A system call that makes every other CPU empty
 * its buffer (membarrier) would prove the first half without the
 * margin, but can be refused, or kill the process, under a seccomp
 * filter the program installs before starting a thread.
 *
 * One thread switches (SH_SWITCHING) and the others that come meanwhile
 * wait until it is done (they have no event in flight: nothing waits for
 * them). An event in flight never waits for anything of the recorder's,
 * but a signal handler may hold it (a collector's stop-the-world park)
 * until the thread that is switching runs on: the wait ends after
 * SH_WAIT_NS all the same (the keys then are exact unless that thread
 * was stopped between the load and the store of its increment). Once
 * per process (and per forked child).
 */
enum { SH_ALONE, SH_SWITCHING, SH_DONE };
#define SH_WAIT_NS 1000000000ull

static void nap_ns(uint64_t ns)
{
	struct timespec t = { (time_t)(ns / 1000000000u), (long)(ns % 1000000000u) };

	while (nanosleep(&t, &t) < 0 && errno == EINTR)
		;
}

static void keys_shared(const struct mt_tbuf *self)
{
	uint32_t was = SH_ALONE;
	uint64_t waited = 0;
	int saved = errno;

	if (__atomic_compare_exchange_n(&counter_line.shared, &was, SH_SWITCHING, 0,
					__ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST)) {
		nap_ns(1000000);
		for (struct mt_tbuf *o = __atomic_load_n(&rings, __ATOMIC_ACQUIRE); o; o = o->next)
			while (o != self && __atomic_load_n(&o->lower, __ATOMIC_ACQUIRE) &&
			       waited < SH_WAIT_NS) {
				nap_ns(20000);
				waited += 20000;
			}
		__atomic_store_n(&counter_line.shared, SH_DONE, __ATOMIC_RELEASE);
	} else {
		while (__atomic_load_n(&counter_line.shared, __ATOMIC_ACQUIRE) != SH_DONE &&
		       waited < 2 * SH_WAIT_NS) {
			nap_ns(20000);
			waited += 20000;
		}
	}
	errno = saved;
}

static struct mt_tbuf *ring_new(void)
{
	struct mt_tbuf *b;
	int tries = 0;

	/* a ring whose thread is gone first: freed by the helper (every
	 * 0.2 s), or one this thread finds so itself, so that a program that
	 * starts thousands of short threads a second keeps a few rings, not
	 * one a thread (memory, and every drain goes through the list) */
	for (b = __atomic_load_n(&rings, __ATOMIC_ACQUIRE); b; b = b->next)
		if (__atomic_load_n(&b->state, __ATOMIC_RELAXED) == B_FREE &&
		    claim(b, B_FREE, B_USED))
			break;
	for (struct mt_tbuf *o = b ? NULL : __atomic_load_n(&rings, __ATOMIC_ACQUIRE);
	     o && tries < REUSE_TRIES; o = o->next) {
		if (__atomic_load_n(&o->state, __ATOMIC_RELAXED) != B_EXITED)
			continue;
		tries++;
		if (reusable(o, getpid()) && claim(o, B_EXITED, B_USED)) {
			o->th.idx1 = 0;
			b = o;
			break;
		}
	}
	if (!b) {
		b = mt_mem_alloc(sizeof(*b));
		if (!b)
			return NULL;
		memset(b, 0, offsetof(struct mt_tbuf, ring));
		b->size = RING_SMALL;
		b->local = mt_stacks_new(0);
		if (!b->local) {
			mt_mem_free(b);
			return NULL;
		}
		b->state = B_USED;
		b->next = __atomic_load_n(&rings, __ATOMIC_RELAXED);
		while (!__atomic_compare_exchange_n(&rings, &b->next, b, 0, __ATOMIC_ACQ_REL,
						    __ATOMIC_RELAXED))
			;
	}
	b->th.tid = gettid();
	b->same_lid1 = 0;
	b->stamp_tick = 0;
	if (__atomic_fetch_add(&key_rings, 1, __ATOMIC_SEQ_CST) > 0)
		keys_shared(b);
	b->last = __atomic_load_n(&counter_line.v, __ATOMIC_RELAXED);
	mt_tls.tb = b;
	mt_rec_thread_begin();
	return b;
}

static inline struct mt_tbuf *self(void)
{
	struct mt_tbuf *b = mt_tls.tb;
	return MT_LIKELY(b) ? b : ring_new();
}

/*
 * Room for len bytes (plus a pad to the ring's end) at head; its offset,
 * or -1 when recording stopped meanwhile. Called before announcing.
 * reserve() below is its usual case, inline.
 */
static __attribute__((noinline)) int64_t reserve_slow(struct mt_tbuf *b, uint32_t len)
{
	if (MT_UNLIKELY(b->size != __atomic_load_n(&ring_want, __ATOMIC_RELAXED))) {
		b->tail_seen = __atomic_load_n(&b->tail, __ATOMIC_ACQUIRE);
		if (b->tail_seen == b->head && !__atomic_load_n(&b->stage2, __ATOMIC_ACQUIRE))
			b->size = __atomic_load_n(&ring_want, __ATOMIC_RELAXED);
	}
	for (int tries = 0;; tries++) {
		const uint32_t size = b->size;
		uint64_t off = b->head & (size - 1);
		uint64_t need = len + (off + len > size ? size - off : 0);
		uint64_t used = b->head - b->tail_seen;

		if (used >= size / 2) {
			b->tail_seen = __atomic_load_n(&b->tail, __ATOMIC_ACQUIRE);
			used = b->head - b->tail_seen;
			if (used >= size / 2 && !__atomic_load_n(&b->asked, __ATOMIC_RELAXED)) {
				__atomic_store_n(&b->asked, 1, __ATOMIC_RELAXED);
				mt_rec_drain_wanted();
				b->tail_seen = __atomic_load_n(&b->tail, __ATOMIC_ACQUIRE);
				used = b->head - b->tail_seen;
			}
		}
		if (size - used >= need) {
			if (off + len > size) {
				struct rhdr *pad = (struct rhdr *)(b->ring + off);
				pad->kl = (uint32_t)(size - off) | R_PAD;
				__atomic_store_n(&b->head, b->head + size - off, __ATOMIC_RELEASE);
				off = 0;
			}
			return (int64_t)off;
		}
		if (!mt_rec_active)
			return -1;
		/* Full: drain it ourselves (not announced: nobody waits for
		 * us), or wait for the drainer process, napping longer each
		 * time up to 0.8 ms: it can be busy for tens of milliseconds
		 * (a resize of the live table), and each nap is two context
		 * switches (python3 bench: 1,700 naps of 50 us). */
		if (tries) {
			struct timespec nap = { 0, 50000l << (tries < 5 ? tries - 1 : 4) };
			nanosleep(&nap, NULL);
		}
		mt_rec_drain_now();
	}
}

/*
 * The usual case: the ring has its size, less than half of it is in use
 * (so len fits) and the record needs no pad. Inline: it is on every event,
 * and the call was a third of its cost (cachegrind, stl bench: 48
 * instructions an event, 17 of them saving and restoring registers for
 * the slow path's calls).
 */
static inline int64_t reserve(struct mt_tbuf *b, uint32_t len)
{
	const uint32_t size = b->size;
	uint64_t off = b->head & (size - 1);

	if (MT_LIKELY(size == __atomic_load_n(&ring_want, __ATOMIC_RELAXED) &&
		      b->head - b->tail_seen < size / 2 && off + len <= size))
		return (int64_t)off;
	return reserve_slow(b, len);
}

#if defined(__x86_64__)
#include <x86intrin.h>
#endif

/*
 * Times. An event's time is its thread's clock reading at the event, or
 * at an earlier event of the thread in the same tick: the ticker (core.c:
 * a thread of the drainer process, or the program's helper thread where
 * there is one) counts a tick every MT_TICK_NS, and a thread reads the
 * clock again once it sees the count move. So a time is at most one tick
 * early (plus however late the ticker wakes; the helper stops the tick
 * before any job of its that may take long: core.c, tick_hold), where it
 * was exact to the writer's quantum (1 us to 1 ms); the order of events
 * is the keys', exact either way. A thread allocating in a loop read the clock at every
 * event before: rdtsc cost 17 ns on a bench machine's virtual CPU, and the
 * reading was 13 % of churn's recording CPU (15 interleaved runs, 2 M
 * pairs: 1,118 ms median against 989 ms with no reading at all). The count
 * is 0 while nothing ticks (before the ticker starts, in a forked child
 * until its own does, once the drainer that ticked is gone, once recording
 * stopped): every event reads the clock then.
 * Ticks are numbered on from the last ever seen, never again 0 or a
 * number used before, so that no reading of an earlier ticker passes.
 */
static struct {
	uint64_t v;
	uint64_t seq;           /* the last tick number handed out (the ticker's) */
	uint64_t keys;          /* the key counter at the last tick (the ticker's) */
	uint64_t idle;          /* ticks in a row that saw no key taken (the ticker's) */
	const int *life;        /* a ticker in another process: the lock word
				   of a robust mutex it holds while it lives
				   (NULL: the ticker is one of ours) */
	char pad[24];
} tick_line __attribute__((aligned(64)));

void mt_tbuf_tick_life(const int *word)
{
	__atomic_store_n(&tick_line.life, word, __ATOMIC_RELEASE);
}

/*
 * Does the ticker still tick? A ticker in our process stops the tick
 * before it goes; one in another process (the drainer's) can be killed
 * with a tick left standing, which every event would then reuse. The
 * kernel clears the owner's thread id in a robust mutex's word when the
 * owner dies, SIGKILL included (mt_robust_held), so a reading is reused
 * only while that word names a thread.
 */
static inline int ticker_lives(void)
{
	const int *w = __atomic_load_n(&tick_line.life, __ATOMIC_RELAXED);
	return !w || mt_robust_held(w);
}

/*
 * A program that takes no key for IDLE_TICKS ticks in a row is idle:
 * ticking stops, so that it costs no wake a millisecond (8 ms of CPU a
 * second here); events read the clock each until ticks start again (the
 * ticker looks every MT_TICK_IDLE_NS). Not at the first tick without a
 * key: a busy program's thread pauses that long now and then (a drain of
 * its ring, a table's growth, a system call), and stopping there made
 * the next 10 ms of its events read the clock (stl bench: 920,000 of
 * 4.6 million events, in 18 pauses).
 */
#define IDLE_TICKS 20

int mt_tbuf_tick(void)
{
	uint64_t k = __atomic_load_n(&counter_line.v, __ATOMIC_RELAXED);
	tick_line.idle = k == tick_line.keys ? tick_line.idle + 1 : 0;
	if (tick_line.idle >= IDLE_TICKS) {
		mt_tbuf_tick_stop();
		return 0;
	}
	tick_line.keys = k;
	__atomic_store_n(&tick_line.v, ++tick_line.seq, __ATOMIC_RELAXED);
	return 1;
}

void mt_tbuf_tick_stop(void)
{
	__atomic_store_n(&tick_line.v, 0, __ATOMIC_RELAXED);
}

static inline uint64_t stamp(struct mt_tbuf *b)
{
	uint64_t tick = __atomic_load_n(&tick_line.v, __ATOMIC_RELAXED), t;
	if (tick && tick == b->stamp_tick && MT_LIKELY(ticker_lives()))
		return b->stamp_val;
#if defined(__x86_64__)
	if (MT_LIKELY(mt_rec_tsc))
		t = __rdtsc();
	else
#endif
		t = mt_rec_stamp();
	b->stamp_tick = tick;
	b->stamp_val = t;
	return t;
}

/*
 * The announcement must be ordered before the key's increment for every
 * observer (a store then a read-modify-write: a sequentially consistent
 * store, an xchg). On x86-64 the locked increment that follows orders it
 * already (stores are not reordered with a later locked instruction), and
 * the compiler keeps a store before a seq_cst RMW: a plain store will do.
 */
static inline void announce(struct mt_tbuf *b)
{
#if defined(__x86_64__)
	__atomic_store_n(&b->lower, b->last + 1, __ATOMIC_RELAXED);
#else
	__atomic_store_n(&b->lower, b->last + 1, __ATOMIC_SEQ_CST);
#endif
}

/*
 * The next key. While one thread alone takes keys, a plain load and
 * store: a locked increment waits for every store before it to reach the
 * cache, and was 8 % of the run's CPU beyond the program's on the
 * sqlite3 bench (perf, 3 interleaved runs, samples in all over samples
 * in the program: 3.02 -> 2.76; stl 3.31 -> 3.21). Its store comes after
 * the announcement's, in program order (x86-64 keeps stores in order),
 * so a drainer that sees the key taken sees the announcement, as with
 * the locked increment; the guard keeps a signal handler's allocation
 * out of the thread's event in flight, so nothing comes between the load
 * and the store. keys_shared ends it.
 */
static inline uint64_t take_key(struct mt_tbuf *b)
{
	uint64_t k;
#if defined(__x86_64__)
	__atomic_signal_fence(__ATOMIC_SEQ_CST);        /* shared read after announcing */
	if (MT_LIKELY(!__atomic_load_n(&counter_line.shared, __ATOMIC_RELAXED))) {
		k = __atomic_load_n(&counter_line.v, __ATOMIC_RELAXED);
		__atomic_store_n(&counter_line.v, k + 1, __ATOMIC_RELEASE);
	} else
#endif
		k = __atomic_fetch_add(&counter_line.v, 1, __ATOMIC_SEQ_CST);
	b->last = k;
	return k;
}

static inline void publish(struct mt_tbuf *b, uint32_t len)
{
	__atomic_store_n(&b->head, b->head + len, __ATOMIC_RELEASE);
	__atomic_store_n(&b->lower, 0, __ATOMIC_RELEASE);
}

/* lid is the thread's last stack, with c's fn and tag. */
static inline int64_t last_stack(struct mt_tbuf *b, int64_t lid, const struct mt_capture *c)
{
	b->same_lid1 = (uint32_t)lid + 1;
	b->same_fn = c->fn;
	b->same_tag = c->tag;
	return lid;
}

/* Whether the frames a and b, n of them, are the same (n is at most
 * NEXT_INNER: a loop over so few costs less than a call of memcmp). */
static inline int same_frames(const uint64_t *a, const uint64_t *b, unsigned n)
{
	uint64_t d = 0;

	for (unsigned k = 0; k < n; k++)
		d |= a[k] ^ b[k];
	return !d;
}

/* local_stack's slow part: the stack interned, its STACK record written if
 * new, and remembered in e (if any) as the one that follows the last. */
static __attribute__((noinline)) int64_t local_stack_intern(struct mt_tbuf *b,
							     const struct mt_capture *c,
							     struct next_stack *e)
{
	int is_new;
	const struct mt_stack_rec *rec;
	int64_t lid = mt_stacks_intern(b->local, c, &is_new, &rec);

	if (lid < 0) {
		b->same_lid1 = 0;       /* (the next capture is compared with this one) */
		mt_rec_stop_nomem("out of memory for the stack table", 0);
		return -1;
	}
	if (is_new) {
		mt_rec_new_stack(c);
		uint32_t len = (uint32_t)sizeof(struct r_stack);
		int64_t off = reserve(b, len);
		if (off < 0) {
			b->same_lid1 = 0;
			return -1;
		}
		struct r_stack *r = (struct r_stack *)(b->ring + off);
		r->h.kl = len | R_STACK;
		r->h.lid = (uint32_t)lid;
		r->n = c->n;
		r->fn = c->fn;
		r->tag = c->tag;
		r->hash = c->hash;
		r->rec = rec;
		__atomic_store_n(&b->head, b->head + len, __ATOMIC_RELEASE);
	}
	if (e) {
		e->prev1 = b->same_lid1;
		e->lid = (uint32_t)lid;
		e->keep = (uint16_t)c->keep;
		e->n = (uint16_t)c->n;
		e->fn = c->fn;
		e->tag = c->tag;
		e->hash = c->hash;
		memcpy(e->inner, c->ips + c->keep, (c->n - c->keep) * sizeof(uint64_t));
	}
	return last_stack(b, lid, c);
}

/*
 * The local id of c's stack, its STACK record written if new; -1 on
 * failure. Inline, its two quick answers (cachegrind, stl bench: 93 % of
 * the allocations are answered so; the call was a fifth of their cost).
 */
static inline int64_t local_stack(struct mt_tbuf *b, const struct mt_capture *c)
{
	/* Consecutive allocations often come from one place: the unwinder
	 * proved these frames the thread's last capture's, so the stack is
	 * the last one's, with no lookup (its frames compared, a record at
	 * a time: churn, 19 frames, spent 5 % of its samples there). */
	if (c->same && b->same_lid1 && b->same_fn == c->fn && b->same_tag == c->tag)
		return b->same_lid1 - 1;
	/* A stack whose outer frames the unwinder proved the last one's: the
	 * stack that followed the last one with those outer frames and these
	 * inner ones is this one, found by comparing the inner frames alone
	 * (sqlite3 bench: 1.85 of its 2.12 million stacks found so; perf,
	 * samples of the interning over the program's: 0.24 -> 0.16; python3
	 * 0.13 -> 0.08). */
	struct next_stack *e = NULL;
	unsigned in = c->n - c->keep;
	if (c->keep && b->same_lid1 && in <= NEXT_INNER) {
		e = &b->follow[(uint32_t)(c->hash ^ b->same_lid1 * 0x9E3779B9u) >> (32 - NEXT_BITS)];
		if (e->prev1 == b->same_lid1 && e->hash == c->hash && e->keep == c->keep &&
		    e->n == c->n && e->fn == c->fn && e->tag == c->tag &&
		    same_frames(e->inner, c->ips + c->keep, in))
			return last_stack(b, e->lid, c);
	}
	return local_stack_intern(b, c, e);
}

/*
 * An event's record in b's ring, announced, with its key and time taken now
 * (so after the real allocator returned, or before the real free runs), or
 * NULL when the ring has no room; the caller fills the rest and publishes.
 */
static inline struct r_ev *begin_ev(struct mt_tbuf *b, uint32_t kind, uint32_t len, void *p)
{
	int64_t off = reserve(b, len);
	if (off < 0)
		return NULL;
	struct r_ev *r = (struct r_ev *)(b->ring + off);
	announce(b);
	r->key = take_key(b);
	r->time = stamp(b);
	r->h.kl = len | kind;
	r->addr = (uintptr_t)p;
	return r;
}

void mt_tbuf_alloc(const struct mt_capture *c, void *p, size_t size)
{
	struct mt_tbuf *b = self();
	if (!b)
		return;
	int64_t lid = local_stack(b, c);
	struct r_ev *r = lid < 0 ? NULL : begin_ev(b, R_ALLOC, sizeof(*r), p);
	if (!r)
		return;
	r->h.lid = (uint32_t)lid;
	r->size = size;
	publish(b, sizeof(*r));
}

void mt_tbuf_free(void *p)
{
	struct mt_tbuf *b = self();
	if (!b)
		return;
	struct r_ev *r = begin_ev(b, R_FREE, R_FREE_LEN, p);
	if (r)
		publish(b, R_FREE_LEN);
}

void *mt_tbuf_realloc(const struct mt_capture *c, void *p, size_t nmemb, size_t n)
{
	struct mt_tbuf *b = self();
	int64_t lid = MT_TB_NO_STACK, off = -1;

	if (b && c)
		lid = local_stack(b, c);
	if (b && lid >= 0)
		off = reserve(b, sizeof(struct r_realloc));
	if (off < 0)    /* not recorded: the call alone */
		return nmemb == 1 ? mt_real.realloc(p, n) : mt_real.reallocarray(p, nmemb, n);
	struct r_realloc *r = (struct r_realloc *)(b->ring + off);
	announce(b);
	uint64_t k1 = take_key(b);
	void *q = nmemb == 1 ? mt_real.realloc(p, n) : mt_real.reallocarray(p, nmemb, n);
	int saved = errno;
	r->key2 = take_key(b);
	r->key = k1;
	r->time = stamp(b);
	if (q || n == 0 || nmemb == 0) {
		/* q == NULL with a zero size: p was freed. Otherwise NULL means
		 * failure and p is untouched: nothing to record. */
		r->h.kl = (uint32_t)sizeof(*r) | R_REALLOC;
		r->h.lid = (uint32_t)lid;
		r->addr = (uintptr_t)p;
		r->addr2 = (uintptr_t)q;
		r->size = (uint64_t)nmemb * n;
		publish(b, sizeof(*r));
	} else {
		__atomic_store_n(&b->lower, 0, __ATOMIC_RELEASE);
	}
	errno = saved;
	return q;
}

uint64_t mt_tbuf_key(void)
{
	/* read, not taken: events of keys below it came first, and the next
	 * event's key is at least it (only take_key moves the counter, so
	 * that the thread that takes keys alone is the only one to) */
	return __atomic_load_n(&counter_line.v, __ATOMIC_SEQ_CST);
}

/* ---- the drainer (log lock held) ---------------------------------------------- */

/*
 * The record at b's tail (*tail: the ring's, or a drainer's copy of it),
 * up to head h: pads are skipped and STACK records handed out at once
 * (they only define the thread's local ids, and come before the events
 * that use them). Returns the event's key (the second one for a realloc
 * whose free half was taken: stage2), or UINT64_MAX when the ring holds
 * nothing more.
 */
static inline uint64_t peek(struct mt_tbuf *b, uint64_t *tail, int stage2, uint64_t h)
{
	while (*tail != h) {
		const struct rhdr *r = ring_at(b, *tail);
		uint32_t kind = rkind(r);

		if (MT_LIKELY(kind == R_ALLOC || kind == R_FREE))
			return ((const struct r_ev *)r)->key;
		if (kind == R_REALLOC)
			return stage2 ? ((const struct r_realloc *)r)->key2
				      : ((const struct r_realloc *)r)->key;
		if (kind == R_STACK) {
			/* the log lock is held: one buffer serves every drain,
			 * and a hook's stack carries 2 KiB less */
			static uint64_t ips[MT_MAX_DEPTH];
			const struct r_stack *st = (const struct r_stack *)r;

			mt_stack_rec_frames(st->rec, ips);
			struct mt_capture c = { ips, st->n, st->fn, st->tag, st->hash, st->rec, 0, 0 };

			mt_rec_emit_stack(&b->th, st->h.lid, &c);
		}
		*tail += rlen(r);
	}
	return UINT64_MAX;
}

/* Hands out the event at b's tail (peek() found one). */
static inline void take(struct mt_tbuf *b, uint64_t *tail, int *stage2)
{
	const struct rhdr *h = ring_at(b, *tail);
	const struct r_ev *e = (const struct r_ev *)h;
	const struct r_realloc *r = (const struct r_realloc *)h;

	switch (rkind(h)) {
	case R_ALLOC:
		mt_rec_emit_alloc(&b->th, e->time, e->addr, e->size, e->h.lid);
		break;
	case R_FREE:
		mt_rec_emit_free(&b->th, e->time, e->addr);
		break;
	default:
		if (!*stage2) {
			mt_rec_emit_realloc_free(&b->th, r->time, r->addr);
			*stage2 = 1;
			return;
		}
		mt_rec_emit_realloc_alloc(&b->th, r->time, r->addr, r->addr2, r->size, r->h.lid);
		*stage2 = 0;
	}
	*tail += rlen(h);
}

/*
 * Asks for the live-table slot of b's next record not asked for yet
 * (*ahead, never past h nor behind tail): the probe of a table of
 * millions of blocks misses the cache (perf: 11 % of the stl workload's
 * time, a third of the recorder's, in the live table's add and remove);
 * asked for AHEAD events before their turn, the line is there (python3
 * bench, 5 interleaved runs: 2.62 s CPU without, 2.28 s with). A table
 * that fits the caches gains nothing (churn: 3 % more CPU with the
 * hints), so t is NULL below 1 MiB (mt_rec_prefetch_table).
 */
enum { AHEAD = 16 };

static inline void prefetch_next(const struct mt_tbuf *b, uint64_t tail, uint64_t *ahead,
				 uint64_t h, const struct mt_livetab *t)
{
	if (*ahead < tail)
		*ahead = tail;
	if (*ahead == h)
		return;
	const struct rhdr *r = ring_at(b, *ahead);
	uint32_t kind = rkind(r);

	if (kind == R_ALLOC || kind == R_FREE) {
		mt_livetab_prefetch(t, ((const struct r_ev *)r)->addr);
	} else if (kind == R_REALLOC) {
		mt_livetab_prefetch(t, ((const struct r_realloc *)r)->addr);
		mt_livetab_prefetch(t, ((const struct r_realloc *)r)->addr2);
	}
	*ahead += rlen(r);
}

/*
 * The key of the last event handed out (of its half, for a realloc),
 * stored as each is. A drainer process killed in a run of drain_one had
 * handed out events that are in the writer's chunk (memory the next
 * drainer shares), while the ring's tail, kept in a local, was not
 * stored: whoever drains next passes over them (mt_tbuf_resume), or they
 * would be in the log twice.
 */
static uint64_t handed __attribute__((aligned(64)));   /* (stored at every event:
							  a line of its own) */
/* The key of the event being handed out (an allocation's or a free's;
 * beside handed, on its line). */
static uint64_t handing;

uint64_t mt_tbuf_handing(void)
{
	return handing;
}

void mt_tbuf_handed(uint64_t key)
{
	if (key > handed)
		handed = key;
}
static int resume_due;

void mt_tbuf_resume(void)
{
	__atomic_store_n(&resume_due, 1, __ATOMIC_RELEASE);
}

/* Each ring's tail past the events handed out already. */
static void pass_handed(void)
{
	for (struct mt_tbuf *b = __atomic_load_n(&rings, __ATOMIC_ACQUIRE); b; b = b->next) {
		uint64_t h = __atomic_load_n(&b->head, __ATOMIC_ACQUIRE), tail = b->tail;
		int stage2 = b->stage2;

		b->dsize = b->size;
		while (tail != h) {
			const struct rhdr *r = ring_at(b, tail);
			uint32_t kind = rkind(r);

			if (kind == R_ALLOC || kind == R_FREE) {
				if (((const struct r_ev *)r)->key > handed)
					break;
			} else if (kind == R_REALLOC) {
				const struct r_realloc *rr = (const struct r_realloc *)r;
				if (!stage2) {
					if (rr->key > handed)
						break;
					stage2 = 1;      /* its free half was handed out */
					b->tail = tail;
					b->stage2 = 1;
				}
				if (rr->key2 > handed)
					break;
				stage2 = 0;
			} else {
				/* a stack: passed with the events after it, or
				 * handed out again (harmlessly) before the first
				 * event not passed */
				tail += rlen(r);
				continue;
			}
			tail += rlen(r);
			b->tail = tail;
			b->stage2 = 0;
		}
		__atomic_store_n(&b->tail, b->tail, __ATOMIC_RELEASE);
	}
}

/*
 * One ring's events (a ring alone, most programs having one thread, or a
 * run of one among several), in order while their keys are below lim, up
 * to head h: no choosing, and the ring's cursors in locals (each
 * event's call to core.c would have them read from memory again).
 */
static void drain_one(struct mt_tbuf *b, uint64_t h, uint64_t lim, const struct mt_livetab *pf)
{
	uint64_t tail = b->tail, ahead = b->ahead, key;
	int stage2 = b->stage2;

	while ((key = peek(b, &tail, stage2, h)) < lim) {
		__atomic_store_n(&handing, key, __ATOMIC_RELAXED);
		take(b, &tail, &stage2);
		__atomic_store_n(&handed, key, __ATOMIC_RELAXED);
		if (pf)
			prefetch_next(b, tail, &ahead, h, pf);
	}
	b->tail = tail;
	b->ahead = ahead;
	b->stage2 = stage2;
}

/* The bound below which every key is final (module comment), own thread's
 * announcement left out (it cannot progress while we drain). */
static uint64_t bound(void)
{
	uint64_t g = __atomic_load_n(&counter_line.v, __ATOMIC_SEQ_CST);
	for (struct mt_tbuf *b = __atomic_load_n(&rings, __ATOMIC_ACQUIRE); b; b = b->next) {
		uint64_t l = __atomic_load_n(&b->lower, __ATOMIC_SEQ_CST);
		if (l && l < g && b != mt_tls.tb)
			g = l;
	}
	return g;
}

/* Passes that found events in more than one ring (mt_tbuf_shared). */
static uint64_t shared_passes;

/* The rings with events in one pass (drainer only, grown on mmap'ed pages). */
static struct {
	struct mt_tbuf **b;
	uint64_t *head, *key;
	size_t cap;
} act;

static int act_room(size_t n)
{
	if (n <= act.cap)
		return 0;
	size_t cap = act.cap ? 2 * act.cap : 64;
	while (cap < n)
		cap *= 2;
	void *m = mt_mem_alloc(cap * (sizeof(*act.b) + 2 * sizeof(uint64_t)));
	if (!m)
		return -1;
	mt_mem_free(act.b);
	act.b = m;
	act.head = (uint64_t *)(act.b + cap);
	act.key = act.head + cap;
	act.cap = cap;
	return 0;
}

/*
 * One pass: every event with a key below lim, in key order: the least key
 * at the rings' tails each time (rings with events are few). Key order is
 * the true order, also between threads' events on different addresses
 * (a peak, a snapshot's figures, the order of the threads' first events
 * are those of the run). Grouping each ring's events into runs made the
 * log smaller and its size steadier from run to run, but moved one
 * thread's allocations past another's that the program had ordered
 * (through a semaphore, say): a peak the program could see, missed.
 * Without memory for the list it stops recording and only empties the
 * rings.
 */
static void merge(uint64_t lim)
{
	size_t n = 0, want = 0;
	struct mt_tbuf *b;
	const struct mt_livetab *pf = mt_rec_prefetch_table();

	for (b = __atomic_load_n(&rings, __ATOMIC_ACQUIRE); b; b = b->next)
		want++;
	if (act_room(want) < 0) {
		mt_rec_stop_nomem("out of memory for the event merge", 1);
		lim = UINT64_MAX;
	}
	for (b = __atomic_load_n(&rings, __ATOMIC_ACQUIRE); b && n < act.cap; b = b->next) {
		uint64_t h = __atomic_load_n(&b->head, __ATOMIC_ACQUIRE);
		if (b->tail == h)
			continue;
		/* the size of the records up to h: it changes only while the
		 * ring is empty, before the records that follow (reserve) */
		b->dsize = b->size;
		act.b[n] = b;
		act.head[n] = h;
		for (int k = 0; pf && k < AHEAD; k++)
			prefetch_next(b, b->tail, &b->ahead, h, pf);
		act.key[n] = peek(b, &b->tail, b->stage2, h);
		if (act.key[n] < lim)
			n++;
	}
	if (n > 1)
		shared_passes++;
	/* the ring with the least key hands out its events up to the next
	 * ring's least key (one ring alone: all of them below lim): threads
	 * that take turns on a core leave long runs of one ring (churn, 8
	 * threads on 2 cores: the rings compared once a run, not once an
	 * event) */
	for (;;) {
		size_t m = n, m2 = n;
		for (size_t i = 0; i < n; i++) {
			if (act.key[i] >= lim)
				continue;
			if (m == n || act.key[i] < act.key[m]) {
				m2 = m;
				m = i;
			} else if (m2 == n || act.key[i] < act.key[m2]) {
				m2 = i;
			}
		}
		if (m == n)
			break;
		b = act.b[m];
		drain_one(b, act.head[m], m2 < n ? act.key[m2] : lim, pf);
		act.key[m] = peek(b, &b->tail, b->stage2, act.head[m]);
	}
	for (b = __atomic_load_n(&rings, __ATOMIC_ACQUIRE); b; b = b->next) {
		__atomic_store_n(&b->asked, 0, __ATOMIC_RELAXED);
		__atomic_store_n(&b->tail, b->tail, __ATOMIC_RELEASE);
	}
}

void mt_tbuf_drain(uint64_t upto, uint64_t wait_ns, int all)
{
	struct timespec nap = { 0, 20000 };
	uint64_t waited = 0;

	if (MT_UNLIKELY(__atomic_load_n(&resume_due, __ATOMIC_ACQUIRE))) {
		pass_handed();
		__atomic_store_n(&resume_due, 0, __ATOMIC_RELAXED);
	}
	for (;;) {
		uint64_t b = bound();
		merge(b);
		if (b >= upto)
			break;
		if (waited >= wait_ns) {
			if (all)
				merge(UINT64_MAX);
			return;
		}
		nanosleep(&nap, NULL);
		waited += 20000;
	}
	if (all)
		merge(UINT64_MAX);
}

void mt_tbuf_exited(void)
{
	struct mt_tbuf *b = mt_tls.tb;
	if (b)
		__atomic_store_n(&b->state, B_EXITED, __ATOMIC_RELEASE);
}

void mt_tbuf_recycle(pid_t pid)
{
	for (struct mt_tbuf *b = __atomic_load_n(&rings, __ATOMIC_ACQUIRE); b; b = b->next)
		if (reusable(b, pid)) {
			/* idx1 first: a new thread may take it once FREE */
			b->th.idx1 = 0;
			(void)claim(b, B_EXITED, B_FREE);
		}
}

struct mt_tbuf_thread *mt_tbuf_thread_of_self(void)
{
	return mt_tls.tb ? &mt_tls.tb->th : NULL;
}

uint64_t mt_tbuf_shared(void)
{
	return shared_passes;
}

void mt_tbuf_big_rings(void)
{
	__atomic_store_n(&ring_want, RING_BIG, __ATOMIC_RELAXED);
}

void mt_tbuf_forget(void)
{
	mt_tbuf_tick_stop();
	ring_want = RING_SMALL;
	rings = NULL;
	mt_tls.tb = NULL;
	shared_passes = 0;
	memset(&act, 0, sizeof(act));
}

void mt_tbuf_child(void)
{
	struct mt_tbuf *b = rings;
	mt_tbuf_tick_stop();    /* the parent's ticker ticked */
	tick_line.life = NULL;
	while (b) {
		struct mt_tbuf *next = b->next;
		mt_stacks_free(b->local);
		mt_rec_thread_drop(&b->th);
		mt_mem_free(b);
		b = next;
	}
	rings = NULL;
	mt_tls.tb = NULL;
	ring_want = RING_SMALL;
	shared_passes = 0;
	/* the forking thread is the child's only one */
	key_rings = 0;
	counter_line.shared = SH_ALONE;
}

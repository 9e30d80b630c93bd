/*
 * recorder.h - the parts of libmemtrail.so, and what they say to each other.
 *
 *   hooks.c    the exported entry points (malloc, free, operator new...,
 *              exec, _exit, dlclose): the hot path. They only check the
 *              guard, call the real function, capture the stack and hand
 *              (stack, size, address) to core.c.
 *   core.c     the recording session: init, the log lock, thread indexes,
 *              encoding the merged events through lib/writer, snapshots,
 *              exit, signals, fork, exec.
 *   tables.c   the in-process tables in mmap'ed memory: distinct stacks,
 *              live blocks (address -> size), the mmap allocator.
 *   modules.c  the module map (dl_iterate_phdr, build-ids).
 *   config.c   MEMTRAIL_* settings and the output path.
 *   children.c following children: each process's file, the environment
 *              of an exec, the fork lock around dl_iterate_phdr.
 *   freeres.c  the C and C++ runtimes' own memory, freed at a normal exit.
 *   tags.c     scoped tags (memtrail_tag_push/pop): each thread's stack of
 *              tag paths, whose innermost the hooks put into every stack,
 *              and the table of distinct tag paths.
 *   leakscan.c which live blocks are still reachable at exit (leak kinds).
 *   tbuf.c     each thread's ring of raw events and the order key; their
 *              merge, in order, into core.c's encoding.
 *   sample.c   sampling by bytes (MEMTRAIL_SAMPLE): which allocations are
 *              recorded, and which frees may be of recorded blocks.
 *
 * Not for: anything outside the recorder. Nothing here is exported from the
 * shared object (the library is built with -fvisibility=hidden).
 */
#ifndef MT_RECORDER_H
#define MT_RECORDER_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "format.h"
#include "livetab.h"

#define MT_EXPORT __attribute__((visibility("default")))
#define MT_LIKELY(x)   __builtin_expect(!!(x), 1)
#define MT_UNLIKELY(x) __builtin_expect(!!(x), 0)

/* ---- per-thread state (initial-exec TLS) -------------------------------- */

struct mt_tls {
	int guard;            /* > 0: inside memtrail; hooks pass straight through */
	int io_held;          /* this thread holds core.c's io_lock */
	struct mt_tbuf *tb;   /* the thread's event ring (tbuf.c), NULL: none yet */
	int same_stack;       /* the last capture's frames were the one's before it (unwind.c) */
	unsigned keep_frames; /* its outermost frames that were (unwind.c; 0: none known) */
};
extern __thread struct mt_tls mt_tls;

/* The thread's tag stack (tags.c): cur is the innermost tag path id (0:
 * none), which the hooks put into every stack they capture. */
#define MT_TAG_CACHE 8
struct mt_tagcache {
	uint32_t parent, id;  /* id 0: empty */
	char name[24];        /* a copy of the name (shorter ones only) */
};
struct mt_tagstack {
	uint32_t cur;
	uint32_t depth;       /* ids[] in use */
	uint32_t over;        /* pushes beyond MT_MAX_TAG_DEPTH, not recorded */
	uint32_t next;        /* the cache entry to replace next */
	uint32_t ids[MT_MAX_TAG_DEPTH];
	struct mt_tagcache cache[MT_TAG_CACHE];
};
extern __thread struct mt_tagstack mt_tagtls;

/* ---- the real allocator, found with dlsym(RTLD_NEXT) (hooks.c) ---------- */

struct mt_real {
	void *(*malloc)(size_t);
	void (*free)(void *);
	void *(*calloc)(size_t, size_t);
	void *(*realloc)(void *, size_t);
	void *(*reallocarray)(void *, size_t, size_t);
	void *(*memalign)(size_t, size_t);
	int (*posix_memalign)(void **, size_t, size_t);
	void *(*aligned_alloc)(size_t, size_t);
	void *(*valloc)(size_t);
	void *(*pvalloc)(size_t);
	size_t (*malloc_usable_size)(void *);
};
extern struct mt_real mt_real;

/* Resolves mt_real (called once by core's init, guard held). */
void mt_hooks_resolve(void);

/* ---- what a hook captured ------------------------------------------------ */

struct mt_capture {
	const uint64_t *ips;  /* outermost first (the log's STACK records are
				 innermost first), recorder frames removed */
	unsigned n;
	unsigned fn;          /* enum mt_fn */
	uint32_t tag;         /* the thread's innermost tag path (tags.c) */
	uint64_t hash;        /* of fn, tag and ips */
	/* The log's table (refs): the record of these frames in the thread's
	 * table, which the log's keeps instead of frames. */
	const struct mt_stack_rec *rec;
	/* The frames are, unchanged, those of the thread's capture before
	 * this one (the incremental walk proved it: unwind.c); with fn and
	 * tag the same, so is the stack (tbuf.c then skips the lookup). */
	int same;
	/* Its first keep frames are, likewise, that capture's (0: not known). */
	unsigned keep;
};

/* ---- tbuf.c -------------------------------------------------------------- */

/*
 * The hooks' events, each into the calling thread's ring without a shared
 * lock (tbuf.c says why the merged order is exact). mt_tbuf_free: call
 * before the real free. mt_tbuf_realloc calls the real realloc (nmemb 1)
 * or reallocarray and returns its result; c may be NULL when n == 0.
 */
void mt_tbuf_alloc(const struct mt_capture *c, void *p, size_t size);
void mt_tbuf_free(void *p);
void *mt_tbuf_realloc(const struct mt_capture *c, void *p, size_t nmemb, size_t n);
/* The next key to be taken: every event that happened before the call has
 * a smaller one, every later one a key at least as large. */
uint64_t mt_tbuf_key(void);
/*
 * With the log lock: hands every final event to core.c (mt_rec_emit_*) in
 * key order; with upto, waits up to wait_ns for every event with a key
 * below it (other threads' events in flight); all: then every complete
 * event too.
 */
void mt_tbuf_drain(uint64_t upto, uint64_t wait_ns, int all);
/* The drainer process died: the next drain first passes over the events
 * it had handed out (tbuf.c, "handed"). */
void mt_tbuf_resume(void);
/* The key of the event being handed out; an event whose record is in the
 * log counted as handed out (a spare taking over, core.c emit_undo). */
uint64_t mt_tbuf_handing(void);
void mt_tbuf_handed(uint64_t key);
/* The calling thread is exiting (its ring is reused once it is gone). */
void mt_tbuf_exited(void);
/* With the log lock: rings of exited threads, drained and gone, are freed
 * for new threads. */
void mt_tbuf_recycle(pid_t pid);
/* core.c's part of the calling thread's ring; NULL: it has none. */
struct mt_tbuf_thread *mt_tbuf_thread_of_self(void);
/* In a forked child: every ring is dropped (the parent's events). */
void mt_tbuf_child(void);
/* A forked child whose arena lost the session's ranges: the rings are
 * forgotten, not freed. */
void mt_tbuf_forget(void);
/* With the log lock: drains so far that found events of more than one
 * thread to merge. */
uint64_t mt_tbuf_shared(void);
/* Rings grow to their larger size, each when next found empty: the
 * drainer process drains them (tbuf.c says why). */
void mt_tbuf_big_rings(void);
/* The events' clock tick (tbuf.c, "Times"): the ticker (core.c: the
 * drainer's dr_ticker, or the program's helper thread) calls mt_tbuf_tick
 * every MT_TICK_NS while it returns 1, every MT_TICK_IDLE_NS while it
 * returns 0 (no event in the last tick: ticking stopped); mt_tbuf_tick_stop
 * when the ticker stops or is gone (and a forked child before its own
 * starts). */
#define MT_TICK_NS 1000000ull
#define MT_TICK_IDLE_NS 10000000ull
int mt_tbuf_tick(void);
void mt_tbuf_tick_stop(void);
/* The ticker is in another process and holds, while it lives, the robust
 * mutex whose lock word is word (NULL: the ticker is in this process). */
void mt_tbuf_tick_life(const int *word);
/*
 * The thread holding the robust mutex whose lock word (a glibc mutex's
 * first member) is word, 0 if none: its thread id is in the word's low 30
 * bits (FUTEX_TID_MASK) while it holds it, and the kernel clears them when
 * the owner dies, SIGKILL included. A load, no lock taken.
 */
static inline pid_t mt_robust_owner(const void *word)
{
	return __atomic_load_n((const int *)word, __ATOMIC_RELAXED) & 0x3fffffff;
}

static inline int mt_robust_held(const void *word)
{
	return mt_robust_owner(word) != 0;
}

/* A live block: what a free of it writes to the log. */
struct mt_block {
	uint64_t size;            /* requested bytes */
	uint32_t stack;           /* the id of the stack that allocated it */
};
/* What core.c keeps per ring (log lock). */
struct mt_tbuf_thread {
	pid_t tid;
	uint32_t gen, idx1;       /* thread index + 1 in log generation gen */
	uint32_t *gid;            /* local stack id -> log stack id + 1 */
	uint32_t gid_cap;
	int pending;              /* a realloc's free half was taken */
	int pwas, pfreed;         /* the old block was live; its FREE is written */
	uint64_t pold;            /* the old address, and its block */
	struct mt_block pblk;
	struct mt_tbuf_thread *pnext;
};
/* A realloc's local stack id when its new block is not recorded. */
#define MT_TB_NO_STACK UINT32_MAX

/* ---- core.c -------------------------------------------------------------- */

/* What tbuf.c asks of core.c. The clock's raw reading (cheap; converted
 * when drained), the merged events (log lock held), a thread's first
 * ring (its exit is to be seen), a ring dropped, a ring half full (the
 * helper drains, or the caller if there is none), a ring full (the caller
 * drains, taking the log lock), and a stop for want of memory. */
uint64_t mt_rec_stamp(void);
/* Nonzero: mt_rec_stamp() is the TSC (x86-64), read inline by tbuf.c. */
extern int mt_rec_tsc;
/*
 * The merged stream, event by event, of the thread whose ring th is
 * (log lock held): a local stack id's frames (before any event uses it);
 * an allocation, a free (time: mt_rec_stamp()'s reading; lid: the local
 * stack id); a realloc's free half at its first key and its allocation
 * half at its second (lid MT_TB_NO_STACK: the new block is not recorded).
 */
void mt_rec_emit_stack(struct mt_tbuf_thread *th, uint32_t lid, const struct mt_capture *c);
void mt_rec_emit_alloc(struct mt_tbuf_thread *th, uint64_t time, uint64_t addr, uint64_t size,
		       uint32_t lid);
void mt_rec_emit_free(struct mt_tbuf_thread *th, uint64_t time, uint64_t addr);
void mt_rec_emit_realloc_free(struct mt_tbuf_thread *th, uint64_t time, uint64_t addr);
void mt_rec_emit_realloc_alloc(struct mt_tbuf_thread *th, uint64_t time, uint64_t old,
			       uint64_t addr, uint64_t size, uint32_t lid);
/* With the log lock: the live table, for hints that an event at an
 * address comes soon (mt_livetab_prefetch), when such hints pay (it is
 * larger than the caches); NULL otherwise. */
const struct mt_livetab *mt_rec_prefetch_table(void);
void mt_rec_thread_begin(void);
void mt_rec_thread_drop(struct mt_tbuf_thread *th);
void mt_rec_drain_wanted(void);
void mt_rec_drain_now(void);
/* The leak scan's mt_livetab_sort and _unsort (core.c: with a drainer,
 * it runs them). */
int mt_rec_live_sort(struct mt_livetab *t, int back);
int mt_rec_live_unsort(struct mt_livetab *t);
/* A thread interned a new stack (tbuf.c): checks its frames' modules. */
void mt_rec_new_stack(const struct mt_capture *c);
void mt_rec_stop_nomem(const char *why, int locked);


/* Nonzero while recording; hooks read it without the lock. */
extern volatile int mt_rec_active;
/* Frames kept per stack (MEMTRAIL_DEPTH). */
extern unsigned mt_rec_depth;
/* libmemtrail.so's own text: frames inside it are dropped from stacks. */
extern uintptr_t mt_self_lo, mt_self_hi;

/* The stack walk of MEMTRAIL_UNWIND's mode (unwind.h), set up at start
 * (core.c load_unwinder). */
extern const uint64_t *(*mt_backtrace)(void *fp, unsigned max, uint64_t *scratch, unsigned *n,
				      uint64_t *hash);
/* Starts recording if not done yet (safe to call from any hook). */
void mt_rec_init(void);
/* An allocation returned p for size bytes. */
void mt_rec_alloc(const struct mt_capture *c, void *p, size_t size);
/* p (non-NULL) is about to be released; call before the real free. */
void mt_rec_free(void *p);
/*
 * realloc(p, n) (p non-NULL) or reallocarray: calls the real function,
 * records the outcome (its free half ordered before the call, its
 * allocation after: tbuf.c), returns its result. c may be NULL when
 * n == 0. nmemb is 1 for realloc.
 */
void *mt_rec_realloc(const struct mt_capture *c, void *p, size_t nmemb, size_t n);
/*
 * Is this one of the recorder's signal handlers? The sigaction/signal hooks
 * report those as SIG_DFL, which the program saw before: programs decide on
 * the current disposition (Python installs its KeyboardInterrupt handler
 * only over SIG_DFL).
 */
int mt_rec_handler_ours(void (*handler)(int));
/*
 * Is sig one the recorder takes over at SIG_DFL (it ends the process by
 * default)? If so, and recording, fills *sa with the recorder's handler,
 * which writes END and then takes the default action; the sigaction and
 * signal hooks install it where the program asks for SIG_DFL.
 */
struct sigaction;
int mt_rec_fatal_action(int sig, struct sigaction *sa);
/* The log's descriptor, or -1 when not recording (or in a vfork child). */
int mt_rec_log_fd(void);
/* Is fd the log's descriptor, called from outside memtrail (guard 0)? */
int mt_rec_is_log_fd(int fd);
/*
 * The program is about to dup2/dup3 onto fd, the log's descriptor: the log
 * moves to another number first (fd stays open until the program's call
 * replaces it). If that call fails, mt_rec_log_fd_vacated(fd) closes the
 * number again, as it would be without memtrail.
 */
void mt_rec_log_fd_vacate(int fd);
void mt_rec_log_fd_vacated(int fd);
/*
 * Not following children: before an exec (by this process, or a forked
 * child of it that stopped recording), appends the program's path to
 * FILE.execs if that file exists: `memtrail record` creates it, and after
 * the run tells the user which programs ran unrecorded and that
 * --follow-children records them. The program's environment is left as it
 * is. Only system calls: safe in a vfork child.
 */
void mt_rec_note_exec(const char *what);
/* In a vfork child sharing our memory: leave the session alone. */
int mt_rec_foreign(void);
/* Before exec*(): flush and write END(EXEC); keeps the log lock. */
void mt_rec_exec_begin(void);
/* After a failed exec: take the END back and go on recording. */
void mt_rec_exec_failed(void);
/* _exit()/_Exit(): END(_EXIT, status). */
void mt_rec_exit_now(int status);
/*
 * Objects may have been loaded or unloaded (after dlclose, or when a new
 * stack had a frame outside every known module): rescan and write
 * MODULE/UNLOAD records for the changes. Call without the log lock. With
 * wait = 0 it gives up if another thread is scanning: a hook may run inside
 * the program's dl_iterate_phdr callback, holding the loader lock that a
 * scanning thread waits for.
 */
void mt_rec_modules_changed(int wait);
/*
 * Before a dlclose or an end (without the log lock): drains every event
 * so far and rescans the modules if a new stack had a frame in none, while
 * the object is still loaded.
 */
void mt_rec_modules_sync(void);

/* ---- tables.c ------------------------------------------------------------ */

/*
 * The arena: with it, every page below comes from one MAP_SHARED mapping,
 * the same in the program and its drainer process (core.c).
 * mt_arena_init makes it (before the first table); -1: none.
 * mt_arena_shared: there is one, still shared. mt_arena_unmap: this
 * process's pages of it out of its resident set (the contents stay).
 * mt_arena_fork, in a forked child: the ranges mt_mem_alloc_kept gave are
 * copied into an arena of the child's own, shared (a drainer of its own
 * follows) or not, and the rest is gone; -1: the arena is empty and the
 * child must stop recording. mt_mem_remap: len bytes at p become a new
 * mapping, shared or private, with the same contents.
 */
int mt_arena_init(void);
int mt_arena_shared(void);
void mt_arena_unmap(void);
int mt_arena_fork(int shared);
int mt_mem_remap(void *p, size_t len, int shared);
/* mmap-backed memory for the recorder's own needs (never the heap); _kept:
 * what a forked child keeps. */
void *mt_mem_alloc(size_t size);
void *mt_mem_alloc_kept(size_t size);
void mt_mem_free(void *p);
/* The whole pages among the len bytes at p (mt_mem_alloc's, or pages
 * of ours) given back: read again, they are zeros. */
void mt_mem_idle(void *p, size_t len);
/* The same with the (opaque, ...) signature of struct mt_writer_mem. */
void *mt_mem_alloc_cb(void *opaque, size_t size);
void mt_mem_free_cb(void *opaque, void *p);
void mt_mem_idle_cb(void *opaque, void *p, size_t len);

struct mt_stacks;
/* A stack's frames as a thread's table keeps them (tables.c). */
struct mt_stack_rec;
/*
 * A table that keeps a record of the frames of each new stack (refs 0: a
 * thread's own table, tbuf.c), or that points at such records (refs 1:
 * the log's table, core.c, whose stacks come from the threads' tables,
 * where records stay put and are never freed while recording).
 */
struct mt_stacks *mt_stacks_new(int refs);
void mt_stacks_free(struct mt_stacks *s);
/*
 * The id of the stack c, adding it if new (*is_new set; then *rec, when
 * not NULL: its record, which stays put until the table is freed; with
 * refs, c->rec is the record kept). Returns -1 when out of memory.
 */
int64_t mt_stacks_intern(struct mt_stacks *s, const struct mt_capture *c, int *is_new,
			 const struct mt_stack_rec **rec);
/* A record's frames (outermost first) into out, room for MT_MAX_DEPTH. */
void mt_stack_rec_frames(const struct mt_stack_rec *r, uint64_t *out);

/*
 * Calls fn for every stack so far, by increasing id (as STACK records
 * list them), ips valid during the call only. Stops at fn's first
 * non-zero return and returns it.
 */
int mt_stacks_each(const struct mt_stacks *s,
		   int (*fn)(void *ctx, uint32_t id, unsigned efn, uint32_t tag,
			     const uint64_t *ips, unsigned n),
		   void *ctx);
/* Stacks so far (ids 0 .. count - 1). */
size_t mt_stacks_count(const struct mt_stacks *s);
/* Is a growth between its stores (a process killed there left it so)? */
int mt_stacks_moving(const struct mt_stacks *s);

/*
 * Live blocks: lib/livetab.h's table on pages of our own (tables.c), and
 * their bytes. A slot's value packs the requested size and the stack id
 * (mt_livetab_pack, no thread: MT_LIVE_STACK_BITS of stack); a block whose
 * figures do not fit has a wide record. Public, and the add and remove
 * inline: they run once per event (core.c's mt_rec_emit_*). The leak scan
 * reads the table in address order (mt_livetab_sort, then
 * mt_livetab_unsort).
 */
#define MT_LIVE_STACK_BITS (31 - MT_LIVETAB_SIZE_BITS)
struct mt_live {
	struct mt_livetab tab;
	uint64_t bytes;
};
struct mt_live *mt_live_new(void);
void mt_live_free(struct mt_live *l);
/* The drainer process keeps l from now on: it doubles as it grows. */
void mt_live_doubling(struct mt_live *l);

/* The block whose value in l's table is val. */
static inline struct mt_block mt_live_block(const struct mt_livetab *t, uint32_t val)
{
	struct mt_livetab_wide w = mt_livetab_block(t, MT_LIVE_STACK_BITS, val);
	struct mt_block b = { w.size, w.stack };

	return b;
}

/* The block of a value taken out of the table: its wide record goes. */
static inline struct mt_block mt_live_unpack(struct mt_live *l, uint32_t val)
{
	struct mt_block b = mt_live_block(&l->tab, val);

	if (MT_UNLIKELY(val & MT_LIVETAB_WIDE))
		mt_livetab_wide_free(&l->tab, val & ~MT_LIVETAB_WIDE);
	return b;
}

/* After the put (rc) of a block of size at addr whose old value was prev:
 * the bytes, and the block it replaced in *old. */
static inline int mt_live_added(struct mt_live *l, int rc, uint32_t prev, uint64_t size,
				struct mt_block *old)
{
	if (rc == 1) {
		*old = mt_live_unpack(l, prev);
		l->bytes -= old->size;
	}
	if (rc >= 0)
		l->bytes += size;
	return rc;
}

/* mt_live_add for a block with a wide record (tables.c). */
int mt_live_add_wide(struct mt_live *l, uint64_t addr, struct mt_block b, struct mt_block *old);

/*
 * Adds a live block. Returns 0; 1 when addr was live already (its free
 * went unseen), *old then the block it replaced; -1 when out of memory
 * (the table is unchanged).
 */
static inline __attribute__((always_inline)) int mt_live_add(struct mt_live *l, uint64_t addr,
							     struct mt_block b, struct mt_block *old)
{
	uint32_t prev = 0;

	if (MT_UNLIKELY(!mt_livetab_fits(MT_LIVE_STACK_BITS, b.size, b.stack, 0)))
		return mt_live_add_wide(l, addr, b, old);
	return mt_live_added(l, mt_livetab_put(&l->tab, addr,
					       mt_livetab_packed(MT_LIVE_STACK_BITS, b.size,
								 b.stack, 0), &prev),
			     prev, b.size, old);
}

/* Removes addr; returns 1 if it was live (and *b), 0 if not. */
static inline __attribute__((always_inline)) int mt_live_remove(struct mt_live *l, uint64_t addr,
								struct mt_block *b)
{
	uint32_t val;

	if (!mt_livetab_take(&l->tab, addr, &val))
		return 0;
	*b = mt_live_unpack(l, val);
	l->bytes -= b->size;
	return 1;
}

/*
 * mt_live_add and mt_live_remove for an owner that can be killed between
 * a change and its record (the drainer, core.c): note(found, value) is
 * told what the table held at addr once the change is certain and before
 * it is made (remove: only when addr is live; add: the table grown
 * already). One probe of the table serves both; noting first with a
 * lookup of its own probed twice (cachegrind, stl with the drainer: 60
 * instructions an event, most of them an insertion's probe to its empty
 * slot, done again by the put). Odd addresses and wide records note by
 * a lookup first, then go the usual way: there the note comes before a
 * change that may still fail (no memory; the table is then unchanged).
 */
static inline __attribute__((always_inline)) int mt_live_add_noting(
	struct mt_live *l, uint64_t addr, struct mt_block b, struct mt_block *old,
	void (*note)(int found, uint32_t val))
{
	unsigned char *s;
	int found;

	if (MT_UNLIKELY(!mt_livetab_fits(MT_LIVE_STACK_BITS, b.size, b.stack, 0) ||
			mt_livetab_is_odd(addr))) {
		uint32_t v = 0;

		found = mt_livetab_get(&l->tab, addr, &v);
		note(found, v);
		return mt_live_add(l, addr, b, old);
	}
	if (!(s = mt_livetab_place(&l->tab, addr, &found)))
		return -1;
	uint32_t prev = found ? mt_livetab_val_of(s, mt_livetab_lo(s)) : 0;
	note(found, prev);
	mt_livetab_put_at(&l->tab, s, addr, mt_livetab_packed(MT_LIVE_STACK_BITS, b.size, b.stack, 0),
			  found);
	return mt_live_added(l, found, prev, b.size, old);
}

static inline __attribute__((always_inline)) int mt_live_remove_noting(
	struct mt_live *l, uint64_t addr, struct mt_block *b, void (*note)(int found, uint32_t val))
{
	unsigned char *s;
	uint32_t val;

	if (MT_UNLIKELY(mt_livetab_is_odd(addr))) {
		if (!mt_livetab_get(&l->tab, addr, &val))
			return 0;
		note(1, val);
		return mt_live_remove(l, addr, b);
	}
	if (!(s = mt_livetab_slot_of(&l->tab, addr)))
		return 0;
	val = mt_livetab_val_of(s, mt_livetab_lo(s));
	note(1, val);
	mt_livetab_take_at(&l->tab, s);
	*b = mt_live_unpack(l, val);
	l->bytes -= b->size;
	return 1;
}

static inline uint64_t mt_live_blocks(const struct mt_live *l)
{
	return mt_livetab_count(&l->tab);
}

/* Adds every live block's size to bytes[stack] and 1 to blocks[stack]
 * (both at least as long as the stack ids in the table). */
void mt_live_by_stack(const struct mt_live *l, uint64_t *bytes, uint64_t *blocks);
/*
 * The recorder's own pages (every mmap of tables.c), which a leak scan
 * leaves out of its roots: copies up to max (lo, hi) pairs into ranges and
 * returns how many there are (more than max: the copy is short).
 */
size_t mt_mem_owned(uint64_t *ranges, size_t max);

/* ---- tags.c -------------------------------------------------------------- */

/* The distinct tag paths, (parent, name) -> id 1, 2...; with the log lock. */
struct mt_tags;
struct mt_tags *mt_tags_new(void);
/*
 * The id of name (NUL-terminated; its first MT_MAX_STRING bytes) inside
 * parent, adding it if new (*is_new set). -1 for an empty name, an unknown
 * parent, too many paths or no memory.
 */
int64_t mt_tags_intern(struct mt_tags *t, uint32_t parent, const char *name, int *is_new);
/* Writes the TAG record of path id, or of every path so far (a new log). */
struct mt_writer;
int mt_tags_write(const struct mt_tags *t, struct mt_writer *w, uint64_t time, uint32_t id);
int mt_tags_emit(const struct mt_tags *t, struct mt_writer *w, uint64_t time);

/* ---- modules.c ----------------------------------------------------------- */

struct mt_writer;
struct mt_modules;
struct mt_modules *mt_modules_new(void);
void mt_modules_free(struct mt_modules *m);
/*
 * Scans the loaded objects (dl_iterate_phdr) and remembers which are new or
 * gone since the last scan; call without the log lock. Then
 * mt_modules_emit() (with the log lock) writes their MODULE/UNLOAD records.
 * Returns 0 or -1 when out of memory.
 */
int mt_modules_scan(struct mt_modules *m);
int mt_modules_emit(struct mt_modules *m, struct mt_writer *w, uint64_t t);
/* MODULE for every module written so far and still loaded (a bounded
 * log's new segment: lib/ring.h). 0, or the first writer error. */
int mt_modules_emit_known(const struct mt_modules *m, struct mt_writer *w, uint64_t t);
/* Did the loader add or remove objects since the last scan? (Cheap.) */
int mt_modules_changed(struct mt_modules *m);
/* Is ip inside a module emitted so far? (With the log lock.) */
int mt_modules_known(const struct mt_modules *m, uint64_t ip);
/* The text range of the object containing addr (for mt_self_lo/hi). */
int mt_modules_text_of(const void *addr, uintptr_t *lo, uintptr_t *hi);

/* ---- config.c ------------------------------------------------------------ */

struct mt_config {
	unsigned depth;
	int snapshot_signal;      /* 0: none */
	int leak_check_signal;    /* MEMTRAIL_LEAK_CHECK_SIGNAL; 0: none */
	uint64_t snapshot_interval_ns; /* 0: none */
	char output[4096];        /* expanded path: this process's own file */
	int follow;               /* MEMTRAIL_FOLLOW_CHILDREN */
	int freeres;              /* MEMTRAIL_FREERES (default 1; 0: keep the runtimes' memory) */
	int leak_check;           /* MEMTRAIL_LEAK_CHECK (default 1; 0: no scan at exit) */
	int drainer;              /* MEMTRAIL_DRAINER (default 1; 0: the program drains) */
	int unwind;               /* MEMTRAIL_UNWIND: enum mt_unwind_mode (unwind.h) */
	uint64_t sample;          /* MEMTRAIL_SAMPLE: mean bytes per recorded block; 0: all */
	long sample_seed;         /* MEMTRAIL_SAMPLE_SEED; -1: none (draws differ per run) */
	uint64_t max_size;        /* MEMTRAIL_MAX_SIZE: a bounded log (lib/ring.h); 0: one file */
};

/* ---- segments.c ------------------------------------------------------------ */

/*
 * A bounded log's files (lib/ring.h): segments first .. last are on disk,
 * last the one being written (cur); a new one begins once the current
 * passes target (max / MT_SEGS_PER_MAX), and the oldest go while the
 * total passes max, so the files never hold more than max plus a segment.
 */
#define MT_SEGS_PER_MAX 4
#define MT_SEGS_KEEP    64      /* at most this many kept, whatever their size */
struct mt_segs {
	char base[4096];      /* FILE */
	char cur[4096];       /* the segment being written */
	uint64_t max, target;
	uint64_t first, last; /* 0: none yet */
	uint64_t size[MT_SEGS_KEEP];  /* bytes of segment n at [n % KEEP] */
};
/* Begins the ring of path (deleting path and any segments an earlier run
 * left); 0, or -1 when path is too long. */
int mt_segs_start(struct mt_segs *g, const char *path, uint64_t max);
/* Creates the next segment: its descriptor (g->cur its path), or -1. */
int mt_segs_open_next(struct mt_segs *g);
/* The current segment has cur_size bytes: deletes the oldest while the
 * total passes max (the current one always stays). */
void mt_segs_trim(struct mt_segs *g, uint64_t cur_size);

/* An environment variable, also before libc set up environ. */
const char *mt_env(const char *name);
/* Reads MEMTRAIL_* into cfg (defaults for anything unset or invalid). */
void mt_config_read(struct mt_config *cfg);
/* A signal number for "USR2", "SIGUSR2" or "12"; 0 if unknown. */
int mt_config_signal(const char *s);
/* The output path from pattern (lib/outpath.h: placeholders, %n, made
 * absolute) into out; returns 0 or -1 if too long. */
int mt_config_expand(const char *pattern, char *out, size_t outlen);
/* Removes libmemtrail.so from LD_PRELOAD in environ, in place. */
void mt_config_strip_preload(void);

/* ---- children.c ----------------------------------------------------------- */

/*
 * Reads MEMTRAIL_FOLLOW_CHILDREN (sets cfg->follow) and, when following,
 * replaces cfg->output (FILE on entry) by this process's own file: FILE for
 * the root, FILE.<pid>, or FILE.<pid>.<k> for image k after an exec.
 */
void mt_children_config(struct mt_config *cfg);
/* Following children? */
int mt_children_following(void);
/* Constructor, environ ready: MEMTRAIL_ROOT_PID and the resolved
 * MEMTRAIL_OUTPUT for descendants (guard held: putenv allocates). */
void mt_children_publish(void);
/* In a forked child: its file, FILE.<pid>, into out; 0 or -1 if too long. */
int mt_children_fork_output(char *out, size_t len);
/* Slots mt_children_env needs for envp (entries, ours, the NULL). */
size_t mt_children_env_slots(char *const envp[]);
/* envp plus MEMTRAIL_IMAGE=<pid>.<k+1> for an exec, built in buf of slots
 * pointers; call with the log lock held (the string is static). */
char **mt_children_env(char *const envp[], char **buf, size_t slots);
/* Around every dl_iterate_phdr call; no-ops unless following. */
void mt_children_dl_enter(void);
void mt_children_dl_leave(void);
/* Fork handlers: a fork waits until no thread is in dl_iterate_phdr. */
void mt_children_fork_prepare(void);
void mt_children_fork_parent(void);
void mt_children_fork_child(void);

/* ---- freeres.c ------------------------------------------------------------ */

/*
 * Is this thread alone (but for the helper thread helper_tid, 0 if none)
 * in running user code, so that the runtimes may free their memory? 0 also
 * when it cannot tell. Only system calls.
 */
int mt_freeres_safe(long helper_tid);
/* Calls libstdc++'s __gnu_cxx::__freeres() and glibc's __libc_freeres(),
 * those present; with the guard at 0 their frees are recorded. */
void mt_freeres_run(void);

/* ---- leakscan.c ----------------------------------------------------------- */

struct mt_leak_entry;
struct mt_leakscan_result {
	struct mt_leak_totals tot;
	uint64_t words;       /* words scanned */
	uint64_t ns;          /* time taken */
};
/*
 * Classifies the live blocks of l, other
 * threads stopped meanwhile (all but helper, the recorder's thread, 0 if
 * none); the calling thread's stack is a root from own_sp up (0: not at
 * all, the caller is the helper thread itself). usable is
 * the allocator's malloc_usable_size (NULL: unknown). The blocks that are
 * not reachable go to lost(ctx, ...) by increasing address, a LEAK
 * record's worth at a time, as mt_writer_leak takes them (each address |
 * its kind; more: another call follows; tot: the totals). The scan reads
 * the live table sorted in place by address; keep: it is put back after
 * (0: the exit's scan, after which only END's counts are read of it). 0
 * and *res, or -1 when it could not classify (lost is not called), or -2
 * when the live table could not be put back in order after it (out of
 * memory: it can only be released).
 */
int mt_leakscan(struct mt_live *l, uint64_t own_sp, long helper, size_t (*usable)(void *),
		void (*lost)(void *ctx, const struct mt_leak_entry *e, size_t n, int more,
			     const struct mt_leak_totals *tot),
		void *ctx, int keep, struct mt_leakscan_result *res);

/* The in-program API's entry point (include/memtrail.h binds to it), and
 * the same under the API's own names (core.c). */
void memtrail_snapshot_impl(const char *label);
void memtrail_snapshot(void);
void memtrail_snapshot_named(const char *label);
void memtrail_leak_check_impl(const char *label);
/* The same for scoped tags (tags.c), and the part that needs the log lock:
 * the id of name inside parent, its TAG written when new (core.c); parent
 * itself when it cannot. */
void memtrail_tag_push_impl(const char *name);
void memtrail_tag_pop_impl(void);
void memtrail_tag_push(const char *name);
void memtrail_tag_pop(void);
uint32_t mt_rec_tag(uint32_t parent, const char *name);

/* ---- sample.c ------------------------------------------------------------- */

/*
 * Sampling (MEMTRAIL_SAMPLE, format.h SAMPLE): each thread counts down the
 * bytes it allocates, and the allocation that takes the count to zero or
 * below is recorded; the next count is drawn from an exponential law of
 * mean mt_sample_mean. Off (0), every allocation is recorded and the
 * checks below are always true.
 */
struct mt_sample_tls {
	int64_t left;         /* bytes until the next recorded allocation */
	uint64_t rng;         /* xorshift state; 0: not drawn yet */
};
extern __thread struct mt_sample_tls mt_sample_tls;
extern uint64_t mt_sample_mean;
/*
 * Per hash slot of an address, how many recorded blocks may be live there.
 * The allocating thread counts a block in (mt_sample_note) before the
 * program gets its address; the drainer counts it out (mt_sample_forget)
 * when the block leaves the live table. So a free of a recorded block
 * always finds its slot's count above 0, without a lock, even while the
 * allocation still waits in its thread's ring (tbuf.c); a count of 0 means
 * the block was not recorded. Other blocks of the slot only make a free
 * take the recording path for nothing (the table then says so). 64 Ki
 * slots, 256 KiB (mt_sample_slot).
 */
#define MT_SAMPLE_SLOT_BITS 16
extern uint32_t *mt_sample_counts;

/* Starts sampling at mean bytes (0: off) with the seed (-1: none), for a
 * new log; 0, or -1 when out of memory. With the log lock. */
int mt_sample_start(uint64_t mean, long seed);
/* The slow path of mt_sample_take: the count ran out (or was never set). */
int mt_sample_draw(size_t size);

/* Is an allocation of size bytes to be recorded? Only a thread-local
 * count when not: no lock, no unwinding. */
static inline __attribute__((always_inline)) int mt_sample_take(size_t size)
{
	if (MT_LIKELY(!mt_sample_mean))
		return 1;
	mt_sample_tls.left -= (int64_t)size;
	if (MT_LIKELY(mt_sample_tls.left > 0))
		return 0;
	return mt_sample_draw(size);
}

/*
 * A block's slot keeps the heap's locality: blocks next to each other
 * (freed one after the other, most often) share a cache line of slots, where
 * a hash sent each free to a line of its own (on churn, 41 % of the free
 * hook's time was that load missing). The address bits from 1 MiB up are
 * hashed into it, so that blocks 1 MiB apart, 2 MiB-aligned mappings and
 * thread arenas at the same offsets do not fall on the same few slots
 * (4,096 blocks at any of those strides take about 4,000 slots).
 */
static inline __attribute__((always_inline)) uint32_t mt_sample_slot(const void *p)
{
	uint64_t a = (uint64_t)(uintptr_t)p;

	return (uint32_t)(((a >> 4) ^ (((a >> 20) * 0x9E3779B97F4A7C15ull) >> 48)) &
			  ((1u << MT_SAMPLE_SLOT_BITS) - 1));
}

/* May the block at p be a recorded one? (No lock; false only when not.) */
static inline __attribute__((always_inline)) int mt_sample_held(const void *p)
{
	if (MT_LIKELY(!mt_sample_mean))
		return 1;
	return __atomic_load_n(&mt_sample_counts[mt_sample_slot(p)], __ATOMIC_RELAXED) != 0;
}

/* A block at p the hooks record (before the program gets p). */
static inline void mt_sample_note(const void *p)
{
	if (mt_sample_mean)
		__atomic_fetch_add(&mt_sample_counts[mt_sample_slot(p)], 1, __ATOMIC_RELAXED);
}

/* A recorded block at p left the live table (log lock held). */
static inline void mt_sample_forget(const void *p)
{
	if (mt_sample_mean)
		__atomic_fetch_sub(&mt_sample_counts[mt_sample_slot(p)], 1, __ATOMIC_RELAXED);
}

/* ---- small helpers that never allocate (core.c) -------------------------- */

/* Writes "memtrail: " then the NULL-terminated strings to stderr, one write. */
void mt_say(const char *s, ...) __attribute__((sentinel));
/* Formats v in decimal into buf (>= 24 bytes); returns buf. */
char *mt_fmt_i64(char *buf, int64_t v);
/*
 * Calls fn(ctx, tid) for each thread of the process but self and skip, from
 * /proc/self/task, until fn returns non-zero: returns that value, 0 once
 * every thread was seen, -1 when the list cannot be read. System calls
 * only: no allocation, no stdio.
 */
int mt_each_task(long self, long skip, int (*fn)(void *ctx, long tid), void *ctx);

#endif

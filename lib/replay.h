/*
 * replay.h - replays an event log through a table of callbacks.
 *
 * The replay reads the log chunk by chunk (lib/reader.c), keeps the table of
 * live blocks (address -> size and stack: lib/livetab.h) and the table of
 * distinct stacks, and calls the consumer for each event in true order. Its
 * memory grows with live blocks and distinct stacks, never with the number of
 * events. Every tool (summary, trees, timeline, viewer, dump, tests) is a
 * consumer of this interface; none parses the log itself.
 *
 * Not here: aggregation (lib/agg.h), symbols (lib/symbols.h).
 */
#ifndef MT_REPLAY_H
#define MT_REPLAY_H

#include <stddef.h>
#include <stdint.h>

#include "format.h"

struct mt_replay;

/* The file header. Strings are owned by the replay. */
struct mt_header {
	unsigned version;
	unsigned pointer_size;
	uint32_t pid;
	uint64_t start_realtime_ns;  /* ns since the Unix epoch */
	const char *cmdline;         /* arguments joined with single spaces */
	size_t argc;
	const char *const *argv;
};

/* An allocation or free, as the consumer sees it. */
struct mt_event {
	uint64_t seq;         /* event number from 0 (allocs, frees, reallocs, snapshots) */
	uint64_t time_ns;     /* since recording start */
	uint64_t addr;
	uint64_t size;        /* requested size of the block (a sampled log's: an
			       * estimate, see mt_replay_sample) */
	uint32_t stack;       /* stack id that allocated the block */
	uint32_t thread;      /* thread index of this event */
	uint32_t alloc_thread; /* thread index that allocated the block (on_free:
				* may differ from thread; on_alloc: = thread;
				* see mt_replay_owners) */
	int realloc;          /* 1 for the two halves of a realloc (free first, then alloc) */
	uint32_t count;       /* blocks it stands for: 1, or a sampled log's estimate */
	uint64_t asked;       /* the size the program asked for (= size unless sampled) */
};

/*
 * A run of allocations and frees (on_run): events of one thread at one
 * time, numbered on from seq. Each is read in place, in the replay's own
 * memory: type says what it is (MT_RUN_*: a REALLOC is two, its free half
 * then its alloc half, which share one seq), stack and size the block's
 * (a free's: the block it ends), addr its address. Such a run comes only
 * where every event is as simple as it gets: a log of version 4 on, not
 * sampled (count 1, asked = size), the block's thread the event's
 * (alloc_thread = thread), both on_alloc and on_free set.
 */
enum { MT_RUN_ALLOC, MT_RUN_FREE, MT_RUN_REALLOC_FREE, MT_RUN_REALLOC_ALLOC };
struct mt_run_event {
	uint16_t own;         /* the replay's */
	uint16_t type;
	uint32_t stack;
	uint64_t size;
	uint64_t addr;
};
struct mt_run {
	const struct mt_run_event *ev;
	size_t n;
	uint64_t seq;         /* of ev[0] */
	uint64_t time_ns;
	uint32_t thread;
};

/* A distinct call stack (see format.h STACK). Owned by the replay. */
struct mt_stack {
	uint32_t id;
	uint32_t fn;          /* enum mt_fn: the entry point */
	uint32_t depth;
	const uint64_t *ips;  /* innermost first; return addresses */
	uint32_t tag;         /* the tag path its allocations had (mt_replay_tag;
			       * 0: none, and always in logs before version 4) */
};

struct mt_segment { uint64_t start, size; };

/* A loaded module (see format.h MODULE). Owned by the replay. */
struct mt_module {
	uint64_t time_ns;
	uint64_t base;
	const char *path;
	const uint8_t *build_id;
	size_t build_id_len;
	size_t nseg;
	const struct mt_segment *segs;
};

struct mt_snapshot {
	uint32_t index;
	const char *label;    /* "" when unnamed */
	uint64_t seq;
	uint64_t time_ns;
};

/* A block a leak check lists (format.h LEAK), as the replay knows it. */
struct mt_leak_block {
	uint64_t addr;
	uint64_t size;        /* requested size (sampled: an estimate) */
	uint32_t stack;       /* stack id that allocated it */
	uint32_t thread;      /* thread index that allocated it */
	unsigned kind;        /* enum mt_leak_kind, never MT_LEAK_REACHABLE */
	uint32_t count;       /* blocks it stands for (as mt_event's; in what was
			       * padding: a check lists up to millions) */
};

/*
 * A leak check (format.h LEAK): the live blocks at this point of the log
 * that are not reachable, by address, and the totals per kind (the
 * reachable ones: every live block not listed).
 */
struct mt_leak_check {
	uint64_t seq;         /* events before it */
	uint64_t time_ns;
	struct mt_leak_totals tot;
	size_t n;
	const struct mt_leak_block *lost;
};

/* Where a leak check came in the log, and its totals. */
struct mt_leak_check_at {
	uint64_t seq;         /* events before it (a check after a snapshot: its seq + 1) */
	uint64_t time_ns;
	struct mt_leak_totals tot;
};

/*
 * Where a bounded log (format.h BASE) begins: the run's state when its
 * oldest kept segment began, every event before it dropped. tot holds the
 * run's figures so far as END counts them (leaked_* unset); stacks, the n
 * stacks with live blocks then.
 */
struct mt_base_stack {
	uint32_t stack;
	uint64_t bytes, blocks;
};
struct mt_base {
	uint64_t seq;         /* events before it (the first kept one's seq) */
	uint64_t time_ns;
	struct mt_totals tot;
	size_t n;
	const struct mt_base_stack *stacks;
};

/* How the log ended. */
struct mt_end {
	int clean;            /* 1 if an END record was read */
	int how;              /* enum mt_end_how, when clean */
	int64_t code;
	struct mt_totals totals; /* END's figures as the recorder counted them, when clean */
	uint64_t time_ns;     /* time of the last record read */
	uint64_t events;      /* events replayed */
	int truncated;        /* the file ends in a partial or corrupt chunk, or lacks END */
	uint64_t good_bytes;  /* offset just after the last good chunk */
	const char *stop_reason; /* STOP record's reason, or NULL */
	int error;            /* MT_E_* that stopped reading (0: none, or only END missing) */
	uint64_t error_offset; /* file offset of the chunk (or record) at fault */
	int stopped;          /* a callback stopped the run early: clean/truncated unknown */
	int classified;       /* a leak check came just before END ... */
	struct mt_leak_totals leaks; /* ... with these totals */
	int bounded;          /* a bounded log that lost its start (BASE) ... */
	uint64_t base_seq, base_time_ns; /* ... where what is kept begins */
};

/*
 * The consumer. Every callback may be NULL. Pointers passed in are valid only
 * during the call, except mt_stack/mt_module data and tag paths, which live
 * as long as the replay. Returning non-zero from on_alloc/on_free/on_snapshot stops the
 * replay early (mt_replay_run then returns 1).
 * Callbacks run on the caller's thread, in log order, but the records may be
 * decoded on another (mt_replay_threads): during a run a callback may not
 * ask the replay for its tables (mt_replay_stack, mt_replay_module, their
 * counts, tags, threads), which that thread is changing; what they hold
 * comes to the consumer through on_stack, on_module, on_tag and on_thread.
 */
struct mt_replay_ops {
	void (*on_header)(void *ctx, const struct mt_header *h);
	void (*on_module)(void *ctx, const struct mt_module *m);
	void (*on_unload)(void *ctx, uint64_t base, uint64_t time_ns);
	void (*on_thread)(void *ctx, uint32_t index, uint32_t tid);
	void (*on_thread_name)(void *ctx, uint32_t index, const char *name);
	void (*on_stack)(void *ctx, const struct mt_stack *s);
	/* Tag path id (1, 2... in order; TAG record) is parent's (0: none)
	 * with one more scope: path is the names joined with "/", outermost
	 * first. Before any stack names it. */
	void (*on_tag)(void *ctx, uint32_t id, uint32_t parent, const char *path);
	/*
	 * A bounded log that lost its start (format.h BASE): before any
	 * event, the state the run had when what is kept begins; the frees
	 * of its blocks come as usual (an on_free with no on_alloc before).
	 */
	void (*on_base)(void *ctx, const struct mt_base *b);
	int  (*on_alloc)(void *ctx, const struct mt_event *ev);
	int  (*on_free)(void *ctx, const struct mt_event *ev);
	int  (*on_snapshot)(void *ctx, const struct mt_snapshot *s);
	/*
	 * A leak check, once its last LEAK record is read (every event
	 * before it applied; the blocks are still live). lc and its blocks
	 * stay valid until the next on_leak_check or until on_end returns:
	 * a consumer that keeps the last check's blocks copies them once,
	 * not every check's.
	 */
	void (*on_leak_check)(void *ctx, const struct mt_leak_check *lc);
	/* A sample of the process's resident set, in bytes (RSS record). */
	void (*on_rss)(void *ctx, uint64_t time_ns, uint64_t bytes);
	/* Called once at the end, also after truncation or an early stop. */
	void (*on_end)(void *ctx, const struct mt_end *e);
	/* Called at least every ~64 KiB of input: for progress bars. */
	void (*on_progress)(void *ctx, uint64_t bytes_done, uint64_t bytes_total);
	/* The time of the records that follow, when it may have changed (a
	 * TIME record, a chunk's start): a consumer that looks at events only
	 * when the time moves needs no test per event. */
	void (*on_time)(void *ctx, uint64_t time_ns);
	/*
	 * Optional: a run of events (struct mt_run) offered whole, for a
	 * consumer that counts many at less than a call each. It takes them
	 * in order as on_alloc and on_free would have, one by one, and
	 * returns 0 with *done the number it took (all of them, or fewer:
	 * the replay then hands the next to on_alloc or on_free and offers
	 * the rest again), or 1 when event *done stopped it as a return of 1
	 * from on_alloc or on_free would have (a REALLOC's free half: the
	 * replay still applies the alloc half, through on_alloc, as it does
	 * after on_free). Gets event_ctx as they do.
	 */
	int (*on_run)(void *ctx, const struct mt_run *run, size_t *done);
	/*
	 * When not NULL, the ctx on_alloc, on_free and on_run get instead
	 * of the run's: a consumer whose events go to another's (the session's to
	 * its aggregator) gives that one's callbacks, with no call between.
	 */
	void *event_ctx;
};

/*
 * Where a reader of the log reports progress: fn(ctx, bytes_done,
 * bytes_total), called as on_progress is (fn NULL: nowhere). The one type
 * that the layers above the replay (session, aggregator, summary, viewer)
 * pass progress with.
 */
struct mt_progress_cb {
	void (*fn)(void *ctx, uint64_t bytes_done, uint64_t bytes_total);
	void *ctx;
};

/*
 * Open a log: reads and checks the header. Returns 0 and *out, or a negative
 * MT_E_* (*err_offset, if not NULL, gets the byte offset of the problem).
 */
int mt_replay_open(const char *path, struct mt_replay **out, uint64_t *err_offset);

/* The header read by mt_replay_open. */
const struct mt_header *mt_replay_header(const struct mt_replay *r);

/*
 * Replay the whole log from the start through ops. May be called again to
 * replay once more (the state is reset). Returns 0 at the end of the log
 * (truncated or not: see on_end / mt_replay_end), 1 if a callback stopped it,
 * or a negative MT_E_* for a hard error (I/O, out of memory).
 */
int mt_replay_run(struct mt_replay *r, const struct mt_replay_ops *ops, void *ctx);

/*
 * For a log still being written: goes on with the last run over the chunks
 * appended since it ended (the run's tables, live blocks and event numbers
 * go on as if it had read them in one go), through ops (the run's own, or
 * ones that carry on its consumers' state), then calls on_end again with
 * the run's new end. A chunk cut short at the end of the file is one not
 * written whole yet: it is read again next time, not an error. Nothing
 * happens (0, no callback) when the file has not grown, after END, or
 * after a chunk that does not check. Returns as mt_replay_run, or
 * MT_E_ARG when a callback stopped the last run early.
 */
int mt_replay_resume(struct mt_replay *r, const struct mt_replay_ops *ops, void *ctx);

/* How the last run ended. */
const struct mt_end *mt_replay_end(const struct mt_replay *r);

/* Stacks and modules seen so far by the last run (ids are dense from 0). */
size_t mt_replay_nstacks(const struct mt_replay *r);
const struct mt_stack *mt_replay_stack(const struct mt_replay *r, uint32_t id);
size_t mt_replay_nmodules(const struct mt_replay *r);
const struct mt_module *mt_replay_module(const struct mt_replay *r, size_t i);
size_t mt_replay_nthreads(const struct mt_replay *r);
/*
 * The mean sampling interval in bytes of the last run's log (SAMPLE), 0
 * when it records every allocation. A sampled log's blocks reach the
 * consumer weighed (format.h SAMPLE): their sizes and counts (mt_event,
 * mt_leak_block) are estimates.
 */
uint64_t mt_replay_sample(const struct mt_replay *r);
/*
 * Tag paths of the last run: ids 1 .. mt_replay_ntags. mt_replay_tag gives
 * the path ("parser/lexer"), "" for 0 (no tag), NULL for an id not
 * defined; owned by the replay, valid as long as it is.
 */
size_t mt_replay_ntags(const struct mt_replay *r);
const char *mt_replay_tag(const struct mt_replay *r, uint32_t id);
/*
 * Thread index i of the last run: its kernel tid and its name (THREAD_NAME;
 * NULL when the log names it not), owned by the replay until the next run.
 * 0, or MT_E_NOTFOUND for an index never announced.
 */
int mt_replay_thread(const struct mt_replay *r, size_t i, uint32_t *tid, const char **name);

/*
 * The run will have about n live blocks at once (END's peak_blocks): the
 * live table is sized for them now rather than grown, and rehashed, on the
 * way (for 2 M live blocks, half the replay's time). Returns 0 or
 * MT_E_NOMEM. The table never shrinks; a wrong n only costs time.
 */
int mt_replay_expect_blocks(struct mt_replay *r, uint64_t n);

/*
 * Whether on_free's alloc_thread must be right (on, the default). Logs of
 * version 4 name the block each free ends, so a replay keeps no live table
 * unless asked for owners: with it off, alloc_thread is the freeing
 * thread's index, not the allocating one's, and replay memory no longer
 * grows with live blocks. Older logs always keep the table (it is how
 * their frees find their blocks), so alloc_thread is always right there.
 */
void mt_replay_owners(struct mt_replay *r, int on);

/*
 * Whether a run decodes on a thread of its own while the caller's thread
 * applies (and calls the consumer, always from the caller's thread): mode
 * -1 (the default) for logs of 64 KiB and more on a machine of two CPUs or
 * more, 0 never, 1 always. The output is the same either way.
 */
void mt_replay_threads(struct mt_replay *r, int mode);

/*
 * Releases the live table's memory until the next run (which makes it
 * again): for a reader that keeps the replay for later but is done with
 * live blocks for now, such as a session after its pass.
 */
void mt_replay_trim(struct mt_replay *r);

/*
 * END's figures without a replay: the log's last chunk alone
 * (mt_reader_last_chunk) goes through the replay's decoder, which takes
 * the stacks and threads of earlier chunks on trust and keeps nothing.
 * Returns 1 and *how, *tot when the file ends with a complete chunk whose
 * last record is END; 0 when it does not (cut short, no END, a record
 * after END, a STOP whose reason only a replay reports, a record that does
 * not decode: replay to learn more); or MT_E_IO / MT_E_NOMEM. Rewinds the
 * reader; the state of the last run is untouched.
 */
int mt_replay_end_totals(struct mt_replay *r, unsigned *how, struct mt_totals *tot);

/* Every leak check the last run read, in log order; owned by the replay
 * until the next run. */
size_t mt_replay_leak_checks(const struct mt_replay *r, const struct mt_leak_check_at **out);

/*
 * mt_replay_end_totals, and whether a leak check came just before END
 * (*classified) with its totals (*leaks).
 */
int mt_replay_end_leaks(struct mt_replay *r, unsigned *how, struct mt_totals *tot,
			int *classified, struct mt_leak_totals *leaks);

/* Frees the replay; NULL is a no-op. */
void mt_replay_free(struct mt_replay *r);

#endif

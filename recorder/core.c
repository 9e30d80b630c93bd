/*
 * core.c - the recording session of libmemtrail.so: start-up, the log lock,
 * thread indexes, turning captured events into records (lib/writer.c),
 * the live-bytes table, snapshots (API, signal, interval), and the ends of
 * a recording: exit, _exit, fatal signals, fork, exec.
 *
 * Ordering: the hooks take no lock shared between threads. Each thread
 * appends its events to a ring of its own, each stamped with a key from
 * one global counter: a free's taken before the real free runs, an
 * allocation's after the real allocator returned, and realloc takes one
 * before and one after the real call (tbuf.c argues why that suffices).
 * Whoever holds the log lock (the program's own threads, or the drainer
 * process below once the live table is large) drains the rings and,
 * through mt_rec_emit, alone keeps the stack table, the live table, END's
 * figures and the writer: every address's events reach the log in their
 * true order (a block freed by one thread and handed to another by the
 * allocator replays as the free, then the allocation), each thread's
 * events in its own order, and a snapshot or an end comes after every
 * event that happened before it: the log's order is the keys', which is
 * the true order wherever the program itself ordered two events.
 *
 * Never blocks in a signal handler (trylock only), never allocates from the
 * heap (tables and buffers are mmap'ed), never aborts the program: on
 * trouble it stops recording and says so once on stderr.
 *
 * Ends: exit writes END from an on_exit handler that runs after every
 * destructor and after the C and C++ runtimes freed their own memory
 * (freeres.c, where it is safe); _exit and every terminating signal write END themselves; a
 * forked child stops at once without writing (or, following children,
 * begins a log of its own); exec writes END(EXEC), and if the exec fails
 * that END is cut off the file again and recording goes on. A recording
 * that stops early (a full disk, no memory for a table) ends with STOP and
 * END(STOPPED). The drainer ends a chunk that has waited 0.4 s, and after
 * a SIGKILL writes the rest and END (without a drainer, a helper thread
 * ends old chunks, so a SIGKILL takes at most the last second of events).
 * Without a drainer, the log's descriptor is defended against the
 * program's close/dup2 (hooks.c) and reopened by path if a raw system
 * call took it; with one, the program has none.
 *
 * Not for: the hooks themselves (hooks.c), table internals (tables.c),
 * module scanning (modules.c), settings (config.c).
 *
 * Following children (children.c decides the files): a forked child drops
 * the parent's session (its buffered records, stacks, live blocks, END's
 * totals) and opens its own log, FILE.<pid>, with a fresh header, module
 * map and thread numbering; blocks it inherited are not in its live table,
 * so their frees are not events. An exec'd program starts its own log.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#define UNW_LOCAL_ONLY
#include <libunwind.h>
#include <pthread.h>
#include <sched.h>
#include <semaphore.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#include "error.h"
#include "recorder.h"
#include "unwind.h"
#include "writer.h"

__thread struct mt_tls mt_tls __attribute__((tls_model("initial-exec")));

volatile int mt_rec_active;
unsigned mt_rec_depth = MT_DEFAULT_DEPTH;
uintptr_t mt_self_lo, mt_self_hi;

/* Held by whoever drains the rings and writes records (not per event). */
static pthread_mutex_t log_lock = PTHREAD_ADAPTIVE_MUTEX_INITIALIZER_NP;
static pthread_mutex_t mod_lock = PTHREAD_MUTEX_INITIALIZER;
/*
 * Compression and writing of a full chunk happen under io_lock only, after
 * the thread whose record filled the chunk released log_lock (the writer's
 * deferred mode), so other threads go on recording meanwhile. Lock order:
 * mod_lock, log_lock, io_lock.
 */
static pthread_mutex_t io_lock = PTHREAD_MUTEX_INITIALIZER;
static int io_flush(void);

/* What END needs of each thread of the log: its tid, and whether its
 * THREAD_NAME is written: NAMED_EXIT when it exited (its tid may be reused
 * since), NAMED_END before an END (taken back if an exec fails). */
enum { NAMED_EXIT = 1, NAMED_END = 2 };
struct rec_thread {
	pid_t tid;
	int named;
};

static struct {
	struct mt_config cfg;
	int fd;
	struct mt_writer *w;
	struct mt_stacks *stacks;
	struct mt_live *live;
	struct mt_modules *mods;
	struct mt_tags *tags; /* tag paths: kept by a forked child (its threads'
			       * tag stacks hold their ids), written anew */
	uint64_t t0;          /* CLOCK_MONOTONIC at start, ns */
	uint32_t gen;         /* log generation (thread indexes belong to one) */
	uint32_t nthreads;
	uint32_t nsnap;
	uint64_t prev_live;
	struct mt_totals tot; /* END's figures, counted under the log lock */
	int said;             /* the "recording stopped" message was printed */
	int exec_pending;     /* END(EXEC) written, exec under way */
	off_t exec_off;       /* file size before it */
	sem_t snap_sem;
	int helper_on;
	int helper_busy;      /* the helper is between waits (atomic) */
	int check_pending;    /* the leak-check signal came (atomic) */
	long helper_tid;      /* its thread id, once it runs (atomic) */
	int mod_dirty;        /* a new stack had a frame in no known module */
	dev_t fd_dev;         /* identity of the log file behind fd */
	ino_t fd_ino;
	pid_t pid;            /* of the recorded process */
	struct rec_thread *thr; /* per thread index: for THREAD_NAME (mmap'ed) */
	uint32_t thr_cap;
	uintptr_t exit_sp;    /* the exit handler's caller's frame (leak scan) */
	/* A bounded log (MEMTRAIL_MAX_SIZE): its files, the header's start
	 * time and command line's length (each segment repeats them), and
	 * the current segment's bytes before its first event. */
	int ring;
	struct mt_segs segs;
	uint64_t start_rt;
	size_t cmdlen;
	uint64_t prologue;
	pthread_key_t exit_key; /* its destructor names a thread as it exits */
	int exit_key_ok;
} S = { .fd = -1 };

static char cmdline[MT_MAX_CMDLINE];

/*
 * The drainer process ("the drainer process" below): whether one runs, and
 * the words the program and it share. Like every static here, these are
 * in pages shared with it (share_statics).
 */
static struct {
	int on;                 /* a drainer process writes the log */
	int drains;             /* and drains the rings (the live table grew) */
	pid_t pid;              /* its pid, once it runs */
	uint32_t wake;          /* bumped for it: rings to drain, a call */
	uint32_t sleeping;      /* it waits on wake */
	uint32_t call, done;    /* the last call's number, the last one done */
	int (*fn)(void);        /* the call: run as its caller would, under its locks */
	uint64_t a[3];          /* its arguments */
	int ret, io_held;
	pid_t caller;           /* the calling thread */
	struct mt_tbuf *tb;     /* the caller's ring */
	int fatal;              /* the signal the program dies of, once known */
	uint32_t want;          /* program threads waiting for a lock */
	int ticks;              /* a thread of its own ticks (dr_ticker): the
				   program runs no helper thread */
	int finished;           /* the drainer ended its work (dr_main) */
	pthread_mutex_t life;   /* held by the drainer while it lives (robust) */
	pthread_mutex_t spare_life; /* held by the spare while it lives (robust) */
} DR;
/* Per process (thread-local: the drainer has one thread): this is it. */
static __thread int drainer_self __attribute__((tls_model("initial-exec")));
static __thread int drainer_in_call __attribute__((tls_model("initial-exec")));
/* In the drainer: the program's thread holding a lock died (exec or death). */
static __thread int drainer_orphan __attribute__((tls_model("initial-exec")));

static int statics_shared;     /* share_statics() made them shared */
static int share_statics(int shared);

/* A program's thread, its rings drained by a drainer process. */
static inline int remote(void)
{
	return MT_UNLIKELY(DR.on) && !drainer_self;
}

static void dr_serve(void);
static void dr_nap(void);
static void dr_lost(void);
static int dr_gone(void);

/*
 * A lock whose owner died: in the program, the drainer did (the program
 * drains again from now on); in the drainer, the program's thread holding
 * it execed or the program was killed.
 */
static void lk_owner_died(pthread_mutex_t *m)
{
	pthread_mutex_consistent(m);
	if (drainer_self)
		drainer_orphan = 1;
	else if (dr_gone())
		dr_lost();      /* (not while the spare lives: it takes the place) */
}

/*
 * The log lock is taken: the writer's events are undoable while a drainer
 * process holds it (a spare resumes the writer if it is killed), and not
 * in the program (nobody resumes a writer of a process that died).
 */
static inline void lk_mine(pthread_mutex_t *m)
{
	if (m == &log_lock && S.w)
		mt_writer_undo(S.w, drainer_self);
}

/*
 * The log and I/O locks. With a drainer they are shared with it and
 * robust. The drainer never blocks on one: the program's thread holding
 * it may be waiting for the drainer to run a call (dr_call).
 */
static void lk(pthread_mutex_t *m)
{
	int r;
	if (drainer_self) {
		while ((r = pthread_mutex_trylock(m)) == EBUSY) {
			dr_serve();
			dr_nap();
		}
	} else if (MT_UNLIKELY(DR.on)) {
		/* the drainer leaves the lock to us while we wait (dr_main):
		 * draining without pause, it would always take it first */
		__atomic_add_fetch(&DR.want, 1, __ATOMIC_SEQ_CST);
		r = pthread_mutex_lock(m);
		__atomic_sub_fetch(&DR.want, 1, __ATOMIC_SEQ_CST);
	} else {
		r = pthread_mutex_lock(m);
	}
	if (MT_UNLIKELY(r == EOWNERDEAD))
		lk_owner_died(m);
	lk_mine(m);
}

static int lk_try(pthread_mutex_t *m)
{
	int r = pthread_mutex_trylock(m);
	if (MT_UNLIKELY(r == EOWNERDEAD)) {
		lk_owner_died(m);
		r = 0;
	}
	if (r == 0)
		lk_mine(m);
	return r == 0 ? 0 : -1;
}

static int dr_call(int (*fn)(void), uint64_t a0, uint64_t a1, uint64_t a2);
static void dr_wake(void);

/* The drainer and its spare are gone: the program drains again from
 * now on, and the ticker went with them, so every event reads the clock
 * (tbuf.c). */
static void dr_lost(void)
{
	DR.on = 0;
	if (S.w)
		mt_writer_keep_io(S.w, 0);
	mt_tbuf_resume();
	/* (a tick it left is not reused anyway: tbuf.c, ticker_lives) */
	if (DR.ticks)
		mt_tbuf_tick_stop();
	/* No helper thread is started here: this may run inside a hooked
	 * free that glibc called holding a lock pthread_create takes (the
	 * stack cache's, from pthread_join). So chunks are written from now
	 * on as they fill, not by age: the spare is what keeps the flushes
	 * when one memtrail process is killed (dr_spare). */
}

/* remote(), and the drainer alive: if it is gone, the program drains
 * again from now on. */
static int remote_live(void)
{
	if (!remote())
		return 0;
	if (!dr_gone())
		return 1;
	dr_lost();
	return 0;
}

/* ---- small helpers ---------------------------------------------------------- */

char *mt_fmt_i64(char *buf, int64_t v)
{
	char tmp[24];
	size_t n = 0, o = 0;
	uint64_t u = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
	do {
		tmp[n++] = (char)('0' + u % 10);
		u /= 10;
	} while (u);
	if (v < 0)
		buf[o++] = '-';
	while (n)
		buf[o++] = tmp[--n];
	buf[o] = '\0';
	return buf;
}

/* A getdents64 entry, as the kernel writes it. */
struct mt_dirent64 {
	uint64_t ino;
	int64_t off;
	unsigned short reclen;
	unsigned char type;
	char name[];
};

/*
 * "/proc/self/" followed by rest, into out (64 bytes and rest): the
 * recorded process's, also from the drainer (/proc/PID/ there).
 */
static const char *proc_path(char *out, const char *rest)
{
	char num[24];
	size_t n;
	if (drainer_self) {
		memcpy(out, "/proc/", 6);
		const char *d = mt_fmt_i64(num, S.pid);
		n = strlen(d);
		memcpy(out + 6, d, n);
		n += 6;
		out[n++] = '/';
	} else {
		memcpy(out, "/proc/self/", 11);
		n = 11;
	}
	memcpy(out + n, rest, strlen(rest) + 1);
	return out;
}

int mt_each_task(long self, long skip, int (*fn)(void *ctx, long tid), void *ctx)
{
	char buf[4096], path[64];
	int fd = open(proc_path(path, "task"), O_RDONLY | O_DIRECTORY | O_CLOEXEC), rc = 0;

	if (fd < 0)
		return -1;
	while (rc == 0) {
		long n = syscall(SYS_getdents64, fd, buf, sizeof(buf));
		if (n <= 0) {
			rc = n < 0 ? -1 : 0;
			break;
		}
		for (long off = 0; off < n && rc == 0;) {
			struct mt_dirent64 *d = (struct mt_dirent64 *)(void *)(buf + off);
			long tid = 0;
			off += d->reclen;
			if (d->name[0] < '0' || d->name[0] > '9')
				continue;
			for (const char *c = d->name; *c >= '0' && *c <= '9'; c++)
				tid = tid * 10 + (*c - '0');
			if (tid != self && tid != skip)
				rc = fn(ctx, tid);
		}
	}
	close(fd);
	return rc;
}

void mt_say(const char *s, ...)
{
	char buf[1024];
	size_t n = 0;
	va_list ap;
	memcpy(buf, "memtrail: ", 10);
	n = 10;
	va_start(ap, s);
	for (const char *p = s; p; p = va_arg(ap, const char *)) {
		size_t l = strlen(p);
		if (l > sizeof(buf) - 1 - n)
			l = sizeof(buf) - 1 - n;
		memcpy(buf + n, p, l);
		n += l;
	}
	va_end(ap);
	buf[n++] = '\n';
	int saved = errno;
	ssize_t r = write(STDERR_FILENO, buf, n);
	(void)r;
	errno = saved;
}

static uint64_t mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/*
 * The event clock: CLOCK_MONOTONIC ns since start. clock_gettime costs ~28
 * ns here even through the vDSO, two per malloc/free pair; where the kernel
 * itself derives CLOCK_MONOTONIC from the TSC (clocksource "tsc": constant
 * and synchronized), the TSC is read instead and scaled by a ratio measured
 * against clock_gettime since start, re-anchored to a real clock_gettime
 * reading every millisecond, so a value is off by well under a microsecond.
 * Called with the log lock held. The writer keeps the log's time monotonic.
 */
static struct {
	int tsc;              /* use the TSC */
	uint64_t tsc0, ns0;   /* at start */
	uint64_t ref_tsc, ref_ns;
	uint64_t mult;        /* ns per tick, 32.32 fixed point; 0: not yet */
	uint64_t refresh;     /* ticks between anchors */
} clk;

#if defined(__x86_64__)
#include <x86intrin.h>

static void clock_init(void)
{
	char buf[16] = "";
	int fd = open("/sys/devices/system/clocksource/clocksource0/current_clocksource",
		      O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		ssize_t n = read(fd, buf, sizeof(buf) - 1);
		buf[n > 0 ? n : 0] = '\0';
		close(fd);
	}
	clk.tsc = strcmp(buf, "tsc\n") == 0;
	mt_rec_tsc = clk.tsc;
	clk.ns0 = clk.ref_ns = mono_ns();
	clk.tsc0 = clk.ref_tsc = __rdtsc();
}

static inline uint64_t now(void)
{
	if (!clk.tsc)
		return mono_ns() - S.t0;
	uint64_t tsc = __rdtsc();
	if (MT_UNLIKELY(tsc - clk.ref_tsc >= clk.refresh)) {
		uint64_t ns = mono_ns();
		tsc = __rdtsc();
		clk.ref_ns = ns;
		clk.ref_tsc = tsc;
		if (ns - clk.ns0 >= 1000000 && tsc > clk.tsc0) {
			clk.mult = (uint64_t)(((unsigned __int128)(ns - clk.ns0) << 32) /
					      (tsc - clk.tsc0));
			if (clk.mult)
				clk.refresh = (1000000ull << 32) / clk.mult;
		}
		return ns - S.t0;
	}
	return clk.ref_ns + (uint64_t)(((unsigned __int128)(tsc - clk.ref_tsc) * clk.mult) >> 32)
		- S.t0;
}

int mt_rec_tsc;

uint64_t mt_rec_stamp(void)
{
	return clk.tsc ? __rdtsc() : mono_ns() - S.t0;
}

/*
 * A reading of mt_rec_stamp() in the event clock (log lock held), against
 * the anchor now() last set: the drainer calls now() first, so readings
 * are at most a drain's age from it (an older one is scaled back).
 */
static inline __attribute__((always_inline)) uint64_t stamp_ns(uint64_t raw)
{
	if (!clk.tsc)
		return raw;
	if (!clk.mult)
		return clk.ref_ns - S.t0;
	if (raw >= clk.ref_tsc)
		return clk.ref_ns + (uint64_t)(((unsigned __int128)(raw - clk.ref_tsc) * clk.mult) >> 32)
			- S.t0;
	uint64_t back = (uint64_t)(((unsigned __int128)(clk.ref_tsc - raw) * clk.mult) >> 32);
	return clk.ref_ns - S.t0 > back ? clk.ref_ns - S.t0 - back : 0;
}
#else
static void clock_init(void)
{
}

static inline uint64_t now(void)
{
	return mono_ns() - S.t0;
}

uint64_t mt_rec_stamp(void)
{
	return mono_ns() - S.t0;
}

static uint64_t stamp_ns(uint64_t raw)
{
	return raw;
}
#endif

/* Stops recording (log lock held): says why, once. */
static void stop_locked(const char *what, const char *why)
{
	mt_rec_active = 0;
	if (!S.said) {
		S.said = 1;
		mt_say(what, why, "; recording stopped", NULL);
	}
}

/* io_lock, with the thread's note that it holds it (check() needs to know). */
static void io_take(void)
{
	lk(&io_lock);
	mt_tls.io_held = 1;
}

static int io_try(void)
{
	if (lk_try(&io_lock) != 0)
		return -1;
	mt_tls.io_held = 1;
	return 0;
}

static void io_give(void)
{
	mt_tls.io_held = 0;
	pthread_mutex_unlock(&io_lock);
}

/* END's figures as of now (log lock held). */
static const struct mt_totals *end_totals(void)
{
	S.tot.leaked_bytes = S.live->bytes;
	S.tot.leaked_blocks = mt_live_blocks(S.live);
	return &S.tot;
}

/*
 * The last records of a recording that stops early: STOP with the reason,
 * then END(STOPPED) with the figures so far, so that a replay says why the
 * log ends here and calls what was live then "live when recording stopped",
 * not leaked. Both locks held.
 */
static int put_stop_end(const char *why)
{
	uint64_t t = now();
	int err = mt_writer_stop(S.w, t, why);
	if (!err)
		err = mt_writer_end(S.w, t, MT_END_STOPPED, 0, end_totals());
	if (!err)
		err = io_flush();
	return err;
}

/*
 * Stops recording for a reason other than the log itself (log lock held,
 * io_lock not): the log is still writable, so it ends with STOP and END.
 */
static void stop_with_record(const char *why)
{
	if (!mt_rec_active)
		return;
	io_take();
	(void)put_stop_end(why);     /* stopping anyway */
	io_give();
	stop_locked(why, "");
}

/*
 * Checks a writer result (log lock held). A failed chunk write (a full
 * disk) stops the recording; the file is then cut back to its last whole
 * chunk and ended with STOP and END (usually a few dozen bytes, and the cut
 * gave back the failed chunk's room), so the log says why it stops there.
 */
static void check_failed(int err);
static int call_check_failed(void)
{
	check_failed((int)DR.a[0]);
	return 0;
}

static __attribute__((noinline)) void check_failed(int err)
{
	static char why[160];
	uint64_t off;

	if (!mt_rec_active)
		return;
	if (remote()) {      /* the file is the drainer's */
		(void)dr_call(call_check_failed, (uint64_t)(int64_t)err, 0, 0);
		return;
	}
	/* the writer's MT_E_ZSTD is compression's (mt_strerror says
	 * decompression, the readers' case) */
	const char *e = err == MT_E_IO ?
		strerror(S.w && mt_writer_errno(S.w) ? mt_writer_errno(S.w) : errno) :
		err == MT_E_ZSTD ? "zstd compression failed (out of memory)" : mt_strerror(err);
	stop_locked("cannot write the log: ", e);
	if (err != MT_E_IO && err != MT_E_ZSTD)
		return;
	int took = !mt_tls.io_held;
	if (took)
		io_take();
	if (mt_writer_recover(S.w, &off) == 0 &&
	    ftruncate(S.fd, (off_t)off) == 0 && lseek(S.fd, (off_t)off, SEEK_SET) == (off_t)off) {
		size_t n = strlen("cannot write the log: ");
		memcpy(why, "cannot write the log: ", n);
		strncpy(why + n, e, sizeof(why) - n - 1);
		(void)put_stop_end(why);
	}
	if (took)
		io_give();
}

static inline void check(int err)
{
	if (MT_UNLIKELY(err < 0))
		check_failed(err);
}

/*
 * Remembers thread idx's tid for END (log lock held). The table grows on
 * mmap'ed pages, as every table of the recorder; without room the thread
 * only goes unnamed.
 */
static void thread_remember(uint32_t idx, pid_t tid)
{
	if (idx >= S.thr_cap) {
		uint32_t cap = S.thr_cap ? 2 * S.thr_cap : 256;
		while (cap <= idx)
			cap *= 2;
		struct rec_thread *t = mt_mem_alloc((size_t)cap * sizeof(*t));
		if (!t)
			return;
		if (S.thr)
			memcpy(t, S.thr, (size_t)S.thr_cap * sizeof(*t));
		memset(t + S.thr_cap, 0, (size_t)(cap - S.thr_cap) * sizeof(*t));
		mt_mem_free(S.thr);
		S.thr = t;
		S.thr_cap = cap;
	}
	S.thr[idx].tid = tid;
	S.thr[idx].named = 0;
}

/*
 * The index in the current log of the thread whose ring th is; writes
 * THREAD when new (log lock held): numbered in the order of their first
 * recorded event, as the merged stream has it.
 */
static __attribute__((noinline)) uint32_t thread_index_new(struct mt_tbuf_thread *th, uint64_t t)
{
	uint32_t idx = S.nthreads++;
	th->gen = S.gen;
	th->idx1 = idx + 1;
	check(mt_writer_thread(S.w, t, idx, (uint32_t)th->tid));
	thread_remember(idx, th->tid);
	return idx;
}

static inline uint32_t thread_index(struct mt_tbuf_thread *th, uint64_t t)
{
	if (MT_LIKELY(th->gen == S.gen && th->idx1))
		return th->idx1 - 1;
	return thread_index_new(th, t);
}

/* A thread takes its first ring: the exit key's destructor will name it
 * (and free the ring for reuse). glibc keeps the values of the first 32
 * keys in the thread itself: setting one allocates nothing (a later key
 * could, so it is left unset). */
void mt_rec_thread_begin(void)
{
	if (S.exit_key_ok && S.exit_key < 32)
		(void)pthread_setspecific(S.exit_key, (void *)1);
}

void mt_rec_thread_drop(struct mt_tbuf_thread *th)
{
	mt_mem_free(th->gid);
	th->gid = NULL;
	th->gid_cap = 0;
}

/*
 * The name of thread tid (its comm, with no newline) into buf (at least
 * 32 bytes); 0, or -1 when the thread is gone. open/read only: no heap,
 * safe at thread exit and in a signal handler.
 */
static int read_comm(pid_t tid, char *buf, size_t size)
{
	char path[96], num[24], dir[64];
	size_t n = 0;
	const char *parts[] = { proc_path(dir, "task/"), mt_fmt_i64(num, tid), "/comm" };
	for (size_t i = 0; i < 3; i++) {
		size_t l = strlen(parts[i]);
		memcpy(path + n, parts[i], l);
		n += l;
	}
	path[n] = '\0';
	int saved = errno;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t got = fd < 0 ? -1 : read(fd, buf, size - 1);
	if (fd >= 0)
		close(fd);
	errno = saved;
	if (got <= 0)
		return -1;
	while (got > 0 && (buf[got - 1] == '\n' || buf[got - 1] == '\0'))
		got--;
	buf[got] = '\0';
	return 0;
}

/* THREAD_NAME for thread idx (log lock held); how: NAMED_*. */
static void thread_named(uint32_t idx, const char *name, int how)
{
	check(mt_writer_thread_name(S.w, now(), idx, name));
	if (idx < S.thr_cap)
		S.thr[idx].named = how;
}

/*
 * Before END (both locks held): the names of the threads that have not
 * exited, read while they still run. A thread gone without its exit key's
 * destructor (killed by a raw system call) has no comm left to read.
 */
static void name_running_threads(void)
{
	char name[64];
	uint32_t n = S.nthreads < S.thr_cap ? S.nthreads : S.thr_cap;
	for (uint32_t i = 0; i < n && mt_rec_active; i++)
		if (!S.thr[i].named && read_comm(S.thr[i].tid, name, sizeof(name)) == 0)
			thread_named(i, name, NAMED_END);
}

/* STACK for frames ips[0..n-1], outermost first (the log's are innermost first). */
static int write_stack(uint64_t t, uint32_t id, unsigned fn, uint32_t tag, const uint64_t *ips,
		       unsigned n)
{
	uint64_t in[MT_MAX_DEPTH];
	if (n > MT_MAX_DEPTH)
		n = MT_MAX_DEPTH;
	for (unsigned i = 0; i < n; i++)
		in[i] = ips[n - 1 - i];
	return mt_writer_stack(S.w, t, id, fn, tag, in, n);
}

/* The stack id of c, writing STACK when new; -1 on failure (stopped). */
static int64_t stack_id(const struct mt_capture *c, uint64_t t)
{
	int is_new;
	int64_t id = mt_stacks_intern(S.stacks, c, &is_new, NULL);
	if (id < 0) {
		stop_with_record("out of memory for the stack table");
		return -1;
	}
	if (is_new) {
		check(write_stack(t, (uint32_t)id, c->fn, c->tag, c->ips, c->n));
		/* A frame in no known module: something was loaded (dlopen).
		 * The hook rescans once the lock is released. */
		for (unsigned i = 0; i < c->n && !S.mod_dirty; i++)
			if (!mt_modules_known(S.mods, c->ips[i]))
				S.mod_dirty = 1;
	}
	return id;
}

/* ---- the log lock and the deferred chunk writes ------------------------------- */

static int fd_high(int fd);

/*
 * Is S.fd still our log? The hooks keep the program's close, close_range,
 * closefrom, dup2 and dup3 off it, but a raw system call can still close it
 * or put another file in its place: then the log is opened again by its
 * path (O_APPEND: after what was written) and taken only if it is the same
 * file, by device and inode, so a file planted meanwhile is never written.
 * Under io_lock.
 */
static int fd_ours(void)
{
	struct stat st;
	if (fstat(S.fd, &st) == 0 && st.st_dev == S.fd_dev && st.st_ino == S.fd_ino)
		return 1;
	int fd = open(S.ring ? S.segs.cur : S.cfg.output,
		      O_WRONLY | O_APPEND | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return 0;
	if (fstat(fd, &st) < 0 || st.st_dev != S.fd_dev || st.st_ino != S.fd_ino) {
		close(fd);
		return 0;
	}
	int fl = fcntl(fd, F_GETFL);
	if (fl >= 0)
		fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
	S.fd = fd_high(fd);     /* the old number is not ours: left alone */
	mt_writer_set_fd(S.w, S.fd);
	return 1;
}

/*
 * Runs fn where the log's file is: in the drainer if there is one (the
 * program holds no descriptor of the log; dr_call, log lock held), else
 * here.
 */
static int at_log(int (*fn)(void))
{
	return remote() ? dr_call(fn, 0, 0, 0) : fn();
}

/* The chunk writes, under io_lock: first check the descriptor. */
static int write_sealed_here(void)
{
	if (mt_writer_sealed_pending(S.w) && !fd_ours()) {
		errno = EBADF;
		return MT_E_IO;
	}
	return mt_writer_write_sealed(S.w);
}

static int flush_here(void)
{
	if ((mt_writer_sealed_pending(S.w) || mt_writer_pending(S.w)) && !fd_ours()) {
		errno = EBADF;
		return MT_E_IO;
	}
	return mt_writer_flush(S.w);
}

static int io_write_sealed(void)
{
	return at_log(write_sealed_here);
}

static int io_flush(void)
{
	return at_log(flush_here);
}

static void ring_rotate(void);

/*
 * A bounded log's segment is full (io_lock held): it passed its share of
 * the size, and holds a quarter of that in events beyond its first records
 * (so that a large stack table, which every segment repeats, does not make
 * each chunk begin a segment).
 */
static int ring_due(void)
{
	uint64_t n;

	if (MT_LIKELY(!S.ring))
		return 0;
	n = mt_writer_written(S.w);
	return n >= S.segs.target && n - S.prologue >= S.segs.target / 4;
}

/* Writes the sealed chunk (no log lock held); then, in a bounded log, the
 * next segment begins once this one is full. */
static void write_sealed(void)
{
	io_take();
	int err = io_write_sealed();
	if (err < 0)
		mt_writer_discard_sealed(S.w, err);
	int due = err == 0 && ring_due();
	io_give();
	if (MT_UNLIKELY(err < 0)) {
		lk(&log_lock);
		check(err);
		pthread_mutex_unlock(&log_lock);
	}
	if (MT_UNLIKELY(due))
		ring_rotate();
}

/* The writer's wait callback: a chunk filled while the previous one is
 * still being written (log lock held; the writer needs only io_lock,
 * which an end's drain and a leak check's LEAK records are written with
 * already: then the chunk is written here, under it). */
static void wait_sealed(void *ctx)
{
	int took = !mt_tls.io_held;
	(void)ctx;
	if (took)
		io_take();
	int err = io_write_sealed();
	/* Not our file any more (or the write failed): drop the chunk; the
	 * error is sticky, so the put that waits gets it and stops. */
	if (err < 0)
		mt_writer_discard_sealed(S.w, err);
	if (took)
		io_give();
}

/* Takes the log lock; the value goes to log_unlock. */
static inline uint64_t log_lock_take(void)
{
	lk(&log_lock);
	return S.w ? mt_writer_seals(S.w) : 0;
}

/*
 * Releases the log lock; then, outside it, writes the chunk this section
 * sealed, if any, and rescans the modules if a new stack asked for it.
 */
static inline void log_unlock(uint64_t seals)
{
	int sealed = S.w && mt_writer_seals(S.w) != seals;
	int dirty = S.mod_dirty;
	pthread_mutex_unlock(&log_lock);
	if (MT_UNLIKELY(sealed)) {
		if (remote())
			dr_wake();
		else
			write_sealed();
	}
	/* (modules are the program's: the drainer leaves the rescan to it) */
	if (MT_UNLIKELY(dirty) && !drainer_self)
		mt_rec_modules_changed(0);
}

static void drain(uint64_t upto, uint64_t wait_ns, int all);

/*
 * The exit key's destructor: the thread is exiting (pthread_exit or a
 * return from its start routine), after its thread_local destructors.
 * Its name is read now, while /proc still has it.
 */
static void thread_exit(void *v)
{
	struct mt_tls *tl = &mt_tls;
	char name[64];
	(void)v;
	if (!mt_rec_active || !tl->tb)
		return;
	tl->guard++;
	int named = read_comm(gettid(), name, sizeof(name)) == 0;
	uint64_t sl = log_lock_take();
	/* its own events first, for its index (others' in flight: 10 ms) */
	if (mt_rec_active)
		drain(mt_tbuf_key(), 10000000ull, 0);
	struct mt_tbuf_thread *th = mt_tbuf_thread_of_self();
	if (named && mt_rec_active && th && th->gen == S.gen && th->idx1)
		thread_named(th->idx1 - 1, name, NAMED_EXIT);
	mt_tbuf_exited();
	log_unlock(sl);
	tl->guard--;
}

/* ---- events ------------------------------------------------------------------ */

/*
 * Counts an allocation just written for END, with replay's definitions:
 * the peak is checked after every allocation (live bytes only fall
 * elsewhere) and keeps the first time it is reached, at the event's time
 * as the log has it.
 */
static inline void count_alloc(uint64_t size)
{
	uint64_t live = S.live->bytes;
	S.tot.allocations++;
	S.tot.bytes_allocated += size;
	if (live > S.tot.peak_bytes) {
		S.tot.peak_bytes = live;
		S.tot.peak_blocks = mt_live_blocks(S.live);
		S.tot.peak_time_ns = mt_writer_time(S.w);
	}
}

/*
 * Adds the block at addr to the live table; 0, or -1 when out of memory
 * (recording stops). An address still live means its free went unseen
 * (freed behind the hooks' back): its FREE is written first, so the log's
 * frees carry every block they end and a reader needs no table of its own.
 */
static __attribute__((noinline)) int live_add_odd(int rc, uint64_t t, uint32_t idx,
						    uint64_t addr, struct mt_block old)
{
	if (rc < 0) {
		stop_with_record("out of memory for the live-block table");
		return -1;
	}
	check(mt_writer_free_block(S.w, t, addr, old.size, old.stack, idx));
	S.tot.frees++;
	mt_sample_forget((void *)(uintptr_t)addr);
	return 0;
}

static inline void journal_note(int found, uint32_t val);

/* noting: the drainer's journal is told before the table changes
 * (journal_begin first). */
static inline __attribute__((always_inline)) int live_add(uint64_t t, uint32_t idx, uint64_t addr,
							 uint64_t size, uint32_t stack, int noting)
{
	struct mt_block b = { size, stack }, old = { 0, 0 };
	int rc = noting ? mt_live_add_noting(S.live, addr, b, &old, journal_note)
			: mt_live_add(S.live, addr, b, &old);

	return MT_LIKELY(rc == 0) ? 0 : live_add_odd(rc, t, idx, addr, old);
}

/*
 * The leak scan's sort of the live table, and its undoing (log lock held):
 * with a drainer, it sorts, so that the program touches only the blocks,
 * gathered at the table's start, not every slot (python3 bench: 23 MiB
 * more RSS in the program at exit, the scan sorting there).
 */
static int call_sort(void)
{
	return mt_livetab_sort(&S.live->tab, (int)DR.a[0]);
}

static int call_unsort(void)
{
	return mt_livetab_unsort(&S.live->tab);
}

int mt_rec_live_sort(struct mt_livetab *t, int back)
{
	if (remote())
		return dr_call(call_sort, (uint64_t)back, 0, 0);
	return mt_livetab_sort(t, back);
}

int mt_rec_live_unsort(struct mt_livetab *t)
{
	if (remote())
		return dr_call(call_unsort, 0, 0, 0);
	return mt_livetab_unsort(t);
}

/*
 * A thread's new stack (tbuf.c): with a drainer, a frame in no known
 * module is noticed here, in the program, whose loader's list the rescan
 * reads (the drainer's copy of it is the one of its start).
 */
void mt_rec_new_stack(const struct mt_capture *c)
{
	if (!remote() || !DR.drains)
		return;     /* (the program's own drains notice it) */
	for (unsigned i = 0; i < c->n; i++)
		if (!mt_modules_known(S.mods, c->ips[i])) {
			mt_rec_modules_changed(0);
			return;
		}
}

void mt_rec_alloc(const struct mt_capture *c, void *p, size_t size)
{
	mt_tbuf_alloc(c, p, size);
}

void mt_rec_free(void *p)
{
	mt_tbuf_free(p);
}

void *mt_rec_realloc(const struct mt_capture *c, void *p, size_t nmemb, size_t n)
{
	return mt_tbuf_realloc(c, p, nmemb, n);
}

/* ---- the merged stream (tbuf.c), log lock held ---------------------------------- */

/* Reallocs whose free half was taken and allocation half is still to come. */
static struct mt_tbuf_thread *pending;

/* The log's stack id of th's local stack lid; -1 if unknown (stopped). */
static inline int64_t gid_of(const struct mt_tbuf_thread *th, uint32_t lid)
{
	return lid < th->gid_cap && th->gid[lid] ? (int64_t)th->gid[lid] - 1 : -1;
}

static void gid_set(struct mt_tbuf_thread *th, uint32_t lid, int64_t id)
{
	if (id < 0)
		return;
	if (lid >= th->gid_cap) {
		uint32_t cap = th->gid_cap ? 2 * th->gid_cap : 1024;
		while (cap <= lid)
			cap *= 2;
		uint32_t *g = mt_mem_alloc((size_t)cap * sizeof(*g));
		if (!g) {
			stop_with_record("out of memory for the stack table");
			return;
		}
		if (th->gid)
			memcpy(g, th->gid, (size_t)th->gid_cap * sizeof(*g));
		memset(g + th->gid_cap, 0, (size_t)(cap - th->gid_cap) * sizeof(*g));
		mt_mem_free(th->gid);
		th->gid = g;
		th->gid_cap = cap;
	}
	th->gid[lid] = (uint32_t)id + 1;
}

/*
 * An allocation of addr comes: if addr is the old block of a realloc whose
 * allocation half is still to come (another thread got the address the
 * realloc released), that realloc's free half is written now, first.
 */
static void split_pending(uint64_t addr, struct mt_tbuf_thread *self, uint64_t t)
{
	for (struct mt_tbuf_thread *p = pending; p; p = p->pnext)
		if (p != self && p->pold == addr && p->pwas && !p->pfreed) {
			uint32_t idx = thread_index(p, t);
			check(mt_writer_free_block(S.w, t, addr, p->pblk.size, p->pblk.stack, idx));
			S.tot.frees++;
			p->pfreed = 1;
		}
}

/*
 * The live bytes as the log has them so far: the table's, plus the old
 * blocks of reallocs whose free half is taken but not yet written.
 */
static uint64_t live_bytes_logged(void)
{
	uint64_t n = S.live->bytes;
	for (struct mt_tbuf_thread *p = pending; p; p = p->pnext)
		if (p->pwas && !p->pfreed)
			n += p->pblk.size;
	return n;
}

static void pending_drop(struct mt_tbuf_thread *th)
{
	for (struct mt_tbuf_thread **pp = &pending; *pp; pp = &(*pp)->pnext)
		if (*pp == th) {
			*pp = th->pnext;
			break;
		}
	th->pending = 0;
}

const struct mt_livetab *mt_rec_prefetch_table(void)
{
	/* 1 MiB and more: beyond the L2 cache */
	return S.live && S.live->tab.cap * MT_LIVETAB_SLOT >= (1u << 20) ? &S.live->tab : NULL;
}

/*
 * The events of the merged stream. Recording stopped, they are dropped
 * (and a realloc's pending free half with them).
 */
void mt_rec_emit_stack(struct mt_tbuf_thread *th, uint32_t lid, const struct mt_capture *c)
{
	if (mt_rec_active && (lid >= th->gid_cap || !th->gid[lid]))
		gid_set(th, lid, stack_id(c, stamp_ns(0)));
}

/*
 * The event a drainer is emitting, as the live table had its address
 * before (drainer only). Its table change comes before its record; a
 * drainer killed between the two would leave a free lost (its block live
 * for good) or an allocation in the table with no record (drained again,
 * it would write the free of a block the log never had). The spare puts
 * the table back (emit_undo: a take cut off in its backward shift is
 * finished first, mt_livetab_mend, and the counts are as before) and
 * drains the event again. A record that
 * was committed (the writer's count moved) needs nothing; the figures
 * counted after it were not counted. wev: the writer's event count then,
 * UINT64_MAX from journal_begin until journal_note, which the table calls
 * just before it changes; an event that changes nothing (a free of an
 * address not live) leaves it so, and the spare drains it again as is.
 */
static struct {
	uint64_t wev;
	uint64_t key;           /* the event's (tbuf.c, handing) */
	uint64_t addr, bytes;
	size_t len, oddlen;     /* the table's counts (a take counts out first) */
	uint32_t val;
	int found;
	int is_free;
} ej = { UINT64_MAX, 0, 0, 0, 0, 0, 0, 0, 0 };

/* The event begun (drainer only): the table's counts before it; the
 * journal is not whole (wev) until journal_note. */
static inline void journal_begin(uint64_t addr, int is_free)
{
	ej.wev = UINT64_MAX;
	__asm__ volatile("" ::: "memory");
	ej.key = mt_tbuf_handing();
	ej.addr = addr;
	ej.is_free = is_free;
	ej.bytes = S.live->bytes;
	ej.len = S.live->tab.len;
	ej.oddlen = S.live->tab.oddlen;
}

/* What the table held at the event's address, told by the table just
 * before it changes (mt_live_add_noting, mt_live_remove_noting): the
 * journal is whole. An event that changes nothing leaves it unset, and
 * a spare drains it again as it is. */
static inline void journal_note(int found, uint32_t val)
{
	ej.found = found;
	ej.val = val;
	__asm__ volatile("" ::: "memory");
	ej.wev = mt_writer_events(S.w);
	__asm__ volatile("" ::: "memory");
}

/* In a spare taking over, both locks held, the writer resumed: the table
 * as before the event its drainer was cut off in (a wide record's block
 * excepted, and an allocation over a block whose free went unseen). */
static void emit_undo(void)
{
	uint32_t v;
	int now;

	if (ej.wev == UINT64_MAX)
		return;
	if (ej.wev != mt_writer_events(S.w)) {
		/* its record is in: not to be drained again (it was, when
		 * the drainer died before it counted it as handed out) */
		if (mt_writer_events(S.w) == ej.wev + 1 + (!ej.is_free && ej.found))
			mt_tbuf_handed(ej.key);
		ej.wev = UINT64_MAX;
		return;
	}
	/* a take cut off inside its backward shift left a block in two
	 * slots (the table is whole again after this) */
	if (ej.is_free && ej.found)
		(void)mt_livetab_mend(&S.live->tab, ej.addr);
	now = mt_livetab_get(&S.live->tab, ej.addr, &v);
	/* back: the table holds the blocks it held before the event (a
	 * free's block still in its slot was at most counted out) */
	int back = 0;
	if (ej.is_free && ej.found)
		back = now || (!(ej.val & MT_LIVETAB_WIDE) &&
			       mt_livetab_put(&S.live->tab, ej.addr, ej.val, &v) == 0);
	else if (!ej.is_free && !ej.found && now && !(v & MT_LIVETAB_WIDE))
		back = mt_livetab_take(&S.live->tab, ej.addr, &v);
	if (back) {
		S.live->bytes = ej.bytes;
		S.live->tab.len = ej.len;
		S.live->tab.oddlen = ej.oddlen;
	}
	ej.wev = UINT64_MAX;
}

void mt_rec_emit_alloc(struct mt_tbuf_thread *th, uint64_t time, uint64_t addr, uint64_t size,
		       uint32_t lid)
{
	if (MT_UNLIKELY(!mt_rec_active))
		return;
	uint64_t t = stamp_ns(time);
	int64_t id = gid_of(th, lid);
	uint32_t idx = thread_index(th, t);

	if (MT_UNLIKELY(pending != NULL))
		split_pending(addr, th, t);
	int added;
	if (drainer_self) {
		journal_begin(addr, 0);
		added = id >= 0 && live_add(t, idx, addr, size, (uint32_t)id, 1) == 0;
	} else {
		added = id >= 0 && live_add(t, idx, addr, size, (uint32_t)id, 0) == 0;
	}
	if (added) {
		check(mt_writer_alloc(S.w, t, addr, size, (uint32_t)id, idx));
		count_alloc(size);
	}
}

void mt_rec_emit_free(struct mt_tbuf_thread *th, uint64_t time, uint64_t addr)
{
	struct mt_block b;

	if (MT_UNLIKELY(!mt_rec_active))
		return;
	int taken;
	if (drainer_self) {
		journal_begin(addr, 1);
		taken = mt_live_remove_noting(S.live, addr, &b, journal_note);
	} else {
		taken = mt_live_remove(S.live, addr, &b);
	}
	if (taken) {
		uint64_t t = stamp_ns(time);
		uint32_t idx = thread_index(th, t);

		mt_sample_forget((void *)(uintptr_t)addr);
		check(mt_writer_free_block(S.w, t, addr, b.size, b.stack, idx));
		S.tot.frees++;
	}
}

void mt_rec_emit_realloc_free(struct mt_tbuf_thread *th, uint64_t time, uint64_t addr)
{
	(void)time;
	if (MT_UNLIKELY(!mt_rec_active))
		return;
	th->pwas = mt_live_remove(S.live, addr, &th->pblk);
	if (th->pwas)
		mt_sample_forget((void *)(uintptr_t)addr);
	th->pold = addr;
	th->pfreed = 0;
	th->pending = 1;
	th->pnext = pending;
	pending = th;
}

void mt_rec_emit_realloc_alloc(struct mt_tbuf_thread *th, uint64_t time, uint64_t p,
			       uint64_t r, uint64_t size, uint32_t lid)
{
	if (MT_UNLIKELY(!mt_rec_active)) {
		if (th->pending)
			pending_drop(th);
		return;
	}
	uint64_t t = stamp_ns(time);
	int was = th->pending && th->pwas && !th->pfreed;
	struct mt_block old = th->pblk;

	if (th->pending)
		pending_drop(th);
	uint32_t idx = thread_index(th, t);
	int64_t id = r && lid != MT_TB_NO_STACK ? gid_of(th, lid) : -1;
	if (r && MT_UNLIKELY(pending != NULL))
		split_pending(r, th, t);
	if (id >= 0 && live_add(t, idx, r, size, (uint32_t)id, 0) == 0) {
		if (was)
			check(mt_writer_realloc(S.w, t, p, old.size, old.stack, r, size, (uint32_t)id,
						idx));
		else
			check(mt_writer_alloc(S.w, t, r, size, (uint32_t)id, idx));
		S.tot.frees += (uint64_t)was;
		count_alloc(size);
	} else if (was && mt_rec_active) {
		check(mt_writer_free_block(S.w, t, p, old.size, old.stack, idx));
		S.tot.frees++;
	}
}

/*
 * Drains the rings (log lock held): tbuf.c merges, mt_rec_emit encodes.
 * The clock's anchor is brought up to date first (stamp_ns).
 */
static int call_drain(void)
{
	drain(DR.a[0], DR.a[1], (int)DR.a[2]);
	return 0;
}

/*
 * Who drains, with a drainer: the program's threads while the live table
 * is under DR_TABLE bytes, as without one (a thread drains its own ring
 * while its lines are in its cache: stl bench, CPU beyond native 1.29 s
 * draining in the program, 1.67 s in the drainer), then the drainer, so
 * the program's RSS never holds more of the table than that: the pages
 * the program touched leave its RSS then. Also once DR_SHARED drains
 * found events of several threads: each thread drains on its own core,
 * so the table, the writer and the rings' lines went from core to core
 * with the draining turn; the drainer keeps them on one (churn, 8
 * threads on 2 cores, 5 interleaved runs: 4.25 -> 3.74 s CPU; 1 thread:
 * 2.38 -> 2.93 s, which this leaves in the program). (The drainer
 * compresses and writes either way.)
 */
#define DR_TABLE ((size_t)4 << 20)
#define DR_SHARED 64

/*
 * The drainer drains from now on: the rings, the live table and the
 * writer's buffers are its to fill, not the program's, and are sized for
 * that (larger rings, a table that doubles, buffers kept while busy).
 */
static void dr_drains_tables(void)
{
	mt_tbuf_big_rings();
	mt_live_doubling(S.live);
	mt_writer_keep_full(S.w);
}

static void drain(uint64_t upto, uint64_t wait_ns, int all)
{
	if (remote() && DR.drains) {
		(void)dr_call(call_drain, upto, wait_ns, (uint64_t)all);
		return;
	}
	(void)now();
	mt_tbuf_drain(upto, wait_ns, all);
	if (MT_UNLIKELY(remote()) && S.live &&
	    (mt_livetab_bytes(&S.live->tab) >= DR_TABLE || mt_tbuf_shared() >= DR_SHARED)) {
		DR.drains = 1;
		dr_drains_tables();
		/* what draining touched here (the table, the writer's
		 * buffers) leaves the program's RSS; its own rings and
		 * stack tables come back as they are used */
		mt_arena_unmap();
	}
}

/* Every event before now, waiting for those in flight (a snapshot's). */
static void drain_before_now(void)
{
	drain(mt_tbuf_key(), 1000000000ull, 0);
}

void mt_rec_drain_now(void)
{
	if (DR.drains && remote_live()) {   /* the caller waits a little, and asks again */
		dr_wake();
		return;
	}
	uint64_t sl = log_lock_take();
	drain(0, 0, 0);
	log_unlock(sl);
}

/*
 * A ring is half full: its thread drains every ring if nobody else is at
 * it. (Waking the helper thread to drain instead cost more CPU time than
 * it moved off the program's threads: a context switch every few hundred
 * events, and the rings' lines moving between cores.)
 */
void mt_rec_drain_wanted(void)
{
	if (DR.drains && remote_live()) {
		dr_wake();
		return;
	}
	if (lk_try(&log_lock) != 0)
		return;
	uint64_t seals = S.w ? mt_writer_seals(S.w) : 0;
	drain(0, 0, 0);
	log_unlock(seals);
}

void mt_rec_stop_nomem(const char *why, int locked)
{
	uint64_t sl = 0;
	if (!locked)
		sl = log_lock_take();
	stop_with_record(why);
	if (!locked)
		log_unlock(sl);
}

/* ---- a bounded log's segments (MEMTRAIL_MAX_SIZE) ----------------------------- */

static int ring_stack(void *ctx, uint32_t id, unsigned fn, uint32_t tag, const uint64_t *ips,
		      unsigned n)
{
	(void)ctx;
	return write_stack(now(), id, fn, tag, ips, n);
}

/*
 * A segment's first records (format.h BASE), both locks held: what a
 * reader that starts here needs of the run so far. Every module loaded,
 * tag path, thread index and stack (ids from 0, as the events name them),
 * then BASE: each stack's live blocks (with the old blocks of reallocs
 * whose free half is not written yet, as the log has them live) and END's
 * figures so far. Memory from mmap: no heap, as everywhere here.
 */
static int ring_prologue(uint64_t t)
{
	size_t n = mt_stacks_count(S.stacks), k = 0;
	uint64_t *bytes = NULL, *blocks = NULL;
	struct mt_base_entry *e = NULL;
	int err;

	err = mt_modules_emit_known(S.mods, S.w, t);
	if (!err && S.tags)
		err = mt_tags_emit(S.tags, S.w, t);
	for (uint32_t i = 0; !err && i < S.nthreads; i++)
		err = mt_writer_thread(S.w, t, i, i < S.thr_cap ? (uint32_t)S.thr[i].tid : 0);
	if (!err)
		err = mt_stacks_each(S.stacks, ring_stack, NULL);
	if (err)
		return err < 0 ? err : MT_E_NOMEM;
	bytes = mt_mem_alloc((n ? n : 1) * sizeof(*bytes));
	blocks = mt_mem_alloc((n ? n : 1) * sizeof(*blocks));
	e = mt_mem_alloc((n ? n : 1) * sizeof(*e));
	if (!bytes || !blocks || !e) {
		err = MT_E_NOMEM;
		goto out;
	}
	mt_live_by_stack(S.live, bytes, blocks);
	for (struct mt_tbuf_thread *p = pending; p; p = p->pnext)
		if (p->pwas && !p->pfreed && p->pblk.stack < n) {
			bytes[p->pblk.stack] += p->pblk.size;
			blocks[p->pblk.stack]++;
		}
	for (size_t i = 0; i < n; i++)
		if (blocks[i]) {
			e[k].stack = (uint32_t)i;
			e[k].bytes = bytes[i];
			e[k].blocks = blocks[i];
			k++;
		}
	err = mt_writer_base(S.w, t, e, k, &S.tot);
out:
	mt_mem_free(bytes);
	mt_mem_free(blocks);
	mt_mem_free(e);
	return err;
}

/*
 * Ends the segment being written at a chunk boundary and begins the next
 * (both locks held): its header, its first records, then the oldest
 * segments go while the ring passes its size. A segment that cannot be
 * created ends the recording (STOP and END in the segment that was full).
 */
static int ring_next(void)
{
	static char why[160];
	struct stat st;
	int err = io_flush();

	if (err)
		return err;
	S.segs.size[S.segs.last % MT_SEGS_KEEP] = mt_writer_written(S.w);
	int fd = mt_segs_open_next(&S.segs);
	if (fd < 0) {
		const char *e = strerror(errno);
		size_t l = strlen("cannot begin the log's next segment: ");

		memcpy(why, "cannot begin the log's next segment: ", l);
		strncpy(why + l, e, sizeof(why) - l - 1);
		(void)put_stop_end(why);
		stop_locked(why, "");
		return 0;
	}
	fd = fd_high(fd);
	if (fstat(fd, &st) == 0) {
		S.fd_dev = st.st_dev;
		S.fd_ino = st.st_ino;
	}
	int old = S.fd;
	__atomic_store_n(&S.fd, fd, __ATOMIC_RELAXED);
	close(old);
	mt_writer_new_file(S.w, fd);
	uint64_t t = now();
	err = mt_writer_header(S.w, (uint32_t)S.pid, S.start_rt, cmdline, S.cmdlen);
	if (!err)
		err = ring_prologue(t);
	if (!err)
		err = io_flush();
	S.prologue = mt_writer_written(S.w);
	mt_segs_trim(&S.segs, S.prologue);
	return err;
}

/* A segment is full (no lock held): the next one begins, unless another
 * thread began it meanwhile. */
static void ring_rotate(void)
{
	uint64_t sl = log_lock_take();

	if (mt_rec_active && S.ring && !S.exec_pending) {
		io_take();
		int err = ring_due() ? ring_next() : 0;
		io_give();
		check(err);
	}
	log_unlock(sl);
}

/* ---- snapshots ---------------------------------------------------------------- */

static void take_snapshot(const char *label)
{
	char a[24], b[24], c[24];
	uint32_t idx;
	uint64_t live;
	int64_t delta;

	mt_tls.guard++;
	uint64_t sl = log_lock_take();
	if (!mt_rec_active) {
		log_unlock(sl);
		mt_tls.guard--;
		return;
	}
	drain_before_now();
	idx = S.nsnap++;
	live = live_bytes_logged();
	delta = (int64_t)(live - S.prev_live);
	S.prev_live = live;
	check(mt_writer_snapshot(S.w, now(), idx, label ? label : ""));
	log_unlock(sl);
	mt_fmt_i64(a, idx);
	mt_fmt_i64(b, (int64_t)live);
	mt_fmt_i64(c, delta);
	mt_say("snapshot ", a, ": ", b, " bytes (", delta >= 0 ? "+" : "", c, ")", NULL);
	mt_tls.guard--;
}

/* The in-program API (include/memtrail.h binds to it weakly). */
MT_EXPORT void memtrail_snapshot_impl(const char *label)
{
	mt_rec_init();
	/* Called from a signal handler that interrupted one of our hooks on
	 * this thread (which may hold the log lock): skip, never deadlock. */
	if (mt_tls.guard)
		return;
	take_snapshot(label);
}

/*
 * The same under the names of the API itself, for programs that do not
 * include memtrail.h: the original memtrail's header looks
 * "memtrail_snapshot" up with dlsym(RTLD_DEFAULT), and programs declare
 * `void memtrail_snapshot(void) __attribute__((weak));` themselves. No
 * clash with memtrail.h, whose functions of these names are static inline:
 * a program that includes it calls its own copies, which call
 * memtrail_snapshot_impl.
 */
MT_EXPORT void memtrail_snapshot(void)
{
	memtrail_snapshot_impl("");
}

MT_EXPORT void memtrail_snapshot_named(const char *label)
{
	memtrail_snapshot_impl(label ? label : "");
}

uint32_t mt_rec_tag(uint32_t parent, const char *name)
{
	uint32_t id = parent;
	int is_new;

	mt_tls.guard++;
	uint64_t sl = log_lock_take();
	if (mt_rec_active && S.tags) {
		int64_t r = mt_tags_intern(S.tags, parent, name, &is_new);

		if (r > 0) {
			id = (uint32_t)r;
			if (is_new)
				check(mt_tags_write(S.tags, S.w, now(), id));
		}
	}
	log_unlock(sl);
	mt_tls.guard--;
	return id;
}

/*
 * The helper thread's id: 0 when there is none, -1 when it has not
 * published it within a second (it does when it first runs; a process
 * may get here before that).
 */
static long helper_id(void)
{
	struct timespec nap = { 0, 1000000 };
	long helper = 0;

	if (!S.helper_on)
		return 0;
	for (int i = 0; i < 1000 && !(helper = __atomic_load_n(&S.helper_tid, __ATOMIC_ACQUIRE)); i++)
		nanosleep(&nap, NULL);
	return helper ? helper : -1;
}

/* The LEAK records of a check (mt_leakscan's lost), all at the time the
 * first is written (*t, 0 before it): the scan's end. */
static void put_leak(void *t, const struct mt_leak_entry *e, size_t n, int more,
		     const struct mt_leak_totals *tot)
{
	if (!*(uint64_t *)t)
		*(uint64_t *)t = now();
	check(mt_writer_leak(S.w, *(uint64_t *)t, e, n, more, tot));
}

/*
 * A snapshot that also classifies what is live then (leakscan.c), as
 * valgrind's VALGRIND_DO_LEAK_CHECK does: SNAPSHOT, then the LEAK
 * records. Both locks are held across the scan: a thread parked while it
 * writes a chunk would leave the writer waiting for it. own_sp: the
 * calling thread's stack is a root from there up; 0 (the helper thread,
 * for the leak-check signal): its stack is not the program's.
 */
static void take_check(const char *label, uintptr_t own_sp)
{
	struct mt_leakscan_result res;
	char a[24], b[24], k[MT_LEAK_KINDS][24];
	uint64_t seals, live;
	uint32_t idx;
	long helper = 0;
	uint64_t t = 0;
	int ok, rc;

	mt_tls.guard++;
	lk(&log_lock);
	io_take();
	if (!mt_rec_active) {
		io_give();
		pthread_mutex_unlock(&log_lock);
		mt_tls.guard--;
		return;
	}
	seals = mt_writer_seals(S.w);
	drain_before_now();
	idx = S.nsnap++;
	live = live_bytes_logged();
	S.prev_live = live;
	check(mt_writer_snapshot(S.w, now(), idx, label ? label : ""));
	if (own_sp)
		helper = helper_id();
	rc = helper >= 0 ? mt_leakscan(S.live, own_sp, helper, mt_real.malloc_usable_size,
				       put_leak, &t, 1, &res) : -1;
	ok = rc == 0;
	if (ok) {
		for (int i = 0; i < MT_LEAK_KINDS; i++)
			mt_fmt_i64(k[i], (int64_t)res.tot.bytes[i]);
	}
	io_give();
	if (rc == -2)
		stop_with_record("out of memory for the live-block table");
	pthread_mutex_unlock(&log_lock);
	if (S.w && mt_writer_seals(S.w) != seals)
		write_sealed();
	mt_fmt_i64(a, idx);
	mt_fmt_i64(b, (int64_t)live);
	if (ok)
		mt_say("leak check ", a, ": ", b, " bytes live: ", k[0], " definitely lost, ", k[1],
		       " indirectly lost, ", k[2], " possibly lost, ", k[3], " still reachable", NULL);
	else
		mt_say("leak check ", a, ": ", b, " bytes live, not classified", NULL);
	mt_tls.guard--;
}

/*
 * The in-program API's leak check (include/memtrail.h). The calling
 * thread's roots: its stack from this frame up, which holds the caller's
 * callee-saved registers where this function saved them, and those
 * registers as they are now, copied into a local first. Caller-saved
 * registers are dead at a call (the ABI), and scanning them would find
 * whatever pointer a callee last left there.
 */
MT_EXPORT __attribute__((noinline)) void memtrail_leak_check_impl(const char *label)
{
	uint64_t regs[12] = { 0 };

	mt_rec_init();
	if (mt_tls.guard)
		return;
#if defined(__x86_64__)
	__asm__ volatile("mov %%rbx, 0(%0)\n\tmov %%rbp, 8(%0)\n\tmov %%r12, 16(%0)\n\t"
			 "mov %%r13, 24(%0)\n\tmov %%r14, 32(%0)\n\tmov %%r15, 40(%0)"
			 : : "r"(regs) : "memory");
#elif defined(__aarch64__)
	__asm__ volatile("stp x19, x20, [%0]\n\tstp x21, x22, [%0, #16]\n\t"
			 "stp x23, x24, [%0, #32]\n\tstp x25, x26, [%0, #48]\n\t"
			 "stp x27, x28, [%0, #64]\n\tstp x29, x30, [%0, #80]"
			 : : "r"(regs) : "memory");
#endif
	take_check(label, (uintptr_t)regs);
	__asm__ volatile("" : : "r"(regs) : "memory");
}

static void on_snapshot_signal(int sig)
{
	int saved = errno;
	/* the leak-check signal: the helper makes the check */
	if (sig == S.cfg.leak_check_signal)
		__atomic_store_n(&S.check_pending, 1, __ATOMIC_RELEASE);
	sem_post(&S.snap_sem);
	errno = saved;
}

/*
 * The helper thread, in the program only where there is no drainer
 * process or where snapshots by signal or interval, or leak checks by
 * signal, are asked for (helper_has_work; otherwise the drainer ticks and
 * flushes, and the program runs no thread of ours: dr_ticker says why).
 * It takes the snapshots asked for by signal or interval
 * (a signal handler only posts the semaphore), and ends the chunk being
 * built once its first record is FLUSH_AGE old, so that a program gone
 * idle, or blocked in a system call for good, has its events on disk
 * within about a second: checked every FLUSH_EVERY, a record waits at most
 * FLUSH_AGE + FLUSH_EVERY (plus the write) before a SIGKILL can no longer
 * take it. A busy program fills its chunks before that; this costs it one
 * uncontended lock five times a second. All signals are blocked here (from
 * creation on, see start_helper), so the program's signals never land on
 * this thread.
 */
#define FLUSH_EVERY_NS  200000000ull
#define FLUSH_AGE_NS    400000000ull

/* Log lock held: every event so far, the rings of threads gone freed, and
 * the chunk being built sealed if it is old. */
static void flush_locked(void)
{
	drain(0, 0, 0);
	mt_tbuf_recycle(S.pid);
	if (mt_rec_active)
		check(mt_writer_seal_old(S.w, now(), FLUSH_AGE_NS));
}

static void flush_old(void)
{
	if (remote_live())
		return;       /* the drainer's job */
	uint64_t sl = log_lock_take();
	flush_locked();
	log_unlock(sl);          /* writes what was sealed, outside the lock */
}

/*
 * Before a job of the helper that may take long (a leak scan, a snapshot,
 * a wait for the log lock: seconds, in which the tick would stand still
 * and the threads' events keep a reading from before): the tick stops,
 * every event reads the clock, and the next pass ticks again at once.
 */
static void tick_hold(uint64_t *next_tick)
{
	mt_tbuf_tick_stop();
	*next_tick = 0;
}

static void *helper_main(void *arg)
{
	uint64_t next_snap = 0, next_flush, next_tick, wake;
	(void)arg;
	mt_tls.guard = 1;
	__atomic_store_n(&S.helper_tid, (long)gettid(), __ATOMIC_RELEASE);
	if (S.cfg.snapshot_interval_ns)
		next_snap = mono_ns() + S.cfg.snapshot_interval_ns;
	next_flush = mono_ns() + FLUSH_EVERY_NS;
	next_tick = mono_ns() + (mt_tbuf_tick() ? MT_TICK_NS : MT_TICK_IDLE_NS);
	for (;;) {
		wake = next_snap && next_snap < next_flush ? next_snap : next_flush;
		if (next_tick < wake)
			wake = next_tick;
		struct timespec ts = { (time_t)(wake / 1000000000ull),
				       (long)(wake % 1000000000ull) };
		__atomic_store_n(&S.helper_busy, 0, __ATOMIC_RELEASE);
		int r = sem_clockwait(&S.snap_sem, CLOCK_MONOTONIC, &ts);
		int e = errno;
		__atomic_store_n(&S.helper_busy, 1, __ATOMIC_RELEASE);
		if (!mt_rec_active) {
			mt_tbuf_tick_stop();
			return NULL;
		}
		uint64_t n = mono_ns();
		if (n >= next_tick)
			next_tick = n + (mt_tbuf_tick() ? MT_TICK_NS : MT_TICK_IDLE_NS);
		if (r == 0) {
			tick_hold(&next_tick);
			if (__atomic_exchange_n(&S.check_pending, 0, __ATOMIC_ACQ_REL))
				take_check("leak check", 0);
			else
				take_snapshot("signal");
			continue;
		}
		if (e != ETIMEDOUT)
			continue;
		if (next_snap && n >= next_snap) {
			tick_hold(&next_tick);
			take_snapshot("interval");
			next_snap += S.cfg.snapshot_interval_ns;
			if (next_snap < n)   /* fell behind (stopped process): skip */
				next_snap = n + S.cfg.snapshot_interval_ns;
		}
		if (n >= next_flush) {
			if (!remote_live())     /* flush_old waits for the log lock */
				tick_hold(&next_tick);
			flush_old();
			next_flush = n + FLUSH_EVERY_NS;
		}
	}
}

/* What only a helper thread in the program can do is asked for. */
static int helper_has_work(void)
{
	return S.cfg.snapshot_signal || S.cfg.leak_check_signal || S.cfg.snapshot_interval_ns;
}

static void start_helper(void)
{
	pthread_t th;
	pthread_attr_t at;
	sigset_t all, old;
	if (sem_init(&S.snap_sem, 0, 0) < 0)
		return;
	S.helper_tid = 0;
	/* one handler for both: it tells them apart by the signal */
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_snapshot_signal;
	sa.sa_flags = SA_RESTART;
	sigemptyset(&sa.sa_mask);
	if (S.cfg.snapshot_signal)
		sigaction(S.cfg.snapshot_signal, &sa, NULL);
	if (S.cfg.leak_check_signal && S.cfg.leak_check_signal != S.cfg.snapshot_signal)
		sigaction(S.cfg.leak_check_signal, &sa, NULL);
	/* The thread starts with every signal blocked: none of the
	 * program's may be delivered to it, not even before it runs. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	pthread_attr_init(&at);
	pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
	pthread_attr_setstacksize(&at, 256 * 1024);
	if (pthread_create(&th, &at, helper_main, NULL) == 0)
		S.helper_on = 1;
	pthread_attr_destroy(&at);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
}

/* ---- the drainer process -------------------------------------------------------- */

/*
 * The chunks are compressed and written by a process of memtrail's own,
 * the drainer; once the live table passes DR_TABLE (from the start for a
 * bounded log) it also drains the rings and keeps the live table and the
 * log's stack table. The live
 * table holds some 15 bytes for each live block (30 MiB for python3's 2
 * million), which counted in the program's RSS before; in the drainer it
 * counts in the drainer's. (python3 bench, max RSS: native 129.6 MiB,
 * heaptrack -r 132.9, memtrail draining in the program 165.7, with the
 * drainer 132.0; the drainer peaks at about 38.)
 *
 * How: every static of this library (share_statics) and every table
 * (tables.c's arena) is in memory mapped MAP_SHARED before the drainer is
 * cloned, so both processes find the same state at the same addresses,
 * and the code that drains is the same in both. The log and I/O locks
 * are process-shared and robust. The program's threads write their rings
 * and stack tables as before, and, once the drainer drains, wake it (a
 * futex) when a ring is half full. What only the program can do (leak checks, which read
 * its memory; module scans, which read its loader's list; thread names;
 * snapshots) it still does under the log lock, and what touches the file
 * or the big tables it asks the drainer to run for it (dr_call): the
 * program keeps no descriptor of the log at all.
 *
 * The drainer is not the program's child: an intermediate clone, which
 * ends at once and is reaped with __WCLONE (a program's wait() passes it
 * over), starts it, so it goes to the nearest subreaper: `memtrail record`,
 * which waits for it after the program (its CPU time counts as the run's),
 * or init. It calls setsid, blocks every signal, names itself
 * memtrail-drain, and keeps no descriptor but the log, stderr and a pidfd
 * of the program.
 *
 * Ends: exit, _exit, fatal signals and exec write END in the program, as
 * before, the drainer running the writes; then it ends. A program killed
 * (SIGKILL) loses nothing: the pidfd tells the drainer, which drains what
 * the rings hold and writes END(SIGNAL 9). A successful exec ends the
 * thread that holds the log lock across it: the robust lock tells the
 * drainer. If the drainer dies, its spare takes its place (dr_spare);
 * with both gone, the robust locks tell the program, which drains again
 * itself.
 *
 * Not with MEMTRAIL_DRAINER=0, nor where it cannot start: no shared
 * memory, no pidfd (Linux before 5.3), a clone refused, threads already
 * running when the library starts (the statics cannot be copied safely
 * then), or a program that is a subreaper (it would inherit the
 * drainer). Not in a vfork child (it shares the parent's memory anyway).
 * A child made by a raw clone system call without CLONE_VM (not fork())
 * would share the parent's rings: unsupported. A forked child copies the
 * statics and the arena's kept ranges (tables.c) before anything else,
 * and starts a drainer of its own if it follows.
 */
#include <linux/futex.h>
#include <link.h>
#include <poll.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>

static long futex(uint32_t *w, int op, uint32_t v, const struct timespec *ts)
{
	return syscall(SYS_futex, w, op, v, ts, NULL, 0);
}

static void dr_wake(void)
{
	__atomic_add_fetch(&DR.wake, 1, __ATOMIC_SEQ_CST);
	if (__atomic_load_n(&DR.sleeping, __ATOMIC_SEQ_CST))
		futex(&DR.wake, FUTEX_WAKE, 1, NULL);
}

/* Is the drainer gone? (Its life lock: robust, so its death frees it.)
 * Not while its spare lives: that takes its place (and the lock). */
static int dr_gone(void)
{
	if (mt_robust_held(&DR.spare_life))
		return 0;
	int r = pthread_mutex_trylock(&DR.life);
	if (r == EBUSY)
		return 0;
	if (r == EOWNERDEAD)
		pthread_mutex_consistent(&DR.life);
	return 1;     /* kept: nobody else takes it */
}

/*
 * Runs fn in the drainer as this thread would run it here: this thread
 * holds the log lock (so the drainer is not draining, and calls come one
 * at a time), and fn sees this thread's io_held and ring. Arguments go
 * in DR.a. Waits for it; the drainer gone, the program drains from now
 * on and fn runs here.
 */
static int dr_call(int (*fn)(void), uint64_t a0, uint64_t a1, uint64_t a2)
{
	struct timespec to = { 0, 20000000 };
	uint32_t seq, d;

	DR.fn = fn;
	DR.a[0] = a0;
	DR.a[1] = a1;
	DR.a[2] = a2;
	DR.io_held = mt_tls.io_held;
	DR.tb = mt_tls.tb;
	DR.caller = (pid_t)syscall(SYS_gettid);
	seq = __atomic_add_fetch(&DR.call, 1, __ATOMIC_SEQ_CST);
	dr_wake();
	while ((d = __atomic_load_n(&DR.done, __ATOMIC_ACQUIRE)) != seq) {
		if (dr_gone()) {
			dr_lost();
			__atomic_store_n(&DR.done, seq, __ATOMIC_RELEASE);
			return fn();
		}
		futex(&DR.done, FUTEX_WAIT, d, &to);
	}
	return DR.ret;
}

/* In the drainer: runs the call waiting, if any. */
static void dr_serve(void)
{
	uint32_t c = __atomic_load_n(&DR.call, __ATOMIC_ACQUIRE);
	if (c == __atomic_load_n(&DR.done, __ATOMIC_RELAXED) || drainer_in_call)
		return;
	int io = mt_tls.io_held;
	struct mt_tbuf *tb = mt_tls.tb;
	drainer_in_call = 1;
	mt_tls.io_held = DR.io_held;
	mt_tls.tb = DR.tb;
	/* its records undoable, as the drainer's own (a spare resumes the
	 * writer if this process dies inside one) */
	if (S.w)
		mt_writer_undo(S.w, 1);
	/* none once recording stopped: a call the drainer died in may be
	 * one that found the tables not whole (dr_spare) */
	DR.ret = mt_rec_active ? DR.fn() : -1;
	if (S.w)
		mt_writer_undo(S.w, 0);
	mt_tls.io_held = io;
	mt_tls.tb = tb;
	drainer_in_call = 0;
	__atomic_store_n(&DR.done, c, __ATOMIC_RELEASE);
	futex(&DR.done, FUTEX_WAKE, INT32_MAX, NULL);
}

/* In the drainer: waits for a wake-up, at most ns. */
static void dr_wait(uint64_t ns)
{
	struct timespec to = { (time_t)(ns / 1000000000ull), (long)(ns % 1000000000ull) };
	uint32_t seq = __atomic_load_n(&DR.wake, __ATOMIC_SEQ_CST);
	__atomic_store_n(&DR.sleeping, 1, __ATOMIC_SEQ_CST);
	if (__atomic_load_n(&DR.call, __ATOMIC_SEQ_CST) == __atomic_load_n(&DR.done, __ATOMIC_RELAXED))
		futex(&DR.wake, FUTEX_WAIT, seq, &to);
	__atomic_store_n(&DR.sleeping, 0, __ATOMIC_SEQ_CST);
}

/* Between tries of a lock the program holds (it wakes us for a call). */
static void dr_nap(void)
{
	dr_wait(1000000);
}

static int program_gone(int pidfd)
{
	struct pollfd pf = { pidfd, POLLIN, 0 };
	return poll(&pf, 1, 0) > 0;
}

/*
 * The program ended without writing END (SIGKILL, or an exec whose END is
 * written): everything in the rings goes to the log, then END(SIGNAL) with
 * the signal it died of (SIGKILL: the one no handler sees). Lock held.
 */
static void dr_orphaned(void)
{
	if (S.exec_pending)
		return;       /* END(EXEC) is written: the exec went through (or
			       * the program died in it) */
	if (!mt_rec_active)
		return;
	io_take();
	drain(mt_tbuf_key(), 0, 1);
	if (mt_rec_active) {
		int sig = DR.fatal ? DR.fatal : SIGKILL;
		check(mt_writer_end(S.w, now(), MT_END_SIGNAL, sig, end_totals()));
		check(io_flush());
		mt_rec_active = 0;
	}
	io_give();
}

#define DR_POLL_NS 20000000ull

/*
 * In the drainer, a thread of its own: the ticks (tbuf.c, "Times") that
 * the program's helper thread gives where there is one. Ticking from here
 * is what lets the program run no thread of ours: a second thread makes
 * glibc take its arena lock in every malloc and free that misses the
 * thread's cache, lock stdio and count shared pointers atomically, for
 * the rest of the run (stl bench, perf: glibc's malloc and free had about
 * 1,000 samples more, some 15 % of all the recorder added). It ticks only
 * while the program counts on it (DR.on: once the program saw the drainer
 * start, until it sees it gone) and stops at the end of the recording.
 */
static void *dr_ticker(void *arg)
{
	uint64_t next = mono_ns();
	(void)arg;
	drainer_self = 1;
	mt_tls.guard = 1;
	for (;;) {
		if (!mt_rec_active) {
			mt_tbuf_tick_stop();
			return NULL;
		}
		uint64_t n = mono_ns();
		if (n >= next) {
			int on = __atomic_load_n(&DR.on, __ATOMIC_ACQUIRE);
			next = n + (on && mt_tbuf_tick() ? MT_TICK_NS : MT_TICK_IDLE_NS);
		}
		struct timespec ts = { (time_t)(next / 1000000000ull),
				       (long)(next % 1000000000ull) };
		clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
	}
}

static void dr_start_ticker(void)
{
	pthread_t th;
	pthread_attr_t at;

	if (!DR.ticks)
		return;
	pthread_attr_init(&at);
	pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
	pthread_attr_setstacksize(&at, 64 * 1024);
	if (pthread_create(&th, &at, dr_ticker, NULL) != 0)
		DR.ticks = 0;     /* the program starts its helper (dr_start) */
	pthread_attr_destroy(&at);
}

static pid_t dr_fork_spare(void);

/*
 * The drainer's loop. spare: its spare's pid (its child), or 0; one found
 * dead (the OOM killer's choice too: a fork's pages count in both
 * processes' resident sets) is replaced, checked every SPARE_CHECK_NS.
 */
#define SPARE_CHECK_NS 100000000ull

static __attribute__((noreturn)) void dr_main(int pidfd, pid_t spare)
{
	uint64_t next_flush = mono_ns() + FLUSH_EVERY_NS, next_spare = next_flush;

	for (;;) {
		dr_serve();
		if (!mt_rec_active)
			break;
		if (spare > 0) {
			uint64_t n = mono_ns();
			if (n >= next_spare) {
				next_spare = n + SPARE_CHECK_NS;
				if (waitpid(spare, NULL, WNOHANG) == spare)
					spare = dr_fork_spare();
			}
		}
		/* what the program's threads sealed, draining: written at
		 * once, needing no log lock (and a bounded log turns then) */
		if (mt_writer_sealed_pending(S.w))
			write_sealed();
		int gone = program_gone(pidfd);
		if (__atomic_load_n(&DR.want, __ATOMIC_SEQ_CST) && !gone) {
			dr_wait(100000);    /* a program thread's turn first */
			continue;
		}
		if (lk_try(&log_lock) == 0) {
			uint64_t seals = mt_writer_seals(S.w);
			if (drainer_orphan || gone) {
				dr_orphaned();
				pthread_mutex_unlock(&log_lock);
				break;
			}
			uint64_t n = mono_ns();
			if (n >= next_flush) {
				flush_locked();
				next_flush = n + FLUSH_EVERY_NS;
			} else if (DR.drains) {
				drain(0, 0, 0);
			}
			log_unlock(seals);       /* writes what it sealed */
		} else if (gone) {
			/* its thread holding the lock was killed with it: the
			 * kernel frees the (robust) lock as it ends the process;
			 * after a second, nobody else can hold it anyway */
			int got = 0;
			for (int i = 0; i < 1000 && !(got = lk_try(&log_lock) == 0); i++)
				dr_nap();
			dr_orphaned();
			if (got)
				pthread_mutex_unlock(&log_lock);
			break;
		}
		/* the program's end is seen at the next wake-up: every 20 ms
		 * (its pidfd cannot wake a futex wait) */
		uint64_t n = mono_ns(), w = next_flush > n ? next_flush - n : 1000000;
		dr_wait(w < DR_POLL_NS ? w : DR_POLL_NS);
	}
	__atomic_store_n(&DR.finished, 1, __ATOMIC_RELEASE);     /* the spare ends */
	_exit(0);
}

/* The drainer's (or spare's, named so) descriptors: the log's, the
 * pidfd, stderr; 0 and 1 are /dev/null. */
static void dr_hygiene(int pidfd, const char *name)
{
	int keep[2] = { S.fd < pidfd ? S.fd : pidfd, S.fd < pidfd ? pidfd : S.fd };
	int nul = open("/dev/null", O_RDWR | O_CLOEXEC);

	setsid();
	prctl(PR_SET_NAME, name);
	if (nul >= 0) {
		dup2(nul, 0);
		dup2(nul, 1);
		if (nul > 2)
			close(nul);
	}
	if (keep[0] > 3)
		syscall(SYS_close_range, 3u, (unsigned)keep[0] - 1, 0u);
	if (keep[1] > keep[0] + 1)
		syscall(SYS_close_range, (unsigned)keep[0] + 1, (unsigned)keep[1] - 1, 0u);
	syscall(SYS_close_range, (unsigned)keep[1] + 1, ~0u, 0u);
}

/*
 * The spare drainer: a second process of ours, forked by the drainer as it
 * starts and asleep on its life lock, that takes the drainer's place if it
 * dies (the OOM killer's choice, say: in draining mode it holds the live
 * table). It is what keeps "nothing lost" then without a thread in the
 * program: a helper thread there would cost glibc its single-threaded
 * malloc (dr_ticker), and one cannot be started safely where the
 * drainer's death is seen, inside a hooked call (dr_lost). Named
 * memtrail-spare while it waits, memtrail-drain once it drains.
 *
 * While it lives, the program never declares the drainer gone
 * (dr_gone, lk_owner_died): between the drainer's death and the
 * spare's start its calls wait, as when the drainer is busy, and are
 * run by the spare; a call the drainer was running when it died is
 * run again whole, as the program runs it again where no spare takes
 * over. A lock the drainer died holding is the drainer's, not a sign of
 * the program's end: it is made consistent here before the drainer's
 * loop begins, where a lock whose owner died means the program's thread
 * execed or was killed (lk_owner_died). A chunk the drainer was cut off
 * writing is cut off the file and written again whole; one it had written
 * whole is not written twice; an event record it was cut off putting is
 * taken back (mt_writer_resume; the drainer's records are undoable,
 * lk_mine). A table it died moving the blocks of ends the recording
 * (below).
 *
 * It ends with the drainer's work (DR.finished), or once the program
 * keeps the life lock (nothing to take over). A spare that takes over
 * forks a spare of its own first, and a drainer whose spare died forks
 * another (dr_main), so one kill at a time never leaves the program
 * alone. Between its letting go of DR.spare_life and the new
 * spare's taking it, a drainer's death is the program's to see (dr_gone),
 * and the new spare, finding DR.life kept by the program, ends. With the
 * drainer and its spare killed together (within 0.1 s), the program
 * drains again itself,
 * and writes chunks as they fill, not every 0.2 s.
 */


/* Takes m if free; 1 if taken. (Whoever died holding it: see above.) */
static int dr_take(pthread_mutex_t *m)
{
	int r = pthread_mutex_trylock(m);
	if (r == EOWNERDEAD)
		pthread_mutex_consistent(m);
	return r == 0 || r == EOWNERDEAD;
}

/* Is m held by the program's thread waiting for a call, which the spare
 * runs as that thread (so it is as good as the spare's)? */
static int dr_caller_holds(pthread_mutex_t *m)
{
	pid_t owner = mt_robust_owner(m);
	return __atomic_load_n(&DR.call, __ATOMIC_ACQUIRE) != __atomic_load_n(&DR.done, __ATOMIC_ACQUIRE) &&
	       owner && owner == DR.caller;
}

static __attribute__((noreturn)) void dr_spare(int pidfd);
static int dr_begin(pthread_mutex_t *life, const char *name);

/*
 * In a drainer that holds DR.life and named itself in DR.pid: forks its
 * spare. Here and not in the intermediate clone, which the program waits
 * for: a fork copies the page tables of the whole address space (a
 * followed child of a 2 GiB process waited some 20 ms more for it). The
 * spare is this process's child (dr_main replaces it if it dies);
 * `memtrail record` reaps it once this one ends (reap_drainers). Its pid,
 * or -1.
 */
static pid_t dr_fork_spare(void)
{
	pid_t pid = _Fork();
	if (pid == 0)
		dr_spare(dr_begin(&DR.spare_life, "memtrail-spare"));
	return pid;
}

static __attribute__((noreturn)) void dr_spare(int pidfd)
{
	int fd = S.fd;        /* the log's descriptor as it was at the start */

	/* a bounded log's first segment goes once full: not kept open here
	 * (the takeover opens the current one by its path, fd_ours) */
	if (S.ring) {
		close(fd);
		fd = -1;
	}

	for (;;) {
		struct timespec at;
		clock_gettime(CLOCK_MONOTONIC, &at);
		at.tv_sec += 1;
		int r = pthread_mutex_clocklock(&DR.life, CLOCK_MONOTONIC, &at);
		if (__atomic_load_n(&DR.finished, __ATOMIC_ACQUIRE))
			_exit(0);
		if (r == EOWNERDEAD) {
			pthread_mutex_consistent(&DR.life);
			break;
		}
		if (r == 0)
			break;
		/* the program keeps it: the drainer's death was seen with no
		 * spare yet (dr_gone) */
		pid_t owner = mt_robust_owner(&DR.life);
		if (r != ETIMEDOUT || (owner && owner != __atomic_load_n(&DR.pid, __ATOMIC_ACQUIRE)))
			_exit(0);
	}
	/* the drainer died: its place, unless the program saw it die before
	 * this process stood by (lk_owner_died) and drains again itself */
	if (!mt_rec_active || !__atomic_load_n(&DR.on, __ATOMIC_ACQUIRE))
		_exit(0);
	mt_tbuf_tick_stop();   /* its ticker's last tick, until ours ticks */
	mt_tbuf_resume();      /* no event it drained is drained twice */
	prctl(PR_SET_NAME, "memtrail-drain");
	__atomic_store_n(&DR.pid, getpid(), __ATOMIC_RELEASE);
	/* The writer as the drainer left it (mt_writer_resume): under both
	 * locks, each taken here or held by the program's thread waiting
	 * for a call (which this process runs only below); one of its
	 * threads may hold one for a moment. A lock the drainer died holding
	 * is taken here too, so that none is read below as the program's end
	 * (lk_owner_died). The file itself is still: only a drainer writes
	 * it. */
	int lg = 0, io = 0;
	for (int i = 0; i < 1000 && !(lg && io); i++) {
		/* 1: the caller's; 2: taken here */
		if (!lg)
			lg = dr_caller_holds(&log_lock) ? 1 : dr_take(&log_lock) ? 2 : 0;
		if (!io)
			io = dr_caller_holds(&io_lock) ? 1 : dr_take(&io_lock) ? 2 : 0;
		if (!(lg && io))
			dr_wait(100000);
	}
	struct stat st;
	int ours = fd_ours();
	if (ours && fstat(S.fd, &st) == 0) {
		uint64_t size = (uint64_t)st.st_size, w = mt_writer_written(S.w);
		uint64_t keep = lg && io ? mt_writer_resume(S.w, size) : size > w ? w : size;
		/* the drainer died in a write: the file and its offset (the
		 * drainer's too, one open file) go back to its last whole
		 * write */
		if (keep < size && ftruncate(S.fd, (off_t)keep) == 0)
			(void)lseek(S.fd, (off_t)keep, SEEK_SET);
	}
	if (lg && io && ours && mt_rec_active && S.live && !S.live->tab.moving)
		emit_undo();
	/* The drainer died moving a table's entries (a growth, the leak
	 * scan's sort): blocks are out of place or in no slot, and nothing
	 * says which. The log stops here, saying so, rather than go on with
	 * figures that would be wrong from then on; the program runs on. */
	if (lg && io && ours && mt_rec_active &&
	    ((S.live && S.live->tab.moving) || (S.stacks && mt_stacks_moving(S.stacks)))) {
		int held = mt_tls.io_held;
		mt_tls.io_held = 1;
		(void)put_stop_end("the drainer process was killed while it reorganized a table");
		mt_tls.io_held = held;
		stop_locked("the drainer process was killed while it reorganized a table", "");
	}
	if (io == 2)
		pthread_mutex_unlock(&io_lock);
	if (lg == 2)
		pthread_mutex_unlock(&log_lock);
	if (fd >= 0 && S.fd != fd)
		close(fd);
	/* a spare of its own (this process is one thread still), so that
	 * the next kill too finds one standing by */
	pthread_mutex_unlock(&DR.spare_life);
	pid_t spare = dr_fork_spare();
	dr_start_ticker();
	dr_main(pidfd, spare);
}

/* The pages of this library's writable statics (after its RELRO part). */
struct statics { uintptr_t lo, hi; };

static int find_statics(struct dl_phdr_info *info, size_t size, void *ctx)
{
	struct statics *st = ctx;
	uintptr_t me = (uintptr_t)&DR, lo = 0, hi = 0, relro = 0;
	long page = sysconf(_SC_PAGESIZE);
	(void)size;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t a = info->dlpi_addr + ph->p_vaddr;
		if (ph->p_type == PT_LOAD && (ph->p_flags & PF_W) && me >= a && me < a + ph->p_memsz) {
			lo = a;
			hi = a + ph->p_memsz;
		}
		if (ph->p_type == PT_GNU_RELRO)
			relro = a + ph->p_memsz;
	}
	if (!lo)
		return 0;
	if (relro > lo && relro < hi)
		lo = relro;
	if (lo % (uintptr_t)page)     /* RELRO ends on a page (ld's rule) */
		return -1;
	st->lo = lo;
	st->hi = (hi + (uintptr_t)page - 1) & ~((uintptr_t)page - 1);
	return 1;
}

static int count_task(void *ctx, long tid)
{
	(void)tid;
	++*(int *)ctx;
	return 0;
}

/* Shares (or, in a forked child, unshares) the statics; 0, or -1. Found
 * once (a forked child may not call dl_iterate_phdr before children.c has
 * taken back its fork-time lock). */
static struct statics statics;

static int share_statics(int shared)
{
	if (!statics.lo && (dl_iterate_phdr(find_statics, &statics) != 1 || !statics.lo))
		return -1;
	if (mt_mem_remap((void *)statics.lo, statics.hi - statics.lo, shared) < 0)
		return -1;
	statics_shared = shared;
	return 0;
}

static void lock_init_shared(pthread_mutex_t *m, int adaptive)
{
	pthread_mutexattr_t a;
	pthread_mutexattr_init(&a);
	pthread_mutexattr_setpshared(&a, PTHREAD_PROCESS_SHARED);
	pthread_mutexattr_setrobust(&a, PTHREAD_MUTEX_ROBUST);
	if (adaptive)
		pthread_mutexattr_settype(&a, PTHREAD_MUTEX_ADAPTIVE_NP);
	pthread_mutex_init(m, &a);
	pthread_mutexattr_destroy(&a);
}

#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif

/* Can a drainer watch this process? (A pidfd of it.) */
static int dr_possible(void)
{
	int fd = (int)syscall(SYS_pidfd_open, getpid(), 0);
	if (fd < 0)
		return 0;
	close(fd);
	return 1;
}

/* In the drainer or its spare, as it starts: takes its life lock, names
 * itself; returns a pidfd of the program. */
static int dr_begin(pthread_mutex_t *life, const char *name)
{
	drainer_self = 1;
	mt_tls.tb = NULL;
	mt_tls.guard = 1;
	mt_tls.io_held = 0;
	/* (a spare's, after a spare killed: made consistent, or its first
	 * unlock, at a takeover, would leave it unusable for the next) */
	if (pthread_mutex_lock(life) == EOWNERDEAD)
		pthread_mutex_consistent(life);
	int pidfd = (int)syscall(SYS_pidfd_open, S.pid, 0);
	if (pidfd < 0)
		_exit(0);
	dr_hygiene(pidfd, name);
	return pidfd;
}

/*
 * The drainer's parent, which ends at once, so that the drainer is not
 * the program's child. It runs in the program's memory, on a stack of its
 * own, with the program's thread (and so its thread-local storage, errno
 * included) stopped until it ends (CLONE_VFORK): a clone of the memory
 * would copy the page tables of the whole address space once more, and
 * tear them down as it ends (a followed child of a process with 2 GiB
 * mapped waited some 40 ms more for that). All it does here is _Fork,
 * whose parent side writes nothing but the return value.
 */
static int dr_intermediate(void *arg)
{
	(void)arg;
	if (_Fork() == 0) {
		int pidfd = dr_begin(&DR.life, "memtrail-drain");
		dr_start_ticker();      /* DR.ticks settled before DR.pid */
		__atomic_store_n(&DR.pid, getpid(), __ATOMIC_RELEASE);
		futex((uint32_t *)&DR.pid, FUTEX_WAKE, INT32_MAX, NULL);
		dr_main(pidfd, dr_fork_spare());
	}
	return 0;
}

/* Starts the drainer (the constructor, or a followed child): alone, active. */
static void dr_start(void)
{
	struct timespec to = { 0, 10000000 };
	int threads = 0;
	long pid;

	if (!S.cfg.drainer || !mt_arena_shared() || !mt_rec_active || S.fd < 0)
		return;
	if (mt_each_task(0, 0, count_task, &threads) < 0 || threads != 1)
		return;
	/* a subreaper program would inherit the drainer, and its wait()
	 * would find it */
	int reaper = 0;
	if (prctl(PR_GET_CHILD_SUBREAPER, &reaper) < 0 || reaper)
		return;
	if (share_statics(1) < 0)
		return;
	lock_init_shared(&log_lock, 1);
	lock_init_shared(&io_lock, 0);
	lock_init_shared(&DR.life, 0);
	lock_init_shared(&DR.spare_life, 0);
	DR.pid = 0;
	DR.finished = 0;
	DR.call = DR.done = 0;
	DR.fatal = 0;
	/* a bounded log turns to its next segment where a chunk is written:
	 * the drainer drains too, so that it writes each chunk as it seals
	 * it and the segments keep their size */
	DR.drains = S.ring;
	/* Snapshots by signal or interval and leak checks by signal are
	 * taken by the program's helper thread, which then ticks too;
	 * otherwise the drainer does, and the program runs no thread. */
	DR.ticks = !helper_has_work();
	/* The intermediate (dr_intermediate) shares this memory and this
	 * thread waits while it runs: signals blocked, it ends with none.
	 * The drainer: _Fork (no atfork handlers: ours would take the shared
	 * locks), which gives it its own thread id in glibc's thread
	 * structure and a robust list, so its death frees the robust
	 * locks it holds. Both start with every signal blocked: none of
	 * the program's handlers may run in them, nor a signal end them. */
	/* (the drainer and its spares run on their copies of it: as large
	 * as a main thread's usual stack, its pages made as they are used,
	 * and a guard page below) */
	enum { STACK = 8 << 20, GUARD = 64 << 10 };
	sigset_t all, old;
	int saved = errno;
	char *stack = mmap(NULL, STACK, PROT_READ | PROT_WRITE,
			   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_STACK, -1, 0);
	if (stack == MAP_FAILED)
		return;
	mprotect(stack, GUARD, PROT_NONE);
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	pid = clone(dr_intermediate, stack + STACK, CLONE_VM | CLONE_VFORK, NULL);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (pid > 0)
		while (waitpid((pid_t)pid, NULL, __WCLONE) < 0 && errno == EINTR)
			;
	munmap(stack, STACK);
	errno = saved;
	if (pid < 0)
		return;
	for (int i = 0; i < 100 && !__atomic_load_n(&DR.pid, __ATOMIC_ACQUIRE); i++)
		futex((uint32_t *)&DR.pid, FUTEX_WAIT, 0, &to);
	if (!__atomic_load_n(&DR.pid, __ATOMIC_ACQUIRE) || dr_gone())
		return;       /* (one that starts late drains and writes beside the
			       * program, under the same locks) */
	/* DR.life's lock word (a mutex's first member in glibc) names the
	 * drainer's thread while it lives: events reuse a tick only then */
	if (DR.ticks)
		mt_tbuf_tick_life((const int *)&DR.life);
	DR.on = 1;
	/* it compresses: what only that touches is kept, in its memory */
	mt_writer_keep_io(S.w, 1);
	close(S.fd);          /* the log is the drainer's */
	if (DR.drains)
		dr_drains_tables();
}

/* ---- the end of a recording --------------------------------------------------- */

/*
 * Writes END and flushes. blocking = 0 (a signal handler) never waits for a
 * lock this thread may hold itself: with wait_ns it retries for that long
 * (a handler on a thread outside memtrail: the holder is another thread,
 * which lets go within microseconds), else it only tries once.
 */
/*
 * A normal exit's leak check (leakscan.c), both locks held: no event can
 * come in between, and the scan allocates nothing. Where it cannot
 * classify, nothing is written, and readers say "not classified".
 */
static void leak_check(void)
{
	struct mt_leakscan_result res;
	long helper = helper_id();
	uint64_t t = 0;

	/* the table is left in address order: END, next, only reads its
	 * counts, and recording ends there */
	if (helper >= 0)
		(void)mt_leakscan(S.live, S.exit_sp, helper, mt_real.malloc_usable_size, put_leak,
				  &t, 0, &res);
}

static void finish(unsigned how, int64_t code, int blocking, uint64_t wait_ns)
{
	if (blocking) {
		lk(&log_lock);
		io_take();
	} else {
		struct timespec nap = { 0, 1000000 };
		uint64_t waited = 0;
		while (lk_try(&log_lock) != 0) {
			if (waited >= wait_ns)
				return;
			nanosleep(&nap, NULL);
			waited += 1000000;
		}
		while (io_try() < 0) {
			/* A chunk is being written: by another thread, it
			 * ends soon; by the thread we interrupted, never. */
			if (waited >= wait_ns) {
				pthread_mutex_unlock(&log_lock);
				return;
			}
			nanosleep(&nap, NULL);
			waited += 1000000;
		}
	}
	if (mt_rec_active) {
		/* every event before this one; others in flight are waited
		 * for (a signal handler: no longer than it may wait) */
		drain(mt_tbuf_key(), blocking ? 1000000000ull : wait_ns, 1);
	}
	if (mt_rec_active) {
		name_running_threads();
		if (how == MT_END_EXIT && blocking && S.exit_sp && S.cfg.leak_check)
			leak_check();
		check(mt_writer_end(S.w, now(), how, code, end_totals()));
		check(io_flush());
		mt_rec_active = 0;
	}
	io_give();
	pthread_mutex_unlock(&log_lock);
}

void mt_rec_exit_now(int status)
{
	mt_rec_modules_sync();
	mt_tls.guard++;
	finish(MT_END__EXIT, status, 1, 0);
	mt_tls.guard--;
}

/*
 * Can the runtimes free their memory now (freeres.c)? Only when no other
 * thread of the program runs user code: valgrind kills the other threads
 * before it frees, memtrail cannot, and __libc_freeres pulls NSS modules,
 * stdio buffers and locale data from under a thread still using them.
 * The helper thread only sleeps, writes and takes snapshots (none of that
 * uses what the runtimes free); it publishes its id when it first runs,
 * waited for here (at most a second) if the process exits before that.
 */
static int runtime_alone(void)
{
	long helper = helper_id();

	if (helper < 0)
		return 0;
	return mt_freeres_safe(helper);
}

/*
 * The end of a normal exit. The handler is registered by the constructor,
 * which ld.so runs before the program's _start registers _dl_fini with
 * atexit, so it runs after the program's atexit handlers, its C++ static
 * destructors and every ELF destructor (this library's included): their
 * frees are all recorded, as memcheck counts them. Then, as memcheck does
 * at exit, the C and C++ runtimes free their own memory (freeres.c; not
 * with MEMTRAIL_FREERES=0, not when exit() came from a signal handler that
 * interrupted a hook, which may be inside malloc, and not while other
 * threads run), and END follows: what is live then is the program's own.
 */
static uintptr_t exit_caller_sp(void);

static void on_exit_cb(int status, void *arg)
{
	(void)arg;
	/* The leak scan's roots on this stack: from exit()'s caller up (see
	 * exit_caller_sp), else from above this frame (the recorder's frames
	 * below are not the program's). */
	S.exit_sp = exit_caller_sp();
	if (!S.exit_sp)
		S.exit_sp = (uintptr_t)__builtin_frame_address(0) + 2 * sizeof(void *);
	/* exit() from a signal handler that interrupted one of our hooks on
	 * this thread: the log lock may be ours already, so only try it. */
	int blocking = mt_tls.guard == 0;
	mt_tls.guard++;
	/* Snapshot signals the helper has not served yet (it may be writing
	 * a chunk): taken here, before END, as they would have been; one it
	 * is serving, it is given up to 0.2 s to finish. */
	if (blocking && S.helper_on && mt_rec_active) {
		struct timespec nap = { 0, 1000000 };
		for (int i = 0; i < 200 && __atomic_load_n(&S.helper_busy, __ATOMIC_ACQUIRE); i++)
			nanosleep(&nap, NULL);
		while (sem_trywait(&S.snap_sem) == 0) {
			if (__atomic_exchange_n(&S.check_pending, 0, __ATOMIC_ACQ_REL))
				take_check("leak check", S.exit_sp);
			else
				take_snapshot("signal");
		}
	}
	if (blocking && S.cfg.freeres && mt_rec_active && !mt_rec_foreign() && runtime_alone()) {
		mt_tls.guard--;
		mt_freeres_run();     /* its frees are recorded: guard 0 */
		mt_tls.guard++;
	}
	if (blocking)
		mt_rec_modules_sync();
	finish(MT_END_EXIT, status, blocking, 0);
	mt_tls.guard--;
}

/*
 * Every signal whose default action ends the process (signal(7): Term and
 * Core), the real-time ones included. Those left at SIG_DFL get on_fatal,
 * which writes END(SIGNAL) and then lets the default action happen, so the
 * exit status and core dump are the program's own; the sigaction and
 * signal hooks show SIG_DFL to the program (hooks.c).
 */
static const int terminating[] = {
	SIGHUP, SIGINT, SIGQUIT, SIGILL, SIGTRAP, SIGABRT, SIGBUS, SIGFPE,
	SIGUSR1, SIGSEGV, SIGUSR2, SIGPIPE, SIGALRM, SIGTERM, SIGSTKFLT,
	SIGXCPU, SIGXFSZ, SIGVTALRM, SIGPROF, SIGIO, SIGPWR, SIGSYS,
};

static void on_fatal(int sig)
{
	int saved = errno;
	struct sigaction sa;
	/* Outside memtrail on this thread (guard 0), any lock is held by
	 * another thread: worth waiting for, up to a second. */
	uint64_t wait_ns = mt_tls.guard ? 0 : 1000000000ull;
	mt_tls.guard++;
	DR.fatal = sig;    /* if END cannot be written here, the drainer writes it */
	finish(MT_END_SIGNAL, sig, 0, wait_ns);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = SIG_DFL;
	sigemptyset(&sa.sa_mask);
	sigaction(sig, &sa, NULL);
	/* Pending until the handler returns (sig is blocked in it); then the
	 * default action ends the process with the same status. A fault
	 * re-executes the faulting instruction anyway. */
	raise(sig);
	mt_tls.guard--;
	errno = saved;
}

int mt_rec_handler_ours(void (*handler)(int))
{
	return handler == on_fatal || handler == on_snapshot_signal;
}

/* Does the recorder take sig over while it is at SIG_DFL? */
static int takes_over(int sig)
{
	if (sig == S.cfg.snapshot_signal || sig == S.cfg.leak_check_signal)
		return 0;
	if (sig >= SIGRTMIN && sig <= SIGRTMAX)
		return 1;
	for (size_t i = 0; i < sizeof(terminating) / sizeof(terminating[0]); i++)
		if (terminating[i] == sig)
			return 1;
	return 0;
}

static void fatal_action(struct sigaction *sa)
{
	memset(sa, 0, sizeof(*sa));
	sa->sa_handler = on_fatal;
	sa->sa_flags = SA_RESTART;
	sigemptyset(&sa->sa_mask);
}

int mt_rec_fatal_action(int sig, struct sigaction *sa)
{
	if (!mt_rec_active || mt_rec_foreign() || !takes_over(sig))
		return 0;
	fatal_action(sa);
	return 1;
}

static void install_fatal(int sig)
{
	struct sigaction old, sa;
	if (sigaction(sig, NULL, &old) < 0)
		return;
	if (old.sa_handler != SIG_DFL || (old.sa_flags & SA_SIGINFO))
		return;
	fatal_action(&sa);
	sigaction(sig, &sa, NULL);
}

static void install_all_fatal(void)
{
	for (int sig = 1; sig <= SIGRTMAX; sig++)
		if (takes_over(sig))
			install_fatal(sig);
}

/* ---- fork and exec -------------------------------------------------------------- */

static void fork_prepare(void)
{
	mt_tls.guard++;
	pthread_mutex_lock(&mod_lock);
	/* After mod_lock: a scan holds it while in dl_iterate_phdr. */
	mt_children_fork_prepare();
	lk(&log_lock);
	io_take();
}

static void fork_parent(void)
{
	io_give();
	pthread_mutex_unlock(&log_lock);
	mt_children_fork_parent();
	pthread_mutex_unlock(&mod_lock);
	mt_tls.guard--;
}

static int open_log(void);

/*
 * Following children, in a forked child (only this thread left, guard
 * held): the parent's session is dropped without writing anything and the
 * child's own begins, as if the program had started here.
 */
static void child_restart(void)
{
	struct mt_writer *w = S.w;

	mt_rec_active = 0;
	close(S.fd);
	S.fd = -1;
	S.w = NULL;
	mt_writer_free(w);
	mt_stacks_free(S.stacks);
	mt_live_free(S.live);
	mt_modules_free(S.mods);
	S.stacks = NULL;
	S.live = NULL;
	S.mods = NULL;
	S.gen++;              /* every thread index belongs to the parent's log */
	S.nthreads = 0;
	mt_mem_free(S.thr);
	S.thr = NULL;
	S.thr_cap = 0;
	S.nsnap = 0;
	S.prev_live = 0;
	memset(&S.tot, 0, sizeof(S.tot));
	S.said = 0;
	S.mod_dirty = 0;
	S.helper_on = 0;      /* threads do not survive a fork */
	S.t0 = mono_ns();
	clock_init();
	if (mt_children_fork_output(S.cfg.output, sizeof(S.cfg.output)) < 0) {
		mt_say("output path too long; child not recorded", NULL);
		return;
	}
	if (open_log() < 0)
		return;
	dr_start();
	if (!DR.on || !DR.ticks)
		start_helper();
}

static void fork_child(void)
{
	/* The child leaves the parent's file alone: the buffered records
	 * are the parent's, so they are dropped. It stops at once, or, when
	 * following children, records into a file of its own. */
	pthread_mutex_t fresh = PTHREAD_ADAPTIVE_MUTEX_INITIALIZER_NP;
	if (statics_shared || mt_arena_shared()) {
		/* First of all: the statics and the tables are still the
		 * parent's (and its drainer's). Copies of its own, or, failing
		 * that, nothing of ours is touched again in this process. */
		int follow = mt_rec_active && S.cfg.follow;
		if (statics_shared && share_statics(0) < 0) {
			mt_tls.guard = 1 << 20;
			return;
		}
		statics_shared = 0;
		if (DR.on)
			S.fd = -1;       /* the drainer's number, not ours */
		DR.on = 0;
		DR.drains = 0;
		DR.pid = 0;
		int lost = mt_arena_fork(follow) < 0;
		/* the session's tables went with the parent's arena */
		S.w = NULL;
		S.stacks = NULL;
		S.live = NULL;
		S.mods = NULL;
		S.thr = NULL;
		S.thr_cap = 0;
		mt_tbuf_forget();
		if (lost) {
			mt_rec_active = 0;
			mt_tls.guard = 1 << 20;
			return;
		}
	}
	log_lock = fresh;
	pthread_mutex_init(&mod_lock, NULL);
	pthread_mutex_init(&io_lock, NULL);
	mt_tls.io_held = 0;
	mt_tbuf_child();
	mt_unwind_child();
	pending = NULL;
	mt_children_fork_child();
	S.pid = getpid();
	if (mt_rec_active && S.cfg.follow) {
		child_restart();
	} else if (mt_rec_active) {
		mt_rec_active = 0;
		if (S.fd >= 0)
			close(S.fd);
		S.fd = -1;
	}
	if (!mt_rec_active) {
		S.helper_on = 0;      /* threads do not survive a fork */
		S.helper_busy = 0;
	}
	S.exec_pending = 0;
	S.pid = getpid();
	mt_tls.guard--;
}

/*
 * Nonzero in a child made by vfork() (or clone with CLONE_VM): it shares our
 * memory, so it must neither take the lock nor touch the session, or the
 * parent finds it changed (a lock left taken, END written) when it resumes.
 * Such a child may only exec or _exit, which is where this is checked.
 */
int mt_rec_foreign(void)
{
	return S.pid != 0 && getpid() != S.pid;
}

/* END(EXEC) after every event so far, both locks held (in the drainer,
 * if there is one: the file is its). */
static int exec_end(void)
{
	drain(mt_tbuf_key(), 1000000000ull, 1);
	check(io_flush());
	off_t off = lseek(S.fd, 0, SEEK_CUR);
	if (!mt_rec_active || off < 0)
		return 0;
	name_running_threads();
	check(mt_writer_end(S.w, now(), MT_END_EXEC, 0, end_totals()));
	check(io_flush());
	S.exec_off = off;
	S.exec_pending = 1;
	return 0;
}

/* The exec failed: END(EXEC) is cut off the file again. */
static int exec_undo(void)
{
	if (ftruncate(S.fd, S.exec_off) < 0 || lseek(S.fd, S.exec_off, SEEK_SET) != S.exec_off)
		stop_locked("cannot take back END after a failed exec: ", strerror(errno));
	return 0;
}

/*
 * Before an exec: END(EXEC), both locks kept across the exec. With a
 * drainer, the exec that succeeds ends the thread holding the (robust)
 * log lock: the drainer sees its owner died, and that END(EXEC) is
 * written, and ends too.
 */
void mt_rec_exec_begin(void)
{
	mt_rec_modules_sync();
	lk(&log_lock);
	io_take();
	S.exec_pending = 0;
	if (!mt_rec_active)
		return;
	(void)at_log(exec_end);
}

void mt_rec_exec_failed(void)
{
	/* The exec failed and the program goes on: drop the END chunk and
	 * keep recording into the same file. */
	if (S.exec_pending && mt_rec_active) {
		(void)at_log(exec_undo);
		/* the names written before END went with it */
		for (uint32_t i = 0; i < S.thr_cap; i++)
			if (S.thr[i].named == NAMED_END)
				S.thr[i].named = 0;
	}
	S.exec_pending = 0;
	io_give();
	pthread_mutex_unlock(&log_lock);
}

/* ---- the log's descriptor against the program's (hooks.c) ----------------------- */

int mt_rec_log_fd(void)
{
	if (!mt_rec_active || mt_rec_foreign() || remote())
		return -1;
	return __atomic_load_n(&S.fd, __ATOMIC_RELAXED);
}

int mt_rec_is_log_fd(int fd)
{
	/* The cheap test first: close() runs this on every call. */
	return fd >= 0 && fd == __atomic_load_n(&S.fd, __ATOMIC_RELAXED) && mt_rec_active &&
	       !mt_tls.guard && !remote() && !mt_rec_foreign();
}

void mt_rec_log_fd_vacate(int fd)
{
	if (remote())
		return;
	mt_tls.guard++;
	io_take();
	if (S.fd == fd && mt_rec_active) {
		int nfd = fcntl(fd, F_DUPFD_CLOEXEC, fd + 1);
		if (nfd >= 0) {
			__atomic_store_n(&S.fd, nfd, __ATOMIC_RELAXED);
			mt_writer_set_fd(S.w, nfd);
		}
	}
	io_give();
	mt_tls.guard--;
}

void mt_rec_log_fd_vacated(int fd)
{
	struct stat st;
	if (remote())
		return;
	mt_tls.guard++;
	io_take();
	/* Still the log's file, but no longer the log's number: ours to close. */
	if (S.fd != fd && fstat(fd, &st) == 0 && st.st_dev == S.fd_dev && st.st_ino == S.fd_ino)
		close(fd);
	io_give();
	mt_tls.guard--;
}

/* ---- programs run without being followed --------------------------------------- */

void mt_rec_note_exec(const char *what)
{
	char path[sizeof(S.cfg.output) + 8], line[4097];
	size_t n = strlen(S.cfg.output), k;
	int fd, saved = errno;

	if (S.cfg.follow || !what || !n)
		return;
	memcpy(path, S.cfg.output, n);
	memcpy(path + n, ".execs", 7);
	/* never created here: only a launcher that asked for it gets notes */
	fd = open(path, O_WRONLY | O_APPEND | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
	if (fd >= 0) {
		struct stat st;

		k = strlen(what);
		if (k > sizeof(line) - 2)
			k = sizeof(line) - 2;
		memcpy(line, what, k);
		line[k++] = '\n';
		/* one write: lines from several processes never mix */
		if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) {
			ssize_t r = write(fd, line, k);
			(void)r;
		}
		close(fd);
	}
	errno = saved;
}

/* ---- modules ---------------------------------------------------------------- */

void mt_rec_modules_changed(int wait)
{
	if (!mt_rec_active)
		return;
	mt_tls.guard++;
	if (wait) {
		pthread_mutex_lock(&mod_lock);
	} else if (pthread_mutex_trylock(&mod_lock) != 0) {
		/* Another thread is scanning; it, or a later new stack,
		 * writes the change. */
		mt_tls.guard--;
		return;
	}
	/* Frames outside every module (generated code) must not cost a full
	 * scan each time: only when the loader's counters moved. */
	int r = mt_modules_changed(S.mods) ? mt_modules_scan(S.mods) : 0;
	uint64_t sl = log_lock_take();
	S.mod_dirty = 0;
	if (mt_rec_active) {
		if (r < 0)
			stop_with_record("out of memory for the module table");
		else
			check(mt_modules_emit(S.mods, S.w, now()));
	}
	log_unlock(sl);
	pthread_mutex_unlock(&mod_lock);
	mt_tls.guard--;
}

/*
 * Stacks are interned when the rings are drained, not as events happen: a
 * new stack's frame in an object the module map lacks (loaded since) is
 * noticed then, and the rescan that names the object must come while it
 * is still loaded. So before a dlclose and before an end, every event so
 * far is drained and, if a new stack asks for it, the modules rescanned.
 * Call without the log lock.
 */
void mt_rec_modules_sync(void)
{
	if (!mt_rec_active || mt_rec_foreign())
		return;
	mt_tls.guard++;
	uint64_t sl = log_lock_take();
	drain(mt_tbuf_key(), 1000000000ull, 0);
	log_unlock(sl);          /* rescans if another thread is not at it */
	if (S.mod_dirty)
		mt_rec_modules_changed(1);
	mt_tls.guard--;
}

/* ---- start ---------------------------------------------------------------------- */

static size_t read_cmdline(void)
{
	size_t len = 0;
	int fd = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	ssize_t n;
	while (len < sizeof(cmdline) && (n = read(fd, cmdline + len, sizeof(cmdline) - len)) > 0)
		len += (size_t)n;
	close(fd);
	return len;
}

/*
 * The resident set, for the RSS records (lib/writer.h: as each chunk begins
 * and ends, and before END): the second field of /proc/self/statm, in
 * pages. open/read/close only (async-signal safe, no allocation); the
 * descriptor lives for the call alone. 0 when it cannot be read.
 */
static uint64_t rss_page;   /* the page size, read at start (sysconf is not
			      async-signal safe; END after a signal samples) */

static uint64_t read_rss(void *ctx)
{
	char buf[128];
	uint64_t pages = 0;
	ssize_t n;
	char path[64];
	int fd = open(proc_path(path, "statm"), O_RDONLY | O_CLOEXEC);
	const char *p;

	(void)ctx;
	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = 0;
	for (p = buf; *p && *p != ' '; p++)
		;
	for (; *p == ' '; p++)
		;
	for (; *p >= '0' && *p <= '9'; p++)
		pages = pages * 10 + (uint64_t)(*p - '0');
	return pages * rss_page;
}

/*
 * The log's descriptor is moved out of the way of the program's: shells
 * use 3-9 for redirections (`exec 3>file` would replace a descriptor 3 and
 * the log would go into the program's file). Its identity is kept so that
 * a program that closes or replaces it anyway stops the recording instead
 * of receiving our chunks (checked before every chunk is written).
 */
static int fd_high(int fd)
{
	static const int floors[] = { 900, 500, 200, 100, 30 };
	for (size_t i = 0; i < sizeof(floors) / sizeof(floors[0]); i++) {
		int nfd = fcntl(fd, F_DUPFD_CLOEXEC, floors[i]);
		if (nfd >= 0) {
			close(fd);
			return nfd;
		}
	}
	return fd;
}

static void move_fd_high(void)
{
	struct stat st;
	S.fd = fd_high(S.fd);
	if (fstat(S.fd, &st) == 0) {
		S.fd_dev = st.st_dev;
		S.fd_ino = st.st_ino;
	}
}

/* ---- the unwinder ---------------------------------------------------------------- */

static const uint64_t *no_backtrace(void *fp, unsigned max, uint64_t *scratch, unsigned *n,
				    uint64_t *hash)
{
	(void)fp;
	(void)max;
	*n = 0;
	*hash = 0;
	return scratch;
}

mt_backtrace_fn mt_backtrace = no_backtrace;

/*
 * libunwind's walk (load_unwinder), as an mt_backtrace_fn: the frames it
 * gives innermost first, from its own caller, turned round. Until a
 * dlclose that is unw_backtrace(); after one, a loop of unw_step(), as
 * unw_backtrace() makes when its fast path gives up: that fast path keeps
 * each thread's frame layouts by address and unw_flush_cache() does not
 * reach them (libunwind 1.6), so code loaded where unloaded code was
 * would be walked by the old layouts. unw_step() costs microseconds a
 * frame here (a system call each): after a dlclose, only for the stacks
 * unwind.c's walker hands over, or with MEMTRAIL_UNWIND=full.
 */
static int (*unw_bt)(void **, int);
static void (*unw_flush)(unw_addr_space_t, unw_word_t, unw_word_t);
static unw_addr_space_t *unw_as;
static int unw_unloaded;
static int step_backtrace(uint64_t *buf, int size);

static void flush_unwinder(void)
{
	if (unw_flush && unw_as)
		unw_flush(*unw_as, 0, 0);
	__atomic_store_n(&unw_unloaded, 1, __ATOMIC_RELAXED);
}

static const uint64_t *full_backtrace(void *fp, unsigned max, uint64_t *scratch, unsigned *n,
				      uint64_t *hash)
{
	int k, i = 0;
	(void)fp;
	*hash = 0;
	if (MT_LIKELY(!__atomic_load_n(&unw_unloaded, __ATOMIC_RELAXED)))
		k = unw_bt((void **)scratch, (int)max + 16);
	else
		k = step_backtrace(scratch, (int)max + 16);
	while (i < k && scratch[i] >= mt_self_lo && scratch[i] < mt_self_hi)
		i++;
	unsigned m = (unsigned)(k - i) < max ? (unsigned)(k - i) : max;
	for (unsigned a = (unsigned)i, b = (unsigned)i + m - 1; m > 1 && a < b; a++, b--) {
		uint64_t x = scratch[a];
		scratch[a] = scratch[b];
		scratch[b] = x;
	}
	*n = m;
	return scratch + i;
}

#define MT_STR2(x) #x
#define MT_STR(x) MT_STR2(x)

/*
 * libunwind is opened RTLD_LOCAL, not linked: it also defines glibc's
 * backtrace() and libgcc's whole _Unwind_* ABI, and in the global scope it
 * would take over C++ exceptions of libraries the program dlopens later
 * (a C program loading C++ code: libstdc++ would bind _Unwind_RaiseException
 * to it). (While the Makefile still links -lunwind, this finds that copy.)
 */
/* libunwind's frame walk (load_unwinder), for the caller of exit(). */
static struct {
	int (*getcontext)(unw_context_t *);
	int (*init_local)(unw_cursor_t *, unw_context_t *);
	int (*step)(unw_cursor_t *);
	int (*get_reg)(unw_cursor_t *, unw_regnum_t, unw_word_t *);
	int (*get_proc_info)(unw_cursor_t *, unw_proc_info_t *);
} U;

/*
 * The stack pointer of the function that called exit() (after a return
 * from main: main's caller), where the exiting thread's roots begin for
 * the leak scan. The frames below it, exit's own and its handlers', lie
 * over frames the program has left (main's, after it returned), whose
 * slots they do not all write: those still hold what the program put
 * there, which memcheck, knowing them undefined, skips. 0 when the walk
 * cannot tell (no unwinder, exit not within 64 frames).
 */
static uintptr_t exit_caller_sp(void)
{
	unw_context_t uc;
	unw_cursor_t c;
	unw_proc_info_t pi;
	unw_word_t sp;
	uintptr_t ex = (uintptr_t)&exit;
	Dl_info di;
	const ElfW(Sym) *sym = NULL;

	/* First by the recorder's walker: libunwind looks each frame up with
	 * dl_iterate_phdr, which waits for the loader's lock, and a program
	 * thread that iterates without pause held it off for up to a minute
	 * (robust_children's dlfork: glibc's lock is not fair). dladdr1 takes
	 * another lock of the loader's, not that one. */
	if (dladdr1((void *)ex, &di, (void **)&sym, RTLD_DL_SYMENT) && sym && sym->st_size &&
	    (uintptr_t)di.dli_saddr == ex) {
		uintptr_t at = mt_unwind_caller_sp(__builtin_frame_address(0), ex, ex + sym->st_size);
		if (at)
			return at;
	}

	if (!U.getcontext || !U.init_local || !U.step || !U.get_reg || !U.get_proc_info)
		return 0;
	if (U.getcontext(&uc) < 0 || U.init_local(&c, &uc) < 0)
		return 0;
	for (int i = 0; i < 64; i++) {
		if (U.get_proc_info(&c, &pi) == 0 && pi.start_ip == ex)
			return U.step(&c) > 0 && U.get_reg(&c, UNW_REG_SP, &sp) == 0 ? (uintptr_t)sp : 0;
		if (U.step(&c) <= 0)
			return 0;
	}
	return 0;
}

/* unw_backtrace()'s own slow path: the frames by unw_step(). */
static int step_backtrace(uint64_t *buf, int size)
{
	unw_context_t uc;
	unw_cursor_t c;
	unw_word_t ip;
	int n = 0;

	if (!U.getcontext || !U.init_local || !U.step || !U.get_reg ||
	    U.getcontext(&uc) < 0 || U.init_local(&c, &uc) < 0)
		return 0;
	while (n < size && U.get_reg(&c, UNW_REG_IP, &ip) == 0) {
		buf[n++] = ip;
		if (U.step(&c) <= 0)
			break;
	}
	return n;
}

static void load_unwinder(void)
{
	void *h = dlopen("libunwind.so.8", RTLD_NOW | RTLD_LOCAL);
	if (!h)
		h = dlopen("libunwind.so", RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		mt_say("cannot load libunwind: stacks are not recorded", NULL);
		return;
	}
	int (*bt)(void **, int) = (int (*)(void **, int))dlsym(h, "unw_backtrace");
	int (*policy)(unw_addr_space_t, unw_caching_policy_t) =
		(int (*)(unw_addr_space_t, unw_caching_policy_t))dlsym(h, MT_STR(unw_set_caching_policy));
	unw_addr_space_t *as = (unw_addr_space_t *)dlsym(h, MT_STR(unw_local_addr_space));
	if (!bt) {
		mt_say("libunwind has no unw_backtrace: stacks are not recorded", NULL);
		return;
	}
	if (policy && as)
		policy(*as, UNW_CACHE_PER_THREAD);
	U.getcontext = (int (*)(unw_context_t *))dlsym(h, MT_STR(unw_tdep_getcontext));
	U.init_local = (int (*)(unw_cursor_t *, unw_context_t *))dlsym(h, MT_STR(unw_init_local));
	U.step = (int (*)(unw_cursor_t *))dlsym(h, MT_STR(unw_step));
	U.get_reg = (int (*)(unw_cursor_t *, unw_regnum_t, unw_word_t *))dlsym(h, MT_STR(unw_get_reg));
	U.get_proc_info = (int (*)(unw_cursor_t *, unw_proc_info_t *))dlsym(h, MT_STR(unw_get_proc_info));
	unw_bt = bt;
	unw_flush = (void (*)(unw_addr_space_t, unw_word_t, unw_word_t))dlsym(h, MT_STR(unw_flush_cache));
	unw_as = as;
	mt_backtrace = mt_unwind_setup(full_backtrace, flush_unwinder, S.cfg.unwind);
}

/*
 * Opens S.cfg.output and begins the log there: header, module map. Returns
 * 0 recording, or -1 (said why) not recording.
 *
 * The output is a regular file, or /dev/null (memtrail(1)'s one rule for
 * it; `memtrail record` checks the same before the program starts). Never
 * a symlink (O_NOFOLLOW), and never a FIFO, socket or other device:
 * O_NONBLOCK keeps open() from waiting for a FIFO's reader (it fails with
 * ENXIO instead), and fstat refuses the rest.
 */
static int open_log(void)
{
	struct timespec rt;
	struct stat st;
	struct mt_writer_mem mem = { mt_mem_alloc_cb, mt_mem_free_cb, NULL, mt_mem_idle_cb };
	int fl;

	clock_gettime(CLOCK_REALTIME, &rt);
	/* A bounded log: the ring of segments FILE.seg1... (lib/ring.h) in
	 * place of FILE, which goes with any an earlier run left. */
	S.ring = S.cfg.max_size && strcmp(S.cfg.output, "/dev/null") != 0;
	S.prologue = 0;
	if (S.ring && mt_segs_start(&S.segs, S.cfg.output, S.cfg.max_size) < 0) {
		mt_say("output path too long; not recording", NULL);
		return -1;
	}
	if (S.ring)
		S.fd = mt_segs_open_next(&S.segs);
	else
		S.fd = open(S.cfg.output, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_NONBLOCK |
			    O_CLOEXEC, 0644);
	if (S.fd < 0) {
		mt_say("cannot open ", S.cfg.output, ": ",
		       errno == ENXIO ? "not a regular file" : strerror(errno), "; not recording", NULL);
		return -1;
	}
	/* The rule memtrail(1) gives: a regular file, or /dev/null (1, 3). */
	if (fstat(S.fd, &st) < 0 ||
	    !(S_ISREG(st.st_mode) || (S_ISCHR(st.st_mode) && st.st_rdev == makedev(1, 3)))) {
		mt_say("cannot open ", S.cfg.output, ": not a regular file; not recording", NULL);
		close(S.fd);
		S.fd = -1;
		return -1;
	}
	fl = fcntl(S.fd, F_GETFL);
	if (fl >= 0)
		fcntl(S.fd, F_SETFL, fl & ~O_NONBLOCK);
	move_fd_high();
	/* records: the threads' tables' (tbuf.c), kept while recording */
	S.stacks = mt_stacks_new(1);
	S.live = mt_live_new();
	S.mods = mt_modules_new();
	struct mt_writer_opts wo = { .wait = wait_sealed, .rss = read_rss };
	rss_page = (uint64_t)sysconf(_SC_PAGESIZE);
	S.w = mt_writer_new(S.fd, &mem, &wo);
	if (!S.stacks || !S.live || !S.mods || !S.w) {
		mt_say("out of memory; not recording", NULL);
		goto fail;
	}
	size_t len = read_cmdline();
	S.cmdlen = len;
	S.start_rt = (uint64_t)rt.tv_sec * 1000000000ull + (uint64_t)rt.tv_nsec;
	if (mt_writer_header(S.w, (uint32_t)getpid(), S.start_rt, cmdline, len) < 0) {
		mt_say("cannot write ", S.cfg.output, ": ", strerror(errno), "; not recording", NULL);
		goto fail;
	}
	if (mt_modules_scan(S.mods) < 0 || mt_modules_emit(S.mods, S.w, 0) < 0) {
		mt_say("cannot list the loaded modules; not recording", NULL);
		goto fail;
	}
	/* without memory for it, tags push their enclosing path (tags.c) */
	if (!S.tags)
		S.tags = mt_tags_new();
	if (S.tags && mt_tags_emit(S.tags, S.w, 0) < 0) {
		mt_say("cannot write ", S.cfg.output, ": ", strerror(errno), "; not recording", NULL);
		goto fail;
	}
	if (mt_sample_start(S.cfg.sample, S.cfg.sample_seed) < 0 ||
	    (S.cfg.sample && mt_writer_sample(S.w, 0, S.cfg.sample) < 0)) {
		mt_say("cannot start sampling; not recording", NULL);
		goto fail;
	}
	mt_rec_active = 1;
	return 0;
fail:
	close(S.fd);
	S.fd = -1;
	return -1;
}

static void start(void)
{
	S.gen = 1;
	S.pid = getpid();
	mt_config_read(&S.cfg);
	mt_rec_depth = S.cfg.depth;
	S.t0 = mono_ns();
	clock_init();
	if (mt_modules_text_of((const void *)start, &mt_self_lo, &mt_self_hi) < 0) {
		mt_say("cannot find its own code; not recording", NULL);
		return;
	}
	load_unwinder();
	if (!S.cfg.output[0]) {
		mt_say("output path too long; not recording", NULL);
		return;
	}
	/* every table in memory a drainer can share (without it: private);
	 * not where no drainer can start (no pidfd: Linux before 5.3, or
	 * valgrind, which would also track the arena's 64 GiB) */
	if (S.cfg.drainer && dr_possible())
		(void)mt_arena_init();
	open_log();
}

static int init_state;   /* 0: not started, 1: starting, 2: done */

void mt_rec_init(void)
{
	if (MT_LIKELY(__atomic_load_n(&init_state, __ATOMIC_ACQUIRE) == 2))
		return;
	int expected = 0;
	if (!__atomic_compare_exchange_n(&init_state, &expected, 1, 0,
					 __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
		return;      /* another thread, or this one further up, is at it */
	mt_tls.guard++;
	mt_hooks_resolve();
	start();
	mt_tls.guard--;
	__atomic_store_n(&init_state, 2, __ATOMIC_RELEASE);
}

/*
 * Runs once libc is fully set up (the first malloc may have started the
 * recording earlier): the parts that need environ, on_exit, threads.
 */
__attribute__((constructor)) static void mt_ctor(void)
{
	mt_rec_init();
	mt_tls.guard++;
	if (S.cfg.follow)
		mt_children_publish();   /* and LD_PRELOAD stays */
	else
		mt_config_strip_preload();
	if (mt_rec_active) {
		on_exit(on_exit_cb, NULL);
		S.exit_key_ok = pthread_key_create(&S.exit_key, thread_exit) == 0;
		pthread_atfork(fork_prepare, fork_parent, fork_child);
		install_all_fatal();
		dr_start();      /* before any thread of ours */
		if (!DR.on || !DR.ticks)
			start_helper();
	}
	mt_tls.guard--;
}

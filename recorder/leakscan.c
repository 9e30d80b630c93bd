/*
 * leakscan.c - which live blocks the program can still reach, at exit:
 * the classification valgrind memcheck makes with --leak-check=full, on
 * the recorder's own table of live blocks.
 *
 * Roots are every readable, writable mapping of the process that is not
 * the allocator's and not the recorder's: data and bss of every module,
 * thread stacks from each thread's stack pointer up (the red zone below
 * it included, as memcheck does), the TLS and thread descriptors at the
 * top of those stacks, anonymous mappings the program made, and the
 * general registers of every other thread. Left out: [heap] and glibc's
 * per-thread arenas (their free chunks hold stale user data and the
 * allocator's links), any other mapping holding live blocks but for
 * glibc's mmap'ed chunks, and those chunks (each is scanned as the block
 * it is, when reached; the rest of a mapping the kernel merged with a
 * chunk of the same flags next to it is the program's, and a root), the
 * recorder's own pages (tables.c keeps them listed: the live table holds
 * every block's address), the recorder's helper thread's stack, and the
 * exiting thread's stack below the exit handler's frame (the recorder's
 * own frames, whose unwritten slots still hold what deeper calls of the
 * program left there; memcheck sees those as undefined and skips them).
 *
 * The marking is memcheck's (mc_leakcheck.c): a root word pointing to a
 * block's start makes it reachable, into its middle possibly lost; the
 * words of a reachable block propagate the same way, those of a possibly
 * lost one only "possibly"; then, in address order, each block still
 * unreached leads a clique: the unreached blocks it reaches are
 * indirectly lost, and it stays definitely lost (unless a later clique
 * reaches it). Words are aligned; a block's words are its requested
 * size's. One difference glibc's allocator forces: a word pointing at
 * the header of the chunk that follows a live block (the allocator's own
 * links in libc's data, which memcheck never sees as its allocator is
 * its own) lies inside that block's last bytes when the block uses the
 * next chunk's first field; such words are not counted as pointers into
 * it.
 *
 * memcheck's leak-check heuristics (its default, --leak-check-heuristics=
 * all) are applied the same way: while marking from the roots, a word
 * pointing inside a block, found in a root or a reachable block, makes it
 * reachable as a pointer to its start would when the block is laid out
 * as one of these (mc_leakcheck.c, heuristic_reachedness):
 *   stdstring   the word points 24 B in, and the block is a copy-on-write
 *               std::string's rep: length, capacity, refcount, then the
 *               characters; 24 + capacity + 1 is the block's size and
 *               length <= capacity;
 *   length64    8 B in, after a 64-bit count of the bytes that follow
 *               (sqlite's allocator): the first word is size - 8, not 0;
 *   newarray    8 B in, after new[]'s element count: the first word is
 *               not 0 and divides size - 8 (length64 is a case of it);
 *   multipleinheritance
 *               an aligned word, 8 B of the block from it, holding a
 *               vtable's address, and the block's first word too: a
 *               pointer to a secondary base's subobject. A vtable address
 *               is an aligned address in a readable file mapping whose
 *               first 21 words (less at the mapping's end) hold two
 *               non-null words before any that is not the address of an
 *               executable file mapping (nulls are passed over).
 * Found from a possibly lost block, or in clique mode, such a word counts
 * as any interior pointer. One difference: memcheck also wants the words
 * it reads defined (written); the scan cannot tell.
 *
 * Stopping the other threads: a real-time signal left at its default by
 * the program, whose handler saves the interrupted registers and parks
 * the thread on a futex until the scan is over. Chosen over a ptrace'd
 * helper: nothing is forked or cloned (a preloaded library's helper
 * process would be a stranger to the program's fork handlers and
 * children), it works under a debugger or strace (a second tracer cannot
 * attach) and under Yama's ptrace restrictions, and a thread blocked in a
 * system call takes the signal at once (the call resumes afterwards:
 * SA_RESTART). A thread that blocks the signal, or one that does not park
 * within a second, makes the scan give up: the log then says nothing
 * ("not classified") rather than guessing from a moving heap. The
 * handler's disposition is the program's again before the threads go on.
 *
 * Everything is mmap'ed (nothing goes through the malloc hooks), roots
 * are read with process_vm_readv on the process itself (a mapping that
 * cannot be read, a file mapped past its end, costs an error, not a
 * SIGBUS), and the scan gives up after MT_LEAKSCAN_LIMIT_NS.
 *
 * Not for: writing the result (core.c, lib/writer.c), the other ends of
 * a recording (_exit, signals, exec: no scan there).
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

#include "livetab.h"
#include "recorder.h"
#include "writer.h"

#define MT_LEAKSCAN_LIMIT_NS (30ull * 1000000000ull)
#define PARK_WAIT_NS         (1000000000ull)
#define REDZONE              128     /* below the stack pointer (x86-64 and aarch64 ABIs) */
#define ARENA_HEAP_MAX       (64ull << 20)  /* glibc's HEAP_MAX_SIZE on 64-bit */
#define READ_PIECE           65536

enum { ST_UNREACHED = 0, ST_INDIRECT, ST_POSSIBLE, ST_REACHABLE };
static const uint8_t kind_of[] = { MT_LEAK_DEFINITE, MT_LEAK_INDIRECT, MT_LEAK_POSSIBLE,
				   MT_LEAK_REACHABLE };

/* A thread to park: the handler finds its slot by tid. */
struct park_slot {
	long tid;
	int arrived;          /* 1 once registers are saved (futex word) */
	uint64_t sp;
	uint64_t regs[34];
	unsigned nregs;
};

static struct {
	struct park_slot *slots;
	size_t n;
	int release;          /* futex word: 1 lets parked threads go */
} P;

/* The scan's own mappings, left out of the roots (the block array holds
 * every block's address). Only the exiting thread scans: no lock. */
#define MINE_MAX 16
static struct { uint64_t lo, hi; } mine[MINE_MAX];

static void *scratch(size_t len)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return NULL;
	for (size_t i = 0; i < MINE_MAX; i++)
		if (!mine[i].lo) {
			mine[i].lo = (uintptr_t)p;
			mine[i].hi = (uintptr_t)p + len;
			break;
		}
	return p;
}

static void unscratch(void *p, size_t len)
{
	for (size_t i = 0; i < MINE_MAX; i++)
		if (mine[i].lo == (uintptr_t)p)
			mine[i].lo = mine[i].hi = 0;
	munmap(p, len);
}

static uint64_t clock_ns(clockid_t c)
{
	struct timespec ts;
	clock_gettime(c, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static uint64_t mono(void)
{
	return clock_ns(CLOCK_MONOTONIC);
}

static long futex(int *w, int op, int val, const struct timespec *ts)
{
	return syscall(SYS_futex, w, op, val, ts, NULL, 0);
}

/* ---- parking other threads -------------------------------------------------- */

static void park_handler(int sig, siginfo_t *si, void *ucv)
{
	int saved = errno;
	long tid = syscall(SYS_gettid);
	ucontext_t *uc = ucv;
	(void)sig;
	(void)si;
	for (size_t i = 0; i < P.n; i++) {
		struct park_slot *s = &P.slots[i];
		if (s->tid != tid || __atomic_load_n(&s->arrived, __ATOMIC_ACQUIRE))
			continue;
#if defined(__x86_64__)
		s->nregs = NGREG;
		for (unsigned r = 0; r < NGREG; r++)
			s->regs[r] = (uint64_t)uc->uc_mcontext.gregs[r];
		s->sp = (uint64_t)uc->uc_mcontext.gregs[REG_RSP];
#elif defined(__aarch64__)
		s->nregs = 32;
		for (unsigned r = 0; r < 31; r++)
			s->regs[r] = uc->uc_mcontext.regs[r];
		s->regs[31] = uc->uc_mcontext.sp;
		s->sp = uc->uc_mcontext.sp;
#else
		(void)uc;
#endif
		__atomic_store_n(&s->arrived, 1, __ATOMIC_RELEASE);
		futex(&s->arrived, FUTEX_WAKE_PRIVATE, 1, NULL);
		while (!__atomic_load_n(&P.release, __ATOMIC_ACQUIRE))
			futex(&P.release, FUTEX_WAIT_PRIVATE, 0, NULL);
		__atomic_store_n(&s->arrived, 3, __ATOMIC_RELEASE);
		break;
	}
	errno = saved;
}

/* Reads a small /proc file into buf (NUL-terminated); its length or -1. */
static ssize_t read_small(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n, got = 0;
	if (fd < 0)
		return -1;
	while (got < (ssize_t)len - 1 && (n = read(fd, buf + got, len - 1 - (size_t)got)) > 0)
		got += n;
	close(fd);
	buf[got] = '\0';
	return got;
}

static void task_path(char *out, long tid, const char *leaf)
{
	char num[24];
	strcpy(out, "/proc/self/task/");
	strcat(out, mt_fmt_i64(num, tid));
	strcat(out, "/");
	strcat(out, leaf);
}

/* From a task's status: 1 if it blocks sig, 0 if not, -1 if gone or
 * exiting (no user code left to run), -2 if unknown. */
static int task_blocks(long tid, int sig)
{
	char path[64], buf[4096];
	task_path(path, tid, "status");
	if (read_small(path, buf, sizeof(buf)) <= 0)
		return -1;
	const char *st = strstr(buf, "\nState:\t");
	if (st && (st[8] == 'Z' || st[8] == 'X'))
		return -1;
	const char *b = strstr(buf, "\nSigBlk:\t");
	if (!b)
		return -2;
	b += 9;
	uint64_t mask = 0;
	for (; (*b >= '0' && *b <= '9') || (*b >= 'a' && *b <= 'f'); b++)
		mask = mask << 4 | (uint64_t)(*b <= '9' ? *b - '0' : *b - 'a' + 10);
	return (mask >> (sig - 1)) & 1;
}

/* The helper's stack pointer from /proc/self/task/TID/syscall (it sleeps
 * or waits for a lock the exiting thread holds); 0 if not known. */
static uint64_t task_syscall_sp(long tid)
{
	char path[64], buf[512];
	for (int tries = 0; tries < 100; tries++) {
		task_path(path, tid, "syscall");
		if (read_small(path, buf, sizeof(buf)) <= 0)
			return 0;
		if (buf[0] >= '0' && buf[0] <= '9') {
			/* "nr a1 a2 a3 a4 a5 a6 sp pc": the eighth field */
			char *p = buf;
			for (int f = 0; f < 7 && p; f++) {
				p = strchr(p, ' ');
				if (p)
					p++;
			}
			if (!p || p[0] != '0' || p[1] != 'x')
				return 0;
			uint64_t sp = 0;
			for (p += 2; (*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'f'); p++)
				sp = sp << 4 | (uint64_t)(*p <= '9' ? *p - '0' : *p - 'a' + 10);
			return sp;
		}
		struct timespec nap = { 0, 1000000 };
		nanosleep(&nap, NULL);
	}
	return 0;
}

struct task_list {
	long *tids;
	size_t n, max;
};

static int task_add(void *ctx, long tid)
{
	struct task_list *l = ctx;

	if (l->n == l->max)
		return 1;        /* more threads than room: cannot stop them all */
	l->tids[l->n++] = tid;
	return 0;
}

/* Lists the process's threads but self and skip into tids (at most max);
 * returns how many, or -1. */
static long list_tasks(long self, long skip, long *tids, size_t max)
{
	struct task_list l = { tids, 0, max };

	return mt_each_task(self, skip, task_add, &l) != 0 ? -1 : (long)l.n;
}

/* A real-time signal the program left at its default; 0 if none. */
static int pick_signal(struct sigaction *old)
{
	for (int sig = SIGRTMAX; sig >= SIGRTMIN; sig--) {
		if (sigaction(sig, NULL, old) == 0 && old->sa_handler == SIG_DFL &&
		    !(old->sa_flags & SA_SIGINFO))
			return sig;
	}
	return 0;
}

#define MAX_THREADS 65536

/*
 * Parks every other thread but the helper. 0 when all are parked (P.n of
 * them), -1 when it gave up (every thread parked so far is let go).
 */
static int park_all(long self, long helper, int *sig_out, struct sigaction *old)
{
	int sig = pick_signal(old);
	struct sigaction sa;
	long *tids;
	int ok = -1;

	P.n = 0;
	P.release = 0;
	if (!sig)
		return -1;
	tids = scratch(MAX_THREADS * sizeof(long));
	P.slots = scratch(MAX_THREADS * sizeof(struct park_slot));
	if (!tids || !P.slots)
		goto out;
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = park_handler;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	sigfillset(&sa.sa_mask);
	if (sigaction(sig, &sa, NULL) < 0)
		goto out;
	*sig_out = sig;
	/* Threads may start threads until they are parked: list again until
	 * a listing finds no one new. */
	for (int round = 0; round < 64; round++) {
		long n = list_tasks(self, helper, tids, MAX_THREADS);
		size_t fresh = 0;
		if (n < 0)
			goto out;
		for (long i = 0; i < n; i++) {
			size_t j;
			for (j = 0; j < P.n && P.slots[j].tid != tids[i]; j++)
				;
			if (j < P.n)
				continue;
			int b = task_blocks(tids[i], sig);
			if (b == -1)
				continue;     /* gone or exiting: no user code left */
			if (b != 0)
				goto out;     /* blocks it, or cannot tell */
			if (P.n == MAX_THREADS)
				goto out;
			P.slots[P.n].tid = tids[i];
			__atomic_store_n(&P.n, P.n + 1, __ATOMIC_RELEASE);
			if (syscall(SYS_tgkill, (long)getpid(), tids[i], sig) < 0) {
				if (errno != ESRCH)
					goto out;
				/* gone: nothing to scan, nothing to wait for */
				P.slots[P.n - 1].arrived = 2;
				P.slots[P.n - 1].nregs = 0;
				P.slots[P.n - 1].sp = 0;
			}
			fresh++;
		}
		/* Wait for the ones signalled. */
		uint64_t deadline = mono() + PARK_WAIT_NS;
		for (size_t j = 0; j < P.n; j++) {
			while (!__atomic_load_n(&P.slots[j].arrived, __ATOMIC_ACQUIRE)) {
				uint64_t t = mono();
				if (t >= deadline)
					goto out;
				/* a thread that exited meanwhile never arrives */
				if (task_blocks(P.slots[j].tid, sig) == -1) {
					P.slots[j].sp = 0;
					P.slots[j].nregs = 0;
					__atomic_store_n(&P.slots[j].arrived, 2, __ATOMIC_RELEASE);
					break;
				}
				struct timespec ts = { 0, 1000000 };
				futex(&P.slots[j].arrived, FUTEX_WAIT_PRIVATE, 0, &ts);
			}
		}
		if (!fresh) {
			ok = 0;
			break;
		}
	}
out:
	if (tids)
		unscratch(tids, MAX_THREADS * sizeof(long));
	return ok;
}

static void unpark_all(int sig, const struct sigaction *old)
{
	__atomic_store_n(&P.release, 1, __ATOMIC_RELEASE);
	futex(&P.release, FUTEX_WAKE_PRIVATE, INT32_MAX, NULL);
	/* Every parked thread leaves the handler before its slots go and
	 * the disposition changes back (at most a second: one that does not
	 * is left with the slots, which then stay mapped). */
	uint64_t deadline = mono() + PARK_WAIT_NS;
	int stuck = 0, pending = 0;
	for (size_t j = 0; j < P.n; j++)
		pending |= !__atomic_load_n(&P.slots[j].arrived, __ATOMIC_ACQUIRE);
	for (size_t j = 0; j < P.n; j++)
		while (__atomic_load_n(&P.slots[j].arrived, __ATOMIC_ACQUIRE) == 1) {
			struct timespec nap = { 0, 100000 };
			if (mono() >= deadline) {
				stuck = 1;
				break;
			}
			nanosleep(&nap, NULL);
		}
	/* A signal still on its way (a thread that did not park in time)
	 * finds the handler, which then returns at once; after the
	 * default it would end the process. */
	if (sig && !pending) {
		/* The recorder's own handler stands for the default (hooks.c
		 * shows it as SIG_DFL): it goes back, not SIG_DFL. */
		struct sigaction ours;
		if (old->sa_handler == SIG_DFL && mt_rec_fatal_action(sig, &ours))
			sigaction(sig, &ours, NULL);
		else
			sigaction(sig, old, NULL);
	}
	__atomic_store_n(&P.n, 0, __ATOMIC_RELEASE);
	if (P.slots && !stuck && !pending)
		unscratch(P.slots, MAX_THREADS * sizeof(struct park_slot));
	P.slots = NULL;
}

/* ---- blocks ----------------------------------------------------------------- */

#define CLUSTER_GAP (64u << 10)  /* a wider gap between blocks starts a cluster */

/*
 * Blocks no more than CLUSTER_GAP apart, [lo, hi), blocks first..last;
 * gran[base + g] is the first block starting at or after lo + (g << shift),
 * for every granule g of the cluster and one past its end.
 */
struct cluster { uint64_t lo, hi; size_t first, base; };
#define VT_CACHE 256
#define VTABLE_MAX_CHECK 20  /* memcheck's: words after the first looked at */

/* A file mapping (memcheck's SkFileC segments): readable, executable. */
struct fmap { uint64_t lo, hi; uint8_t r, x; };

/*
 * Which 2 MiB regions of memory hold part of a cluster, hashed to a bit
 * each (bits 21 to 36 of an address): most words between the lowest
 * block and the highest point elsewhere (the heap's blocks are low, a
 * large block mmap'ed high, and words between them point at code, stacks
 * and the program's own mappings), and one bit, read from 8 KiB that
 * stay in the cache, rules them out without the clusters' binary search
 * (cc1 at exit: 1.6 million of its 4 million words between the lowest
 * block and the highest end, 0.17 million in a cluster).
 */
#define REGION_SHIFT 21
#define FILTER_BITS 16
static inline uint64_t region_bit(uint64_t p)
{
	return (p >> REGION_SHIFT) & ((1u << FILTER_BITS) - 1);
}

struct scan {
	struct cluster *cl;   /* the blocks in clusters, by address */
	size_t ncl;
	uint64_t *filter;     /* (1 << FILTER_BITS) bits, by region_bit */
	uint32_t *gran;       /* per granule of each cluster: its first block */
	size_t ngran;
	unsigned shift;       /* log2 of a granule's size */
	const struct mt_livetab *tab;  /* the blocks, by address (mt_livetab_sort) */
	uint8_t *st;
	uint32_t *stack;
	size_t n, sp, cap;
	uint64_t lo, hi;      /* lowest start, highest end */
	uint64_t words;
	uint64_t pops;        /* blocks scanned: the clock is read every 65,536 */
	uint64_t deadline;
	int over;             /* out of time or stack room */
	size_t (*usable)(void *);
	struct fmap *fm;      /* file mappings, by address: the vtable test */
	size_t nfm;
	uint64_t vt_addr[VT_CACHE];  /* vtable tests made, and their answers */
	uint8_t vt_is[VT_CACHE];
};

/* Block i, in address order: its start and requested size. */
static inline uint64_t start_of(const struct scan *s, size_t i)
{
	return mt_livetab_addr_at(s->tab, i);
}

static inline uint64_t size_of(const struct scan *s, size_t i)
{
	return mt_live_block(s->tab, mt_livetab_val_at(s->tab, i)).size;
}

/* One past block i's last byte (a block of size 0 holds its start). */
static inline uint64_t end_of(const struct scan *s, size_t i)
{
	uint64_t size = size_of(s, i);

	return start_of(s, i) + size + (size == 0);
}

/*
 * Finding the block a word points into, in two steps so that scan_words
 * can overlap the cache misses of many words: a binary search of millions
 * of blocks would miss the caches at nearly every step, and one word's
 * lookup waiting for memory would leave the next one's idle.
 *
 * granule(): the cluster holding p (few of them: they stay in the caches)
 * and the index of p's granule entry, or -1 (p in no cluster, or outside
 * the blocks' span: the caller checks [lo, hi) first); *first: the
 * cluster's first block. resolve(): from that entry, the blocks starting in
 * p's granule and the one before them, the block containing p, or -1.
 */
static long granule(const struct scan *s, uint64_t p, size_t *first)
{
	size_t lo = 0, hi = s->ncl;
	while (hi - lo > 1) {
		size_t mid = (lo + hi) / 2;
		if (s->cl[mid].lo <= p)
			lo = mid;
		else
			hi = mid;
	}
	const struct cluster *c = &s->cl[lo];
	if (p < c->lo || p >= c->hi)
		return -1;
	*first = c->first;
	return (long)(c->base + (size_t)((p - c->lo) >> s->shift));
}

static long resolve(const struct scan *s, uint64_t p, size_t g, size_t first)
{
	size_t i = s->gran[g], j = s->gran[g + 1];
	/* many blocks in one granule: dense blocks, or a sparse cluster (a
	 * huge block among small ones) that made the granules wide */
	while (j - i > 8) {
		size_t mid = i + (j - i) / 2;
		if (start_of(s, mid) <= p)
			i = mid;
		else
			j = mid;
	}
	while (j > i && start_of(s, j - 1) > p)
		j--;
	/* j - 1: the last block starting at or before p */
	if (j == 0 || j - 1 < first)
		return -1;
	return p < end_of(s, j - 1) ? (long)(j - 1) : -1;
}

/*
 * The clusters and their granule entries, on the sorted blocks. The
 * granule is the smallest power of two from 16 B up for which the
 * entries are at most an eighth of the blocks (plus a few per cluster):
 * 0.5 B a block, taken while the heap is at its largest when a check runs
 * there. Some eight blocks start in a granule on average over the span,
 * more where they are dense, fewer where they are sparse; resolve() reads
 * the few in order and searches the many: python3's two million blocks
 * scan as fast as with an entry per block (0.33-0.41 s against 0.36), and
 * the program's peak RSS during the check is 6.7 MiB lower.
 */
static int make_clusters(struct scan *s)
{
	size_t ncl = 0;
	uint64_t span = 0, lo = 0, hi = 0;
	for (size_t i = 0; i < s->n; i++) {
		uint64_t start = start_of(s, i), end = end_of(s, i);
		if (i == 0 || start > hi + CLUSTER_GAP) {
			if (i)
				span += hi - lo;
			lo = start;
			hi = end;
			ncl++;
		} else if (end > hi)
			hi = end;
	}
	span += hi - lo;
	s->shift = 4;
	while (s->shift < 30 && (span >> s->shift) > s->n / 8)
		s->shift++;
	s->cl = scratch(ncl * sizeof(*s->cl));
	if (!s->cl)
		return -1;
	s->ncl = ncl;
	/* entries: each cluster's granules, one past its end, one of slack */
	s->ngran = (size_t)(span >> s->shift) + 3 * ncl;
	s->gran = scratch(s->ngran * sizeof(uint32_t));
	if (!s->gran)
		return -1;
	size_t k = 0, base = 0;
	for (size_t i = 0; i < s->n;) {
		struct cluster *c = &s->cl[k++];
		c->lo = start_of(s, i);
		c->hi = end_of(s, i);
		c->first = i;
		size_t j = i + 1;
		for (; j < s->n && start_of(s, j) <= c->hi + CLUSTER_GAP; j++) {
			uint64_t end = end_of(s, j);
			if (end > c->hi)
				c->hi = end;
		}
		c->base = base;
		size_t ng = (size_t)((c->hi - 1 - c->lo) >> s->shift) + 1;
		if (base + ng + 1 > s->ngran)
			return -1;
		size_t m = i;
		for (size_t g = 0; g <= ng; g++) {
			uint64_t at = c->lo + ((uint64_t)g << s->shift);
			while (m < j && start_of(s, m) < at)
				m++;
			s->gran[base + g] = (uint32_t)m;
		}
		base += ng + 1;
		i = j;
	}
	s->filter = scratch(((size_t)1 << FILTER_BITS) / 8);
	if (!s->filter)
		return -1;
	for (size_t c = 0; c < ncl; c++) {
		uint64_t r = s->cl[c].lo >> REGION_SHIFT, e = (s->cl[c].hi - 1) >> REGION_SHIFT;
		if (e - r >= ((uint64_t)1 << FILTER_BITS))
			e = r + ((uint64_t)1 << FILTER_BITS) - 1;     /* every bit */
		for (; r <= e; r++) {
			uint64_t b = r & ((1u << FILTER_BITS) - 1);
			s->filter[b >> 6] |= (uint64_t)1 << (b & 63);
		}
	}
	return 0;
}

static void push(struct scan *s, size_t i)
{
	if (s->sp == s->cap) {
		s->over = 1;
		return;
	}
	s->stack[s->sp++] = (uint32_t)i;
	/* popped soon (last in, first out): its words on their way */
	__builtin_prefetch((const void *)(uintptr_t)start_of(s, i));
}

/* The file mapping holding a, or NULL. */
static const struct fmap *fmap_find(const struct scan *s, uint64_t a)
{
	size_t lo = 0, hi = s->nfm;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (s->fm[mid].hi <= a)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < s->nfm && s->fm[lo].lo <= a ? &s->fm[lo] : NULL;
}

/*
 * memcheck's vtable test (aligned_ptr_above_page0_is_vtable_addr): an
 * array, in a readable file mapping, of words each null or the address of
 * an executable file mapping, with two non-null ones among the first
 * VTABLE_MAX_CHECK + 1 (or up to the mapping's last word). The words are
 * read with process_vm_readv: a file mapped past its end would fault.
 * Answers are cached: the same few vtables come back for many blocks.
 */
static int is_vtable(struct scan *s, uint64_t a)
{
	size_t slot = (size_t)(a >> 3) % VT_CACHE;
	if (s->vt_addr[slot] == a)
		return s->vt_is[slot];
	const struct fmap *m = fmap_find(s, a);
	int is = 0;
	if (m && m->r) {
		uint64_t last = a + VTABLE_MAX_CHECK * 8;
		uint64_t w[VTABLE_MAX_CHECK + 1];
		if (last > m->hi - 1 - 8)
			last = m->hi - 1 - 8;
		size_t nw = last >= a ? (size_t)((last - a) / 8 + 1) : 0;
		struct iovec l = { w, nw * 8 }, r = { (void *)(uintptr_t)a, nw * 8 };
		if (nw && syscall(SYS_process_vm_readv, (long)getpid(), &l, 1ul, &r, 1ul, 0ul) ==
			  (long)(nw * 8)) {
			unsigned fns = 0;
			for (size_t k = 0; k < nw && fns < 2; k++) {
				if (!w[k])
					continue;
				const struct fmap *f = fmap_find(s, w[k]);
				if (!f || !f->x)
					break;
				fns++;
			}
			is = fns == 2;
		}
	}
	s->vt_addr[slot] = a;
	s->vt_is[slot] = (uint8_t)is;
	return is;
}

/*
 * Does w, a word pointing inside the block at start but not at its start,
 * count as a pointer to its start under one of memcheck's heuristics?
 * (The rules are at the top of the file; the order is memcheck's.)
 */
static int heuristic(struct scan *s, uint64_t start, uint64_t size, uint64_t w)
{
	const uint64_t *d = (const uint64_t *)(uintptr_t)start;
	uint64_t off = w - start;
	if (!start || (start & 7))
		return 0;
	/* stdstring: the word after the length must be in the block */
	if (off == 24 && size >= 16 && 3 * 8 + d[1] + 1 == size && d[0] <= d[1])
		return 1;
	/* length64, newarray */
	if (off == 8 && size >= 8 && d[0] > 0 && (size - 8) % d[0] == 0)
		return 1;
	/* multipleinheritance */
	if (!(w & 7) && off + 8 <= size) {
		uint64_t inner = *(const uint64_t *)(uintptr_t)w, first = d[0];
		if (!(inner & 7) && inner >= 4096 && !(first & 7) && first >= 4096 &&
		    is_vtable(s, inner) && is_vtable(s, first))
			return 1;
	}
	return 0;
}

/*
 * One word w found in memory scanned with prior state `prior`
 * (ST_REACHABLE for roots), or in clique mode (clique >= 0).
 */
static void word(struct scan *s, uint64_t w, long i, int prior, long clique)
{
	uint64_t start = start_of(s, (size_t)i);
	if (w != start && s->usable) {
		/* The next chunk's header, inside a block that uses its first
		 * field: the allocator's link, not the program's pointer. */
		uint64_t u = s->usable((void *)(uintptr_t)start);
		if (u >= 8 && w == start + u - 8)
			return;
	}
	uint8_t *st = &s->st[i];
	if (clique >= 0) {
		if (*st == ST_UNREACHED && i != clique) {
			*st = ST_INDIRECT;
			push(s, (size_t)i);
		}
		return;
	}
	if (*st == ST_REACHABLE)
		return;
	if (prior == ST_REACHABLE && (w == start || heuristic(s, start, size_of(s, (size_t)i), w))) {
		*st = ST_REACHABLE;
		push(s, (size_t)i);
	} else if (*st == ST_UNREACHED) {
		*st = ST_POSSIBLE;
		push(s, (size_t)i);
	}
}

#define BATCH 32

/*
 * The words p[0..nw) in order, by batches: each stage prefetches what the
 * next one reads for every word of the batch (the granule entries, then
 * the blocks), so their misses overlap. Lookups only read what the marking
 * never changes: the batch sees the same blocks one word at a time would.
 */
static void scan_words(struct scan *s, const uint64_t *p, size_t nw, int prior, long clique)
{
	uint64_t ws[BATCH];
	size_t gs[BATCH], fs[BATCH];
	const uint64_t lo = s->lo, span = s->hi - s->lo;
	if (!s->filter) {       /* no block: no word can point into one */
		s->words += nw;
		return;
	}
	for (size_t k = 0; k < nw;) {
		size_t m = 0, c = 0;
		/* the words that may point into a cluster, without a branch
		 * on each: which words do is no pattern a branch predictor
		 * learns (cc1 at exit: this loop was 60 % of the scan, most
		 * of it on the test) */
		for (; k < nw && c < BATCH; k++) {
			uint64_t w = p[k], b = region_bit(w);
			ws[c] = w;
			c += (w - lo < span) & (unsigned)(s->filter[b >> 6] >> (b & 63));
		}
		for (size_t x = 0; x < c; x++) {
			long g = granule(s, ws[x], &fs[m]);
			if (g < 0)
				continue;
			__builtin_prefetch(&s->gran[g]);
			ws[m] = ws[x];
			gs[m++] = (size_t)g;
		}
		for (size_t x = 0; x < m; x++) {
			uint32_t j = s->gran[gs[x] + 1];
			if (j)
				__builtin_prefetch(s->tab->slots + (j - 1) * MT_LIVETAB_SLOT);
		}
		for (size_t x = 0; x < m; x++) {
			long i = resolve(s, ws[x], gs[x], fs[x]);
			if (i >= 0)
				word(s, ws[x], i, prior, clique);
		}
	}
	s->words += nw;
}

/* Scans the words of popped blocks until the stack is empty. */
static void drain(struct scan *s, long clique)
{
	while (s->sp && !s->over) {
		size_t i = s->stack[--s->sp];
		uint64_t start = start_of(s, i);
		/* the blocks popped next, unless this one pushes others */
		for (size_t d = 1; d <= 4 && d <= s->sp; d++)
			__builtin_prefetch((const void *)(uintptr_t)start_of(s, s->stack[s->sp - d]));
		uint64_t a = (start + 7) & ~7ull;
		uint64_t e = (start + size_of(s, i)) & ~7ull;
		int prior = clique >= 0 ? ST_UNREACHED : s->st[i];
		if (e > a)
			scan_words(s, (const uint64_t *)(uintptr_t)a, (size_t)((e - a) / 8), prior,
				   clique);
		if (!(++s->pops & 65535) && mono() > s->deadline)
			s->over = 1;
	}
}

/* ---- roots ------------------------------------------------------------------- */

/* Scans [a, e) of this process's memory through process_vm_readv. */
static void scan_root(struct scan *s, uint64_t a, uint64_t e, uint64_t *buf)
{
	pid_t pid = getpid();
	a = (a + 7) & ~7ull;
	e &= ~7ull;
	while (a < e && !s->over) {
		size_t len = e - a > READ_PIECE ? READ_PIECE : (size_t)(e - a);
		struct iovec l = { buf, len }, r = { (void *)(uintptr_t)a, len };
		ssize_t got = syscall(SYS_process_vm_readv, (long)pid, &l, 1ul, &r, 1ul, 0ul);
		if (got <= 0) {
			/* unreadable: skip to the next page */
			a = (a + 4096) & ~4095ull;
			continue;
		}
		scan_words(s, buf, (size_t)got / 8, ST_REACHABLE, -1);
		a += (uint64_t)got & ~7ull;
		if ((uint64_t)got < 8)
			a = (a + 4096) & ~4095ull;
		drain(s, -1);
	}
}

/* A range left out of the roots. */
struct range { uint64_t lo, hi; };

/* Scans [a, e) minus the sorted, disjoint ranges ex[0..nex). */
static void scan_minus(struct scan *s, uint64_t a, uint64_t e, const struct range *ex, size_t nex,
		       uint64_t *buf)
{
	for (size_t k = 0; k < nex && a < e; k++) {
		if (ex[k].hi <= a || ex[k].lo >= e)
			continue;
		if (ex[k].lo > a)
			scan_root(s, a, ex[k].lo, buf);
		if (ex[k].hi > a)
			a = ex[k].hi;
	}
	if (a < e)
		scan_root(s, a, e, buf);
}

static uint64_t hexnum(const char **pp)
{
	const char *p = *pp;
	uint64_t v = 0;
	for (; (*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'f'); p++)
		v = v << 4 | (uint64_t)(*p <= '9' ? *p - '0' : *p - 'a' + 10);
	*pp = p;
	return v;
}

/* The first block starting at or after a (s->n: none). */
static size_t first_from(const struct scan *s, uint64_t a)
{
	size_t lo = 0, hi = s->n;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (start_of(s, mid) < a)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/*
 * Is the block at start one of glibc's mmap'ed chunks? Then [*lo, *hi) is
 * the whole mapping it has. The chunk header before the block (prev_size,
 * size) is read with process_vm_readv, and believed only when its size
 * is the one malloc_usable_size gives for such a chunk: under another
 * allocator (valgrind's, with red zones there) the bytes are not a header.
 */
#define CHUNK_IS_MMAPPED 2u
static int mmapped_chunk(const struct scan *s, uint64_t start, uint64_t *lo, uint64_t *hi)
{
	uint64_t h[2];
	struct iovec l = { h, sizeof(h) }, r = { (void *)(uintptr_t)(start - 16), sizeof(h) };
	if (!s->usable || start < 16 ||
	    syscall(SYS_process_vm_readv, (long)getpid(), &l, 1ul, &r, 1ul, 0ul) != (long)sizeof(h) ||
	    !(h[1] & CHUNK_IS_MMAPPED))
		return 0;
	uint64_t size = h[1] & ~(uint64_t)7;
	if (size < 16 || s->usable((void *)(uintptr_t)start) != size - 16 || h[0] > start - 16)
		return 0;
	/* prev_size: the offset of an aligned block's chunk in its mapping */
	*lo = start - 16 - h[0];
	*hi = start - 16 + size;
	return 1;
}

/*
 * Does [a, e) hold the start of a live block (1), only of blocks that are
 * mmap'ed chunks (2), or none (0)? The kernel merges a mapping of the
 * program's with the mapping of a chunk next to it when their flags are
 * the same: such a line of /proc/self/maps is a root but for the chunks.
 */
static int holds_block(const struct scan *s, uint64_t a, uint64_t e)
{
	size_t i = first_from(s, a);
	uint64_t lo, hi;
	if (i == s->n || start_of(s, i) >= e)
		return 0;
	for (; i < s->n && start_of(s, i) < e; i++)
		if (!mmapped_chunk(s, start_of(s, i), &lo, &hi) || lo < a || hi > e)
			return 1;
	return 2;
}

/* [a, e) but for the mmap'ed chunks in it (holds_block() said 2). */
static void scan_but_chunks(struct scan *s, uint64_t a, uint64_t e, const struct range *ex,
			    size_t nex, uint64_t *buf)
{
	uint64_t lo, hi;
	for (size_t i = first_from(s, a); i < s->n && start_of(s, i) < e && !s->over; i++) {
		if (!mmapped_chunk(s, start_of(s, i), &lo, &hi))
			continue;
		if (lo > a)
			scan_minus(s, a, lo, ex, nex, buf);
		if (hi > a)
			a = hi;
	}
	if (a < e && !s->over)
		scan_minus(s, a, e, ex, nex, buf);
}

/* Is [a, e) one of glibc's per-thread arena heaps (its heap_info)? */
static int arena_heap(uint64_t a, uint64_t e)
{
	uint64_t h[4];
	struct iovec l = { h, sizeof(h) }, r = { (void *)(uintptr_t)a, sizeof(h) };
	if (a % ARENA_HEAP_MAX)
		return 0;
	if (syscall(SYS_process_vm_readv, (long)getpid(), &l, 1ul, &r, 1ul, 0ul) != (long)sizeof(h))
		return 0;
	/* ar_ptr, prev, size, mprotect_size: the read-write part is
	 * mprotect_size long, size at most that */
	return h[0] && h[2] <= h[3] && h[3] == e - a && h[3] % 4096 == 0;
}

static int by_lo(const struct range *x, const struct range *y)
{
	return x->lo < y->lo ? -1 : x->lo > y->lo;
}

static void sort_ranges(struct range *r, size_t n)
{
	for (size_t i = 1; i < n; i++) {
		struct range t = r[i];
		size_t j = i;
		for (; j > 0 && by_lo(&r[j - 1], &t) > 0; j--)
			r[j] = r[j - 1];
		r[j] = t;
	}
}

/* ---- the scan ------------------------------------------------------------------ */

/*
 * With MEMTRAIL_LEAK_SCAN_STATS=1, one line on stderr per scan, for the
 * bench (tests/bench/run.sh): the blocks and bytes classified, the words
 * read, the wall and CPU time (the process's: the other threads stand
 * still meanwhile). Plain integers, for a script to read.
 */
static void say_stats(int rc, uint64_t blocks, uint64_t bytes, uint64_t words, uint64_t ns,
		      uint64_t cpu_ns)
{
	const char *v = mt_env("MEMTRAIL_LEAK_SCAN_STATS");
	char b[4][24], t[2][24];
	if (!v || strcmp(v, "1") != 0)
		return;
	mt_fmt_i64(b[0], (int64_t)blocks);
	mt_fmt_i64(b[1], (int64_t)bytes);
	mt_fmt_i64(b[2], (int64_t)words);
	mt_fmt_i64(t[0], (int64_t)ns);
	mt_fmt_i64(t[1], (int64_t)cpu_ns);
	mt_say("leak scan: ", rc == 0 ? "classified " : "gave up on ", b[0], " blocks, ", b[1],
	       " bytes, ", b[2], " words read, ", t[0], " ns wall, ", t[1], " ns cpu", NULL);
}

int mt_leakscan(struct mt_live *l, uint64_t own_sp, long helper, size_t (*usable)(void *),
		void (*lost)(void *ctx, const struct mt_leak_entry *e, size_t n, int more,
			     const struct mt_leak_totals *tot),
		void *ctx, int keep, struct mt_leakscan_result *res)
{
	struct mt_livetab *tab = &l->tab;
	uint64_t t0 = mono(), cpu0 = clock_ns(CLOCK_PROCESS_CPUTIME_ID), heap = 0;
	size_t n = tab->len;
	struct scan s = { 0 };
	int sorted = 0;
	char *maps = NULL;
	size_t maps_cap = 1 << 20, maps_len = 0;
	struct range *ex = NULL;
	size_t nex = 0, ex_cap = 0, fm_cap = 0;
	uint64_t *buf = NULL;
	struct mt_leak_entry *part = NULL;
	int sig = 0, rc = -1;
	struct sigaction old;
	long self = syscall(SYS_gettid);
	uint64_t helper_sp = 0;
	uint64_t here = (uintptr_t)__builtin_frame_address(0);

	memset(res, 0, sizeof(*res));
	memset(&old, 0, sizeof(old));
#if !defined(__x86_64__) && !defined(__aarch64__)
	return -1;
#endif
	/* Sampling: the table holds the recorded blocks only, and the
	 * pointers held in the others are out of sight: a reachable block
	 * would look lost. Such a log says "not classified". */
	if (mt_sample_mean)
		return -1;
	/* Blocks from 2^48 up (5-level paging, on the program's request) are
	 * kept beside the table's slots, out of its address order: such a
	 * heap is not classified. */
	if (tab->oddlen)
		return -1;
	s.n = n;
	s.cap = 3 * n + 16;
	s.deadline = t0 + MT_LEAKSCAN_LIMIT_NS;
	s.usable = usable;
	s.tab = tab;
	s.st = scratch(n + 1);
	s.stack = scratch(s.cap * sizeof(uint32_t));
	buf = scratch(READ_PIECE);
	maps = scratch(maps_cap);
	part = scratch(MT_LEAK_PER_RECORD * sizeof(*part));
	if (!s.st || !s.stack || !buf || !maps || !part)
		goto out;

	/*
	 * The blocks in address order: the live table's own slots, sorted in
	 * place for the scan and, if kept, put back after it (a copy would
	 * take more memory than the table: 24 bytes a block and as much again
	 * to sort it, 100 MiB for python's two million blocks).
	 */
	if (mt_rec_live_sort(tab, keep) < 0)
		goto out;
	sorted = keep;
	for (size_t i = 0; i < n; i++) {
		uint64_t start = start_of(&s, i), end = end_of(&s, i);

		if (start & 3)
			goto out;     /* the record packs the kind in two low bits */
		heap += size_of(&s, i);
		if (i == 0)
			s.lo = start;
		if (end > s.hi)
			s.hi = end;
	}

	if (n && make_clusters(&s) < 0)
		goto out;

	if (helper && !(helper_sp = task_syscall_sp(helper)))
		goto out;
	if (park_all(self, helper, &sig, &old) < 0)
		goto out;

	/* The mappings, read once every thread stands still. */
	{
		int fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
		ssize_t got;
		if (fd < 0)
			goto out;
		while ((got = read(fd, maps + maps_len, maps_cap - 1 - maps_len)) > 0) {
			maps_len += (size_t)got;
			if (maps_len + 1 == maps_cap) {
				void *m = scratch(maps_cap * 2);
				if (!m) {
					close(fd);
					goto out;
				}
				memcpy(m, maps, maps_len);
				unscratch(maps, maps_cap);
				maps = m;
				maps_cap *= 2;
			}
		}
		close(fd);
		if (got < 0)
			goto out;
		maps[maps_len] = '\0';
	}

	/* The file mappings, for the vtable test of the heuristics. */
	{
		size_t lines = 1;
		for (size_t i = 0; i < maps_len; i++)
			lines += maps[i] == '\n';
		fm_cap = lines;
		s.fm = scratch(fm_cap * sizeof(*s.fm));
		if (!s.fm)
			goto out;
		for (const char *line = maps; *line;) {
			const char *p = line, *nl = strchr(line, '\n');
			uint64_t a = hexnum(&p), e;
			line = nl ? nl + 1 : p + strlen(p);
			if (*p++ != '-')
				break;
			e = hexnum(&p);
			p++;
			const char *path = p;
			for (int f = 0; f < 4 && path; f++) {
				path = strchr(path, ' ');
				while (path && *path == ' ')
					path++;
			}
			if (path && *path == '/' && s.nfm < fm_cap) {
				s.fm[s.nfm].lo = a;
				s.fm[s.nfm].hi = e;
				s.fm[s.nfm].r = p[0] == 'r';
				s.fm[s.nfm].x = p[2] == 'x';
				s.nfm++;
			}
		}
	}

	/* What the roots leave out: the recorder's pages. */
	{
		size_t nown = mt_mem_owned(NULL, 0);
		ex_cap = nown + 64;
		ex = scratch(ex_cap * sizeof(*ex));
		if (!ex)
			goto out;
		nex = mt_mem_owned((uint64_t *)(void *)ex, ex_cap);
		if (nex > ex_cap - MINE_MAX)
			goto out;
		for (size_t i = 0; i < MINE_MAX; i++)
			if (mine[i].lo) {
				ex[nex].lo = mine[i].lo;
				ex[nex++].hi = mine[i].hi;
			}
		sort_ranges(ex, nex);
	}

	/* The other threads' registers. */
	for (size_t j = 0; j < P.n; j++)
		scan_words(&s, P.slots[j].regs, P.slots[j].nregs, ST_REACHABLE, -1);
	drain(&s, -1);

	/* The mappings. */
	for (const char *line = maps; *line && !s.over;) {
		const char *p = line, *nl = strchr(line, '\n');
		uint64_t a = hexnum(&p), e;
		if (*p++ != '-')
			break;
		e = hexnum(&p);
		p++;
		int rw = p[0] == 'r' && p[1] == 'w';
		/* the path: after the fifth field */
		const char *path = p;
		for (int f = 0; f < 4 && path; f++) {
			path = strchr(path, ' ');
			while (path && *path == ' ')
				path++;
		}
		size_t plen = path ? (size_t)((nl ? nl : path + strlen(path)) - path) : 0;
		line = nl ? nl + 1 : p + strlen(p);
		if (!rw)
			continue;
		if (plen >= 6 && !memcmp(path, "[heap]", 6))
			continue;
		if (plen >= 5 && !memcmp(path, "/dev/", 5) && !(plen >= 9 && !memcmp(path, "/dev/zero", 9)))
			continue;
		int blocks = holds_block(&s, a, e);
		if (blocks == 1 || arena_heap(a, e))
			continue;
		/* A thread's stack: from its stack pointer (less the red zone) up. */
		uint64_t from = a;
		int skip = 0;
		if (helper_sp >= a && helper_sp < e)
			skip = 1;
		if (own_sp >= a && own_sp < e)
			from = own_sp;
		if (!own_sp && here >= a && here < e)
			skip = 1;     /* the recorder's helper thread: its own stack */
		for (size_t j = 0; j < P.n; j++)
			if (P.slots[j].sp >= a && P.slots[j].sp < e)
				from = P.slots[j].sp - REDZONE > a ? P.slots[j].sp - REDZONE : a;
		if (skip)
			continue;
		if (blocks)
			scan_but_chunks(&s, from, e, ex, nex, buf);
		else
			scan_minus(&s, from, e, ex, nex, buf);
	}
	if (s.over)
		goto out;

	/* Cliques of the unreached, in address order. */
	for (size_t i = 0; i < n && !s.over; i++) {
		if (s.st[i] != ST_UNREACHED)
			continue;
		push(&s, i);
		drain(&s, (long)i);
	}
	if (s.over)
		goto out;

	/*
	 * The result: the totals per kind, then the lost blocks in address
	 * order, a record's worth at a time (a list of them all would take 24
	 * bytes a block, 20 MiB for the million python holds possibly lost).
	 */
	{
		uint64_t nl = 0, done = 0;
		size_t k = 0;

		for (size_t i = 0; i < n; i++) {
			res->tot.bytes[kind_of[s.st[i]]] += size_of(&s, i);
			res->tot.blocks[kind_of[s.st[i]]]++;
		}
		for (int kind = 0; kind < MT_LEAK_KINDS; kind++)
			if (kind != MT_LEAK_REACHABLE)
				nl += res->tot.blocks[kind];
		for (size_t i = 0; i < n; i++) {
			if (s.st[i] == ST_REACHABLE)
				continue;
			struct mt_block b = mt_live_block(tab, mt_livetab_val_at(tab, i));

			part[k].addr_kind = start_of(&s, i) | kind_of[s.st[i]];
			part[k].size = b.size;
			part[k].stack = b.stack;
			if (++k == MT_LEAK_PER_RECORD && ++done * k < nl) {
				lost(ctx, part, k, 1, &res->tot);
				k = 0;
			}
		}
		lost(ctx, part, k, 0, &res->tot);
	}
	res->words = s.words;
	rc = 0;
out:
	if (sig || P.slots)
		unpark_all(sig, &old);
	if (sorted && mt_rec_live_unsort(tab) < 0)
		rc = -2;
	res->ns = mono() - t0;
	say_stats(rc, n, heap, s.words, res->ns, clock_ns(CLOCK_PROCESS_CPUTIME_ID) - cpu0);
	if (s.st)
		unscratch(s.st, n + 1);
	if (s.cl)
		unscratch(s.cl, s.ncl * sizeof(*s.cl));
	if (s.gran)
		unscratch(s.gran, s.ngran * sizeof(uint32_t));
	if (s.filter)
		unscratch(s.filter, ((size_t)1 << FILTER_BITS) / 8);
	if (s.stack)
		unscratch(s.stack, s.cap * sizeof(uint32_t));
	if (buf)
		unscratch(buf, READ_PIECE);
	if (part)
		unscratch(part, MT_LEAK_PER_RECORD * sizeof(*part));
	if (maps)
		unscratch(maps, maps_cap);
	if (ex)
		unscratch(ex, ex_cap * sizeof(*ex));
	if (s.fm)
		unscratch(s.fm, fm_cap * sizeof(*s.fm));
	return rc;
}

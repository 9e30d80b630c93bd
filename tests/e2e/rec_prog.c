/*
 * rec_prog.c - the test program of the recorder's end-to-end tests
 * (tests/e2e/rec_*.sh). Each mode does a known sequence of heap operations
 * and prints, with write(2) and no stdio (so nothing else touches the heap),
 * what it did: "expect allocs=A frees=F bytes=B live=L blocks=N". Those
 * figures are the program's own count of its calls, the independent truth
 * the log is checked against.
 *
 * Not for: anything but these tests; not a sample (samples/ holds those).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <malloc.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/single_threaded.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "memtrail.h"

static long allocs, frees, bytes, live, blocks;

static void *my_malloc(size_t n)
{
	void *p = malloc(n);
	allocs++;
	bytes += (long)n;
	live += (long)n;
	blocks++;
	return p;
}

static void my_free(void *p, size_t n)
{
	free(p);
	frees++;
	live -= (long)n;
	blocks--;
}

static void say(const char *s)
{
	ssize_t r = write(1, s, strlen(s));
	(void)r;
}

static void expect(void)
{
	char buf[160];
	snprintf(buf, sizeof(buf), "expect allocs=%ld frees=%ld bytes=%ld live=%ld blocks=%ld\n",
		 allocs, frees, bytes, live, blocks);
	say(buf);
}

/* Every C entry point, with the counting rules of memcheck. */
static void basic(void)
{
	void *p[100];
	for (int i = 0; i < 100; i++)
		p[i] = my_malloc((size_t)i * 3);        /* malloc(0) counts too */
	for (int i = 0; i < 100; i += 2)
		my_free(p[i], (size_t)i * 3);
	free(NULL);                                     /* counts nothing */
	void *c = calloc(7, 9);
	allocs++, bytes += 63, live += 63, blocks++;
	void *r = realloc(NULL, 10);                    /* an allocation */
	allocs++, bytes += 10, live += 10, blocks++;
	r = realloc(r, 1000);                           /* free + allocation */
	frees++, allocs++, bytes += 1000, live += 1000 - 10;
	r = realloc(r, 0);                              /* frees, returns NULL */
	frees++, live -= 1000, blocks--;
	void *big = malloc(SIZE_MAX / 2);              /* fails: nothing */
	void *ra = reallocarray(NULL, 5, 8);
	allocs++, bytes += 40, live += 40, blocks++;
	void *a1 = aligned_alloc(64, 128);
	allocs++, bytes += 128, live += 128, blocks++;
	void *a2 = memalign(32, 33);
	allocs++, bytes += 33, live += 33, blocks++;
	void *a3;
	if (posix_memalign(&a3, 16, 17) == 0)
		allocs++, bytes += 17, live += 17, blocks++;
	void *a4 = valloc(100);
	allocs++, bytes += 100, live += 100, blocks++;
	(void)big;
	(void)r;
	free(a1);
	frees++, live -= 128, blocks--;
	free(a2);
	frees++, live -= 33, blocks--;
	free(a3);
	frees++, live -= 17, blocks--;
	free(a4);
	frees++, live -= 100, blocks--;
	free(ra);
	frees++, live -= 40, blocks--;
	my_free(c, 63);
	frees--;                                        /* counted by hand above */
	frees++;
	expect();
}

/* Threads allocate; other threads free (cross-thread frees). */
#define NT 4
#define PER 20000
static void *slots[NT][PER];

static void *producer(void *arg)
{
	long t = (long)arg;
	for (int i = 0; i < PER; i++)
		slots[t][i] = malloc((size_t)(16 + (i % 50)));
	return NULL;
}

static void *consumer(void *arg)
{
	long t = (long)arg;
	/* Free the blocks of the next thread, all but the last 10. */
	long o = (t + 1) % NT;
	for (int i = 0; i < PER - 10; i++)
		free(slots[o][i]);
	return NULL;
}

static void threads(void)
{
	pthread_t th[NT];
	for (long t = 0; t < NT; t++)
		pthread_create(&th[t], NULL, producer, (void *)t);
	for (long t = 0; t < NT; t++)
		pthread_join(th[t], NULL);
	for (long t = 0; t < NT; t++)
		pthread_create(&th[t], NULL, consumer, (void *)t);
	for (long t = 0; t < NT; t++)
		pthread_join(th[t], NULL);
	/* Block sizes 16 + i % 50: sum over PER blocks, and over the last 10. */
	long per_bytes = 0, kept = 0;
	for (int i = 0; i < PER; i++)
		per_bytes += 16 + (i % 50);
	for (int i = PER - 10; i < PER; i++)
		kept += 16 + (i % 50);
	allocs = (long)NT * PER;
	frees = (long)NT * (PER - 10);
	bytes = NT * per_bytes;
	live = NT * kept;
	blocks = NT * 10;
	expect();
}

/*
 * Short threads, as a thread-per-task program makes them: ROUNDS rounds
 * (or as many as asked for) of NT threads started and joined (a join
 * frees the thread's TLS from inside glibc, holding its lock of thread
 * stacks); each allocates 8 blocks (16..23 bytes) and frees 7, the main
 * thread frees the eighth after the join (a free from another thread).
 * Nothing is live at the end.
 */
#define ROUNDS 2000
static void *shortlived(void *arg)
{
	void *p[8];
	(void)arg;
	for (int i = 0; i < 8; i++)
		p[i] = malloc((size_t)(16 + i));
	for (int i = 1; i < 8; i++)
		free(p[i]);
	return p[0];
}

static void shortthreads(long rounds)
{
	for (long r = 0; r < rounds; r++) {
		pthread_t th[NT];
		void *kept;
		for (long t = 0; t < NT; t++)
			pthread_create(&th[t], NULL, shortlived, NULL);
		for (long t = 0; t < NT; t++) {
			pthread_join(th[t], &kept);
			free(kept);
		}
	}
	allocs = frees = rounds * NT * 8;
	bytes = rounds * NT * (16 + 17 + 18 + 19 + 20 + 21 + 22 + 23);
	live = blocks = 0;
	expect();
}

/*
 * Two more threads start to allocate while the main thread allocates
 * without pause: the moment the recorder stops taking order keys the
 * one-thread way (recorder/tbuf.c, keys_shared), one thread switching
 * while the other waits for it. Each thread allocates a block, puts it
 * in one slot and frees the block it took out of it, most often another
 * thread's: every such free must replay after its allocation. The main
 * thread starts the two after 2,000 blocks and goes on until each has
 * made HAND_ROUNDS; one block is left in the slot, freed at the end.
 * Nothing is live then.
 */
#define HAND_ROUNDS 50000
static void *hand_slot;
static int hand_done;
static long hand_allocs[3], hand_bytes[3], hand_frees[3];

static void *hand_more(void *arg);

static void hand_loop(long who, pthread_t *th)
{
	for (long i = 0; who ? i < HAND_ROUNDS : __atomic_load_n(&hand_done, __ATOMIC_ACQUIRE) < 2; i++) {
		size_t n = 16 + (size_t)(i % 64);
		void *p = malloc(n);
		hand_allocs[who]++;
		hand_bytes[who] += (long)n;
		void *q = __atomic_exchange_n(&hand_slot, p, __ATOMIC_ACQ_REL);
		if (q) {
			free(q);
			hand_frees[who]++;
		}
		if (!who && i == 2000)
			for (long t = 0; t < 2; t++)
				pthread_create(&th[t], NULL, hand_more, (void *)(t + 1));
	}
}

static void *hand_more(void *arg)
{
	hand_loop((long)arg, NULL);
	__atomic_add_fetch(&hand_done, 1, __ATOMIC_RELEASE);
	return NULL;
}

static void handoff(void)
{
	pthread_t th[2];
	hand_loop(0, th);
	for (int t = 0; t < 2; t++)
		pthread_join(th[t], NULL);
	free(hand_slot);
	allocs = hand_allocs[0] + hand_allocs[1] + hand_allocs[2];
	frees = hand_frees[0] + hand_frees[1] + hand_frees[2] + 1;
	bytes = hand_bytes[0] + hand_bytes[1] + hand_bytes[2];
	live = blocks = 0;
	expect();
}

/* Threads churning while the main thread forks, execs and takes signals. */
static volatile int stop_churn;

static void *churner(void *arg)
{
	void *k[32] = { 0 };
	unsigned i = 0;
	(void)arg;
	while (!stop_churn) {
		int j = (int)(i++ & 31);
		free(k[j]);
		k[j] = malloc(i & 1023);
		if ((i & 4095) == 0) {
			void *r = realloc(k[j], 5000);
			if (r)
				k[j] = r;
		}
	}
	for (int j = 0; j < 32; j++)
		free(k[j]);
	return NULL;
}

static void on_usr1(int sig)
{
	(void)sig;
	memtrail_snapshot_named("usr1");    /* skipped if it lands in a hook */
}

static void stress(void)
{
	pthread_t th[3];
	signal(SIGUSR1, on_usr1);
	for (int i = 0; i < 3; i++)
		pthread_create(&th[i], NULL, churner, NULL);
	int bad = 0;
	for (int i = 0; i < 40; i++) {
		pid_t pid = fork();
		if (pid == 0) {
			if (i & 1)
				execl("/bin/true", "true", (char *)NULL);
			free(malloc(100));
			_exit(0);
		}
		kill(getpid(), SIGUSR1);
		int st;
		waitpid(pid, &st, 0);
		bad += !WIFEXITED(st) || WEXITSTATUS(st);
	}
	stop_churn = 1;
	for (int i = 0; i < 3; i++)
		pthread_join(th[i], NULL);
	say(bad ? "children failed\n" : "stress ok\n");
}

static void snapshots(void)
{
	void *a = my_malloc(1000);
	void *b = my_malloc(24);
	memtrail_snapshot();                   /* 1024 (+1024) */
	my_free(a, 1000);
	memtrail_snapshot_named("after");      /* 24 (-1000) */
	void *c = my_malloc(4096);
	memtrail_snapshot();                   /* 4120 (+4096) */
	if (getenv("REC_SIGNAL")) {
		raise(SIGUSR2);                /* taken by the helper thread */
		usleep(300000);
	}
	my_free(b, 24);
	my_free(c, 4096);
	expect();
}

/* Known events, a pause longer than a chunk's second, then SIGKILL. */
static void killed(void)
{
	for (int i = 0; i < 100000; i++)
		my_free(my_malloc((size_t)(i & 127)), (size_t)(i & 127));
	expect();
	usleep(1300000);
	void *p = malloc(1);    /* closes the chunk holding the loop */
	(void)p;
	kill(getpid(), SIGKILL);
}

/*
 * The program's own count of its calls where a test can read it after a
 * SIGKILL or SIGPIPE: two longs (allocs, frees) in the file named by
 * REC_COUNTS, mapped shared, stored after every call.
 */
static volatile long *counts;

static void counts_map(void)
{
	const char *f = getenv("REC_COUNTS");
	int fd = f ? open(f, O_RDWR | O_CREAT | O_TRUNC, 0644) : -1;
	if (fd < 0 || ftruncate(fd, 4096) < 0) {
		say("REC_COUNTS unusable\n");
		exit(1);
	}
	counts = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (counts == MAP_FAILED)
		exit(1);
	close(fd);
}

static void count_now(void)
{
	if (counts) {
		counts[0] = allocs;
		counts[1] = frees;
	}
}

static long ms_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* 10,000 allocations (every third kept), then idle until killed. */
static void idle(void)
{
	for (int i = 0; i < 10000; i++) {
		void *p = my_malloc((size_t)(i & 255) + 1);
		if (i % 3)
			my_free(p, (size_t)(i & 255) + 1);
	}
	expect();
	for (;;)
		pause();
}

/*
 * Busy until killed, at a pace that fills no chunk by size (about 30,000
 * events a second): every 100 ms "at MS allocs=A frees=F" on stdout, the
 * program's count at that moment.
 */
static void busy(void)
{
	char buf[96];
	long start = ms_now(), next = start;
	for (;;) {
		my_free(my_malloc(64), 64);
		struct timespec t0, t1;
		clock_gettime(CLOCK_MONOTONIC, &t0);
		do
			clock_gettime(CLOCK_MONOTONIC, &t1);
		while ((t1.tv_sec - t0.tv_sec) * 1000000000L + (t1.tv_nsec - t0.tv_nsec) < 60000);
		long now = ms_now();
		if (now >= next) {
			snprintf(buf, sizeof(buf), "at %ld allocs=%ld frees=%ld\n", now - start, allocs, frees);
			say(buf);
			next += 100;
		}
	}
}

/* A line per allocation on stdout until SIGPIPE (piped into head). */
static void piped(void)
{
	counts_map();
	for (;;) {
		char *p = my_malloc(32);
		count_now();
		memcpy(p, "line\n", 6);
		ssize_t r = write(1, p, 5);
		(void)r;
		my_free(p, 32);
		count_now();
	}
}

/* A few allocations, then sig with its default disposition. */
static void signalled(const char *name)
{
	static const struct { const char *name; int sig; } sigs[] = {
		{ "ALRM", SIGALRM }, { "USR1", SIGUSR1 }, { "USR2", SIGUSR2 },
		{ "HUP", SIGHUP }, { "PIPE", SIGPIPE }, { "XCPU", SIGXCPU },
		{ "PROF", SIGPROF }, { "VTALRM", SIGVTALRM }, { "RTMIN", 0 },
	};
	int sig = -1;
	for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		if (!strcmp(name, sigs[i].name))
			sig = sigs[i].sig ? sigs[i].sig : SIGRTMIN;
	if (sig < 0)
		exit(1);
	for (int i = 0; i < 50; i++)
		my_malloc(16);
	my_free(my_malloc(8), 8);
	/* The program may look: it must see the default. */
	struct sigaction old;
	sigaction(sig, NULL, &old);
	if (old.sa_handler != SIG_DFL)
		say("disposition not SIG_DFL\n");
	expect();
	if (sig == SIGALRM) {
		alarm(1);
		for (;;)
			pause();
	}
	kill(getpid(), sig);
	for (;;)
		pause();
}

/*
 * Allocations, the descriptor hygiene of a daemon (how), more
 * allocations, a normal exit: the log must hold every event and END.
 */
static void fdhygiene(const char *how)
{
	void *keep[200];
	for (int i = 0; i < 100; i++)
		keep[i] = my_malloc((size_t)i + 10);
	if (!strcmp(how, "close_range")) {
		if (close_range(3, ~0u, 0) < 0)
			say("close_range failed\n");
	} else if (!strcmp(how, "rawclose")) {
		/* Past the hooks: the recorder must find its file again. */
		if (syscall(SYS_close_range, 3, ~0u, 0) < 0)
			say("close_range failed\n");
	} else if (!strcmp(how, "closefrom")) {
		closefrom(3);
	} else if (!strcmp(how, "closeloop")) {
		for (int fd = 3; fd < 1024; fd++)
			close(fd);
	} else if (!strcmp(how, "dup2loop")) {
		int n = open("/dev/null", O_RDONLY);
		for (int fd = 3; fd < 1024; fd++)
			if (fd != n && dup2(n, fd) != fd)
				say("dup2 failed\n");
		for (int fd = 3; fd < 1024; fd++)
			close(fd);
	} else {
		exit(1);
	}
	for (int i = 100; i < 200; i++)
		keep[i] = my_malloc((size_t)i + 10);
	for (int i = 0; i < 200; i += 2)
		my_free(keep[i], (size_t)i + 10);
	expect();
	if (!strcmp(how, "closeloop") && getenv("REC_EXEC"))
		execl("/bin/true", "true", (char *)NULL);
	exit(0);
}

/*
 * Allocations whose sizes and lifetimes compress badly, to fill a small
 * disk; then everything is freed and the program exits 0.
 */
static void fill(long n)
{
	static void *ring[4096];
	size_t sizes[4096];
	unsigned x = 12345;
	for (long i = 0; i < n; i++) {
		x = x * 1103515245u + 12345u;
		size_t k = (x >> 8) & 4095, sz = (x >> 4) % 5000 + 1;
		if (ring[k])
			my_free(ring[k], sizes[k]);
		ring[k] = my_malloc(sz);
		sizes[k] = sz;
	}
	for (int k = 0; k < 4096; k++)
		if (ring[k])
			my_free(ring[k], sizes[k]);
	expect();
	exit(0);
}

/* Changes directory, then a child allocates 7 blocks and an exec'd program
 * runs: their logs must land beside the parent's (an absolute path). */
static void chdir_fork(const char *dir)
{
	char buf[64];
	if (chdir(dir) < 0)
		exit(1);
	pid_t pid = fork();
	if (pid == 0) {
		for (int i = 0; i < 7; i++)
			my_malloc(10);
		_exit(0);
	}
	int st;
	waitpid(pid, &st, 0);
	snprintf(buf, sizeof(buf), "child %ld\n", (long)pid);
	say(buf);
	my_free(my_malloc(5), 5);
	expect();
}

static void forked(void)
{
	void *a = my_malloc(100);
	pid_t pid = fork();
	if (pid == 0) {
		/* Not recorded: the parent's log must not change. */
		for (int i = 0; i < 1000; i++)
			free(malloc(10));
		free(a);
		exit(7);
	}
	int st;
	waitpid(pid, &st, 0);
	my_free(a, 100);
	char buf[32];
	snprintf(buf, sizeof(buf), "child %d\n", WEXITSTATUS(st));
	say(buf);
	expect();
}

static void dlopened(const char *lib)
{
	void *h = dlopen(lib, RTLD_NOW);
	if (!h) {
		say("dlopen failed\n");
		exit(1);
	}
	void *(*mk)(size_t) = (void *(*)(size_t))dlsym(h, "rec_lib_alloc");
	void *p = mk(333);
	free(p);
	dlclose(h);
	say("dlopen ok\n");
}

/*
 * What the program sees of the recorder's processes and descriptors: its
 * open descriptors ("fds 0 1 2"), what waitpid(-1) finds ("wait -1
 * ECHILD": no child), its threads and whether glibc counts it single-
 * threaded ("threads 1 single 1": a thread of the recorder's would make
 * glibc lock its arena in malloc and free), then a million live blocks of
 * 24 bytes and the peak resident set ("hwm KIB", VmHWM) with them, then
 * all freed.
 */
static void probe(void)
{
	char buf[4096], line[256];
	size_t n = 0;
	int fd = open("/proc/self/fd", O_RDONLY | O_DIRECTORY);
	/* the listing's own descriptor is fd: left out */
	n += (size_t)snprintf(buf + n, sizeof(buf) - n, "fds");
	for (int i = 0; i < 1024; i++)
		if (i != fd && fcntl(i, F_GETFD) >= 0)
			n += (size_t)snprintf(buf + n, sizeof(buf) - n, " %d", i);
	close(fd);
	pid_t w = waitpid(-1, NULL, WNOHANG);
	n += (size_t)snprintf(buf + n, sizeof(buf) - n, "\nwait %ld %s\n", (long)w,
			      w < 0 && errno == ECHILD ? "ECHILD" : "child");
	int tasks = 0;
	fd = open("/proc/self/task", O_RDONLY | O_DIRECTORY);
	if (fd >= 0) {
		char d[4096];
		long got;
		/* getdents64: a DIR of opendir() would come from malloc */
		while ((got = syscall(SYS_getdents64, fd, d, sizeof(d))) > 0)
			for (long off = 0; off < got;) {
				unsigned short reclen = *(unsigned short *)(d + off + 16);
				if (d[off + 19] != '.')
					tasks++;
				off += reclen;
			}
		close(fd);
	}
	n += (size_t)snprintf(buf + n, sizeof(buf) - n, "threads %d single %d\n", tasks,
			      (int)__libc_single_threaded);
	say(buf);
	enum { N = 1000000 };
	void **p = my_malloc(N * sizeof(void *));
	for (long i = 0; i < N; i++)
		p[i] = my_malloc(24);
	/* open and read: nothing on the heap */
	fd = open("/proc/self/status", O_RDONLY);
	ssize_t got = fd < 0 ? -1 : read(fd, buf, sizeof(buf) - 1);
	if (fd >= 0)
		close(fd);
	buf[got > 0 ? got : 0] = 0;
	char *h = strstr(buf, "VmHWM:");
	long kib = h ? atol(h + 6) : 0;
	snprintf(line, sizeof(line), "hwm %ld\n", kib);
	say(line);
	for (long i = 0; i < N; i++)
		my_free(p[i], 24);
	my_free(p, N * sizeof(void *));
	expect();
}

/* 40 rounds of 1,000 allocations and frees 50 ms apart: 2 s of steady
 * work, during which a test can kill the recorder's drainer. */
static void steady(void)
{
	struct timespec ms50 = { 0, 50000000 };
	for (int r = 0; r < 40; r++) {
		for (int i = 0; i < 1000; i++)
			my_free(my_malloc((size_t)i + 1), (size_t)i + 1);
		nanosleep(&ms50, NULL);
	}
	expect();
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "basic";
	if (!strcmp(mode, "basic")) {
		basic();
	} else if (!strcmp(mode, "threads")) {
		threads();
	} else if (!strcmp(mode, "shortthreads")) {
		shortthreads(argc > 2 ? atol(argv[2]) : ROUNDS);
	} else if (!strcmp(mode, "snap")) {
		snapshots();
	} else if (!strcmp(mode, "kill")) {
		killed();
	} else if (!strcmp(mode, "fork")) {
		forked();
	} else if (!strcmp(mode, "stress")) {
		stress();
	} else if (!strcmp(mode, "handoff")) {
		handoff();
	} else if (!strcmp(mode, "dlopen")) {
		dlopened(argv[2]);
	} else if (!strcmp(mode, "exit")) {
		my_malloc(5);
		expect();
		exit(atoi(argv[2]));
	} else if (!strcmp(mode, "_exit")) {
		my_malloc(5);
		expect();
		_exit(atoi(argv[2]));
	} else if (!strcmp(mode, "abort")) {
		my_malloc(5);
		expect();
		abort();
	} else if (!strcmp(mode, "segv")) {
		my_malloc(5);
		expect();
		*(volatile int *)(uintptr_t)8 = 1;
	} else if (!strcmp(mode, "term")) {
		my_malloc(5);
		expect();
		raise(SIGTERM);
	} else if (!strcmp(mode, "exec")) {
		my_malloc(5);
		expect();
		execl("/bin/sh", "sh", "-c", "echo \"preload=[$LD_PRELOAD]\"; exit 6", (char *)NULL);
	} else if (!strcmp(mode, "vfork")) {
		/* vfork children share our memory: one execs, one fails to
		 * exec and _exits; the parent records on afterwards. */
		my_malloc(5);
		for (int i = 0; i < 2; i++) {
			pid_t pid = vfork();
			if (pid == 0) {
				execl(i ? "/nonexistent/program" : "/bin/true", "true", (char *)NULL);
				_exit(9);
			}
			int st;
			waitpid(pid, &st, 0);
		}
		my_free(my_malloc(7), 7);
		expect();
	} else if (!strcmp(mode, "idle")) {
		idle();
	} else if (!strcmp(mode, "busy")) {
		busy();
	} else if (!strcmp(mode, "pipe")) {
		piped();
	} else if (!strcmp(mode, "signal")) {
		signalled(argv[2]);
	} else if (!strcmp(mode, "fd")) {
		fdhygiene(argv[2]);
	} else if (!strcmp(mode, "chdirfork")) {
		chdir_fork(argv[2]);
	} else if (!strcmp(mode, "fill")) {
		fill(atol(argv[2]));
	} else if (!strcmp(mode, "probe")) {
		probe();
	} else if (!strcmp(mode, "steady")) {
		steady();
	} else if (!strcmp(mode, "execfail")) {
		my_malloc(5);
		execlp("/nonexistent/program", "x", (char *)NULL);
		my_malloc(6);           /* recorded after the failed exec */
		expect();
	}
	return 3;
}

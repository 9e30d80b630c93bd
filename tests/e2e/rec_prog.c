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
#include <dlfcn.h>
#include <malloc.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
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

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "basic";
	if (!strcmp(mode, "basic")) {
		basic();
	} else if (!strcmp(mode, "threads")) {
		threads();
	} else if (!strcmp(mode, "snap")) {
		snapshots();
	} else if (!strcmp(mode, "kill")) {
		killed();
	} else if (!strcmp(mode, "fork")) {
		forked();
	} else if (!strcmp(mode, "stress")) {
		stress();
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
	} else if (!strcmp(mode, "execfail")) {
		my_malloc(5);
		execlp("/nonexistent/program", "x", (char *)NULL);
		my_malloc(6);           /* recorded after the failed exec */
		expect();
	}
	return 3;
}

/*
 * xfree.c - threads that free each other's blocks while the allocator
 * hands the freed addresses straight to other threads, with forks and
 * snapshots in the middle: the order of a recording's events across
 * threads, checked by tests/e2e/rec_xfree.sh.
 *
 *   xfree THREADS ROUNDS
 *
 * Run with MALLOC_ARENA_MAX=1 and glibc.malloc.tcache_count=0, so that all
 * threads share one arena whose small bins are LIFO: a block one thread
 * frees is the next one another thread's malloc of that size gets. Each
 * worker, each round: mallocs a block (24 to 80 B), swaps it into one of
 * SLOTS shared mailboxes and gets back whatever another thread (or itself)
 * left there; every 8th round it reallocs that block to 100 B first; then
 * frees it. After the workers are joined, main frees what is left in the
 * mailboxes. So, counting only calls made from this program's own code:
 *   allocations = THREADS * ROUNDS + reallocs   (a realloc is one of each)
 *   frees       = the same: every block is freed, none leaked
 * and the bytes are summed as they are asked for. Meanwhile main forks
 * FORKS children (each allocates and frees a 777 B block, then ends with
 * _exit or exit: none of it is the parent's), calls memtrail_snapshot()
 * SNAPS times and raises SIGUSR2 SNAPS times (a snapshot signal under
 * `memtrail record --snapshot-signal USR2`). It prints those figures, and
 * on stderr how many mallocs returned an address another thread had just
 * freed (a statistic: it shows the case under test happened).
 *
 * Not for: figures of the C runtime's own allocations (not counted here).
 */
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#define SLOTS 16
#define MAXT 16
#define FORKS 6
#define SNAPS 4

void memtrail_snapshot(void) __attribute__((weak));

static void *box[SLOTS];
static void *last_freed[MAXT];          /* per thread: its latest free */
static unsigned long rounds;
static unsigned nthreads;

struct worker {
	unsigned id;
	unsigned long allocs, frees, reallocs, bytes, reused;
};

static void *work(void *arg)
{
	struct worker *w = arg;
	for (unsigned long r = 0; r < rounds; r++) {
		size_t size = 24 + (size_t)((r * 7 + w->id) % 8) * 8;
		char *p = malloc(size);
		if (!p)
			abort();
		w->allocs++;
		w->bytes += size;
		p[0] = (char)w->id;
		for (unsigned t = 0; t < nthreads; t++)
			if (t != w->id && __atomic_load_n(&last_freed[t], __ATOMIC_RELAXED) == p)
				w->reused++;
		unsigned slot = (unsigned)((r * 13 + w->id * 5) % SLOTS);
		char *q = __atomic_exchange_n(&box[slot], p, __ATOMIC_ACQ_REL);
		if (!q)
			continue;
		if (r % 8 == 0) {
			char *n = realloc(q, 100);
			if (!n)
				abort();
			q = n;
			w->reallocs++;
			w->bytes += 100;
		}
		__atomic_store_n(&last_freed[w->id], q, __ATOMIC_RELAXED);
		free(q);
		w->frees++;
	}
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t th[MAXT];
	struct worker w[MAXT] = { { 0, 0, 0, 0, 0, 0 } };
	unsigned long allocs = 0, frees = 0, reallocs = 0, bytes = 0, reused = 0;

	if (argc != 3 || atoi(argv[1]) < 1 || atoi(argv[1]) > MAXT || atol(argv[2]) < 1) {
		fprintf(stderr, "usage: xfree THREADS ROUNDS\n");
		return 2;
	}
	nthreads = (unsigned)atoi(argv[1]);
	rounds = (unsigned long)atol(argv[2]);
	for (unsigned t = 0; t < nthreads; t++) {
		w[t].id = t;
		if (pthread_create(&th[t], NULL, work, &w[t]) != 0)
			return 1;
	}
	for (int k = 0; k < FORKS; k++) {
		usleep(2000);
		fflush(stdout);
		pid_t pid = fork();
		if (pid == 0) {
			char *c = malloc(777);
			free(c);
			if (k % 2)
				exit(0);
			_exit(0);
		}
		if (pid < 0 || waitpid(pid, NULL, 0) != pid)
			return 1;
		/* Natively there is no snapshot signal to raise. */
		if (k < SNAPS && memtrail_snapshot) {
			memtrail_snapshot();
			raise(SIGUSR2);
		}
	}
	for (unsigned t = 0; t < nthreads; t++) {
		pthread_join(th[t], NULL);
		allocs += w[t].allocs + w[t].reallocs;
		frees += w[t].frees + w[t].reallocs;
		reallocs += w[t].reallocs;
		bytes += w[t].bytes;
		reused += w[t].reused;
	}
	for (unsigned i = 0; i < SLOTS; i++)
		if (box[i]) {
			free(box[i]);
			frees++;
		}
	printf("allocations %lu\nfrees %lu\nreallocs %lu\nbytes %lu\n", allocs, frees, reallocs,
	       bytes);
	fprintf(stderr, "reused %lu\n", reused);
	return 0;
}

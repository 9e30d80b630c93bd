/*
 * rec_xrealloc.c - threads whose reallocs race with each other's mallocs
 * and frees on the addresses realloc gives up and takes: the order of a
 * realloc's two halves against other threads, checked by rec_xrealloc.sh.
 *
 *   rec_xrealloc THREADS ROUNDS
 *
 * Run with MALLOC_ARENA_MAX=1 and glibc.malloc.tcache_count=0: one arena,
 * LIFO small bins, so a chunk one thread releases is the next one another
 * thread's request of that size gets. Worker k's blocks are 32 + 8k B:
 * workers 0 and 1 (32 and 40 B) share glibc's 48 B chunks, 2 and 3 (48
 * and 56 B) its 64 B chunks. Each worker, each round:
 *   p = malloc(32 + 8k B)           (may be the old block of another
 *                                    thread's realloc, released inside it)
 *   q = realloc(p, 200)             (moves; may return the 200 B block
 *                                    another thread has just freed)
 *   free(keep); keep = realloc(q, 104)   (shrinks in place: same address)
 * and frees its last block when done. So, counting only calls made from
 * this program's own code:
 *   allocations = THREADS * ROUNDS * 3   (a realloc is one of each)
 *   frees       = the same: every block is freed, none leaked
 *   bytes       = the sizes asked for, summed
 * and, whatever the scheduling, every block is freed or reallocated by
 * the thread that allocated it. A recording that put a realloc's free
 * half after another thread's malloc of the same address, or its
 * allocation before another thread's free of it, would show one thread
 * freeing or reallocating another's block, even where the log stays
 * consistent otherwise (the recorder's table then takes the block the
 * misplaced event names for one whose free it missed).
 * It prints those figures, and on stderr how often a malloc got another
 * thread's realloc's old address and a realloc got the address another
 * thread had just freed (statistics: they show the cases under test
 * happened).
 *
 * Not for: figures of the C runtime's own allocations (not counted here).
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#define MAXT 4

static void *moved_from[MAXT];  /* per thread: its latest realloc's old block */
static void *freed[MAXT];       /* per thread: its latest free */
static unsigned long rounds;
static unsigned nthreads;

struct worker {
	unsigned id;
	unsigned long allocs, frees, bytes, got_moved, got_freed;
};

static int other_has(void **tab, unsigned self, void *p)
{
	for (unsigned t = 0; t < nthreads; t++)
		if (t != self && __atomic_load_n(&tab[t], __ATOMIC_RELAXED) == p)
			return 1;
	return 0;
}

static void *work(void *arg)
{
	struct worker *w = arg;
	char *keep = NULL;

	for (unsigned long r = 0; r < rounds; r++) {
		size_t size = 32 + (size_t)w->id * 8;
		char *p = malloc(size);
		if (!p)
			abort();
		w->got_moved += (unsigned long)other_has(moved_from, w->id, p);
		p[0] = 1;
		__atomic_store_n(&moved_from[w->id], p, __ATOMIC_RELAXED);
		char *q = realloc(p, 200);
		if (!q)
			abort();
		w->got_freed += (unsigned long)other_has(freed, w->id, q);
		if (keep) {
			__atomic_store_n(&freed[w->id], keep, __ATOMIC_RELAXED);
			free(keep);
			w->frees++;
		}
		keep = realloc(q, 104);
		if (!keep)
			abort();
		w->allocs += 3;         /* malloc, and each realloc's allocation */
		w->frees += 2;          /* each realloc's free half */
		w->bytes += size + 200 + 104;
	}
	if (keep) {
		free(keep);
		w->frees++;
	}
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t th[MAXT];
	struct worker w[MAXT] = { { 0, 0, 0, 0, 0, 0 } };
	unsigned long allocs = 0, frees = 0, bytes = 0, moved = 0, fr = 0;

	if (argc != 3 || atoi(argv[1]) < 1 || atoi(argv[1]) > MAXT || atol(argv[2]) < 1) {
		fprintf(stderr, "usage: rec_xrealloc THREADS ROUNDS\n");
		return 2;
	}
	nthreads = (unsigned)atoi(argv[1]);
	rounds = (unsigned long)atol(argv[2]);
	for (unsigned t = 0; t < nthreads; t++) {
		w[t].id = t;
		if (pthread_create(&th[t], NULL, work, &w[t]) != 0)
			return 1;
	}
	for (unsigned t = 0; t < nthreads; t++) {
		pthread_join(th[t], NULL);
		allocs += w[t].allocs;
		frees += w[t].frees;
		bytes += w[t].bytes;
		moved += w[t].got_moved;
		fr += w[t].got_freed;
	}
	printf("allocations %lu\nfrees %lu\nbytes %lu\n", allocs, frees, bytes);
	fprintf(stderr, "moved %lu\nfreed %lu\n", moved, fr);
	return 0;
}

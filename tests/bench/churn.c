/*
 * churn.c - benchmark workload for `make bench`: many small malloc/free
 * pairs made from 1,000 distinct call stacks, in one or more threads.
 *
 *   churn THREADS PAIRS
 *
 * Each allocation goes through a chain of 16 of our own frames (19 with the
 * C runtime's start-up frames). Three levels of the chain pick one of ten
 * distinct functions each, so the allocations come from exactly
 * 10 x 10 x 10 = 1,000 distinct call stacks (per thread start routine). Every
 * function adds something to its callee's result, so no call is a tail call
 * that would drop a frame. Every block is freed: each thread keeps its
 * newest 64 blocks in a ring, frees the one it replaces, and frees the ring
 * at the end, so allocations = frees = PAIRS exactly (free(NULL) is never
 * called). The program prints those counts, which come from the program's
 * own logic, and a checksum that does not depend on addresses, so the output
 * is identical with or without a profiler.
 *
 * Not a test and not a sample: its figures are only what the benchmark
 * compares against the profilers' counts.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#define RING 64

struct ctx {
	char *ring[RING];
	unsigned long n;        /* allocations made */
	unsigned long frees;
	unsigned long sum;
	unsigned long pairs;    /* how many to make */
};

/* noipa: keep every frame (no inlining, no cloning, no identical folding). */
#define NOIPA __attribute__((noipa))

NOIPA static unsigned long do_alloc(struct ctx *x, unsigned sel)
{
	size_t size = 16 + (sel * 37u + (unsigned)x->n * 11u) % 240u;
	char *p = malloc(size);
	unsigned slot = (unsigned)(x->n % RING);

	if (!p) {
		perror("churn: malloc");
		exit(1);
	}
	p[0] = (char)sel;
	p[size - 1] = (char)size;
	x->n++;
	if (x->ring[slot]) {
		x->sum += (unsigned char)x->ring[slot][0];
		free(x->ring[slot]);
		x->frees++;
	}
	x->ring[slot] = p;
	return size;
}

/* A plain chain of frames between the levels that vary. */
#define CHAIN(name, next)						\
	NOIPA static unsigned long name(struct ctx *x, unsigned sel)	\
	{								\
		return next(x, sel) + 1;				\
	}

CHAIN(leaf3, do_alloc)
CHAIN(leaf2, leaf3)
CHAIN(leaf1, leaf2)

/* Level C: ten distinct functions, each calls the leaf chain. */
#define LEVEL_C(k)							\
	NOIPA static unsigned long c_##k(struct ctx *x, unsigned sel)	\
	{								\
		return leaf1(x, sel) + k + 1;				\
	}
LEVEL_C(0) LEVEL_C(1) LEVEL_C(2) LEVEL_C(3) LEVEL_C(4)
LEVEL_C(5) LEVEL_C(6) LEVEL_C(7) LEVEL_C(8) LEVEL_C(9)

typedef unsigned long (*step_fn)(struct ctx *, unsigned);
static step_fn const level_c[10] = {
	c_0, c_1, c_2, c_3, c_4, c_5, c_6, c_7, c_8, c_9,
};

NOIPA static unsigned long pick_c(struct ctx *x, unsigned sel)
{
	return level_c[sel % 10](x, sel) + 1;
}
CHAIN(m4, pick_c)
CHAIN(m3, m4)

#define LEVEL_B(k)							\
	NOIPA static unsigned long b_##k(struct ctx *x, unsigned sel)	\
	{								\
		return m3(x, sel) + k + 1;				\
	}
LEVEL_B(0) LEVEL_B(1) LEVEL_B(2) LEVEL_B(3) LEVEL_B(4)
LEVEL_B(5) LEVEL_B(6) LEVEL_B(7) LEVEL_B(8) LEVEL_B(9)

static step_fn const level_b[10] = {
	b_0, b_1, b_2, b_3, b_4, b_5, b_6, b_7, b_8, b_9,
};

NOIPA static unsigned long pick_b(struct ctx *x, unsigned sel)
{
	return level_b[(sel / 10) % 10](x, sel) + 1;
}
CHAIN(m2, pick_b)
CHAIN(m1, m2)

#define LEVEL_A(k)							\
	NOIPA static unsigned long a_##k(struct ctx *x, unsigned sel)	\
	{								\
		return m1(x, sel) + k + 1;					\
	}
LEVEL_A(0) LEVEL_A(1) LEVEL_A(2) LEVEL_A(3) LEVEL_A(4)
LEVEL_A(5) LEVEL_A(6) LEVEL_A(7) LEVEL_A(8) LEVEL_A(9)

static step_fn const level_a[10] = {
	a_0, a_1, a_2, a_3, a_4, a_5, a_6, a_7, a_8, a_9,
};

NOIPA static unsigned long pick_a(struct ctx *x, unsigned sel)
{
	return level_a[(sel / 100) % 10](x, sel) + 1;
}

NOIPA static void run(struct ctx *x)
{
	unsigned long i;

	for (i = 0; i < x->pairs; i++) {
		/* 7919 is prime to 1000: the stacks are visited scattered. */
		unsigned sel = (unsigned)((i * 7919u) % 1000u);
		x->sum += pick_a(x, sel);
	}
	for (i = 0; i < RING; i++) {
		if (x->ring[i]) {
			free(x->ring[i]);
			x->frees++;
			x->ring[i] = NULL;
		}
	}
}

static void *thread_main(void *arg)
{
	run(arg);
	return NULL;
}

/* Static: the bookkeeping itself makes no heap events. */
static struct ctx ctxs[64];
static pthread_t tids[64];

int main(int argc, char **argv)
{
	unsigned long threads, pairs, i;
	unsigned long n = 0, frees = 0, sum = 0;

	if (argc != 3) {
		fprintf(stderr, "usage: churn THREADS PAIRS\n");
		return 2;
	}
	threads = strtoul(argv[1], NULL, 10);
	pairs = strtoul(argv[2], NULL, 10);
	if (threads < 1 || threads > 64) {
		fprintf(stderr, "churn: THREADS must be 1..64\n");
		return 2;
	}
	for (i = 0; i < threads; i++)
		ctxs[i].pairs = pairs / threads + (i == 0 ? pairs % threads : 0);
	if (threads == 1) {
		/* No thread at all: pthread_create has heap events of its own. */
		run(&ctxs[0]);
	} else {
		for (i = 0; i < threads; i++)
			if (pthread_create(&tids[i], NULL, thread_main, &ctxs[i])) {
				fprintf(stderr, "churn: pthread_create failed\n");
				return 1;
			}
		for (i = 0; i < threads; i++)
			pthread_join(tids[i], NULL);
	}
	for (i = 0; i < threads; i++) {
		n += ctxs[i].n;
		frees += ctxs[i].frees;
		sum += ctxs[i].sum;
	}
	printf("churn: threads=%lu allocations=%lu frees=%lu stacks=1000 checksum=%lu\n",
	       threads, n, frees, sum);
	return n == pairs && frees == pairs ? 0 : 1;
}

/*
 * tags.c - scoped tags (memtrail_tag_push / memtrail_tag_pop): nested
 * scopes, two threads with scopes of their own (one of them with the same
 * names as main's), blocks freed by another thread than the one that made
 * them, and a leak inside each of three tag paths.
 *
 * For: the tag tests (report --by-tag, with --by-thread, --tag PATH, the
 * viewer's tag grouping) and the accuracy tests. Not for: the cost of tags
 * (a push of a scope the thread entered recently takes no lock; see
 * recorder/tags.c).
 *
 * Every figure is independent of scheduling: main lets each worker run in
 * turn with semaphores (sem_post/sem_wait do not allocate), so the events
 * come in the order below. Without memtrail the tag calls do nothing and
 * the program runs the same.
 *
 * The run, with the tag path open when each block is allocated:
 *   main       parser         p1 = 100 B
 *              parser/lexer   l1 = l2 = l3 = 40 B; l1 freed at once
 *              parser         p2 = 60 B
 *              (no tag)       pthread_create x 2: a DTV each, D bytes
 *                             (calloc in ld.so: D = 272 natively, 16 B more
 *                             per TLS module a profiler adds, see
 *                             threads.c; both threads run at once, so
 *                             both DTVs are allocated)
 *   worker-a   io             a1 = 4,096 B (freed by main, later)
 *              io/decode      a2 = 512 B, freed at once; a3 = 256 B, leaked
 *   worker-b   parser         b1 = 300 B, leaked (the same path as main's
 *                             "parser": one tag path, two threads)
 *              parser/lexer   b2 = 1,000 B, freed at once
 *              (no tag)       b3 = 8 B, freed at once
 *   main       report         r1 = 20,000 B: the peak, then freed
 *              (no tag)       frees a1, p1, p2, l2; l3 is leaked
 *   exit       the C runtime frees both DTVs with its stack cache
 *
 * Live bytes step by step: 240 after the parser (p1, l2, l3, p2), 240 + 2D
 * with the DTVs, 4,592 + 2D after worker-a, 4,892 + 2D after worker-b,
 * 24,892 + 2D with r1 = the peak, in 10 blocks (p1 l2 l3 p2, 2 DTVs, a1
 * a3 b1, r1); then 596 + 2D in 5 blocks; 596 B in 3 blocks at exit.
 *
 * Per tag path (report --by-tag): allocations, bytes allocated, live at
 * the peak (bytes, blocks), leaked (bytes, blocks):
 *   (no tag)      3   2D + 8       2D       2   0     0   (2 DTVs, b3)
 *   parser        3   460          460      3   300   1   (p1 p2 b1)
 *   parser/lexer  4   1,120        80       2   40    1   (l1-l3, b2)
 *   io            1   4,096        4,096    1   0     0
 *   io/decode     2   768          256      1   256   1
 *   report        1   20,000       20,000   1   0     0
 *   total         14  26,452 + 2D  24,892 + 2D 10  596 3
 * Per thread and tag path (--by-tag --by-thread; a block counts for the
 * thread that allocated it, whoever freed it):
 *   main      (no tag) 2 2D 2D 2 0 0; parser 2 160 160 2 0 0;
 *             parser/lexer 3 120 80 2 40 1; report 1 20,000 20,000 1 0 0
 *   worker-a  io 1 4,096 4,096 1 0 0; io/decode 2 768 256 1 256 1
 *   worker-b  (no tag) 1 8 0 0 0 0; parser 1 300 300 1 300 1;
 *             parser/lexer 1 1,000 0 0 0 0
 * --tag parser (the path and the paths inside it): at the peak 540 B in 5
 * blocks (p1 p2 b1 l2 l3), leaked 340 B in 2 blocks (b1 l3); --tag io: at
 * the peak 4,352 B in 2 blocks, leaked 256 B in 1.
 *
 * Totals: allocations 14, frees 9 + the 2 DTVs = 11, bytes 26,452 + 2D,
 * peak 24,892 + 2D in 10 blocks, leaked 596 B in 3 blocks; keeping the
 * runtime's memory, 9 frees and 596 + 2D leaked in 5 blocks.
 *
 * memtrail-expect:
 *   allocations 14
 *   frees 11
 *   bytes_allocated 26996
 *   peak_bytes 25436
 *   peak_blocks 10
 *   leaked_bytes 596
 *   leaked_blocks 3
 *   dtv 2
 *   keep-runtime frees 9
 *   keep-runtime leaked_bytes 1140
 *   keep-runtime leaked_blocks 5
 *   keep-runtime dtv_leaked 2
 */
#define _GNU_SOURCE         /* pthread_setname_np */
#include <pthread.h>
#include <semaphore.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <memtrail.h>

static sem_t go_a, done_a, go_b, done_b;
static void *a1;
/* Every block passes through here, so the compiler keeps each malloc and
 * free (it may drop a pair whose pointer does not escape). */
static void *volatile sink;

static __attribute__((noinline)) void *xmalloc(size_t n)
{
	void *p = malloc(n);

	if (!p)
		_exit(4);
	memset(p, 1, n);
	sink = p;
	return p;
}

static void *worker_a(void *arg)
{
	void *a2;

	(void)arg;
	pthread_setname_np(pthread_self(), "worker-a");
	sem_wait(&go_a);
	memtrail_tag_push("io");
	a1 = xmalloc(4096);
	memtrail_tag_push("decode");
	a2 = xmalloc(512);
	free(a2);
	(void)xmalloc(256);         /* a3: leaked */
	memtrail_tag_pop();
	memtrail_tag_pop();
	sem_post(&done_a);
	return NULL;
}

static void *worker_b(void *arg)
{
	(void)arg;
	pthread_setname_np(pthread_self(), "worker-b");
	sem_wait(&go_b);
	memtrail_tag_push("parser");
	(void)xmalloc(300);         /* b1: leaked */
	memtrail_tag_push("lexer");
	free(xmalloc(1000));        /* b2 */
	memtrail_tag_pop();
	memtrail_tag_pop();
	free(xmalloc(8));           /* b3, untagged */
	sem_post(&done_b);
	return NULL;
}

int main(void)
{
	pthread_t ta, tb;
	pthread_attr_t attr;
	void *p1, *p2, *l1, *l2, *l3, *r1;

	memtrail_tag_push("parser");
	p1 = xmalloc(100);
	memtrail_tag_push("lexer");
	l1 = xmalloc(40);
	l2 = xmalloc(40);
	l3 = xmalloc(40);
	free(l1);
	memtrail_tag_pop();
	p2 = xmalloc(60);
	memtrail_tag_pop();

	sem_init(&go_a, 0, 0);
	sem_init(&done_a, 0, 0);
	sem_init(&go_b, 0, 0);
	sem_init(&done_b, 0, 0);
	pthread_attr_init(&attr);
	/* small stacks, so glibc's stack cache keeps both (threads.c) */
	pthread_attr_setstacksize(&attr, 256 * 1024);
	if (pthread_create(&ta, &attr, worker_a, NULL) ||
	    pthread_create(&tb, &attr, worker_b, NULL))
		_exit(5);
	pthread_attr_destroy(&attr);
	sem_post(&go_a);
	sem_wait(&done_a);
	sem_post(&go_b);
	sem_wait(&done_b);
	pthread_join(ta, NULL);
	pthread_join(tb, NULL);

	memtrail_tag_push("report");
	r1 = xmalloc(20000);
	free(r1);
	memtrail_tag_pop();
	free(a1);
	free(p1);
	free(p2);
	free(l2);
	(void)l3;                   /* leaked */
	if (write(1, "tags: done\n", 11) != 11)
		return 3;
	return 0;
}
